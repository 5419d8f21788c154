"""What a conditional read's condition tells its branches.

In ``c ? then : other`` (a ``CondRead``: a padded view, a ``select`` over a mask or an index folded into a
condition, ``liftpy.views.conditions``) only the branch the condition picks is evaluated (C's ``?:``), so
inside ``then`` the condition holds and inside ``other`` it does not.  A Jacobi sweep that keeps its border
with ``select(mask, new, old)`` computes ``new`` only inside the border, where the clamped reads of its
neighbours, ``g[min(n-1, max(0, i-1))]``, are plain reads, ``g[i-1]``: the clamps cost more than the
arithmetic on a CPU (and a branch whose loads are clamped is not vectorized there; measured: a 2048^2
sweep on PoCL 4.6x faster without them).

The facts a condition gives are the integer expressions it proves non-negative (``i - 1 >= 0``, and
``n - 1 - i >= 0`` from ``i - n < 0``); with them a branch's maxima and minima drop the arguments never
chosen (``arith.extremum``), its moduli that stay in range disappear, and the conditions inside it that the
facts decide are decided.  A fact proves ``x >= 0`` when ``x - fact`` is non-negative over the loop ranges,
which covers a split loop's ``8*g + i - 1 >= 0`` as well as one counter's bound.  A condition that is not a
conjunction of comparisons (its negation, for the other branch, when it has several parts) gives no fact.
Runs after ``simplify``, which decided what the ranges alone decide.
"""

from __future__ import annotations

import sympy

from ...views import view as V
from ...views.arith import bounds, difference, extremum, rebuild, simplify
from ...views.conditions import conjunction, disjunction, negate
from ..stmt import Kernel, Store, map_stmts, store_with


def guards(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_stmts(kernel.body, _stmt))


def _stmt(s, ranges):
    if isinstance(s, Store):
        value = refine(s.value, ranges, ())
        return s if value is s.value else store_with(s, s.index, value)
    return s


def facts_of(c, ranges=None) -> tuple:
    """The integer expressions ``c`` proves non-negative: each comparison of a conjunction, as ``x >= 0``;
    ``x != 0`` where the ranges put ``x`` on one side of 0 (``i != 0`` for a counter is ``i - 1 >= 0``)."""
    if isinstance(c, sympy.And):
        return tuple(f for a in c.args for f in facts_of(a, ranges))
    if not getattr(c, "is_Relational", False):
        return ()
    d = difference(c.lhs, c.rhs)
    op = c.rel_op
    if op == ">=":
        return (d,)
    if op == ">":
        return (d - 1,)
    if op == "<=":
        return (-d,)
    if op == "<":
        return (-d - 1,)
    if op == "==":
        return (d, -d)
    b = bounds(d, ranges) if op == "!=" and ranges is not None else None
    if b is not None and b[0] == 0:
        return (d - 1,)
    if b is not None and b[1] == 0:
        return (-d - 1,)
    return ()


def refine(r: V.Read, ranges, facts: tuple) -> V.Read:
    """``r`` with what ``facts`` (and, in each conditional read's branches, its condition) decide decided."""
    if isinstance(r, V.CondRead):
        c = decide(r.cond, ranges, facts) if facts else r.cond
        if c is sympy.true:
            return refine(r.then, ranges, facts)
        if c is sympy.false:
            return refine(r.other, ranges, facts)
        then = refine(r.then, ranges, facts + facts_of(c, ranges))
        other = refine(r.other, ranges, facts + facts_of(negate(c), ranges))  # (None: nothing known)
        if c is r.cond and then is r.then and other is r.other:
            return r
        return V.CondRead(c, then, other)
    kids = r.children()
    if kids:
        new = tuple(refine(k, ranges, facts) for k in kids)
        if any(a is not b for a, b in zip(new, kids)):
            r = r.with_children(new)
    if facts:
        memo: dict = {}
        r = r.map_exprs(lambda e: _refined(e, ranges, facts, memo))
    return r


def _known(facts, ranges):
    """Whether ``x >= 0`` follows from one of ``facts`` and the ranges: ``x - f`` is never negative."""
    def at_least(x) -> bool:
        for f in facts:
            b = bounds(difference(x, f), ranges)
            if b is not None and b[0] >= 0:
                return True
        return False

    return at_least


def decide(c, ranges, facts: tuple):
    """The condition ``c`` with the comparisons ``facts`` decide replaced by true or false."""
    if c is sympy.true or c is sympy.false:
        return c
    if isinstance(c, sympy.And):
        parts = [decide(a, ranges, facts) for a in c.args]
        return c if all(a is b for a, b in zip(parts, c.args)) else conjunction(parts)
    if isinstance(c, sympy.Or):
        parts = [decide(a, ranges, facts) for a in c.args]
        return c if all(a is b for a, b in zip(parts, c.args)) else disjunction(parts)
    if not getattr(c, "is_Relational", False):
        return c
    at_least = _known(facts, ranges)
    for outcome, test in ((sympy.true, c), (sympy.false, negate(c))):
        if test is sympy.true:  # (a comparison of numbers)
            return outcome
        if not getattr(test, "is_Relational", False):
            continue
        if test.rel_op == "!=":  # d != 0 where d >= 1 or d <= -1
            d = difference(test.lhs, test.rhs)
            if at_least(d - 1) or at_least(-d - 1):
                return outcome
            continue
        holds = facts_of(test)
        if holds and all(at_least(f) for f in holds):
            return outcome
    return c


def _refined(e, ranges, facts: tuple, memo: dict):
    """The index expression ``e`` with the maxima, minima, moduli and conditions ``facts`` decide gone."""
    if not isinstance(e, sympy.Basic) or e.is_Atom:
        return e
    hit = memo.get(e)
    if hit is not None:
        return hit
    if isinstance(e, sympy.logic.boolalg.Boolean) and (e.is_Relational or isinstance(e, (sympy.And, sympy.Or))):
        out = decide(e, ranges, facts)
    else:
        args = [_refined(a, ranges, facts, memo) for a in e.args]
        at_least = _known(facts, ranges)
        if isinstance(e, (sympy.Max, sympy.Min)):
            out = extremum(type(e), args, ranges, e, at_least)
        elif isinstance(e, sympy.Mod) and args[1].is_Integer and at_least(args[0]) and at_least(args[1] - 1 - args[0]):
            out = args[0]  # 0 <= x < n: x mod n is x
        elif all(a is b for a, b in zip(args, e.args)):
            out = e
        else:
            out = rebuild(e, args)
        if out is not e:
            out = simplify(out, ranges)
    memo[e] = out
    return out

