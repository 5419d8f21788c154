"""Precision: what a variant stores and computes in, and how far its results may stray (docs/precision.md).

Three precisions a program's variants come in:

- ``fp32``: every array and every operation in float (the program as written);
- ``fp16-storage``: arrays stored as half in global memory, read with ``vload_half``, written with
  ``vstore_half_rte``, every operation in float.  Core OpenCL: every device has it;
- ``fp16``: half storage and half arithmetic as well, where the device has it (``cl_khr_fp16``, or the
  probe ``liftpy.probe.half`` found that half + - * / and ``mad`` build and compute right).

The interpreter keeps half values as numpy float16 and computes a user function on them in float32, its
result rounded to half (``widen``): the semantics of a half kernel whose operations OpenCL carries out in
float, within one rounding of a kernel computing in half throughout.
"""

from __future__ import annotations

import math

import numpy as np
from .types import scalar_of

FP32, FP16_STORAGE, FP16 = "fp32", "fp16-storage", "fp16"
PRECISIONS = (FP32, FP16_STORAGE, FP16)

# Unit roundoff (half the distance from 1 to the next number): float 2^-24, half 2^-11.
UNIT_ROUNDOFF = {"float": 2.0**-24, "half": 2.0**-11}

# The tolerance the fp32 verdict has always used (``liftpy.ir.compare``): sums in another order.
FP32_RTOL = 1e-3

# Half's rounding errors in a sum of n terms grow as sqrt(n) (Higham and Mary, 2019) with probability at
# least 1 - 2 exp(-LAMBDA^2 / 2) per element; LAMBDA = 5 leaves about one element in 270 000 outside.
LAMBDA = 5.0

HALF_PLACEMENT = "half"  # a placement (``Variant.placements``): the array kept as half in global memory
OUTPUT_KEY = "out"  # the placement key of a kernel's result (a stage's output of a pipeline: its name)


def check_precision(precision: str) -> str:
    """``precision`` if it is one of ``PRECISIONS``; a ``ValueError`` naming them otherwise."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: one of {', '.join(PRECISIONS)}")
    return precision


def variant_precision(placements, program=None) -> str:
    """The precision of a variant: fp16 where its program computes in half (half inputs), else fp16-storage
    where its placements keep any array as half, else fp32."""
    if any(getattr(scalar_of(t), "name", None) == "half" for t in getattr(program, "param_types", ())):
        return FP16
    return FP16_STORAGE if HALF_PLACEMENT in dict(placements or {}).values() else FP32


def half_arrays(placements) -> int:
    """How many arrays a variant stores as half: the ``k`` of its tolerance."""
    return sum(1 for where in dict(placements or {}).values() if where == HALF_PLACEMENT)


def widen(datas: list) -> list:
    """User-function arguments as the interpreter computes on them: half arrays as float32 (the caller rounds
    the result back to the result's type).  Anything else is left as it is."""
    return [d.astype(np.float32) if isinstance(d, np.ndarray) and d.dtype == np.float16 else d for d in datas]


def tolerance(precision: str, half_arrays: int = 0, reduction_length: int = 1, base: float = FP32_RTOL) -> float:
    """The relative tolerance of a result of ``precision`` (docs/precision.md), as ``liftpy.ir.compare`` reads
    it: each element may differ from the reference by ``tolerance * (|reference| + rms(reference))``.

    fp32: ``base`` (``FP32_RTOL``, or an operator's own).  Half storage adds one unit roundoff u = 2^-11 per half array a result element's
    value passes through (``half_arrays``: inputs, intermediates and the output stored as half; each rounds
    its elements once, and a term of a sum carries the rounding of every operand it multiplies).  Half
    arithmetic adds the accumulation's growth, ``LAMBDA * sqrt(n) * u`` over a reduction of length n, and
    one rounding for each operation of the element's last step (2u: a multiply and an add)."""
    check_precision(precision)
    u = UNIT_ROUNDOFF["half"]
    if precision == FP32:
        return base
    tol = base + half_arrays * u
    if precision == FP16:
        tol += LAMBDA * math.sqrt(max(reduction_length, 1)) * u + 2 * u
    return tol


def relative_errors(output, expected) -> tuple[float, float]:
    """(max, rms) of the elementwise relative error ``|output - expected| / (|expected| + rms(expected))``
    over the elements where the reference is finite: the measure the tolerance bounds, normalised by the
    reference's rms as well so that elements near zero (where a sum cancels) do not read as 100% wrong."""
    if isinstance(expected, tuple):
        parts = [relative_errors(o, e) for o, e in zip(output, expected)]
        return (max(p[0] for p in parts), math.sqrt(sum(p[1] ** 2 for p in parts) / max(len(parts), 1))) if parts else (0.0, 0.0)
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(output, dtype=np.float64).reshape(e.shape)
    finite = np.isfinite(e)
    if not finite.any():
        return 0.0, 0.0
    e, a = e[finite], a[finite]
    scale = np.abs(e) + math.sqrt(float(np.mean(e * e))) + np.finfo(np.float32).tiny
    rel = np.abs(a - e) / scale
    rel = np.where(np.isfinite(rel), rel, np.inf)
    return float(rel.max()), float(math.sqrt(float(np.mean(rel * rel))))
