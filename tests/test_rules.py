"""Every rewrite rule preserves semantics (hypothesis property tests).

Each test builds random well-typed programs in which its rule applies (random sizes, random functions,
random context), applies the rule at every position where it applies, gives the new tuning parameters
valid values, and compares the reference interpreter's results before and after: exactly for integer
data, within float tolerance for float data.  ``test_every_rule_is_tested`` keeps this file honest.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liftpy import (
    Array, Float, Int, add, fmax, fmin, get, id, join, make_program, map, mapGlb, mapLcl, mapSeq, mapWrg, mult, multAndSumUp,
    reduce, reduceSeq, relu, sizes, slide2D, split, sub, toPrivate, transpose, zip,
)
from liftpy.ir import dsl
from liftpy.ir.userfun import BUILTINS
from liftpy.rewrite import algorithmic as A
from liftpy.rewrite import lowering as L
from liftpy.rewrite.blocking import register_block2D
from liftpy.rewrite.checks import check_rule
from liftpy.rewrite.rule import applications
from liftpy.rewrite.text_rules import parse_rules

RULE_SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
N, M, K, H, W = sizes("N M K H W")
TESTED: set[str] = set()


def checked(rule, program, inputs, sizes=None, **kw):
    TESTED.add(rule.name)
    results = check_rule(rule, program, inputs, sizes, **kw)
    assert results, f"{rule.name} did not apply to\n{program}"
    bad = [r for r in results if not r.ok]
    assert not bad, f"{rule.name} changed the result: {bad[:3]}\n{program}"
    return results


INT_UNARY = [
    lambda v: add(v, 1),
    lambda v: mult(v, 3),
    lambda v: mult(v, v),
    lambda v: sub(v, 2),
]


def ints(rng, shape):
    return rng.integers(-5, 6, size=shape).astype(np.int32)


def floats(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@st.composite
def two_d(draw, lo=1, hi=8):
    return draw(st.integers(lo, hi)), draw(st.integers(lo, hi))


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


def whole_reduction(n: int, dot: bool, init: int, seed: int):
    """A dot product or a sum of squares over a whole array, and integer inputs for it."""
    rng = np.random.default_rng(seed)
    if dot:
        prog = make_program("p", [("a", Array(Int, N)), ("b", Array(Int, N))],
                            lambda a, b: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), init, zip(a, b)))
        return prog, [ints(rng, (n,)), ints(rng, (n,))]
    prog = make_program("p", [("a", Array(Int, N))], lambda a: reduce(lambda acc, x: add(acc, mult(x, x)), init, a))
    return prog, [ints(rng, (n,))]


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


@RULE_SETTINGS
@given(st.sampled_from([4, 8, 12, 16, 32]), st.sampled_from(["add", "max", "min"]), st.floats(-2, 2, allow_nan=False),
       st.integers(0, 10**6))
def test_vectorize_sum(n, op, init, seed):
    """A sum, maximum or minimum of floats four at a time: the interpreter's results before and after agree
    (the maxima and minima exactly; ``check_rule``'s tolerance for the sums' other order), whatever the
    initial value; a known length four does not divide is left alone."""
    rng = np.random.default_rng(seed)
    f = BUILTINS[op]
    prog = make_program("p", [("a", Array(Float, N))], lambda a: reduce(lambda acc, x: f(acc, x), float(init), a))
    results = checked(A.vectorize_sum, prog, [floats(rng, (n,))])
    if op != "add":
        assert all(r.max_error == 0.0 for r in results)
    nine = make_program("p", [("a", Array(Float, 9))], lambda a: reduce(lambda acc, x: f(acc, x), 0.0, a))
    assert not applications(nine, [A.vectorize_sum])


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


# ----------------------------------------------------------------------------------- tiling, blocking


@settings(RULE_SETTINGS, max_examples=8)
@given(two_d(0, 4), st.integers(1, 3), st.integers(1, 2), st.booleans(), st.integers(0, 10**6))
def test_tile2D(ab, n, s, centre, seed):
    # Inputs the windows cover exactly ((h - n) % s == 0), so that some tile size is valid: with
    # leftover rows the strict tiles cannot cover the same windows, and the rule has no valid parameter.
    h, w = n + s * ab[0], n + s * ab[1]
    rng = np.random.default_rng(seed)

    def f(window):
        if centre:  # a weighted window: sum of squares
            return reduce(lambda acc, v: multAndSumUp(acc, v, v), 0, join(window))
        return reduce(add, 0, join(window))

    prog = make_program("p", [("x", Array(Int, H, W))], lambda x: dsl.map2D(f, slide2D(n, s, x)))
    checked(A.tile2D, prog, [ints(rng, (h, w))], candidates=list(range(n, max(h, w) + 1)))


@RULE_SETTINGS
@given(st.sampled_from([(4, 3, 4), (6, 2, 4), (4, 5, 6), (8, 4, 2), (2, 7, 8)]), st.integers(0, 10**6))
def test_register_block2D(mkn, seed):
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    prog = make_program("mm", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: map(
        lambda row: map(lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B_)), A_))
    checked(register_block2D, prog, [floats(rng, (m, k)), floats(rng, (k, n))], rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(st.sampled_from([(4, 3, 2, 2), (5, 2, 3, 1), (6, 4, 1, 3), (3, 3, 2, 2)]), st.integers(0, 10**6))
def test_register_block2D_with_bias_and_window_layouts(shape, seed):
    # The convolution's form: windows flattened by join(join(w)), weights reached through a tuple and
    # flattened, the bias as the reduction's initial value.
    h, m, c, k = shape
    rng = np.random.default_rng(seed)
    C = sizes("C")[0]
    prog = make_program(
        "conv1", [("x", Array(Float, H, W, C)), ("wb", Array(Float, M, K, K, C)), ("b", Array(Float, M))],
        lambda x, wb, b: map(lambda win: map(
            lambda kb: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), kb[1], zip(join(join(win)), join(join(kb[0])))),
            zip(wb, b)), join(slide2D(K, 1, x))))
    inputs = [floats(rng, (h + k - 1, h + k - 1, c)), floats(rng, (m, k, k, c)), floats(rng, (m,))]
    checked(register_block2D, prog, inputs, {"K": k}, rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(st.sampled_from([(4, 4, 4), (8, 2, 4), (4, 6, 8), (2, 8, 4)]), st.sampled_from(["tile2DReduce", "tile2DReduceStrided"]),
       st.sampled_from(["matmul", "windows", "biased", "biased+relu"]), st.integers(0, 10**6))
def test_tile2D_reduce(mkn, name, form, seed):
    from liftpy.rewrite.tiling import tile2D_reduce, tile2D_reduce_strided

    rule = tile2D_reduce if name == "tile2DReduce" else tile2D_reduce_strided
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    C = sizes("C")[0]
    if form == "windows":  # the convolution's form: flattened windows against flattened kernels, no bias
        prog = make_program(
            "conv1", [("x", Array(Float, H, W, C)), ("wb", Array(Float, M, 2, 2, C))],
            lambda x, wb: map(lambda win: map(
                lambda kb: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(join(join(win)), join(join(kb)))),
                wb), join(slide2D(2, 1, x))))
        inputs = [floats(rng, (3, m // 2 + 1, 2)), floats(rng, (n, 2, 2, 2))]
    elif form.startswith("biased"):  # and with the bias as the reduction's initial value, and a ReLU after it
        def dot(kb, win):
            total = reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), kb[1], zip(join(join(win)), join(join(kb[0]))))
            return map(BUILTINS["relu"], total) if form.endswith("relu") else total

        prog = make_program(
            "conv1", [("x", Array(Float, H, W, C)), ("wb", Array(Float, M, 2, 2, C)), ("b", Array(Float, M))],
            lambda x, wb, b: map(lambda win: map(lambda kb: dot(kb, win), zip(wb, b)), join(slide2D(2, 1, x))))
        inputs = [floats(rng, (3, m // 2 + 1, 2)), floats(rng, (n, 2, 2, 2)), floats(rng, (n,))]
    else:
        prog = make_program("mm", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: map(
            lambda row: map(lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B_)), A_))
        inputs = [floats(rng, (m, k)), floats(rng, (k, n))]
    checked(rule, prog, inputs, candidates=[1, 2, 4, 8], per_application=3, rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.integers(0, 10**6))
def test_flatten_map2D(hw, fi, seed):
    h, w = hw
    rng = np.random.default_rng(seed)
    f = INT_UNARY[fi]
    prog = make_program("p", [("x", Array(Int, H, W))], lambda x: map(lambda row: map(f, row), x))
    checked(A.flatten_map2D, prog, [ints(rng, (h, w))])


@RULE_SETTINGS
@given(st.integers(1, 5), st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.booleans(), st.integers(0, 10**6))
def test_groups_out(n, g, k, j, biased, seed):
    """Rows of g groups of k against each group's j kernels (a grouped convolution's shape, with a bias per
    kernel as the reduction's start or without one): the groups moved outside the rows."""
    G, J = sizes("G J")
    rng = np.random.default_rng(seed)

    def dot(part, kb):
        init = kb[1] if biased else 0
        return reduce(lambda acc, p: add(acc, mult(p[0], p[1])), init, zip(part, kb[0] if biased else kb))

    if biased:
        prog = make_program("grouped", [("xs", Array(Int, N, G * K)), ("ws", Array(Int, G, J, K)), ("bs", Array(Int, G, J))],
                            lambda xs, ws, bs: map(lambda row: join(map(lambda gr: map(lambda kb: dot(gr[0], kb), zip(gr[1], gr[2])),
                                                                            zip(split(K, row), ws, bs))), xs))
        inputs = [ints(rng, (n, g * k)), ints(rng, (g, j, k)), ints(rng, (g, j))]
        sz = {"N": n, "G": g, "K": k, "J": j}
    else:
        prog = make_program("grouped", [("xs", Array(Int, N, G * K)), ("ws", Array(Int, G, J, K))],
                            lambda xs, ws: map(lambda row: join(map(lambda gr: map(lambda w: dot(gr[0], w), gr[1]),
                                                                    zip(split(K, row), ws))), xs))
        inputs = [ints(rng, (n, g * k)), ints(rng, (g, j, k))]
        sz = {"N": n, "G": g, "K": k, "J": j}
    checked(A.groups_out, prog, inputs, sz)


