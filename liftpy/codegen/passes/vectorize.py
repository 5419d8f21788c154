"""Vectorization of memory accesses.

- A vector assembled lane by lane (``asVector`` over scalars) whose lanes are contiguous scalars of one
  buffer becomes one vector load; equal constants become a vector constant; four lanes of one texel the
  texel itself.
- A run of scalar stores to consecutive addresses of a global or local buffer (what unrolled copies and
  unrolled register blocks produce) becomes one vector store of the values.
- Scalar reads of one global or local buffer at four consecutive addresses starting at a multiple of four,
  in one straight-line block that does not write that buffer (an unrolled step of a register block reads
  ``b[k][j..j+3]``), become one aligned vector load into a private temporary whose lanes they then read;
  only reads made unconditionally (a read a padding condition guards may lie outside the buffer).  From
  half storage eight: one sixteen-byte word (``codegen.half``), which NVIDIA's driver reads twice as fast
  as four halves.
- A vector access whose index is provably a multiple of its width is marked aligned: the printer then
  dereferences a vector pointer, which NVIDIA's compiler turns into one 128-bit access where ``vload4``
  stays four scalar ones (1.6x on SGEMM, ``shared/research/h100-anchors.md``).  Global buffers are
  aligned by the OpenCL allocator, local arrays by their declaration; private arrays are left alone
  (they live in registers).
"""

from __future__ import annotations

import dataclasses

import sympy

from ... import arith as A
from ...views import view as V
from ..memo import Memo
from ..memory import Buffer
from ..stmt import Block, Declare, Kernel, Store, descend, flatten, reads, store_with
import itertools

# Widths of the vector stores runs of scalar stores become.  Not 16: no GPU stores more than 128 bits per
# work-item at once, and PoCL 3.0 on a CPU without AVX-512 builds a kernel with a float16 store into a
# program that lacks the kernel (clCreateKernel: INVALID_KERNEL_NAME).
WIDTHS = (8, 4, 2)


def merge_lanes(lanes: list) -> V.Read | None:
    """One vector read for n scalar reads when they are contiguous memory, one texel, equal constants,
    or the same condition over mergeable branches; None otherwise."""
    n, first = len(lanes), lanes[0]
    if all(isinstance(l, V.MemRead) and l.width == 1 and l.buffer == first.buffer for l in lanes):
        if first.buffer.space != "private" or first.buffer.count > 1:
            if all(l.index - first.index == t for t, l in enumerate(lanes)):
                return V.MemRead(first.buffer, first.index, n)
        return None
    if all(isinstance(l, V.ConstRead) and l.width == 1 and l.value == first.value for l in lanes):
        return V.ConstRead(first.value, first.scalar, n)
    if all(isinstance(l, V.CondRead) and l.cond == first.cond for l in lanes):
        then = merge_lanes([l.then for l in lanes])
        other = merge_lanes([l.other for l in lanes])
        if then is not None and other is not None:
            return V.CondRead(first.cond, then, other, all(l.same for l in lanes))
        return None
    if n == 4 and all(
        isinstance(l, V.ImageRead) and l.image == first.image and l.x == first.x and l.y == first.y and l.lane == t
        for t, l in enumerate(lanes)
    ):
        return V.ImageRead(first.image, first.x, first.y, None)
    return None


# The answers of ``is_multiple`` and ``_split_lane`` for the indices of one generation (emptied with the
# passes' memos, ``codegen.memo.clear_memos``).  Tables kept across generations (``lru_cache``) found the
# indices of earlier kernels equal to new ones, objects apart, and compared them term by term.
_MULTIPLES, _LANES = Memo(), Memo()


def is_multiple(index, width: int) -> bool:
    """Whether an index expression is a multiple of ``width`` for every value of its variables (and a
    vector of that width may be accessed through a vector pointer there: 3-vectors occupy four
    elements in OpenCL, so they are always loaded with ``vload3``)."""
    key = (index, width)
    hit = _MULTIPLES.table.get(key)
    return hit if hit is not None else _MULTIPLES.get(key, lambda: _is_multiple(index, width))


