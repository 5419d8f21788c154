"""Cooperative copies: how the work-items of a group share a copy into local memory.

The emitter leaves ``toLocal(x)`` of a view ``x`` at work-group level as one ``CoopCopy`` statement: what
to copy, not how.  Once the work-group size G is known, this pass decides:

- the order: the elements are enumerated with the dimension along which the source is contiguous in
  global memory fastest (found by taking the difference of the source's index between neighbouring
  elements of each dimension), so neighbouring work-items read neighbouring addresses (coalescing);
- the vector width: four elements at a time when the fastest dimension's length is a multiple of four and
  the four are contiguous in the source (one 128-bit load each);
- the share of each work-item: element ``s*G + lid`` for s = 0, 1, ..., with ``lid`` the flattened local id,
  so a whole group reads one contiguous stretch per step; a guard only when G does not divide the count.

The destination keeps its row-major layout whatever the order; four elements read together are stored
together when they are contiguous in the destination too, else lane by lane from a private temporary.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import sympy

from ... import arith as A
from ...arith import affine, row_major, simplify as simplify_index, substitute
from ...errors import CodegenError
from ...ir.levels import Level
from ...ir.types import VectorType
from ...views import view as V
from ..memo import Memo
from ..memory import Buffer
from ..stmt import Block, CoopCopy, Declare, If, Kernel, Loop, Store, descend, map_read

UNROLL_COPY_STEPS = 16

# Whether a copy's steps (at most UNROLL_COPY_STEPS, and every pipelined copy's) stay a loop marked
# ``#pragma unroll`` for the OpenCL compiler to unroll, instead of being unrolled here.  Off: on the H100
# the compiler's unrolling made the fastest points of the nine VGG-16 layers 0.88-1.06x as fast (VGG-16
# layer 2 0.88x, layer 24 0.95x; geomean 0.98x with two SGEMM points), while it took a fifth off code
# generation on this project's 2-core machine and nothing measurable on the H100's host
# (``benchmarks/results/h100-copy-unroll.json``; now ``benchmarks/unroll_policy.py --ways none none/copies``).
COMPILER_UNROLLS_COPIES = False


def _mem_index(r: V.Read):
    """The index of the memory read under a (padding) condition, or None."""
    while isinstance(r, V.CondRead):
        r = r.then
    return r.index if isinstance(r, V.MemRead) else None


# The reads of a copy's source at the paths the plan and the lowering ask for, for one generation (the
# memos are emptied with it).  Each access walks the source's views, building its indices, and the same paths come back: the element at the symbolic
# path and its neighbour along the fastest dimension for the order and for the vector width, the same
# tile's loads for step 0 and for the next step when the copy is pipelined.  Keyed by the source's
# identity (views are hashed through their whole chain), which the entry keeps alive.
_READS = Memo(10_000)


def source_read(copy: CoopCopy, path: tuple) -> V.Read:
    """``copy.source.access(path)``, memoised."""
    key = (id(copy.source), path)
    hit = _READS.table.get(key)
    if hit is None or hit[0] is not copy.source:
        hit = _READS.table[key] = (copy.source, copy.source.access(path))
        if len(_READS.table) > _READS.limit:
            _READS.table.clear()
    return hit[1]


def element_path(copy: CoopCopy) -> tuple:
    """The symbolic path of an element of the copied array: ``c_0, c_1, ...``."""
    return tuple(A.var(f"c_{k}") for k in range(len(copy.dims)))


def _contiguous_dim(copy: CoopCopy) -> int:
    """The dimension along which the source is contiguous (stride 1), the innermost one when none is."""
    n = len(copy.dims)
    syms = element_path(copy)
    ranges = {s: (0, max(d - 2, 0)) for s, d in zip(syms, copy.dims)}
    base = _mem_index(source_read(copy, syms))
    if base is None or copy.width != 1:
        return n - 1
    for k in reversed(range(n)):
        if copy.dims[k] < 2:
            continue
        moved = list(syms)
        moved[k] = A.plus(syms[k], 1)
        nxt = _mem_index(source_read(copy, tuple(moved)))
        if nxt is not None and simplify_index(nxt - base, ranges) == 1:
            return k
    return n - 1


@dataclass(frozen=True)
class CopyPlan:
    """How the work-items of a group share one copy."""

    fast: int  # the dimension enumerated fastest (contiguous in the source)
    order: tuple[int, ...]  # enumeration order of the dimensions, fastest last
    width: int  # elements moved together (a vector load when 4)
    units: tuple[int, ...]  # lengths in enumeration order, the fastest counted in vectors
    total: int  # vectors (or elements) to move
    group: tuple[int, ...]  # the work-group size per dimension
    steps: int  # vectors each work-item moves

    @property
    def group_size(self) -> int:
        size = 1
        for g in self.group:
            size *= g
        return size


@lru_cache(maxsize=256)  # the pipelining pass and the lowering ask for the plan of the same copy
def plan_copy(copy: CoopCopy, group: tuple[int, ...]) -> CopyPlan:
    dims = copy.dims
    n = len(dims)
    fast = _contiguous_dim(copy)
    order = tuple([k for k in range(n) if k != fast] + [fast])
    width = 4 if copy.width == 1 and dims[fast] % 4 == 0 and copy.dest.scalar.name == "float" else 1
    if width > 1:
        # Four elements along the fastest dimension at a time, only if the source holds them contiguously.
        syms = element_path(copy)
        ranges = {s: (0, max(d - 1, 0)) for s, d in zip(syms, dims)}
        base = _mem_index(source_read(copy, syms))
        for t in range(1, 4):
            moved = list(syms)
            moved[fast] = A.plus(syms[fast], t)
            nxt = _mem_index(source_read(copy, tuple(moved)))
            if base is None or nxt is None or simplify_index(nxt - base, ranges) != t:
                width = 1
                break
    units = tuple(dims[k] // width if k == fast else dims[k] for k in order)
    total = 1
    for u in units:
        total *= u
    size = 1
    for g in group:
        size *= g
    return CopyPlan(fast, order, width, units, total, tuple(group), -(-total // size))


def lower_copy(copy: CoopCopy, plan: CopyPlan, k: int, phase: str = "copy", regs: Buffer | None = None,
               shift: dict | None = None) -> list:
    """The loops of one copy.  ``phase`` 'copy' moves source to destination; 'load' only reads the source
    into the private array ``regs`` (software pipelining: the next tile's loads, issued early); 'store'
    writes ``regs`` to the destination.  ``shift`` substitutes loop variables in the source (``{k: k + 1}``
    reads the next step's tile)."""
    dims, n, fast, width = copy.dims, len(copy.dims), plan.fast, plan.width
    lids = [A.var(f"lc{k}_{d}") for d in range(len(plan.group))]
    flat_id = row_major(tuple(reversed(lids)), tuple(reversed(plan.group)))
    s = A.var(f"s{k}")
    f = affine(s, plan.group_size, flat_id)
    idx = {}
    rest = f
    for pos in reversed(range(n)):
        dim = plan.order[pos]
        u = plan.units[pos]
        idx[dim] = A.mod(rest, u) if pos > 0 else rest
        rest = A.floordiv(rest, u)
    if width > 1:
        idx[fast] = idx[fast] * width

    def dest_index(path):
        return row_major(path, dims, copy.width)

    def source(path):
        r = source_read(copy, tuple(path))
        return map_read(r, lambda e: substitute(e, shift)) if shift else r

    path = tuple(idx[d] for d in range(n))
    lane_paths = []
    for t in range(width):
        p = list(path)
        p[fast] = A.plus(path[fast], t)
        lane_paths.append(tuple(p))
    scalar = copy.dest.scalar
    vwidth = width * copy.width  # scalars per moved unit
    body: list = []
    if phase == "load":
        value = source(path) if width == 1 else V.VecRead(tuple(source(p) for p in lane_paths), scalar)
        body.append(Store(regs, s * vwidth, value, vwidth))
    else:
        if phase == "store":
            def lane(t):
                return V.MemRead(regs, s * vwidth + t * copy.width, copy.width)
        else:
            def lane(t):
                return source(lane_paths[t])
        if width == 1:
            body.append(Store(copy.dest, dest_index(path), lane(0), copy.width))
        elif fast == n - 1:
            value = V.MemRead(regs, s * vwidth, vwidth) if phase == "store" else V.VecRead(tuple(lane(t) for t in range(width)), scalar)
            body.append(Store(copy.dest, dest_index(path), value, width))
        else:
            src = lane
            if phase == "copy":
                tmp = Buffer(f"cp{k}", "private", scalar, width, sympy.Integer(width), "temporary", VectorType(scalar, width))
                body.append(Declare(tmp))
                body.append(Store(tmp, A.ZERO, V.VecRead(tuple(lane(t) for t in range(width)), scalar), width))
                src = lambda t: V.MemRead(tmp, A.const(t), 1)  # noqa: E731
            for t in range(width):
                body.append(Store(copy.dest, dest_index(lane_paths[t]), src(t)))
    inner: object = Block(tuple(body))
    if plan.total % plan.group_size:
        inner = Block((If(A.rel("<", f, plan.total), inner),))
    unrolled = phase != "copy" or plan.steps <= UNROLL_COPY_STEPS
    loop: object = Loop(s, plan.steps, Level.SEQ, 0, inner, unroll=unrolled and not COMPILER_UNROLLS_COPIES,
                        note=f"cooperative copy ({phase})" if phase != "copy" else "cooperative copy",
                        compiler_unroll=unrolled and COMPILER_UNROLLS_COPIES)
    for d in reversed(range(len(plan.group))):
        loop = Loop(lids[d], plan.group[d], Level.LCL, d, Block((loop,)), note=f"work-items of the copy ({d})")
    return [loop]


def group_of(kernel: Kernel) -> tuple[int, ...]:
    sizes = kernel.notes.get("sizes", {})
    ndim = max([d for (lvl, d) in sizes if lvl == "lcl"], default=-1) + 1
    return tuple(sizes.get(("lcl", d), 1) for d in range(ndim)) or (1,)


def lower_copies(kernel: Kernel) -> Kernel:
    group = group_of(kernel)
    counter = itertools.count(kernel.notes.get("copies", 0))

    def go(b: Block) -> Block:
        items = []
        for x in b.items:
            if isinstance(x, CoopCopy):
                if x.dest.space != "local":
                    raise CodegenError(f"internal: cooperative copy into {x.dest.space} memory")
                items.extend(lower_copy(x, plan_copy(x, group), next(counter)))
            elif isinstance(x, Block):
                items.append(go(x))
            else:
                items.append(descend(x, go))
        return Block(tuple(items))

    body = go(kernel.body)
    del go  # (a recursive closure is a reference cycle)
    return kernel.replace(body=body)
