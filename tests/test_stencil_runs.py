"""A stencil's row in runs per work-item (``splitRuns``): one guard for the run's interior
(``codegen.passes.runs``), its reads and stores as vectors (four floats, or eight halves as one word), and
the kernels compute what the library's reference does on the CPU's device, borders included."""

import re

import numpy as np
import pytest

from liftpy import arith as A
from liftpy.codegen.kernel import generate_pipeline
from liftpy.codegen.memory import Buffer
from liftpy.codegen.passes.runs import guard_runs
from liftpy.codegen.stmt import Block, If, Kernel, Store
from liftpy.explore.operator import library_operator
from liftpy.ir.precision import FP16_STORAGE, half_arrays, tolerance
from liftpy.ir.compare import compare
from liftpy.ir.types import Float
from liftpy.rewrite.explore import explore, features
from liftpy.views import view as V

SIZES = {"H": 32, "W": 64}


def _runs_variant(spec, precision):
    op = library_operator(spec, SIZES, precision)
    variants = [v for v in explore(op.program(), op.explore_options())
                if "splitRuns" in features(v) and [t.rule for t in v.trace if t.rule.startswith("map")] == ["mapGlb1", "mapGlb0"]]
    assert variants, f"no {spec} variant with runs mapped to a 2D grid"
    return op, variants[0]


def _matches_reference(op, v, sizes, precision):
    """The kernel of ``v`` at ``sizes`` computes what the library's reference does on the CPU's device,
    within the precision's tolerance."""
    from liftpy.host.kernel import compile_program

    inputs = op.inputs(0)
    reference = op.expected([np.asarray(x, dtype=np.float64) for x in inputs])
    out = compile_program(v.program, sizes, placements=v.placement_map).run(*inputs).output
    tol = 1e-5 if precision == "fp32" else tolerance(FP16_STORAGE, half_arrays(v.placements))
    verdict = compare(out, reference, tol)
    assert verdict.ok, verdict.message


@pytest.mark.parametrize("precision", ["fp32", "fp16-storage"])
@pytest.mark.parametrize("spec", ["jacobi2d", "blur2d"])
def test_a_run_of_a_row_reads_and_writes_vectors_and_computes_right(spec, precision):
    op, v = _runs_variant(spec, precision)
    sizes = {**SIZES, "s0": 8}
    (ks, _), = generate_pipeline(v.program, sizes, placements=v.placement_map)
    src = ks.source
    # one guard for the run's interior, its complement for the border's runs
    assert src.count("if (") == 2, src
    if precision == "fp32":
        assert "*((global const float4*)(" in src and "*((global float8*)(out" in src
    else:
        assert "load_half8_word(" in src and "store_half8_word(" in src and "vload_half8" not in src
    _matches_reference(op, v, sizes, precision)


def test_a_run_of_four_halves_loads_four_where_eight_are_not_aligned():
    """Runs of four from half storage: a run starts at a multiple of four, not provably of eight, so its rows
    load four halves at a time (``vload_half4``) rather than not at all."""
    op, v = _runs_variant("jacobi2d", "fp16-storage")
    (ks, _), = generate_pipeline(v.program, {**SIZES, "s0": 4}, placements=v.placement_map)
    assert ks.source.count("vload_half4(0, grid + ") == 3 and "load_half8_word(grid" not in ks.source


def test_runs_split_a_stencils_rows_not_a_convolutions_kernels_or_a_products_columns():
    """The strategy splits the row of a stencil or a pool (2D or 3D); a convolution's map over its kernels,
    inside each window's function, and a matrix product's columns are left to their tilings (a convolution
    keeps its 3,338 variants)."""
    from liftpy.rewrite.runs import stencil_rows
    from liftpy.rewrite.variant import Variant

    cases = {"jacobi2d": {"H": 16, "W": 16}, "maxpool2d": {"C": 4, "H": 16, "W": 16},
             "jacobi3d": {"D": 4, "H": 8, "W": 8}, "conv2d": {"C": 8, "H": 16, "W": 16, "M": 8},
             "matmul": {"M": 16, "N": 16, "K": 16}}
    from liftpy.explore.conv import ConvOperator
    from liftpy.operators.conv import get_layer

    split = {name: len(stencil_rows(Variant(library_operator(name, sizes).program()))) for name, sizes in cases.items()}
    layer = ConvOperator.of(get_layer("vgg16:7").reduced(spatial=16, channels=8, kernels=8))
    split["vgg16:7"] = len(stencil_rows(Variant(layer.program())))
    assert split == {"jacobi2d": 1, "maxpool2d": 1, "jacobi3d": 1, "conv2d": 0, "matmul": 0, "vgg16:7": 0}


def _store(buf, index, cond):
    x = Buffer("x", "global", Float, 64, 64, "input", None)
    plain = V.MemRead(x, index, 1)
    return Store(buf, index, V.CondRead(cond, plain, V.ConstRead(0.0, Float)), 1)


