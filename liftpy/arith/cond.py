"""Conditions on indices: comparisons, conjunctions and disjunctions in canonical form.

A comparison of two numbers is decided when it is built; a conjunction or disjunction is flattened,
without the parts that decide nothing, each part once, in the order sympy's ``And`` and ``Or`` keep (the
C printer writes them in that order), and decided where it holds a comparison and its negation."""

from __future__ import annotations

from .expr import FALSE, TRUE, And, ArithError, Cond, Or, Rel, Truth, _intern, as_expr, truth
from .order import ordered

DECIDE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
          ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def rel(op: str, lhs, rhs) -> Cond:
    """``lhs op rhs``, decided when both sides are numbers."""
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    if lhs.is_const and rhs.is_const:
        return truth(DECIDE[op](lhs.value, rhs.value))
    return _intern(Rel, (lhs, rhs), op)


def conj(parts) -> Cond:
    """The conjunction of ``parts``: false if one is, without the true ones, nested conjunctions
    flattened, each part once, in sympy's order of ``And``'s arguments."""
    return _lattice(And, parts, FALSE, TRUE)


def disj(parts) -> Cond:
    return _lattice(Or, parts, TRUE, FALSE)


def _lattice(cls, parts, zero: Truth, unit: Truth) -> Cond:
    
    flat = []
    for p in parts:
        if p is zero:
            return zero
        if p is unit:
            continue
        if not isinstance(p, Cond):
            raise ArithError(f"{p!r} is not a condition")
        flat.extend(p.args if isinstance(p, cls) else (p,))
    flat = list(dict.fromkeys(flat))
    if not flat:
        return unit
    rels = {(p.op, p.args) for p in flat if isinstance(p, Rel)}
    if any((NEGATED[op], args) in rels for op, args in rels):
        return zero  # x and not x is false, x or not x true
    return flat[0] if len(flat) == 1 else _intern(cls, tuple(ordered(flat)))


def negate(c: Cond) -> Cond:
    """``not c`` as a condition of the same kinds (De Morgan): C printing has no negation."""
    if isinstance(c, Truth):
        return truth(not c.value)
    if isinstance(c, Rel):
        return rel(NEGATED[c.op], c.lhs, c.rhs)
    parts = [negate(a) for a in c.args]
    return disj(parts) if isinstance(c, And) else conj(parts)