@RULE_SETTINGS
@given(st.integers(1, 4), st.integers(1, 3), st.sampled_from([2, 4, 6]), st.integers(1, 3), st.booleans(), st.integers(0, 10**6))
def test_split_k_groups(n, g, k, j, biased, seed):
    """A grouped product (``groupsOut``'s result: one matrix product per group, with a bias per kernel or
    without) split along each group's reduction, the chunks of all groups one dimension: the same sums."""
    G, J = sizes("G J")
    rng = np.random.default_rng(seed)

    def dot(part, kb):
        init = kb[1] if biased else 0.0
        return reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), init, zip(part, kb[0] if biased else kb))

    if biased:
        prog = make_program("grouped", [("xs", Array(Float, N, G * K)), ("ws", Array(Float, G, J, K)), ("bs", Array(Float, G, J))],
                            lambda xs, ws, bs: map(lambda row: join(map(lambda gr: map(lambda kb: dot(gr[0], kb), zip(gr[1], gr[2])),
                                                                            zip(split(K, row), ws, bs))), xs))
    else:
        prog = make_program("grouped", [("xs", Array(Float, N, G * K)), ("ws", Array(Float, G, J, K))],
                            lambda xs, ws: map(lambda row: join(map(lambda gr: map(lambda w: dot(gr[0], w), gr[1]),
                                                                    zip(split(K, row), ws))), xs))
    from liftpy.rewrite.tiling import split_k_groups

    inputs = [floats(rng, (n, g * k)), floats(rng, (g, j, k))] + ([floats(rng, (g, j))] if biased else [])
    [(_, _, grouped)] = applications(prog, [A.groups_out])
    assert not applications(prog, [split_k_groups])  # the groups still inside the rows
    checked(split_k_groups, grouped.program, inputs, {"N": n, "G": g, "K": k, "J": j}, candidates=[1, 2, 3, 6],
            rtol=1e-5, atol=1e-5)


def test_groups_out_needs_the_group_only_through_its_parts():
    """A body that passes the group on whole (here to a lambda) cannot be given the group's parts apart."""
    from liftpy.ir.expr import Call, Lambda, Var

    G = sizes("G")[0]
    t = Var("t")

    def program(use: str):
        def body(gr, row):
            if use == "whole":
                return Call(Lambda((t,), map(lambda p: mult(p[0], p[1]), zip(get(t, 0), get(t, 1)))), (gr,))
            if use == "window":  # the whole row beside the group's part: not the group's alone
                return map(lambda p: mult(p[0], p[1]), zip(gr[0], split(K, row)[0]))
            return map(lambda p: mult(p[0], p[1]), zip(gr[0], gr[1]))
        return make_program("g", [("xs", Array(Int, N, G * K)), ("ws", Array(Int, G, K))],
                            lambda xs, ws: map(lambda row: join(map(lambda gr: body(gr, row), zip(split(K, row), ws))), xs))

    assert applications(program("parts"), [A.groups_out])
    assert not applications(program("whole"), [A.groups_out])
    assert not applications(program("window"), [A.groups_out])