def test_only_runs_of_guarded_stores_to_neighbouring_addresses_share_one_guard():
    i = A.var("i")
    out = Buffer("out", "global", Float, 64, 64, "output", None)
    other = Buffer("other", "global", Float, 64, 64, "output", None)
    tile = Buffer("tile", "local", Float, 64, 64, "temporary", None)
    conds = [A.rel(">=", i + k - 1, 0) for k in range(4)]
    kernel = Kernel("k", (out,), (), Block(()))

    def guarded(block):
        return guard_runs(kernel.replace(body=Block((block,)))).body

    run = Block(tuple(_store(out, 4 * i + k, conds[k]) for k in range(4)))
    ifs = [x for x in _items(guarded(run)) if isinstance(x, If)]
    assert len(ifs) == 2 and ifs[1].cond == A.negate(ifs[0].cond)
    assert ifs[0].cond == A.simplify_condition(A.conj(conds), {})
    inside = ifs[0].body.items
    assert all(isinstance(s, Store) and isinstance(s.value, V.MemRead) for s in inside)  # plain reads
    assert ifs[1].body.items == run.items  # the border keeps each store's own choice
    # a run ends where the buffer changes: two runs, each under its own pair of guards
    two = Block(tuple(_store(out, 4 * i + k, conds[k]) for k in range(2)) + tuple(_store(other, 4 * i + k, conds[k]) for k in range(2, 4)))
    assert sum(isinstance(x, If) for x in _items(guarded(two))) == 4
    # left alone: addresses apart, a single store, a copy into local memory
    for block in (Block(tuple(_store(out, 8 * k + i, conds[k]) for k in range(4))), Block((_store(out, i, conds[0]),)),
                  Block(tuple(_store(tile, 4 * i + k, conds[k]) for k in range(4)))):
        assert guarded(block) == Block((block,))


def test_a_run_is_guarded_by_what_every_store_needs_and_its_ends_read_through_their_clamps():
    """Guards made of a stencil's clamps (``same``): the row's condition, which every store of the run has,
    guards the run; the first store's column condition (the column before the run) does not split it, that
    store reads through its clamp.  Guarded by both, a run at a row's end took the border's branch: every warp
    of a 512-wide grid in runs of eight.  Without a shared part there is no branch at all."""
    i, j = A.var("i"), A.var("j")
    x = Buffer("x", "global", Float, 64, 64, "input", None)
    out = Buffer("out", "global", Float, 64, 64, "output", None)
    row = A.rel(">=", j - 1, 0)
    column = A.rel(">=", 4 * i - 1, 0)

    def store(k, cond, guarded):
        clamped = V.MemRead(x, A.maximum([A.const(0), 4 * i + k - 1]) + 8 * j, 1)
        plain = V.MemRead(x, 4 * i + k - 1 + 8 * j, 1)
        return Store(out, 4 * i + k, V.CondRead(cond, plain, clamped, same=True) if guarded else clamped, 1)

    kernel = Kernel("k", (out,), (), Block(()))
    run = Block(tuple(store(k, A.conj([row, column]) if k == 0 else row, True) for k in range(4)))
    ifs = [s for s in _items(guard_runs(kernel.replace(body=Block((run,)))).body) if isinstance(s, If)]
    assert len(ifs) == 2 and ifs[0].cond == row and ifs[1].cond == A.negate(row)
    inside = ifs[0].body.items
    assert inside[0].value == store(0, None, False).value  # through its clamp, not a branch
    assert [s.value for s in inside[1:]] == [run.items[k].value.then for k in range(1, 4)]
    assert ifs[1].body.items == run.items
    # only the ends' conditions: no guard, the ends read through their clamps
    ends = Block(tuple(store(k, column, True) if k == 0 else store(k, None, False) for k in range(1))
                 + tuple(store(k, A.rel("<=", 4 * i + k - 62, 0), True) for k in range(1, 3)))
    flat = list(_items(guard_runs(kernel.replace(body=Block((ends,)))).body))
    assert not any(isinstance(s, If) for s in flat) and [s.value for s in flat] == [s.value.other for s in ends.items]


@pytest.mark.parametrize("precision", ["fp32", "fp16-storage"])
def test_a_3d_stencils_runs_are_guarded_by_their_rows_and_planes_only(precision):
    """Jacobi 3D in runs along its rows: the interior's guard names the plane and the row, not the run's
    column, and the kernel computes what the reference does (borders and rows' ends included)."""
    sizes = {"D": 4, "H": 6, "W": 32}
    op = library_operator("jacobi3d", sizes, precision)
    v = next(v for v in explore(op.program(), op.explore_options())
             if "splitRuns" in features(v) and "placeInImage" not in features(v) and len(v.params) == 1
             and [t.rule for t in v.trace if t.rule.startswith("map")][:2] == ["mapGlb1", "mapGlb0"])
    cfg = {**sizes, str(v.params[0]): 8}
    (ks, _), = generate_pipeline(v.program, cfg, placements=v.placement_map)
    body = [line.strip() for line in ks.source.splitlines() if not line.startswith("//")]
    guards = [line for line in body if line.startswith("if (")]
    assert len(guards) == 2, ks.source
    ends = re.findall(r"max\(0, (\w+) \* 8 - 1\)", ks.source)  # the run's first output, its left
    assert ends and all(column + " " not in guards[0] for column in ends), ks.source
    _matches_reference(op, v, cfg, precision)


