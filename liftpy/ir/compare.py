"""Whether an output is the expected one: the one verdict every command gives on a kernel's result.

``liftpy run``, ``liftpy explore`` and the operators' checks all ask this of a device's output against the
interpreter's (or a numpy reference's), so it is written once, here.  Integers must be equal.  Floats may
differ by what summing in another order costs: each element by ``rtol`` of its own magnitude plus the
reference's root-mean-square (a missing or repeated term is far outside that).

Non-finite results are compared position by position: where the reference holds NaN the output must hold
NaN, where it holds an infinity the same infinity, and elsewhere a finite number within the tolerance.  A
function whose true result is NaN for some inputs (``sqrt`` of a negative number) is then correct when the
kernel computes the same NaNs, and a kernel that produces a NaN or an infinity where the reference has a
number is wrong, with the first such position named.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

_TINY32 = float(np.finfo(np.float32).tiny)


@dataclass(frozen=True)
class Validation:
    ok: bool
    max_abs_error: float  # over the elements where the reference is finite
    worst_ratio: float  # the largest |error| / allowed error over the elements; at most 1 when ok
    worst_index: tuple[int, ...] | None
    message: str


def _first(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def within(actual: np.ndarray, expected: np.ndarray, allowed) -> Validation:
    """The verdict on a float output whose every element may differ from ``expected`` by ``allowed``
    (an array of the output's shape, or a number): the worst element, how many are wrong, a message.
    Where ``expected`` is NaN or infinite, ``actual`` must be the same (see the module's docstring)."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    finite = np.isfinite(a)
    expected_finite = np.isfinite(e)
    if not (finite.all() and expected_finite.all()):
        # Same non-finite value where the reference has one; a finite value where it has a number.
        same = (np.isnan(a) & np.isnan(e)) | (a == e)
        bad = np.where(expected_finite, ~finite, ~same)
        if bad.any():
            at = _first(bad)
            what = "non-finite output" if expected_finite[at] else "output unlike the reference's non-finite value"
            return Validation(False, math.inf, math.inf, at,
                              f"{what}: {int(np.count_nonzero(bad))} of {a.size} elements wrong; first at {at}: "
                              f"got {a[at]}, expected {e[at]}")
        a = np.where(expected_finite, a, 0.0)
        e = np.where(expected_finite, e, 0.0)
        allowed = np.where(expected_finite, allowed, 1.0)  # (the positions that matched, with error 0)
    # One float64 buffer holds the errors, then their ratios to what is allowed: a search checks every point
    # against its reference, and a copy per step took three times as long (SGEMM 1024: 15 -> 4 ms).
    ratio = np.subtract(a, e, dtype=np.float64)
    np.abs(ratio, out=ratio)
    max_abs = float(ratio.max()) if ratio.size else 0.0
    allowed = np.broadcast_to(allowed, ratio.shape)
    np.divide(ratio, allowed, out=ratio)
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape)) if ratio.size else None
    worst_ratio = float(ratio[worst]) if worst is not None else 0.0
    if worst_ratio <= 1.0:
        return Validation(True, max_abs, worst_ratio, worst, f"ok (max error {max_abs:.3g}, {worst_ratio:.2g} of allowed)")
    wrong = int(np.count_nonzero(ratio > 1.0))
    got, want = float(a[worst]), float(e[worst])
    return Validation(
        False, max_abs, worst_ratio, worst,
        f"{wrong} of {ratio.size} elements wrong; worst at {worst}: got {got:.6g}, expected "
        f"{want:.6g} (error {abs(got - want):.3g}, {worst_ratio:.3g}x the allowed {allowed[worst]:.3g})",
    )  # fmt: skip


def compare(output: np.ndarray, expected: np.ndarray, rtol: float = 1e-3) -> Validation:
    """fp32 output against a reference: exact for integers; for floats within ``rtol`` of each element or
    of the reference's root-mean-square (sums in another order round differently; a missing or repeated
    term is far outside).  A tuple output (an array of tuples) is compared component by component."""
    return Comparison.of(expected, rtol)(output)