@RULE_SETTINGS
@given(st.sampled_from([(4, 4, 4), (2, 8, 6), (3, 6, 4)]), st.sampled_from([False, True, "relu"]), st.integers(0, 10**6))
def test_split_k(mkn, biased, seed):
    from liftpy.rewrite.tiling import split_k

    m, k, n = mkn
    rng = np.random.default_rng(seed)
    if biased:  # the convolution's form with the bias as initial value, windows flattened under a layout
        C = sizes("C")[0]

        def dot(kb, win):  # with a ReLU after it: applied in the sum kernel
            total = reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), kb[1], zip(join(join(win)), join(join(kb[0]))))
            return map(BUILTINS["relu"], total) if biased == "relu" else total

        prog = make_program(
            "conv1", [("x", Array(Float, H, W, C)), ("wb", Array(Float, M, 2, 2, C)), ("b", Array(Float, M))],
            lambda x, wb, b: dsl.split(2, map(lambda win: map(lambda kb: dot(kb, win), zip(wb, b)), join(slide2D(2, 1, x)))))
        inputs = [floats(rng, (3, 3, k // 2)), floats(rng, (n, 2, 2, k // 2)), floats(rng, (n,))]
    else:
        prog = make_program("mm", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: map(
            lambda row: map(lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B_)), A_))
        inputs = [floats(rng, (m, k)), floats(rng, (k, n))]
    checked(split_k, prog, inputs, candidates=[1, 2, 4, 8], per_application=3, rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(st.sampled_from([(4, 3, 4), (2, 5, 6), (3, 6, 4)]), st.sampled_from([False, True, "relu"]), st.integers(0, 10**6))
def test_pad_k(mkn, biased, seed):
    """The dot products' operands padded with zeros: the same results, for every amount up to the bound,
    with and without a bias as the initial value (the convolution's form), and with a ReLU after it."""
    from liftpy.rewrite.tiling import pad_k

    m, k, n = mkn
    rng = np.random.default_rng(seed)
    if biased:
        C = sizes("C")[0]

        def dot(kb, win):
            total = reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), kb[1], zip(join(join(win)), join(join(kb[0]))))
            return map(BUILTINS["relu"], total) if biased == "relu" else total

        prog = make_program(
            "conv1", [("x", Array(Float, H, W, C)), ("wb", Array(Float, M, 2, 2, C)), ("b", Array(Float, M))],
            lambda x, wb, b: dsl.split(2, map(lambda win: map(lambda kb: dot(kb, win), zip(wb, b)), join(slide2D(2, 1, x)))))
        inputs = [floats(rng, (3, 3, k)), floats(rng, (n, 2, 2, k)), floats(rng, (n,))]
    else:
        prog = make_program("mm", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: map(
            lambda row: map(lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B_)), A_))
        inputs = [floats(rng, (m, k)), floats(rng, (k, n))]
    checked(pad_k, prog, inputs, candidates=[0, 1, 3, 7], per_application=4, rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(st.sampled_from([(4, 4, 8, {"m0": 2, "n0": 4, "k0": 4, "r0": 1, "r1": 2}), (8, 4, 4, {"m0": 4, "n0": 4, "k0": 2, "r0": 2, "r1": 2})]),
       st.sampled_from(["stageTiles", "stageTilesT"]), st.integers(0, 10**6))
def test_stage_tiles(case, name, seed):
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.variant import Variant
    from liftpy.rewrite.work_mapping import apply_mapping, private_accumulators
    from liftpy.rewrite.mappings import group_mapping
    from liftpy.rewrite.tiling import tile2D_reduce

    m, n, k, params = case
    rng = np.random.default_rng(seed)
    prog = make_program("mm", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: map(
        lambda row: map(lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B_)), A_))
    v = once(tile2D_reduce)(Variant(prog))[0]
    v = private_accumulators(apply_mapping(group_mapping(2, 2, every_nest=True))(v)[0])[0]
    rule = L.stage_tiles if name == "stageTiles" else L.stage_tiles_t
    inputs, bindings = [floats(rng, (m, k)), floats(rng, (k, n))], {"M": m, "N": n, "K": k, **params}
    checked(rule, v.program, inputs, bindings, rtol=1e-5, atol=1e-5)
    staged = once(rule)(v)[0]
    checked(L.double_buffer, staged.program, inputs, bindings, rtol=1e-5, atol=1e-5)
    assert not applications(v.program, [L.double_buffer])  # nothing staged: nothing to double


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


# ------------------------------------------------------------------------------ pipeline (kernel) rules


def _conv_case(k, stride, pad, c, h, m, seed):
    from liftpy.operators.conv import conv_program

    rng = np.random.default_rng(seed)
    sizes_ = {"C": c, "H": h, "W": h, "M": m}
    inputs = [floats(rng, (m, k, k, c)), floats(rng, (m,)), floats(rng, (h, h, c))]
    return conv_program(k, stride, pad), sizes_, inputs


