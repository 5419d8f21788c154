"""Address-calculation elimination (Romou, Algorithm 1): divisions and moduli of loop counters become
nested loop counters.

A sequential loop ``for i in [0, n)`` whose body computes ``i / d`` or ``i % d`` (a flattened window
``join(join(window))`` of ``[[[float]C]3]3`` reads row ``i / (3*C)``, column ``(i / C) % 3`` and channel
``i % C``) is split into ``for q in [0, n/d) for r in [0, d)`` with ``i = d*q + r``; after simplification
with the new ranges ``i / d`` is ``q`` and ``i % d`` is ``r``.  A split is kept only when it lowers the
number of divisions and moduli that use the loop's counter, and only for divisors of the extent, so the
iterations and their order are exactly those of the original loop.  (Counted over all divisions, a split
that removed none was kept when simplifying the rewritten statements again happened to fold a division
of other counters, ``(l + 56*s) % 6 % 2`` into ``l % 2``.)

The pass runs before unrolling (``passes.DEFAULT_PASSES``), on the loop nest as the emitter wrote it: a
statement inside a loop marked for unrolling is counted and rewritten once, and its copies inherit the
split counter.  On 120 points of SGEMM and two VGG-16 layers the kernels are byte for byte those of the
pass run after unrolling.
"""

from __future__ import annotations

import dataclasses
from math import gcd

from ... import arith as A
from ...arith import divmod_nodes
from ...ir.levels import Level
from ..memo import Memo
from ..stmt import Block, If, IndexDef, Kernel, Loop, Store, body_ranges, descend, map_stmts, reads, walk
from .simplify import simplify_substituted

MAX_SPLITS = 6


def own_exprs(x):
    """The index expressions and conditions of one statement itself (an ``If``'s condition, not its body)."""
    if isinstance(x, Store):
        yield x.index
        for r in reads(x.value):
            found: list = []
            r.map_exprs(lambda e: found.append(e) or e)
            yield from found
    elif isinstance(x, IndexDef):
        yield x.value
    elif isinstance(x, If):
        yield x.cond


# What each statement holds, by identity, for one run of the pass: every trial split counts the
# divisions of the whole loop body, and all but the statements that use the split counter are the
# same objects as before the split.  The entries keep their statements alive, so ids are not reused.
_OWN: dict = {}


def _own(x) -> tuple[tuple, frozenset]:
    """The divisions and moduli of a statement itself, and the symbols of its expressions."""
    hit = _OWN.get(id(x))
    if hit is None:
        if isinstance(x, Store):  # the commonest statement, its expressions gathered without generators
            exprs = [x.index]
            _read_exprs(x.value, lambda e: exprs.append(e) or e)
        else:
            exprs = list(own_exprs(x))
        nodes: list = []
        syms: set = set()
        for e in exprs:
            n, u = _expr_info(e)
            if n:
                nodes.extend(n)
            syms |= u
        hit = _OWN[id(x)] = (x, tuple(nodes), frozenset(syms))
    return hit[1], hit[2]


def _read_exprs(r, add) -> None:
    """``add`` every expression of a value tree, outermost read first (as ``own_exprs`` yields them)."""
    r.map_exprs(add)
    for k in r.children():
        _read_exprs(k, add)


_INFO = Memo(100_000)


def _expr_info(e) -> tuple[tuple, frozenset]:
    """``(divmod_nodes(e), e.free_vars)`` in one memo lookup: every statement asks both of each of
    its expressions, and most expressions are shared by many statements."""
    hit = _INFO.table.get(e)
    return hit if hit is not None else _INFO.get(e, lambda: (divmod_nodes(e), A.as_expr(e).free_vars))


# What each statement's subtree holds (its own and every statement ``walk`` finds below it), by
# identity like ``_OWN``: every loop of the kernel asks for the divisions of its body (its candidate
# splits), and every trial split of a loop asks which statements use its counter, so walking the
# subtree again for each made these queries quadratic in the nesting depth (a third of the pass).
_TREE: dict = {}


def _tree(s) -> tuple[frozenset, frozenset]:
    """The divisions and moduli in ``s`` and below, and their symbols."""
    hit = _TREE.get(id(s))
    if hit is None:
        nodes, syms = _own(s)
        found, used = set(nodes), set(syms)
        if isinstance(s, Block):
            kids = s.items
        elif isinstance(s, (Loop, If)):
            kids = (s.body,)
        else:
            kids = ()
        for k in kids:
            f, u = _tree(k)
            found |= f
            used |= u
        hit = _TREE[id(s)] = (s, frozenset(found), frozenset(used))
    return hit[1], hit[2]


