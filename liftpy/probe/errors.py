"""The probe package's exception: a measurement that cannot be trusted or cannot be taken.

It derives from ``LiftError`` so the ``liftpy`` command reports it as a one-line message; build and launch
failures keep liftpy's own ``KernelBuildError`` and ``KernelRunError``.
"""

from __future__ import annotations

from ..errors import LiftError


class ProbeError(LiftError):
    """A micro-benchmark gave a result that shows it did not measure what it should (for example, its time
    did not grow with its work because the compiler deleted the loop), or a profile file is invalid."""


class ProbeNotApplicable(ProbeError):
    """The device lacks what a probe measures (for example, images); the probe is skipped, not failed."""