def _is_multiple(index, width: int) -> bool:
    if width not in (2, 4, 8, 16):
        return False
    for term in A.terms_of(A.as_expr(index)):
        c = term.value if term.is_const else A.coeff_and_rest(term)[0]
        if not isinstance(c, int) or c % width:
            return False
    return True


def _alignable(buffer) -> bool:
    return buffer.space in ("global", "local")


def vectorize_read(r: V.Read) -> V.Read:
    return V.transform(r, _vectorize_one)


# A module-level function, not a closure that calls itself: such a closure is a reference cycle, garbage
# the cyclic collector has to find, one per value vectorized (a third of what it collected after code
# generation, with the reads the cycles kept alive).
def _vectorize_one(x: V.Read) -> V.Read:
    if isinstance(x, V.VecRead):
        merged = merge_lanes(list(x.lanes))
        return x if merged is None else V.transform(merged, _vectorize_one)
    if isinstance(x, V.MemRead) and x.width > 1 and not x.aligned and _alignable(x.buffer) and is_multiple(x.index, x.width):
        return dataclasses.replace(x, aligned=True)
    return x


def _reads_buffer(r: V.Read, buffer) -> bool:
    return any(isinstance(x, V.MemRead) and x.buffer == buffer for x in reads(r))


def _group_stores(items: tuple) -> tuple:
    """Runs of scalar stores to consecutive addresses become vector stores."""
    out = []
    i = 0
    while i < len(items):
        s = items[i]
        if isinstance(s, Store) and s.width == 1 and _alignable(s.buffer) and s.buffer.scalar.name == "float":
            base, first = A.without_constant(A.as_expr(s.index))
            for w in WIDTHS:
                run = items[i : i + w]
                if len(run) < w or not all(isinstance(x, Store) and x.width == 1 and (x.buffer is s.buffer or x.buffer == s.buffer)
                                           for x in run):
                    continue
                if not all(_offset(x.index, base, first) == t for t, x in enumerate(run)):
                    continue
                if any(_reads_buffer(x.value, s.buffer) for x in run):
                    continue
                values = [x.value for x in run]
                merged = merge_lanes(values)
                value = merged if merged is not None else V.VecRead(tuple(values), s.buffer.scalar)
                out.append(Store(s.buffer, s.index, vectorize_read(value), w, is_multiple(s.index, w)))
                i += w
                break
            else:
                out.append(s)
                i += 1
            continue
        out.append(s)
        i += 1
    return tuple(out)


def _offset(index, base, first):
    """``index - (base + first)`` where it is a number, else None: two canonical sums differ by a number
    exactly when all but their constants are one node (not the difference built, for every store of a block)."""
    rest, c = A.without_constant(A.as_expr(index))
    return c - first if rest is base else None


def _split_lane(index, width: int):
    """``(base, lane)`` with ``index = base + lane``, base a provable multiple of ``width``, or None."""
    key = (index, width)
    hit = _LANES.table.get(key)
    return (hit if hit is not None else _LANES.get(key, lambda: (_lane_split(index, width),)))[0]


def _lane_split(index, width: int):
    rest, c = A.without_constant(A.as_expr(index))
    if not isinstance(c, int) or (not is_multiple(rest, width) and rest is not A.ZERO):
        return None
    k = c - c % width
    return A.plus(rest, k), c % width


def _load_widths(buf) -> tuple[int, ...]:
    """How many lanes of ``buf`` one load may take, widest first: four floats; eight halves (a sixteen-byte
    word), or four where eight are not provably aligned or the buffer is no multiple of eight long."""
    widths = (8, 4) if buf.stored == "half" else (4,)
    return tuple(w for w in widths if not buf.count % w)


