"""The tiling, register-blocking, split-K, staging and pipeline (kernel) rules preserve semantics (hypothesis
property tests, as tests/test_rules.py describes)."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy import (
    Array, Float, Int, add, get, join, make_program, map, mult, multAndSumUp, reduce, sizes, slide2D, split, transpose,
    zip,
)
from liftpy.ir import dsl
from liftpy.ir.userfun import BUILTINS
from liftpy.rewrite import algorithmic as A
from liftpy.rewrite import lowering as L
from liftpy.rewrite.blocking import register_block2D
from liftpy.rewrite.checks import check_rule
from liftpy.rewrite.rule import applications
from liftpy.rewrite.runs import split_runs

from rule_checks import (
    H, INT_UNARY, K, M, N, RULE_SETTINGS, W, after_rewrite, checker, floats, ints, missing, two_d, whole_reduction,
)

TESTED: set[str] = set()
checked = checker(TESTED)


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


@settings(RULE_SETTINGS, max_examples=10)
@given(st.sampled_from([(3, 8), (5, 16), (4, 24), (2, 32), (3, 6), (2, 4)]), st.integers(1, 3), st.booleans(), st.integers(0, 10**6))
def test_split_runs(hw, n, weighted, seed):
    """A stencil's row in runs of two, four or eight outputs, each run's copies unrolled (``splitRuns``): the
    interpreter's results before and after agree for every valid run length (those that divide the row); a
    row no run length divides (five) is left without a valid one."""
    h, w = hw
    rng = np.random.default_rng(seed)

    def f(window):
        if weighted:
            return reduce(lambda acc, v: multAndSumUp(acc, v, v), 0, join(window))
        return reduce(add, 0, join(window))

    prog = make_program("p", [("x", Array(Int, H, W))], lambda x: dsl.map2D(f, slide2D(n, 1, x)))
    results = checked(split_runs, prog, [ints(rng, (h + n - 1, w + n - 1))], candidates=[2, 3, 4, 8, 16])
    assert {r.params["s0"] for r in results} <= {s for s in (2, 4, 8) if w % s == 0}  # (never 3: no vector)
    odd = check_rule(split_runs, prog, [ints(rng, (5 + n - 1, 5 + n - 1))], candidates=[1, 2, 3, 4, 5, 8])
    assert not odd  # five rows of five: no run length divides them


def _float_matmul():
    """A x B as the tilings expect it: a map over A's rows of a map over B's columns of a dot product."""
    return make_program("mm", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A_, B_: map(
        lambda row: map(lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B_)), A_))


@RULE_SETTINGS
@given(st.sampled_from([(4, 3, 4), (6, 2, 4), (4, 5, 6), (8, 4, 2), (2, 7, 8)]), st.integers(0, 10**6))
def test_register_block2D(mkn, seed):
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    prog = _float_matmul()
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
        prog = _float_matmul()
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
        prog = _float_matmul()
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
        prog = _float_matmul()
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
    prog = _float_matmul()
    v = once(tile2D_reduce)(Variant(prog))[0]
    v = private_accumulators(apply_mapping(group_mapping(2, 2, every_nest=True))(v)[0])[0]
    rule = L.stage_tiles if name == "stageTiles" else L.stage_tiles_t
    inputs, bindings = [floats(rng, (m, k)), floats(rng, (k, n))], {"M": m, "N": n, "K": k, **params}
    checked(rule, v.program, inputs, bindings, rtol=1e-5, atol=1e-5)
    staged = once(rule)(v)[0]
    checked(L.double_buffer, staged.program, inputs, bindings, rtol=1e-5, atol=1e-5)
    assert not applications(v.program, [L.double_buffer])  # nothing staged: nothing to double


# ------------------------------------------------------------------------------ pipeline (kernel) rules


def _conv_case(k, stride, pad, c, h, m, seed):
    from liftpy.operators.conv import conv_program

    rng = np.random.default_rng(seed)
    sizes_ = {"C": c, "H": h, "W": h, "M": m}
    inputs = [floats(rng, (m, k, k, c)), floats(rng, (m,)), floats(rng, (h, h, c))]
    return conv_program(k, stride, pad), sizes_, inputs


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
    partial, values = after_rewrite(once(A.partial_reduce), program, sizes_)
    checked(split_partial_kernels, partial, inputs, values, rtol=1e-5, atol=1e-5)
    padded, values = after_rewrite(once(pad_opt), program, sizes_)
    checked(crop_kernel, padded, inputs, values, rtol=1e-5, atol=1e-5)


@RULE_SETTINGS
@given(st.integers(1, 24), st.booleans(), st.booleans(), st.integers(-3, 3), st.integers(0, 10**6))
def test_reduce_kernels(n, dot, coalesced, init, seed):
    """A whole-array reduction cut into a kernel of partial sums and a kernel adding them (with the
    initial value), after partialReduce (and coalesce) chose the chunks."""
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.pipeline import reduce_kernels

    prog, inputs = whole_reduction(n, dot, init, seed)
    partial, values = after_rewrite(once(A.partial_reduce), prog, {"N": n})
    if coalesced and values["w0"] not in (1, n):
        partial, values = after_rewrite(once(A.coalesce), partial, values)
    checked(reduce_kernels, partial, inputs, values)


@RULE_SETTINGS
@given(st.integers(1, 24), st.sampled_from(["add", "dot", "max", "min"]), st.booleans(), st.integers(-3, 3),
       st.integers(0, 10**6))
def test_reduce_group(n, op, staged, init, seed):
    """A kernel whose result is one reduction, on one work-group: every n-th element per item, the items'
    results combined with the initial value once; a whole array's (the fold of a maximum or minimum starts
    from the identity in each item, not from the initial value), or the sum of reduceKernels' partial sums."""
    from liftpy.rewrite.pipeline import reduce_group, reduce_kernels
    from liftpy.rewrite.strategy import once

    if op in ("add", "dot"):
        prog, inputs = whole_reduction(n, op == "dot", init, seed)
    else:
        prog = make_program("p", [("a", Array(Int, N))], lambda a: reduce(lambda acc, x: BUILTINS[op](acc, mult(x, 3)), init, a))
        inputs = [ints(np.random.default_rng(seed), (n,))]
    values = {"N": n}
    if staged:
        prog, values = after_rewrite(once(A.partial_reduce), prog, values)
        prog, values = after_rewrite(once(reduce_kernels), prog, values)
    results = checked(reduce_group, prog, inputs, values)
    assert all(r.where.endswith("reduce") for r in results)


