"""Unrolling: a sequential loop marked ``unroll`` (``mapSeqUnroll``, ``reduceSeqUnroll``, short copies)
or of a single iteration becomes the copies of its body with the counter replaced by 0, 1, ..., each
copy simplified for its constant (``floor((4*k + j)/4)`` of copy ``k = 3`` is ``3`` when ``j < 4``).

The substitution and the simplification are one walk of each copy's statements (``simplify_substituted``),
done once, by the outermost unrolled loop: an unrolled loop inside another is only substituted, and the
outer loop's copies are simplified with every constant in place.  (Substituting, then simplifying the
whole kernel again in a pass of its own, walked every statement twice and built each copy's reads only
to rebuild them.)  Statements outside unrolled loops keep what the simplification before this pass made
of them.

The extent of an unrolled loop is bounded where the loop is made (the unrolling rules require at most
``UNROLL_LIMIT`` iterations, and the emitter unrolls copies of at most four elements), so this pass never
meets a loop of 2^20 iterations.  A copy that declares private variables keeps its own C scope."""

from __future__ import annotations

import sympy

from ...ir.levels import Level
from ..stmt import Block, Kernel, Loop, bind_index, body_ranges, descend, flatten, map_stmts, substitute
from .simplify import simplify_substituted


def _unrolled(x) -> bool:
    return isinstance(x, Loop) and x.level is Level.SEQ and (x.unroll or x.extent == 1)


def _expand(s, ranges: dict, inside: bool):
    """``s`` with its unrolled loops expanded (``inside``: an enclosing loop is unrolled too, and
    simplifies the copies)."""
    if isinstance(s, Block):
        return Block(flatten(_expand_items(s.items, ranges, inside)))
    return descend(s, lambda b: _expand(b, body_ranges(s, ranges), inside or _unrolled(s)))


def _expand_items(items, ranges: dict, inside: bool) -> list:
    out = []
    scope = dict(ranges)
    for x in items:
        x = _expand(x, scope, inside)
        if not _unrolled(x):
            out.append(x)
        elif inside:
            out.extend(substitute(x.body, {x.var: sympy.Integer(k)}) for k in range(x.extent))
        else:
            out.extend(_simplified_copy(x, k, scope) for k in range(x.extent))
        bind_index(scope, x)
    return out


def _simplified_copy(loop: Loop, k: int, ranges: dict) -> Block:
    seen: dict = {}  # substitutions made for this copy: its statements share most of their terms
    mapping = {loop.var: sympy.Integer(k)}
    return map_stmts(loop.body, lambda s, scope: simplify_substituted(s, mapping, seen, scope), ranges)


def unroll(kernel: Kernel) -> Kernel:
    return kernel.replace(body=_expand(kernel.body, {}, False))
