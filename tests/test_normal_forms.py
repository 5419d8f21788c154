"""Normal forms before optimisation (issue 54, item 1): matrix products written in other spellings reach the
vendor-class rules, and programs already in the shape derive what they derived before.

The rules themselves have their property tests in tests/test_rules_normal.py; here the whole derivation: each
spelling is explored with the default options, some variant is tiled (``tile2DReduce``, staged,
register-blocked, split along K where the canonical matrix product is), and a tiled variant, with a
configuration drawn by the constraint solver, compiles on the default device and matches the interpreter.
"""

from functools import lru_cache

import numpy as np
import pytest
import sympy

from liftpy import (
    Array, Float, add, join, let, load_program, make_program, map, mult, multAndSumUp, reduce, sizes, transpose, zip,
)
from liftpy.ir.kernels import kernel_count
from liftpy.ir.types import ArrayType
from liftpy.operators import conv, linalg
from liftpy.rewrite.explore import ExploreOptions, Variant, explore, features
from liftpy.rewrite.normal import normal_form
from liftpy.rewrite.validate import check_variant

M, N, K, L = sizes("M N K L")
ALPHA, BETA = 1.5, 0.5


def dot(x, y, step=lambda acc, p: multAndSumUp(acc, p[0], p[1])):
    return reduce(step, 0.0, zip(x, y))


def product(A, B, step=None):
    return map(lambda row: map(lambda col: dot(row, col) if step is None else dot(row, col, step), transpose(B)), A)


GEMM = [("A", Array(Float, M, K)), ("B", Array(Float, K, N)), ("C", Array(Float, M, N))]


def gemm_zipped():
    """(i) C := alpha A B + beta C as a map over zip(C, A), transpose(B) inside, the product read by [0]."""
    return make_program("gemm_zipped", GEMM, lambda A, B, C: map(
        lambda ca: map(lambda bc: ALPHA * dot(ca[1], bc[0])[0] + BETA * bc[1], zip(transpose(B), ca[0])), zip(C, A)))


def gemm_product_first():
    """(ii) the product first, then the epilogue over its result zipped with C."""
    return make_program("gemm_first", GEMM, lambda A, B, C: map(
        lambda pc: map(lambda q: ALPHA * q[0][0] + BETA * q[1], zip(pc[0], pc[1])), zip(product(A, B), C)))


def gemm_joined():
    """(i) with the row of dot products joined into a row of values (``join(map(... reduce ...))``)."""
    return make_program("gemm_joined", GEMM, lambda A, B, C: map(
        lambda ca: map(lambda q: ALPHA * q[0] + BETA * q[1], zip(join(map(lambda b: dot(ca[1], b), transpose(B))), ca[0])),
        zip(C, A)))


def gemm_let():
    """(ii) with the product bound by let, the epilogue over the bound name."""
    return make_program("gemm_let", GEMM, lambda A, B, C: let(lambda P: map(
        lambda pc: map(lambda q: ALPHA * q[0][0] + BETA * q[1], zip(pc[0], pc[1])), zip(P, C)), product(A, B)))


def matmul_plus():
    """(iii) the accumulator spelt acc + a * b."""
    return make_program("mm_plus", GEMM[:2], lambda A, B: product(A, B, lambda acc, p: acc + p[0] * p[1]))


def matmul_add_mult():
    """(iii) the accumulator spelt add(acc, mult(a, b))."""
    return make_program("mm_add_mult", GEMM[:2], lambda A, B: product(A, B, lambda acc, p: add(acc, mult(p[0], p[1]))))


def chained():
    """(iv) D := (alpha A B) C + beta D."""
    def body(A, B, C, D):
        ab = map(lambda r: map(lambda c: ALPHA * dot(r, c)[0], transpose(B)), A)
        return map(lambda p: map(lambda q: dot(p[1], q[0])[0] + BETA * q[1], zip(transpose(C), p[0])), zip(D, ab))

    return make_program("chained", [("A", Array(Float, M, K)), ("B", Array(Float, K, L)), ("C", Array(Float, L, N)),
                                    ("D", Array(Float, M, N))], body)


SPELLINGS = {"gemm_zipped": gemm_zipped, "gemm_product_first": gemm_product_first, "gemm_joined": gemm_joined,
             "gemm_let": gemm_let, "matmul_plus": matmul_plus,
             "matmul_add_mult": matmul_add_mult, "chained": chained}
SIZES = {"M": 16, "N": 16, "K": 16, "L": 16}


@lru_cache(maxsize=None)
def variants(name: str) -> tuple:
    program = linalg.matmul() if name == "matmul" else SPELLINGS[name]()
    return tuple(explore(program))


def normal(program):
    return normal_form()(Variant(program))[0].program


