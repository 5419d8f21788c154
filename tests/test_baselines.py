"""Baselines and metrics (issue 55): a user's Python function timed on the exploration's own inputs, checked
first, kept as a reference; GFLOP/s counted on the program, GB/s from the least traffic, the roofline's
share where the device's bandwidth was measured; a frontier of equal memory said and drawn as a distribution."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from liftpy.errors import TuningError
from liftpy.explore.operator import ProgramOperator, library_operator, load_program
from liftpy.ir.inputs import least_traffic
from liftpy.results.pareto import format_frontier, memory_note, plot_frontier, same_memory
from liftpy.results.store import Record, Status
from liftpy.search import UniformSearch

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "programs" / "matmul_highlevel.lift"
HERE = Path(__file__).resolve()


def numpy_matmul(a, b):
    return a @ b


def off_by_one(a, b):
    return a @ b + 1.0


def _op():
    return ProgramOperator.of(load_program(str(MATMUL)), {"M": 16, "N": 8, "K": 12})


@pytest.mark.slow
def test_a_baseline_is_timed_on_the_same_inputs_and_kept_as_a_reference(tmp_path):
    from liftpy.explore import explore_operator

    ex = explore_operator(_op(), samples=2, db=tmp_path / "r.sqlite", search=UniformSearch, progress=False, references=False,
                          repeat=1, baselines=(f"{HERE}:numpy_matmul",))
    (ref,) = ex.references
    assert ref.variant == f"reference:{HERE}:numpy_matmul" and ref.time_ms > 0
    assert ref.bytes == (16 * 12 + 12 * 8 + 16 * 8) * 4  # the inputs and the output
    assert "reference:" in ex.table() and "speedup" in ex.table()


def test_a_baseline_that_computes_something_else_is_refused_before_any_point(tmp_path):
    from liftpy.explore import explore_operator
    from liftpy.results.store import Store

    with pytest.raises(TuningError, match="does not compute what the program computes"):
        explore_operator(_op(), samples=2, db=tmp_path / "r.sqlite", search=UniformSearch, progress=False,
                         references=False, repeat=1, baselines=(f"{HERE}:off_by_one",))
    with Store(tmp_path / "r.sqlite", create=False) as store:
        assert [r for r in store.records() if not r.is_reference] == []


@pytest.mark.parametrize("spec,message", [("nosuchmodule_xyz:f", "cannot import nosuchmodule_xyz"),
                                          (f"{HERE}:no_such_function", "has no no_such_function"),
                                          ("no colon", "is not module:function")])
def test_a_baseline_that_cannot_be_loaded_is_one_line(tmp_path, spec, message):
    from liftpy.explore import explore_operator

    with pytest.raises(TuningError, match=message) as e:
        explore_operator(_op(), samples=1, db=tmp_path / "r.sqlite", progress=False, baselines=(spec,))
    assert "\n" not in str(e.value)


def test_flops_are_counted_on_the_program_a_multiply_add_two():
    assert _op().flops() == 2.0 * 16 * 8 * 12
    softmax = library_operator("softmax_rows", {"M": 4, "N": 32})
    assert softmax.flops() == 4.0 * 4 * 32  # the library's own count wins


def test_least_traffic_reads_every_input_and_writes_the_output_once():
    assert _op().min_bytes() == (16 * 12 + 12 * 8 + 16 * 8) * 4
    gemv = library_operator("gemv", {"M": 8, "N": 16})
    assert least_traffic(gemv.prog, {"M": 8, "N": 16}) == (8 * 16 + 16 + 8) * 4


def _point(time_ms, nbytes, variant="v#1"):
    return Record("dev", "p", variant, {"a": 1}, Status.OK, time_ms=time_ms, bytes=nbytes)


def test_the_table_gives_gb_per_second_and_the_roofline_share_where_the_bandwidth_was_measured():
    front = [_point(2.0, 4000)]
    text = format_frontier(front, flops=4e6, min_bytes=2_000_000, roofline_gb_s=2.0)
    header, _, row = text.splitlines()
    assert "GFLOP/s" in header and "GB/s" in header and "of roofline" in header
    assert "2" in row.split()[3] and row.split()[4] == "1" and row.split()[5] == "50%"  # 2 GFLOP/s, 1 GB/s, half
    assert "of roofline" not in format_frontier(front, min_bytes=2_000_000)


def test_a_frontier_of_equal_memory_is_said_and_drawn_as_a_distribution(tmp_path):
    points = [_point(t, 4000, f"v#{i}") for i, t in enumerate((1.0, 2.0, 5.0, 40.0))]
    assert same_memory(points) and "the same memory" in memory_note(points)
    assert memory_note(points[:1]) == "" and not same_memory(points + [_point(1.5, 8000)])
    path = plot_frontier(points, points[:1], [], tmp_path / "d.png", title="t")
    assert path.stat().st_size > 1000