@functools.lru_cache(maxsize=None)
def _tree_variants(name: str) -> tuple:
    from liftpy.operators import linalg
    from liftpy.rewrite.explore import explore, features

    program = {"dot": linalg.dot, "sum": linalg.total, "max": linalg.maximum}[name]()
    return program, tuple(v for v in explore(program) if "reduceLcl" in features(v) and "fuseLastGroup" not in features(v))


@RULE_SETTINGS
@given(st.sampled_from(["dot", "sum", "max"]), st.integers(0, 10**6))
def test_fuse_last_group(name, seed):
    """The last kernel of a parallel reduction (one item's or one group's) marked to run in the first
    kernel's last work-group: the same value, and the text form keeps the mark."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.ir.parser import parse_program
    from liftpy.ir.printer import show_program
    from liftpy.rewrite.pipeline import fuse_last_group
    from liftpy.rewrite.strategy import once

    program, variants = _tree_variants(name)
    v = variants[seed % len(variants)]
    n = 3 * 256
    config = sample(solve(variant_space(v, {"N": n})), 1, seed=seed)[0]
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(n).astype(np.float32) for _ in program.params]
    results = checked(fuse_last_group, v.program, inputs, {"N": n, **config}, rtol=1e-4, atol=1e-4)
    assert len({r.where for r in results}) == 1  # the program's last kernel boundary, and nowhere else
    (w,) = once(fuse_last_group)(v)
    text = show_program(w.program)
    assert text.count("toGlobalLast(") == 1 and parse_program(text) == w.program


@pytest.mark.parametrize("rest,dim,applies", [
    ("reduceSeq(add, 0.0f, parts)", 0, True),
    ("reduceSeq(add, at(0, x), parts)", 0, False),  # reads an input the first kernel's groups do not pass on
    ("reduceSeq(add, 0.0f, parts)", 1, False),  # groups in dimension 1: the ticket counts dimension 0
    ("join(mapWrg(0, fun(r) => mapLcl(0, id, reduceLcl(0, add, 0.0f, toLocal(mapLcl(0, id, r)))), split(2, parts)))", 0,
     False),  # two groups
    ("mapGlb(0, fun(q) => mult(q, 2.0f), parts)", 0, False),  # global work-items
    ("tuple(reduceSeq(add, 0.0f, parts), reduceSeq(max, -3e38f, parts))", 0, False),  # two results, two kernels
])
def test_fuse_last_group_needs_a_rest_one_group_runs(rest, dim, applies):
    from liftpy.ir.parser import parse_program
    from liftpy.rewrite.pipeline import fuse_last_group

    program = parse_program(f"""def p(x: [float]N) =
      let(fun(parts) => {rest},
          toGlobal(join(mapWrg({dim}, fun(c) => mapLcl({dim}, id, reduceLcl({dim}, add, 0.0f, toLocal(join(
            mapLcl({dim}, fun(d) => reduceSeq(add, 0.0f, d), split(2, c)))))), split(8, x)))))""")
    assert bool(applications(program, [fuse_last_group])) == applies


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


def test_every_rule_of_this_file_is_tested():
    """Runs last in this file (pytest keeps file order): each of its rules met its property test."""
    assert not missing("test_rules_tiling.py", TESTED), f"rules without a property test run: {missing('test_rules_tiling.py', TESTED)}"
