"""Device probing: micro-benchmarks that measure the hardware limits kernel generation needs (ArchProbe,
as in Romou section 3, in pyopencl).

Each probe family generates an OpenCL kernel family (``kernels``), times it with profiling events
(``timing``), sweeps a parameter over ranges scaled to the device (``plan``), and reads its numbers off
the curve with a stated method and confidence (``curves``).  ``runner`` runs a selection of probes;
``document`` writes the ``liftpy-device-profile/1`` JSON (``schema.json``) that
``liftpy.host.profile.DeviceProfile.load`` reads; ``roofline`` turns a profile into compute and bandwidth
ceilings; ``plot`` draws the raw curves; ``cli`` is ``liftpy probe`` (``python -m liftpy.probe`` runs it
alone, without the other subsystems' commands).

Probe families, one module each: ``registers``, ``warp`` (latency steps), ``order`` (running order),
``cache`` (pointer chase, buffers and images), ``patterns`` (2D image access patterns), ``bandwidth``,
``compute``, ``launch``.
"""

from .roofline import Attainment, Roofline, attained, roofline
from .runner import PROBES, ProbeRun, run_probes

__all__ = ["PROBES", "ProbeRun", "run_probes", "roofline", "attained", "Roofline", "Attainment"]
