"""``liftpy explore`` and ``liftpy show`` on a program, as a user runs them: each command a process of its own."""

import subprocess
import sys

import pytest

from engine_helpers import MATMUL

pytestmark = pytest.mark.slow


def _liftpy(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "liftpy", *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def test_cli_explores_a_program_and_rejects_bad_input(tmp_path):
    db = str(tmp_path / "r.sqlite")
    r = _liftpy("explore", str(MATMUL), "-s", "M=16,N=16,K=16", "--samples", "3", "--db", db, "--repeat", "1",
                "--no-references", "--plot", str(tmp_path / "f.png"))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "Pareto frontier" in r.stdout and (tmp_path / "f.png").exists()
    r = _liftpy("show", str(MATMUL), "-s", "M=16,N=16,K=16", "--db", db)
    assert r.returncode == 0 and "kernel void" in r.stdout, r.stderr
    for bad in (["-s", "M=-3,N=4,K=4"], ["-s", "M=4"], ["--budget", "soon", "-s", "M=4,N=4,K=4"]):
        r = _liftpy("explore", str(MATMUL), *bad, "--db", db)
        assert r.returncode != 0
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
