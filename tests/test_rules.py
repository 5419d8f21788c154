"""Every rewrite rule preserves semantics (hypothesis property tests): map, reduction, zip and identity
rules, lowering and memory rules, rules written in text.

Each test builds random well-typed programs in which its rule applies (random sizes, random functions,
random context), applies the rule at every position where it applies, gives the new tuning parameters
valid values, and compares the reference interpreter's results before and after: exactly for integer
data, within float tolerance for float data.  The tilings, register blocking, split-K and the pipeline
(kernel) rules are in tests/test_rules_tiling.py, the normal forms in tests/test_rules_normal.py, the
cooperative rows in tests/test_rules_rows.py; what they share in tests/rule_checks.py, whose families
``test_every_library_rule_has_a_family`` keeps honest.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from liftpy import (
    Array, Float, Int, add, fmax, fmin, id, join, make_program, map, mapGlb, mapLcl, mapSeq, mapWrg, mult,
    multAndSumUp, reduce, reduceSeq, relu, split, sub, transpose, zip,
)
from liftpy.ir import dsl
from liftpy.ir.userfun import BUILTINS, userfun
from liftpy.rewrite import algorithmic as A
from liftpy.rewrite import lowering as L
from liftpy.rewrite.blocking import register_block2D
from liftpy.rewrite.rule import applications
from liftpy.rewrite.text_rules import parse_rules

from rule_checks import H, INT_UNARY, M, N, RULE_SETTINGS, W, checker, floats, ints, missing, two_d, whole_reduction

TESTED: set[str] = set()
checked = checker(TESTED)


# ----------------------------------------------------------------------------------- map rules


@RULE_SETTINGS
@given(st.integers(1, 12), st.sampled_from(range(4)), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_map_fusion(n, fi, gi, nested, seed):
    f, g = INT_UNARY[fi], INT_UNARY[gi]
    rng = np.random.default_rng(seed)
    if nested:
        prog = make_program("p", [("xs", Array(Int, 3, N))], lambda xs: map(lambda row: map(f, map(g, row)), xs))
        inputs = [ints(rng, (3, n))]
    else:
        prog = make_program("p", [("xs", Array(Int, N))], lambda xs: map(f, map(g, xs)))
        inputs = [ints(rng, (n,))]
    checked(A.map_fusion, prog, inputs)


@RULE_SETTINGS
@given(st.integers(1, 12), st.sampled_from(range(4)), st.sampled_from(range(4)), st.integers(0, 10**6))
def test_map_fission(n, fi, gi, seed):
    f, g = INT_UNARY[fi], INT_UNARY[gi]
    prog = make_program("p", [("xs", Array(Int, N))], lambda xs: map(lambda y: f(g(y)), xs))
    checked(A.map_fission, prog, [ints(np.random.default_rng(seed), (n,))])


@RULE_SETTINGS
@given(st.integers(1, 12), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_split_join(n, fi, two, seed):
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)
    if two:
        prog = make_program("p", [("xs", Array(Int, N, 2))], lambda xs: map(lambda r: reduce(add, 0, r), xs))
        inputs = [ints(rng, (n, 2))]
    else:
        prog = make_program("p", [("xs", Array(Int, N))], lambda xs: map(f, xs))
        inputs = [ints(rng, (n,))]
    checked(A.split_join, prog, inputs)


@RULE_SETTINGS
@given(st.integers(1, 12), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_split_strided(n, fi, zipped, seed):
    """Elements k, k + s, k + 2s, .. in turn per outer iteration, written back in order: the same results."""
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)
    if zipped:
        prog = make_program("p", [("xs", Array(Int, N)), ("ys", Array(Int, N))], lambda xs, ys: map(lambda p: add(f(p[0]), p[1]), zip(xs, ys)))
        inputs = [ints(rng, (n,)), ints(rng, (n,))]
    else:
        prog = make_program("p", [("xs", Array(Int, N, 3))], lambda xs: map(lambda r: reduce(add, 0, r), xs))
        inputs = [ints(rng, (n, 3))]
    checked(A.split_strided, prog, inputs)


# ----------------------------------------------------------------------------------- reductions


@RULE_SETTINGS
@given(st.integers(1, 12), st.booleans(), st.integers(-3, 3), st.integers(0, 10**6))
def test_partial_reduce(n, dot, init, seed):
    checked(A.partial_reduce, *whole_reduction(n, dot, init, seed))


@RULE_SETTINGS
@given(st.integers(1, 12), st.sampled_from(["max", "min"]), st.booleans(), st.integers(0, 10**6))
def test_partial_reduce_of_a_maximum_or_minimum(n, op, as_float, seed):
    """The chunks start from the operation's identity (the lowest or highest value), not from 0: with
    all values negative a maximum would otherwise come out 0."""
    from liftpy.ir.userfun import BUILTINS

    rng = np.random.default_rng(seed)
    f = BUILTINS[op]
    t, data = (Float, floats) if as_float else (Int, ints)
    start = (-1e30 if op == "max" else 1e30) if as_float else (-100 if op == "max" else 100)
    prog = make_program("p", [("a", Array(t, N))], lambda a: reduce(lambda acc, x: f(acc, mult(x, x) if op == "min" else sub(x, dsl.lit(9, t))),
                                                                     dsl.lit(start, t), a))
    results = checked(A.partial_reduce, prog, [data(rng, (n,))])
    assert all(r.ok for r in results)


@RULE_SETTINGS
@given(st.sampled_from([(6, 2), (8, 4), (12, 3), (10, 5)]), st.sampled_from(["max", "min"]), st.integers(0, 10**6))
def test_coalesce_of_a_maximum(nc, op, seed):
    from liftpy.ir.userfun import BUILTINS

    n, c = nc
    f = BUILTINS[op]
    rng = np.random.default_rng(seed)
    prog = make_program("p", [("a", Array(Float, N))], lambda a: reduce(
        f, -1e30 if op == "max" else 1e30, join(map(lambda chunk: reduce(lambda acc, x: f(acc, mult(x, x)), -1e30 if op == "max" else 1e30, chunk),
                                                     split(c, a)))))
    checked(A.coalesce, prog, [floats(rng, (n,))])


@RULE_SETTINGS
@given(st.sampled_from([(6, 2), (6, 3), (8, 4), (12, 3), (12, 4), (9, 3), (10, 5)]), st.booleans(), st.integers(0, 10**6))
def test_coalesce(nc, as_float, seed):
    n, c = nc
    rng = np.random.default_rng(seed)
    t = Float if as_float else Int
    zero = 0.0 if as_float else 0
    prog = make_program("p", [("a", Array(t, N)), ("b", Array(t, N))], lambda a, b: reduce(
        add, zero, join(map(lambda chunk: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), zero, chunk), split(c, zip(a, b))))))
    data = floats if as_float else ints
    checked(A.coalesce, prog, [data(rng, (n,)), data(rng, (n,))])


@RULE_SETTINGS
@given(st.sampled_from([4, 8, 12, 16]), st.floats(-2, 2, allow_nan=False), st.integers(0, 10**6))
def test_vectorize_reduce(n, init, seed):
    rng = np.random.default_rng(seed)
    prog = make_program("p", [("a", Array(Float, N)), ("b", Array(Float, N))],
                        lambda a, b: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), float(init), zip(a, b)))
    checked(A.vectorize_reduce, prog, [floats(rng, (n,)), floats(rng, (n,))])


# What a reduction combines of each element: the element itself, an average's, a sum of squares', a largest
# magnitude's, a difference's from a constant (``_lanewise``'s functions over the element and float constants).
ELEMENTS = {
    "x": lambda x: x,
    "x * 0.25": lambda x: x * 0.25,
    "x * x": lambda x: x * x,
    "fabs(x)": lambda x: BUILTINS["fabs"](x),
    "max(x - 0.5, -x)": lambda x: BUILTINS["max"](x - 0.5, BUILTINS["neg"](x)),
    "sqrt(fabs(x))": lambda x: BUILTINS["sqrt"](BUILTINS["fabs"](x)),
    "exp(-x) / 3": lambda x: BUILTINS["div"](BUILTINS["exp"](BUILTINS["neg"](x)), 3.0),
}


@RULE_SETTINGS
@given(st.sampled_from([8, 16, 24, 32]), st.sampled_from(["add", "max", "min"]), st.sampled_from([4, 8]),
       st.sampled_from(sorted(ELEMENTS)), st.floats(-2, 2, allow_nan=False), st.integers(0, 10**6))
def test_vectorize_sum(n, op, width, element, init, seed):
    """A sum, maximum or minimum of floats, or of a function of each (``x * 0.25f``, ``x * x``), four or
    eight at a time: the interpreter's results before and after agree (the maxima and minima exactly;
    ``check_rule``'s tolerance for the sums' other order), whatever the initial value; a known length the
    width does not divide is left alone."""
    rng = np.random.default_rng(seed)
    f, h = BUILTINS[op], ELEMENTS[element]
    rule = {4: A.vectorize_sum, 8: A.vectorize_sum_wide}[width]
    prog = make_program("p", [("a", Array(Float, N))], lambda a: reduce(lambda acc, x: f(acc, h(x)), float(init), a))
    results = checked(rule, prog, [floats(rng, (n,))])
    if op != "add":
        assert all(r.max_error == 0.0 for r in results)
    for odd in (9, 12 if width == 8 else 6):
        short = make_program("p", [("a", Array(Float, odd))], lambda a: reduce(lambda acc, x: f(acc, h(x)), 0.0, a))
        assert not applications(short, [rule])


def test_vectorize_sum_leaves_what_vectors_may_not_compute():
    """Only the arithmetic ``_lanewise`` knows to compute lane by lane on vectors is taken: not a user
    function written for scalars (its C body may not build for vectors), a comparison or a conversion
    (not checked on vectors), nor an element function of another variable than the element (a scalar of
    an enclosing map, which would need a vector of its own)."""
    scalar_body = userfun("halfOf", [("v", Float)], Float, "return v / 2.0f;", lambda v: v / 2)
    kept = {
        "a user function": lambda acc, x: BUILTINS["add"](acc, scalar_body(x)),
        "a comparison": lambda acc, x: BUILTINS["add"](acc, BUILTINS["lt"](x, 0.0)),
        "an int conversion": lambda acc, x: BUILTINS["add"](acc, BUILTINS["toFloat"](BUILTINS["toInt"](x))),
    }
    for name, body in kept.items():
        prog = make_program("p", [("a", Array(Float, N))], lambda a: reduce(body, 0.0, a))
        assert not applications(prog, [A.vectorize_sum, A.vectorize_sum_wide]), name
    scaled = make_program("p", [("a", Array(Float, N)), ("s", Array(Float, M))],
                          lambda a, s: map(lambda v: reduce(lambda acc, x: add(acc, mult(x, v)), 0.0, a), s))
    assert not applications(scaled, [A.vectorize_sum, A.vectorize_sum_wide])
    # while the same sum scaled by a constant is taken
    const = make_program("p", [("a", Array(Float, N)), ("s", Array(Float, M))],
                         lambda a, s: map(lambda v: reduce(lambda acc, x: add(acc, mult(x, 2.0)), v, a), s))
    assert applications(const, [A.vectorize_sum])


@RULE_SETTINGS
@given(st.sampled_from([2, 4, 6, 8, 12, 16]), st.booleans(), st.integers(0, 10**6))
def test_vectorize_map(n, zipped, seed):
    rng = np.random.default_rng(seed)
    if zipped:
        prog = make_program("p", [("a", Array(Float, N)), ("b", Array(Float, N))], lambda a, b: map(lambda p: add(p[0], p[1]), zip(a, b)))
        inputs = [floats(rng, (n,)), floats(rng, (n,))]
    else:
        prog = make_program("p", [("a", Array(Float, N))], lambda a: map(relu, a))
        inputs = [floats(rng, (n,))]
    checked(A.vectorize_map, prog, inputs)


# ----------------------------------------------------------------------------------- zip and identities


@RULE_SETTINGS
@given(st.sampled_from([(4, 2), (6, 3), (6, 2), (8, 4), (5, 5), (3, 1)]), st.integers(0, 10**6))
def test_split_zip_and_join_zip(nc, seed):
    n, c = nc
    rng = np.random.default_rng(seed)
    inputs = [ints(rng, (n,)), ints(rng, (n,))]
    prog = make_program("p", [("a", Array(Int, N)), ("b", Array(Int, N))],
                        lambda a, b: map(lambda ch: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0, ch), split(c, zip(a, b))))
    checked(A.split_zip, prog, inputs)
    prog2 = make_program("p", [("a", Array(Int, N)), ("b", Array(Int, N))], lambda a, b: map(
        lambda p: mult(p[0], p[1]), join(map(lambda q: zip(q[0], q[1]), zip(split(c, a), split(c, b))))))
    checked(A.join_zip, prog2, inputs)


@RULE_SETTINGS
@given(two_d(1, 6), st.integers(0, 10**6))
def test_identities(hw, seed):
    h, w = hw
    rng = np.random.default_rng(seed)
    x = ints(rng, (h, w))
    p1 = make_program("p", [("x", Array(Int, H, W))], lambda x_: map(lambda r: map(lambda v: add(v, 1), r), transpose(transpose(x_))))
    checked(A.transpose_twice, p1, [x])
    p2 = make_program("p", [("x", Array(Int, H, W))], lambda x_: map(lambda v: add(v, 1), join(split(W, join(x_)))))
    checked(A.join_split, p2, [x])
    checked(A.split_of_join, p2, [x])
    p3 = make_program("p", [("x", Array(Int, H, W))], lambda x_: map(lambda r: reduce(add, 0, map(id, r)), x_))
    checked(A.map_identity, p3, [x])


# ----------------------------------------------------------------------------------- lowering and memory


def _nest():
    return make_program("p", [("x", Array(Int, H, W)), ("v", Array(Int, W))], lambda x, v: map(
        lambda row: map(lambda e: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), e, zip(row, v)), row), x))


@pytest.mark.parametrize("rule", L.LOWERING_RULES, ids=lambda r: r.name)
def test_lowering_rules(rule):
    @RULE_SETTINGS
    @given(two_d(1, 6), st.integers(0, 10**6))
    def run(hw, seed):
        h, w = hw
        rng = np.random.default_rng(seed)
        prog = _nest()
        if rule.name.startswith("unroll"):
            prog = make_program("p", [("x", Array(Int, H, W)), ("v", Array(Int, W))], lambda x, v: mapGlb(0,
                lambda row: mapSeq(lambda e: reduceSeq(lambda acc, p: multAndSumUp(acc, p[0], p[1]), e, zip(row, v)), row), x))
        if rule.name == "reduceLcl":
            # a work-group's reduction over values its items computed, as a tree (ints: exactly the fold's)
            op = [add, fmax, fmin][seed % 3]
            prog = make_program("p", [("x", Array(Int, H, W))], lambda x: mapWrg(0, lambda row: reduce(
                op, 7, map(lambda e: mult(e, 3), row)), x))
            checked(rule, prog, [ints(rng, (h, w))])
            return
        if rule.name.startswith("mapLcl"):
            prog = make_program("p", [("x", Array(Int, H, W)), ("v", Array(Int, W))], lambda x, v: mapWrg(rule.name[-1] == "0" and 1 or 0,
                lambda row: map(lambda e: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), e, zip(row, v)), row), x))
        checked(rule, prog, [ints(rng, (h, w)), ints(rng, (w,))])

    run()


@RULE_SETTINGS
@given(two_d(1, 6), st.integers(0, 10**6))
def test_private_accumulator(hw, seed):
    h, w = hw
    rng = np.random.default_rng(seed)
    prog = make_program("p", [("x", Array(Int, H, W))], lambda x: mapGlb(0, lambda r: reduceSeq(add, 0, r), x))
    checked(L.private_accumulator, prog, [ints(rng, (h, w))])


@RULE_SETTINGS
@given(two_d(1, 6), st.integers(0, 10**6))
def test_let_private(hw, seed):
    h, w = hw
    rng = np.random.default_rng(seed)
    prog = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, 3, W))], lambda x, y: mapGlb(0, lambda row: mapSeq(
        lambda yr: reduceSeq(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0, zip(row, yr)), y), x))
    checked(L.let_private, prog, [ints(rng, (h, w)), ints(rng, (3, w))])


@RULE_SETTINGS
@given(two_d(1, 6), st.integers(0, 10**6))
def test_local_stage(hw, seed):
    h, w = hw
    rng = np.random.default_rng(seed)
    prog = make_program("p", [("x", Array(Int, H, W))], lambda x: mapWrg(0, lambda row: mapLcl(0,
        lambda e: reduceSeq(lambda acc, v: multAndSumUp(acc, v, e), 0, row), row), x))
    checked(L.local_stage, prog, [ints(rng, (h, w))])


# ----------------------------------------------------------------------------------- rules in text


TEXT_RULES = """
rule fuseText: map(f, map(g, x)) => map(fun(y) => f(g(y)), x)
rule splitJoinText: map(f, x) => join(map(fun(c) => map(f, c), split(n, x)))
rule transposeText: transpose(transpose(x)) => x
"""


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.integers(0, 10**6))
def test_text_rules(hw, fi, seed):
    h, w = hw
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)
    fuse, sj, tt = parse_rules(TEXT_RULES)
    x = ints(rng, (h, w))
    prog = make_program("p", [("x", Array(Int, H, W))], lambda x_: map(lambda r: map(f, map(f, r)), transpose(transpose(x_))))
    for rule in (fuse, sj, tt):
        checked(rule, prog, [x])


def test_a_rule_given_twice_is_one_macro_and_two_rules_of_one_name_are_refused():
    """The same rules file given twice doubled the macros: a variant could apply the rule twice as two
    macros (12 variants of a map became 17)."""
    from liftpy.errors import RewriteError
    from liftpy.rewrite.explore import ExploreOptions, explore_all

    prog = make_program("p", [("x", Array(Float, N))], lambda x_: map(relu, x_))
    once_ = explore_all(prog, ExploreOptions(extra_rules=tuple(parse_rules(TEXT_RULES)[1:2])))[0]
    twice = explore_all(prog, ExploreOptions(extra_rules=tuple(parse_rules(TEXT_RULES)[1:2] * 2)))[0]
    assert len(twice) == len(once_)
    other = parse_rules("rule splitJoinText: map(f, x) => map(f, x)")
    with pytest.raises(RewriteError, match="two different rules have the name splitJoinText"):
        ExploreOptions(extra_rules=tuple(parse_rules(TEXT_RULES)[1:2]) + tuple(other))


@RULE_SETTINGS
@given(st.integers(1, 12), st.integers(-3, 3), st.integers(0, 10**6))
def test_tile_all_pairs(n, init, seed):
    """Every element of one array folds over all of another (here ints, acc + p * q - q): the folds
    are only grouped in tiles, never reordered, so the result is exactly the original's."""
    from liftpy.rewrite.allpairs import tile_all_pairs

    rng = np.random.default_rng(seed)
    prog = make_program("p", [("ps", Array(Int, N)), ("qs", Array(Int, M))], lambda ps, qs: map(
        lambda p: reduce(lambda acc, q: sub(multAndSumUp(acc, p, q), q), init, qs), ps))
    checked(tile_all_pairs, prog, [ints(rng, (n,)), ints(rng, ((n % 5) + 2,))])


