"""The index algebra (``liftpy.views.arith``) against plain integer arithmetic: for random index
expressions of the kind views build (affine terms, nested floor divisions and moduli by constants) and
random loop ranges, the simplified expression has the value of the original at every point of the
ranges, its C divisions and moduli only ever see non-negative dividends (so C's truncation is floor),
substitution agrees with evaluation, and decided conditions are right."""

import itertools

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.views.arith import CDiv, CMod, floor_div, floor_mod, simplify, simplify_condition, substitute

SYMS = sympy.symbols("i j k")


def value(e, env: dict) -> int:
    """``e`` at the point ``env`` in exact integers; CDiv and CMod must get non-negative dividends."""
    e = sympy.sympify(e)
    if e.is_Integer:
        return int(e)
    if e.is_Symbol:
        return env[e]
    if e.is_Add:
        return sum(value(a, env) for a in e.args)
    if e.is_Mul:
        out = sympy.Integer(1)
        for a in e.args:
            out *= a if a.is_Rational else value(a, env)
        assert out.is_Integer, e
        return int(out)
    if isinstance(e, (CDiv, CMod)):
        a, d = value(e.args[0], env), int(e.args[1])
        assert a >= 0, f"{e} divides {a} < 0 at {env}: C's truncation is not floor there"
        return a // d if isinstance(e, CDiv) else a % d
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return value(num, env) // int(den)
    if isinstance(e, sympy.Mod):
        return value(e.args[0], env) % value(e.args[1], env)
    raise AssertionError(f"unexpected node {e!r}")


@st.composite
def indices(draw, depth=3):
    """An index: an affine combination of the symbols and of smaller indices divided or reduced by a
    constant (what join, split, asVector and the copies' work sharing produce)."""
    terms = [draw(st.integers(-2, 6)) * s for s in SYMS[: draw(st.integers(1, 3))]]
    terms.append(sympy.Integer(draw(st.integers(0, 40))))
    if depth > 0 and draw(st.booleans()):
        inner = draw(indices(depth=depth - 1))
        d = draw(st.sampled_from([2, 3, 4, 8, 12, 32]))
        node = floor_div(inner, d) if draw(st.booleans()) else floor_mod(inner, d)
        if draw(st.booleans()):
            return node  # nested directly: a join of a join, a modulus of a modulus
        terms.append(draw(st.integers(1, 5)) * node)
    return sympy.Add(*terms)


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
    nested = floor_div(floor_div(e, a), b) if div else floor_mod(floor_mod(e, a * b), b)
    s = simplify(nested, ranges)
    for env in points(ranges):
        assert value(s, env) == value(nested, env), (nested, s, env)


@settings(max_examples=60)
@given(indices(), ranges_st, st.integers(0, 14))
def test_substitution_is_evaluation(e, ranges, k):
    i = SYMS[0]
    lo, hi = ranges[i]
    k = lo + k % (hi - lo + 1)  # a value the simplification was valid for
    s = simplify(e, ranges)
    sub = simplify(substitute(s, {i: sympy.Integer(k)}), {**ranges, i: (k, k)})
    for env in points({**ranges, i: (k, k)}):
        assert value(sub, env) == value(e, env), (e, sub, env)


@settings(max_examples=60)
@given(indices(), ranges_st, st.integers(0, 60))
def test_decided_conditions_are_right(e, ranges, bound):
    c = simplify_condition(sympy.Lt(e, bound), ranges)
    truth = {value(e, env) < bound for env in points(ranges)}
    if c is sympy.true:
        assert truth == {True}
    elif c is sympy.false:
        assert truth == {False}


def _small_remainder_by_definition(num, d, ranges):
    """The split ``_small_remainder`` finds, by its definition: for each divisor ``a > 1`` of ``d``,
    largest first, the terms whose coefficient ``a`` divides against the others, whose sum must lie in
    ``[0, a)``."""
    from liftpy.views.arith import bounds

    terms = sympy.Add.make_args(num)
    for a in [k for k in range(d, 1, -1) if d % k == 0]:
        big = [t for t in terms if t.as_coeff_Mul()[0].is_Integer and int(t.as_coeff_Mul()[0]) % a == 0]
        small = [t for t in terms if t not in big]
        if not big or not small or num == 0:
            continue
        b = bounds(sympy.Add(*small), ranges)
        if b is not None and b[0] >= 0 and b[1] < a:
            return a, sympy.Add(*big), sympy.Add(*small)
    return None


@given(indices(), st.sampled_from([2, 4, 6, 12, 32, 768]), ranges_st)
def test_small_remainder_is_the_largest_divisor_with_a_small_rest(e, d, ranges):
    from liftpy.views.arith import _small_remainder

    assert _small_remainder(sympy.expand(e), d, ranges) == _small_remainder_by_definition(sympy.expand(e), d, ranges)


@settings(max_examples=300)
@given(indices(), ranges_st, st.integers(0, 14), st.booleans())
def test_substituted_and_simplified_in_one_walk_is_simplified_after_substituting(e, ranges, k, simplified_first):
    """``substitute_simplified`` (unrolling's walk) gives exactly the expression ``simplify`` makes of the
    substituted index, for indices as the simplification before unrolling leaves them or as views
    build them."""
    from liftpy.views.arith import substitute_simplified

    i = SYMS[0]
    if simplified_first:
        e = simplify(e, ranges)
    rest = {s: r for s, r in ranges.items() if s is not i}
    expected = simplify(substitute(e, {i: sympy.Integer(k)}), rest)
    assert substitute_simplified(e, {i: sympy.Integer(k)}, rest) == expected


@settings(max_examples=200)
@given(indices(), ranges_st, st.sampled_from([2, 3, 4, 8]), st.integers(1, 4), st.booleans())
def test_a_split_counter_substituted_and_simplified_in_one_walk(e, ranges, d, q_count, simplified_first):
    """The same for a counter split into two (``i = d*q + r``, the division pass's trial splits)."""
    from liftpy.views.arith import substitute_simplified

    i = SYMS[0]
    q, r = sympy.symbols("q r")
    if simplified_first:
        e = simplify(e, ranges)
    inner = {s: b for s, b in ranges.items() if s is not i}
    inner[q], inner[r] = (0, q_count - 1), (0, d - 1)
    mapping = {i: d * q + r}
    assert substitute_simplified(e, mapping, inner) == simplify(substitute(e, mapping), inner)
