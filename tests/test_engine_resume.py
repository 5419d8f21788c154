"""Resumed explorations (issue 12): a model search explored, stored and resumed, the batch its last run saved
measured first, and not once the store changed or the search differs.

The explorations' workers run in this process (``pools_here``), but for the first test's: it times the
start-up of a real measuring worker, which a resumed run waits for (so it is ``slow``)."""

import pytest

from engine_helpers import MATMUL, SMALL, _new_points, _saved_batches
from liftpy.explore import explore_program
from liftpy.results.store import Status
from liftpy.search import ModelSearch


@pytest.mark.slow  # a real measuring worker: its start-up is what a resumed run waits for
def test_program_explored_with_model_search_and_resumed(tmp_path):
    db = tmp_path / "r.sqlite"
    ex = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=6, db=db, search=ModelSearch, progress=False,
                         repeat=1, warmup=0, references=False)
    points = [r for r in ex.records if not r.is_reference]
    assert len(points) == 6 and ex.ran == 6
    assert all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert ex.frontier and ex.best is not None
    # The model ranks the tiled variants first: a vendor-shaped kernel is among the first measured (on a
    # CPU or GPU; the simulator's profile, one compute unit, makes the model prefer others).
    from conftest import on_simulator

    assert on_simulator() or any("tiled" in r.variant for r in points)
    again = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=8, db=db, search=ModelSearch, progress=False,
                            repeat=1, warmup=0, references=False)
    assert again.resumed == 6 and again.ran == 2
    # Where a resume's time to its first run goes: the measuring worker's start-up and the point's steps.
    assert 0 < again.measure_ready_s < again.first_result_s
    steps = again.measure_start_steps
    assert set(steps) == {"interpreter_s", "imports_s", "device_s", "prepare_s", "total_s"}, steps
    assert all(v >= 0 for v in steps.values()) and steps["total_s"] >= steps["device_s"] + steps["prepare_s"]
    latest = max((r for r in again.records if not r.is_reference), key=lambda r: r.finished_at or 0)
    assert all(latest.metrics[k] >= 0 for k in ("build_s", "prepare_s", "run_s", "check_s"))
    # A point's record says how its time was taken: on a CPU device the fastest of 40 runs (one asked for).
    from liftpy.host.device import device_info
    from liftpy.host.timing import device_timing

    assert latest.metrics["timing"] == str(device_timing(device_info(None).type, 1))
    keys = [(r.variant, tuple(sorted(r.config.items()))) for r in again.records]
    assert len(keys) == len(set(keys)) == 8
    # A resume's progress line shows the exploration's best, the stored points' included.
    import io

    line = io.StringIO()
    third = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=8, db=db, search=ModelSearch, progress=True,
                            stream=line, repeat=1, warmup=0, references=False)
    assert third.ran == 0
    best = min(r.time_ms for r in third.records if not r.is_reference and r.time_ms is not None)
    assert f"8 resumed | best {best:.4g} ms" in line.getvalue(), line.getvalue()