def _lane_of(r: V.MemRead):
    """``(base, lane, width)`` of the load a scalar read of a loadable buffer belongs to, or None."""
    for w in _load_widths(r.buffer):
        split = _split_lane(r.index, w)
        if split is not None:
            return split[0], split[1], w
    return None


def _unguarded(r: V.Read):
    """The reads of a value that are made whatever its conditions say: not those in the branches of a
    ``CondRead`` (a padded view reads the buffer only where the index is inside it; loading the four
    addresses anyway would read before or after the buffer)."""
    yield r
    for k in (() if isinstance(r, V.CondRead) else r.children()):
        yield from _unguarded(k)


def _combine_loads(items: tuple, counter) -> tuple:
    """Groups of scalar reads of four (of halves eight) consecutive, aligned addresses become one vector load."""
    written = {id(x.buffer) for x in items if isinstance(x, Store)}
    # Whether the lanes of each buffer read may be loaded together, decided once per buffer (by its
    # identity: a buffer's hash is a Python call, and a block reads its few buffers thousands of times).
    loadable: dict = {}
    groups: dict = {}
    first_use: dict = {}
    for pos, x in enumerate(items):
        if not isinstance(x, Store):
            continue
        for r in _unguarded(x.value):
            if not (isinstance(r, V.MemRead) and r.width == 1):
                continue
            buf = r.buffer
            ok = loadable.get(id(buf))
            if ok is None:
                ok = loadable[id(buf)] = (_alignable(buf) and id(buf) not in written and bool(_load_widths(buf))
                                          and buf.scalar.name == "float")
            if not ok:
                continue
            lane = _lane_of(r)
            if lane is None:
                continue
            key = (r.buffer, lane[0], lane[2])
            groups.setdefault(key, set()).add(lane[1])
            first_use.setdefault(key, pos)
    chosen = {key: None for key, lanes in groups.items() if len(lanes) >= 2}
    if not chosen:
        return items
    loads_at: dict = {}
    for key in chosen:
        buf, base, w = key
        k = next(counter)
        tmp = Buffer(f"v{k}", "private", buf.scalar, w, sympy.Integer(w), "temporary", None)
        chosen[key] = tmp
        load = Store(tmp, A.ZERO, V.MemRead(buf, base, w, True), w)
        loads_at.setdefault(first_use[key], []).extend([Declare(tmp), load])

    loaded = {id(buf) for buf, _, _ in chosen}

    def swap_one(r):
        # The buffer first: most scalar reads of a block (accumulators, private temporaries) are of
        # buffers none of whose lanes is loaded, and need not have their index split.
        if isinstance(r, V.MemRead) and r.width == 1 and id(r.buffer) in loaded:
            lane = _lane_of(r)
            if lane is not None and (r.buffer, lane[0], lane[2]) in chosen:
                return V.MemRead(chosen[(r.buffer, lane[0], lane[2])], A.const(lane[1]), 1)
        return r

    def swap(r):
        return V.transform(r, swap_one)

    out = []
    for pos, x in enumerate(items):
        out.extend(loads_at.get(pos, ()))
        out.append(store_with(x, x.index, swap(x.value)) if isinstance(x, Store) else x)
    return tuple(out)


def _go(s, counter):
    if isinstance(s, Block):
        items = tuple(_go(x, counter) for x in flatten(s.items))
        return Block(_combine_loads(_group_stores(items), counter))
    if isinstance(s, Store):
        value = vectorize_read(s.value)
        aligned = s.aligned or (s.width > 1 and _alignable(s.buffer) and is_multiple(s.index, s.width))
        if aligned == s.aligned:
            return store_with(s, s.index, value)
        return Store(s.buffer, s.index, value, s.width, aligned)
    return descend(s, lambda b: _go(b, counter))


def vectorize(kernel: Kernel) -> Kernel:
    return kernel.replace(body=_go(kernel.body, itertools.count()))