def _items(b):
    for x in b.items:
        if isinstance(x, Block):
            yield from _items(x)
        else:
            yield x


def test_the_model_counts_a_runs_interior_not_its_border():
    """The access factors of a run's kernel are those of the interior's branch alone: the border's branch,
    which few work-items take, reads scalars a run apart (a factor of eight) and, counted as if every item
    took it, ranked the runs of eight behind one output an item on the H200's model."""
    from liftpy.codegen.kernel import lower_pipeline
    from liftpy.model.access import PASSES, kernel_factors

    op, v = _runs_variant("jacobi2d", "fp32")
    (k,) = lower_pipeline(v.program, {"H": 64, "W": 512, "s0": 8}, passes=PASSES)
    ifs = [x for x in _walk(k.ir.body) if isinstance(x, If)]
    assert len(ifs) == 2 and ifs[1].cond == A.negate(ifs[0].cond)
    interior_only = _without(k.ir.body, ifs[1])
    got = kernel_factors(k.ir, k.launch.local_size)
    assert got == kernel_factors(k.ir.replace(body=interior_only), k.launch.local_size)
    border_only = _without(k.ir.body, ifs[0])
    assert kernel_factors(k.ir.replace(body=border_only), k.launch.local_size).coalescing > 2 * got.coalescing


def test_the_model_counts_the_interior_of_every_run_with_the_same_guard():
    """Two runs under one guard (two outputs): each interior counted, each border skipped.  Here the second
    interior reads a float 32 apart per work-item; skipped, the factor would be the first's, 1."""
    from liftpy.codegen.stmt import Loop
    from liftpy.ir.levels import Level
    from liftpy.model.access import kernel_factors

    g = A.var("gl_0")
    x = Buffer("x", "global", Float, 4096, 4096, "input", None)
    out = Buffer("out", "global", Float, 4096, 4096, "output", None)
    c = A.rel(">=", g - 1, 0)

    def pair(index):
        read = Block((Store(out, g, V.MemRead(x, index, 1), 1),))
        return [If(c, read), If(A.negate(c), read)]

    body = Block((Loop(g, 64, Level.GLB, 0, Block(tuple(pair(g) + pair(32 * g)))),))
    coalesced = Block((Loop(g, 64, Level.GLB, 0, Block(tuple(pair(g)))),))
    k = Kernel("k", (x, out), (), body)
    assert kernel_factors(k, (32,)).coalescing > 2 * kernel_factors(k.replace(body=coalesced), (32,)).coalescing


def _walk(s):
    from liftpy.codegen.stmt import walk
    return walk(s)


def _without(block, gone):
    from liftpy.codegen.stmt import descend

    def go(b):
        return Block(tuple(descend(x, go) if not isinstance(x, Block) else go(x) for x in b.items if x is not gone))
    return go(block)


@pytest.mark.parametrize("precision", ["fp32", "fp16-storage"])
def test_an_average_pools_windows_read_as_vectors_as_a_maximums_do(precision):
    """Average pooling reduces ``a + v * 0.25f``, max pooling ``max(a, v)``: ``vectorizeSum`` reads both
    windows four at a time (the element's function computed on the vector), so the two pools have the same
    variants, and an average's run of windows read as vectors computes what the reference does."""
    from liftpy.ir.parser import parse_program
    from liftpy.ir.printer import show_program
    from liftpy.search.variants import variant_tags

    sizes = {"C": 4, "H": 16, "W": 32}
    tags = {}
    for spec in ("maxpool2d", "avgpool2d"):
        op = library_operator(spec, sizes, precision)
        tags[spec] = sorted(variant_tags(v) for v in explore(op.program(), op.explore_options()))
    assert tags["avgpool2d"] == tags["maxpool2d"] and any("vec4" in t for t in tags["avgpool2d"])
    op = library_operator("avgpool2d", sizes, precision)
    v = next(v for v in explore(op.program(), op.explore_options())
             if {"splitRuns", "vectorizeSum"} <= set(features(v)) and "placeInImage" not in features(v)
             and [t.rule for t in v.trace if t.rule.startswith("map")][:3] == ["mapGlb2", "mapGlb1", "mapGlb0"])
    assert parse_program(show_program(v.program)) == v.program  # the vector constant in the text form
    cfg = {**sizes, **{str(p): 4 for p in v.params}}
    (ks, _), = generate_pipeline(v.program, cfg, placements=v.placement_map)
    assert "lanesum4(mult_float4(" in ks.source and "((float4)(0.25f))" in ks.source, ks.source
    _matches_reference(op, v, cfg, precision)
