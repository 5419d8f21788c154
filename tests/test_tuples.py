"""Tuples as values in memory, literals with a value per lane or per element, ``xs[i]`` in the embedded
DSL, and the tiled all-pairs variant (issue 17 items 2, 3 and 5; constant arrays of issue 13)."""

from __future__ import annotations

import builtins
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from liftpy.codegen.kernel import generate_kernel, generate_pipeline
from liftpy.constraints import sample, solve
from liftpy.constraints.infer import variant_space
from liftpy.errors import CodegenError, EvaluationError, LiftTypeError
from liftpy.explore.operator import compare
from liftpy.host.device import get_device
from liftpy.host.kernel import CompiledPipeline, compile_program
from liftpy.ir import dsl as L
from liftpy.ir import primitives as P
from liftpy.ir.expr import Call, Var, subterms
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.ir.types import Array, Float, Float4, Int, Tuple, size_var
from liftpy.ir.userfun import userfun
from liftpy.rewrite.explore import explore_all

N = size_var("N")
ROOT = Path(__file__).resolve().parent.parent


def _example():
    spec = importlib.util.spec_from_file_location("tuples_example", ROOT / "examples" / "tuples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _example()


def same(got, want, tol=1e-4) -> bool:
    if isinstance(want, tuple):
        return isinstance(got, tuple) and all(same(g, w, tol) for g, w in builtins.zip(got, want))
    return np.allclose(np.asarray(got).reshape(np.shape(want)), want, rtol=tol, atol=tol)


def _swap(p):
    return p[1], p[0]


SWAP = userfun("swapXY", [("p", Tuple(Float, Float))], Tuple(Float, Float), "return make_Tuple2_float_float(p._1, p._0);", _swap)


def _scale(v):
    return v[0] * v[1][..., None], v[1] + 1


SCALE = userfun("scaleBy", [("v", Tuple(Float4, Float))], Tuple(Float4, Float),
                "v._0 = v._0 * v._1;\nv._1 = v._1 + 1.0f;\nreturn v;", _scale)


# ---------------------------------------------------------------------------------------- the examples
@pytest.mark.parametrize("name", sorted(EX.EXAMPLES))
def test_tuple_examples_match_numpy_print_and_parse_back(name):
    prog, reference = EX.EXAMPLES[name]
    args = EX.inputs()[name]
    assert same(evaluate(prog, *args), reference(*args))
    text = show_program(prog)
    assert "value((" in text  # the tuple literal of the accumulator, in the text form
    assert show_program(parse_program(text)) == text  # the example registers its user functions


@pytest.mark.parametrize("name", sorted(EX.EXAMPLES))
def test_every_explored_variant_of_the_tuple_examples_compiles_and_matches(name):
    prog, reference = EX.EXAMPLES[name]
    args = EX.inputs(rows=4, n=32)[name]
    want = reference(*args)
    sizes = {"N": 32} if name == "all_pairs" else {"M": 4, "N": 32}
    kept, dropped = explore_all(prog)
    assert kept and not dropped
    device = get_device(None)
    for k, v in enumerate(kept):
        configs = sample(solve(variant_space(v, sizes)), 1, seed=k)
        assert configs, f"variant {k} of {name} has no valid configuration at {sizes}"
        stages = generate_pipeline(v.program, {**sizes, **configs[0]}, placements=v.placement_map)
        if k % 3 == 0 or "toLocal" in show_program(v.program):
            out = CompiledPipeline(v.program, {**sizes, **configs[0]}, device, v.placement_map, stages=stages).run(*args).output
            assert same(out, want, 1e-3), (name, k)


def test_all_pairs_gets_the_tiled_variant_with_each_tile_staged_in_local_memory():
    """An input shared by a work-group (the tile every work-item folds over) is staged by the group in
    local memory: the N-body shape, a barrier after the copy and one at the end of each step."""
    kept, _ = explore_all(EX.all_pairs)
    tiled = [v for v in kept if any(s.rule.startswith("tileAllPairs") for s in v.trace)]
    staged = [v for v in tiled if "toLocal" in show_program(v.program)]
    assert tiled and staged
    v = staged[0]
    sizes = {"N": 64, "m0": 16, "t0": 8}
    source = generate_kernel(v.program, sizes).source
    assert "local Tuple2_float_float" in source and source.count("barrier(CLK_LOCAL_MEM_FENCE)") >= 2
    args = EX.inputs(n=64)["all_pairs"]
    out = compile_program(v.program, sizes).run(*args).output
    assert same(out, EX.all_pairs_reference(*args), 1e-3)


def test_tile_all_pairs_keeps_the_interpreters_result_exactly():
    from liftpy.rewrite.allpairs import tile_all_pairs
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.variant import Variant

    (v,) = once(tile_all_pairs)(Variant(EX.all_pairs))
    args = EX.inputs(n=24)["all_pairs"]
    want = evaluate(EX.all_pairs, *args)
    for m, t in [(1, 1), (4, 6), (8, 3), (24, 24)]:
        got = evaluate(v.program, *args, sizes={"m0": m, "t0": t})
        assert all(np.array_equal(g, w) for g, w in builtins.zip(got, want))  # same order of the fold


# ------------------------------------------------------------------------------ arrays of tuples in memory
def test_arrays_of_tuples_as_inputs_and_outputs():
    prog = L.make_program("swap", [("ps", Array(Tuple(Float, Float), N))], lambda ps: L.mapGlb(0, SWAP, ps))
    x, y = np.arange(8, dtype=np.float32), -np.arange(8, dtype=np.float32)
    want = evaluate(prog, (x, y))
    assert same(want, (y, x))
    k = compile_program(prog, {"N": 8})
    assert "global const Tuple2_float_float* restrict ps" in k.source
    assert same(k.run((x, y)).output, want)
    structured = np.zeros(8, dtype=[("x", np.float32), ("y", np.float32)])
    structured["x"], structured["y"] = x, y
    assert same(k.run(structured).output, want)  # a numpy structured array is one too


def test_a_struct_with_a_vector_keeps_the_devices_alignment():
    """(float4, float) is 32 bytes on the device: the host packs and unpacks it by OpenCL's rules."""
    t = Tuple(Float4, Float)
    assert t.dtype.itemsize == 32 and t.dtype.fields["_1"][1] == 16
    prog = L.make_program("scale", [("vs", Array(t, N))], lambda vs: L.mapGlb(0, SCALE, vs))
    v = np.arange(24, dtype=np.float32).reshape(6, 4)
    s = np.linspace(1, 2, 6).astype(np.float32)
    want = evaluate(prog, (v, s))
    assert same(want, (v * s[:, None], s + 1))
    assert same(compile_program(prog, {"N": 6}).run((v, s)).output, want)


def test_a_zip_element_goes_whole_to_a_user_function_and_a_tuple_lives_in_local_memory():
    def prog_fn(a, b):
        return L.join(L.mapWrg(0, lambda c: L.let(lambda loc: L.mapLcl(0, SWAP, loc), L.toLocal(L.mapLcl(0, L.id, c))),
                               L.split(4, L.zip(a, b))))

    prog = L.make_program("zipswap", [("a", Array(Float, N)), ("b", Array(Float, N))], prog_fn)
    a, b = np.arange(8, dtype=np.float32), np.arange(8, dtype=np.float32) * 10
    k = compile_program(prog, {"N": 8})
    assert "make_Tuple2_float_float(a[" in k.source  # the zip's element assembled into a struct
    assert "local Tuple2_float_float" in k.source
    assert same(k.run(a, b).output, (b, a))


def test_compare_validates_tuple_outputs_component_by_component():
    x = np.ones(4, np.float32)
    assert compare((x, x.astype(np.int32)), (x, x.astype(np.int32))).ok
    bad = compare((x, x.astype(np.int32) * 2), (x, x.astype(np.int32)))
    assert not bad.ok and "component 1" in bad.message


# ------------------------------------------------------------------------------ errors, said when built
def test_tuple_literals_are_checked_when_built():
    assert L.lit((1, 2), Tuple(Float, Int)).value == (1.0, 2)
    with pytest.raises(LiftTypeError, match="tuple of 2 values"):
        L.lit((1.0, 2.0, 3.0), Tuple(Float, Float))
    with pytest.raises(LiftTypeError, match="tuple of 2 values"):
        L.lit(0.0, Tuple(Float, Float))


def test_a_numpy_implementation_returning_no_tuple_is_named():
    bad = userfun("badPair", [("x", Float)], Tuple(Float, Float), "return make_Tuple2_float_float(x, x);", np.negative)
    prog = L.make_program("p", [("x", Array(Float, N))], lambda x: L.map(bad, x))
    with pytest.raises(EvaluationError, match="badPair returns \\(float, float\\)"):
        evaluate(prog, np.ones(4, np.float32))


def test_tuples_with_array_components_are_refused_in_memory():
    prog = L.make_program("p", [("x", Array(Float, N))], lambda x: L.zip(L.split(2, x), L.split(2, x)))
    with pytest.raises(CodegenError, match="tuples of them"):
        generate_kernel(prog, {"N": 8})


# ------------------------------------------------------------------------------ literals per lane / element
def test_vector_literal_with_a_value_per_lane():
    prog = L.make_program("scale", [("x", Array(Float4, N))],
                          lambda x: L.mapGlb(0, lambda v: v * L.lit((1.0, 2.0, 3.0, 4.0), Float4), x))
    text = show_program(prog)
    assert "value((1.0f, 2.0f, 3.0f, 4.0f), float4)" in text and show_program(parse_program(text)) == text
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    assert same(compile_program(prog, {"N": 4}).run(x).output, x * np.array([1, 2, 3, 4], np.float32))


def _blur():
    weights = L.lit(np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16.0, Array(Float, 3, 3))
    return L.make_program("blur", [("img", Array(Float, N, N))], lambda img: L.map(
        lambda row: L.join(L.map(lambda w: L.reduce(lambda a, p: a + p[0] * p[1], 0.0, L.zip(L.join(w), L.join(weights))), row)),
        L.slide2D(3, 1, L.pad2D(1, 1, 1, 1, "clamp", img))))


def test_constant_array_of_stencil_weights():
    prog = _blur()
    text = show_program(prog)
    assert "value([[0.0625f, 0.125f, 0.0625f]" in text and show_program(parse_program(text)) == text
    img = np.random.default_rng(1).standard_normal((6, 6)).astype(np.float32)
    padded = np.pad(img, 1, mode="edge")
    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16.0
    want = sum(k[i, j] * padded[i:i + 6, j:j + 6] for i in range(3) for j in range(3))
    assert same(evaluate(prog, img), want)
    kept, dropped = explore_all(prog)
    assert kept and not dropped
    device = get_device(None)
    for n, v in enumerate(kept[::6]):
        config = sample(solve(variant_space(v, {"N": 6})), 1, seed=n)[0]
        out = CompiledPipeline(v.program, {"N": 6, **config}, device, v.placement_map).run(img).output
        assert same(out, want)
    assert "constant float const_0[9] = {0.0625f" in generate_kernel(kept[0].program, {"N": 6, **sample(solve(variant_space(kept[0], {"N": 6})), 1)[0]}).source


def test_array_literals_given_per_element_are_checked_when_built():
    with pytest.raises(LiftTypeError, match="needs 3 values, got 2"):
        L.lit([1.0, 2.0], Array(Float, 3))
    with pytest.raises(LiftTypeError, match="known length"):
        L.lit([1.0, 2.0], Array(Float, N))
    with pytest.raises(LiftTypeError, match="not for float"):
        L.lit([1.0], Float)


# ------------------------------------------------------------------------------------------------ xs[i]
def test_indexing_resolves_to_at_for_arrays_and_get_for_tuples():
    prog = L.make_program("d", [("x", Array(Float, N)), ("y", Array(Float, N))],
                          lambda x, y: L.map(lambda p: p[0][2] - p[1][0], L.zip(L.slide(3, 1, x), L.slide(3, 1, y))))
    prims = {type(n.fn) for n in subterms(prog.body) if isinstance(n, Call)}
    assert P.At in prims and P.Get in prims and P.Index not in prims
    assert "at(2, p._0)" in show_program(prog).replace("\n", " ").replace("  ", "")
    x, y = np.arange(6, dtype=np.float32), np.arange(6, dtype=np.float32) ** 2
    assert same(evaluate(prog, x, y), x[2:] - y[:-2])


def test_indexing_in_the_text_form_and_with_a_size_expression():
    prog = parse_program("def last(xs: [[float]M]N) = map(fun(r) => r[M - 1], xs)")
    assert "at((M - 1), r)" in show_program(prog)
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert same(evaluate(prog, xs), xs[:, -1])
    with pytest.raises(LiftTypeError, match="gather"):
        Var("xs")[Var("i")]  # an index held in data is a gather
