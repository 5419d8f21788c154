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

A stencil whose boundary is an index function (clamp, mirror, wrap) has no condition to use: its reads are
clamped everywhere.  ``guard_clamps`` makes one, ``interior ? value : value`` with ``interior`` the
condition under which every boundary function keeps its index; the first branch then reads plainly and
only the border pays for the clamps.  The second branch keeps every clamp (what the guard's negation
would decide is left): it is right wherever it is read, which ``runs`` relies on (``CondRead.same``).  A guard that simplifies nothing is not kept (the moduli of a
double buffer or a split loop cycle through their periods, and no interior exists for them).

Runs after ``simplify``, which decided what the ranges alone decide.
"""

from __future__ import annotations

from ... import arith as A
from ...arith import bounds, difference_bounds, extremum, rebuild, simplify, simplify_condition, substitute
from ...views import view as V
from ...views.conditions import conjunction, disjunction, negate
from ..stmt import Kernel, Store, map_stmts, store_with


def guards(kernel: Kernel) -> Kernel:
    return kernel.replace(body=map_stmts(kernel.body, _stmt))


def _stmt(s, ranges):
    if isinstance(s, Store):
        value = refine(s.value, ranges, ())
        guarded = guard_clamps(value, ranges)  # (after refine: clamps a condition already removed need no guard)
        if guarded is not value:
            guarded = refine(guarded, ranges, ())
            if isinstance(guarded, V.CondRead) and guarded.then != guarded.other:  # (else the guard bought nothing)
                value = guarded
        return s if value is s.value else store_with(s, s.index, value)
    return s


MAX_GUARD_PARTS = 12  # comparisons in one interior condition; more clamps than a 3D stencil's are left as they are


def guard_clamps(r: V.Read, ranges) -> V.Read:
    """``interior ? r : r`` where ``r`` reads through boundary index functions (a clamp's
    ``min(n-1, max(0, i+k))``, a mirror's maxima and minima, a wrap's ``(i + k + n) % n``): ``interior`` says
    each chooses what it chooses in the middle of the ranges, so ``refine`` makes the first branch the plain
    stencil and only the border evaluates the second (on PoCL a 2048^2 Jacobi sweep took half the time).
    ``r`` itself where there is none, or the ranges decide the condition.  Padding with a value (a
    conditional read per neighbour) is not guarded: its reads sit in reductions' steps (a convolution's),
    where a guard per step would only add a branch."""
    parts: dict = {}
    for x in V.walk_reads(r):
        if isinstance(x, V.MemRead):
            _clamp_conditions(x.index, parts, ranges)
        elif isinstance(x, V.ImageRead):
            _clamp_conditions(x.x, parts, ranges)
            _clamp_conditions(x.y, parts, ranges)
    if not parts or len(parts) > MAX_GUARD_PARTS:
        return r
    cond = simplify_condition(conjunction(list(parts)), ranges)
    if cond is A.TRUE or cond is A.FALSE:
        return r
    return V.CondRead(cond, r, r, same=True)


def _clamp_conditions(e, parts: dict, ranges) -> None:
    """Into ``parts``: for each maximum or minimum in ``e``, that it chooses the argument it chooses in the
    middle of the ranges (a clamp's ``i + k``, a mirror's ``i - 1`` over ``-i``); for each modulus by a
    constant, that it subtracts the multiple of the period it subtracts there (``kn <= x < (k + 1)n``)."""
    if not isinstance(e, A.Expr) or not e.args:
        return
    if isinstance(e, (A.Max, A.Min)):
        mids = [_middle(a, ranges) for a in e.args]
        if None not in mids:
            pick = mids.index(max(mids) if isinstance(e, A.Max) else min(mids))
            x = e.args[pick]
            for i, other in enumerate(e.args):
                if i != pick:
                    parts[A.rel(">=" if isinstance(e, A.Max) else "<=", x - other, 0)] = None
    elif isinstance(e, (A.Mod, A.CMod)):
        n = e.args[1].value
        k = _period(e.args[0], n, ranges)
        if k is not None and _mostly_in_period(e.args[0], n, k, ranges):
            x = A.plus(e.args[0], -k * n)  # in [0, n): x mod n is x - kn
            parts[A.rel(">=", x, 0)] = None
            parts[A.rel("<", A.plus(x, -n), 0)] = None
    for a in e.args:
        _clamp_conditions(a, parts, ranges)


def _middle(e, ranges):
    """The value of ``e`` with every symbol in the middle of its range, or None (a symbol without one)."""
    syms = e.free_vars
    if any(x not in ranges for x in syms):
        return None
    v = substitute(e, {x: (ranges[x][0] + ranges[x][1]) // 2 for x in syms})
    return v.value if v.is_const else None


def _in_period(x, n: int, ranges, at_least) -> bool:
    """Whether the facts put ``x`` in the period ``_period`` names: ``x mod n`` is then ``x - kn``."""
    k = _period(x, n, ranges)
    return k is not None and at_least(A.plus(x, -k * n)) and at_least(A.plus(-x, (k + 1) * n - 1))


def _mostly_in_period(x, n: int, k: int, ranges) -> bool:
    """Whether more than half of ``x``'s range lies in ``[kn, (k + 1)n)``: a wrap's index, which leaves its
    period only at the border, and not a counter's modulus (a double buffer's, a split loop's), which
    cycles through its periods (guarding it would only put a branch in the loop)."""
    lo, hi = bounds(x, ranges)
    inside = min(hi, (k + 1) * n - 1) - max(lo, k * n) + 1
    return 2 * inside > hi - lo + 1


def _period(x, n: int, ranges):
    """The k with ``kn <= x < (k + 1)n`` at the middle of ``x``'s range (a wrap's ``(i - 1 + n) % n`` is
    ``i - 1`` but for one element), or None when the ranges do not bound ``x``."""
    b = bounds(x, ranges)
    return None if b is None else ((b[0] + b[1]) // 2) // n


def facts_of(c, ranges=None) -> tuple:
    """The integer expressions ``c`` proves non-negative: each comparison of a conjunction, as ``x >= 0``;
    ``x != 0`` where the ranges put ``x`` on one side of 0 (``i != 0`` for a counter is ``i - 1 >= 0``)."""
    if isinstance(c, A.And):
        return tuple(f for a in c.args for f in facts_of(a, ranges))
    if not isinstance(c, A.Rel):
        return ()
    d = c.lhs - c.rhs
    op = c.op
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
        if c is A.TRUE:
            return refine(r.then, ranges, facts)
        if c is A.FALSE:
            return refine(r.other, ranges, facts)
        then = refine(r.then, ranges, facts + facts_of(c, ranges))
        # (a guard's other branch stays right wherever it is read, for ``runs`` to take it under a weaker guard)
        other = refine(r.other, ranges, facts if r.same else facts + facts_of(negate(c), ranges))
        if c is r.cond and then is r.then and other is r.other:
            return r
        return V.CondRead(c, then, other, r.same)
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
            b = difference_bounds(x, f, ranges)
            if b is not None and b[0] >= 0:
                return True
        return False

    return at_least


def decide(c, ranges, facts: tuple):
    """The condition ``c`` with the comparisons ``facts`` decide replaced by true or false."""
    if c is A.TRUE or c is A.FALSE:
        return c
    if isinstance(c, A.And):
        parts = [decide(a, ranges, facts) for a in c.args]
        return c if all(a is b for a, b in zip(parts, c.args)) else conjunction(parts)
    if isinstance(c, A.Or):
        parts = [decide(a, ranges, facts) for a in c.args]
        return c if all(a is b for a, b in zip(parts, c.args)) else disjunction(parts)
    if not isinstance(c, A.Rel):
        return c
    at_least = _known(facts, ranges)
    for outcome, test in ((A.TRUE, c), (A.FALSE, negate(c))):
        if test is A.TRUE:  # (a comparison of numbers)
            return outcome
        if not isinstance(test, A.Rel):
            continue
        if test.op == "!=":  # d != 0 where d >= 1 or d <= -1
            d = test.lhs - test.rhs
            if at_least(d - 1) or at_least(-d - 1):
                return outcome
            continue
        holds = facts_of(test)
        if holds and all(at_least(f) for f in holds):
            return outcome
    return c


def _refined(e, ranges, facts: tuple, memo: dict):
    """The index expression ``e`` with the maxima, minima, moduli and conditions ``facts`` decide gone (a
    modulus proven to subtract one multiple of its period is that subtraction)."""
    if not isinstance(e, A.Expr) or not e.args:
        return e
    hit = memo.get(e)
    if hit is not None:
        return hit
    if isinstance(e, (A.Rel, A.And, A.Or)):
        out = decide(e, ranges, facts)
    else:
        args = [_refined(a, ranges, facts, memo) for a in e.args]
        at_least = _known(facts, ranges)
        if isinstance(e, (A.Max, A.Min)):
            out = extremum(type(e), args, ranges, at_least)
        elif isinstance(e, (A.Mod, A.CMod)) and _in_period(args[0], e.args[1].value, ranges, at_least):
            out = A.plus(args[0], -_period(args[0], e.args[1].value, ranges) * e.args[1].value)
        elif all(a is b for a, b in zip(args, e.args)):
            out = e
        else:
            out = rebuild(e, args)
        if out is not e:
            out = simplify(out, ranges)
    memo[e] = out
    return out

