"""Software pipelining of the tiles a work-group stages in local memory (double buffering in registers).

A sequential loop at work-group level whose body starts by copying tiles of the inputs into local memory
(the k loop of a tiled matrix product) waits, at every step, for the global loads of its tiles before it
can compute.  This pass splits each copy into its loads (global memory into a private array) and its
stores (the private array into local memory), issues the loads of step 0 before the loop, and in every
step stores the tiles, synchronises, then issues the loads of the *next* step before computing, so that
their latency overlaps the computation (TVM's ``InjectSoftwarePipeline``; the hand-written SGEMM of
``shared/research/h100-anchors.md`` prefetches the same way).

It applies only when the copied tiles are read from the kernel's inputs (nothing the loop writes), and
when a work-item's share of them fits in ``MAX_PREFETCH`` registers.
"""

from __future__ import annotations

import dataclasses
import itertools

import sympy

from ...ir.levels import Level
from ...views import view as V
from ..memory import Buffer
from ..stmt import Barrier, Block, CoopCopy, Declare, If, Kernel, Loop, descend
from .copies import group_of, lower_copy, plan_copy

MAX_PREFETCH = 64  # floats of prefetched tiles per work-item


def _reads_inputs_only(copy: CoopCopy) -> bool:
    from ..stmt import reads

    path = tuple(sympy.Symbol(f"p_{k}") for k in range(len(copy.dims)))
    for r in reads(copy.source.access(path)):
        if isinstance(r, V.MemRead) and not (r.buffer.space == "global" and r.buffer.role == "input"):
            return False
    return True


def pipeline_copies(kernel: Kernel) -> Kernel:
    group = group_of(kernel)
    counter = itertools.count()
    done = []

    def eligible(loop: Loop) -> list | None:
        if loop.level is not Level.SEQ or loop.unroll or loop.extent < 2:
            return None
        items = loop.body.items
        copies = list(itertools.takewhile(lambda x: isinstance(x, CoopCopy), items))
        if not copies or len(items) <= len(copies) or not isinstance(items[len(copies)], Barrier):
            return None
        plans = [plan_copy(c, group) for c in copies]
        prefetched = sum(p.steps * p.width * c.width for c, p in zip(copies, plans))
        if prefetched > MAX_PREFETCH or not all(_reads_inputs_only(c) for c in copies):
            return None
        return list(zip(copies, plans))

    def pipelined(loop: Loop, found) -> list:
        kt = loop.var
        pre, stores, nxt = [], [], []
        for copy, plan in found:
            k = next(counter)
            n = plan.steps * plan.width * copy.width
            regs = Buffer(f"pf{k}", "private", copy.dest.scalar, n, sympy.Integer(n), "temporary", None)
            pre.append(Declare(regs))
            pre.extend(lower_copy(copy, plan, k, "load", regs, {kt: sympy.Integer(0)}))
            stores.extend(lower_copy(copy, plan, k, "store", regs))
            nxt.extend(lower_copy(copy, plan, k, "load", regs, {kt: kt + 1}))
        rest = loop.body.items[len(found):]
        body = tuple(stores) + (rest[0], If(sympy.Lt(kt, loop.extent - 1), Block(tuple(nxt)))) + tuple(rest[1:])
        done.append(loop.note)
        return pre + [dataclasses.replace(loop, body=Block(body))]

    def go(b: Block) -> Block:
        items = []
        for x in b.items:
            x = go(x) if isinstance(x, Block) else descend(x, go)
            found = eligible(x) if isinstance(x, Loop) else None
            items.extend(pipelined(x, found) if found else [x])
        return Block(tuple(items))

    body = go(kernel.body)
    notes = dict(kernel.notes)
    notes["copies"] = notes.get("copies", 0) + next(counter)
    if done:
        notes["pipelined"] = tuple(done)
    return kernel.replace(body=body, notes=notes)
