"""The engine's workers (issue 12): worker pools (the real ones start processes), how many an exploration
starts, points measured as they are compiled (``evaluate_points`` with pools faked in this process), kernels
built ahead, a user function travelling to worker processes with its program, and models of other
problems' points made in processes."""

import math
import time

import pytest

from engine_helpers import MATMUL, gpu_profile, twice_matmul
from liftpy.explore import explore_operator
from liftpy.explore.operator import ProgramOperator
from liftpy.results.store import Status
from liftpy.search import UniformSearch


@pytest.mark.slow
def test_user_function_travels_to_workers_and_parallel_codegen(tmp_path):
    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8})
    ex = explore_operator(op, samples=4, db=tmp_path / "r.sqlite", search=UniformSearch, jobs=2, progress=False,
                          repeat=1, warmup=0, references=False, seed=2)
    points = [r for r in ex.records if not r.is_reference]
    assert len(points) == 4
    assert all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert all(r.metrics.get("codegen_s", 0) > 0 for r in points)


@pytest.mark.slow
def test_models_of_other_problems_points_are_made_in_processes_and_kept(tmp_path, monkeypatch):
    """``prefetch_at`` makes the models of many points of another problem in worker processes and keeps them
    on disk (and in memory): ``predict_at`` then predicts each without making a model itself, and as it
    would have."""
    from liftpy.explore.operator import program_operator
    from liftpy.search import Spaces
    from liftpy.search import spaces as spaces_module
    from liftpy.search.spaces import PREFETCH_AT_MIN

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    op = program_operator(str(MATMUL), "M=64,N=64,K=32")
    other = {"M": 32, "N": 32, "K": 16}
    variants = op.variants()
    gpu = gpu_profile()
    there = Spaces(variants, other, gpu, 0)
    points = [(i, other, c) for i in range(len(variants)) for c in there.sample(i, 2, 0)][:2 * PREFETCH_AT_MIN]
    assert len(points) >= PREFETCH_AT_MIN
    spaces = Spaces(variants, op.sizes(), gpu, 0)
    spaces.prefetch_at(points, jobs=2)

    def refuse(*args, **kwargs):
        raise AssertionError("a model was made after the prefetch")

    monkeypatch.setattr(spaces_module, "model_code", refuse)
    kept = [spaces.predict_at(i, sizes, c) for i, sizes, c in points]
    monkeypatch.undo()
    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    fresh = Spaces(variants, op.sizes(), gpu, 0)
    made = [fresh.predict_at(i, sizes, c) for i, sizes, c in points]
    assert [p.seconds for p in kept] == pytest.approx([p.seconds for p in made])
    assert [p.features for p in kept] == [p.features for p in made]
    # Without a disk cache the models made in the processes serve from memory.
    uncached = Spaces(variants, op.sizes(), gpu, 0)
    uncached.prefetch_at(points, jobs=2)
    monkeypatch.setattr(spaces_module, "model_code", refuse)
    assert [uncached.predict_at(i, sizes, c).seconds for i, sizes, c in points] == pytest.approx([p.seconds for p in made])


@pytest.mark.slow
def test_a_worker_pool_runs_a_function_on_many_arguments_in_their_order():
    """``WorkerPool.run_all``: results in the order of the arguments, a failed call as ``(False, None)``."""
    from liftpy.runtime.pool import WorkerPool

    with WorkerPool(2, default_timeout_s=60) as pool:
        assert pool.width == 2
        assert pool.run_all(math.sqrt, [4.0, -1.0, 9.0, 16.0]) == [(True, 2.0), (False, None), (True, 3.0), (True, 4.0)]


def test_an_on_demand_pool_starts_its_processes_only_for_enough_calls_at_once():
    """``OnDemandPool``: fewer calls than ``least`` run in this process, in order, a failing one as
    ``(False, None)`` as a worker's would be; the first batch of ``least`` or more starts the pool, which then
    takes every later call, however few."""
    from liftpy.runtime.pool import OnDemandPool

    started, handed = [], []

    class Fake:
        def run_all(self, fn, args):
            handed.append(list(args))
            return [(True, ("pool", a)) for a in args]

        def close(self):
            started.append("closed")

    def start():
        started.append("started")
        return Fake()

    with OnDemandPool(start, 3, least=3) as pool:
        assert pool.width == 3
        assert pool.run_all(math.sqrt, [4.0, 9.0]) == [(True, 2.0), (True, 3.0)]
        assert pool.run_all(math.sqrt, [-1.0, 16.0]) == [(False, None), (True, 4.0)]
        assert not started and not handed
        assert pool.run_all(math.sqrt, [1.0, 2.0, 3.0]) == [(True, ("pool", a)) for a in (1.0, 2.0, 3.0)]
        assert pool.run_all(math.sqrt, [5.0]) == [(True, ("pool", 5.0))]
    assert started == ["started", "closed"] and handed == [[1.0, 2.0, 3.0], [5.0]]


