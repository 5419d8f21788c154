"""Half storage (issue 57, item 2): arrays kept as half in global memory, computed in float.

The rule ``storeHalf`` is checked against its meaning (``evaluate_stored``) by hypothesis; the library's
elementwise add, sum, jacobi2d, matrix product and a small convolution layer are explored in half storage and
run on the CPU's OpenCL device, each against the float64 reference within the precision's tolerance.
"""

import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy as L
from liftpy import Array, Float
from liftpy.codegen.kernel import generate_kernel, generate_pipeline
from liftpy.constraints.infer import variant_space
from liftpy.constraints.plan import plan_space
from liftpy.constraints.solver import count_space, sample
from liftpy.errors import CodegenError
from liftpy.explore.operator import library_operator
from liftpy.ir.compare import compare
from liftpy.ir.precision import FP16_STORAGE, half_arrays, relative_errors, tolerance
from liftpy.rewrite.explore import ExploreOptions, Variant, explore
from liftpy.rewrite.half import evaluate_stored, half_candidates, half_storage_stage, store_half

N = L.size_var("N")
add, mult = L.BUILTINS["add"], L.BUILTINS["mult"]


@L.program
def vadd(a: Array(Float, N), b: Array(Float, N)):
    return L.mapGlb(0, lambda t: add(L.get(t, 0), L.get(t, 1)), L.zip(a, b))


def _half_only(opts=ExploreOptions()):
    return replace(opts, precision=FP16_STORAGE)


# ------------------------------------------------------------------------------------------ the text


def test_a_half_kernel_reads_with_vload_half_and_writes_with_vstore_half():
    src = generate_kernel(vadd, {"N": 64}, placements={"a": "half", "b": "half", "out": "half"}).source
    assert "global const half* restrict a" in src and "global half* restrict out" in src
    assert "vstore_half_rte(add_float(vload_half(gl_0, a), vload_half(gl_0, b)), gl_0, out);" in src
    assert "half storage: a, b, out" in src
    # an input alone in half: the result stays float
    mixed = generate_kernel(vadd, {"N": 64}, placements={"b": "half"}).source
    assert "global float* restrict out" in mixed and "out[gl_0] = add_float(a[gl_0], vload_half(gl_0, b));" in mixed


def test_float_kernels_are_untouched_and_bytes_halve():
    plain = generate_kernel(vadd, {"N": 64})
    assert "half" not in plain.source
    stored = generate_kernel(vadd, {"N": 64}, placements={"a": "half", "b": "half", "out": "half"})
    assert stored.plan.device_bytes * 2 == plain.plan.device_bytes


def test_vector_reads_of_half_arrays_use_vload_halfn():
    op = library_operator("add", {"N": 1024})
    variants = explore(op.program(), _half_only(op.explore_options()))
    sources = []
    for v in variants:
        for cfg in _configs(v, op.sizes(), 1):
            sources += [ks.source for ks, _ in generate_pipeline(v.program, {**op.sizes(), **cfg}, placements=v.placement_map)]
    # (eight or sixteen aligned halves as words: test_eight_aligned_halves_move_as_one_word_and_compute_right)
    assert any(re.search(r"(vload_half(4|8|16)\(0, a \+ |load_half(8|16)_word\(a \+ )", s)
               and re.search(r"(vstore_half(4|8|16)_rte\(|store_half(8|16)_word\()", s) for s in sources)
    assert not any(" = *((global half" in s or "*((global const half" in s for s in sources)  # never dereferenced