def _after(strategy, program, sizes_):
    """``program`` rewritten by ``strategy`` and a valid value of each parameter the rewrite introduced."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.rewrite.explore import Variant

    v = strategy(Variant(program))[0]
    counted = solve(variant_space(v, sizes_))
    assert counted.size.valid, v.text()
    return v.program, {**sizes_, **sample(counted, 1, seed=1)[0]}


CONV_CASES = st.tuples(st.sampled_from([(1, 1, 0), (3, 1, 1), (3, 2, 1), (2, 2, 0), (5, 1, 2)]),
                       st.integers(1, 3), st.integers(5, 9), st.integers(1, 3), st.integers(0, 10**6))


@RULE_SETTINGS
@given(CONV_CASES)
def test_pipeline_rules(case):
    """The rules that cut the convolution into kernels (padding kernel, optimisational padding, partial
    sums in global memory, crop kernel) on random layer shapes, strides and paddings."""
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.pipeline import crop_kernel, materialize_input, pad_opt, split_partial_kernels

    (k, stride, pad), c, h, m, seed = case
    program, sizes_, inputs = _conv_case(k, stride, pad, c, h, m, seed)
    checked(pad_opt, program, inputs, sizes_, rtol=1e-5, atol=1e-5)
    checked(materialize_input, program, inputs, sizes_, rtol=1e-5, atol=1e-5)
    partial, values = _after(once(A.partial_reduce), program, sizes_)
    checked(split_partial_kernels, partial, inputs, values, rtol=1e-5, atol=1e-5)
    padded, values = _after(once(pad_opt), program, sizes_)
    checked(crop_kernel, padded, inputs, values, rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(st.integers(1, 24), st.booleans(), st.booleans(), st.integers(-3, 3), st.integers(0, 10**6))
def test_reduce_kernels(n, dot, coalesced, init, seed):
    """A whole-array reduction cut into a kernel of partial sums and a kernel adding them (with the
    initial value), after partialReduce (and coalesce) chose the chunks."""
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.pipeline import reduce_kernels

    prog, inputs = whole_reduction(n, dot, init, seed)
    partial, values = _after(once(A.partial_reduce), prog, {"N": n})
    if coalesced and values["w0"] not in (1, n):
        partial, values = _after(once(A.coalesce), partial, values)
    checked(reduce_kernels, partial, inputs, values)


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_let_global(hw, fi, two_lets, seed):
    """A let-bound computed array becomes a kernel of its own (y = f(A x), then A^T y, or a chain of two)."""
    from liftpy.ir.dsl import let
    from liftpy.rewrite.pipeline import let_global

    m, n = hw
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)

    def body(A, x):
        y = lambda t: join(map(lambda c: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0, zip(c, t)), transpose(A)))  # noqa: E731
        first = map(f, join(map(lambda r: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0, zip(r, x)), A)))
        if two_lets:
            return let(lambda t: let(lambda u: map(f, u), y(t)), first)
        return let(y, first)

    prog = make_program("p", [("A", Array(Int, M, N)), ("x", Array(Int, N))], body)
    checked(let_global, prog, [ints(rng, (m, n)), ints(rng, (n,))], {"M": m, "N": n})


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


# ----------------------------------------------------------------------------------- normal forms (normal.py)

I3 = dsl.lit(3, Int)
# Steps of an int dot product, spelt four ways (the first is the normal form).
INT_STEPS = [
    lambda acc, p: multAndSumUp(acc, p[0], p[1]),
    lambda acc, p: add(acc, mult(p[0], p[1])),
    lambda acc, p: add(mult(p[1], p[0]), acc),
    lambda acc, p: acc + p[0] * p[1],
]
# Epilogues of a dot product's value x and another array's element c (alpha * x + beta * c and friends).
INT_EPILOGUES = [
    lambda x, c: add(mult(x, I3), c),
    lambda x, c: sub(c, x),
    lambda x, c: mult(x, c),
    lambda x, c: add(x, mult(c, c)),
]
FLOAT_EPILOGUES = [
    lambda x, c: 1.5 * x + 0.5 * c,
    lambda x, c: relu(x - c),
    lambda x, c: x * c,
]


def _idot(x, y, step=0, init=0):
    return reduce(INT_STEPS[step], dsl.lit(init, Int), zip(x, y))


def _fdot(x, y):
    return reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(x, y))


MKN = st.sampled_from([(2, 3, 4), (4, 2, 2), (3, 4, 5), (1, 3, 2), (4, 4, 4)])
GEMM_INPUTS = [("A", lambda M_, K_, N_: (M_, K_)), ("B", lambda M_, K_, N_: (K_, N_)), ("C", lambda M_, K_, N_: (M_, N_))]


def _gemm(name, t, body):
    return make_program(name, [("A", Array(t, M, K)), ("B", Array(t, K, N)), ("C", Array(t, M, N))], body)


def _gemm_inputs(mkn, data, seed, extra=0, form=None):
    """A, B and C (and ``extra`` more arrays like C) for ``_epilogue_program(form)``: no C for "scale",
    a bias of N for "biased"."""
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    if form == "biased":
        return [data(rng, (m, k)), data(rng, (k, n)), data(rng, (n,))]
    if form == "biased_residual":
        return [data(rng, (m, k)), data(rng, (k, n)), data(rng, (n,)), data(rng, (m, n))]
    out = [data(rng, (m, k)), data(rng, (k, n)), data(rng, (m, n))] + [data(rng, (m, n)) for _ in range(extra)]
    return out[:2] if form == "scale" else out


def _epilogue_program(form, t, epi, dot, f=None):
    """A product of A and B with an epilogue in normal form (``epilogue.py``), in one of its shapes."""
    product = lambda A_, B_: map(lambda row: map(lambda col: dot(row, col), transpose(B_)), A_)  # noqa: E731
    if form == "first":  # zip(P, C)
        return _gemm("e", t, lambda A_, B_, C_: map(lambda pc: map(lambda q: epi(q[0][0], q[1]), zip(pc[0], pc[1])),
                                                        zip(product(A_, B_), C_)))
    if form == "swapped":  # zip(C, P), the inner zip in the other order
        return _gemm("e", t, lambda A_, B_, C_: map(lambda pc: map(lambda q: epi(q[0][0], q[1]), zip(pc[1], pc[0])),
                                                        zip(C_, product(A_, B_))))
    if form == "two":  # two other arrays
        return make_program("e", [("A", Array(t, M, K)), ("B", Array(t, K, N)), ("C", Array(t, M, N)), ("D", Array(t, M, N))],
                            lambda A_, B_, C_, D_: map(lambda pc: map(lambda q: epi(epi(q[0][0], q[1]), q[2]),
                                                                      zip(pc[0], pc[1], pc[2])), zip(product(A_, B_), C_, D_)))
    if form == "open":  # a function of the other array's element mapped over the one-element result
        return _gemm("e", t, lambda A_, B_, C_: map(lambda pc: map(lambda q: map(lambda v: epi(v, q[1]), q[0]), zip(pc[0], pc[1])),
                                                        zip(product(A_, B_), C_)))
    if form == "post":  # a closed function in the product too, then the epilogue
        g = f or relu
        return _gemm("e", t, lambda A_, B_, C_: map(lambda pc: map(lambda q: epi(q[0][0], q[1]), zip(pc[0], pc[1])),
                                                        zip(map(lambda row: map(lambda col: map(g, dot(row, col)), transpose(B_)), A_), C_)))
    if form == "biased":  # a bias as the dot products' initial value, then a function of the sum
        return make_program("e", [("A", Array(t, M, K)), ("B", Array(t, K, N)), ("bias", Array(t, N))],
                            lambda A_, B_, b_: map(lambda pr: map(lambda r: epi(r[0], r[0]), pr), map(
                                lambda row: map(lambda cb: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), cb[1], zip(row, cb[0])),
                                                zip(transpose(B_), b_)), A_)))
    if form == "biased_residual":  # a bias as the initial value and another array after (a convolution's residual)
        biased = lambda A_, B_, b_: map(lambda row: map(  # noqa: E731
            lambda cb: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), cb[1], zip(row, cb[0])), zip(transpose(B_), b_)), A_)
        return make_program("e", [("A", Array(t, M, K)), ("B", Array(t, K, N)), ("bias", Array(t, N)), ("C", Array(t, M, N))],
                            lambda A_, B_, b_, C_: map(lambda pc: map(lambda q: map(lambda v: epi(v, q[1]), q[0]),
                                                                                zip(pc[0], pc[1])), zip(biased(A_, B_, b_), C_)))
    # "scale": no other array, the dot product's value through a function of its own
    return make_program("e", [("A", Array(t, M, K)), ("B", Array(t, K, N))],
                        lambda A_, B_: map(lambda pr: map(lambda r: epi(r[0], r[0]), pr), product(A_, B_)))


@RULE_SETTINGS
@given(MKN, st.integers(1, 3), st.integers(-2, 2), st.booleans(), st.integers(0, 10**6))
def test_dot_accumulator(mkn, step, init, swapped, seed):
    """``add(acc, mult(x, y))``, ``add(mult(y, x), acc)``, ``acc + x * y`` as a matrix product's (or a
    lone dot product's) step are ``multAndSumUp``: exactly the same ints."""
    from liftpy.rewrite.normal import dot_accumulator

    m, k, n = mkn
    rng = np.random.default_rng(seed)
    prog = make_program("mm", [("A", Array(Int, M, K)), ("B", Array(Int, K, N))], lambda A_, B_: map(
        lambda row: map(lambda col: _idot(col, row) if swapped else _idot(row, col, step, init), transpose(B_)), A_))
    if swapped:
        prog = make_program("d", [("a", Array(Int, K)), ("b", Array(Int, K))], lambda a, b: _idot(b, a, step, init))
        checked(dot_accumulator, prog, [ints(rng, (k,)), ints(rng, (k,))])
        return
    checked(dot_accumulator, prog, [ints(rng, (m, k)), ints(rng, (k, n))])


def test_dot_accumulator_leaves_other_sums_of_products():
    """An average's ``acc + v * 0.25`` is no dot product: it keeps its spelling (and its kernels)."""
    from liftpy.rewrite.normal import dot_accumulator

    prog = make_program("avg", [("x", Array(Float, N))], lambda x: reduce(lambda a, v: add(a, mult(v, 0.25)), 0.0, x))
    assert not applications(prog, [dot_accumulator])


@RULE_SETTINGS
@given(st.integers(1, 8), st.sampled_from(range(4)), st.sampled_from(range(4)), st.sampled_from([(0, 1), (1, 0), (1, 1), (0, 0)]),
       st.integers(0, 10**6))
