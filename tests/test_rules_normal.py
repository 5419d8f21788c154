"""The normal-form rules (liftpy/rewrite/normal.py) preserve semantics, and the tilings fire on the normal
forms of products with epilogues (hypothesis property tests, as tests/test_rules.py describes)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy import (
    Array, Float, Int, add, fmax, join, make_program, map, mult, multAndSumUp, reduce, relu, split, sub, transpose,
    zip,
)
from liftpy.ir import dsl
from liftpy.ir.userfun import BUILTINS
from liftpy.rewrite.blocking import register_block2D
from liftpy.rewrite.rule import applications

from rule_checks import H, INT_UNARY, K, M, N, RULE_SETTINGS, W, checker, floats, ints, missing, two_d

TESTED: set[str] = set()
checked = checker(TESTED)


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


def test_every_rule_of_this_file_is_tested():
    """Runs last in this file (pytest keeps file order): each of its rules met its property test."""
    assert not missing("test_rules_normal.py", TESTED), f"rules without a property test run: {missing('test_rules_normal.py', TESTED)}"
