"""``benchmarks/search.py`` end to end on the default device (with ``--confirm``), and its ``--offline`` mode:
the model's figures computed again from the stores a run left, without measuring, equal the run's own."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "search.py"
MODEL_FIGURES = ("uniform_points", "guided_points", "runs_to_5pct", "kendall_tau", "analytical_kendall_tau", "pruned_share")


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), "--workloads", "sgemm:16", "--uniform", "6", "--guided", "4", *args],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def live_run(tmp_path_factory):
    """One live run with ``--confirm`` (which measures, and stores nothing), in a folder of its own: its two
    stores and its JSON (``live.json``), which the tests below read each from a copy (``_live``)."""
    folder = tmp_path_factory.mktemp("search-live")
    return folder, _run("--confirm", "1", "--json", str(folder / "live.json"))


def _live(live_run, tmp_path: Path):
    """The live run's process, its stores and ``live.json`` copied into ``tmp_path``."""
    folder, run = live_run
    shutil.copytree(folder, tmp_path, dirs_exist_ok=True)
    return run


@pytest.mark.slow
def test_offline_figures_equal_those_of_the_run_that_left_the_stores(live_run, tmp_path):
    live = _live(live_run, tmp_path)
    assert live.returncode == 0, live.stderr[-2000:]
    [measured] = json.loads((tmp_path / "live.json").read_text())
    assert measured["resume_first_run_s"] is not None and "offline" not in measured
    # --confirm: the uniform search's fastest points and the guided search's leaders measured again.
    confirmed = measured["confirmed"]
    # The uniform search's fastest points, as many as it measured up to five, fastest first.
    assert len(confirmed["uniform_top"]) == min(5, measured["uniform_points"])
    stored = [u["stored_ms"] for u in confirmed["uniform_top"]]
    assert stored == sorted(stored) and stored[0] == measured["uniform_best_ms"]
    assert all(len(u["fastest_ms"]) == 1 and u["confirmed_ms"] == u["fastest_ms"][0] for u in confirmed["uniform_top"])
    assert confirmed["uniform_best_ms"] == min(u["confirmed_ms"] for u in confirmed["uniform_top"])
    leaders = confirmed["guided_leaders"]
    assert leaders[0]["run"] >= 1 and [g["run"] for g in leaders] == sorted(g["run"] for g in leaders)
    assert all(b["stored_ms"] < a["stored_ms"] for a, b in zip(leaders, leaders[1:]))
    within = [g["run"] for g in leaders if g["confirmed_ms"] <= 1.05 * confirmed["uniform_best_ms"]]
    assert confirmed["runs_to_5pct"] == (within[0] if within else None)
    again = _run("--offline", "--json", str(tmp_path / "again.json"))
    assert again.returncode == 0, again.stderr[-2000:]
    [offline] = json.loads((tmp_path / "again.json").read_text())
    assert offline["offline"] is True and "resume_first_run_s" not in offline
    assert {k: offline[k] for k in MODEL_FIGURES} == {k: measured[k] for k in MODEL_FIGURES}


