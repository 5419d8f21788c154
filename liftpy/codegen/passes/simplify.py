"""Simplification of every index and condition with the ranges of the loop variables in scope
(``liftpy.views.arith``): ``floor((4*i + j)/4)`` becomes ``i`` when ``j < 4``, a padding condition that
holds for the whole range of a loop disappears, and a conditional read whose condition is decided becomes
the branch taken."""

from __future__ import annotations


import sympy

from ...views import view as V
from ...views.arith import simplify as simplify_index
from ...views.arith import simplify_condition
from ...views.arith import substitute as substitute_index
from ..stmt import If, IndexDef, Kernel, Store, map_stmts, store_with


def simplify_read(r: V.Read, ranges: dict, first=None) -> V.Read:
    """``r`` with its indices and conditions simplified; ``first`` rewrites each of them before (the
    substitution of a split counter, done in the same walk of the read)."""
    if first is None:
        index = lambda e: simplify_index(e, ranges)  # noqa: E731  (one closure per read, not per node)
        cond = lambda e: simplify_condition(e, ranges)  # noqa: E731
    else:
        index = lambda e: simplify_index(first(e), ranges)  # noqa: E731
        cond = lambda e: simplify_condition(first(e), ranges)  # noqa: E731

    def one(x: V.Read) -> V.Read:
        if isinstance(x, V.CondRead):
            c = cond(x.cond)
            if c is sympy.true:
                return x.then
            if c is sympy.false:
                return x.other
            return V.CondRead(c, x.then, x.other)
        return x.map_exprs(index)

    return V.transform(r, one)


def _stmt(s, ranges, first=None):
    """``s`` simplified with ``ranges`` (``first``: a rewrite of every expression before, as in
    ``simplify_read``; the body of an ``If`` is left as it is)."""
    if isinstance(s, If):
        c = simplify_condition(s.cond if first is None else first(s.cond), ranges)
        if c is sympy.true:
            return s.body.items
        if c is sympy.false:
            return ()
        return If(c, s.body)
    if isinstance(s, Store):
        index = s.index if first is None else first(s.index)
        return store_with(s, simplify_index(index, ranges), simplify_read(s.value, ranges, first))
    if isinstance(s, IndexDef):
        value = simplify_index(s.value if first is None else first(s.value), ranges)
        return s if value is s.value else IndexDef(s.var, value)
    return s


def simplify_substituted(s, mapping: dict, seen: dict, ranges: dict):
    """``_stmt(substitute(s, mapping, seen), ranges)`` for a statement whose containers' bodies are
    already substituted (``map_stmts`` hands an ``If`` over after its body), in one walk of each value:
    a trial split rewrote every read twice, and built the substituted one only to rebuild it."""
    return _stmt(s, ranges, lambda e: substitute_index(e, mapping, seen))


def simplify(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_stmts(kernel.body, _stmt))