@pytest.mark.usefixtures("pools_here")
def test_resumed_model_search_starts_with_the_batch_the_last_run_saved(tmp_path, monkeypatch):
    """A model search that ends saves the batch its strategy proposes next; the run that resumes it measures
    that batch first, before its own strategy proposes anything, with the kernels generated when the batch
    was saved.  (Compared with the first run's own proposal: a run that went on in one go would propose the
    same only if every time measured were the same, and measured times vary.)"""
    from liftpy import search as search_module
    from liftpy.results.store import config_key

    proposals = []
    propose = search_module.ModelSearch.propose

    def spy(self, n, taken):
        out = propose(self, n, taken)
        proposals.append(out)
        return out

    monkeypatch.setattr(search_module.ModelSearch, "propose", spy)
    db = tmp_path / "r.sqlite"
    kw = dict(db=db, search=ModelSearch, progress=False, repeat=1, warmup=0, references=False, batch=3, jobs=2)
    first = explore_program(MATMUL, SMALL, samples=6, **kw)
    assert first.ran == 6 and first.from_saved_batch == 0
    # The first point of the saved batch was built on the device too (its binary in pyopencl's cache).
    assert first.prebuilt == 1
    [(_, _, saved)] = _saved_batches(db)
    # No rule filter: a variant's index in the derivation order is its index in the search.
    assert [(p["index"], config_key(p["config"])) for p in saved] == [(i, config_key(c)) for i, c in proposals[-1]]
    assert len(saved) == 3
    proposals.clear()
    again = explore_program(MATMUL, SMALL, samples=8, **kw)
    assert again.ran == 2 and again.from_saved_batch == 2
    assert _new_points(first.records, again.records) == [(p["variant"], p["config"]) for p in saved[:2]]
    assert len(proposals) == 1  # only the batch this run saves in turn: its first batch was not proposed
    new = [r for r in again.records if (r.variant, r.config) in [(p["variant"], p["config"]) for p in saved]]
    assert all(r.metrics.get("codegen_ahead") for r in new), [r.metrics for r in new]
    [(_, _, resaved)] = _saved_batches(db)
    assert [(p["index"], config_key(p["config"])) for p in resaved] == [(i, config_key(c)) for i, c in proposals[-1]]


@pytest.mark.usefixtures("pools_here")
@pytest.mark.slow
def test_saved_batch_is_unused_once_the_store_changed_or_the_search_differs(tmp_path):
    """A saved batch is what the last run's strategy, knowing exactly the finished points then stored, would
    measure next: a point measured again since (by another exploration), or a search with another seed,
    does not start with it."""
    import dataclasses

    from liftpy.results.store import Store

    db = tmp_path / "r.sqlite"
    kw = dict(db=db, search=ModelSearch, progress=False, repeat=1, warmup=0, references=False, batch=2)
    first = explore_program(MATMUL, SMALL, samples=4, **kw)
    [(_, state, saved)] = _saved_batches(db)
    other_seed = explore_program(MATMUL, SMALL, samples=5, seed=1, **kw)
    assert other_seed.from_saved_batch == 0 and other_seed.ran == 1
    # The other seed's run changed the store: the first seed's batch is stale now.
    assert sum(s == state for _, s, _ in _saved_batches(db)) == 1
    again = explore_program(MATMUL, SMALL, samples=6, **kw)
    assert again.from_saved_batch == 0 and again.ran == 1
    with Store(db) as store:
        latest = store.records()[-1]
        assert latest.status is Status.OK
        resumed = explore_program(MATMUL, SMALL, samples=7, **kw)
        assert resumed.from_saved_batch == 1  # nothing changed since the last run saved its batch
        store.put(dataclasses.replace(latest, time_ms=latest.time_ms * 2, finished_at=None))
    changed = explore_program(MATMUL, SMALL, samples=8, **kw)
    assert changed.from_saved_batch == 0 and changed.ran == 1


@pytest.mark.slow
def test_an_exploration_told_not_to_save_its_next_batch_saves_none(tmp_path):
    """A network reads a finished layer's best point and never resumes it, so its explorations skip choosing
    and generating the batch a resumed run would start with (``save_batch=False``): no batch is saved and
    none is built ahead; by default one is."""
    db = tmp_path / "r.sqlite"
    kw = dict(search=ModelSearch, progress=False, repeat=1, warmup=0, references=False, batch=2, jobs=2)
    skipped = explore_program(MATMUL, SMALL, samples=2, db=db, save_batch=False, **kw)
    assert skipped.ran == 2 and skipped.prebuilt == 0 and not _saved_batches(db)
    saved = explore_program(MATMUL, SMALL, samples=2, db=tmp_path / "s.sqlite", **kw)
    assert saved.ran == 2 and _saved_batches(tmp_path / "s.sqlite")