@dataclass(frozen=True, eq=False)  # (arrays: compared and hashed by identity)
class Comparison:
    """``compare`` against one expected output, what each element may differ by computed once: a search
    checks every point of a problem against the same reference (for SGEMM 1024, working out the allowed
    errors again took as long as comparing)."""

    expected: object  # float64 array, integer array, or a tuple of Comparisons (a tuple output)
    allowed: object  # float64 array of what each element may differ by (None: exact, or in the components)
    rtol: float = 1e-3
    scaled: bool = True  # every element of the reference is a number, not all zero (relative_errors may answer)

    @staticmethod
    def of(expected, rtol: float = 1e-3) -> "Comparison":
        if isinstance(expected, tuple):
            return Comparison(tuple(Comparison.of(e, rtol) for e in expected), None, rtol)
        exp = np.asarray(expected)
        if np.issubdtype(exp.dtype, np.integer) or exp.dtype == np.bool_:
            return Comparison(exp, None, rtol)
        # In place, one buffer: for the 2^26 floats of an elementwise operator each temporary cost a second.
        e = exp.astype(np.float64)
        finite = bool(np.isfinite(e).all())
        if finite:
            flat = e.reshape(-1)
            rms = math.sqrt(float(np.dot(flat, flat)) / flat.size) if flat.size else 0.0
        else:
            numbers = e[np.isfinite(e)]  # (a NaN or an infinity in the reference would make every tolerance NaN)
            rms = float(np.sqrt(np.mean(numbers * numbers))) if numbers.size else 0.0
        with np.errstate(invalid="ignore"):
            allowed = np.abs(e)
            allowed += rms
            allowed *= rtol
            allowed += _TINY32
        return Comparison(e, allowed, rtol, finite and rms > 0)

    def relative_errors(self, output) -> tuple[float, float] | None:
        """(max, rms) of ``|output - expected| / (|expected| + rms(expected))`` (``ir.precision.relative_errors``,
        which every measured point records) from the allowed errors worked out once, in one buffer; None where
        this cannot say (a tuple, integers, a non-finite value, a reference of zeros, another size): the caller computes them in
        full.  Recording them by the general function took 8 s a point for 2^26 floats on a 2-core machine."""
        if self.allowed is None or isinstance(self.expected, tuple) or not self.scaled:
            return None
        a = np.asarray(output)
        if a.size != self.expected.size or not np.isfinite(a).all():
            return None
        r = np.subtract(a.reshape(self.expected.shape), self.expected, dtype=np.float64)
        np.abs(r, out=r)
        np.divide(r, self.allowed, out=r)
        r *= self.rtol  # (allowed = rtol * (|e| + rms) + the smallest float: the same ratio, to 1e-30)
        flat = r.reshape(-1)
        if not flat.size:
            return 0.0, 0.0
        return float(flat.max()), math.sqrt(float(np.dot(flat, flat)) / flat.size)

    def __call__(self, output) -> Validation:
        if isinstance(self.expected, tuple):
            if not (isinstance(output, tuple) and len(output) == len(self.expected)):
                return Validation(False, math.inf, math.inf, None, f"output is not a tuple of {len(self.expected)} components")
            checks = [c(o) for c, o in zip(self.expected, output)]
            bad = [(k, c) for k, c in enumerate(checks) if not c.ok]
            if bad:
                k, c = bad[0]
                return dataclasses.replace(c, message=f"component {k}: {c.message}")
            return max(checks, key=lambda c: c.worst_ratio)
        out = np.asarray(output)
        exp = self.expected
        if out.size != exp.size:
            return Validation(False, math.inf, math.inf, None, f"output has {out.size} elements, expected {exp.size} ({exp.shape})")
        out = out.reshape(exp.shape)
        if self.allowed is None:
            bad = np.argwhere(out != exp)
            if len(bad):
                at = tuple(int(i) for i in bad[0])
                return Validation(False, float(np.max(np.abs(out.astype(np.int64) - exp))), math.inf, at,
                                  f"{len(bad)} of {exp.size} elements wrong; first at {at}: got {out[at]}, expected {exp[at]}")
            return Validation(True, 0.0, 0.0, None, "ok (exact)")
        return within(out, exp, self.allowed)
