"""``benchmarks/newcomer.py`` (issue 55): the operators of ``examples/newcomer/`` compute what their numpy
references compute, the script reads the command's grouped failures as liftpy prints them, and a short run
writes records with exactly the issue's fields."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import liftpy as lp
from liftpy.loading import load_attribute
from liftpy.explore.diagnose import FailureGroup, format_failures
from liftpy.explore.operator import ProgramOperator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import newcomer  # noqa: E402

SMALL = {"softmax": "N=5,M=7", "layernorm": "N=5,M=7", "batched_matmul": "B=3,N=4,K=5,M=2", "triangular": "N=6",
         "heat": "H=6,W=7"}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_operator_matches_its_numpy_reference(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # the cases name their files relative to the repository, as the script runs them
    case = next(c for c in newcomer.cases("") if c.name == name)
    program = load_attribute(case.program)
    reference = load_attribute(case.reference)
    inputs = ProgramOperator.of(program, SMALL[name]).inputs(0)
    got = lp.evaluate(program, *inputs)
    assert np.allclose(got, reference(*inputs), rtol=1e-4, atol=1e-5), name


def test_every_case_names_a_program_and_a_reference_that_load(monkeypatch):
    monkeypatch.chdir(ROOT)
    names = [c.name for c in newcomer.cases("")]
    assert len([c for c in newcomer.cases("") if not c.readme]) >= 5 and len(set(names)) == len(names)
    for case in newcomer.cases(str(ROOT / newcomer.EXAMPLES / "readme_refs.py")):
        if not case.readme:
            assert isinstance(load_attribute(case.program), lp.Program), case
        assert callable(load_attribute(case.reference)), case


def test_reasons_are_read_from_the_grouped_failures_liftpy_prints():
    groups = [FailureGroup("compile_error", "build failed: x", 3, "v1 s0=4"),
              FailureGroup("wrong_result", "element [0, 1] differs", 1, "v2 no parameters")]
    output = "f: ran 5 points\n" + format_failures(groups) + "\ntime/memory Pareto frontier (1 point) on d:\n"
    assert newcomer.reasons_shown({"compile_error": 3, "wrong_result": 1}, output) == []
    assert newcomer.reasons_shown({"compile_error": 3, "timeout": 2}, output) == ["timeout"]
    assert newcomer.reasons_shown({"crashed": 1}, "f: ran 1 point\nno section here\n") == ["crashed"]
    assert newcomer.reasons_shown({}, "") == []


@pytest.mark.slow
def test_a_short_run_writes_the_issues_fields(tmp_path):
    out = tmp_path / "newcomer.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "newcomer.py"), "--only", "triangular",
                           "--samples", "2", "--json", str(out), "--keep", str(tmp_path / "runs"), "--quiet"],
                          capture_output=True, text=True, timeout=500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["samples"] == 2 and result["device"]
    [rec] = result["records"]
    assert tuple(rec) == newcomer.FIELDS
    assert rec["operator"] == "triangular" and rec["variants"] >= 1 and rec["dropped"] >= 0
    assert rec["ok"] >= 1 and rec["ok"] + sum(rec["failed"].values()) == 2
    assert rec["best_ms"] > 0 and rec["reference_ms"] > 0
    assert rec["ratio"] == pytest.approx(rec["reference_ms"] / rec["best_ms"])
    assert rec["frontier_points"] >= 1 and rec["explore_s"] > 0
    assert "target met" in proc.stdout and "triangular" in proc.stdout
