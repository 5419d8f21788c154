"""Unrolling: a sequential loop marked ``unroll`` (``mapSeqUnroll``, ``reduceSeqUnroll``, short copies)
or of a single iteration becomes the copies of its body with the counter replaced by 0, 1, ..., each
copy simplified for its constant (``floor((4*k + j)/4)`` of copy ``k = 3`` is ``3`` when ``j < 4``).

Loops are unrolled from the inside out, and each copy is simplified as it is made, in the walk that
substitutes its counter (``_copy``).  Every expression a copy starts from is simplified already (by
``simplify`` before this pass, or as a copy of an inner loop), so a copy rewrites only what its counter
changes: an expression without the counter (or an index definition computed from it) is its own copy;
one where the counter is only a term of the sum (``8*i + x``, most addresses of a register tile) is the
same sum with another constant, built without a walk; the rest (the counter under a division, a
modulus or a condition) are substituted and simplified with the copy's ranges.  (Unrolled from the
outside in, with everything simplified once by the outermost loop, the reads of an inner loop were
simplified again for every copy of the outer loop.)  Statements outside unrolled loops keep what the
simplification before this pass made of them.

The extent of an unrolled loop is bounded where the loop is made by rewriting (the unrolling rules require
at most ``UNROLL_LIMIT`` iterations, and the emitter unrolls copies of at most four elements), but a program
written by hand may ask for any: a copy costs some 0.1 ms, so a ``mapSeqUnroll`` over 2^20 elements took
104 s to be refused by the private memory of its copies' vector loads.  ``check_unroll`` refuses a nest
of more than ``COPY_LIMIT`` copies before any is made, whichever way the policy below unrolls it (which
programs generate does not depend on the policy).  A copy that declares private variables keeps its own C scope.

Which loops marked for unrolling are left loops instead, printed with ``#pragma unroll`` for the OpenCL
compiler to unroll (it folds the same constants), is ``COMPILER_UNROLLS``, the name of a policy of
``POLICIES``.  Code generation then makes and simplifies one body instead of its copies, but the
vectorization pass finds no run of copies to load or store as one vector, and the vector loads of a
register block's operands are what its copies are for: on the H100, the nine VGG-16 layers' fastest points
and two SGEMM points (``benchmarks/unroll_policy.py``) took 1.14x as long as a geomean with every loop left
to the compiler (``all``; up to 2.0x), and 1.18x with liftpy's copies but no vector loads.  The default
leaves the compiler two kinds of loop only:

- the steps of a ``reduceSeqUnroll`` (a register block's k steps, ``reductions``): liftpy still copies the
  block inside a step, whose operands, where the tiles are staged transposed (``stageTilesT``, the layout
  of every one of those fastest points), lie side by side and are loaded as vectors.  Where the same
  operand of consecutive steps lies side by side instead (tiles staged as they are, a block read straight
  from global memory), the vectors ran across the steps: the loop then runs over groups of four steps,
  each group copied by liftpy (``_left_to_compiler``).  Left to the compiler whole, such steps made an
  unstaged SGEMM tiling 1.85x slower;
- loops that only move values between private arrays (an accumulator's start and its copies,
  ``registers``): registers either way.

On the H100, liftpy's copies of every loop (``none``) / this policy: the eleven fastest points geomean
1.004 (0.965 SGEMM 2048 to 1.074 layer 7), 24 points drawn from layers 12 and 5 and SGEMM 1024 1.034
(0.990 to 1.718); code generation on the H100's host (``benchmarks/codegen.py``, five runs each way,
alternating) 0.041-0.049 s per point at the median for layer 12 (0.062-0.072 s), 0.042-0.065 s for layer
5 (0.060-0.084 s); 17,802 -> 4,681 lines of OpenCL for the eleven points.  ``none`` is liftpy copying every
loop, as up to 042d57b (the same sources byte for byte).

``blocks`` goes further and is measured, not the default: of the other loops of more than four iterations,
those with an access side by side in consecutive iterations become groups of four copies (a register
block's two maps interchanged, so that one loop body holds a 4 x 4 block whose operands load as vectors
both ways), the rest are left whole to the compiler.  Code generation on the H100's host, two runs each,
default / ``blocks``: layer 5 0.054, 0.079 / **0.040, 0.038 s** per point at the median, layer 12 0.055,
0.064 / 0.055, 0.039 s; on this project's 2-core machine, 51 guided points of layer 5 for the H100's limits
0.088-0.099 / 0.058-0.059 s.  The kernels: the eleven fastest points 0.985x as fast as a geomean (0.944 layer
7, 0.958 layer 2, 1.034 SGEMM 2048), 13 drawn points 0.980x, one of layer 12 0.756x
(``benchmarks/results/h100-unroll-policy-blocks*.json``).  What costs the time is what the copies are
for: a copy of a cooperative copy's step decides its guard and folds its divisions (``(l + 14) / 24`` is 0
for a local id below 10) with the ranges of the work-item ids, which the OpenCL compiler does not know; left
a loop, they run.  Grouping only the loops without such a guard or division keeps the kernels and saves
almost nothing (51 points: 23,009 -> 22,804 lines, the same time): code generation's time is in simplifying
those copies, not in the register blocks, whose copies are sums with another constant (``_SHIFT``)."""

