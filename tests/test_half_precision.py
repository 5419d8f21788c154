"""Validation by precision, the precision option and half arithmetic (issue 57, items 3-6)."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy as L
from liftpy.codegen.kernel import generate_kernel
from liftpy.errors import DeviceError, RewriteError, TuningError
from liftpy.explore.operator import library_operator
from liftpy.ir.compare import Comparison
from liftpy.ir.precision import FP16, FP16_STORAGE, FP32, tolerance
from liftpy.operators.precision import reduction_length, with_precision
from liftpy.probe.half import expected as probe_expected
from liftpy.probe.half import has_half_arithmetic, require_half_arithmetic
from liftpy.results.pareto import format_frontier, pareto_front
from liftpy.results.precision import error_class, precision_check, precision_metrics
from liftpy.results.store import Record, Status, Store
from liftpy.rewrite.explore import explore
from liftpy.rewrite.half import half_arithmetic


def _record(variant, time_ms, nbytes, metrics=None):
    return Record("dev", "p", variant, {}, Status.OK, time_ms, nbytes, metrics=metrics or {})


# ------------------------------------------------------------------------------------------ the verdict


def test_a_half_point_is_judged_with_its_precisions_tolerance():
    expected = np.ones(64)
    check = Comparison.of(expected, 1e-3)  # each element may be off by 1e-3 * (1 + rms) = 2e-3
    three_roundings = expected * (1 + 7 * 2**-11)  # more than one half rounding (u) and fp32 allow, less than three
    assert not check(three_roundings).ok  # beyond fp32's tolerance
    scaled = precision_check(check, {"a": "half", "b": "half", "out": "half"})
    assert scaled(three_roundings).ok
    assert precision_check(check, {}) is check  # a float point: the verdict as before
    assert not scaled(expected * 1.01).ok  # the tolerance is a few units of half, not anything
    assert not precision_check(check, {"out": "half"})(three_roundings).ok  # one half array allows less


def test_half_inputs_are_judged_as_the_kernel_received_them():
    """A variant keeping its input as half computes on the rounded input; softmax carries |x| + |max| of
    that rounding into its result, beyond a few half roundings of the float reference for rows of large
    values (around 30 here).  The verdict uses the reference on the rounded input (the kernel's own roundings allowed), so
    an exact kernel passes and a wrong one still fails; the error recorded stays the end-to-end one."""
    op = library_operator("softmax_rows", {"M": 2, "N": 64}, FP16_STORAGE)
    rng = np.random.default_rng(5)
    x = (30 + rng.standard_normal((2, 64))).astype(np.float32)  # (half's spacing at 30 is 2^-6)
    check = Comparison.of(op.expected([x]), op.rtol)
    placements = {"x": "half", "out": "half"}
    exact = op.expected([x.astype(np.float16).astype(np.float32)]).astype(np.float16).astype(np.float32)
    assert not precision_check(check, placements, op.rtol)(exact).ok  # judged against the float input: fails
    assert precision_check(check, placements, op.rtol, op, [x])(exact).ok
    assert not precision_check(check, placements, op.rtol, op, [x])(exact * 1.01).ok
    assert precision_metrics(exact, check, placements)["max_rel_error"] > 2**-11 * 4  # end to end, recorded


def test_points_record_their_precision_and_errors():
    expected = np.array([1.0, 2.0, 4.0])
    check = Comparison.of(expected, 1e-3)
    m = precision_metrics(expected * (1 + 2**-11), check, {"a": "half"})
    assert m["precision"] == FP16_STORAGE and m["max_rel_error"] == pytest.approx(2**-11 * 4 / (4 + np.sqrt(7)), rel=1e-6)
    assert precision_metrics(expected, check, {})["precision"] == FP32


def test_an_exploration_in_half_storage_stores_errors_beside_float_points(tmp_path):
    from liftpy.explore.loop import explore_operator

    db = tmp_path / "r.sqlite"
    for precision in (FP32, FP16_STORAGE):
        op = library_operator("add", {"N": 4096}, precision)
        explore_operator(op, samples=2, db=db, references=False, progress=False)
    with Store(db, create=False) as store:
        records = [r for r in store.records() if r.measured]
    by = {r.metrics["precision"] for r in records}
    assert by == {FP32, FP16_STORAGE}
    half = [r for r in records if r.metrics["precision"] == FP16_STORAGE]
    assert all(2**-16 < r.metrics["max_rel_error"] < tolerance(FP16_STORAGE, 3) for r in half)
    assert all(r.metrics["rms_rel_error"] <= r.metrics["max_rel_error"] for r in half)
    floats = [r for r in records if r.metrics["precision"] == FP32]
    assert all(r.bytes == 2 * h.bytes for r in floats for h in half)


# ------------------------------------------------------------------------------------------ the frontier


def test_the_frontier_has_an_error_axis_where_precisions_mix():
    fast_float = _record("f1", 1.0, 800, {"precision": FP32, "max_rel_error": 1e-7})
    small_half = _record("h1", 1.5, 400, {"precision": FP16_STORAGE, "max_rel_error": 5e-4})
    slow_half = _record("h2", 2.0, 400, {"precision": FP16_STORAGE, "max_rel_error": 6e-4})
    accurate_slow = _record("f2", 3.0, 400, {"precision": FP32, "max_rel_error": 1e-7})
    front = pareto_front([fast_float, small_half, slow_half, accurate_slow])
    assert [r.variant for r in front] == ["f1", "h1", "f2"]  # f2: as small as h1, and accurate
    assert error_class(small_half) == error_class(slow_half)
    assert [r.variant for r in pareto_front([fast_float, small_half, accurate_slow], max_error=1e-5)] == ["f1", "f2"]
    table = format_frontier(front)
    assert "precision" in table and "fp16-storage" in table and "0.0005" in table


def test_a_store_without_precisions_reads_as_float_points():
    old = [_record("a", 1.0, 100), _record("b", 2.0, 50)]
    assert [r.variant for r in pareto_front(old)] == ["a", "b"]
    assert "precision" not in format_frontier(pareto_front(old))
    assert [r.variant for r in pareto_front(old, max_error=1e-3)] == ["a", "b"]  # fp32's verdict allowed 1e-3
    assert pareto_front(old, max_error=1e-4) == []


def test_pareto_max_error_on_the_command_line(tmp_path):
    from liftpy.cli import main

    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        for r in (_record("f", 1.0, 800, {"precision": FP32, "max_rel_error": 1e-7}),
                  _record("h", 0.5, 400, {"precision": FP16_STORAGE, "max_rel_error": 5e-4})):
            store.put(r)
    assert main(["pareto", "--db", str(db), "--max-error", "1e-5"]) == 0
    assert main(["pareto", "--db", str(db), "--max-error", "1e-9"]) == 2


# ---------------------------------------------------------------------------------- precision option


def test_fp16_storage_operators_enumerate_only_half_variants():
    op = library_operator("matmul", {"M": 16, "N": 16, "K": 16}, FP16_STORAGE)
    assert op.problem == library_operator("matmul", {"M": 16, "N": 16, "K": 16}).problem  # one frontier for both
    variants = op.variants()
    assert variants and all(dict(v.placements).get("out") == "half" for v in variants)


def test_fp16_operators_compute_in_half_with_a_tolerance_for_it():
    op = library_operator("matmul", {"M": 16, "N": 16, "K": 64}, FP16)
    assert "[[half]K]M" in str(op.program())
    assert reduction_length(op) == 64
    assert op.rtol == pytest.approx(tolerance(FP16, 3, 64))
    with pytest.raises(TuningError, match="fp32, fp16-storage, fp16"):
        with_precision(library_operator("add", {"N": 8}), "bf16")


def test_half_arithmetic_refuses_a_user_function_declared_on_float():
    with pytest.raises(RewriteError, match="relu.*fp16-storage"):
        half_arithmetic(library_operator("add", {"N": 8}, "fp32").program().__class__(
            "r", (L.ir.expr.Var("x"),), (L.Array(L.Float, L.size_var("N")),),
            L.map(L.relu, L.ir.expr.Var("x"))))


def test_half_arithmetic_kernels_enable_the_extension_and_compute_in_half():
    op = library_operator("matmul", {"M": 8, "N": 8, "K": 8}, FP16)
    v = explore(op.program())[0]
    src = generate_kernel(v.program, {**op.sizes(), **{str(p): 4 for p in v.params}}).source
    assert "#pragma OPENCL EXTENSION cl_khr_fp16 : enable" in src
    assert "half multAndSumUp_half(half acc, half x, half y)" in src and "(half)0.0f" in src
    assert "vload_half" not in src  # a half program reads its half arrays directly
    assert "cl_khr_fp16" not in generate_kernel(explore(library_operator("matmul", {"M": 8, "N": 8, "K": 8}).program())[0]
                                                .program, {"M": 8, "N": 8, "K": 8}).source


# ------------------------------------------------------------------------------------------ the probe


def test_the_half_probe_on_the_cpu_device_answers_and_explains():
    from liftpy.host.device import get_device
    from liftpy.probe.half import run_probe

    dev = get_device()
    m = run_probe(dev)
    assert isinstance(m.value, bool)
    if "cl_khr_fp16" not in (dev.cl_device.extensions or ""):
        assert m.value is False and "does not build" in m.note
    assert len(probe_expected()) == 48


def test_a_profile_records_the_probes_answer():
    from liftpy.host.profile import DeviceProfile

    p = DeviceProfile("d", "t").with_overrides({"measured": {"half_arithmetic": {"value": True}}}, "x.json")
    assert has_half_arithmetic(p) is True
    assert has_half_arithmetic(DeviceProfile("d", "t")) is None


def test_fp16_on_a_device_without_half_is_one_line_naming_the_alternative():
    with pytest.raises(DeviceError) as e:
        require_half_arithmetic("pthread-AMD EPYC", False)
    assert "\n" not in str(e.value) and "pthread-AMD EPYC" in str(e.value) and "--precision fp16-storage" in str(e.value)
    require_half_arithmetic("gpu", True)


def test_the_command_line_refuses_fp16_in_one_line(tmp_path):
    from liftpy.host.device import get_device

    if "cl_khr_fp16" in (get_device().cl_device.extensions or ""):
        pytest.skip("this device reports half arithmetic")
    proc = subprocess.run([sys.executable, "-m", "liftpy", "explore", "add", "-s", "N=64", "--precision", "fp16",
                           "--db", str(tmp_path / "r.sqlite")], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.splitlines() if l.startswith("liftpy")]
    assert len(lines) == 1 and "fp16-storage" in lines[0] and "half" in lines[0]
    assert "Traceback" not in proc.stderr


def test_constraints_keep_half_arithmetic_off_a_device_without_it():
    from liftpy.constraints.infer import variant_space
    from liftpy.constraints.plan import plan_space
    from liftpy.constraints.solver import is_satisfiable
    from liftpy.host.profile import DeviceProfile

    def profile(value):
        return DeviceProfile("d", "t").with_overrides({"measured": {"half_arithmetic": {"value": value}}}, "p.json")

    half = library_operator("add", {"N": 1024}, FP16)
    stored = library_operator("add", {"N": 1024}, FP16_STORAGE)
    v, w = half.variants()[0], stored.variants()[0]
    assert is_satisfiable(plan_space(variant_space(v, half.sizes(), profile(False)))) is False
    assert is_satisfiable(plan_space(variant_space(v, half.sizes(), profile(True)))) is True
    assert is_satisfiable(plan_space(variant_space(w, stored.sizes(), profile(False)))) is True  # storage runs anywhere


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 200), st.integers(0, 2**16))
def test_half_arithmetic_stays_within_its_tolerance_of_the_float_program(n, seed):
    op = library_operator("dot", {"N": n})
    half = half_arithmetic(op.program())
    assert L.parse_program(str(half)) == half  # the rewritten program has a text form too
    rng = np.random.default_rng(seed)
    # Terms of one sign: the bound is relative to the result (docs/precision.md), which a sum that cancels
    # to nearly nothing leaves far below its terms' rounding errors (hypothesis found one: 13 terms, -0.012).
    a, b = (rng.uniform(0, 1, n).astype(np.float32) for _ in range(2))
    exact = np.dot(a.astype(np.float64), b.astype(np.float64))
    got = L.evaluate(half, a, b)
    assert got.dtype == np.float16
    assert Comparison.of(np.array([exact]), tolerance(FP16, 3, n))(got.astype(np.float64)).ok


def test_a_network_in_half_storage_is_not_chained(tmp_path, capsys):
    from liftpy.cli import main

    assert main(["network", "vgg16", "--reduced", "--precision", "fp16-storage", "--chain", "1",
                 "--db", str(tmp_path / "r.sqlite")]) == 2
    assert "chain a network in --precision fp32" in capsys.readouterr().err
