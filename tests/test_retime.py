"""``benchmarks/retime.py``'s bookkeeping: which points of a store it re-times, and the vendor time a ratio
is taken against (the least a workload's references reached over the run)."""

import subprocess
import sys
from pathlib import Path

import pytest

from liftpy.errors import TuningError
from liftpy.operators.conv import get_layer
from liftpy.results.store import Record, Status, Store

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import retime  # noqa: E402
from liftpy.search import UniformSearch


def test_store_points_are_each_workloads_fastest_and_named(tmp_path):
    db = tmp_path / "s.sqlite"
    l5 = get_layer("vgg16:5").spec
    with Store(db) as store:
        for k, ms in enumerate([0.3, 0.1, 0.2, None]):
            store.put(Record("dev", l5, f"v{k}", {"a": k}, Status.OK if ms else Status.WRONG_RESULT, time_ms=ms))
        store.put(Record("dev", "8,16,16,8,3,1,1", "w", {"a": 9}, Status.OK, time_ms=5.0))
    points = retime._store_points(str(db), 2)
    by = {}
    for _, rec in points:
        by.setdefault(rec["layer"], []).append(rec)
    assert [r["best_variant"] for r in by["vgg16:5"]] == ["v1", "v2"]  # a VGG layer by its name, fastest first
    assert [r["best_ms"] for r in by["8,16,16,8,3,1,1"]] == [5.0]
    with pytest.raises(TuningError, match="no results database"):
        retime._store_points(str(tmp_path / "missing.sqlite"), 1)


def test_ratios_use_the_least_vendor_time_of_the_workload():
    def rec(workload, ms, cudnn, gemm):
        return {"workload": workload, "ok": True, "ms": ms, "source": "x", "variant": "v", "config": {}, "memory_bytes": 1,
                "references": {"cudnn": {"batch_ms": cudnn}, "im2col_gemm": {"batch_ms": gemm}}}

    records = [rec("vgg16:5", 0.10, 0.090, 0.12), rec("vgg16:5", 0.08, 0.070, 0.11), rec("vgg16:7", 0.2, 0.3, 0.25)]
    retime._pool_vendor(records)
    assert all(r["pooled_vendor"] == "cudnn" and r["pooled_vendor_ms"] == 0.070 for r in records[:2])
    assert records[0]["pooled_ratio"] == pytest.approx(0.7) and records[1]["pooled_ratio"] == pytest.approx(0.875)
    assert records[2]["pooled_vendor"] == "im2col_gemm" and records[2]["pooled_ratio"] == pytest.approx(1.25)
    best = retime._best_per_layer(records, None)
    assert [b["layer"] for b in best] == ["vgg16:5", "vgg16:7"]
    assert best[0]["best_ms"] == 0.08 and best[0]["ratio_vs_vendor"] == pytest.approx(0.875) and best[0]["split"] == 1
    layer = get_layer("vgg16:5")
    assert best[0]["gflops"] == pytest.approx(layer.flops / 0.08 / 1e6)


def test_least_of_repeated_vendor_timings():
    times = iter([{"a": 3.0, "b": 1.0}, {"a": 2.0, "b": 4.0}, {"a": 5.0, "b": 2.0}])
    assert retime._least(lambda batch: next(times), 10, 3) == {"a": 2.0, "b": 1.0}
    assert retime._least(lambda batch: {"a": 1.0}, 1, 0) == {"a": 1.0}  # at least one timing


@pytest.mark.slow
def test_bad_input_is_one_line():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "retime.py"), "--store", "/nonexistent.sqlite",
                          "--json", "/tmp/never.json"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "no results database" in out.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_relu_counterparts_of_stored_points_are_timed_and_checked(tmp_path):
    """``--relu`` times each stored convolution point as the same rules and configuration derive it from the
    convolution with a ReLU, checked against conv + bias + ReLU, beside references that run them too."""
    import json

    from liftpy.explore.conv import explore_layer

    db, out, best = tmp_path / "s.sqlite", tmp_path / "r.json", tmp_path / "b.json"
    explore_layer("8,12,12,8,3,1,1", samples=2, db=db, search=UniformSearch, progress=False, repeat=1, warmup=0,
                  references=False, rules=("tile2DReduce|tile2DReduceStrided",))
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "retime.py"), "--store", str(db), "--top", "2", "--relu",
                          "--repeat", "2", "--vendor-repeats", "1", "--json", str(out), "--best", str(best)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    records = json.loads(out.read_text())
    assert len(records) == 2 and all(r["workload"] == "8,12,12,8,3,1,1+relu" and r["ok"] for r in records), records
    assert all(r["variant"] != r["plain_variant"] and r["variant"].split("#")[0] == r["plain_variant"].split("#")[0]
               for r in records)
    (layer,) = json.loads(best.read_text())
    assert layer["relu"] and layer["spec"] == "8,12,12,8,3,1,1+relu" and layer["ratio_vs_vendor"] > 0


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_points_of_a_relu_search_are_timed_as_they_are(tmp_path):
    """A point explored with the ReLU (``conv_vgg16.py --relu``, workload ``...+relu``) is re-timed as it is,
    with or without ``--relu``: checked against conv + bias + ReLU."""
    import json

    from liftpy.explore.conv import explore_layer

    db = tmp_path / "s.sqlite"
    explore_layer("8,12,12,8,3,1,1", samples=1, db=db, search=UniformSearch, progress=False, repeat=1, warmup=0,
                  references=False, rules=("tile2DReduce|tile2DReduceStrided",), relu=True)
    for flag in ([], ["--relu"]):
        out = tmp_path / f"r{len(flag)}.json"
        run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "retime.py"), "--store", str(db), "--top", "1", *flag,
                              "--repeat", "2", "--vendor-repeats", "1", "--json", str(out)],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        (rec,) = json.loads(out.read_text())
        assert rec["workload"] == "8,12,12,8,3,1,1+relu" and rec["ok"] and "plain_variant" not in rec, rec
