"""Simplification of every index and condition with the ranges of the loop variables in scope
(``liftpy.arith``): ``floor((4*i + j)/4)`` becomes ``i`` when ``j < 4``, a padding condition that
holds for the whole range of a loop disappears, and a conditional read whose condition is decided becomes
the branch taken."""

from __future__ import annotations

from ... import arith as A
from ...arith import simplify as simplify_index
from ...arith import simplify_condition, substitute_simplified
from ...views import view as V
from ..stmt import If, IndexDef, Kernel, Store, map_stmts, store_with


def rewrite_read(r: V.Read, index, cond) -> V.Read:
    """``r`` with ``index`` applied to its indices and ``cond`` to its conditions, and each conditional
    read whose condition became true or false replaced by the branch taken."""
    def one(x: V.Read) -> V.Read:
        if isinstance(x, V.CondRead):
            c = cond(x.cond)
            if c is A.TRUE:
                return x.then
            if c is A.FALSE:
                return x.other
            return x if c is x.cond else V.CondRead(c, x.then, x.other, x.same)
        return x.map_exprs(index)

    return V.transform(r, one)


def rewrite_stmt(s, index, cond):
    """``s`` with ``index`` applied to its indices and ``cond`` to its conditions (not to the body of an
    ``If``, which ``map_stmts`` hands over before it): an ``If`` whose condition became true is its
    body's statements, one that became false nothing."""
    if isinstance(s, If):
        c = cond(s.cond)
        if c is A.TRUE:
            return s.body.items
        if c is A.FALSE:
            return ()
        return s if c is s.cond else If(c, s.body)
    if isinstance(s, Store):
        return store_with(s, index(s.index), rewrite_read(s.value, index, cond))
    if isinstance(s, IndexDef):
        value = index(s.value)
        return s if value is s.value else IndexDef(s.var, value)
    return s


def simplify_read(r: V.Read, ranges: dict) -> V.Read:
    """``r`` with its indices and conditions simplified."""
    return rewrite_read(r, lambda e: simplify_index(e, ranges), lambda c: simplify_condition(c, ranges))


def _stmt(s, ranges):
    return rewrite_stmt(s, lambda e: simplify_index(e, ranges), lambda c: simplify_condition(c, ranges))


def simplify_substituted(s, mapping: dict, ranges: dict, seen: dict | None = None):
    """``s`` with ``mapping`` substituted and simplified with ``ranges``, in one walk of each value (a trial
    split rewrote every read twice, and built the substituted one only to rebuild it).  ``seen``: as
    ``arith.substitute_simplified``'s, shared between statements."""
    seen = {} if seen is None else seen
    return rewrite_stmt(s, lambda e: substitute_simplified(e, mapping, ranges, seen),
                        lambda c: substitute_simplified(c, mapping, ranges, seen))


def simplify(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_stmts(kernel.body, _stmt))
