"""Half arithmetic: whether a device computes in half, asked by building and running a kernel (issue 57).

NVIDIA does not report ``cl_khr_fp16``, yet its drivers since 2023 build half + - * / (not its math
builtins), and PoCL reports it on some CPUs only: the extension string does not settle it either way.  The
probe builds a kernel that enables ``cl_khr_fp16`` and uses only ``+ - * /`` and ``mad`` on ``half`` and
``half4`` (what the half-arithmetic variants generate; no math builtins), runs it on values whose results
half holds exactly, and compares.  ``half_arithmetic`` is the measurement (``value`` true or false, with the
reason), recorded in the device profile; ``has_half_arithmetic`` reads it back, and
``require_half_arithmetic`` is the one-line refusal of ``precision=fp16`` on a device without it.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import numpy as np
import pyopencl as cl

from ..errors import DeviceError
from ..ir.precision import FP16, variant_precision
from .results import Measurement, ProbeResult
import sympy

NAME = "half_arithmetic"

SOURCE = """#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void probe_half(global const half* restrict a, global const half* restrict b, global half* restrict out) {
  int i = get_global_id(0);
  half x = a[i];
  half y = b[i];
  half4 v = (half4)(x, y, x, y);
  half4 w = v * (half4)(y) + (half4)(x);
  out[6 * i + 0] = x + y;
  out[6 * i + 1] = x - y;
  out[6 * i + 2] = x * y;
  out[6 * i + 3] = x / y;
  out[6 * i + 4] = mad(x, y, x);
  out[6 * i + 5] = w.s0 + w.s3;
}
"""

# Small integers and halves: every result below is a half exactly, so a right device matches bit for bit.
A = np.array([1.0, 2.0, -3.0, 4.5, 6.0, -0.5, 8.0, 10.0], dtype=np.float16)
B = np.array([2.0, 4.0, 2.0, 0.5, -3.0, 2.0, 4.0, -2.0], dtype=np.float16)


def expected() -> np.ndarray:
    a, b = A.astype(np.float32), B.astype(np.float32)
    out = np.stack([a + b, a - b, a * b, a / b, a * b + a, (a * b + a) + (b * b + a)], axis=1)
    return out.astype(np.float16).ravel()


@contextmanager
def _compiler_quiet():
    """PoCL's compiler prints its diagnostics ("1 warning and 6 errors generated.") on the process's own
    standard error, past Python: a refusal is this probe's answer, not news for the user's terminal."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def run_probe(device) -> Measurement:
    """Build and run the half kernel on ``device`` (a ``liftpy.host.device.Device``); a measurement whose
    value says whether half arithmetic builds and computes right there, and whose note says why not."""
    reported = "cl_khr_fp16" in (device.cl_device.extensions or "")
    method = ("built a kernel of half + - * / and mad (cl_khr_fp16 enabled) and compared its results bit for bit; "
              f"the device {'reports' if reported else 'does not report'} cl_khr_fp16")
    try:
        with _compiler_quiet():
            program = cl.Program(device.context, SOURCE).build()
    except cl.Error as e:  # (the compiler's refusal is the answer, not a failure of the probe)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return Measurement(NAME, False, "bool", method, 1.0, f"the half kernel does not build: {first[:160]}")
    mf = cl.mem_flags
    a = cl.Buffer(device.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=A)
    b = cl.Buffer(device.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=B)
    out = np.zeros(6 * len(A), dtype=np.float16)
    out_buf = cl.Buffer(device.context, mf.WRITE_ONLY, out.nbytes)
    try:
        program.probe_half(device.queue, (len(A),), None, a, b, out_buf).wait()
        cl.enqueue_copy(device.queue, out, out_buf).wait()
    except cl.Error as e:
        return Measurement(NAME, False, "bool", method, 1.0, f"the half kernel does not run: {str(e)[:160]}")
    want = expected()
    wrong = np.flatnonzero(out != want)
    if wrong.size:
        k = int(wrong[0])
        return Measurement(NAME, False, "bool", method, 1.0,
                           f"{wrong.size} of {want.size} half results wrong (result {k}: {out[k]}, expected {want[k]})")
    return Measurement(NAME, True, "bool", method, 1.0)


def probe_half(ctx) -> ProbeResult:
    """The probe as ``liftpy probe`` runs it (``runner.PROBES``)."""
    return ProbeResult(NAME, (run_probe(ctx.device),), ())


def has_half_arithmetic(profile) -> bool | None:
    """What a device profile says of half arithmetic: the probe's answer where it ran, else None (unknown)."""
    entry = (getattr(profile, "measured", None) or {}).get(NAME)
    value = entry.get("value") if isinstance(entry, dict) else entry
    return value if isinstance(value, bool) else None


def require_half_arithmetic(device_name: str, available: bool | None) -> None:
    """Refuse precision fp16 on a device without half arithmetic, in one line naming the device and the
    alternative that every device has (half storage)."""
    if available:
        return
    why = "does not compute in half (the half probe failed)" if available is False else \
          "has no half arithmetic known (no cl_khr_fp16; run `liftpy probe --only half_arithmetic` to test it)"
    raise DeviceError(f"precision fp16 needs half arithmetic, and {device_name} {why}; use --precision fp16-storage "
                      "(arrays stored as half, arithmetic in float), which every device runs")


def half_constraints(program, profile) -> list[tuple]:
    """The constraint (``constraints.infer``'s form) that keeps a program computing in half off a device
    whose profile says it has no half arithmetic (the probe ran and failed): no value of any parameter helps.
    Where the profile does not know, ``operators.precision.require_device`` decides before an exploration."""

    if variant_precision(None, program) != FP16 or has_half_arithmetic(profile) is not False:
        return []
    return [(sympy.false, lambda: f"{program.name} computes in half and {profile.device} has no half arithmetic "
                                  "(the half probe failed): explore it in fp16-storage", "device:half_arithmetic")]
