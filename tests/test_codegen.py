"""Code generation on PoCL: zero-copy layout, barriers, loop removal, unrolling, caching, header."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from liftpy import (
    Array, Float, evaluate, id, join, mapGlb, mapLcl, mapSeq, mapSeqUnroll, mapWrg, multAndSumUp, pad, program,
    reduceSeq, reduceSeqUnroll, sizes, slide, split, toGlobal, toLocal, toPrivate, zip, let,
)
from liftpy.codegen.kernel import generate_kernel, generate_pipeline
from liftpy.host.kernel import build_cache_size, compile_program

ROOT = Path(__file__).resolve().parents[1]
N, = sizes("N")


def _run(prog, sz, *inputs, **kw):
    k = compile_program(prog, sz, **kw)
    return k, k.run(*inputs).output, evaluate(prog, *inputs, sizes=sz)


@pytest.mark.parametrize("name", ["stencil2d.py", "matmul.py", "conv_highlevel.py"])
@pytest.mark.slow
def test_examples_run_and_match(name):
    r = subprocess.run([sys.executable, str(ROOT / "examples" / name)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "kernel void" in r.stdout
    assert "MISMATCH" not in r.stdout


def _load_example(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_layout_primitives_allocate_nothing():
    """The plans of the stencil and of the lowered convolution hold only inputs, outputs and private
    accumulators: slide2D, pad2D, join, zip and asVector are views."""
    stencil = _load_example("stencil2d").stencil2D
    conv = _load_example("conv_highlevel")
    plans = [
        generate_kernel(stencil, {"H": 20, "W": 30}).plan,
        generate_kernel(conv.conv_lowered(3, 1, 1, False), {"C": 4, "H": 10, "W": 10, "M": 3}).plan,
        generate_kernel(conv.conv_lowered(3, 2, 1, True), {"C": 4, "H": 10, "W": 10, "M": 3}).plan,
    ]
    for plan in plans:
        roles = {b.role for b in plan.buffers}
        assert roles <= {"input", "output", "accumulator"}, plan.table()
        assert {b.space for b in plan.of_role("accumulator")} == {"private"}
        assert all(b.count == 1 for b in plan.of_role("accumulator"))
        assert len(plan.of_role("output")) == 1
    # the symbolic sizes survive: the stencil's input is H*W scalars, its output (H-2)*(W-2)
    st = plans[0]
    assert str(st.of_role("input")[1].symbolic) == "H*W"
    assert st.of_role("output")[0].count == 18 * 28


def _tiled_stencil():
    """1D 3-point stencil where each work-group first copies its tile (plus halo) to local memory."""
    T, = sizes("T")

    @program
    def tiled(xs: Array(Float, N)):
        return join(mapWrg(0, lambda tile:
            let_local(tile),
            slide(T + 2, T, pad(1, 1, 0.0, xs))))

    return tiled


def let_local(tile):
    from liftpy import let

    return let(lambda ltile: join(mapLcl(0, lambda w:
        toGlobal(mapSeq(id, reduceSeq(lambda acc, x: multAndSumUp(acc, x, 1.0), toPrivate(id(0.0)), w))),
        slide(3, 1, ltile))), toLocal(mapLcl(0, id, tile)))


def test_local_memory_gets_exactly_one_barrier():
    prog = _tiled_stencil()
    xs = np.arange(64, dtype=np.float32)
    k, got, want = _run(prog, {"N": 64, "T": 16}, xs)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(want, np.convolve(np.pad(xs, 1), np.ones(3), "valid"), rtol=1e-6)
    assert k.source.count("barrier(CLK_LOCAL_MEM_FENCE)") == 1
    assert "local float loc_0[18] __attribute__((aligned(16)));" in k.source
    assert [b.space for b in k.plan.of_role("temporary")] == ["local"]


def test_no_barrier_without_local_memory():
    stencil = _load_example("stencil2d").stencil2D
    assert "barrier" not in generate_kernel(stencil, {"H": 10, "W": 10}).source


def test_loops_removed_when_range_equals_work_items():
    @program
    def two(xs: Array(Float, N)):
        return mapGlb(0, lambda x: toGlobal(id(x)), xs)

    src = generate_kernel(two, {"N": 32}).source
    assert re.search(r"int gl_0 = get_global_id\(0\);", src)
    assert "for (int gl_0" not in src
    # two mapLcl of different lengths in one kernel: the shorter one keeps a guarded loop
    @program
    def uneven(xs: Array(Float, 8, N)):
        return mapWrg(0, lambda row: join(mapLcl(0, lambda c: toGlobal(mapSeq(id, c)), split(2, row))), xs)

    k = generate_kernel(uneven, {"N": 16})
    assert k.launch.local_size == (8,)
    assert "int l_0 = get_local_id(0);" in k.source


def test_strided_loop_when_more_elements_than_work_items():
    @program
    def big(xs: Array(Float, 4, N)):
        return mapWrg(0, lambda row: mapLcl(0, lambda x: toGlobal(id(x)), row), xs)

    from liftpy.codegen.kernel import DeviceLimits

    k = generate_kernel(big, {"N": 100}, DeviceLimits(max_work_group_size=32, max_work_item_sizes=(32, 32, 32)))
    assert k.launch.local_size == (32,)
    assert "l_0 < 100; l_0 += get_local_size(0)" in k.source
    compiled = compile_program(big, {"N": 100}, launch=k.launch)
    xs = np.random.default_rng(0).standard_normal((4, 100)).astype(np.float32)
    np.testing.assert_array_equal(compiled.run(xs).output, xs)


@pytest.mark.parametrize("policy", ["none", "reductions+registers"])
def test_unrolled_loops_have_no_for_and_match(monkeypatch, policy):
    """Unrolled by liftpy (policy ``none``), no loop is left; by default the reduction's steps are a loop
    the OpenCL compiler unrolls (``#pragma unroll``), the map over its one result is still copied."""
    import importlib

    monkeypatch.setattr(importlib.import_module("liftpy.codegen.passes.unroll"), "COMPILER_UNROLLS", policy)

    @program
    def dot3(xs: Array(Float, N, 3), w: Array(Float, 3)):
        return mapGlb(0, lambda row: toGlobal(mapSeqUnroll(id, reduceSeqUnroll(
            lambda acc, p: multAndSumUp(acc, p[0], p[1]), toPrivate(id(0.0)), zip(row, w)))), xs)

    rng = np.random.default_rng(3)
    xs, w = rng.standard_normal((10, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    k, got, want = _run(dot3, {"N": 10}, xs, w)
    loops = [line.strip() for line in k.source.splitlines() if line.strip().startswith(("for (", "#pragma unroll"))]
    assert loops == ([] if policy == "none" else ["#pragma unroll", "for (int i_0 = 0; i_0 < 3; i_0++) {  // reduceSeqUnroll"])
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got[:, 0], xs @ w, rtol=1e-5)


def test_same_source_is_built_once():
    stencil = _load_example("stencil2d").stencil2D
    compile_program(stencil, {"H": 12, "W": 13})
    n = build_cache_size()
    compile_program(stencil, {"H": 12, "W": 13})
    assert build_cache_size() == n
    compile_program(stencil, {"H": 12, "W": 14})
    assert build_cache_size() == n + 1


def test_header_records_program_sizes_and_launch():
    stencil = _load_example("stencil2d").stencil2D
    src = generate_kernel(stencil, {"H": 9, "W": 11}).source
    head = src.split("kernel void")[0]
    assert "def stencil2D(weights: [[float]3]3, data: [[float]W]H) =" in head
    assert "// sizes: H = 9, W = 11" in head
    assert "// launch: global (63,), local (9,)" in head


def _two_kernels(hint):
    """A two-kernel pipeline whose intermediate buffer is bound under ``hint``; built anew on each call, so
    its bound variables get new process-wide fresh names each time."""
    copy = lambda ys: mapGlb(0, lambda x: toGlobal(id(x)), ys)  # noqa: E731
    body = {"doubled": lambda doubled: copy(doubled), "xs": lambda xs: copy(xs), "ys": lambda xs: copy(xs)}[hint]

    if hint == "ys":  # the stage-numbered name is a parameter's too
        @program
        def twice(xs: Array(Float, N), xs_0: Array(Float, N)):
            return let(body, toGlobal(copy(xs)))

        return twice

    @program
    def twice(xs: Array(Float, N)):
        return let(body, toGlobal(copy(xs)))

    return twice


@pytest.mark.parametrize("hint, name", [("doubled", "doubled"), ("xs", "xs_0"), ("ys", "xs_1")])
def test_intermediate_buffers_have_stable_names(hint, name):
    """An intermediate buffer is a kernel parameter: its name comes from the program (the let's hint, with
    the stage number where that is taken), not from the fresh-name counter, so one program gives the same
    source, hash and compile-cache entry in every process."""
    a, b = _two_kernels(hint), _two_kernels(hint)
    assert a.body.fn.f.params != b.body.fn.f.params  # different fresh names for the same program
    sa, sb = generate_pipeline(a, {"N": 8}), generate_pipeline(b, {"N": 8})
    assert [o for _, o in sa] == [name, "out"]
    assert [ks.source for ks, _ in sa] == [ks.source for ks, _ in sb]
    assert f"global const float* restrict {name}," in sa[1][0].source
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(compile_program(a, {"N": 8}).run(*[x] * len(a.params)).output, x)


def test_runs_report_the_statistic_asked_for():
    """A run's time is the median of its timed runs, or the fastest (a CPU device's rule,
    ``liftpy.host.timing``); a pipeline's kernels likewise."""
    @program
    def twice(xs: Array(Float, N)):
        return mapGlb(0, lambda x: toGlobal(id(x)), xs)

    xs = np.arange(64, dtype=np.float32)
    compiled = compile_program(twice, {"N": 64})
    median = compiled.run(xs, repeat=7)
    fastest = compiled.run(xs, repeat=7, statistic="fastest")
    assert len(median.times_ms) == len(fastest.times_ms) == 7
    assert median.time_ms == sorted(median.times_ms)[3] and fastest.time_ms == min(fastest.times_ms)
    with pytest.raises(ValueError, match="statistic"):
        compiled.run(xs, statistic="mean")


def test_runs_stop_after_a_first_timed_run_slower_than_asked_and_only_then():
    """``stop_above_ms``: a first timed run slower than it ends the runs, its time alone and no output
    (an exploration's abort, without a run of its own); otherwise all runs happen, as without it.  A
    pipeline (two kernels) stops on its first timed run's total."""
    @program
    def twice(xs: Array(Float, N)):
        return mapGlb(0, lambda x: toGlobal(id(x)), xs)

    xs = np.arange(64, dtype=np.float32)
    one = compile_program(twice, {"N": 64})
    two = compile_program(_two_kernels("xs"), {"N": 8})
    for compiled, args in ((one, [xs]), (two, [xs[:8]])):
        stopped = compiled.run(*args, repeat=7, warmup=1, stop_above_ms=0.0)
        assert stopped.stopped and stopped.output is None and len(stopped.times_ms) == 1
        assert stopped.time_ms == stopped.times_ms[0] > 0.0
        full = compiled.run(*args, repeat=7, warmup=1, stop_above_ms=1e9)
        assert not full.stopped and len(full.times_ms) == 7
        np.testing.assert_array_equal(full.output, compiled.run(*args).output)
