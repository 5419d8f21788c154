"""Simplification of every index and condition with the ranges of the loop variables in scope
(``liftpy.views.arith``): ``floor((4*i + j)/4)`` becomes ``i`` when ``j < 4``, a padding condition that
holds for the whole range of a loop disappears, and a conditional read whose condition is decided becomes
the branch taken."""

from __future__ import annotations


import sympy

from ...views import view as V
from ...views.arith import simplify as simplify_index
from ...views.arith import simplify_condition
from ..stmt import If, IndexDef, Kernel, Store, map_stmts, store_with


def simplify_read(r: V.Read, ranges: dict) -> V.Read:
    index = lambda e: simplify_index(e, ranges)  # noqa: E731  (one closure per read, not per node)

    def one(x: V.Read) -> V.Read:
        if isinstance(x, V.CondRead):
            c = simplify_condition(x.cond, ranges)
            if c is sympy.true:
                return x.then
            if c is sympy.false:
                return x.other
            return V.CondRead(c, x.then, x.other)
        return x.map_exprs(index)

    return V.transform(r, one)


def _stmt(s, ranges):
    if isinstance(s, If):
        c = simplify_condition(s.cond, ranges)
        if c is sympy.true:
            return s.body.items
        if c is sympy.false:
            return ()
        return If(c, s.body)
    if isinstance(s, Store):
        return store_with(s, simplify_index(s.index, ranges), simplify_read(s.value, ranges))
    if isinstance(s, IndexDef):
        value = simplify_index(s.value, ranges)
        return s if value is s.value else IndexDef(s.var, value)
    return s


def simplify(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_stmts(kernel.body, _stmt))