def test_programs_in_the_shape_are_their_normal_form():
    """The canonical matrix product and the convolutions are left as they are (so they derive the same
    variants and the same kernels as before the normal form)."""
    programs = [linalg.matmul(), linalg.batched_matmul(), linalg.gemv(), load_program("examples/programs/matmul_highlevel.lift")]
    programs += [conv.conv2d(**kw) for kw in ({}, {"relu": 1}, {"groups": 2}, {"k": "1x1", "pad": "0"}, {"stride": "2"})]
    for p in programs:
        assert normal(p) == p, p.name


def test_spellings_have_one_normal_form():
    """The GEMM over zip(C, A), the one written product first (or with the product let-bound) and the one with
    the row of dot products joined reach the same program; the accumulators' spellings reach the canonical
    matrix product."""
    gemm = normal(gemm_zipped()).body
    assert gemm == normal(gemm_product_first()).body == normal(gemm_joined()).body == normal(gemm_let()).body
    assert normal(matmul_plus()).body == linalg.matmul().body == normal(matmul_add_mult()).body


def test_a_fully_connected_layer_becomes_a_product():
    """``join`` inside the batch's map: the rows of one-element results come out of the map (a view), and
    the product under it is tiled like the others, its bias and ReLU written out by the tiles."""
    p = normal(linalg.fully_connected(1))
    assert p != linalg.fully_connected(1)
    options = ExploreOptions(vectorize=False, partial=False, register_block=False, group=False, let_private=False,
                             local_stage=False, unroll=False, images=False)
    tiled = [v for v in explore(linalg.fully_connected(1), options) if "tile2DReduce" in features(v)]
    assert tiled


def _feature_union(vs) -> set:
    out = set()
    for v in vs:
        out |= features(v)
    return out


VENDOR = {"tile2DReduce", "tile2DReduceStrided", "stageTiles", "stageTilesT", "doubleBuffer", "splitK", "registerBlock2D",
          "unrollInItem"}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_every_spelling_reaches_the_vendor_class_rules(name):
    """Every rule of the vendor class the canonical product gets, each spelling gets (split-K but for the
    chained products, whose result is the second of two kernels)."""
    canonical = _feature_union(variants("matmul")) & VENDOR
    assert canonical == VENDOR
    got = _feature_union(variants(name))
    expected = canonical - ({"splitK"} if name == "chained" else set())
    assert expected <= got, sorted(expected - got)


def _inputs(program):
    subs = {sympy.Symbol(k, integer=True, positive=True): v for k, v in SIZES.items()}

    def make(sizes_):
        rng = np.random.default_rng(7)
        out = []
        for t in program.param_types:
            dims = []
            while isinstance(t, ArrayType):
                dims.append(int(sympy.sympify(t.size).subs(subs)))
                t = t.elem
            out.append(rng.standard_normal(dims).astype(np.float32))
        return out

    return make


@pytest.mark.parametrize("name,rules", [
    ("gemm_zipped", ("tile2DReduce", "stageTiles")),
    ("gemm_zipped", ("splitK", "tile2DReduceStrided")),
    ("gemm_product_first", ("tile2DReduceStrided", "stageTilesT")),
    ("matmul_plus", ("tile2DReduce", "doubleBuffer")),
    ("matmul_add_mult", ("registerBlock2D",)),
    ("gemm_zipped", ("registerBlock2D",)),
    ("chained", ("tile2DReduce", "stageTiles")),
])
def test_a_tiled_variant_of_each_spelling_runs(name, rules):
    """A variant using ``rules`` of each spelling, at a configuration the constraint solver draws, compiles on
    the default device and computes what the interpreter computes from the spelling as written."""
    program = SPELLINGS[name]()
    chosen = [v for v in variants(name) if set(rules) <= features(v)]
    assert chosen, f"no variant of {name} uses {rules}"
    v = chosen[0]
    if name.startswith("gemm") and "splitK" not in rules:
        assert kernel_count(v.program) == 1  # the epilogue fused into the product's kernel
    if name == "chained":
        assert kernel_count(v.program) == 2  # one kernel per product, each tiled
        assert sum(1 for s in v.trace if s.rule.startswith("tile2DReduce")) == 2
    result = check_variant(v, program, [{k: SIZES[k] for k in ("M", "N", "K", "L") if k in str(program.param_types)}],
                           _inputs(program), count=2, rtol=1e-3, atol=1e-3)
    assert result.ok, result.summary()


def test_a_product_joined_before_its_epilogue_reaches_the_tilings():
    """A user's product whose rows are joined (``join(map(col -> dot(row, col), ..))``, reduce's one-element
    results made a row of values) before the epilogue zips it with C: the join moves into the epilogue's
    reads (``zipViewFusion``) and the product is tiled as the canonical one."""
    joined = make_program("gemm_joined_first", GEMM, lambda A, B, C: map(
        lambda pc: map(lambda q: ALPHA * q[0] + BETA * q[1], zip(pc[0], pc[1])),
        zip(map(lambda row: join(map(lambda col: dot(row, col), transpose(B))), A), C)))
    assert any("tile2DReduce" in features(v) for v in explore(joined))