def test_zip_flatten_and_prune(n, fi, gi, inner, seed):
    """A zip of a zip read component by component is one flat zip; the arrays no one reads leave it."""
    from liftpy.rewrite.normal import zip_flatten, zip_prune

    f, g = INT_UNARY[fi], INT_UNARY[gi]
    rng = np.random.default_rng(seed)
    inputs = [ints(rng, (n,)) for _ in range(3)]
    three = [("a", Array(Int, N)), ("b", Array(Int, N)), ("c", Array(Int, N))]
    nested = make_program("p", three, lambda a, b, c: map(lambda p: add(f(p[0]), g(p[1][inner[0]])) if inner[0] == inner[1]
                                                          else add(f(p[1][inner[0]]), g(p[1][inner[1]])), zip(a, zip(b, c))))
    checked(zip_flatten, nested, inputs)
    used = [0, 2] if inner == (0, 0) else [1] if inner == (1, 1) else [1, 2]
    flat = make_program("p", three, lambda a, b, c: map(lambda p: add(f(p[used[0]]), g(p[used[-1]])), zip(a, b, c)))
    checked(zip_prune, flat, inputs)
    every = make_program("p", three, lambda a, b, c: map(lambda p: add(f(p[0]), g(mult(p[1], p[2]))), zip(a, b, c)))
    assert not applications(every, [zip_prune])


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_join_singletons(hw, fi, gi, zipped, seed):
    """A map over ``join`` of one-element arrays (the results of a row of reductions, joined) maps over the
    arrays and reads each by ``at(0, ...)``: alone or as a component of a zip."""
    from liftpy.rewrite.normal import join_singletons

    h, w = hw
    f, g = INT_UNARY[fi], INT_UNARY[gi]
    rng = np.random.default_rng(seed)
    sums = lambda x: join(map(lambda r: reduce(lambda acc, v: add(acc, f(v)), 0, r), x))  # noqa: E731
    if zipped:
        prog = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, H))],
                            lambda x, y: map(lambda q: mult(g(q[0]), q[1]), zip(y, sums(x))))
        inputs = [ints(rng, (h, w)), ints(rng, (h,))]
    else:
        prog = make_program("p", [("x", Array(Int, H, W))], lambda x: map(g, sums(x)))
        inputs = [ints(rng, (h, w))]
    checked(join_singletons, prog, inputs)
    rows = make_program("p", [("x", Array(Int, H, W))], lambda x: map(g, join(x)))
    assert not applications(rows, [join_singletons])  # rows of W values, not one-element arrays


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_zip_view_fusion(hw, fi, first, seed):
    """A zip's component that is a map of a layout (``map(join, X)``) is read through the layout where the
    map's function reads it: the same values, the zip over ``X`` itself; a computing map is left alone."""
    from liftpy.rewrite.normal import zip_view_fusion

    h, w = hw
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)
    joined = lambda x: map(lambda r: join(split(1, r)), x)  # noqa: E731 - a layout per row
    comps = (lambda x, y: (joined(x), y)) if first else (lambda x, y: (y, joined(x)))
    i = 0 if first else 1
    prog = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, H, W))], lambda x, y: map(
        lambda q: map(lambda e: add(f(e[0]), e[1]), zip(q[i], q[1 - i])), zip(*comps(x, y))))
    checked(zip_view_fusion, prog, [ints(rng, (h, w)), ints(rng, (h, w))])
    computing = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, H, W))], lambda x, y: map(
        lambda q: map(lambda e: add(e[0], e[1]), zip(q[0], q[1])), zip(map(lambda r: map(f, r), x), y)))
    assert not applications(computing, [zip_view_fusion])


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.booleans(), st.integers(0, 10**6))
def test_zip2D_fusion(hw, fi, transposed, seed):
    """``map2D(f, zip2D(a, b))`` with zip2D as a map of zips (a component read through a view of the row
    or not): the rows zipped where they are read, the same values; a map of computed rows is left alone."""
    from liftpy.rewrite.normal import zip2D_fusion

    h, w = hw
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)
    if transposed:  # x's rows are [1][W]: transposed, a row of one-element arrays
        prog = make_program("p", [("x", Array(Int, H, 1, W)), ("y", Array(Int, H, W))], lambda x, y: map(
            lambda row: map(lambda e: add(f(e[0][0]), mult(e[1], 2)), row), map(lambda r: zip(transpose(r[0]), r[1]), zip(x, y))))
        inputs = [ints(rng, (h, 1, w)), ints(rng, (h, w))]
    else:  # the components swapped in the row's zip
        prog = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, H, W))], lambda x, y: map(
            lambda row: map(lambda e: add(f(e[1]), mult(e[0], 2)), row), map(lambda r: zip(r[1], r[0]), zip(x, y))))
        inputs = [ints(rng, (h, w)), ints(rng, (h, w))]
    checked(zip2D_fusion, prog, inputs)
    computing = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, H, W))], lambda x, y: map(
        lambda row: map(f, row), map(lambda r: map(lambda e: add(e[0], e[1]), zip(r[0], r[1])), zip(x, y))))
    assert not applications(computing, [zip2D_fusion])


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(4)), st.sampled_from(["inner", "outer", "vector", "twice"]), st.integers(0, 3), st.integers(0, 10**6))
def test_dot_fission(mkn, ei, where, step, seed):
    """A dot product (or a row of them) leaves the function around it: the map becomes one over the dot
    products zipped with the original elements (``alpha * dot(row, col)[0] + beta * c`` over ``zip(C, A)``,
    and the same once the inner map has been split)."""
    from liftpy.rewrite.normal import dot_fission

    epi = INT_EPILOGUES[ei]
    if where == "inner":  # the spelling of a GEMM over zip(C, A), transpose(B) inside
        prog = _gemm("g", Int, lambda A_, B_, C_: map(lambda ca: map(lambda bc: epi(_idot(ca[1], bc[0], 0)[0], bc[1]),
                                                                         zip(transpose(B_), ca[0])), zip(C_, A_)))
    elif where == "outer":  # after the inner fission: the row of dot products leaves the outer map
        prog = _gemm("g", Int, lambda A_, B_, C_: map(lambda ca: map(lambda q: epi(q[0][0], q[1]),
                                                                         zip(map(lambda b: _idot(ca[1], b), transpose(B_)), ca[0])),
                                                      zip(C_, A_)))
    elif where == "vector":  # a matrix-vector product with an epilogue
        prog = make_program("v", [("A", Array(Int, M, K)), ("x", Array(Int, K)), ("y", Array(Int, M))],
                            lambda A_, x, y: map(lambda p: epi(_idot(p[0], x, 0)[0], p[1]), zip(A_, y)))
    else:  # two dot products of one row: the first leaves, then the second
        prog = _gemm("g", Int, lambda A_, B_, C_: map(lambda row: map(lambda cc: epi(_idot(row, cc[0])[0], _idot(row, cc[0], 0, 1)[0]),
                                                                          zip(transpose(B_), transpose(B_))), A_))
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    inputs = [ints(rng, (m, k)), ints(rng, (k,)), ints(rng, (m,))] if where == "vector" else _gemm_inputs(mkn, ints, seed)
    checked(dot_fission, prog, inputs)
    product = make_program("mm", [("A", Array(Int, M, K)), ("B", Array(Int, K, N))], lambda A_, B_: map(
        lambda row: map(lambda col: map(lambda v: add(v, 1), _idot(row, col)), transpose(B_)), A_))
    assert not applications(product, [dot_fission])  # the vendor-class shape (a closed function after the dot) stays


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(4)), st.sampled_from(["rows", "columns"]), st.integers(0, 10**6))
def test_let_operand(mkn, ei, operand, seed):
    """A product's computed operand (another product's result) is bound at the top, the same value."""
    from liftpy.rewrite.normal import let_operand

    epi = INT_EPILOGUES[ei]
    m, k, n = mkn
    rng = np.random.default_rng(seed)

    def ab(A_, B_):  # [M][N]: alpha * A B
        return map(lambda r: map(lambda c: mult(_idot(r, c)[0], I3), transpose(B_)), A_)

    if operand == "rows":  # D := epi((A B) C, D)
        prog = make_program("chain", [("A", Array(Int, M, K)), ("B", Array(Int, K, N)), ("C", Array(Int, N, K)), ("D", Array(Int, M, K))],
                            lambda A_, B_, C_, D_: map(lambda p: map(lambda q: epi(_idot(p[1], q[0])[0], q[1]), zip(transpose(C_), p[0])),
                                                       zip(D_, ab(A_, B_))))
        inputs = [ints(rng, (m, k)), ints(rng, (k, n)), ints(rng, (n, k)), ints(rng, (m, k))]
    else:  # C (A B)^T: the computed array is the columns' side
        prog = make_program("chain", [("A", Array(Int, M, K)), ("B", Array(Int, K, N)), ("C", Array(Int, N, K))],
                            lambda A_, B_, C_: map(lambda row: map(lambda col: _idot(row, col), ab(A_, B_)), transpose(C_)))
        inputs = [ints(rng, (m, k)), ints(rng, (k, n)), ints(rng, (n, k))]
    checked(let_operand, prog, inputs)


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(4)), st.sampled_from(["atax", "sum", "reduce_step", "nested_map"]), st.integers(0, 10**6))
def test_let_invariant(mkn, ei, form, seed):
    """A computed array inside a loop's function that reads only inputs is bound once at the top, the same
    value: A^T (A x) with A x inside the map over the columns, a whole input's sum read by every element,
    one inside a reduction's step, one two maps deep."""
    from liftpy.rewrite.normal import let_invariant

    epi = INT_UNARY[ei]
    m, k, _ = mkn
    rng = np.random.default_rng(seed)

    def ax(A_, x):
        return join(map(lambda row: _idot(row, x), A_))

    if form == "atax":
        prog = make_program("atax", [("A", Array(Int, M, K)), ("x", Array(Int, K))],
                            lambda A_, x: join(map(lambda col: map(epi, _idot(col, ax(A_, x))), transpose(A_))))
        inputs = [ints(rng, (m, k)), ints(rng, (k,))]
    elif form == "sum":
        prog = make_program("shift", [("A", Array(Int, M, K)), ("b", Array(Int, K))],
                            lambda A_, b: map(lambda row: map(lambda v: add(epi(v), reduce(add, dsl.lit(0, Int), b)[0]), row), A_))
        inputs = [ints(rng, (m, k)), ints(rng, (k,))]
    elif form == "reduce_step":
        prog = make_program("steps", [("A", Array(Int, M, K)), ("b", Array(Int, K))],
                            lambda A_, b: map(lambda row: reduce(lambda acc, v: add(acc, mult(v, reduce(add, dsl.lit(0, Int), map(epi, b))[0])),
                                                                 dsl.lit(0, Int), row), A_))
        inputs = [ints(rng, (m, k)), ints(rng, (k,))]
    else:
        prog = make_program("deep", [("A", Array(Int, M, K)), ("x", Array(Int, K))],
                            lambda A_, x: map(lambda row: map(lambda v: map(lambda t: add(t, v), ax(A_, x)), row), A_))
        inputs = [ints(rng, (m, k)), ints(rng, (k,))]
    checked(let_invariant, prog, inputs)
    mm = make_program("mm", [("A", Array(Int, M, K)), ("B", Array(Int, K, N))],
                      lambda A_, B_: map(lambda row: map(lambda col: _idot(row, col), transpose(B_)), A_))
    assert not applications(mm, [let_invariant])  # what reads a loop's variable stays where it is


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(4)), st.sampled_from(["two_products", "product_and_view", "nested_get", "read_twice"]),
       st.integers(0, 10**6))
