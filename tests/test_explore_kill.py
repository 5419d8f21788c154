"""The main job's resumption after a kill (issue 5): a killed exploration resumes without losing or repeating a
point, and two explorations sharing a store survive a kill.  Apart from tests/test_explore.py so that the
two files run beside each other on the suite's two processes (each file runs in one)."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from liftpy.results.store import Store

ROOT = Path(__file__).resolve().parents[1]

def _rows(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute("SELECT variant, config, status FROM results WHERE variant NOT LIKE 'reference:%'").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


@pytest.mark.slow
def test_killed_exploration_resumes_without_losing_or_repeating_points(tmp_path):
    db = tmp_path / "results.sqlite"
    cmd = [sys.executable, "-m", "liftpy", "explore", "conv", "--layer", "vgg16:7", "--reduced", "--spatial", "10",
           "--channels", "4", "--kernels", "4", "--samples", "8", "--db", str(db), "--repeat", "1", "--no-references"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline:
        finished = [r for r in _rows(db) if r[2] != "running"]
        if len(finished) >= 3 or proc.poll() is not None:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the exploration finished before it could be killed: " + proc.stdout.read().decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {(v, c) for v, c, s in _rows(db) if s != "running"}
    assert len(before) >= 3
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    rows = _rows(db)
    keys = [(v, c) for v, c, _ in rows]
    assert len(keys) == len(set(keys)) == 8, rows
    assert before <= set(keys)
    assert all(s == "ok" for _, _, s in rows)
    assert f"{len(before)} already in" in rerun.stdout or "already in" in rerun.stdout


def _finished(db: Path) -> dict:
    """(variant, config) -> (run, finished_at) of every finished point."""
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return {(v, c): (run, t) for v, c, run, t in con.execute(
            "SELECT variant, config, run, finished_at FROM results WHERE status != 'running' "
            "AND variant NOT LIKE 'reference:%'")}
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()


@pytest.mark.slow
def test_two_explorations_share_a_store_and_survive_a_kill(tmp_path):
    """Issue 14: two processes explore into one store at once (different seeds, so their points partly
    differ); one is killed with SIGKILL mid-run; the other finishes; the killed one resumes.  No finished
    point is lost, none is run twice, the database is intact and every row names the run that wrote it."""
    db = tmp_path / "shared.sqlite"
    program = str(Path(__file__).resolve().parents[1] / "examples" / "programs" / "matmul_highlevel.lift")

    def cmd(seed):
        return [sys.executable, "-m", "liftpy", "explore", program, "-s", "M=8,N=8,K=8", "--samples", "10",
                "--search", "uniform", "--seed", str(seed), "--db", str(db), "--repeat", "1", "--no-references"]

    env = {**os.environ, "LIFTPY_CACHE_DIR": str(tmp_path / "cache")}
    # Derive the variants once, so that both runs are past derivation and writing at the same time.
    subprocess.run([sys.executable, "-m", "liftpy", "variants", program, "-s", "M=8,N=8,K=8"], env=env,
                   capture_output=True, timeout=300)
    a = subprocess.Popen(cmd(0), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    b = subprocess.Popen(cmd(1), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    deadline = time.time() + 300
    while time.time() < deadline:
        runs = [run for run, _ in _finished(db).values()]
        if sum(f":{a.pid}:" in (r or "") for r in runs) >= 3 or a.poll() is not None:
            break
        time.sleep(0.1)
    assert a.poll() is None, "the first exploration finished before it could be killed: " + a.stdout.read().decode()[-2000:]
    os.killpg(a.pid, signal.SIGKILL)
    a.wait()
    before = _finished(db)
    out_b = b.communicate(timeout=600)[0].decode()
    assert b.returncode == 0, out_b[-3000:]
    rerun = subprocess.run(cmd(0), capture_output=True, text=True, timeout=600, env=env)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    after = _finished(db)
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = con.execute("SELECT variant, config, status FROM results").fetchall()
    finally:
        con.close()
    keys = [(v, c) for v, c, _ in rows]
    assert len(keys) == len(set(keys))  # the store's key is unique: no point twice
    assert all(s == "ok" for _, _, s in rows), rows
    assert {k: v for k, v in after.items() if k in before} == before  # nothing finished was lost or re-run
    runs = {run.split(":")[1] for run, _ in after.values()}
    assert {str(a.pid), str(b.pid)} <= runs  # rows name the process that wrote them
    # Each seed's ten points are in the store: the resumed run completed its plan without repeating any.
    assert 10 <= len(after) <= 20
    again = subprocess.run(cmd(0), capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0 and _finished(db) == after