@pytest.mark.slow
def test_a_polled_worker_pool_hands_control_back_while_its_workers_are_busy():
    """``imap_unordered(poll=...)``: while ``poll`` says so, a round in which no task finished yields None
    instead of waiting for the busy workers; the outcomes come as before."""
    from liftpy.runtime.pool import Task, WorkerPool

    with WorkerPool(1, default_timeout_s=60) as pool:
        pool.run(Task(math.sqrt, (1.0,)))  # started: the rounds below wait for the task, not the start-up
        got = []
        for item in pool.imap_unordered([Task(time.sleep, (0.3,), tag="slept")], poll=lambda: True):
            got.append(item)
            time.sleep(0.01)
        assert got[0] is None and got.count(None) == len(got) - 1
        assert got[-1][0].tag == "slept" and got[-1][1].ok
        # Without poll (or while it says no) the pool waits: only the outcome comes.
        got = list(pool.imap_unordered([Task(time.sleep, (0.05,), tag="slept")], poll=lambda: False))
        assert len(got) == 1 and got[0][1].ok


@pytest.mark.slow
def test_a_worker_takes_its_next_task_before_the_caller_has_its_outcome():
    """The task drawn already goes to the worker that finished before the caller gets that worker's outcome:
    the one measuring worker runs the next point while the exploration stores the last one's record."""
    from liftpy.runtime.pool import Task, WorkerPool

    with WorkerPool(1, default_timeout_s=60) as pool:
        pool.run(Task(math.sqrt, (1.0,)))
        got = []
        for task, outcome in pool.imap_unordered([Task(time.sleep, (0.2,)), Task(time.time)]):
            got.append((time.time(), outcome.result))
            time.sleep(0.5)  # the caller's bookkeeping
        (received, _), (_, ran_at) = got
        assert ran_at < received + 0.4


def test_an_exploration_without_jobs_uses_the_cores_a_gpu_leaves_free_and_one_beside_a_cpu_device(monkeypatch):
    """``default_jobs``: a device whose kernels run on this host's CPUs (PoCL) gets one code-generation process,
    whose cores would otherwise be taken from the kernels being timed; a GPU one per core but one."""
    import os
    from dataclasses import replace

    from liftpy.explore import devices
    from liftpy.host.device import device_info

    info = device_info(None)
    cpu, gpu = replace(info, type="CPU"), replace(info, type="GPU")
    assert cpu.on_host_cpu and not gpu.on_host_cpu
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert devices.default_jobs(cpu) == 1 and devices.default_jobs(gpu) == 15
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert devices.default_jobs(gpu) == 1


class _FakePools:
    """A compile pool and a measuring pool in this process that log what they are handed and finish, for
    ``evaluate_points``: the compile pool one point per round, with an empty round after each when polled."""

    def __init__(self, failing=(), measure_s=0.0, slow=()):
        self.log, self.failing, self.measure_s, self.slow = [], set(failing), measure_s, set(slow)
        self.closed, self.limits = [], []

    def limit_busy(self, seconds, reason):
        self.limits.append((seconds, reason))
        return len(self.slow)

    def compiles(self, tasks, poll=None):
        """Compiles in order, but the points in ``slow`` finish only after all others: stopped (a timeout
        with the reason) if they were limited by then, else compiled."""
        from liftpy.results.store import Status
        from liftpy.runtime.pool import Outcome

        def outcome(k):
            ok = k not in self.failing
            return Outcome(Status.OK if ok else Status.COMPILE_ERROR,
                           {"stages": [f"kernel {k}"], "codegen_s": 0.01} if ok else None, message="no", elapsed_s=0.1)

        try:
            held = []
            for t in tasks:
                k = t.tag[0]
                if k in self.slow:
                    held.append(t)
                    continue
                self.log.append(("compiled", k))
                yield t, outcome(k)
                if poll is not None and poll():
                    yield None
            while poll is not None and poll():  # the points compiled are taken before the pool waits
                yield None
            for t in held:
                k = t.tag[0]
                self.log.append(("stopped" if self.limits else "compiled", k))
                yield t, (Outcome(Status.TIMEOUT, message=f"{self.limits[-1][1]} (stopped after 5.0 s)")
                          if self.limits else outcome(k))
        finally:
            self.closed.append("compile")

    def measures(self, tasks, poll=None):
        from liftpy.results.store import Status
        from liftpy.runtime.pool import Outcome

        for t in tasks:
            self.log.append(("measured", t.args[0]["stages"][0]))
            time.sleep(self.measure_s)
            yield t, Outcome(Status.OK, {"time_ms": 1.0})