def test_eight_aligned_halves_move_as_one_word_and_compute_right():
    """Eight halves at an index that is a multiple of eight are read and written as one sixteen-byte word,
    converted four at a time in private memory (``liftpy.codegen.half.WORD_HELPERS``: NVIDIA's OpenCL moves
    them at float4's bandwidth, ``vload_half8`` at less than half of it); four halves, or eight at an index
    not known to be aligned, keep ``vload_halfN``.  On the CPU device the word kernel computes what
    ``vload_half8`` does, subnormal, infinite and NaN halves included."""
    from liftpy.host.kernel import compile_program

    @L.program
    def vadd8(a: Array(Float, N), b: Array(Float, N)):
        return L.asScalar(L.mapGlb(0, lambda t: L.vectorize(8, add)(L.get(t, 0), L.get(t, 1)),
                                   L.zip(L.asVector(8, a), L.asVector(8, b))))

    halves = {"a": "half", "b": "half", "out": "half"}
    src = generate_kernel(vadd8, {"N": 64}, placements=halves).source
    assert "store_half8_word(add_float8(load_half8_word(a + gl_0 * 8), load_half8_word(b + gl_0 * 8)), out + gl_0 * 8);" in src
    assert src.count("float8 load_half8_word(const global half* p)") == 1 and "vload_half8" not in src
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(64) * 4).astype(np.float16)
    b = (rng.standard_normal(64) * 4).astype(np.float16)
    a[:6] = [6e-8, -3e-6, 65504, np.inf, -np.inf, np.nan]
    b[:6] = [1e-7, 0.0, 10.0, 1.0, 1.0, 0.0]
    out = compile_program(vadd8, {"N": 64}, placements=halves).run(a.astype(np.float32), b.astype(np.float32)).output
    with np.errstate(all="ignore"):
        want = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16).astype(np.float32)
    assert np.array_equal(out, want, equal_nan=True)
    @L.program
    def vadd16(a: Array(Float, N), b: Array(Float, N)):
        return L.asScalar(L.mapGlb(0, lambda t: L.vectorize(16, add)(L.get(t, 0), L.get(t, 1)),
                                   L.zip(L.asVector(16, a), L.asVector(16, b))))

    assert "store_half16_word(add_float16(load_half16_word(a + gl_0 * 16)" in generate_kernel(vadd16, {"N": 64}, placements=halves).source
    out16 = compile_program(vadd16, {"N": 64}, placements=halves).run(a.astype(np.float32), b.astype(np.float32)).output
    assert np.array_equal(out16, want, equal_nan=True)
    four = generate_kernel(vadd, {"N": 64}, placements=halves).source
    assert "half8_word" not in four
    from types import SimpleNamespace

    from liftpy.codegen import half

    a_buffer = SimpleNamespace(name="a")
    assert half.read_c(a_buffer, "i", 8, aligned=False) == "vload_half8(0, a + i)"
    assert half.store_c(a_buffer, "i", "v", 8, aligned=False) == "vstore_half8_rte(v, 0, a + i);"


def test_only_float_arrays_are_stored_as_half():
    @L.program
    def count(k: Array(L.Int, N)):
        return L.mapGlb(0, lambda v: add(v, L.lit(1)), k)

    assert half_candidates(count) == []
    with pytest.raises(CodegenError, match="cannot be stored as half"):
        generate_kernel(count, {"N": 8}, placements={"k": "half"})


# ------------------------------------------------------------------------------------------ the rule


def test_store_half_is_a_choice_of_the_exploration():
    float_variants = explore(vadd, ExploreOptions())
    half_variants = explore(vadd, _half_only())
    assert all(not v.placements for v in float_variants)
    assert {v.placements for v in half_variants} == {(("a", "half"), ("b", "half"), ("out", "half"))}
    every = explore(vadd, replace(_half_only(), half_each=True))
    assert len({v.placements for v in every}) == 7  # every non-empty subset of a, b, out
    assert any(s.rule == "storeHalf" for v in half_variants for s in v.trace)


def test_store_half_refuses_an_array_already_placed():
    v = Variant(vadd)
    once = store_half("a")(v)[0]
    assert store_half("a")(once) == []
    assert once.program is v.program  # the program is the user's: only the storage changes


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100, width=32), min_size=4, max_size=40),
       st.sets(st.sampled_from(["a", "b", "out"]), min_size=1))
def test_store_half_keeps_results_within_the_precisions_tolerance(values, halved):
    a = np.array(values, dtype=np.float32)
    b = a[::-1].copy() * np.float32(0.5)
    placements = {name: "half" for name in halved}
    exact = L.evaluate(vadd, a, b).astype(np.float64)
    stored = evaluate_stored(vadd, placements, a, b)
    tol = tolerance(FP16_STORAGE, half_arrays(placements))
    assert compare(stored, exact, tol).ok
    if "out" in halved:  # the result holds halves
        np.testing.assert_array_equal(stored, stored.astype(np.float16).astype(np.float32))


