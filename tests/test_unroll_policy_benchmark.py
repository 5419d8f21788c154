"""``benchmarks/unroll_policy.py`` end to end on the default device: points drawn from a workload, each
generated under every unrolling policy asked for, checked and timed; bad ways are one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the benchmark scripts run as processes

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "unroll_policy.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def test_every_way_of_every_drawn_point_is_checked_timed_and_counted(tmp_path):
    out = _run("--ways", "none", "all", "none/-vectorize", "none/copies", "--sample", "sgemm:32", "--points", "2",
               "--rounds", "1", "--repeat", "1", "--json", str(tmp_path / "u.json"))
    assert out.returncode == 0, out.stderr[-2000:]
    records = json.loads((tmp_path / "u.json").read_text())
    assert len(records) == 2
    for r in records:
        assert r["ok"] is True and set(r["ms"]) == {"none", "all", "none/-vectorize", "none/copies"}
        assert r["ratio"]["none"] == 1.0 and all(ms > 0 for ms in r["ms"].values())
        assert set(r["codegen_s"]) == set(r["lines"]) == set(r["ms"]) and all(n > 0 for n in r["lines"].values())


def test_an_unknown_policy_or_pass_is_a_one_line_error(tmp_path):
    for way, said in (("most", "unknown policy 'most'"), ("none/-inline", "'-inline' in 'none/-inline' is neither"),
                      ("none/cp", "'cp' in 'none/cp' is neither")):
        out = _run("--ways", way, "--sample", "sgemm:32", "--points", "1", "--json", str(tmp_path / "x.json"))
        assert out.returncode != 0 and said in out.stderr and "Traceback" not in out.stderr
    out = _run("--json", str(tmp_path / "x.json"))
    assert out.returncode != 0 and "--point" in out.stderr and "Traceback" not in out.stderr


def test_codegen_benchmark_records_the_policy_in_force(tmp_path):
    """``benchmarks/codegen.py`` names the unrolling policy its sources were made with: the default when none
    is asked for, and different sources under another, in each pass's process.  With two passes each
    point's time is its least: the median is at most the first pass's."""
    from liftpy.codegen.passes import unroll_policy

    records = {}
    for policy in (None, "none"):
        out = tmp_path / f"{policy}.json"
        args = ["--workloads", "sgemm:32", "--points", "3", "--passes", "2", "--json", str(out)]
        r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "codegen.py"), *args,
                            *(["--compiler-unrolls", policy] if policy else [])], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        [records[policy]] = json.loads(out.read_text())
    assert records[None]["compiler_unrolls"] == unroll_policy() != "none"
    assert records["none"]["compiler_unrolls"] == "none"
    assert records[None]["source_sha1"] != records["none"]["source_sha1"]
    for r in records.values():
        assert r["passes"] == len(r["pass_medians_s"]) == 2 and r["points"] == 3
        assert r["first_pass_median_s"] == r["pass_medians_s"][0] >= r["median_s"] > 0
