"""The verdict and error figures of a point by its precision (issue 57; docs/precision.md).

A point of a half-storage variant is checked against the same reference as the float points, with the
tolerance its precision allows (``liftpy.ir.precision.tolerance``: the operator's own plus one unit roundoff
of half per array stored as half), and every measured point records how far it is from the reference:
``max_rel_error`` and ``rms_rel_error`` (``precision.relative_errors``) and its ``precision``, in its metrics.
Stores written before these fields existed read as fp32 points of unknown error (``point_precision``,
``point_error``).
"""

from __future__ import annotations

from ..ir.compare import Comparison
from ..ir.precision import FP16_STORAGE, FP32, FP32_RTOL, half_arrays, relative_errors, tolerance, variant_precision

_SCALED: dict = {}  # (id of the check, tolerance) -> (check, its rescaled Comparison): one per problem and k


def precision_check(check, placements, base_rtol: float | None = None):
    """``check`` with the tolerance of the precision ``placements`` give the point.  Only a ``Comparison``
    (every program and library operator's) can be rescaled; another check (a conv layer's own) is kept."""
    k = half_arrays(placements)
    if k == 0 or not isinstance(check, Comparison):
        return check
    tol = tolerance(FP16_STORAGE, k, base=base_rtol if base_rtol is not None else FP32_RTOL)
    key = (id(check), tol)
    hit = _SCALED.get(key)
    if hit is None or hit[0] is not check:
        if len(_SCALED) > 64:
            _SCALED.clear()
        hit = _SCALED[key] = (check, Comparison.of(check.expected if not isinstance(check.expected, tuple) else
                                                   tuple(c.expected for c in check.expected), tol))
    return hit[1]


def _expected(check):
    if not isinstance(check, Comparison):
        return None
    if isinstance(check.expected, tuple):
        return tuple(c.expected for c in check.expected)
    return check.expected


def precision_metrics(output, check, placements) -> dict:
    """The metrics a measured point records of its precision: ``precision``, and where the reference is at
    hand (a ``Comparison``) ``max_rel_error`` and ``rms_rel_error``; integer outputs have error 0."""
    out = {"precision": variant_precision(placements)}
    expected = _expected(check)
    if expected is not None and output is not None:
        worst, rms = relative_errors(output, expected)
        out["max_rel_error"], out["rms_rel_error"] = worst, rms
    return out


def point_precision(record) -> str:
    """A stored point's precision; fp32 for a point of a store written before precisions were recorded."""
    return (record.metrics or {}).get("precision", FP32)


def point_error(record) -> float | None:
    """A stored point's largest relative error, None where the store did not record it."""
    value = (record.metrics or {}).get("max_rel_error")
    return float(value) if isinstance(value, (int, float)) else None
