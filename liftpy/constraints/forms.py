"""The shapes of constraints the solver turns into candidate generators instead of filters.

* ``Eq(Mod(E, p + c), 0)``: ``p + c`` divides ``E``, so ``p``'s candidates are the divisors of ``E``
  shifted by ``-c`` (``split``, ``asVector``, and the tiling condition of a strict slide);
* relations linear in ``p`` (once the denominator is cleared): a lower or upper bound on ``p``, so the
  candidates are a slice of the sorted candidate set.

Recognition is symbolic and cached; evaluation happens in code compiled by ``compile``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy

REL_OPS = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.Lt: "<",
    sympy.Le: "<=",
    sympy.Gt: ">",
    sympy.Ge: ">=",
}
FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def symbol_named(expr: sympy.Basic, name: str) -> sympy.Symbol:
    """The free symbol of ``expr`` called ``name`` (parameters are matched by name, whatever
    assumptions their symbols were created with), or a fresh integer symbol when there is none."""
    for s in expr.free_symbols:
        if s.name == name:
            return s
    return sympy.Symbol(name, integer=True)


@dataclass(frozen=True)
class DivisorForm:
    """``p + offset`` must divide ``dividend`` (which does not mention ``p``)."""

    param: str
    offset: int
    dividend: sympy.Basic


@dataclass(frozen=True)
class LinearForm:
    """``coeff*p + rest op 0`` with ``coeff`` and ``rest`` free of ``p`` (op one of == <= < >= >)."""

    param: str
    op: str
    coeff: sympy.Basic
    rest: sympy.Basic


@lru_cache(maxsize=8192)
def divisor_form(pred: sympy.Basic, param: str) -> DivisorForm | None:
    """Recognise ``Eq(Mod(E, p + c), 0)`` with a constant integer ``c``.  ``E`` may mention ``p`` when it
    is a polynomial in ``p``: modulo ``p + c`` it equals ``E`` at ``p = -c`` (the tiling condition
    ``(n + rho - theta) % (theta - 2) == 0`` becomes ``theta - 2`` divides ``n + rho - 2``)."""
    if not isinstance(pred, sympy.Eq):
        return None
    lhs, rhs = pred.lhs, pred.rhs
    if rhs != 0 and lhs == 0:
        lhs, rhs = rhs, lhs
    if rhs != 0 or not isinstance(lhs, sympy.Mod):
        return None
    p = symbol_named(pred, param)
    dividend, modulus = lhs.args
    offset = modulus - p
    if not offset.is_Integer:
        return None
    if p in dividend.free_symbols:
        if not dividend.is_polynomial(p):
            return None
        dividend = sympy.expand(dividend.subs(p, -offset))
    return DivisorForm(param, int(offset), dividend)


@lru_cache(maxsize=8192)
def linear_form(pred: sympy.Basic, param: str, positive: bool = False) -> LinearForm | None:
    """Recognise a relation that is linear in ``p`` once its denominator is cleared.

    ``lhs - rhs = N/D``.  For an inequality, ``N/D op 0`` holds exactly when ``D != 0`` and
    ``N*D op 0``, so ``coeff`` and ``rest`` carry the factor ``D`` (its sign may depend on other
    parameters and is known at run time).  When ``positive`` says every candidate of ``p`` is positive,
    powers of ``p`` in ``D`` do not change its sign and are dropped first, so ``(t-2)**2/p <= 384``
    reads as ``p >= (t-2)**2/384`` (and ``E/p <= 0``, where ``p`` drops out, as "all or none").
    Callers still check the relation itself: the form only narrows candidates."""
    op = None
    for cls, o in REL_OPS.items():
        if isinstance(pred, cls):
            op = o
    if op is None or op == "!=":
        return None
    p = symbol_named(pred, param)
    n, d = (pred.lhs - pred.rhs).as_numer_denom()
    in_denominator = p in d.free_symbols
    if in_denominator:
        if not positive or op == "==":
            return None
        rest_d, dep = d.as_independent(p, as_Add=False)
        if not (dep == p or (isinstance(dep, sympy.Pow) and dep.base == p and dep.exp.is_Integer and dep.exp > 0)):
            return None
        d = rest_d
    n = sympy.expand(n)
    a, b = n.coeff(p, 1), n.coeff(p, 0)
    # A term non-linear in p (p**2, Mod(.., p)) either lands in b or is dropped by coeff; both show here.
    if p in a.free_symbols or p in b.free_symbols or sympy.expand(a * p + b - n) != 0:
        return None
    if a == 0 and not in_denominator:
        return None
    if op == "==":
        return LinearForm(param, op, a, b)
    return LinearForm(param, op, sympy.expand(a * d), sympy.expand(b * d))


def linear_bounds(op: str, coeff: int, rest: int) -> tuple[int | None, int | None] | None:
    """Integer bounds ``(lo, hi)`` on ``p`` from ``coeff*p + rest op 0`` (``None`` = unbounded side), or
    ``None`` when no integer satisfies it."""
    if coeff == 0:
        ok = {"==": rest == 0, "<=": rest <= 0, "<": rest < 0, ">=": rest >= 0, ">": rest > 0}[op]
        return (None, None) if ok else None
    if coeff < 0:
        coeff, rest, op = -coeff, -rest, FLIP[op]
    if op == "==":
        if rest % coeff:
            return None
        return (-rest // coeff, -rest // coeff)
    if op == "<=":
        return (None, (-rest) // coeff)
    if op == "<":
        return (None, (-rest - 1) // coeff)
    if op == ">=":
        return (-(rest // coeff), None)
    return (-((rest - 1) // coeff), None)  # op == ">"


def divisors(n: int) -> tuple[int, ...]:
    """Positive divisors of ``|n|`` in increasing order (``n != 0``); cached, so large dividends that
    recur (a window count for every kernel group) are factored once."""
    return _divisors(abs(int(n)))


@lru_cache(maxsize=1 << 16)
def _divisors(n: int) -> tuple[int, ...]:
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i * i != n:
                large.append(n // i)
        i += 1
    return tuple(small + large[::-1])

