"""The index algebra (``liftpy.arith``) against plain integer arithmetic: for random index expressions
of the kind views build (affine terms, nested floor divisions and moduli by constants) and random loop
ranges, the simplified expression has the value of the original at every point of the ranges, its C
divisions and moduli only ever see non-negative dividends (so C's truncation is floor), substitution
agrees with evaluation, and decided conditions are right."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy import arith as A
from liftpy.arith import simplify, simplify_condition, substitute
from liftpy.arith.simplify import _small_remainder

SYMS = tuple(A.var(n) for n in "ijk")


def value(e, env: dict) -> int:
    """``e`` at the point ``env`` in exact integers; CDiv and CMod must get non-negative dividends."""
    if isinstance(e, (A.CDiv, A.CMod)):
        a = value(e.args[0], env)
        assert a >= 0, f"{e} divides {a} < 0 at {env}: C's truncation is not floor there"
    if e.args and not isinstance(e, A.Cond):
        for a in e.args:
            value(a, env)  # (the check above, for nested quotients)
    return A.evaluate(e, env)


@st.composite
def indices(draw, depth=3):
    """An index: an affine combination of the symbols and of smaller indices divided or reduced by a
    constant (what join, split, asVector and the copies' work sharing produce)."""
    terms = [s * draw(st.integers(-2, 6)) for s in SYMS[: draw(st.integers(1, 3))]]
    terms.append(draw(st.integers(0, 40)))
    if depth > 0 and draw(st.booleans()):
        inner = draw(indices(depth=depth - 1))
        d = draw(st.sampled_from([2, 3, 4, 8, 12, 32]))
        node = A.floordiv(inner, d) if draw(st.booleans()) else A.mod(inner, d)
        if draw(st.booleans()):
            return node  # nested directly: a join of a join, a modulus of a modulus
        terms.append(node * draw(st.integers(1, 5)))
    return A.add(terms)


ranges_st = st.tuples(*[st.tuples(st.integers(0, 5), st.integers(0, 9)) for _ in SYMS]).map(
    lambda rs: {s: (lo, lo + span) for s, (lo, span) in zip(SYMS, rs)})


def points(ranges):
    for vals in itertools.product(*[range(lo, hi + 1) for lo, hi in ranges.values()]):
        yield dict(zip(ranges, vals))


@settings(max_examples=150)
@given(indices(), ranges_st)
@pytest.mark.slow
def test_simplified_indices_keep_their_values(e, ranges):
    s = simplify(e, ranges)
    for env in points(ranges):
        assert value(s, env) == value(e, env), (e, s, env)


@settings(max_examples=80)
@given(indices(depth=1), st.sampled_from([2, 3, 4, 8]), st.sampled_from([2, 3, 4, 7]), st.booleans(), ranges_st)
def test_nested_divisions_and_moduli_fold(e, a, b, div, ranges):
    """``(x / a) / b`` and ``(x % (a*b)) % b``: what a join of a join and a split of a modulus build."""
    nested = A.floordiv(A.floordiv(e, a), b) if div else A.mod(A.mod(e, a * b), b)
    s = simplify(nested, ranges)
    assert not isinstance(s, (A.FloorDiv, A.Mod, A.CDiv, A.CMod)) or not isinstance(s.args[0], type(s))
    for env in points(ranges):
        assert value(s, env) == value(nested, env), (nested, s, env)


@settings(max_examples=60)
@given(indices(), ranges_st, st.integers(0, 14))
def test_substitution_is_evaluation(e, ranges, k):
    i = SYMS[0]
    lo, hi = ranges[i]
    k = lo + k % (hi - lo + 1)  # a value the simplification was valid for
    s = simplify(e, ranges)
    sub = simplify(substitute(s, {i: k}), {**ranges, i: (k, k)})
    for env in points({**ranges, i: (k, k)}):
        assert value(sub, env) == value(e, env), (e, sub, env)


@settings(max_examples=60)
@given(indices(), ranges_st, st.integers(0, 60))
def test_decided_conditions_are_right(e, ranges, bound):
    c = simplify_condition(A.rel("<", e, bound), ranges)
    truth = {value(e, env) < bound for env in points(ranges)}
    if c is A.TRUE:
        assert truth == {True}
    elif c is A.FALSE:
        assert truth == {False}


def _small_remainder_by_definition(num, d, ranges):
    """The split ``_small_remainder`` finds, by its definition: for each divisor ``a > 1`` of ``d``,
    largest first, the terms whose coefficient ``a`` divides against the others, whose sum must lie in
    ``[0, a)``."""
    terms = A.terms_of(num)

    def coeff(t):
        return t.value if t.is_const else A.coeff_and_rest(t)[0]

    for a in [k for k in range(d, 1, -1) if d % k == 0]:
        big = [t for t in terms if isinstance(coeff(t), int) and coeff(t) % a == 0]
        small = [t for t in terms if t not in big]
        if not big or not small or num == 0:
            continue
        b = A.bounds(A.add(small), ranges)
        if b is not None and b[0] >= 0 and b[1] < a:
            return a, A.add(big), A.add(small)
    return None


@given(indices(), st.sampled_from([2, 4, 6, 12, 32, 768]), ranges_st)
def test_small_remainder_is_the_largest_divisor_with_a_small_rest(e, d, ranges):
    assert _small_remainder(e, d, ranges) == _small_remainder_by_definition(e, d, ranges)
