"""Two stages of a pipeline in one kernel: the second runs in the first's last work-group to finish
(``toGlobalLast``, which the rule ``fuseLastGroup`` writes).

Every work-group of the first stage writes its part of the buffer between the stages; then its first item
makes the group's stores visible to the whole device (``mem_fence``) and takes a ticket from a counter in
global memory (``atomic_inc``).  The group that takes the last ticket knows every other group's stores are
visible, and runs the second stage: on its first item alone where that stage is one work-item's code, on
every item where it is one work-group's (its group loop, of one group, becomes a loop of one step).  It
then sets the counter back to zero, so the next launch counts from zero; the host zeroes it once
(``KernelSource.scratch``).  This is the single-pass reduction of CUDA's threadFenceReduction sample, in
OpenCL 1.2's terms (no OpenCL 2.0 atomics, which NVIDIA's driver lacks).

The launch saved matters on a GPU: NVIDIA's driver times any kernel at 5 us or more, the sum of a few
hundred partial results included, against 40 us for reading 2^26 halves.
"""

from __future__ import annotations

import dataclasses

import sympy

from ..errors import CodegenError
from ..ir.levels import Level
from ..ir.types import Int
from ..views import reads as R
from .memory import Buffer
from .stmt import (Block, CoopCopy, Kernel, LastGroup, Loop, Store, buffers_used, descend, map_stmts, parallel_loops, walk,
                   with_body)

TICKET = "ticket"
FLAG = "last_group"


def fused(first, rest, between: str, name: str) -> Kernel:
    """The statement IR of a kernel that runs the lowered kernel ``first`` and then, in its last work-group,
    ``rest`` (``codegen.kernel.LoweredKernel``s); ``between``: the buffer ``first`` writes and ``rest`` reads."""
    a, b = first.ir, rest.ir
    if tuple(rest.input_names) != (between,):
        raise CodegenError(f"{b.name} runs in the last work-group of {a.name}, so it may read only {between}, "
                           f"not {', '.join(n for n in rest.input_names if n != between)}")
    if any(loop.dim != 0 for loop in parallel_loops(a.body)):
        raise CodegenError(f"{a.name}'s work-groups are counted in one dimension to find the last; it maps dimension "
                           f"{max(loop.dim for loop in parallel_loops(a.body))}")
    loops = list(parallel_loops(b.body))
    if any(loop.dim != 0 or loop.level is Level.GLB or (loop.level is Level.WRG and loop.extent != 1) for loop in loops):
        raise CodegenError(f"{b.name} runs in one work-group of {a.name}: its work must be one group's or one item's")
    written = next(x for x in a.params if x.role == "output")
    read = next(x for x in b.params if x.role == "input")
    shared = dataclasses.replace(written, name=read.name, role="scratch")
    taken = {x.name for x in a.params + a.locals} | {TICKET, FLAG}
    renamed = {read: shared}
    for x in b.locals:  # (the second stage's tree, apart from the first's)
        renamed[x] = dataclasses.replace(x, name=_fresh(x.name, taken))
    ticket = Buffer(TICKET, "global", Int, 1, sympy.Integer(1), "scratch", Int)
    flag = Buffer(FLAG, "local", Int, 1, sympy.Integer(1), "temporary", Int)
    then = _one_group(_rebuffered(b.body, renamed))
    body = Block(_rebuffered(a.body, {written: shared}).items + (LastGroup(ticket, flag, then, every_item=bool(loops)),))
    inputs = tuple(x for x in a.params if x.role == "input")
    output = next(x for x in b.params if x.role == "output")
    functions = tuple(dict(a.functions + b.functions).items())
    return Kernel(name, inputs + (shared, ticket, output), a.locals + tuple(renamed[x] for x in b.locals) + (flag,), body,
                  functions, notes={**a.notes, "last_group": b.name})


def _fresh(name: str, taken: set) -> str:
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    taken.add(f"{name}_{k}")
    return f"{name}_{k}"


def _rebuffered(block: Block, mapping: dict) -> Block:
    """``block`` with the buffers of ``mapping`` replaced, where stored and where read."""
    def read(r):
        return R.MemRead(mapping[r.buffer], r.index, r.width, r.aligned) if isinstance(r, R.MemRead) and r.buffer in mapping else r

    def one(s, _):
        if isinstance(s, Store):
            return Store(mapping.get(s.buffer, s.buffer), s.index, R.transform(s.value, read), s.width, s.aligned)
        return s

    out = map_stmts(block, one)
    if buffers_used(out) & set(mapping) or any(isinstance(x, CoopCopy) for x in walk(out)):
        # (a statement kind that holds a buffer and is not rebuilt above: copies are lowered by then)
        raise CodegenError("internal: a buffer of the stage run in the last work-group was not renamed")
    return out


def _one_group(block: Block) -> Block:
    """The second stage's loop over its one work-group as a loop of one step: the last group of the first
    stage runs it, whatever its group id."""
    def go(s):
        if isinstance(s, Block):
            return Block(tuple(go(x) for x in s.items))
        if isinstance(s, Loop):
            s = with_body(s, go(s.body))
            return dataclasses.replace(s, level=Level.SEQ, dim=0) if s.level is Level.WRG else s
        return descend(s, go)

    return go(block)