from __future__ import annotations

from dataclasses import replace


from ...errors import CodegenError
from ...ir.levels import Level
from ... import arith as A
from ...arith import linear_in, substitute_simplified
from ...views.view import ImageRead, MemRead, walk_reads
from ..stmt import Block, If, IndexDef, Kernel, Loop, Store, bind_index, body_ranges, descend, flatten, map_stmts, walk
from .divmod import own_exprs, split_loop
from .simplify import rewrite_stmt


def _stored_reads(loop: Loop):
    """``(store, read)`` for every read of every value ``loop``'s body stores."""
    for s in walk(loop.body):
        if isinstance(s, Store):
            for r in walk_reads(s.value):
                yield s, r


def _registers_only(loop: Loop) -> bool:
    """Whether ``loop`` only moves values between private arrays (an accumulator's start, its copies): the
    copies of such a loop hold nothing for the vectorization pass to load or store as vectors."""
    if any(isinstance(s, Store) and s.buffer.space != "private" for s in walk(loop.body)):
        return False
    return not any(isinstance(r, ImageRead) or (isinstance(r, MemRead) and r.buffer.space != "private")
                   for _, r in _stored_reads(loop))


VECTOR = 4  # the lanes of the float vector loads the vectorization pass makes of side-by-side reads


def _next_to_next(index, var) -> bool:
    """Whether an access at ``index`` may lie next to the same access in the next iteration of ``var``."""
    if var not in A.as_expr(index).free_vars:
        return False
    lin = linear_in(index, var)
    return lin is None or abs(lin[1]) == 1


def _steps_side_by_side(loop: Loop) -> bool:
    """Whether some read of memory in ``loop``'s body (not of private arrays) may lie next to the same read
    of the next iteration (a tile staged with k fastest, a block read straight from global memory): the
    vectorization pass loads such reads of consecutive copies four at a time."""
    return any(isinstance(r, MemRead) and r.buffer.space != "private" and _next_to_next(r.index, loop.var)
               for _, r in _stored_reads(loop))


def _reduction_steps(loop: Loop) -> str:
    """A ``reduceSeqUnroll``'s steps (a register block's k steps) left to the compiler: whole, or in groups of
    ``VECTOR`` copied here where consecutive steps read side by side (module docstring)."""
    if loop.note != "reduceSeqUnroll":
        return "copies"
    return "groups" if _steps_side_by_side(loop) else "loop"


def _registers(loop: Loop) -> str:
    return "loop" if _registers_only(loop) else "copies"


def _reductions_and_registers(loop: Loop) -> str:
    way = _reduction_steps(loop)
    return way if way != "copies" else _registers(loop)


def _unit_stride(loop: Loop) -> bool:
    """Whether some access of memory (not of private arrays) in ``loop``'s body, read or stored, lies next to
    the same access of the next iteration: what the vectorization pass loads or stores four at a time."""
    return _steps_side_by_side(loop) or any(isinstance(s, Store) and s.buffer.space != "private"
                                            and _next_to_next(s.index, loop.var) for s in walk(loop.body))


