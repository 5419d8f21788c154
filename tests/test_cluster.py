"""Exploration on Ray device workers: the forms of --workers, and a local cluster of two CPU (PoCL) workers
that loses one worker mid-run and still ends with every point in the store exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from liftpy.errors import TuningError
from liftpy.runtime.cluster import WorkersSpec, parse_workers
from liftpy.search import UniformSearch

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "programs" / "matmul_highlevel.lift"


@pytest.mark.parametrize("text,address,count", [("local:2", None, 2), ("ray://10.0.0.5:10001", "ray://10.0.0.5:10001", None),
                                                ("ray", "auto", None)])
def test_workers_forms(text, address, count):
    assert parse_workers(text) == WorkersSpec(text, address, count)


@pytest.mark.parametrize("text", ["local:0", "local", "local:x", "ray://nohost", "tcp://a:1", "", "2"])
def test_malformed_workers_refused(text):
    with pytest.raises(TuningError, match="--workers"):
        parse_workers(text)


@pytest.mark.slow
def test_cli_refuses_malformed_workers_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "liftpy", "explore", str(MATMUL), "-s", "M=8,N=8,K=8",
                           "--workers", "local:0", "--db", str(tmp_path / "r.sqlite")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "--workers local:0" in proc.stderr


def test_device_and_workers_exclusive(tmp_path):
    from liftpy.explore import explore_program

    with pytest.raises(TuningError, match="not both"):
        explore_program(str(MATMUL), {"M": 8, "N": 8, "K": 8}, samples=1, db=tmp_path / "r.sqlite",
                        device=0, workers="local:1", progress=False)


def _rows(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as con:
            return con.execute("SELECT COUNT(*) FROM results WHERE status != 'running'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.ray
@pytest.mark.slow
def test_killed_worker_loses_no_point(tmp_path):
    """Two device workers on the CPU device; one is SIGKILLed after a few points are stored.  Its points go
    to the other worker (or to its replacement) and every planned point ends in the store exactly once."""
    pytest.importorskip("ray")
    from liftpy.explore import explore_program
    from liftpy.explore.operator import ProgramOperator, load_program
    from liftpy.host.profile import resolve_profile
    from liftpy.results.store import Store
    from liftpy.runtime.cluster import Cluster
    from liftpy.search import choose_points

    db = tmp_path / "r.sqlite"
    sizes = {"M": 16, "N": 16, "K": 16}
    samples = 24
    killed: list[int] = []
    with Cluster("local:2", jobs=1, timeout_s=120) as cluster:
        assert len(cluster.pids()) == 2

        def kill_one():
            deadline = time.time() + 600
            while _rows(db) < 3 and time.time() < deadline:
                time.sleep(0.05)
            pid = cluster.pids()[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

        killer = threading.Thread(target=kill_one, daemon=True)
        killer.start()
        result = explore_program(str(MATMUL), sizes, samples=samples, db=db, search=UniformSearch, workers=cluster,
                                 progress=False, references=False, timeout_s=120)
        killer.join(5)
    assert killed, "the worker was not killed"
    assert result.lost_workers >= 1, "the kill landed after the run: no worker was lost mid-run"
    assert result.ran == samples  # each point recorded once by the driver, the lost ones included after re-running
    with Store(db) as store:
        records = [r for r in store.records() if not r.is_reference]
    keys = [(r.variant, tuple(sorted(r.config.items()))) for r in records]
    assert len(keys) == samples and len(set(keys)) == samples
    assert all(r.status.value == "ok" for r in records), [r.error for r in records if r.status.value != "ok"]
    # The same uniform seed names the same points: the store holds exactly the planned set.
    op = ProgramOperator.of(load_program(str(MATMUL)), sizes)
    from liftpy.results.cache import cached_variants

    planned = choose_points(cached_variants(op), sizes, samples, resolve_profile(None), 0)
    assert {(p.variant_id, tuple(sorted(p.config.items()))) for p in planned} == set(keys)
    workers = {r.metrics["worker"] for r in records}
    assert len(workers) >= 2  # both workers (and the replacement) measured points
    assert all(r.metrics["ran_on"] for r in records)


@pytest.mark.ray
@pytest.mark.slow
def test_cli_explores_on_ray_workers(tmp_path):
    pytest.importorskip("ray")
    from liftpy.results.store import Store

    db = tmp_path / "r.sqlite"
    proc = subprocess.run([sys.executable, "-m", "liftpy", "explore", str(MATMUL), "-s", "M=8,N=8,K=8", "--samples", "3",
                           "--search", "uniform", "--workers", "local:1", "--db", str(db), "--no-references"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "on 1 x " in proc.stdout and "ran 3 points" in proc.stdout
    with Store(db) as store:
        records = store.records()
    assert len(records) == 3 and all(r.metrics["ran_on"] and r.status.value == "ok" for r in records)