def _evaluate_with(pools, n, deadline=None, **kw):
    from types import SimpleNamespace

    from liftpy.runtime import evaluate as ev

    variants = [SimpleNamespace(program=None, placement_map=None)] * n
    chosen = [(k, {"x": k}) for k in range(n)]
    compile_pool = SimpleNamespace(imap_unordered=pools.compiles, limit_busy=pools.limit_busy)
    measure_pool = SimpleNamespace(imap_unordered=pools.measures)
    return list(ev.evaluate_points(None, variants, chosen, compile_pool, measure_pool, None, 0, 1, 0, None, None,
                                   deadline=deadline, **kw))


def test_points_are_measured_as_they_are_compiled_not_after_the_whole_batch():
    """The measuring worker gets each point as soon as it and the points before it are compiled (a uniform
    search's one batch used to be compiled whole before anything was measured, stored or shown), in the
    points' order; a point whose compile failed is reported and skipped."""
    pools = _FakePools(failing={2})
    got = _evaluate_with(pools, 5)
    assert [(i, o.ok) for (i, _), o in got] == [(0, True), (1, True), (2, False), (3, True), (4, True)]
    log = pools.log
    assert log.index(("measured", "kernel 0")) < log.index(("compiled", 1))
    assert [e[1] for e in log if e[0] == "measured"] == ["kernel 0", "kernel 1", "kernel 3", "kernel 4"]
    assert pools.closed == ["compile"]


def test_a_batch_does_not_wait_on_end_for_a_point_still_compiling_after_the_rest_was_measured():
    """Points go to the measuring worker as they are compiled (the first of the chosen order among those
    ready), so a slow compile holds back no point behind it; once only slow ones are left, every other
    point on its way to the device, they are given ``straggler_s`` more (or twice the batch's longest
    compile step), then stopped and reported as timeouts that say why.  With ``straggler_s=None`` they are
    waited for and measured."""
    from liftpy.results.store import Status
    from liftpy.runtime import evaluate as ev

    pools = _FakePools(slow={1})
    got = _evaluate_with(pools, 4, straggler_s=3.0)
    assert [e for e in pools.log if e[0] == "measured"] == [("measured", f"kernel {k}") for k in (0, 2, 3)]
    assert pools.limits == [(3.0, ev.STRAGGLER_REASON.format(s=3.0))]
    (late, outcome), = [(i, o) for (i, _), o in got if not o.ok]
    assert late == 1 and outcome.status is Status.TIMEOUT and "after the rest of the batch" in outcome.message
    assert pools.log.index(("stopped", 1)) > pools.log.index(("measured", "kernel 3"))

    waited = _FakePools(slow={1})
    got = _evaluate_with(waited, 4, straggler_s=None)
    assert waited.limits == [] and all(o.ok for _, o in got) and len(got) == 4
    assert [e[1] for e in waited.log if e[0] == "measured"] == ["kernel 0", "kernel 2", "kernel 3", "kernel 1"]
    # a batch whose points all compile at once, none measured yet, is not limited: nothing went on without them
    alone = _FakePools(slow={0})
    assert [o.ok for _, o in _evaluate_with(alone, 1, straggler_s=3.0)] == [True] and alone.limits == []
    # the grace is twice the batch's longest compile step where that is longer
    longer = _FakePools(slow={2})
    _evaluate_with(longer, 3, straggler_s=0.05)
    assert longer.limits[0][0] == 0.2


def test_no_point_is_handed_to_the_measuring_worker_after_the_deadline():
    """``deadline`` (the exploration's budget): the point measuring then finishes, no other starts, and the
    compile workers' points for later are dropped."""
    pools = _FakePools(measure_s=0.2)
    got = _evaluate_with(pools, 5, deadline=time.time() + 0.1)
    assert len(got) == 1 and got[0][1].ok
    assert pools.closed == ["compile"]
    assert _evaluate_with(_FakePools(), 3, deadline=time.time() - 1) == []


