"""The exploration infrastructure: layer catalogue, results store, Pareto frontier, workers, references."""

from __future__ import annotations

import ctypes
import io
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import types
import statistics

import numpy as np
import pytest

from liftpy.errors import ConstraintError, KernelBuildError, TuningError
from liftpy.explore.progress import Progress, ProgressState, format_progress
from liftpy.explore.records import reference_record
from liftpy.host.timing import CPU_RUNS
from liftpy.operators.conv import ALEXNET0, VGG16, Layer, get_layer, layer_names, network_layers
from liftpy.explore.vendor import available_references, measure_reference
from liftpy.operators.conv.direct import conv2d_direct, expectation, random_inputs, validate
from liftpy.results import Key, Record, Status, Store, format_frontier, frontiers, pareto_front, plot_frontier, to_pandas
from liftpy.runtime import Outcome, Task, WorkerPool

# -- layers ----------------------------------------------------------------------------------------------

TABLE3 = {  # name: (C, H=W, M), all 3x3, stride 1, pad 1
    "vgg16:0": (3, 224, 64), "vgg16:2": (64, 224, 64), "vgg16:5": (64, 112, 128),
    "vgg16:7": (128, 112, 128), "vgg16:10": (128, 56, 256), "vgg16:12": (256, 56, 256),
    "vgg16:17": (256, 28, 512), "vgg16:19": (512, 28, 512), "vgg16:24": (512, 14, 512),
}  # fmt: skip


def test_catalogue_has_table3_and_alexnet():
    assert [layer.name for layer in VGG16] == list(TABLE3)
    for name, (c, hw, m) in TABLE3.items():
        layer = get_layer(name)
        assert (layer.C, layer.H, layer.W, layer.M, layer.K, layer.stride, layer.pad) == (c, hw, hw, m, 3, 1, 1)
        assert layer.output_shape == (m, hw, hw)  # 'same' convolutions
    a = get_layer("alexnet:0")
    assert a is ALEXNET0 and a.output_shape == (96, 55, 55)
    assert a.flops == 2 * 96 * 55 * 55 * 3 * 11 * 11
    v0 = get_layer("vgg16:0")
    assert (v0.input_elems, v0.weight_elems, v0.output_elems) == (3 * 224 * 224, 64 * 3 * 9, 64 * 224 * 224)
    assert v0.min_bytes == 4 * (v0.input_elems + v0.weight_elems + v0.output_elems)
    assert network_layers("vgg16") == VGG16


@pytest.mark.parametrize("alias,name", [("vgg16:14", "vgg16:12"), ("vgg16:21", "vgg16:19"), ("vgg16:26", "vgg16:24"), ("vgg16:28", "vgg16:24")])
def test_paper_aliases_resolve_to_the_same_shape(alias, name):
    assert get_layer(alias) == get_layer(name)
    assert alias in layer_names()


def test_layer_specs_parse():
    layer = get_layer(" 3, 227,227 ,96,11,4,0 ")
    assert layer.spec == ALEXNET0.spec == "3,227,227,96,11,4,0"
    assert layer.output_shape == (96, 55, 55)
    short = get_layer("8,10,12,4,3")  # stride 1 and pad 0 by default
    assert (short.stride, short.pad, short.out_h, short.out_w) == (1, 0, 8, 10)
    assert get_layer("8,10,12,4,3,2").stride == 2


@pytest.mark.parametrize(
    "spec,words",
    [
        ("vgg16:3", "unknown layer"),
        ("resnet:0", "known names"),
        ("1,2,3", "expected C,H,W,M,K,stride,pad"),
        ("3,a,4,5,3,1,1", "must be an integer"),
        ("3,8,8,4,0,1,0", "K must be a positive integer"),
        ("3,8,8,4,3,0,0", "stride must be a positive"),
        ("3,8,8,4,3,1,-1", "pad must be a non-negative"),
        ("3,4,4,4,7,1,1", "does not fit"),
    ],
)
def test_bad_layer_names_and_specs_say_what_is_wrong(spec, words):
    with pytest.raises(TuningError, match=words):
        get_layer(spec)


def test_reduced_layers_keep_kernel_stride_pad_and_cover():
    for layer in VGG16 + (ALEXNET0,):
        small = layer.reduced(spatial=16, channels=4, kernels=6)
        assert (small.K, small.stride, small.pad) == (layer.K, layer.stride, layer.pad)
        assert small.C == min(layer.C, 4) and small.M == min(layer.M, 6)
        assert small.H <= max(16, layer.K) and small.out_h >= 1
        assert (small.H + 2 * small.pad - small.K) % small.stride == (layer.H + 2 * layer.pad - layer.K) % layer.stride
        assert small.spec != layer.spec and small.name.startswith(layer.name)
    a = ALEXNET0.reduced(spatial=20)
    assert a.H == 19 and a.output_shape == (8, 3, 3)  # (19 - 11) / 4 + 1: windows still cover exactly
    assert ALEXNET0.reduced(spatial=4).H == 11  # never below one window
    tiny = Layer("t", 2, 5, 5, 3, 3, 1, 1)
    assert tiny.reduced() is tiny


