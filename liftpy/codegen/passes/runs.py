"""One guard for a run of guarded stores: the interior of a row's run takes every plain branch at once.

``guards`` gives each stored value of a stencil its own guard, ``interior ? plain : clamped``; after
unrolling, a work-item's run of a row (``splitRuns``) is a run of such stores, each guard a little
different (the run's first output needs the column before it, its last the one after).  The reads of the
plain branches of neighbouring outputs lie side by side, but the vectorization loads together only reads
made whatever a condition says (a read of a branch may lie outside the buffer where its guard is false).
Here a run of two or more stores to consecutive addresses of one global buffer (a row's outputs, which
the vectorization stores as one vector), each storing a conditional value, becomes

    if (c0 && c1 && ...) { the stores of the first branches }
    if (!(c0 && c1 && ...)) { the stores as they were }

so the first block reads plainly and its reads and stores become vectors, and the border's runs keep each
store's own choice.  The conditions are of indices only, so evaluating them again costs no memory access.

Where the guards are the clamps' own (``CondRead.same``) and not every store needs every part (the run's
first output needs the column before it, its last the one after: the row's ends), the run is guarded by
the parts every store needs (the rows and planes it reads lie inside the grid), and inside it the stores
that need more read through their clamps (``max(0, x - 1)``) rather than take a branch.  Guarded by all
parts, every run that touches a row's end took the border's branch; on a GPU that is every warp where a
row is 64 runs (a 512^3 grid in runs of eight halves), and the warp runs both branches.
(Not a copy into local memory: a convolution's padded tile, copied by a work-group, kept its own
conditions in the kernels measured so far.)

Runs after ``unroll`` (the copies are the run) and before ``vectorize``.
"""

from __future__ import annotations

from ... import arith as A
from ...arith import simplify_condition
from ...views import view as V
from ...views.conditions import conjunction, negate
from ..stmt import Block, If, Kernel, Store, map_block, store_with
from .guards import facts_of, refine


def guard_runs(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_block(kernel.body, _block))


def _guarded(s, buffer=None) -> bool:
    # (A CondRead's condition is of indices only, never of memory: evaluating it again after the interior's
    # stores, for the border's branch, reads nothing they wrote.)
    return (isinstance(s, Store) and s.width == 1 and isinstance(s.value, V.CondRead) and s.buffer.space == "global"
            and (buffer is None or s.buffer == buffer))


def _block(b: Block, ranges) -> Block:
    items, out, i = b.items, [], 0
    changed = False
    while i < len(items):
        j = i + 1
        if _guarded(items[i]):
            while j < len(items) and _guarded(items[j], items[i].buffer) and items[j].index - items[i].index == j - i:
                j += 1
        if j - i < 2:
            out.append(items[i])
            i = j
            continue
        run = items[i:j]
        i = j
        cond, plain = _interior(run, ranges)
        if cond is A.TRUE:
            out.extend(plain)
        elif cond is A.FALSE:
            out.extend(run)
            continue
        else:
            out.append(If(cond, Block(plain)))
            out.append(If(negate(cond), Block(run)))
        changed = True
    return Block(tuple(out)) if changed else b


def _parts(c) -> tuple:
    return c.args if isinstance(c, A.And) else (c,)


def _interior(run, ranges) -> tuple:
    """The guard of a run of guarded stores and the stores it lets through: every store's plain branch under
    every store's condition, or, for the clamps' own guards of which some parts not every store needs, the
    parts they all need, the stores whose condition they are taking the plain branch, the others their
    clamped one with what those parts decide decided (module docstring)."""
    if all(s.value.same for s in run):
        parts = [set(_parts(s.value.cond)) for s in run]
        shared = [p for p in _parts(run[0].value.cond) if all(p in x for x in parts)]
        if any(len(x) > len(shared) for x in parts):
            cond = simplify_condition(conjunction(shared), ranges)
            if cond is not A.FALSE:
                facts = facts_of(cond, ranges)
                return cond, tuple(store_with(s, s.index, s.value.then if len(x) == len(shared)
                                              else refine(s.value.other, ranges, facts)) for s, x in zip(run, parts))
    cond = simplify_condition(conjunction([s.value.cond for s in run]), ranges)
    return cond, tuple(store_with(s, s.index, s.value.then) for s in run)


def with_borders(items):
    """Each statement of a block, with whether it is the border's branch of a run's guard (an ``If`` whose
    condition negates the ``If`` before it): few work-items take it, so the cost models count the interior's
    reads only.  A pair after it starts anew (its interior negates this border back)."""
    before = None
    for s in items:
        border = isinstance(s, If) and isinstance(before, If) and s.cond == A.negate(before.cond)
        yield s, border
        before = None if border else s
