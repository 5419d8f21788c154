"""Unrolling: a sequential loop marked ``unroll`` (``mapSeqUnroll``, ``reduceSeqUnroll``, short copies)
or of a single iteration becomes the copies of its body with the counter replaced by 0, 1, ...

The extent of an unrolled loop is bounded where the loop is made (the unrolling rules require at most
``UNROLL_LIMIT`` iterations, and the emitter unrolls copies of at most four elements), so this pass never
meets a loop of 2^20 iterations.  A copy that declares private variables keeps its own C scope."""

from __future__ import annotations

import sympy

from ...ir.levels import Level
from ..stmt import Block, Kernel, Loop, descend, flatten, substitute


def _expand(s):
    if isinstance(s, Block):
        return Block(flatten(_expand_items(s.items)))
    return descend(s, _expand)


def _expand_items(items):
    out = []
    for x in items:
        x = _expand(x)
        if isinstance(x, Loop) and x.level is Level.SEQ and (x.unroll or x.extent == 1):
            for k in range(x.extent):
                out.append(substitute(x.body, {x.var: sympy.Integer(k)}))
        else:
            out.append(x)
    return out


def unroll(kernel: Kernel) -> Kernel:
    return kernel.replace(body=_expand(kernel.body))