def test_zip_map_fusion(mkn, ei, form, seed):
    """A map over a zip of computed maps computes each element where it is read, the same values; a
    component read twice, or read inside a loop, stays computed where it is."""
    from liftpy.rewrite.rows import zip_map_fusion

    epi = INT_UNARY[ei]
    m, k, _ = mkn
    rng = np.random.default_rng(seed)
    params = [("A", Array(Int, M, K)), ("B", Array(Int, M, K)), ("x", Array(Int, K))]
    inputs = [ints(rng, (m, k)), ints(rng, (m, k)), ints(rng, (k,))]

    def dots(X, x):
        return map(lambda row: _idot(row, x), X)

    if form == "two_products":
        prog = make_program("axpby", params, lambda A_, B_, x: map(lambda q: add(epi(q[0][0]), mult(q[1][0], 3)),
                                                                    zip(dots(A_, x), dots(B_, x))))
    elif form == "product_and_view":
        prog = make_program("epi", params, lambda A_, B_, x: map(lambda q: add(epi(q[0][0]), q[1][0]),
                                                                  zip(dots(A_, x), B_)))
    elif form == "nested_get":
        prog = make_program("pairs", params, lambda A_, B_, x: map(lambda q: map(lambda v: add(v, q[0][0]), q[1]),
                                                                    zip(dots(A_, x), B_)))
    else:
        prog = make_program("twice", params, lambda A_, B_, x: map(lambda q: add(q[0][0], epi(q[1][0])),
                                                                    zip(dots(A_, x), map(lambda r: map(epi, r), B_))))
    if form == "nested_get":  # read inside the map over q._1: computed at every element if fused
        assert not applications(prog, [zip_map_fusion])
        prog = make_program("pairs", params, lambda A_, B_, x: map(lambda q: add(q[0][0], q[1][0]), zip(dots(A_, x), B_)))
    checked(zip_map_fusion, prog, inputs)
    twice = make_program("t", params, lambda A_, B_, x: map(lambda q: add(q[0][0], q[0][0]), zip(dots(A_, x), B_)))
    assert not applications(twice, [zip_map_fusion])


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(4)), st.sampled_from(["sum", "max", "dot", "scaled", "init"]), st.integers(0, 10**6))
def test_split_columns(mkn, ei, form, seed):
    """Each column's reduction split over blocks of rows, the blocks' results reduced after: the same
    values for sums (from zero, or from another start), maxima, dot products with a vector of the rows
    (A^T y), a closed function after the sum (a mean); the rows' count split by every divisor."""
    from liftpy.rewrite.columns import split_columns

    epi = INT_UNARY[ei]
    m, k, _ = mkn
    rng = np.random.default_rng(seed)
    params = [("A", Array(Int, M, K)), ("y", Array(Int, M))]
    inputs = [ints(rng, (m, k)), ints(rng, (m,))]
    if form == "dot":
        body = lambda A_, y: join(map(lambda c: _idot(c, y), transpose(A_)))  # noqa: E731
    elif form == "max":
        body = lambda A_, y: join(map(lambda c: reduce(lambda a, v: fmax(a, epi(v)), dsl.lit(-100, Int), c), transpose(A_)))  # noqa: E731
    elif form == "scaled":
        body = lambda A_, y: join(map(lambda c: map(epi, reduce(add, dsl.lit(0, Int), c)), transpose(A_)))  # noqa: E731
    elif form == "init":
        body = lambda A_, y: join(map(lambda c: reduce(lambda a, v: add(a, epi(v)), dsl.lit(7, Int), c), transpose(A_)))  # noqa: E731
    else:
        body = lambda A_, y: map(lambda c: reduce(add, dsl.lit(0, Int), c), transpose(A_))  # noqa: E731
    checked(split_columns, make_program("cols", params, body), inputs)
    rows = make_program("rows", params, lambda A_, y: join(map(lambda r: reduce(add, dsl.lit(0, Int), r), A_)))
    assert not applications(rows, [split_columns])  # a row's reduction is the rows strategy's
    mm = make_program("mm", [("A", Array(Int, M, K)), ("B", Array(Int, K, N))],
                      lambda A_, B_: map(lambda row: map(lambda col: _idot(row, col), transpose(B_)), A_))
    assert not applications(mm, [split_columns])  # B's columns once per row of A: not a kernel's columns


