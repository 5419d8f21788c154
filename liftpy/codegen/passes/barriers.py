"""Barrier elimination: a barrier that separates only writes to local memory from more writes is dropped.

The emitter puts a barrier after every cooperative copy into local memory (so that no work-item reads a
tile before all have written it).  Two copies in a row (the A and B tiles of a matrix product) then get two
barriers, of which the first protects nothing: between it and the next barrier no work-item reads local
memory.  A barrier is kept whenever a local read lies between it and the next barrier of its block, or
when no further barrier follows in the block (the end of a loop body protects the next iteration)."""

from __future__ import annotations

from ... import arith as A
from ...views import view as V
from ..stmt import Barrier, Block, CoopCopy, Kernel, Store, descend, reads, walk


def _reads_local(s) -> bool:
    for x in walk(s):
        if isinstance(x, Store) and any(isinstance(r, V.MemRead) and r.buffer.space == "local" for r in reads(x.value)):
            return True
        if isinstance(x, CoopCopy):
            path = tuple(A.var(f"p_{k}") for k in range(len(x.dims)))
            if any(isinstance(r, V.MemRead) and r.buffer.space == "local" for r in reads(x.source.access(path))):
                return True
    return False


def _go(b: Block) -> Block:
    items = [descend(x, _go) if not isinstance(x, Block) else _go(x) for x in b.items]
    out = []
    for i, x in enumerate(items):
        if isinstance(x, Barrier):
            nxt = next((j for j in range(i + 1, len(items)) if isinstance(items[j], Barrier)), None)
            if nxt is not None and not any(_reads_local(items[j]) for j in range(i + 1, nxt)):
                continue
        out.append(x)
    return Block(tuple(out))


def merge_barriers(kernel: Kernel) -> Kernel:
    return kernel.replace(body=_go(kernel.body))