def _blocks(loop: Loop) -> str:
    """``reductions+registers``, and of the other loops of more than ``VECTOR`` iterations: those whose accesses
    lie side by side in groups of ``VECTOR`` copies (nested groups of two maps interchanged into one block),
    the rest left whole to the compiler (module docstring: measured, not the default)."""
    way = _reductions_and_registers(loop)
    if way != "copies" or loop.extent <= VECTOR:
        return way
    if _unit_stride(loop):
        return "groups" if loop.extent % VECTOR == 0 else "copies"
    return "loop"


# What a policy makes of a loop marked for unrolling: ``copies`` of its body (liftpy unrolls it), a ``loop``
# marked ``#pragma unroll``, or such a loop over ``groups`` of ``VECTOR`` iterations copied by liftpy.
POLICIES = {
    "none": lambda loop: "copies",
    "registers": _registers,
    "reductions": _reduction_steps,
    "reductions+registers": _reductions_and_registers,
    "all": lambda loop: "loop",
    "blocks": _blocks,
}
COMPILER_UNROLLS = "reductions+registers"  # the policy of POLICIES that decides (module docstring)


def use_policy(name: str) -> str:
    """Make ``name`` (a key of ``POLICIES``) the policy of this pass; returns the one it replaces."""
    global COMPILER_UNROLLS
    if name not in POLICIES:
        raise CodegenError(f"unknown unrolling policy {name!r} (known: {', '.join(POLICIES)})")
    previous, COMPILER_UNROLLS = COMPILER_UNROLLS, name
    return previous


def policy() -> str:
    """The policy of this pass now (a key of ``POLICIES``)."""
    return COMPILER_UNROLLS


# Copies of one body an unrolled nest may ask for (the product of its loops' extents): 8 times the most the
# rewrite rules make (``rewrite.lowering.UNROLLED_BODY_LIMIT``, which 40 points of each workload of
# ``benchmarks/codegen.py`` reach), some 2 s of code generation.
COPY_LIMIT = 1 << 14


def check_unroll(kernel: Kernel) -> None:
    """Refuse a kernel whose unrolled loops ask for more than ``COPY_LIMIT`` copies of a body, before any
    copy is made (module docstring)."""
    found = _over_limit(kernel.body, 1)
    if found is None:
        return
    copies, loop = found
    if loop.note.endswith("Unroll"):
        what, remedy = loop.note, f"use {loop.note[:-len('Unroll')]} for a loop this long"
    else:
        what, remedy = f"an unrolled loop ({loop.note or 'sequential'})", "use mapSeq or reduceSeq for the loops around it"
    around = "" if copies == loop.extent else f" inside unrolled loops of {copies // loop.extent} copies"
    raise CodegenError(f"{what} of {loop.extent} iterations{around} in kernel {kernel.name} asks for {copies} copies "
                       f"of its body; at most {COPY_LIMIT} are made: {remedy}")


def _over_limit(s, outer: int):
    """``(copies, loop)`` for the first (outermost) unrolled loop within ``s`` whose copies, counted with
    those of the unrolled loops around it, exceed ``COPY_LIMIT``; None if there is none."""
    if isinstance(s, Block):
        for x in s.items:
            found = _over_limit(x, outer)
            if found is not None:
                return found
        return None
    if isinstance(s, Loop) and s.level is Level.SEQ and s.unroll:
        copies = outer * s.extent
        return (copies, s) if copies > COPY_LIMIT else _over_limit(s.body, copies)
    if isinstance(s, (Loop, If)):
        return _over_limit(s.body, outer)
    return None


def _unrolled(x) -> bool:
    return isinstance(x, Loop) and x.level is Level.SEQ and (x.unroll or x.extent == 1)


def _expand(s, ranges: dict):
    """``s`` with its unrolled loops expanded."""
    if isinstance(s, Block):
        return Block(flatten(_expand_items(s.items, ranges)))
    return descend(s, lambda b: _expand(b, body_ranges(s, ranges)))


