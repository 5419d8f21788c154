"""The index algebra of ``liftpy.arith`` against sympy and plain integers.

For random index expressions of the kinds views build (affine terms, nested floor divisions and moduli
by constants, extrema) and random ranges: the canonical orders are sympy's (``Basic.compare`` for the
terms of a sum and the factors of a product, ``default_sort_key``); the simplified expression has the
value of the original at every sampled point, with every variable bounded or with one unbounded; its C
text, evaluated with C's truncating ``/`` and ``%``, has that value too, and its C quotients and
remainders only see non-negative dividends.  (The byte identity of generated kernels with those of the
sympy-based algebra this one replaced was checked on the benchmark points, ``benchmarks/codegen.py``.)
"""

import ast
import random

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liftpy.arith import cond as C
from liftpy.arith import expr as E
from liftpy.arith import order, printer
from liftpy.arith.bridge import from_sympy, to_sympy
from liftpy.arith.simplify import bounds, difference_bounds, simplify
from liftpy.arith.walk import divmod_nodes, evaluate, linear_in, rebuild, substitute, substitute_simplified

NAMES = ("i", "j", "k")
VARS = tuple(E.var(n) for n in NAMES)


def _leaf():
    return st.one_of(st.sampled_from(VARS), st.integers(-6, 9).map(E.const))


def _extend(children):
    div = st.sampled_from([1, 2, 3, 4, 6, 8, 16])
    return st.one_of(
        st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
        st.tuples(children, st.sampled_from([-3, -1, 0, 1, 2, 3, 4, 8, 16])).map(lambda p: p[0] * p[1]),
        st.tuples(children, div).map(lambda p: E.floordiv(*p)),
        st.tuples(children, div).map(lambda p: E.mod(*p)),
        st.tuples(children, children, st.sampled_from([2, 4]), st.sampled_from([1, 2, 3]), st.booleans()).map(_split),
        st.tuples(children, children).map(lambda ab: order.maximum(ab) if (ab[0].free_vars or ab[1].free_vars) else ab[0]),
    )


def _split(p):
    """``(a*x + y) / (a*m)`` or its modulus: the index of a split of a joined array."""
    x, y, a, m, quotient = p
    return E.floordiv(x * a + y, a * m) if quotient else E.mod(x * a + y, a * m)


# Index expressions of the kinds views build.
EXPRS = st.recursive(_leaf(), _extend, max_leaves=7)
RANGES = st.lists(st.tuples(st.integers(-3, 6), st.sampled_from([0, 1, 2, 3, 7, 15])), min_size=3, max_size=3).map(
    lambda rs: [(lo, lo + w) for lo, w in rs])


def _points(ranges, n=12, seed=0):
    rnd = random.Random(seed)
    corners = [{v: r[0] for v, r in zip(VARS, ranges)}, {v: r[1] for v, r in zip(VARS, ranges)}]
    return corners + [{v: rnd.randint(*r) for v, r in zip(VARS, ranges)} for _ in range(n)]


