"""Privatization: a private array declared for a whole work-group shrinks to the part one work-item uses.

A reduction computed by a work-group (a ``reduceSeq`` at work-group level whose body is a ``mapLcl``
nest: the K loop of a tiled matrix product) keeps its accumulator in private memory, declared once for
the group, but each work-item only ever touches the block its ``mapLcl`` indices select: element
``l1*S1 + l0*S0 + r`` with ``r`` independent of the local ids.  When every access has that form with the
same strides, and every ``mapLcl`` loop involved runs exactly once per work-item (its extent is the
work-group size in its dimension), the array becomes ``[max r + 1]`` per work-item and is indexed by ``r``.
Otherwise it is left whole: each work-item then holds a full copy of which it uses a part, which is correct
and only wasteful.  The pass needs the launch (``Kernel.notes["sizes"]``), so it runs after it is decided.
"""

from __future__ import annotations

import dataclasses


from ...ir.levels import Level
from ...views import view as V
from ...arith import bounds, linear_in
from ..memo import Memo
from ..memory import Buffer
from ..stmt import CONTAINERS, Block, Declare, Kernel, Loop, Store, bind_index, body_ranges, descend, reads, walk


def _accesses(s, enclosing, ranges, out):
    """(buffer, index, width, enclosing lcl loops, ranges) of every access to a private array."""
    if isinstance(s, CONTAINERS):
        enc = enclosing + ((s,) if isinstance(s, Loop) and s.level is Level.LCL else ())
        _accesses(s.body, enc, body_ranges(s, ranges), out)
        return
    if isinstance(s, Block):
        local = dict(ranges)
        for x in s.items:
            _accesses(x, enclosing, local, out)
            bind_index(local, x)
        return
    if isinstance(s, Store):
        if s.buffer.space == "private":
            out.append((s.buffer, s.index, s.width, enclosing, ranges))
        for r in reads(s.value):
            if isinstance(r, V.MemRead) and r.buffer.space == "private":
                out.append((r.buffer, r.index, r.width, enclosing, ranges))


_SPLITS = Memo()


def _split(index, loops):
    """``{dim: coefficient}`` of the local ids in ``index`` and the rest, or None if ``index`` is not
    linear in them with constant coefficients (memoised: a body reads and writes each element of an
    accumulator several times; the result is only read)."""
    key = (index, tuple((lp.var, lp.dim, lp.extent) for lp in loops))
    hit = _SPLITS.table.get(key)
    return hit[0] if hit is not None else _SPLITS.get(key, lambda: (_split_of(index, loops),))[0]


def _split_of(index, loops):
    e = index
    coeffs = {}
    for lp in loops:
        # A local id under a division, a modulus or a product with another symbol is no block of
        # the array's: None, as for a coefficient that is not an integer.
        found = linear_in(e, lp.var)
        if found is None:
            return None
        rest, c = found
        if c:
            coeffs[lp.dim] = (c, lp.extent)
            e = rest
    return coeffs, e


def privatize(kernel: Kernel) -> Kernel:
    sizes = kernel.notes.get("sizes", {})
    found: list = []
    _accesses(kernel.body, (), {}, found)
    declared = {x.buffer for x in walk(kernel.body) if isinstance(x, Declare)}
    by_buffer: dict = {}
    for buf, index, width, loops, ranges in found:
        by_buffer.setdefault(buf, []).append((index, width, loops, ranges))
    replace: dict[Buffer, tuple[Buffer, dict]] = {}
    for buf, accs in by_buffer.items():
        if buf not in declared or buf.count == 1:
            continue
        signature = None
        top = 0
        ok = True
        rests = {}
        for index, width, loops, ranges in accs:
            parts = _split(index, loops) if loops else None
            if parts is None or not parts[0]:
                ok = False
                break
            coeffs, rest = parts
            if signature is None:
                signature = coeffs
            elif coeffs != signature:
                ok = False
                break
            if any(sizes.get(("lcl", d)) != extent for d, (_, extent) in coeffs.items()):
                ok = False
                break
            b = bounds(rest, ranges)
            if b is None or b[0] < 0:
                ok = False
                break
            top = max(top, b[1] + width)
            rests[index] = rest
        if ok and signature and top < buf.count:
            new = dataclasses.replace(buf, count=top)
            replace[buf] = (new, rests)
    if not replace:
        return kernel

    def fix_index(buf, index):
        if buf not in replace:
            return buf, index
        new, rests = replace[buf]
        return new, rests[index]

    def fix_one(r):
        if isinstance(r, V.MemRead) and r.buffer in replace:
            b, i = fix_index(r.buffer, r.index)
            return V.MemRead(b, i, r.width, r.aligned)
        return r

    def fix_read(r):
        return V.transform(r, fix_one)

    def go(s):
        if isinstance(s, Block):
            return Block(tuple(go(x) for x in s.items))
        if isinstance(s, Declare) and s.buffer in replace:
            return Declare(replace[s.buffer][0])
        if isinstance(s, Store):
            b, i = fix_index(s.buffer, s.index)
            return Store(b, i, fix_read(s.value), s.width, s.aligned)
        return descend(s, go)

    notes = dict(kernel.notes)
    notes["privatized"] = tuple(f"{old.name}: {old.count} -> {new.count}" for old, (new, _) in replace.items())
    body = go(kernel.body)
    del go  # (a recursive closure is a reference cycle)
    return kernel.replace(body=body, notes=notes)

