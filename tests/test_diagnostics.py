"""Failures are said where the user looks (issue 55): an exploration none of whose variants can run at its sizes
is refused before any point runs, with the reasons grouped; failed points are grouped by reason at the end of
``liftpy explore`` and by ``liftpy failures``; ``liftpy variants -s`` says why it leaves variants out."""

from __future__ import annotations

import subprocess
import sys

import pytest

from liftpy.explore.diagnose import failure_groups, format_failures
from liftpy.results.store import Record, Status

# A row softmax.  At N = 65536 a row fits no work-item's private memory; only the variants where a work-group
# shares each row (reduceLclShared, issue 54) run, so without them no variant has a valid configuration.
SOFTMAX = """def softmax(x: [[float]N]M) =
  map(fun(r) => let(fun(top) => let(fun(e) => let(fun(total) => map(fun(v) => div(v, total[0]), e),
    reduce(add, 0.0f, e)), map(fun(v) => exp(sub(v, top[0])), r)), reduce(max, -3e38f, r)), x)
"""
# Every point fails to build: the OpenCL body of its user function is not C.
BROKEN = """userfun twice(a: float): float = opencl "return a +;"
def f(x: [float]N) = map(twice, x)
"""


def _liftpy(*args, cwd):
    return subprocess.run([sys.executable, "-m", "liftpy", *map(str, args)], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


@pytest.mark.slow
def test_a_program_without_a_valid_configuration_is_refused_before_any_point_with_its_reasons(tmp_path):
    (tmp_path / "softmax.lift").write_text(SOFTMAX)
    db = tmp_path / "r.sqlite"
    r = _liftpy("explore", "softmax.lift", "-s", "M=8,N=65536", "--samples", "2", "--db", db,
                "--rules", "!reduceLclShared", cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "nothing was run" in r.stderr and "the reasons" in r.stderr
    assert "private memory" in r.stderr  # the device limit the rows' temporaries break
    assert len(r.stderr.splitlines()) <= 12
    from liftpy.results.store import Store

    with Store(db, create=False) as store:
        assert store.count() == 0


@pytest.mark.slow
def test_failed_points_are_grouped_by_reason_in_explore_and_in_failures(tmp_path):
    (tmp_path / "broken.lift").write_text(BROKEN)
    db = tmp_path / "r.sqlite"
    r = _liftpy("explore", "broken.lift", "-s", "N=64", "--samples", "3", "--search", "uniform", "--db", db, cwd=tmp_path)
    assert r.returncode == 1, r.stderr[-2000:]  # no measured point
    assert "failed points, by reason:" in r.stdout and "compile_error" in r.stdout and "e.g. " in r.stdout, r.stdout
    listed = _liftpy("failures", "--db", db, cwd=tmp_path)
    assert listed.returncode == 0 and "3 of 3 stored points failed" in listed.stdout
    assert "3 compile_error" in listed.stdout
    every = _liftpy("failures", "--db", db, "--all", cwd=tmp_path)
    assert len([line for line in every.stdout.splitlines() if "compile_error" in line]) == 3


def test_variants_with_sizes_say_why_they_leave_variants_out(tmp_path):
    (tmp_path / "softmax.lift").write_text(SOFTMAX)
    r = _liftpy("variants", "softmax.lift", "-s", "M=8,N=65536", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "more have no valid configuration" in r.stdout and "the reasons" in r.stdout and " x " in r.stdout


def _failed(status, error, **config):
    return Record("dev", "p", "v#1", config, status, error=error)


def test_failures_group_by_status_and_message_with_numbers_blanked():
    records = [_failed(Status.COMPILE_ERROR, "kernel keeps 1280 bytes of private memory\nmore", a=1),
               _failed(Status.COMPILE_ERROR, "kernel keeps 640 bytes of private memory", a=2),
               _failed(Status.TIMEOUT, "ran past 300 s", a=3),
               Record("dev", "p", "v#1", {"a": 4}, Status.OK, time_ms=1.0, bytes=4)]
    groups = failure_groups(records)
    assert [(g.status, g.count) for g in groups] == [("compile_error", 2), ("timeout", 1)]
    assert groups[0].reason == "kernel keeps 1280 bytes of private memory" and groups[0].example == "v#1 a=1"
    text = format_failures(groups)
    assert text.startswith("3 failed points, by reason:") and "2 compile_error" in text
    assert format_failures([]) == ""


def test_a_rule_filter_keeps_variants_with_and_without_a_rule():
    """Comparing a rule family against the rest needs both arms: ``!R`` keeps the variants that never used R."""
    from liftpy.errors import TuningError
    from liftpy.explore.operator import library_operator
    from liftpy.results.cache import cached_variants
    from liftpy.rewrite.explore import features
    from liftpy.search import select_variants

    variants = cached_variants(library_operator("jacobi2d", {"H": 16, "W": 16}))
    staged = select_variants(variants, ("localStage",))
    rest = select_variants(variants, ("!localStage",))
    assert staged and rest and len(staged) + len(rest) == len(variants)
    assert all("localStage" not in features(v) for v in rest)
    with pytest.raises(TuningError, match="no variant uses the rule"):
        select_variants(variants, ("!noSuchRule",))
