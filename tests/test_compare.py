"""The one verdict on an output (liftpy.ir.compare): NaNs and infinities compared position by position, the
same verdict from ``liftpy run`` and ``liftpy explore``."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.ir.compare import Comparison, compare

NAN, INF = float("nan"), float("inf")


def test_the_same_nans_and_infinities_where_the_reference_has_them_are_correct():
    exp = np.array([NAN, 1.0, -INF, INF, 4.0])
    assert compare(np.array([NAN, 1.0, -INF, INF, 4.0], dtype=np.float32), exp).ok
    # The reference's NaN does not make the other elements' tolerance NaN: a wrong number is still wrong.
    v = compare(np.array([NAN, 1.0, -INF, INF, 4.5], dtype=np.float32), exp)
    assert not v.ok and "(4,)" in v.message


def test_a_nan_or_infinity_where_the_reference_differs_is_named():
    exp = np.array([[0.0, 1.0], [NAN, INF]])
    cases = {
        (0, 1): [[0.0, NAN], [NAN, INF]],  # NaN for a number
        (1, 0): [[0.0, 1.0], [2.0, INF]],  # a number for NaN
        (1, 1): [[0.0, 1.0], [NAN, -INF]],  # the other infinity
    }
    for at, got in cases.items():
        v = compare(np.array(got, dtype=np.float32), exp)
        assert not v.ok and v.worst_index == at and f"first at {at}" in v.message, (at, v)


def test_tuple_outputs_compare_their_nans_component_by_component():
    exp = (np.array([NAN, 2.0]), np.array([1, 2], dtype=np.int32))
    assert compare((np.array([NAN, 2.0], dtype=np.float32), np.array([1, 2], dtype=np.int32)), exp).ok
    v = compare((np.array([0.0, 2.0], dtype=np.float32), np.array([1, 2], dtype=np.int32)), exp)
    assert not v.ok and v.message.startswith("component 0")


ROOTS = """def roots(x: [float]N) =
  mapGlb(0, fun(a) => sqrt(a), x)
"""


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_run_and_explore_accept_a_kernel_whose_true_result_holds_nans(tmp_path):
    """The random inputs are negative in places, so sqrt gives NaN there: on the device as in the
    interpreter.  Both commands called such kernels wrong (run said MISMATCH, explore stored every point
    as a wrong result: 'non-finite output')."""
    prog = tmp_path / "roots.lift"
    prog.write_text(ROOTS)
    run = subprocess.run([sys.executable, "-m", "liftpy", "run", str(prog), "-s", "N=64"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "-> OK" in run.stdout, run.stdout + run.stderr

    from liftpy.explore import explore_program
    from liftpy.results.store import Status

    ex = explore_program(prog, {"N": 64}, samples=2, db=tmp_path / "r.sqlite", progress=False, repeat=1, warmup=0,
                         references=False)
    points = [r for r in ex.records if not r.is_reference]
    assert points and all(r.status is Status.OK for r in points), [(r.status, r.error) for r in points]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 300), st.floats(1e-6, 1e-1), st.sampled_from(["noise", "nan_out", "nan_ref", "zeros"]), st.integers(0, 10**6))
def test_recorded_errors_from_the_comparison_equal_the_general_ones(n, noise, form, seed):
    """The relative errors a measured point records, worked out from the comparison's allowed errors (one
    buffer), equal the general function's; where a value is not finite the comparison declines and the
    general function answers."""
    from liftpy.ir.precision import relative_errors

    rng = np.random.default_rng(seed)
    want = rng.standard_normal(n).astype(np.float32)
    if form == "zeros":
        want[:] = 0.0
    got = (want * (1 + noise * rng.standard_normal(n)) + noise * rng.standard_normal(n)).astype(np.float32)
    if form == "nan_out":
        got[n // 2] = np.nan
    if form == "nan_ref":
        want[n // 2] = np.inf
    c = Comparison.of(want, 1e-3)
    fast = c.relative_errors(got)
    if form != "noise":
        assert fast is None  # (a reference of zeros: the general function's scale is the smallest float)
        return
    general = relative_errors(got, want)
    assert fast == pytest.approx(general, rel=1e-9, abs=1e-300)