@pytest.mark.slow
def test_compile_workers_can_build_the_kernels_ahead_into_the_compilers_caches(monkeypatch):
    """``build_ahead`` (GPU devices: ``explore_operator`` turns it on where builds do not share the CPUs with the
    kernels being timed): the compile workers build each point's kernels on the device after generating them,
    the measuring worker then measures the same points with the same outcomes; a build that fails ahead is
    left to the measuring worker."""
    from liftpy.host.device import device_info
    from liftpy.host.profile import resolve_profile
    from liftpy.runtime import evaluate as ev
    from liftpy.runtime import points
    from liftpy.search import Spaces

    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8})
    variants = op.variants()
    index = device_info(None).index
    limits = resolve_profile(index, None).limits()
    spaces = Spaces(variants, op.sizes(), resolve_profile(index, None), 0)
    chosen = [(i, c) for i in range(min(len(variants), 6)) for c in spaces.sample(i, 1, 0)][:3]
    assert len(chosen) == 3
    outcomes = {}
    for ahead in (False, True):
        with ev.compile_pool(2, 120) as compiling, ev.measure_pool(index, 120, (op, 0)) as measuring:
            got = list(ev.evaluate_points(op, variants, chosen, compiling, measuring, index, 0, 1, 0, limits, None,
                                          build_ahead=ahead))
        outcomes[ahead] = sorted((i, tuple(sorted(c.items())), o.status.value) for (i, c), o in got)
        # the compile workers' build time is in each result where they built the kernels
        assert all(("prebuild_s" in o.result) == ahead and o.result.get("prebuild_s", 1.0) > 0 for _, o in got)
    assert outcomes[True] == outcomes[False] and all(s == "ok" for *_, s in outcomes[True])
    # In one process: the kernels generated are those compile_point generates, built once; a failed build is passed over.
    built = []
    monkeypatch.setattr(points, "_build", lambda payload: built.append(payload["stages"]) or (_ for _ in ()).throw(points.LiftError("no")))
    i, c = chosen[0]
    payload = points.point_payload(op, variants[i].program, variants[i].placement_map, c, index, 0, 1, 0, limits, None)
    out = points.compile_and_build_point(payload)
    assert [k.source for k, _ in out["stages"]] == [k.source for k, _ in points.compile_point(payload)["stages"]]
    assert len(built) == 1 and built[0] is out["stages"]


@pytest.mark.slow
def test_explorations_share_the_devices_workers(tmp_path):
    """A network explores its layers one after another with the device's workers started once
    (``SharedWorkers``): the same measuring and code-generation processes serve two problems, each point
    validated against its own problem's reference, and the workers stop when the context closes."""
    from liftpy.explore.devices import SharedWorkers
    from liftpy.explore.operator import library_operator

    with SharedWorkers(None, jobs=2) as workers:
        measuring, compiling = workers.measuring.pids(), workers.compiling.pids()
        assert len(measuring) == 1 and len(compiling) == 2
        for spec, sizes in (("add", {"N": 4096}), ("gemv", {"M": 16, "N": 64})):
            ex = explore_operator(library_operator(spec, sizes), samples=2, db=tmp_path / "r.sqlite", shared=workers,
                                  references=False, progress=False, search=UniformSearch)
            points = [r for r in ex.records if not r.is_reference]
            assert len(points) == 2 and all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
        assert workers.measuring.pids() == measuring and workers.compiling.pids() == compiling
    assert not workers.measuring.pids()


@pytest.mark.slow
def test_shared_workers_derive_the_variants_into_the_cache(tmp_path, monkeypatch):
    """A network's distinct layer kinds are derived at once on the code-generation workers
    (``SharedWorkers.derive``), into the disk cache where each exploration then reads them: afterwards the
    cache holds each kind, the same variants this process would derive, and a kind already there is not
    derived again."""
    from liftpy.explore.devices import SharedWorkers
    from liftpy.explore.operator import library_operator
    from liftpy.results.cache import cached_variants, variants_cached

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    ops = [library_operator("add", {"N": 4096}), library_operator("gemv", {"M": 16, "N": 64}),
           library_operator("add", {"N": 64})]  # the same kind as the first: derived once
    assert not any(variants_cached(op) for op in ops)
    with SharedWorkers(None, jobs=2) as workers:
        assert workers.derive(ops) == 2
        assert all(variants_cached(op) for op in ops)
        assert workers.derive(ops) == 0
    for op in ops[:2]:
        assert [v.program.text() for v in cached_variants(op)] == [v.program.text() for v in op.variants()]


@pytest.mark.slow
def test_a_worker_replaced_after_its_tasks_leaves_without_holding_the_pool():
    """A worker that ran ``max_tasks_per_worker`` tasks is replaced at once and reaped later: the pool does
    not wait for its interpreter to exit (a second or more each), and closing the pool reaps every one."""
    from engine_helpers import pid_of_a_slow_leaver
    from liftpy.runtime.pool import WorkerPool

    pool = WorkerPool(1, default_timeout_s=60, max_tasks_per_worker=1)
    try:
        pids = [pid for ok, pid in pool.run_all(pid_of_a_slow_leaver, range(3))]
        assert len(set(pids)) == 3
        leaving = [p.pid for p, _ in pool._retired]
        assert leaving and all(_alive(pid) for pid in leaving)  # still exiting: nobody waited for them
    finally:
        pool.close()
    assert not pool._retired and not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive: it left, nobody reaped it
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
