"""``benchmarks/pass_worth.py`` end to end on the default device: a pass that changes the sources (hoisting)
is left out, both kernels of each changed point are run and checked, and a point whose sources agree is
recorded without running; an unknown pass name is a one-line error."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the benchmark script runs as a process

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "pass_worth.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), "--sample", "sgemm:64", *args],
                          capture_output=True, text=True, timeout=600)


def test_points_with_and_without_a_pass_are_both_checked(tmp_path):
    out = _run("--pass", "hoist", "--points", "4", "--repeat", "1", "--json", str(tmp_path / "w.json"))
    assert out.returncode == 0, out.stderr[-2000:]
    records = json.loads((tmp_path / "w.json").read_text())
    assert len(records) == 4 and all(r["pass"] == "hoist" and r["workload"] == "sgemm:64" for r in records)
    changed = [r for r in records if not r["same_source"]]
    same = [r for r in records if r["same_source"]]
    assert changed and same  # the sample holds both kinds (the tiled variants hoist their address arithmetic)
    for r in changed:
        assert r["ok_with"] is True and r["ok_without"] is True
        assert r["ms_with"] > 0 and r["ms_without"] > 0
    for r in same:
        assert "ms_with" not in r and "ms_without" not in r


def test_an_unknown_pass_is_a_one_line_error():
    out = _run("--pass", "nosuch")
    assert out.returncode == 2
    assert "'nosuch' is not one of the default passes" in out.stderr and "Traceback" not in out.stderr


def test_another_order_of_the_passes_is_compared_and_an_unknown_name_is_an_error(tmp_path):
    """``--passes`` compares the default order with another one (here hoisting before vectorization):
    the records name the order, and the points whose sources differ are run and checked on both sides."""
    order = "merge_barriers,pipeline_copies,lower_copies,simplify,eliminate_divmod,unroll,privatize,hoist,vectorize"
    out = _run("--passes", order, "--points", "3", "--repeat", "1", "--json", str(tmp_path / "o.json"))
    assert out.returncode == 0, out.stderr[-2000:]
    records = json.loads((tmp_path / "o.json").read_text())
    assert len(records) == 3 and all(r["pass"] == "order:" + order for r in records)
    for r in records:
        if not r["same_source"]:
            assert r["ok_with"] is True and r["ok_without"] is True
    bad = _run("--passes", "simplify,nosuch")
    assert bad.returncode == 2 and "nosuch not among the default passes" in bad.stderr and "Traceback" not in bad.stderr
