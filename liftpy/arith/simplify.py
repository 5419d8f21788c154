"""Simplification of index expressions with the ranges of their variables, as Lift's ``ArithExpr`` does
in its constructors.

Views produce indices such as ``floor((4*i + j)/4)`` and ``(4*i + j) mod 4``; knowing that ``j`` ranges
over ``[0, 4)`` turns them into ``i`` and ``j``, which is what makes split/join, slide and vectorized
accesses cost nothing at run time.  The rules: a dividend is split into the terms the divisor divides
and a remainder; if the remainder's range lies in one period it vanishes from the quotient and is the
whole modulus; a quotient or remainder whose dividend is provably non-negative becomes C's ``/`` or
``%`` (truncation is floor there), one of unknown sign keeps its floor form (printed with a helper).
Ranges are inclusive ``(lo, hi)`` pairs of the variables (a ``Ranges`` mapping), passed in rather than
kept in the variables: a guard narrows a variable's range inside its branch.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache, reduce
from math import gcd
from typing import Mapping

from . import cond as C
from . import expr as E
from . import order as O

Ranges = Mapping[E.Var, tuple[int, int]]

DIVMOD = (E.FloorDiv, E.Mod, E.CDiv, E.CMod)  # the nodes that divide


# What ``simplify`` and ``bounds`` compute of a node is memoised in the node (its ``_simplified`` and
# ``_bounds``) under the ranges of its own variables: the indices of an unrolled body share their terms,
# and the passes ask about each again.  A node simplified to itself is remembered as ``_SAME`` (a node
# holding itself would be a reference cycle).
_SAME = object()


def bounds(e, ranges: Ranges) -> tuple[int, int] | None:
    """Inclusive integer bounds of ``e``, or None if unknown."""
    if not isinstance(e, E.Expr):
        e = E.as_expr(e)
    if e.is_const:
        return (e.value, e.value) if e.is_int else None
    if e.is_var:
        return ranges.get(e)
    # (the recursion asks ``bounds`` of the terms and factors directly: the commonest question the passes
    # ask, and the sums and products of an address are walked for it every time)
    if e.is_add:
        lo = hi = 0
        for a in e.args:
            b = ranges.get(a) if a.is_var else bounds(a, ranges)
            if b is None:
                return None
            lo, hi = lo + b[0], hi + b[1]
        return (lo, hi)
    if e.is_mul:
        acc = (1, 1)
        for a in e.args:
            if a.is_const:
                v = a.value
                if not isinstance(v, int):
                    return None
                b = (v, v)
            else:
                b = ranges.get(a) if a.is_var else bounds(a, ranges)
                if b is None:
                    return None
            p = (acc[0] * b[0], acc[0] * b[1], acc[1] * b[0], acc[1] * b[1])
            acc = (min(p), max(p))
        return acc
    if isinstance(e, DIVMOD):
        entry = e._bounds
        if entry is None:
            entry = e._bounds = (tuple(e.free_vars), {})
        key = tuple([ranges.get(s) for s in entry[0]])
        hit = entry[1].get(key)
        if hit is None:
            hit = entry[1][key] = _division_bounds(e, ranges) or False
        return hit or None
    if e.is_pow:
        b = bounds(e.args[0], ranges)
        if b is None:
            return None
        k = e.args[1].value
        ends = (b[0] ** k, b[1] ** k)
        if k % 2 == 0 and b[0] <= 0 <= b[1]:
            return (0, max(ends))
        return (min(ends), max(ends))
    if isinstance(e, E.CLoad):
        return (0, e.args[2].value - 1)
    if isinstance(e, (E.Max, E.Min)):
        bs = [bounds(a, ranges) for a in e.args]
        if None in bs:
            return None
        f = max if isinstance(e, E.Max) else min
        return (f(b[0] for b in bs), f(b[1] for b in bs))
    return None


def difference_bounds(x, y, ranges: Ranges) -> tuple[int, int] | None:
    """``bounds(x - y, ranges)`` without building ``x - y``: the terms of both with like terms collected,
    as the canonical difference holds them, their bounds added.  The guards ask it of every fact against
    every bound they try to prove (a conditional read's refinement built each difference only to bound it)."""
    coeffs: dict = {}
    for e, sign in ((E.as_expr(x), 1), (E.as_expr(y), -1)):
        for t in E.terms_of(e):
            k, rest = E.coeff_and_rest(t)
            coeffs[rest] = coeffs.get(rest, 0) + sign * k
    lo = hi = 0
    for rest, k in coeffs.items():
        if not k:
            continue
        if not isinstance(k, int):
            return None
        b = ranges.get(rest) if rest.is_var else bounds(rest, ranges)
        if b is None:
            return None
        if k > 0:
            lo, hi = lo + k * b[0], hi + k * b[1]
        else:
            lo, hi = lo + k * b[1], hi + k * b[0]
    return (lo, hi)


def _division_bounds(e, ranges: Ranges):
    num, d = e.args[0], e.args[1].value
    b = bounds(num, ranges)
    if isinstance(e, (E.FloorDiv, E.CDiv)):
        return None if b is None else (b[0] // d, b[1] // d)
    if b is not None and 0 <= b[0] and b[1] < d:
        return b
    return (0, d - 1)


def _split_terms(num: E.Expr, d: int) -> tuple[E.Expr, E.Expr]:
    """``num = d * q + r`` where ``q`` collects the terms whose coefficient ``d`` divides."""
    q, r = [], []
    for t in E.terms_of(num):
        c, rest = (t.value, E.ONE) if t.is_const else E.coeff_and_rest(t)
        if isinstance(c, int) and c % d == 0:
            q.append(E.scale(rest, c // d))
        else:
            r.append(t)
    return E.add(q), E.add(r)


@lru_cache(maxsize=4096)
def _divisors_above_one(d: int) -> tuple[int, ...]:
    """The divisors of ``d`` above 1, largest first."""
    return tuple(k for k in range(d, 1, -1) if d % k == 0)


def _small_remainder(num: E.Expr, d: int, ranges: Ranges):
    """``(a, big, small)`` for the largest ``a > 1`` dividing ``d`` such that ``num = big + small``, every
    coefficient of ``big`` a multiple of ``a`` and ``small`` in ``[0, a)``; None if there is none."""
    if num is E.ZERO:
        return None
    terms = E.terms_of(num)
    coeffs = [t.value if t.is_const else E.coeff_and_rest(t)[0] for t in terms]
    coeffs = [c if isinstance(c, int) else None for c in coeffs]
    term_bounds: list = [False] * len(terms)
    for a in _divisors_above_one(d):
        big = [c is not None and c % a == 0 for c in coeffs]
        if all(big) or not any(big):
            continue
        lo = hi = 0
        for k, t in enumerate(terms):
            if big[k]:
                continue
            b = term_bounds[k]
            if b is False:
                b = term_bounds[k] = bounds(t, ranges)
            if b is None:
                break
            lo, hi = lo + b[0], hi + b[1]
        else:
            if lo >= 0 and hi < a:
                return (a, E.add(t for t, x in zip(terms, big) if x), E.add(t for t, x in zip(terms, big) if not x))
    return None


def _nonneg(num: E.Expr, d: int, ranges: Ranges):
    """``(num + k*d, k)`` with ``k >= 0`` the smallest shift that makes the dividend provably
    non-negative, or None when ``num`` has no known lower bound."""
    b = bounds(num, ranges)
    if b is None:
        return None
    k = 0 if b[0] >= 0 else -(b[0] // d)
    return E.plus(num, k * d), k


def _integer_valued(t: E.Expr) -> bool:
    """Whether sympy knows the term to be an integer (its loop counters it does not): a quotient,
    remainder or load, or an integer multiple or product of them."""
    c, rest = E.coeff_and_rest(t)
    return isinstance(c, int) and all(isinstance(f, (E.CDiv, E.CMod, E.CLoad, E.FloorDiv)) for f in E.factors_of(rest))


def _floor_of(num: E.Expr, d: int) -> E.Expr:
    """``floor(num / d)`` of a dividend of unknown sign, as sympy's ``floor`` evaluates it: the terms it
    knows to be integer multiples of ``d`` outside."""
    out, inner = [], []
    for t in E.terms_of(num):
        if not t.is_const and _integer_valued(t) and E.coeff_and_rest(t)[0] % d == 0:
            out.append(E.scale(t, Fraction(1, d)))
        else:
            inner.append(t)
    return E.add(out + [E.floordiv(E.add(inner), d)])


def fdiv(num, d: int, ranges: Ranges) -> E.Expr:
    """Floor division of an integer expression by a positive integer, simplified."""
    num = E.as_expr(num)
    if d == 1:
        return num
    if isinstance(num, (E.FloorDiv, E.CDiv)):  # floor(floor(x/a)/d) = floor(x/(a*d))
        return fdiv(num.args[0], num.args[1].value * d, ranges)
    # Split off the terms d divides only when what remains is provably non-negative: C's truncating
    # division agrees with floor on non-negative operands only.
    q, r = _split_terms(num, d)
    b = bounds(r, ranges)
    if b is not None and b[0] // d == b[1] // d:
        return E.plus(q, b[0] // d)
    if b is not None and b[0] >= 0 and q is not E.ZERO:
        return E.add((q, fdiv(r, d, ranges)))
    # num = a*X + R with a | d and 0 <= R < a: floor(num/d) = floor(X/(d/a)).  This is what makes the
    # lanes of a vector (4*i + t, t < 4) land in the same window row.
    split = _small_remainder(num, d, ranges)
    if split is not None:
        a, big, _ = split
        return fdiv(E.scale(big, Fraction(1, a)), d // a, ranges)
    g = gcd(_content(num), d)
    if g > 1:  # floor(2*x/4) = floor(x/2)
        return fdiv(E.scale(num, Fraction(1, g)), d // g, ranges)
    shifted = _nonneg(num, d, ranges)
    if shifted is None:
        return _floor_of(num, d)
    a, k = shifted
    return E.plus(E.cdiv(a, d), -k)  # floor((a + k*d)/d) - k = floor(a/d)


def _content(num: E.Expr) -> int:
    return reduce(gcd, [t.value if t.is_const else E.coeff_and_rest(t)[0] for t in E.terms_of(num)], 0)


def fmod(num, d: int, ranges: Ranges) -> E.Expr:
    """``num mod d`` for an integer expression and a positive integer, simplified."""
    num = E.as_expr(num)
    if d == 1:
        return E.ZERO
    if isinstance(num, (E.Mod, E.CMod)) and num.args[1].value % d == 0:
        return fmod(num.args[0], d, ranges)  # (x mod a*d) mod d = x mod d
    _, r = _split_terms(num, d)
    b = bounds(r, ranges)
    if b is not None and b[0] // d == b[1] // d:
        return E.plus(r, -(b[0] // d) * d)
    split = _small_remainder(num, d, ranges)
    if split is not None:  # (a*X + R) mod (a*m) = a*(X mod m) + R
        a, big, small = split
        return E.add((E.scale(fmod(E.scale(big, Fraction(1, a)), d // a, ranges), a), small))
    if b is not None and b[0] >= 0:
        c = E.without_constant(r)[1]  # (x + 9) mod 4 = (x + 1) mod 4 while the dividend stays non-negative
        if isinstance(c, int) and c >= d and b[0] - (c - c % d) >= 0:
            r = E.plus(r, -(c - c % d))
        return E.cmod(r, d)
    shifted = _nonneg(num, d, ranges)
    if shifted is None:
        return mod_of(num, d)
    return E.cmod(shifted[0], d)  # (a + k*d) mod d = a mod d


def mod_of(num: E.Expr, d: int) -> E.Expr:
    """``num mod d`` of a dividend of unknown sign, as sympy's ``Mod`` evaluates it: the constant reduced
    into ``[0, d)``, a factor common to the dividend and ``d`` taken out (``(2x + 4) mod 6`` is
    ``2 * ((x + 2) mod 3)``)."""
    rest, c = E.without_constant(num)
    if isinstance(c, int) and not 0 <= c < d:
        num = E.plus(rest, c % d)
    g = gcd(_content(num), d)
    if g > 1:
        return E.scale(E.mod(E.scale(num, Fraction(1, g)), d // g), g)
    return E.mod(num, d)


def simplify(e, ranges: Ranges) -> E.Expr:
    """Simplify an index expression or condition bottom-up using ``ranges``."""
    if not isinstance(e, E.Expr):
        e = E.as_expr(e)
    if not e.args:
        if e.is_var:
            r = ranges.get(e)
            return E.const(r[0]) if r is not None and r[0] == r[1] else e
        return e
    # (the memo written out here, not a helper called with a closure: every node of every index passes
    # here, most of them answered by the memo)
    entry = e._simplified
    if entry is None:
        entry = e._simplified = (tuple(e.free_vars), {})
    key = tuple([ranges.get(s) for s in entry[0]])
    hit = entry[1].get(key)
    if hit is None:
        hit = _simplify(e, ranges)
        entry[1][key] = _SAME if hit is e else hit
        return hit
    return e if hit is _SAME else hit


def _simplify(e: E.Expr, ranges: Ranges) -> E.Expr:
    if e.is_cond:
        return _simplify_condition(e, ranges)
    if e.is_pow or isinstance(e, E.CLoad):
        return e
    args = [simplify(a, ranges) for a in e.args]
    if (e.is_add or e.is_mul) and all(a is b for a, b in zip(args, e.args)):
        return e
    return simplified_node(e, args, ranges)


def simplified_node(e: E.Expr, args: list, ranges: Ranges) -> E.Expr:
    """What simplifying a node of ``e``'s kind makes of it once its operands simplified to ``args``
    (``simplify`` bottom-up, and ``walk.substitute_simplified`` with operands it substituted)."""
    if e.is_add:
        return E.add(args)
    if e.is_mul:
        return E.mul(args)
    if isinstance(e, (E.CDiv, E.FloorDiv)):
        return fdiv(args[0], e.args[1].value, ranges)
    if isinstance(e, (E.CMod, E.Mod)):
        return fmod(args[0], e.args[1].value, ranges)
    if isinstance(e, (E.Max, E.Min)):
        return extremum(type(e), args, ranges)
    if isinstance(e, E.Rel):
        return comparison(e.op, args[0], args[1], ranges)
    if isinstance(e, E.And):
        return C.conj(args)
    if isinstance(e, E.Or):
        return C.disj(args)
    raise E.ArithError(f"cannot simplify a {type(e).__name__} from its operands")


def extremum(cls, args: list, ranges: Ranges, at_least=None) -> E.Expr:
    """``cls(*args)`` (``Max`` or ``Min``) without the arguments the ranges prove never chosen: a padded
    view's clamp ``min(n - 1, max(0, i + 1))`` is ``i + 1`` where ``i + 1`` lies in ``[0, n)``.
    ``at_least(x)``: whether ``x >= 0`` is known otherwise too (a guard's facts)."""
    def never(a, b) -> bool:  # a is never the one chosen: b is at least a (at most, for Min)
        lo = difference_bounds(b, a, ranges) if cls is E.Max else difference_bounds(a, b, ranges)
        if lo is not None and lo[0] >= 0:
            return True
        return at_least is not None and at_least(b - a if cls is E.Max else a - b)

    kept = list(args)
    for a in list(args):
        if len(kept) > 1 and any(b is not a and never(a, b) for b in kept):
            kept.remove(a)
    return O.maximum(kept) if cls is E.Max else O.minimum(kept)


def simplify_condition(c, ranges: Ranges) -> E.Cond:
    """Decide a comparison, conjunction or disjunction where the ranges allow; otherwise simplify its
    operands."""
    return simplify(c, ranges)


def _simplify_condition(c: E.Cond, ranges: Ranges) -> E.Cond:
    if isinstance(c, E.And):
        return C.conj([simplify(a, ranges) for a in c.args])
    if isinstance(c, E.Or):
        return C.disj([simplify(a, ranges) for a in c.args])
    if isinstance(c, E.Rel):
        return comparison(c.op, c.lhs, c.rhs, ranges)
    return c


_VERDICTS = {
    ">=": lambda lo, hi: (lo >= 0, hi < 0), ">": lambda lo, hi: (lo > 0, hi <= 0),
    "<=": lambda lo, hi: (hi <= 0, lo > 0), "<": lambda lo, hi: (hi < 0, lo >= 0),
    "==": lambda lo, hi: (lo == hi == 0, lo > 0 or hi < 0), "!=": lambda lo, hi: (lo > 0 or hi < 0, lo == hi == 0),
}


def comparison(op: str, lhs, rhs, ranges: Ranges) -> E.Cond:
    """``lhs op rhs`` decided by the ranges, or as ``lhs - rhs op 0`` with that difference simplified."""
    lhs, rhs = E.as_expr(lhs), E.as_expr(rhs)
    diff = simplify(lhs if rhs is E.ZERO else lhs - rhs, ranges)
    b = bounds(diff, ranges)
    if b is not None:
        yes, no = _VERDICTS[op](*b)
        if yes:
            return E.TRUE
        if no:
            return E.FALSE
    return C.rel(op, diff, E.ZERO)