@pytest.mark.slow
def test_guided_seed_takes_another_guided_path_over_the_same_uniform_store(live_run, tmp_path):
    """``--guided-seed``: a second guided search beside a uniform store measures no uniform point again."""
    from liftpy.results.store import Store

    first = _live(live_run, tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    uniform, guided = tmp_path / "search-sgemm_16-uniform.sqlite", tmp_path / "search-sgemm_16-guided.sqlite"
    with Store(uniform) as s:
        before = sorted((r.variant, str(r.config), r.finished_at) for r in s.records())
    guided.rename(tmp_path / "first-guided.sqlite")
    second = _run("--guided-seed", "7", "--json", str(tmp_path / "b.json"))
    assert second.returncode == 0, second.stderr[-2000:]
    with Store(uniform) as s:
        assert sorted((r.variant, str(r.config), r.finished_at) for r in s.records()) == before
    [rec] = json.loads((tmp_path / "b.json").read_text())
    assert rec["guided_seed"] == 7 and rec["guided_points"] == 4
    assert "guided_seed" not in json.loads((tmp_path / "live.json").read_text())[0]


@pytest.mark.slow
def test_offline_without_stores_is_a_one_line_error(tmp_path):
    out = _run("--offline", "--json", str(tmp_path / "x.json"))
    assert out.returncode != 0
    assert "--offline: no store" in out.stderr and "Traceback" not in out.stderr


def test_transfer_learns_other_problems_never_the_workloads_own(tmp_path):
    """``--transfer`` is leave one workload out: of the stores beside ``--json`` it skips the workload's own
    two, and of the others it learns only rows of another problem of the same variants on the same device,
    never a row of the workload's own problem (a copy of its uniform store under another name), another
    device's, an unknown variant's or a failed point."""
    from liftpy.results.store import Record, Status, Store

    bench, op, other = _bench_and_two_problems()
    dev = "test | gpu | 1"

    def rec(problem, variant, k, device=dev, status=Status.OK):
        return Record(device, problem, variant, {"k0": k}, status, time_ms=1.0 + k if status is Status.OK else None,
                      bytes=100, finished_at=float(k))

    with Store(tmp_path / "search-sgemm_64x64x32-uniform.sqlite") as s:  # the workload's own stores
        s.put(rec(op.problem, "v0", 1))
    with Store(tmp_path / "search-sgemm_64x64x32-guided.sqlite") as s:
        s.put(rec(op.problem, "v0", 2))
    with Store(tmp_path / "search-copy-uniform.sqlite") as s:  # its own problem under another name, and others
        s.put(rec(op.problem, "v0", 3))
        s.put(rec(other, "v0", 4))
        s.put(rec(other, "v1", 5))
        s.put(rec(other, "v0", 6, device="another | gpu | 1"))
        s.put(rec(other, "unknown", 7))
        s.put(rec(other, "v1", 8, status=Status.WRONG_RESULT))
        s.put(rec("128,56,56,256,3,1,1", "v0", 9))  # a convolution layer: not this program's problem
    with Store(tmp_path / "search-sgemm_32x32x16-guided.sqlite") as s:  # a copy of a row above (a live run's share)
        s.put(rec(other, "v0", 4))

    class Spy:
        def __init__(self):
            self.learned = []

        def prefetch_elsewhere(self, points, jobs):
            self.prefetched = [(i, config["k0"], sizes) for i, sizes, config in points]

        def learn_elsewhere(self, i, config, time_ms, sizes):
            self.learned.append((i, config["k0"], sizes))

    spy = Spy()
    own = (tmp_path / "search-sgemm_64x64x32-uniform.sqlite", tmp_path / "search-sgemm_64x64x32-guided.sqlite")
    used = bench._transfer(spy, op, tmp_path, own, dev, {"v0": 0, "v1": 1})
    sizes = {"M": 32, "N": 32, "K": 16}
    assert spy.learned == [(0, 4, sizes), (1, 5, sizes)] and spy.prefetched == spy.learned
    assert used["stores"] == ["search-copy-uniform.sqlite", "search-sgemm_32x32x16-guided.sqlite"]
    assert used["problems"] == {other: 2} and used["points"] == 2


def test_a_live_transfer_run_shares_other_problems_rows_with_the_guided_store(tmp_path):
    """In a live ``--transfer`` run the guided search's store receives the other workloads' rows of other
    problems (whatever their device: the engine keeps its own), never a row of the workload's own problem."""
    from liftpy.results.store import Record, Status, Store

    bench, op, other = _bench_and_two_problems()

    def rec(problem, k, device="test | gpu | 1"):
        return Record(device, problem, "v0", {"k0": k}, Status.OK, time_ms=1.0 + k, bytes=100, finished_at=float(k))

    uni, guided = tmp_path / "search-sgemm_64x64x32-uniform.sqlite", tmp_path / "search-sgemm_64x64x32-guided.sqlite"
    with Store(uni) as s:
        s.put(rec(op.problem, 1))
    with Store(tmp_path / "search-sgemm_32x32x16-guided.sqlite") as s:  # a store that shared this workload's rows
        s.put(rec(op.problem, 2))
        s.put(rec(other, 3))
        s.put(rec(other, 4, device="another | gpu | 1"))
    assert bench._share(op, tmp_path, (uni, guided), guided) == ["search-sgemm_32x32x16-guided.sqlite"]
    with Store(guided) as s:
        rows = s.records()
    assert sorted((r.layer, r.config["k0"]) for r in rows) == [(other, 3), (other, 4)]


def _bench_and_two_problems():
    """The benchmark script as a module, the matrix product at 64 x 64 x 32 (the workload) and the name of
    another problem of its variants (32 x 32 x 16)."""
    import importlib.util

    from liftpy.explore.operator import program_operator

    spec = importlib.util.spec_from_file_location("search_benchmark", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    matmul = str(ROOT / "examples" / "programs" / "matmul_highlevel.lift")
    return bench, program_operator(matmul, "M=64,N=64,K=32"), program_operator(matmul, "M=32,N=32,K=16").problem


@pytest.mark.slow
def test_tau_ceiling_ranks_the_uniform_store_as_the_search_benchmark_does(live_run, tmp_path):
    """``benchmarks/tau_ceiling.py`` over the stores a run of ``search.py`` left: its formula tau is the run's
    ``analytical_kendall_tau`` (the same points, the same formula), and points measured again are counted."""
    run = _live(live_run, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    [live] = json.loads((tmp_path / "live.json").read_text())
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tau_ceiling.py"), "--workloads", "sgemm:16",
                          "--stores", str(tmp_path), "--remeasure", "4", "--json", str(tmp_path / "tau.json")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    [rec] = json.loads((tmp_path / "tau.json").read_text())
    assert rec["store"] == tmp_path.name and rec["points"] == live["uniform_points"]
    assert rec["analytical_tau"] == live["analytical_kendall_tau"]
    again = rec["remeasured"]
    assert 0 < again["points"] <= 4 and -1 <= again["rounds_tau"] <= 1 and again["rounds"] == 2
    # The rule the engine times by on this device, and the other rules compared over the same runs.
    from liftpy.host.device import device_info
    from liftpy.host.timing import device_timing

    assert again["rule"] == str(device_timing(device_info(None).type, 5))
    assert set(again["rules_tau"]) == {f"{s} of {n} runs" for n in (5, 20, 40) for s in ("median", "fastest")}
    assert "oracle_variant" in out.stdout  # the table
    missing = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tau_ceiling.py"), "--workloads", "sgemm:16",
                              "--stores", str(tmp_path / "none"), "--json", str(tmp_path / "x.json")],
                             capture_output=True, text=True, timeout=600)
    assert missing.returncode != 0 and "no store" in missing.stderr and "Traceback" not in missing.stderr