# ------------------------------------------------------------------------------ on the CPU's device


def _configs(v, sizes, n):
    space = variant_space(v, sizes)
    return sample(count_space(plan_space(space)), n, seed=0) if v.params else [{}]


# Every memory-bound operator of benchmarks/half.py (its --small sizes), a product and a convolution.
CASES = [
    ("add", {"N": 4096}),
    ("sum", {"N": 4096}),
    ("max", {"N": 4096}),
    ("gemv", {"M": 64, "N": 64}),
    ("fully_connected:relu=0", {"B": 1, "M": 32, "N": 64}),
    ("jacobi2d", {"H": 64, "W": 64}),
    ("jacobi3d", {"D": 8, "H": 8, "W": 8}),
    ("blur2d", {"H": 32, "W": 32}),
    ("maxpool2d", {"C": 4, "H": 16, "W": 16}),
    ("avgpool2d", {"C": 4, "H": 16, "W": 16}),
    ("global_avgpool", {"H": 8, "W": 8, "C": 16}),
    ("softmax_rows", {"M": 16, "N": 64}),
    ("layernorm_rows", {"M": 16, "N": 64}),
    ("matmul", {"M": 32, "N": 32, "K": 64}),
    ("conv2d", {"C": 8, "H": 10, "W": 10, "M": 8}),
]


@pytest.mark.parametrize("spec,sizes", CASES, ids=[c[0] for c in CASES])
def test_operators_validate_in_half_storage_on_the_cpu_device(spec, sizes):
    from liftpy.host.kernel import compile_program

    op = library_operator(spec, sizes)
    variants = explore(op.program(), _half_only(replace(op.explore_options(), max_variants=4)))
    # every array half, but an input placed in an image (an image of floats: the pools' windows)
    assert variants and all(half_arrays(v.placements) + list(dict(v.placements).values()).count("image") >= 2
                            for v in variants)
    inputs = op.inputs(0)
    reference = op.expected([np.asarray(x, dtype=np.float64) for x in inputs])
    checked = 0
    for v in variants[:3]:
        cfg = _configs(v, sizes, 1)[0]
        out = compile_program(v.program, {**sizes, **cfg}, placements=v.placement_map).run(*inputs).output
        tol = tolerance(FP16_STORAGE, half_arrays(v.placements))
        verdict = compare(out, reference, tol)
        assert verdict.ok, (v.placements, verdict.message)
        # the kernel computes what storeHalf means, up to float rounding and one half rounding of the result
        meant = evaluate_stored(op.program(), v.placement_map, *inputs)
        assert relative_errors(out, meant)[0] <= 2 * 2**-11
        # and it is half: a float kernel's result meets a tolerance the half one does not
        assert not compare(out, reference, 1e-6).ok
        checked += 1
    assert checked


@pytest.mark.slow
def test_the_half_benchmark_runs_at_small_sizes(tmp_path):
    """benchmarks/half.py --small on the CPU device: the fields the GPU run writes, float and half storage."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "half.json"
    proc = subprocess.run([sys.executable, str(root / "benchmarks/half.py"), "--small", "--only", "add", "--samples", "2",
                           "--json", str(out), "--db", str(tmp_path / "h.sqlite")],
                          capture_output=True, text=True, timeout=900, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = json.loads(out.read_text())
    assert {r["precision"] for r in records} >= {"fp32", "fp16-storage"}
    for r in records:
        assert {"operator", "precision", "memory_bound", "best_ms", "fp32_ms", "speedup", "max_rel_error",
                "torch_fp16_ms"} <= set(r)
        assert r["operator"] == "add" and r["memory_bound"] is True and r["best_ms"] > 0
    half = next(r for r in records if r["precision"] == "fp16-storage")
    float_ = next(r for r in records if r["precision"] == "fp32")
    assert half["fp32_ms"] == float_["best_ms"] and half["speedup"] == pytest.approx(float_["best_ms"] / half["best_ms"])
    assert 2**-16 < half["max_rel_error"] < 3e-3 and half["best_bytes"] * 2 == float_["best_bytes"]