def _expand_items(items, ranges: dict) -> list:
    out = []
    scope = dict(ranges)
    for x in items:
        x = _expand(x, scope)  # the loops inside first: this loop's copies start from simplified ones
        if not _unrolled(x):
            out.append(x)
        elif x.extent > 1 and (way := POLICIES[COMPILER_UNROLLS](x)) != "copies":
            out.append(_left_to_compiler(x, way == "groups", scope))
        else:
            out.extend(_copies(x, x.extent, scope))
        bind_index(scope, x)
    return out


def _copies(loop: Loop, count: int, ranges: dict) -> list:
    """The first ``count`` iterations of ``loop``, each a copy of its body for its counter's value."""
    changed = _changed(loop)
    plans: dict = {}  # what each expression of the body needs, the same for every copy
    return [_copy(loop, k, ranges, changed, plans) for k in range(count)]


def _left_to_compiler(loop: Loop, groups: bool, ranges: dict) -> Loop:
    """``loop`` as a loop marked ``#pragma unroll``; with ``groups``, a loop over groups of ``VECTOR``
    iterations (of twice as many where a group of ``VECTOR`` would choose a vector's lane at run time),
    each group copied here, so that the vectorization pass still loads reads that lie side by
    side in consecutive iterations as vectors (iterations that do not come in more than one group of four
    stay one loop, as measured: ``benchmarks/results/h100-unroll-policy*.json``)."""
    if not groups or loop.extent % VECTOR or loop.extent <= VECTOR:
        return replace(loop, unroll=False, compiler_unroll=True)
    chosen = None
    for size in (VECTOR, 2 * VECTOR):  # (eight where four leave a vector's lane to run time, if eight do not)
        if loop.extent % size or loop.extent <= size:
            break
        outer = split_loop(loop, size, ranges)
        (inner,) = outer.body.items
        group = _copies(inner, size, {**ranges, outer.var: (0, outer.extent - 1)})
        whole = not _lanes_across_groups(group, outer.var)
        if chosen is None or whole:
            chosen = outer, group
        if whole:
            break
    outer, group = chosen
    if loop.note != "reduceSeqUnroll":
        group = _interchanged(group)
    return replace(outer, body=Block(flatten(group)), level=loop.level, dim=loop.dim, compiler_unroll=True)


def _lanes_across_groups(group: list, var) -> bool:
    """Whether the copies of a group still divide the group's counter or take it modulo (their lane of a
    vector of eight, which a group of four leaves to be chosen at run time by a chain of conditions: a row's
    share of vectors of eight halves read as scalars, one condition per lane)."""
    return any(var in n.free_vars for c in group for s in walk(c) for e in own_exprs(s) for n in A.divmod_nodes(e))


def _interchanged(group: list) -> list:
    """Copies of a map's iteration that are each one compiler loop over the same counter (an inner map left
    to the compiler in groups): that loop with the copies' bodies side by side, so that the copies of both
    maps meet in one body (a 4 x 4 block of a register tile, whose operands load as vectors both ways).  Only
    iterations of maps trade places: a reduction's steps keep their order."""
    loops = []
    for c in group:
        items = c.items if isinstance(c, Block) else (c,)
        inner = items[0] if len(items) == 1 else None
        if not isinstance(inner, Loop) or not inner.compiler_unroll or inner.note == "reduceSeqUnroll":
            return group
        loops.append(inner)
    first = loops[0]
    if any(l.var != first.var or l.extent != first.extent or l.level is not first.level for l in loops):
        return group
    return [replace(first, body=Block(flatten([l.body for l in loops])))]


def _changed(loop: Loop) -> frozenset:
    """The symbols whose values differ between the copies of ``loop``: its counter and the index
    definitions of its body computed from them."""
    changed = {loop.var}
    for s in walk(loop.body):
        if isinstance(s, IndexDef) and not s.value.free_vars.isdisjoint(changed):
            changed.add(s.var)
    return frozenset(changed)


_KEEP, _SHIFT, _SIMPLIFY, _DECIDE = 0, 1, 2, 3