def test_every_rule_of_this_file_is_tested():
    """Runs last in this file (pytest keeps file order): each of its rules met its property test."""
    assert not missing("test_rules.py", TESTED), f"rules without a property test run: {missing('test_rules.py', TESTED)}"


def test_every_library_rule_has_a_family():
    """Every rule of the library is tested by some file (rule_checks.FAMILIES, each file checking its own)."""
    from rule_checks import FAMILIES

    from liftpy.rewrite.columns import COLUMN_RULES
    from liftpy.rewrite.normal import NORMAL_RULES, dot_fusion
    from liftpy.rewrite.pipeline import (crop_kernel, fuse_last_group, let_global, materialize_input, pad_opt, reduce_group,
                                         reduce_kernels, split_partial_kernels)
    from liftpy.rewrite.rows import ROW_RULES
    from liftpy.rewrite.rows_split import split_rows
    from liftpy.rewrite.tiling import TILING_RULES

    library = {r.name for r in A.ALGORITHMIC_RULES + L.LOWERING_RULES + L.MEMORY_RULES + TILING_RULES + [register_block2D]}
    library |= {r.name for r in (pad_opt, materialize_input, split_partial_kernels, crop_kernel, reduce_kernels, reduce_group,
                                 fuse_last_group, let_global)}
    library |= {"fuseText", "splitJoinText", "transposeText", "tileAllPairs"}
    library |= {r.name for r in NORMAL_RULES + [dot_fusion] + ROW_RULES + [split_rows] + COLUMN_RULES}
    covered = set().union(*FAMILIES.values())
    assert not library - covered, f"rules in no file's family (tests/rule_checks.py): {sorted(library - covered)}"
