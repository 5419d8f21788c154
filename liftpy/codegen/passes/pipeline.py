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

Tiles staged with ``toLocalDouble`` are also double-buffered here (their buffers were allocated twice
over): step ``k`` stores into half ``k % 2`` and computes from it, so the barrier that kept the next
step's stores from overwriting a tile still being read is dropped (one barrier per step instead of two,
as in the hand-written SGEMM).  A work-item can only reach the stores of step ``k + 2``, which reuse the
half of step ``k``, after every work-item has passed the barrier of step ``k + 1``, hence finished
computing step ``k``.  One barrier after the loop protects whatever follows it.  Whether that pays is a
variant's choice (the ``doubleBuffer`` rule): on the H100 it took 16% off a split-K convolution layer
and added 4-7% to two kernels with long k loops.
"""

from __future__ import annotations

import dataclasses
import itertools

import sympy

from ... import arith as A
from ...ir.levels import Level
from ...views import view as V
from ..memory import Buffer
from ..stmt import Barrier, Block, CoopCopy, Declare, If, Kernel, Loop, Store, descend, map_stmts, reads
from .copies import element_path, group_of, lower_copy, plan_copy, source_read

MAX_PREFETCH = 64  # floats of prefetched tiles per work-item


def _reads_inputs_only(copy: CoopCopy) -> bool:
    # The element at the path the copy's plan has read already (which buffers an element reads does not
    # depend on the names of the path's symbols).
    for r in reads(source_read(copy, element_path(copy))):
        if isinstance(r, V.MemRead) and not (r.buffer.space == "global" and r.buffer.role == "input"):
            return False
    return True


def _shifted(s, buffer: Buffer, offset):
    """``s`` with every access to ``buffer`` made ``offset`` elements further."""
    def read(x):
        return dataclasses.replace(x, index=x.index + offset) if isinstance(x, V.MemRead) and x.buffer == buffer else x

    def store(x, _ranges):
        if not isinstance(x, Store):
            return x
        if x.buffer == buffer:
            x = dataclasses.replace(x, index=x.index + offset)
        return dataclasses.replace(x, value=V.transform(x.value, read))

    return map_stmts(s, store)


def _is_double(copy: CoopCopy) -> bool:
    n = copy.width
    for d in copy.dims:
        n *= d
    return copy.dest.count == 2 * n


def _double_buffered(loop: Loop, dests: list, body: tuple) -> list:
    """The loop with its copies' destinations alternating halves, its closing barrier moved after it."""
    half = A.mod(loop.var, 2)
    for d in dests:
        body = tuple(_shifted(x, d, half * (d.count // 2)) for x in body)
    if isinstance(body[-1], Barrier):
        body = body[:-1]
    return [dataclasses.replace(loop, body=Block(body)), Barrier()]


def pipeline_copies(kernel: Kernel) -> Kernel:
    group = group_of(kernel)
    counter = itertools.count()
    done, doubled = [], []

    def leading_copies(loop: Loop) -> list | None:
        if loop.level is not Level.SEQ or loop.unroll or loop.extent < 2:
            return None
        items = loop.body.items
        copies = list(itertools.takewhile(lambda x: isinstance(x, CoopCopy), items))
        if not copies or len(items) <= len(copies) or not isinstance(items[len(copies)], Barrier):
            return None
        return copies

    def prefetchable(copies: list) -> list | None:
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
            pre.extend(lower_copy(copy, plan, k, "load", regs, {kt: A.ZERO}))
            stores.extend(lower_copy(copy, plan, k, "store", regs))
            nxt.extend(lower_copy(copy, plan, k, "load", regs, {kt: kt + 1}))
        rest = loop.body.items[len(found):]
        body = tuple(stores) + (rest[0], If(A.rel("<", kt, loop.extent - 1), Block(tuple(nxt)))) + tuple(rest[1:])
        done.append(loop.note)
        return pre, body

    def rewritten(loop: Loop, copies: list) -> list:
        found = prefetchable(copies)
        if found:
            pre, body = pipelined(loop, found)
        else:
            pre, body = [], loop.body.items
        double = [c.dest for c in copies if _is_double(c)]
        if not double:
            return pre + [dataclasses.replace(loop, body=Block(body))] if found else [loop]
        if not found:  # the copies lowered here, so that their stores can be moved to the half of a step
            lowered = []
            for c in copies:
                lowered.extend(lower_copy(c, plan_copy(c, group), next(counter)))
            body = tuple(lowered) + tuple(body[len(copies):])
        doubled.extend(d.name for d in double)
        return pre + _double_buffered(loop, double, body)

    def go(b: Block) -> Block:
        items = []
        for x in b.items:
            x = go(x) if isinstance(x, Block) else descend(x, go)
            copies = leading_copies(x) if isinstance(x, Loop) else None
            items.extend(rewritten(x, copies) if copies else [x])
        return Block(tuple(items))

    body = go(kernel.body)
    del go  # (a recursive closure is a reference cycle)
    notes = dict(kernel.notes)
    notes["copies"] = notes.get("copies", 0) + next(counter)
    if done:
        notes["pipelined"] = tuple(done)
    if doubled:
        notes["double_buffered"] = tuple(doubled)
    return kernel.replace(body=body, notes=notes)