@RULE_SETTINGS
@given(two_d(1, 6), st.sampled_from(range(4)), st.sampled_from(["mask", "transpose", "pad", "twice"]), st.integers(0, 10**6))
def test_let_view(hw, fi, form, seed):
    """A view bound by let (a mask of ones padded with zeros, read by one step or by two; a padded or a
    transposed input) is read where the body reads it: the same results; a computed array stays bound."""
    from liftpy.rewrite.normal import let_view

    h, w = hw
    f = INT_UNARY[fi]
    rng = np.random.default_rng(seed)
    select = BUILTINS["select"]

    def keep(x, m):  # f inside the mask, the element as it is outside
        return map(lambda q: map(lambda e: select(e[1], f(e[0]), e[0]), zip(q[0], q[1])), zip(x, m))

    grid, x_in = [("x", Array(Int, H + 2, W + 2))], [ints(rng, (h + 2, w + 2))]
    mask = lambda: dsl.pad2D(1, 1, 1, 1, 0, dsl.lit(1, Array(Int, H, W)))  # noqa: E731
    if form == "mask":
        prog = make_program("p", grid, lambda x: dsl.let(lambda m: keep(x, m), mask()))
        inputs = x_in
    elif form == "twice":
        prog = make_program("p", grid, lambda x: dsl.let(lambda m: keep(keep(x, m), m), mask()))
        inputs = x_in
    elif form == "pad":
        prog = make_program("p", grid + [("y", Array(Int, H, W))],
                            lambda x, y: dsl.let(lambda m: keep(x, m), dsl.pad2D(1, 1, 1, 1, 3, y)))
        inputs = x_in + [ints(rng, (h, w))]
    else:
        prog = make_program("p", [("x", Array(Int, H, W)), ("y", Array(Int, W, H))], lambda x, y: dsl.let(
            lambda t: map(lambda q: map(lambda e: add(f(e[0]), e[1]), zip(q[0], q[1])), zip(x, t)), transpose(y)))
        inputs = [ints(rng, (h, w)), ints(rng, (w, h))]
    checked(let_view, prog, inputs)
    computed = make_program("p", [("x", Array(Int, H, W))], lambda x: dsl.let(
        lambda t: map(lambda r: map(f, r), t), map(lambda r: map(f, r), x)))
    assert not applications(computed, [let_view])


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(3)), st.sampled_from(["first", "scale", "open"]), st.integers(0, 10**6))
def test_let_epilogue(mkn, ei, form, seed):
    """A product bound by let and read once by its epilogue is inlined there: the same results.  Read twice
    (or by something that is no epilogue over it) it stays bound."""
    from liftpy.rewrite.normal import let_epilogue

    epi = FLOAT_EPILOGUES[ei]

    def product(A_, B_):
        return map(lambda row: map(lambda col: _fdot(row, col), transpose(B_)), A_)

    if form == "scale":
        prog = make_program("e", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: dsl.let(
            lambda P_: map(lambda pr: map(lambda r: epi(r[0], r[0]), pr), P_), product(A_, B_)))
    elif form == "open":
        prog = _gemm("e", Float, lambda A_, B_, C_: dsl.let(lambda P_: map(
            lambda pc: map(lambda q: map(lambda v: epi(v, q[1]), q[0]), zip(pc[0], pc[1])), zip(P_, C_)), product(A_, B_)))
    else:
        prog = _gemm("e", Float, lambda A_, B_, C_: dsl.let(lambda P_: map(
            lambda pc: map(lambda q: epi(q[0][0], q[1]), zip(pc[0], pc[1])), zip(P_, C_)), product(A_, B_)))
    checked(let_epilogue, prog, _gemm_inputs(mkn, floats, seed, form=form), rtol=1e-5, atol=1e-5)
    twice = _gemm("e", Float, lambda A_, B_, C_: dsl.let(lambda P_: map(
        lambda pc: map(lambda q: epi(q[0][0], q[1][0]), zip(pc[0], pc[1])), zip(P_, P_)), product(A_, B_)))
    assert not applications(twice, [let_epilogue])


@RULE_SETTINGS
@given(MKN, st.sampled_from(range(4)), st.sampled_from(["first", "swapped", "two", "post", "scale", "open", "biased", "zipped", "vector",
                                                    "twice"]),
       st.integers(0, 10**6))
def test_dot_fusion(mkn, ei, form, seed):
    """What ``dotFission`` takes out of a map goes back in: an epilogue over a product in each of its
    shapes, and the normal forms of a GEMM over zip(C, A), of a matrix-vector product with an epilogue and
    of a row with two dot products, fused back at every map where it applies: the same ints."""
    from liftpy.rewrite.explore import Variant
    from liftpy.rewrite.normal import dot_fusion, normal_form

    epi = INT_EPILOGUES[ei]
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    inputs = _gemm_inputs(mkn, ints, seed, extra=form == "two", form="scale" if form == "twice" else form)
    if form == "zipped":
        prog = _gemm("g", Int, lambda A_, B_, C_: map(lambda ca: map(lambda bc: epi(_idot(ca[1], bc[0])[0], bc[1]),
                                                                         zip(transpose(B_), ca[0])), zip(C_, A_)))
    elif form == "vector":
        prog = make_program("v", [("A", Array(Int, M, K)), ("x", Array(Int, K)), ("y", Array(Int, M))],
                            lambda A_, x, y: map(lambda p: epi(_idot(p[0], x)[0], p[1]), zip(A_, y)))
        inputs = [ints(rng, (m, k)), ints(rng, (k,)), ints(rng, (m,))]
    elif form == "twice":
        prog = make_program("g", [("A", Array(Int, M, K)), ("B", Array(Int, K, N))], lambda A_, B_: map(
            lambda row: map(lambda col: epi(_idot(row, col)[0], _idot(col, row, 0, 1)[0]), transpose(B_)), A_))
    else:
        prog = _epilogue_program(form, Int, epi, _idot, f=lambda v: add(v, 1))
    normal = normal_form()(Variant(prog))[0].program
    checked(dot_fusion, normal, inputs)


@settings(RULE_SETTINGS, max_examples=8)
@given(st.sampled_from([(4, 4, 4), (8, 2, 4), (2, 8, 4)]), st.sampled_from(["tile2DReduce", "tile2DReduceStrided", "registerBlock2D"]),
       st.sampled_from(["first", "swapped", "two", "post", "scale", "open", "biased", "biased_residual"]), st.sampled_from(range(3)),
       st.integers(0, 10**6))
def test_tilings_write_an_epilogue_out(mkn, name, form, ei, seed):
    """``tile2DReduce`` and ``registerBlock2D`` of a product with an epilogue: each block's results go
    through it with the same block of the other arrays as they are stored."""
    from liftpy.rewrite.tiling import tile2D_reduce, tile2D_reduce_strided

    rule = {"tile2DReduce": tile2D_reduce, "tile2DReduceStrided": tile2D_reduce_strided, "registerBlock2D": register_block2D}[name]
    prog = _epilogue_program(form, Float, FLOAT_EPILOGUES[ei], _fdot)
    inputs = _gemm_inputs(mkn, floats, seed, extra=form == "two", form=form)
    results = checked(rule, prog, inputs, candidates=[1, 2, 4, 8], per_application=3, rtol=1e-5, atol=1e-5)
    assert any(r.where == "map" for r in results)  # at the epilogue, not only at the product inside it


@pytest.mark.parametrize("name", ["tile2DReduce", "tile2DReduceStrided", "registerBlock2D"])
@pytest.mark.parametrize("mkn,ei", [((4, 4, 4), 0), ((8, 2, 4), 1), ((2, 8, 4), 2)])
def test_tilings_write_out_a_bias_and_an_epilogue_reading_other_arrays(name, mkn, ei):
    """A convolution's bias as the dot products' initial value and an epilogue reading another array (its
    shortcut) after it, every rule on every size: both in the write-out, at the epilogue (which the
    sampled test above meets only now and then)."""
    test_tilings_write_an_epilogue_out.hypothesis.inner_test(mkn, name, "biased_residual", ei, 7)


@RULE_SETTINGS
@given(st.sampled_from([(4, 4, 4), (2, 8, 6), (3, 6, 4)]),
       st.sampled_from(["first", "swapped", "two", "post", "scale", "open", "biased", "biased_residual"]),
       st.sampled_from(range(3)), st.integers(0, 10**6))
def test_split_k_and_pad_k_keep_an_epilogue(mkn, form, ei, seed):
    """Split-K applies an epilogue in its sum kernel (with the other arrays); padK leaves it where it is."""
    from liftpy.rewrite.tiling import pad_k, split_k

    prog = _epilogue_program(form, Float, FLOAT_EPILOGUES[ei], _fdot)
    inputs = _gemm_inputs(mkn, floats, seed, extra=form == "two", form=form)
    checked(split_k, prog, inputs, candidates=[1, 2, 4, 8], per_application=3, rtol=1e-5, atol=1e-5)
    checked(pad_k, prog, inputs, candidates=[0, 1, 3, 7], per_application=2, rtol=1e-5, atol=1e-5)