def _divmods(s) -> frozenset:
    return _tree(s)[0]


def _uses(s, var) -> bool:
    if isinstance(s, (Store, IndexDef)):  # a leaf (what a trial split asks about most): no sets to build
        return var in _own(s)[1]
    return var in _tree(s)[1]


_PERIODS = Memo(100_000)


def _period(node, var) -> int:
    """The k > 1 such that splitting ``var`` by k removes ``node`` (a division or modulus whose dividend
    has an integer coefficient c of ``var``: k = d / gcd(c, d)), or 0; memoised, since the same nodes
    are asked about for every loop and every trial split."""
    def compute():
        dividend, d = node.args[0], node.args[1].value
        if d <= 1:
            return 0
        c = 0
        for t in A.terms_of(dividend):
            k, rest = A.coeff_and_rest(t)
            if rest is var:
                c += k
            elif var in rest.free_vars:
                return 0  # var in a product or under a division: no period
        return d // gcd(abs(c), d) if isinstance(c, int) and c != 0 else 0

    return _PERIODS.get((node, var), compute)


def _candidates(loop: Loop) -> list[int]:
    out = set()
    for node in _divmods(loop.body):
        k = _period(node, loop.var)
        if 1 < k < loop.extent and loop.extent % k == 0:
            out.add(k)
    return sorted(out, reverse=True)


def split_loop(loop: Loop, d: int, ranges: dict) -> Loop:
    """``loop`` as a loop over ``q`` around a loop over ``r`` of ``d`` iterations, its counter ``d*q + r`` in
    the body, each statement that used it substituted and simplified with the ranges in scope."""
    q = A.var(f"{loop.var.name}q")
    r = A.var(f"{loop.var.name}r")
    mapping = {loop.var: d * q + r}
    inner_ranges = dict(ranges)
    inner_ranges[q] = (0, loop.extent // d - 1)
    inner_ranges[r] = (0, d - 1)

    seen: dict = {}  # (the statements of a body share most terms)

    def one(s, scope):  # statements without the counter are left alone
        if not _uses(s, loop.var):
            return s
        return simplify_substituted(s, mapping, scope, seen)

    body = map_stmts(loop.body, one, inner_ranges)
    inner = Loop(r, d, Level.SEQ, 0, body, False, "", loop.compiler_unroll)
    return Loop(q, loop.extent // d, Level.SEQ, 0, Block((inner,)), False, loop.note, loop.compiler_unroll)


def _count_using(s, syms) -> int:
    """The number of divisions and moduli in ``s`` and below whose operands use one of ``syms``."""
    n = 0
    for x in walk(s):
        for node in _own(x)[0]:
            if not node.free_vars.isdisjoint(syms):
                n += 1
    return n


def _improve(loop: Loop, ranges: dict, budget: list) -> Loop:
    if loop.level is not Level.SEQ or loop.unroll or budget[0] <= 0:
        return loop
    using = _count_using(loop.body, {loop.var})
    if using == 0:  # (no division of the counter: no candidate either)
        return loop
    for d in _candidates(loop):
        cand = split_loop(loop, d, ranges)
        if _count_using(cand, {cand.var, cand.body.items[0].var}) < using:
            budget[0] -= 1
            inner_ranges = dict(ranges)
            inner_ranges[cand.var] = (0, cand.extent - 1)
            (inner,) = cand.body.items
            inner = _improve(inner, inner_ranges, budget)
            cand = dataclasses.replace(cand, body=Block((inner,)))
            return _improve(cand, ranges, budget)
    return loop


def _go(s, ranges):
    if isinstance(s, Block):
        return Block(tuple(_go(x, ranges) for x in s.items))
    s = descend(s, lambda b: _go(b, body_ranges(s, ranges)))
    if isinstance(s, Loop):
        return _improve(s, ranges, [MAX_SPLITS])
    return s


def eliminate_divmod(kernel: Kernel) -> Kernel:
    _clear()
    try:
        return kernel.replace(body=_go(kernel.body, {}))
    finally:
        _clear()


def _clear() -> None:
    for table in (_OWN, _TREE):
        table.clear()