# -- store -----------------------------------------------------------------------------------------------

LAYER = "8,16,16,8,3,1,1"


def _rec(i: int, **kw) -> Record:
    fields = dict(device="dev A", layer=LAYER, variant="v1", config={"tile": i, "vec": 4}, status=Status.OK,
                  time_ms=float(i), bytes=1000 + i)  # fmt: skip
    fields.update(kw)
    return Record(**fields)


def test_store_round_trip(tmp_path):
    rec = Record(
        device="dev A", layer=LAYER, variant="partial", config={"b": np.int64(3), "a": [1, 2], "flag": True},
        status=Status.WRONG_RESULT, time_ms=1.5, bytes=np.int64(4096), layer_name="vgg16:7@8x16x16/8",
        source_hash="abc", liftpy_version="0.1.0", profile={"max_work_group_size": 1024},
        metrics={"max_error": 0.5, "kernels": 3}, error="12 of 64 elements wrong", started_at=10.0, finished_at=11.0,
    )  # fmt: skip
    with Store(tmp_path / "r.sqlite") as store:
        store.put(rec)
    with Store(tmp_path / "r.sqlite") as store:
        (back,) = store.records()
    assert back.config == {"a": [1, 2], "b": 3, "flag": True}
    assert back.key == rec.key == Key.of("dev A", LAYER, "partial", {"flag": True, "a": [1, 2], "b": 3})
    for name in ("device", "layer", "variant", "status", "time_ms", "bytes", "layer_name", "source_hash",
                 "liftpy_version", "profile", "metrics", "error", "started_at", "finished_at", "attempts"):  # fmt: skip
        assert getattr(back, name) == getattr(rec, name), name
    assert isinstance(back.status, Status) and back.bytes == 4096