class _CEval(ast.NodeTransformer):
    """The C text as Python: ``/`` and ``%`` with C's truncation, refused on negative dividends."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Div, ast.Mod)):
            fn = "_cdiv" if isinstance(node.op, ast.Div) else "_cmod"
            return ast.Call(ast.Name(fn, ast.Load()), [node.left, node.right], [])
        return node


def _c_value(text: str, env: dict) -> int:
    def checked(a, d, f):
        assert a >= 0, f"C division of {a} in {text}: truncation is not floor there"
        return f(a, d)

    names = {v.name: x for v, x in env.items()}
    names.update(_cdiv=lambda a, d: checked(a, d, int.__floordiv__), _cmod=lambda a, d: checked(a, d, int.__mod__),
                 floordiv_=lambda a, d: a // d, floormod_=lambda a, d: a % d, max=max, min=min)
    tree = ast.fix_missing_locations(_CEval().visit(ast.parse(text, mode="eval")))
    return eval(compile(tree, "<c>", "eval"), {"__builtins__": {}}, names)


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(EXPRS)
def test_canonical_order_is_sympys(ours):
    theirs = to_sympy(ours)  # (sympy's constructors, evaluated: its canonical forms)
    assert from_sympy(theirs) is ours
    if theirs.is_Add or theirs.is_Mul:
        assert [to_sympy(a) for a in ours.args] == list(theirs.args)
    assert order.sort_key(ours) == sympy.default_sort_key(theirs)


@SETTINGS
@given(EXPRS, RANGES, st.sampled_from([None, 0, 2]))
def test_simplified_value_and_c_text(e, ranges, unbounded):
    rmap = {v: r for k, (v, r) in enumerate(zip(VARS, ranges)) if k != unbounded}
    s = simplify(e, rmap)
    text = printer.to_c(s) if not s.is_const or s.is_int else None
    b = bounds(s, rmap)
    for env in _points(ranges):
        want = evaluate(e, env)
        assert evaluate(s, env) == want
        if text is not None:
            assert _c_value(text, env) == want
        if b is not None:
            assert b[0] <= want <= b[1]


@SETTINGS
@given(EXPRS, RANGES, st.integers(0, 2), st.integers(-3, 9))
def test_substitution_agrees_with_evaluation(e, ranges, which, value):
    x = VARS[which]
    sub = substitute(e, {x: value})
    assert x not in sub.free_vars
    for env in _points(ranges, 4):
        assert evaluate(sub, env) == evaluate(e, {**env, x: value})


# Conditions of the kinds guards hold: comparisons, and conjunctions and disjunctions of them.
CONDS = st.recursive(
    st.tuples(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), EXPRS, EXPRS).map(lambda p: C.rel(*p)),
    lambda parts: st.lists(parts, min_size=2, max_size=3).flatmap(lambda ps: st.sampled_from([C.conj(ps), C.disj(ps)])),
    max_leaves=4)


@SETTINGS
@given(st.one_of(EXPRS, CONDS), RANGES, st.integers(0, 2), st.sampled_from([2, 3, 4, 8]), st.integers(1, 4),
       st.integers(0, 100), st.booleans())
def test_substituting_and_simplifying_in_one_walk_is_doing_both(e, ranges, which, d, m, k, split):
    """``substitute_simplified``, given what unrolling and the trial splits give it (an expression simplified
    with its counter's range; the counter a copy's number or ``d*q + r``), is ``simplify`` of the
    substituted expression node for node.  Given anything else it keeps the values: the simplifier is not
    idempotent (simplifying ``(2*j + 1) % 4`` again finds ``2*(j % 2) + 1``), so two walks may differ in form."""
    x, q, r = VARS[which], E.var("q"), E.var("r")
    rmap = dict(zip(VARS, ranges))
    rmap[x] = (0, d * m - 1)
    simplified = simplify(e, rmap)
    del rmap[x]
    if split:
        value = q * d + r
        rmap.update({q: (0, m - 1), r: (0, d - 1)})
    else:
        value = E.const(k % (d * m))
    assert substitute_simplified(simplified, {x: value}, rmap) is simplify(substitute(simplified, {x: value}), rmap)
    got = substitute_simplified(e, {x: value}, rmap)
    rnd = random.Random(k)
    for _ in range(8):
        env = {v: rnd.randint(*b) for v, b in rmap.items()}
        assert evaluate(got, env) == evaluate(e, {**env, x: evaluate(value, env)})


@SETTINGS
@given(EXPRS, EXPRS, RANGES, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
def test_decided_conditions_are_right(a, b, ranges, op):
    rmap = dict(zip(VARS, ranges))
    c = C.conj([C.rel(op, a, b), C.rel(">=", a, 0)])
    s = simplify(c, rmap)
    for env in _points(ranges):
        assert evaluate(s, env) == evaluate(c, env)
    assert evaluate(C.negate(c), env) != evaluate(c, env)


CONDS = st.tuples(EXPRS, EXPRS, st.sampled_from(["<", "<=", ">", ">=", "==", "!="])).map(
    lambda p: C.rel(p[2], p[0], p[1]))


@SETTINGS
@given(st.lists(st.one_of(EXPRS, CONDS), min_size=2, max_size=6))
def test_ordered_is_the_order_of_the_whole_keys(items):
    # ``ordered`` compares node counts and the class part of the sort keys first, and the whole keys only
    # where those tie: the order must be the one the whole keys give.
    items = list(dict.fromkeys(items))
    assert all(order._head(x) == order.sort_key(x)[0] for x in items)
    assert order.ordered(items) == sorted(items, key=lambda x: (order.node_count(x), order.sort_key(x)))


@SETTINGS
@given(EXPRS, st.sampled_from([2, 3, 4, 6, 8, 16]))
def test_a_floor_divisions_rank_and_count_are_those_of_its_rational_sum(num, d):
    # The rank and node count of ``floor(num / d)`` are computed without building ``num / d``; they must be
    # those of that sum built.
    built = E.scale(num, E.Fraction(1, d))
    fast = E._quotient_rank(num, d)
    assert fast is None or fast == E._rank(built)
    count = order._quotient_count(num, d)
    assert count is None or count == order.node_count(built)



@SETTINGS
@given(EXPRS, EXPRS, RANGES, st.sampled_from([None, 0, 2]))
def test_the_bounds_of_a_difference_are_those_of_the_difference_built(x, y, ranges, unbounded):
    # The guards bound ``x - f`` for every fact ``f`` without building the difference; the answer must be
    # the built difference's.
    rmap = {v: r for k, (v, r) in enumerate(zip(VARS, ranges)) if k != unbounded}
    assert difference_bounds(x, y, rmap) == bounds(x - y, rmap)
    assert difference_bounds(x, x, rmap) == (0, 0)


@SETTINGS
@given(EXPRS, EXPRS, st.sampled_from([-3, -1, 2, 4, 16]))
def test_a_rebuilt_term_is_the_canonical_product(x, y, c):
    # ``rebuild`` makes a coefficient times one new factor without ``E.mul``; it must be what ``E.mul`` makes.
    e = x * c
    if e.is_mul and len(e.args) == 2 and e.args[0].is_const:
        assert rebuild(e, [e.args[0], y]) is E.mul([e.args[0], y])

def test_hash_consing_makes_equal_nodes_one():
    i, j = VARS[:2]
    assert (i * 4 + j) is (j + 4 * i)
    assert E.floordiv(2 * i + 4, 4) is E.floordiv(i + 2, 2)
    assert E.floordiv(i + 8, 4) is E.floordiv(i, 4) + 2
    assert (i + j - j) is i


def test_pickled_and_copied_nodes_are_the_nodes_alive():
    import copy
    import pickle

    i, j = VARS[:2]
    e = C.conj([C.rel("<", E.cmod(4 * i + j, 8) + E.floordiv(i - j, 3), 5), C.rel(">=", order.maximum((i, j)), 0)])
    assert pickle.loads(pickle.dumps(e)) is e
    assert copy.deepcopy(e) is e and copy.copy(e) is e


def test_lift_rules():
    i, j = VARS[:2]
    r = {i: (0, 99), j: (0, 3)}
    assert simplify(E.floordiv(4 * i + j, 4), r) is i
    assert simplify(E.mod(4 * i + j, 4), r) is j
    assert printer.to_c(simplify(E.floordiv(i + j, 8), r)) == "(i + j) / 8"
    assert printer.to_c(simplify(E.mod(j - 1, 4), r)) == "(j + 3) % 4"
    assert printer.to_c(E.floordiv(i - j, 3)) == "floordiv_(i - j, 3)"
    assert printer.to_c(simplify(E.floordiv(4 * i + j, 8), r)) == "i / 2"  # the remainder j < 4 vanishes
    assert printer.to_c(simplify(E.mod(4 * i + j, 8), r)) == "j + (i % 2) * 4"
    assert simplify(order.minimum([order.maximum([i, 0]), 99]), r) is i


def test_walks():
    i, j, k = VARS
    e = 4 * i + E.cdiv(j + k, 2) * 3
    assert linear_in(e, i) == (E.cdiv(j + k, 2) * 3, 4)
    assert linear_in(e, j) is None
    assert divmod_nodes(E.mod(E.floordiv(i, 2) + j, 3)) == (E.mod(E.floordiv(i, 2) + j, 3), E.floordiv(i, 2))
    with pytest.raises(E.ArithError):
        E.floordiv(i, 0)
    with pytest.raises(E.ArithError):
        printer.to_c(E.scale(i, E.Fraction(1, 2)))
