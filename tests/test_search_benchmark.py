"""``benchmarks/search.py`` end to end on the default device, and its ``--offline`` mode: the model's figures
computed again from the stores a run left, without measuring, equal the run's own."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "search.py"
MODEL_FIGURES = ("uniform_points", "guided_points", "runs_to_5pct", "kendall_tau", "analytical_kendall_tau", "pruned_share")


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), "--workloads", "sgemm:16", "--uniform", "6", "--guided", "4", *args],
                          capture_output=True, text=True, timeout=600)


def test_offline_figures_equal_those_of_the_run_that_left_the_stores(tmp_path):
    live = _run("--json", str(tmp_path / "live.json"))
    assert live.returncode == 0, live.stderr[-2000:]
    [measured] = json.loads((tmp_path / "live.json").read_text())
    assert measured["resume_first_run_s"] is not None and "offline" not in measured
    again = _run("--offline", "--json", str(tmp_path / "again.json"))
    assert again.returncode == 0, again.stderr[-2000:]
    [offline] = json.loads((tmp_path / "again.json").read_text())
    assert offline["offline"] is True and "resume_first_run_s" not in offline
    assert {k: offline[k] for k in MODEL_FIGURES} == {k: measured[k] for k in MODEL_FIGURES}


def test_offline_without_stores_is_a_one_line_error(tmp_path):
    out = _run("--offline", "--json", str(tmp_path / "x.json"))
    assert out.returncode != 0
    assert "--offline: no store" in out.stderr and "Traceback" not in out.stderr