def test_store_resumes_and_keeps_each_point_once(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        for i in range(5):
            store.put(_rec(i, status=Status.TIMEOUT if i == 4 else Status.OK))
        assert store.done(_rec(2).key) and not store.done(_rec(7).key)
        assert store.done(_rec(4).key) and not store.done(_rec(4).key, retry=[Status.TIMEOUT])
        store.put(_rec(4, time_ms=0.5))  # the retry replaces the timeout
        assert store.count() == 5 and store.get(_rec(4).key).status is Status.OK
        assert store.get(_rec(4).key).attempts == 2
    with Store(path) as store:  # a second run over the same points finds them all done
        keys = store.done_keys(device="dev A", layer=LAYER)
        assert keys == {_rec(i).key for i in range(5)}
        assert store.done_keys(device="dev B") == set()
        assert [r.config["tile"] for r in store.records(status="ok")] == [0, 1, 2, 3, 4]
        assert store.groups() == [("dev A", LAYER)]


def test_begun_points_are_not_done_until_put(tmp_path):
    with Store(tmp_path / "r.sqlite") as store:
        key = _rec(1).key
        assert store.begin(key, "vgg16:7") == 1
        assert not store.done(key) and store.get(key).status is Status.RUNNING
        assert store.begin(key) == 2  # the run died during this point once already
        assert key not in store.done_keys()
        store.put(_rec(1, status=Status.CRASHED, error="killed the driver twice"))
        rec = store.get(key)
        assert store.done(key) and rec.attempts == 2 and rec.started_at is not None and rec.layer_name == "vgg16:7"


def test_store_filters_and_pandas(tmp_path):
    with Store(tmp_path / "r.sqlite") as store:
        store.put(_rec(1))
        store.put(_rec(2, device="dev B", status=Status.COMPILE_ERROR, time_ms=None, bytes=None))
        store.put(_rec(3, variant="other"))
        assert [r.config["tile"] for r in store.records(device="dev A")] == [1, 3]
        assert [r.config["tile"] for r in store.records(variant="other")] == [3]
        assert store.count(status=[Status.COMPILE_ERROR, Status.TIMEOUT]) == 1
        records = store.records()
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(TuningError, match="pip install pandas"):
            to_pandas(records)
    else:
        frame = to_pandas(records)
        assert list(frame["config.tile"]) == [1, 2, 3] and list(frame["status"]) == ["ok", "compile_error", "ok"]


def test_store_refuses_foreign_files(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(TuningError, match="not a usable liftpy results database"):
        Store(junk)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('schema', 'somebody-else/7')")
    with pytest.raises(TuningError, match="somebody-else/7"):
        Store(other)
    with Store(tmp_path / "ok.sqlite") as store, pytest.raises(TuningError, match="JSON"):
        store.put(_rec(1, config={"f": object()}))


def test_store_waits_out_a_lock_that_sqlite_reports_at_once(tmp_path, monkeypatch):
    """Two explorations creating one store at the same instant: switching the new file to WAL can answer
    "database is locked" without waiting (seen in CI).  Opening retries that like any other wait, and still
    gives up with a usable message once its timeout has passed."""
    import liftpy.results.store as store_module

    real_connect = sqlite3.connect
    refusals = {"left": 3}

    class Busy:
        def __init__(self, db):
            self._db = db

        def execute(self, sql, *args):
            if sql.startswith("PRAGMA journal_mode") and refusals["left"] > 0:
                refusals["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self._db.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._db, name)

        def __setattr__(self, name, value):
            if name == "_db":
                object.__setattr__(self, name, value)
            else:
                setattr(self._db, name, value)

    monkeypatch.setattr(store_module.sqlite3, "connect", lambda *a, **k: Busy(real_connect(*a, **k)))
    with Store(tmp_path / "s.sqlite") as store:
        store.put(_rec(1))
        assert refusals["left"] == 0 and store.get(_rec(1).key) is not None
    refusals["left"] = 10**6
    t0 = time.monotonic()
    with pytest.raises(TuningError, match="not a usable liftpy results database .database is locked"):
        Store(tmp_path / "t.sqlite", timeout_s=0.3)
    assert time.monotonic() - t0 < 5


def test_store_of_schema_1_migrates_in_place(tmp_path):
    """A store written by liftpy before the ``run`` column opens, keeps its rows and gains the column;
    opening it again (or from a second process) finds the new schema and changes nothing."""
    from liftpy.results.store import MIGRATIONS, SCHEMA

    path = tmp_path / "v1.sqlite"
    v1 = _CREATE_V1
    with sqlite3.connect(path) as db:
        db.executescript(v1)
        db.execute("INSERT INTO meta VALUES ('schema', 'liftpy-results/1')")
        db.execute("INSERT INTO results (device, layer, variant, config, status, time_ms, bytes, metrics) "
                   "VALUES ('dev', 'L', 'v', '{\"t\":1}', 'ok', 2.5, 64, '{}')")
    assert "liftpy-results/1" in MIGRATIONS
    with Store(path) as store:
        (old,) = store.records()
        assert (old.config, old.time_ms, old.bytes, old.run) == ({"t": 1}, 2.5, 64, None)
        store.put(_rec(2))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == SCHEMA
        columns = [r[1] for r in db.execute("PRAGMA table_info(results)")]
    assert columns.count("run") == 1
    with Store(path) as store:
        rows = {r.config.get("t", r.config.get("tile")): r for r in store.records()}
        assert rows[1].run is None and rows[2].run.split(":")[1] == str(os.getpid())


_CREATE_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE results (
    id INTEGER PRIMARY KEY, device TEXT NOT NULL, layer TEXT NOT NULL, variant TEXT NOT NULL,
    config TEXT NOT NULL, layer_name TEXT, status TEXT NOT NULL, time_ms REAL, bytes INTEGER,
    source_hash TEXT, liftpy_version TEXT, profile TEXT, metrics TEXT NOT NULL DEFAULT '{}', error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1, started_at REAL, finished_at REAL,
    UNIQUE (device, layer, variant, config)
);
"""


_WRITER = textwrap.dedent(
    """
    import sys
    from liftpy.results.store import Record, Status, Store
    store = Store(sys.argv[1])
    i = int(sys.argv[2])
    while True:
        store.put(Record("dev", "8,16,16,8,3,1,1", "v", {"i": i}, Status.OK, time_ms=float(i), bytes=i,
                         metrics={"pad": "x" * 3000}))
        print(i, flush=True)  # printed only after put() returned: the row is committed
        i += 1
    """
)


@pytest.mark.slow
def test_store_survives_sigkill_mid_write(tmp_path):
    path = tmp_path / "killed.sqlite"
    committed: set[int] = set()
    start = 0
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(start)], stdout=subprocess.PIPE, text=True)
        seen = 0
        for line in proc.stdout:
            committed.add(int(line))
            seen += 1
            if seen >= 30 + 7 * round_:  # different points in the write cycle each round
                break
        os.kill(proc.pid, signal.SIGKILL)
        committed.update(int(line) for line in proc.stdout.read().split())
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with Store(path) as store:
            rows = store.records()
            stored = [r.config["i"] for r in rows]
            assert len(stored) == len(set(stored))  # each point once
            assert committed <= set(stored)  # nothing acknowledged was lost
            assert all(r.metrics["pad"] == "x" * 3000 and r.bytes == r.config["i"] for r in rows)  # no torn rows
            start = max(stored) + 1
    assert len(committed) >= 90


# -- Pareto ----------------------------------------------------------------------------------------------


def _pt(name: str, t: float | None, m: int | None, **kw) -> Record:
    return Record(kw.pop("device", "d"), kw.pop("layer", LAYER), kw.pop("variant", "v"), {"name": name},
                  kw.pop("status", Status.OK), time_ms=t, bytes=m, **kw)  # fmt: skip


def _names(records):
    return [r.config["name"] for r in records]


def test_pareto_front_by_hand():
    points = [
        _pt("A", 1.0, 10), _pt("B", 2.0, 5), _pt("C", 3.0, 7),  # C is dominated by B
        _pt("D", 4.0, 1), _pt("E", 2.0, 5),  # E duplicates B
        _pt("F", 1.0, 12),  # same time as A, more memory
        _pt("G", 5.0, 1),  # same memory as D, slower
        _pt("H", 0.5, 100, status=Status.WRONG_RESULT),  # fast but wrong: never on the front
        _pt("I", None, None, status=Status.COMPILE_ERROR),
        _pt("J", 0.1, 1, variant="reference:cudnn"),  # references are compared with, not part of, the front
    ]
    assert _names(pareto_front(points)) == ["A", "B", "D"]
    assert _names(pareto_front(points, keep_ties=True)) == ["A", "B", "E", "D"]
    assert _names(pareto_front(list(reversed(points)))) == ["A", "E", "D"]  # first of a tie in input order
    assert pareto_front([]) == [] and pareto_front(points[7:9]) == []
    assert _names(pareto_front([_pt("X", 1.0, 1), _pt("Y", 1.0, 1)], keep_ties=True)) == ["X", "Y"]


def test_pareto_front_matches_the_definition_on_random_points():
    rng = np.random.default_rng(1)
    for _ in range(30):
        pts = [_pt(str(i), float(t), int(m)) for i, (t, m) in enumerate(rng.integers(1, 6, size=(25, 2)))]

        def dominated(p):
            return any(q.time_ms <= p.time_ms and q.bytes <= p.bytes and (q.time_ms, q.bytes) != (p.time_ms, p.bytes) for q in pts)

        expected = {p.config["name"] for p in pts if not dominated(p)}
        front = pareto_front(pts, keep_ties=True)
        assert set(_names(front)) == expected
        assert [r.time_ms for r in front] == sorted(r.time_ms for r in front)
        unique = pareto_front(pts)
        assert {(r.time_ms, r.bytes) for r in unique} == {(r.time_ms, r.bytes) for r in front}
        assert len(unique) == len({(r.time_ms, r.bytes) for r in front})


def test_frontiers_group_by_device_and_layer_and_format():
    points = [_pt("a", 1.0, 2_000_000), _pt("b", 2.0, 1_000_000), _pt("c", 1.0, 1, device="e"), _pt("z", 3.0, 1, layer="1,1,1,1,1,1,0")]
    fronts = frontiers(points)
    assert {g: _names(f) for g, f in fronts.items()} == {("d", LAYER): ["a", "b"], ("d", "1,1,1,1,1,1,0"): ["z"], ("e", LAYER): ["c"]}
    ref = _pt("ref", 4.0, 8_000_000, variant="reference:im2col_gemm")
    table = format_frontier(fronts[("d", LAYER)], [ref], flops=2_000_000_000).splitlines()
    assert table[0].split() == ["#", "time", "ms", "memory", "MB", "GFLOP/s", "variant", "configuration"]
    assert table[2].split()[:4] == ["1", "1", "2", "2000"]  # 2 GFLOP in 1 ms
    assert "reference:im2col_gemm" in table[4] and "speedup 4x, mem 4x" in table[4]
    assert format_frontier([]) == "no measured points"


def test_plot_is_written(tmp_path):
    rng = np.random.default_rng(0)
    points = [_pt(str(i), float(t), int(m)) for i, (t, m) in enumerate(rng.uniform(1, 500, size=(60, 2)) * [1, 1e5])]
    refs = [_pt("cudnn", 3.0, 9e6, variant="reference:cudnn"), _pt("g", 2.0, 4e7, variant="reference:im2col_gemm")]
    out = plot_frontier(points + refs, pareto_front(points), refs, tmp_path / "front.png", title="vgg16:7")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    with pytest.raises(TuningError, match="nothing to plot"):
        plot_frontier([], [], [], tmp_path / "empty.png")


# -- workers ---------------------------------------------------------------------------------------------


def fail_with(kind: str):
    """A task that raises one of liftpy's errors (run in a worker, passed by reference)."""
    if kind == "build":
        raise KernelBuildError("the OpenCL compiler rejected it", "kernel void k() {}", "error: nope")
    if kind == "constraint":
        raise ConstraintError("tile does not divide 224")
    if kind == "print":
        print("something the task said before failing")
        raise ValueError("bad")
    return {"kind": kind, "array": np.arange(3)}


@pytest.mark.slow
def test_worker_survives_segfaults_aborts_and_hangs():
    me = fail_with
    with WorkerPool(1, default_timeout_s=30) as pool:
        first = pool.run(Task(me, ("fine",)))
        assert first.ok and first.result["kind"] == "fine" and list(first.result["array"]) == [0, 1, 2]
        warm = first.worker_pid
        assert pool.run(Task(os.getpid)).result == warm  # the same, warm worker

        seg = pool.run(Task(ctypes.string_at, (0,)))  # a null dereference in C
        assert seg.status is Status.CRASHED and "SIGSEGV" in seg.message and seg.exitcode == -signal.SIGSEGV
        assert "Segmentation fault" in seg.log  # faulthandler's report, from the worker's log
        after = pool.run(Task(os.getpid))
        assert after.ok and after.result != warm and pool.restarts == 1

        aborted = pool.run(Task(os.abort))
        assert aborted.status is Status.CRASHED and "SIGABRT" in aborted.message

        t0 = time.monotonic()
        hung = pool.run(Task(time.sleep, (60,), timeout_s=1.0))
        assert hung.status is Status.TIMEOUT and "1 s limit" in hung.message
        assert time.monotonic() - t0 < 15
        assert pool.run(Task(os.getpid)).ok and pool.restarts == 3

        build = pool.run(Task(me, ("build",)))
        assert build.status is Status.COMPILE_ERROR and build.error_type == "liftpy.errors.KernelBuildError"
        assert "rejected" in build.message and "fail_with" in build.traceback
        assert pool.run(Task(me, ("constraint",))).status is Status.INVALID_CONFIG
        printed = pool.run(Task(me, ("print",)))
        assert printed.status is Status.RUNTIME_ERROR and "something the task said" in printed.log
        # A function the worker cannot import (its module only in this process, as a notebook's functions are)
        # is the task's error, not the worker's end.
        ghost = types.ModuleType("liftpy_test_only_in_the_driver")
        exec("def vanished():\n    return 1", ghost.__dict__)
        sys.modules[ghost.__name__] = ghost
        try:
            missing = pool.run(Task(ghost.vanished))
        finally:
            del sys.modules[ghost.__name__]
        assert missing.status is Status.RUNTIME_ERROR and "liftpy_test_only_in_the_driver" in missing.message
        assert pool.restarts == 3  # errors raised by tasks do not cost a worker


@pytest.mark.slow
def test_a_busy_task_can_be_given_less_time_and_is_then_stopped_with_the_reason():
    """``limit_busy``, between the outcomes of ``imap_unordered``: the tasks running then get at most that
    much more time; one still running after it is stopped as a timeout whose message gives the reason, and
    a deadline already nearer is kept."""
    with WorkerPool(2, default_timeout_s=60) as pool:
        tasks = [Task(time.sleep, (0.2,), tag="quick"), Task(time.sleep, (60,), tag="slow")]
        t0, got, limited = time.monotonic(), {}, []
        for task, outcome in pool.imap_unordered(tasks):
            got[task.tag] = outcome
            if task.tag == "quick":
                limited.append(pool.limit_busy(0.5, "the batch went on without it"))
        assert limited == [1] and got["quick"].ok
        assert got["slow"].status is Status.TIMEOUT and time.monotonic() - t0 < 15
        assert got["slow"].message.startswith("the batch went on without it (stopped after")
        assert pool.restarts == 1
        # a task started after the limit gets its own time again
        assert pool.run(Task(time.sleep, (0.8,))).ok


def rendezvous(directory: str, parties: int, timeout_s: float) -> int:
    """A task that waits until ``parties`` tasks have arrived: all arrive only if they run at the same time."""
    open(os.path.join(directory, str(os.getpid())), "w").close()
    deadline = time.monotonic() + timeout_s
    while len(os.listdir(directory)) < parties and time.monotonic() < deadline:
        time.sleep(0.01)
    return len(os.listdir(directory))


@pytest.mark.slow
def test_worker_pool_runs_tasks_in_parallel_and_refuses_what_is_no_function(tmp_path):
    with WorkerPool(2, default_timeout_s=60) as pool:
        meet = [Task(rendezvous, (str(tmp_path), 2, 20.0), tag=i) for i in range(2)]
        tasks = meet + [Task(os.abort, tag="boom"), Task(os.getpid, tag="after")]
        outcomes = {task.tag: outcome for task, outcome in pool.imap_unordered(tasks)}
        assert set(outcomes) == {0, 1, "boom", "after"}
        assert [outcomes[i].result for i in range(2)] == [2, 2]  # both were running at once
        assert outcomes[0].worker_pid != outcomes[1].worker_pid
        assert outcomes["boom"].status is Status.CRASHED and outcomes["after"].ok
    with pytest.raises(TuningError, match="runs a function"):
        Task("os:getpid")  # a name is not a function
    with pytest.raises(TuningError, match="spawn"):
        WorkerPool(1, start_method="fork")


@pytest.mark.slow
def test_worker_initializer_failure_stops_the_pool():
    with WorkerPool(1, initializer=fail_with, init_args=("build",)) as pool:
        with pytest.raises(TuningError, match="initializer"):
            pool.run(Task(os.getpid))


def test_outcome_status_of_exceptions_with_their_own():
    from liftpy.runtime.process import classify

    class Wrong(Exception):
        status = Status.WRONG_RESULT

    assert classify(Wrong()) is Status.WRONG_RESULT and classify(KeyError()) is Status.RUNTIME_ERROR
    assert Outcome(Status.OK).ok and not Outcome(Status.TIMEOUT).ok


# -- progress --------------------------------------------------------------------------------------------


def test_progress_line_and_streams():
    state = ProgressState(total=200, ok=30, failed=7, resumed=13, best_ms=1.234, best_bytes=12_300_000, elapsed_s=62)
    assert format_progress(state, "vgg16:7") == (
        "vgg16:7 [ 50/200] 30 ok, 7 failed, 13 resumed | best 1.234 ms (12.3 MB) | 1:02 elapsed, ETA 4:11"
    )
    assert format_progress(ProgressState(total=3)).endswith("ETA ?")

    log = io.StringIO()  # not a terminal: whole lines, no carriage returns
    p = Progress(3, "L", stream=log, log_every_s=1e9)
    p.update(Status.OK, 2.0, 10)
    p.update(Status.TIMEOUT)
    p.update(Status.OK, 1.0, 20)
    p.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) == 2  # the first update and the end
    assert lines[-1].startswith("L [3/3] 2 ok, 1 failed | best 1 ms (2e-05 MB)") and "ETA" not in lines[-1]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()  # a terminal: a tqdm bar, drawn from the start, its phase first
    with Progress(2, "L", stream=tty) as p:
        p.phase("deriving the variants")
        assert "L: deriving the variants" in tty.getvalue()
        p.start(2, 0)
        p.resume()
        p.update(Status.OK, 3.0)
    last = tty.getvalue().split("\r")[-1]
    assert last.startswith("L: 100%") and "2/2" in last and "1 ok, 0 failed, 1 resumed, best 3 ms" in last
    assert tty.getvalue().endswith("\n") and tty.getvalue().count("\n") == 1

    log = io.StringIO()  # a log: each phase a line of its own, at once
    p = Progress(3, "L", stream=log, log_every_s=1e9)
    p.phase("screening")
    assert log.getvalue() == "L: screening\n"


# -- references ------------------------------------------------------------------------------------------


def _naive(x, w, stride, pad):
    c, h, wd = x.shape
    m, _, k, _ = w.shape
    xp = np.zeros((c, h + 2 * pad, wd + 2 * pad))
    xp[:, pad : pad + h, pad : pad + wd] = x
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    out = np.zeros((m, oh, ow))
    for mm, y, xx, cc, i, j in itertools.product(range(m), range(oh), range(ow), range(c), range(k), range(k)):
        out[mm, y, xx] += w[mm, cc, i, j] * xp[cc, y * stride + i, xx * stride + j]
    return out


def test_plain_convolution_by_hand_and_against_loops():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    w = np.ones((1, 1, 2, 2), dtype=np.float32)
    assert conv2d_direct(x, w, stride=2).tolist() == [[[0 + 1 + 4 + 5, 2 + 3 + 6 + 7], [8 + 9 + 12 + 13, 10 + 11 + 14 + 15]]]
    assert conv2d_direct(x, w, pad=1)[0, 0, 0] == 0.0 and conv2d_direct(x, w, pad=1)[0, 4, 4] == 15.0
    rng = np.random.default_rng(3)
    for k, stride, pad in [(1, 1, 0), (3, 2, 1), (5, 1, 2), (3, 3, 0)]:
        x, w = rng.standard_normal((3, 9, 7)), rng.standard_normal((2, 3, k, k))
        assert np.allclose(conv2d_direct(x, w, stride, pad), _naive(x, w, stride, pad), rtol=1e-12, atol=1e-12)


def test_validation_catches_a_single_missing_term():
    layer = get_layer("vgg16:19").reduced(spatial=8, channels=512, kernels=4)  # 4608 terms per output
    x, w = random_inputs(layer)
    exp = expectation(x, w, layer.stride, layer.pad)
    assert validate(exp.expected.astype(np.float32), exp).ok
    w_missing = w.copy()
    w_missing[0, 0, 1, 1] = 0.0  # one term of every output of kernel 0
    result = validate(conv2d_direct(x, w_missing, 1, 1).astype(np.float32), exp)
    assert not result.ok and result.worst_index[0] == 0 and "elements wrong" in result.message
    bad = exp.expected.astype(np.float32)
    bad[2, 3, 4] = np.nan
    assert not validate(bad, exp).ok and "non-finite" in validate(bad, exp).message
    assert "shape" in validate(bad[:, :-1], exp).message


CASES = [(1, 1, 0), (3, 1, 1), (5, 1, 2), (1, 2, 0), (3, 2, 1), (5, 2, 2), (11, 4, 0)]
# cuDNN and the im2col GEMM run on a GPU through PyTorch and CUDA (``device``); elsewhere they skip.
REFERENCES = ["im2col_gemm_numpy", "torch_cpu", pytest.param("cudnn", marks=pytest.mark.device),
              pytest.param("im2col_gemm", marks=pytest.mark.device)]


@pytest.mark.parametrize("name", REFERENCES)
def test_references_agree_with_the_plain_convolution(name):
    if name not in available_references():
        pytest.skip(f"{name} needs PyTorch{' and CUDA' if name in ('cudnn', 'im2col_gemm') else ''}")
    for k, stride, pad in CASES:
        layer = Layer(f"k{k}s{stride}p{pad}", 5, 23, 19, 6, k, stride, pad)
        x, w = random_inputs(layer, seed=k + stride)
        ref = measure_reference(name, x, w, stride, pad, warmup=1, repeat=2)
        check = validate(ref.output, expectation(x, w, stride, pad))
        assert check.ok, f"{name} {layer}: {check.message}"
        assert ref.output.shape == layer.output_shape and ref.output.dtype == np.float32
        assert ref.time_ms > 0 and ref.bytes == sum(ref.breakdown.values())
        if name in ("cudnn", "im2col_gemm"):
            assert len(ref.times_ms) == 2 and ref.time_ms == statistics.median(ref.times_ms)
        else:  # timed as liftpy's kernels on a CPU device are (liftpy.host.timing)
            assert len(ref.times_ms) == CPU_RUNS and ref.time_ms == min(ref.times_ms)
        assert ref.bytes >= layer.min_bytes
        if name == "im2col_gemm_numpy":
            assert ref.breakdown["im2col"] == 4 * layer.C * k * k * layer.out_h * layer.out_w


@pytest.mark.parametrize("name", REFERENCES)
def test_references_run_a_bias_and_relu_after_the_convolution(name):
    """With an epilogue each reference is a network's layer: the plain convolution plus the bias, then max(., 0)."""
    from liftpy.operators.conv.direct import random_epilogue

    if name not in available_references():
        pytest.skip(f"{name} needs PyTorch{' and CUDA' if name in ('cudnn', 'im2col_gemm') else ''}")
    layer = Layer("k3s1p1", 5, 13, 11, 6, 3, 1, 1)
    x, w = random_inputs(layer, seed=1)
    for relu in (False, True):
        epilogue = random_epilogue(layer, seed=1, relu=relu)
        ref = measure_reference(name, x, w, layer.stride, layer.pad, warmup=1, repeat=1, epilogue=epilogue)
        exp = expectation(x, w, layer.stride, layer.pad)
        want = exp.expected + epilogue.bias.astype(np.float64)[:, None, None]
        want = np.maximum(want, 0.0) if relu else want
        assert np.allclose(ref.output, want, rtol=1e-4, atol=1e-4), (name, relu)
        assert ((ref.output >= 0).all() and (want == 0).any()) if relu else (ref.output < 0).any()


def test_reference_records_join_the_frontier_plot(tmp_path):
    layer = get_layer("vgg16:5").reduced(spatial=12, channels=4, kernels=4)
    x, w = random_inputs(layer)
    ref = measure_reference("im2col_gemm_numpy", x, w, layer.stride, layer.pad)
    rec = reference_record(ref, "dev", layer)
    assert rec.is_reference and rec.measured and rec.layer == layer.spec and rec.metrics["breakdown"]["im2col"] > 0
    with Store(tmp_path / "r.sqlite") as store:
        store.put(rec)
        store.put(_pt("p", ref.time_ms * 2, ref.bytes // 3, layer=layer.spec, device="dev"))
        records = store.records(layer=layer.spec)
    front = pareto_front(records)
    assert _names(front) == ["p"]
    assert "reference:im2col_gemm_numpy" in format_frontier(front, [rec], flops=layer.flops)
    assert plot_frontier(records, front, [rec], tmp_path / "p.png").stat().st_size > 0
    with pytest.raises(TuningError, match="unknown reference"):
        measure_reference("mkl", x, w)
    json.dumps(rec.metrics)  # stored as JSON


@pytest.mark.slow
def test_worker_is_replaced_after_an_error_that_retires_it():
    """A task whose exception says the process cannot be trusted (a GPU fault) gets its status, and the
    next task runs in a fresh worker."""
    from liftpy.runtime.pool import Task, WorkerPool
    from liftpy.runtime.process import _raise_kernel_run_error

    with WorkerPool(1, default_timeout_s=60) as pool:
        first = pool.run(Task(os.getpid))
        again = pool.run(Task(os.getpid))
        assert first.result == again.result  # warm workers are reused
        bad = pool.run(Task(_raise_kernel_run_error))
        assert bad.status is Status.RUNTIME_ERROR
        after = pool.run(Task(os.getpid))
        assert after.ok and after.result != first.result
        assert pool.restarts >= 1


def test_a_store_in_a_missing_folder_is_refused_naming_it(tmp_path):
    """A typo in --db made folders silently, and the results went where nobody looked."""
    with pytest.raises(TuningError, match=f"the folder {tmp_path / 'new' / 'deeper'} .* does not exist"):
        Store(tmp_path / "new" / "deeper" / "r.sqlite")
    assert not (tmp_path / "new").exists()
    blocker = tmp_path / "file"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(TuningError, match="is not a folder"):
        Store(blocker / "r.sqlite")
    with Store(tmp_path / "r.sqlite") as store:
        assert store.count() == 0


@pytest.mark.slow
def test_uncached_imports_names_packages_every_worker_would_compile_from_source(tmp_path):
    """Where Python may not write bytecode and none is kept for sympy, the engine's note names it (each worker
    would compile it as it starts); with bytecode allowed, nothing is named."""
    import os
    import subprocess
    import sys

    code = "from liftpy.runtime.process import uncached_imports; print(uncached_imports())"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path / "empty")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert "sympy" in out
    env.pop("PYTHONDONTWRITEBYTECODE")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_timing_rules_by_device_type():
    """On a CPU device a time is the fastest of at least 40 runs, or of those that fit in two seconds; on a
    GPU (and the simulator, which calls itself both) the median of the runs asked for."""
    from liftpy.host.timing import CPU_BUDGET_MS, MIN_RUNS, TimingRule, cpu_timing, device_timing

    times = [3.0, 1.0, 2.0, 9.0, 4.0]
    assert TimingRule(5).of(times) == 3.0 and TimingRule(5, "fastest").of(times) == 1.0
    # the runs a statistic reads (a pipeline's kernels are reported from them): the fastest, the middle one(s)
    assert TimingRule(5, "fastest").runs_read(times) == [1] and TimingRule(5).runs_read(times) == [0]
    assert sorted(TimingRule(4).runs_read([4.0, 1.0, 3.0, 2.0])) == [2, 3]
    assert device_timing("CPU", 5) == cpu_timing(5) == TimingRule(CPU_RUNS, "fastest", CPU_BUDGET_MS)
    assert device_timing("CPU", 100) == TimingRule(100, "fastest", CPU_BUDGET_MS)
    assert device_timing("GPU", 5) == TimingRule(5) and device_timing("GPU/CPU/accelerator", 3) == TimingRule(3)
    assert str(TimingRule(1)) == "median of 1 run" and str(cpu_timing(1)) == f"fastest of {CPU_RUNS} runs within 2 s"
    with pytest.raises(ValueError, match="mean"):
        TimingRule(5, "mean")
    # A slow point stops after the runs that fill the budget (never fewer than MIN_RUNS); a fast one runs 40.
    slow = cpu_timing(5)
    assert not slow.enough([900.0] * (MIN_RUNS - 1)) and slow.enough([900.0] * MIN_RUNS)
    assert not slow.enough([1.0] * 39) and not TimingRule(40, "fastest").enough([900.0] * 39)


def test_a_slow_kernel_on_the_cpu_is_timed_within_the_budget():
    from liftpy.host.kernel import compile_program
    from liftpy.ir.parser import parse_program

    prog = parse_program("def twice(x: [float]N) = mapGlb(0, fun(v) => add(v, v), x)")
    compiled = compile_program(prog, {"N": 64})
    x = np.ones(64, np.float32)
    assert len(compiled.run(x, repeat=40, statistic="fastest", budget_ms=0.0).times_ms) == 3
    assert len(compiled.run(x, repeat=40, statistic="fastest").times_ms) == 40