def _plan(e, var, changed: frozenset, alone: bool) -> tuple:
    """What the copies of ``e`` need: nothing (``_KEEP``), another constant (``_SHIFT``, with the rest and
    the counter's coefficient), a condition whose comparisons each get another constant and are decided
    again (``_DECIDE``, with ``_shifted``'s tree), or substituting and simplifying (``_SIMPLIFY``)."""
    syms = e.free_vars
    if syms.isdisjoint(changed):
        return (_KEEP,)
    if var in syms and (alone or len(syms & changed) == 1):
        if e.is_cond:
            tree = _shifted(e, var)
            if tree is not None:
                return (_DECIDE, tree)
        else:
            lin = linear_in(e, var)
            if lin is not None:
                return (_SHIFT, lin[0], lin[1])
    return (_SIMPLIFY,)


_JOIN = {A.And: A.conj, A.Or: A.disj}


def _shifted(c, var):
    """A simplified condition whose comparisons are ``sum op 0`` with the counter a term of the sum (a
    cooperative copy's guard ``l + 16*s - 1764 < 0``; the bounds of a padded read) as a tree ``_decided``
    evaluates for each copy (substituting into the condition first took a tenth of unrolling).  None for
    any other condition."""
    if isinstance(c, A.Rel):
        if c.rhs is not A.ZERO:
            return None
        if var not in c.free_vars:
            return (c,)
        lin = linear_in(c.lhs, var)
        return None if lin is None else (c.op, lin[0], lin[1])
    if isinstance(c, (A.And, A.Or)):
        parts = [_shifted(p, var) for p in c.args]
        return None if None in parts else (_JOIN[type(c)], parts)
    return None


def _decided(tree, k: int, ranges):
    """The copy ``k`` of a condition planned by ``_shifted``: what simplifying its substitution gives, each
    comparison's sum taken with another constant and compared again (as ``simplify`` compares the
    substituted sum)."""
    if len(tree) == 1:
        return A.simplify(tree[0], ranges)
    if len(tree) == 3:
        op, rest, c = tree
        return A.comparison(op, A.plus(rest, c * k), A.ZERO, ranges)
    join, parts = tree
    return join([_decided(p, k, ranges) for p in parts])


def _copy(loop: Loop, k: int, ranges: dict, changed: frozenset, plans: dict) -> Block:
    """Copy ``k`` of ``loop``'s body, whose expressions are simplified already (by the simplification
    before this pass, or as copies of an inner loop) with the ranges in scope.  An expression without a
    changed symbol is its own copy: its symbols have the same ranges in the copy.  One where the counter
    appears only as a term of the sum (``8*i + x``) becomes the same sum with another constant, which is
    as simple as before.  Only the others (the counter under a division or a modulus, or an index
    definition computed from it) are simplified again, with the copy's ranges."""
    var = loop.var
    mapping = {var: A.const(k)}
    alone = len(changed) == 1  # no index definition computed from the counter (before hoisting: nearly always)
    seen: dict = {}  # indices and conditions made for this copy: its statements share most of their terms

    def one(s, scope):
        if isinstance(s, Store):
            syms = plans.get(id(s))  # (a statement without a changed symbol is its own copy: not walked again)
            if syms is None:
                syms = plans[id(s)] = frozenset().union(*(e.free_vars for e in own_exprs(s) if isinstance(e, A.Expr)))
            if syms.isdisjoint(changed):
                return s

        def copy(e):  # an index or a condition (which is never a shifted sum)
            # Planned once per expression of the body, by its identity (the body holds it while its
            # copies are made): the copies of a loop ask the same questions of the same expressions.
            plan = plans.get(id(e))
            if plan is None:
                plan = plans[id(e)] = _plan(e, var, changed, alone)
            if plan[0] == _KEEP:
                return e
            if plan[0] == _SHIFT:
                return A.plus(plan[1], plan[2] * k)
            if plan[0] == _DECIDE:
                return _decided(plan[1], k, scope)
            return substitute_simplified(e, mapping, scope, seen)

        return rewrite_stmt(s, copy, copy)

    return map_stmts(loop.body, one, ranges)


def unroll(kernel: Kernel) -> Kernel:
    check_unroll(kernel)
    return kernel.replace(body=_expand(kernel.body, {}))
