"""The verdict and error figures of a point by its precision (issue 57; docs/precision.md).

A point of a half-storage variant is checked against the same reference as the float points, with the
tolerance its precision allows (``liftpy.ir.precision.tolerance``: the operator's own plus one unit roundoff
of half per array stored as half), and every measured point records how far it is from the reference:
``max_rel_error`` and ``rms_rel_error`` (``precision.relative_errors``) and its ``precision``, in its metrics.
Stores written before these fields existed read as fp32 points of unknown error (``point_precision``,
``point_error``).
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.compare import Comparison
from ..ir.precision import (FP16_STORAGE, FP32, FP32_RTOL, HALF_PLACEMENT, half_arrays, relative_errors, tolerance,
                            variant_precision)

_SCALED: dict = {}  # (id of the check, tolerance) -> (check, its rescaled Comparison): one per problem and k


def precision_check(check, placements, base_rtol: float | None = None, op=None, inputs=None):
    """``check`` with the tolerance of the precision ``placements`` give the point.  Only a ``Comparison``
    (every program and library operator's) can be rescaled; another check (a conv layer's own) is kept.

    With the operator and its ``inputs``: the inputs a variant keeps as half are what its kernels receive
    (the host rounds them when it uploads them), so the point is judged against the reference on those
    rounded inputs, allowing one half rounding for each array its kernels round themselves (intermediates
    and the result).  Judged against the float inputs instead, an operator that amplifies its inputs'
    rounding failed although its kernel was right (softmax of rows of 8,192 normal values: exp(x - max)
    carries |x| + |max| of x's rounding, 1.15x the tolerance of three half arrays)."""
    k = half_arrays(placements)
    if k == 0 or not isinstance(check, Comparison):
        return check
    base = base_rtol if base_rtol is not None else FP32_RTOL
    rounded = _half_inputs(op, placements) if inputs is not None else ()
    tol = tolerance(FP16_STORAGE, k - len(rounded), base=base)
    key = (id(check), rounded, tol)
    hit = _SCALED.get(key)
    if hit is None or hit[0] is not check:
        if len(_SCALED) > 64:
            _SCALED.clear()
        if rounded:
            names = [p.name for p in op.prog.params]
            seen = [x.astype(np.float16).astype(np.float32) if n in rounded and isinstance(x, np.ndarray)
                    and x.dtype.kind == "f" else x for n, x in zip(names, inputs)]
            expected = op.expected(seen)
        else:
            expected = _expected(check)
        hit = _SCALED[key] = (check, Comparison.of(expected, tol))
    return hit[1]


def _half_inputs(op, placements) -> tuple[str, ...]:
    """The program inputs of ``op`` that ``placements`` keep as half, where ``op`` can compute its reference
    on other inputs (a program or library operator); () otherwise."""
    if op is None or not hasattr(op, "prog") or not hasattr(op, "expected"):
        return ()
    half = {name for name, where in dict(placements or {}).items() if where == HALF_PLACEMENT}
    return tuple(sorted(p.name for p in op.prog.params if p.name in half))


def _expected(check):
    if not isinstance(check, Comparison):
        return None
    if isinstance(check.expected, tuple):
        return tuple(c.expected for c in check.expected)
    return check.expected


def precision_metrics(output, check, placements, program=None) -> dict:
    """The metrics a measured point records of its precision: ``precision``, and where the reference is at
    hand (a ``Comparison``) ``max_rel_error`` and ``rms_rel_error``; integer outputs have error 0."""
    out = {"precision": variant_precision(placements, program)}
    expected = _expected(check)
    if expected is not None and output is not None:
        fast = check.relative_errors(output)
        worst, rms = fast if fast is not None else relative_errors(output, expected)
        out["max_rel_error"], out["rms_rel_error"] = worst, rms
    return out


def point_precision(record) -> str:
    """A stored point's precision; fp32 for a point of a store written before precisions were recorded."""
    return (record.metrics or {}).get("precision", FP32)


def point_error(record) -> float | None:
    """A stored point's largest relative error, None where the store did not record it."""
    value = (record.metrics or {}).get("max_rel_error")
    return float(value) if isinstance(value, (int, float)) else None


def error_class(record) -> int:
    """The error axis of the frontier: a point's largest relative error as a power of two (``ceil(log2)``), so
    that points whose errors are within a factor of two tie on it (two float points differ by noise, a float
    and a half point by orders of magnitude).  A point without a recorded error (an older store's, a float
    point) counts as fp32's unit roundoff."""
    error = point_error(record)
    if error is None or error <= 0:
        error = 2.0**-24
    return math.ceil(math.log2(error))


def within_error(record, max_error: float) -> bool:
    """Whether a point meets ``pareto --max-error``: its recorded error at most ``max_error``; a point of an
    older store, which recorded none, is a float point whose verdict allowed ``FP32_RTOL``."""
    error = point_error(record)
    if error is None:
        return point_precision(record) == FP32 and FP32_RTOL <= max_error
    return error <= max_error


def mixed_precision(records) -> bool:
    """Whether ``records`` hold points of more than one precision: then the frontier has an error axis."""
    return len({point_precision(r) for r in records}) > 1


def front_with_error(points: list, keep_ties: bool = False) -> list:
    """The time x memory x error frontier (``error_class``), fastest first: a point is on it unless another
    is no slower, needs no more memory and is no less accurate (exact ties on all three: the first, or all
    with ``keep_ties``)."""
    points = sorted(points, key=lambda r: (r.time_ms, r.bytes, error_class(r)))
    front: list = []
    for r in points:
        key = (r.time_ms, r.bytes, error_class(r))
        dominated = False
        for f in front:
            fkey = (f.time_ms, f.bytes, error_class(f))
            if fkey[1] <= key[1] and fkey[2] <= key[2]:
                if fkey == key and keep_ties:
                    continue
                dominated = True
                break
        if not dominated:
            front.append(r)
    return front


class error_cells:
    """The precision and error columns of a frontier table: none where every point is a float point (the
    table is then as it always was), else a point's precision and largest relative error."""

    def __init__(self, frontier):
        self.header = ["precision", "max rel err"] if any(point_precision(r) != FP32 for r in frontier) else []
        self.blank = [""] * len(self.header)

    def of(self, record) -> list[str]:
        if not self.header:
            return []
        error = point_error(record)
        return [point_precision(record), "?" if error is None else f"{error:.2g}"]


def layer_check(op, best, output, inputs):
    """A network layer's verdict on the inputs it was given, with the tolerance of its stored best point's
    precision (a half-storage point: ``precision_check``)."""
    placements = (best.metrics or {}).get("placements")
    if not half_arrays(placements) or not hasattr(op, "expected") or not hasattr(op, "rtol"):
        return op.check(output, inputs)
    return precision_check(Comparison.of(op.expected(inputs), op.rtol), placements, op.rtol)(output)


def network_tolerance(precision: str, layers: int) -> float:
    """The end-to-end relative error a network run allows: fp32's 1e-3, as before; with half, the tolerance
    of a layer of three half arrays (input, weights, output) once per layer, since each layer's error is
    carried into the next (a bound, not an estimate: errors of independent roundings mostly cancel)."""
    if precision == FP32:
        return 1e-3
    return tolerance(precision, 3, 1) * max(layers, 1)