# ----------------------------------------------------------------------------------- cooperative rows


def _row_program(kind: int, op):
    """A map over the rows of [M][N] whose function reduces its row: kind 0 a row's reduction by ``op`` of a
    function of its elements; 1 a dot product with a vector, its initial value from a second input (a bias)
    and a function of the result after it (a ReLU, max(y, 0)); 2 softmax's shape in integers: the row's reduction
    bound by ``let``, an elementwise map of the row bound by ``let``, its sum, and a map of the bound row
    by both; 3 layer norm's: a sum, the centred row bound by ``let``, its sum of squares, then a map."""
    from liftpy.ir.dsl import at, let

    if kind == 0:
        return make_program("p", [("x", Array(Int, M, N))], lambda x: map(lambda r: reduce(
            lambda acc, v: op(acc, mult(v, 3)), 0 if op is add else (-100 if op is fmax else 100), r), x))
    if kind == 1:
        return make_program("p", [("x", Array(Int, M, N)), ("v", Array(Int, N)), ("b", Array(Int, M))], lambda x, v, b: map(
            lambda rb: map(lambda y: fmax(y, 0), reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), rb[1], zip(rb[0], v))),
            zip(x, b)))
    if kind == 2:
        return make_program("p", [("x", Array(Int, M, N))], lambda x: map(lambda r: let(
            lambda top: let(lambda e: let(lambda total: map(lambda y: sub(mult(y, 7), at(0, total)), e), reduce(add, 0, e)),
                            map(lambda y: sub(y, at(0, top)), r)),
            reduce(op if op is not add else fmax, -100, r)), x))
    return make_program("p", [("x", Array(Int, M, N))], lambda x: map(lambda r: let(
        lambda total: let(lambda c: let(lambda sq: map(lambda y: add(mult(y, 2), at(0, sq)), c),
                                        reduce(lambda acc, y: add(acc, mult(y, y)), 0, c)),
                          map(lambda y: sub(mult(y, 5), at(0, total)), r)),
        reduce(add, 0, r)), x))


ROW_CASES = st.tuples(st.integers(1, 3), st.sampled_from([4, 8, 12, 16]), st.integers(0, 3),
                      st.sampled_from(["add", "max", "min"]), st.integers(0, 10**6))


def _row_inputs(kind, m, n, seed):
    rng = np.random.default_rng(seed)
    inputs = [ints(rng, (m, n))]
    if kind == 1:
        inputs += [ints(rng, (n,)), ints(rng, (m,))]
    return inputs


@RULE_SETTINGS
@given(ROW_CASES)
def test_deal_rows(case):
    """Each row's reductions become the combination of L work-items' partial results over their shares
    (elements l, l + L, ...), its maps maps of the shares, written back through the inverse layout: for
    integers, exactly the original's results."""
    from liftpy.rewrite import rows as R

    m, n, kind, op, seed = case
    prog = _row_program(kind, {"add": add, "max": fmax, "min": fmin}[op])
    inputs = _row_inputs(kind, m, n, seed)
    checked(R.deal_rows, prog, inputs)
    if kind != 1:  # asVector reads scalars; a zip's components are dealt one by one
        checked(R.deal_rows_vector, prog, inputs)
    else:
        checked(R.deal_rows_vector, make_program("p", [("x", Array(Int, M, N)), ("v", Array(Int, N))], lambda x, v: map(
            lambda r: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0, zip(r, v)), x)), inputs[:2])


@RULE_SETTINGS
@given(ROW_CASES)
def test_rows_lowering_and_memory(case):
    """After dealing, the group's trees (reduceLclShared where the group reads the result), the memory of
    the let-bound shares (private, local), the recomputation of let-bound maps (letInline, then
    reduceMapFusion) and the copy of shares read twice (letShares) keep the results."""
    from liftpy.rewrite import rows as R
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.lowering import MAP_WRG

    m, n, kind, op, seed = case
    kind = 2 + kind % 2 if kind != 1 else 1  # the shapes with lets, and the dot product with a ReLU after it
    prog = _row_program(kind, {"add": add, "max": fmax, "min": fmin}[op])
    inputs = _row_inputs(kind, m, n, seed)
    if kind != 1:
        checked(R.let_inline, prog, inputs)
        inlined, _ = _after(once(R.let_inline), prog, {"M": m, "N": n})
        checked(R.reduce_map_fusion, inlined, inputs)
    dealt, values = _after(once(R.deal_rows), prog, {"M": m, "N": n})
    if kind != 1:  # the row's shares read twice (its reduction, then its map): copied once
        checked(R.let_shares, dealt, inputs, values)
    grouped, values = _after(once(MAP_WRG[0]), dealt, values)
    checked(R.reduce_lcl_shared, grouped, inputs, values)
    if kind != 1:
        checked(R.group_let_private, grouped, inputs, values)
        checked(R.group_let_local, grouped, inputs, values)


@RULE_SETTINGS
@given(ROW_CASES, st.booleans())
def test_split_rows(case, batch):
    """Every row's reduction cut into chunks: a kernel of the chunks' results, then the program reading
    them (the bias and the function after the reduction applied once there); with a batch around the rows
    (a fully-connected layer's), two levels of maps."""
    from liftpy.rewrite.rows_split import split_rows

    m, n, kind, op, seed = case
    kind = kind % 2
    prog = _row_program(kind, {"add": add, "max": fmax, "min": fmin}[op])
    inputs = _row_inputs(kind, m, n, seed)
    if batch:
        rng = np.random.default_rng(seed)
        prog = make_program("p", [("x", Array(Int, K, N)), ("w", Array(Int, M, N)), ("b", Array(Int, M))], lambda x, w, b: map(
            lambda xb: join(map(lambda wb: map(lambda y: fmax(y, 0), reduce(
                lambda acc, p: multAndSumUp(acc, p[0], p[1]), wb[1], zip(wb[0], xb))), zip(w, b))), x))
        inputs = [ints(rng, (2, n)), ints(rng, (m, n)), ints(rng, (m,))]
    checked(split_rows, prog, inputs)
    if not batch and n % 8 == 0:
        # the chunks of the first kernel are rows of their own, dealt as vectors (a zip's chunk: by component)
        from liftpy.rewrite import rows as R
        from liftpy.rewrite.strategy import once

        split, values = _after(once(split_rows), prog, {"M": m, "N": n})
        checked(R.deal_rows_vector, split, inputs, values)


def test_every_rule_is_tested():
    """Runs last in this file (pytest keeps file order): every library rule met its property test."""
    from liftpy.rewrite.pipeline import crop_kernel, let_global, materialize_input, pad_opt, reduce_kernels, split_partial_kernels

    from liftpy.rewrite.tiling import TILING_RULES

    library = {r.name for r in A.ALGORITHMIC_RULES + L.LOWERING_RULES + L.MEMORY_RULES + TILING_RULES + [register_block2D]}
    library |= {r.name for r in (pad_opt, materialize_input, split_partial_kernels, crop_kernel, reduce_kernels, let_global)}
    library |= {"fuseText", "splitJoinText", "transposeText", "tileAllPairs"}
    from liftpy.rewrite.normal import NORMAL_RULES, dot_fusion
    from liftpy.rewrite.rows import ROW_RULES
    from liftpy.rewrite.rows_split import split_rows

    from liftpy.rewrite.columns import COLUMN_RULES

    library |= {r.name for r in NORMAL_RULES + [dot_fusion] + ROW_RULES + [split_rows] + COLUMN_RULES}
    missing = library - TESTED
    assert not missing, f"rules without a property test run: {sorted(missing)}"

