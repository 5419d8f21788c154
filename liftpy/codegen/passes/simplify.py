"""Simplification of every index and condition with the ranges of the loop variables in scope
(``liftpy.views.arith``): ``floor((4*i + j)/4)`` becomes ``i`` when ``j < 4``, a padding condition that
holds for the whole range of a loop disappears, and a conditional read whose condition is decided becomes
the branch taken."""

from __future__ import annotations

import dataclasses

import sympy

from ...views import view as V
from ...views.arith import simplify as simplify_index
from ...views.arith import simplify_condition
from ..stmt import If, IndexDef, Kernel, Store, map_stmts


def simplify_read(r: V.Read, ranges: dict) -> V.Read:
    if isinstance(r, V.MemRead):
        return dataclasses.replace(r, index=simplify_index(r.index, ranges))
    if isinstance(r, V.CondRead):
        c = simplify_condition(r.cond, ranges)
        if c is sympy.true:
            return simplify_read(r.then, ranges)
        if c is sympy.false:
            return simplify_read(r.other, ranges)
        return V.CondRead(c, simplify_read(r.then, ranges), simplify_read(r.other, ranges))
    if isinstance(r, V.VecRead):
        return V.VecRead(tuple(simplify_read(l, ranges) for l in r.lanes), r.scalar)
    if isinstance(r, V.ImageRead):
        lane = None if r.lane is None else simplify_index(r.lane, ranges)
        return V.ImageRead(r.image, simplify_index(r.x, ranges), simplify_index(r.y, ranges), lane)
    if isinstance(r, V.FunCall):
        return V.FunCall(r.name, tuple(simplify_read(a, ranges) for a in r.args))
    if isinstance(r, V.LaneRead):
        return V.LaneRead(simplify_read(r.vector, ranges), simplify_index(r.lane, ranges))
    return r


def _stmt(s, ranges):
    if isinstance(s, If):
        c = simplify_condition(s.cond, ranges)
        if c is sympy.true:
            return s.body.items
        if c is sympy.false:
            return ()
        return If(c, s.body)
    if isinstance(s, Store):
        return dataclasses.replace(s, index=simplify_index(s.index, ranges), value=simplify_read(s.value, ranges))
    if isinstance(s, IndexDef):
        return IndexDef(s.var, simplify_index(s.value, ranges))
    return s


def simplify(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_stmts(kernel.body, _stmt))
