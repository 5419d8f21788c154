"""The exploration engine: many generated implementations of one operator on one device, each validated
and measured, kept in the results store, with the time/memory Pareto frontier and reference points.

The engine knows nothing of convolutions or matrix products: an operator (``liftpy.tuning.operator``)
gives the program, the sizes, the inputs, the check of an output and the references; the engine derives
the variants (cached on disk, ``liftpy.tuning.cache``), asks a search strategy (``liftpy.tuning.search``:
uniform sampling, or ranking by the cost model with online learning) for points in batches, evaluates
each point in isolated worker processes with a time limit (code generation in ``jobs`` parallel
processes, measurement in one that owns the device), and stores every outcome as soon as it is known.
An interrupted run resumes: finished points are not run again, and a model search learns from them
first.  Nor are the points another exploration of the same problem finished after this one read the store:
each batch is checked against the store before it is handed out, and a point the other finished while this
one measured it keeps the other's result (both count as resumed).  Two runs that measure one point at the
same moment still both measure it: the store knows finished points, not who is measuring what.

A model search that ends (its samples or its budget reached) saves the batch its strategy proposes next in
the store (``next_batches``), with the kernels of its points generated in the run's workers and kept in the
disk cache, and the first of them built on the device (the OpenCL compiler's output then waits in
pyopencl's binary cache: building a convolution tiling took 2 s of the 3.3 s a resumed search of VGG-16
layer 12 needed to its first run on the H100).  Rebuilding the strategy from the store (observing the stored points, screening, fitting the
learned model, ranking) took a resumed SGEMM search 2.4 s on an H100 host before its first point could
even be generated; a resumed run whose saved batch still matches measures that batch at once, its kernels
straight to the measuring worker, and rebuilds the strategy meanwhile (in a thread, or after the batch
where the kernels run on this host's CPUs).  The search's behaviour is unchanged: the batch is exactly what
the uninterrupted run would have measured next (with a smaller batch size, its first points).  It is used
only for the same device, problem, variants, rule filter, seed and device profile, and only while the store
holds exactly the finished points the saving strategy knew (``store.points_state``): a point measured since
by another exploration, or measured again, makes it stale, and it is deleted.

Python API (for notebooks): ``explore_operator`` (any operator) and ``explore_program`` (a program and its
sizes) return an ``Exploration`` with the records, the frontier and the references (``conv.explore_layer``
is the convolution's); ``frontier``, ``best`` and ``plot`` read a store, for an operator or a problem key.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..version import __version__
from ..errors import TuningError
from ..results.pareto import format_frontier, pareto_front
from .progress import Progress
from ..search import UniformSearch
from ..search.spaces import Spaces
from ..search.strategy import Strategy
from ..search.variants import VariantIds, rule_list, select, variant_text
from ..runtime.evaluate import STRAGGLER_S, compile_pool, evaluate_points, measure_pool
from ..runtime.points import compile_point, point_payload, prebuild_point, reference_result
from ..runtime.pool import OnDemandPool, Task
from ..runtime.process import uncached_imports
from ..results.store import REFERENCE_PREFIX, BatchKey, Key, Record, Status, Store, canonical_json, points_state



@dataclass(frozen=True)
class Exploration:
    operator: object
    device: str
    records: list  # every record of this problem and device, references included
    frontier: list
    references: list
    ran: int
    resumed: int
    failed: int
    search: str = "uniform"
    seconds: float = 0.0
    lost_workers: int = 0  # device workers that died during the run (with workers on Ray)
    requeued: int = 0  # points given to another device worker because theirs died
    first_proposal_s: float | None = None  # from the call to the first points chosen (a resume's own overhead)
    first_result_s: float | None = None  # from the call to the first new point's outcome
    measure_ready_s: float | None = None  # from the call to the measuring worker's start-up finished
    measure_start_steps: dict | None = None  # seconds of that start-up's steps (``WorkerPool.start_steps``)
    from_saved_batch: int = 0  # points of the first batch taken from the batch the run before saved
    prebuilt: int = 0  # points of the batch this run saved that it built on the device (``_save_plan``)
    exhausted: bool = False  # the search had no valid point left to propose before it ran all it was asked
    over_budget: bool = False  # the budget ran out before all the points asked for ran
    roofline_gb_s: float | None = None  # the device's memory bandwidth, where a probe measured it

    def table(self) -> str:
        return format_frontier(self.frontier, self.references, flops=self.operator.flops(),
                               min_bytes=self.operator.min_bytes(), roofline_gb_s=self.roofline_gb_s)

    @property
    def best(self):
        ok = [r for r in self.records if r.measured and not r.is_reference]
        return min(ok, key=lambda r: r.time_ms) if ok else None


def explore_program(program, sizes: dict, samples: int = 100, reference=None, **kw) -> Exploration:
    """Explore any high-level program (a ``Program``, a ``.lift`` file or ``module:function``) at the given
    sizes; ``reference``: a module-level numpy function of the inputs giving the expected output, where
    the interpreter would be too slow."""
    from .operator import ProgramOperator, load_program

    if not hasattr(program, "body"):
        program = load_program(str(program))
    return explore_operator(ProgramOperator.of(program, sizes, reference=reference), samples=samples, **kw)


def explore_operator(
    op,
    samples: int = 100,
    db: str | Path = "results.sqlite",
    device=None,
    profile_path: str | Path | None = None,
    seed: int = 0,
    timeout_s: float = 300.0,
    repeat: int = 5,
    warmup: int = 1,
    references: bool = True,
    progress: bool = True,
    stream=None,
    rules: Sequence[str] = (),
    search: type[Strategy] = UniformSearch,
    jobs: int | None = None,
    budget_s: float | None = None,
    abort_factor: float | None = None,
    straggler_s: float | None = STRAGGLER_S,
    batch: int | None = None,
    variants: Sequence | None = None,
    workers=None,
    baselines: Sequence[str] = (),
) -> Exploration:
    """Explore an operator on a device, resuming from the store ``db``.

    ``samples``: points of this problem the store should hold when done (resumed ones count); ``repeat``:
    timed runs per point (their median; on a CPU device the fastest of at least 40: ``liftpy.host.timing``);
    ``search``: ``uniform`` or ``model``; ``jobs``: code-generation processes (measurement is always one
    process; by default ``default_jobs``); ``budget_s``: start no point after this many seconds (the one
    measuring then finishes); ``abort_factor``: stop a point after one run slower than this many times the
    best so far (below 1 that stops points faster than the best too: the command line refuses it); ``straggler_s``: stop a compile step still running this many seconds after the rest of
    its batch went to the device (``liftpy.tuning.evaluate``; None waits for it); ``rules``: only the variants whose derivation
    uses every one of these rules; ``workers``: spread the points over device workers on Ray (``local:N``,
    ``ray://HOST:PORT``, ``ray`` or a ``cluster.Cluster``; see ``liftpy.tuning.cluster``),
    ``jobs`` code-generation processes each; ``baselines``: Python callables to time on the same inputs
    (``module:function``, see ``liftpy.tuning.baseline``), kept in the store as references.

    A model search resumes with the batch the run before saved (module docstring): what that run would
    have measured next, so resuming changes nothing but the time to the first run (``first_proposal_s``
    then measures only loading the batch; ``from_saved_batch`` says how many of its points were used)."""
    from ..host.device import device_info
    from ..host.profile import resolve_profile
    from ..results.cache import SCREEN_CODE, cached_variants, memo
    from .baseline import baseline_reference
    from .diagnose import no_configuration
    from ..results.store import config_key
    from ..ir.typecheck import check_sizes

    if not (isinstance(search, type) and issubclass(search, Strategy)):
        raise TuningError(f"search {search!r} is not a search strategy: pass one, such as liftpy.search.ModelSearch "
                          "or UniformSearch")
    rules = rule_list(rules)
    if samples < 1:
        raise TuningError(f"samples must be a positive number of points, got {samples}")
    if abort_factor is not None and not abort_factor > 0:
        raise TuningError(f"the abort factor must be positive, got {abort_factor:g}")
    if workers is not None and device is not None:
        raise TuningError("choose the device or the device workers, not both: with workers, each measures on "
                          "the device Ray assigns it")
    # An ill-typed program, or sizes it cannot take (``zip`` of lengths K and N with K != N), has no variant
    # with a valid configuration either; said here, with the primitive and where, instead of that.
    check_sizes(op.program(), op.sizes())
    extra_references = tuple(baseline_reference(spec, op) for spec in baselines)  # a bad spec is refused now
    Store(db).close()  # a path that cannot be a store is refused now, not after the variants are derived
    stream = stream or sys.stdout
    t0 = time.time()
    search.warm_up()
    # The pools close however the exploration ends (an error, Ctrl-C).  Their workers start first, so
    # that their imports and the device context overlap with loading and screening the variants (a
    # resumed run then reaches its first point sooner).
    with contextlib.ExitStack() as pools:
        if workers is not None:
            from ..runtime.cluster import Cluster

            jobs = 1 if jobs is None else jobs
            cluster = workers if isinstance(workers, Cluster) else pools.enter_context(Cluster(workers, jobs, timeout_s))
            device_key, device_name = cluster.device_key, cluster.device_name
            profile = cluster.profile(profile_path)
            limits = profile.limits()
            width = len(cluster.slots)
            compiling = proposing = None  # the cluster's workers compile; this process proposes alone

            def run_points(chosen, abort_ms, generated):
                # Points are handed out one by one, so a budget stops the exploration between points.
                return cluster.evaluate(op, variants, chosen, seed, repeat, warmup, limits, abort_ms,
                                        None if budget_s is None else t0 + budget_s)
        else:
            # The measuring worker starts first, before this process even lists the devices, and this
            # process makes no device context (the worker runs every kernel), with no more compile workers
            # than a batch has points: the worker's start-up (a GPU context, the reference) is what a resumed
            # search of one point waits for, and fifteen idle compile workers importing beside it took seconds
            # from it on a 16-core host.  The worker resolves ``device`` as this process does, to the same index.
            measuring = pools.enter_context(measure_pool(getattr(device, "index", device), timeout_s, (op, seed)))
            info = device_info(device)
            jobs = default_jobs(info) if jobs is None else jobs
            compiling = pools.enter_context(compile_pool(min(jobs, batch or jobs), timeout_s)) if jobs > 1 else None
            proposing = compiling
            cores = _cores()
            if compiling is None and search.proposes_with_workers and info.on_host_cpu and cores > 1:
                # No compile workers beside kernels timed on this host's CPUs; but while the strategy
                # proposes, nothing is timed, and a fresh problem's screening is most of such a search's time.
                proposing = pools.enter_context(OnDemandPool(lambda: compile_pool(cores, timeout_s), cores,
                                                             PROPOSAL_POOL_LEAST))
            device_key, device_name, width = info.key, info.name, 1
            profile = resolve_profile(info.index, profile_path)
            limits = profile.limits()

            # The compile workers build the kernels too, into the OpenCL compiler's caches, where that does not
            # take this host's CPUs from the kernels being timed.
            build_ahead = not info.on_host_cpu

            def run_points(chosen, abort_ms, generated):
                # Workers get the device the driver resolved (by index), so both read the same limits.
                for point, outcome in evaluate_points(op, variants, chosen, compiling, measuring, info.index, seed,
                                                      repeat, warmup, limits, abort_ms, generated, build_ahead,
                                                      None if budget_s is None else t0 + budget_s, straggler_s):
                    yield point, outcome, None
        # Shown at once: deriving the variants and screening their spaces can take a minute before any point.
        bar = Progress(samples, label=op.name, stream=stream if progress else _Null())
        bar.phase("deriving the variants")
        if variants is not None:
            origin, variants = select(tuple(variants), rules)
            keys = vkey = None
        else:
            # The rule filter's result is cached too: loading the few selected variants is much faster than
            # loading thousands and filtering them again.  (origin: index in the derivation order.)
            vkey = op.variant_key()  # prints the program: once, not per variant
            origin, variants = memo("selected", f"{vkey}|{rules!r}", lambda: select(cached_variants(op), rules))
            keys = [f"{vkey}|{k}" for k in origin]
        ids = VariantIds(variants, keys)
        position = {k: i for i, k in enumerate(origin)}
        problem = op.problem
        if progress:
            where = device_name if workers is None else f"{width} x {device_name}"
            bar.note(f"{op.name} ({problem}) on {where}: {len(variants)} variants from the rewrite rules "
                     f"({time.time() - t0:.1f} s); {search.name} search for {samples} points")
            slow = uncached_imports()
            if slow:
                bar.note(f"note: Python keeps no bytecode for {', '.join(slow)} here (PYTHONDONTWRITEBYTECODE), so each "
                         "worker process compiles them from source as it starts (seconds each); set PYTHONPYCACHEPREFIX "
                         "to a writable folder and unset PYTHONDONTWRITEBYTECODE once to keep it")
        bar.phase(search.phase)
        batch = batch or search.batch_size(samples, jobs, width)
        with Store(db) as store:
            if extra_references:  # first: a baseline that computes something else is refused before any point runs
                _measure_references(store, op, device_key, seed, None, extra_references)
            done = [r for r in store.records(device=device_key, layer=problem) if not r.is_reference and r.status.finished]
            taken = set()
            observed = []  # (variant, config, time or None) of the stored points, for the strategy
            best_ms = best_bytes = None
            for r in done:
                # Records name their variant by id and by index in the (deterministic, cached) derivation order;
                # an id is checked before the record counts, so records of other rule versions are ignored.
                i = position.get(r.metrics.get("variant_index", -1))
                if i is None or ids[i] != r.variant:
                    continue
                taken.add((i, config_key(r.config)))
                observed.append((i, r.config, r.time_ms if r.status is Status.OK else None))
                if r.status is Status.OK and r.time_ms is not None and (best_ms is None or r.time_ms < best_ms):
                    best_ms, best_bytes = r.time_ms, r.bytes
            known = {(r.variant, canonical_json(r.config)): r for r in done}  # what the strategy learns from
            plan_key = None
            if search.saves_next_batch and vkey is not None:
                plan_key = BatchKey.of(device_key, problem, search.name, _plan_settings(vkey, rules, seed, profile))
            plan = None
            if plan_key is not None and samples > len(taken):
                plan = _saved_plan(store, plan_key, points_state(known.values()), position, ids, taken)

            def rebuild(in_thread: bool):
                """The strategy, told everything the store holds (``observed`` and other problems)."""
                spaces = Spaces(variants, op.sizes(), profile, seed, keys, program=op.program())
                strategy = search(spaces, seed)
                for i, config, time_ms in observed:
                    strategy.observe(i, config, time_ms)
                # A thread needs its own connection (SQLite's are not shared between threads).
                with (Store(db) if in_thread else contextlib.nullcontext(store)) as own:
                    others = _use_other_problems(own, strategy, op, device_key, position, ids, jobs)
                if in_thread:
                    strategy.prepare(batch)
                return strategy, others

            if plan:
                # The batch the last run saved is what its strategy would have proposed next: measured at once,
                # while this run rebuilds the strategy from the store in a thread (the main thread mostly
                # waits for the worker processes meanwhile).  Not beside kernels that run on this host's
                # CPUs: the rebuilding would slow them, and their measured times.
                beside = workers is not None or not info.on_host_cpu
                building = _Later(lambda: rebuild(beside), thread=beside)
                strategy = others = None
            else:
                building = None
                strategy, others = rebuild(False)
                _print_others(others, op, search.name, db, progress, bar.note)
            if search.plans_ahead:
                # The same seed names the same points: those already in the store are skipped, not replaced.
                # The plan is kept on disk: drawing it solves the space of every variant it draws from (a
                # VGG-16 layer's 40 tiled variants: 7 s on this project's 2-core machine), which a resumed run
                # repeated before its first point.
                def draw():
                    return strategy.propose(samples, set())

                planned = draw() if vkey is None else memo(
                    "plans", f"{vkey}|{rules!r}|{search.name}|{samples}|{strategy.spaces.problem_key()}", draw, SCREEN_CODE)
                resumed = sum(1 for i, c in planned if (i, config_key(c)) in taken)
                queue = [(i, c) for i, c in planned if (i, config_key(c)) not in taken]
                drawn_all = len(planned) < samples  # the space holds fewer valid points than were asked for
            else:
                resumed = min(len(taken), samples)
                queue = None
                drawn_all = False
            remaining = len(queue) if queue is not None else samples - resumed
            if remaining <= 0 and not taken and search.plans_ahead:
                raise no_configuration(op, variants, ids, profile, device_name)
            bar.start(resumed + remaining, resumed, (best_ms, best_bytes) if best_ms is not None else None)
            ran = failed = 0
            first_proposal_s = first_result_s = None
            unseen = []  # measured points the strategy has not been told of yet (told before it proposes)

            def ready_strategy():
                nonlocal strategy, others, building
                if building is not None:
                    strategy, others = building.result()
                    building = None
                    _print_others(others, op, search.name, db, progress, bar.note)
                for point in unseen:
                    strategy.observe(*point)
                unseen.clear()
                if proposing is not None:  # idle while the strategy proposes: its candidates are lowered there
                    strategy.spaces.use_workers(proposing.run_all, proposing.width)
                return strategy

            def abort_ms():
                # Read as each point is handed to the device, not once a batch: a uniform search is one batch,
                # and its points were never aborted.
                return abort_factor * best_ms if (abort_factor and best_ms) else None

            exhausted, over_budget = drawn_all, False
            generated = {}
            from_plan = prebuilt = 0
            while remaining > 0:
                if budget_s is not None and time.time() - t0 > budget_s:
                    over_budget = True
                    break
                want = min(batch, remaining)
                if plan:
                    chosen, plan = plan[:want], None
                    from_plan = len(chosen)
                    store.drop_batch(plan_key)  # used: the end of this run saves the next one
                    generated = _generated(op, ids, chosen, limits) if workers is None else {}
                elif queue is not None:
                    chosen, queue = queue[:want], queue[want:]
                else:
                    chosen = ready_strategy().propose(want, taken)
                if not chosen:
                    if not taken:
                        raise no_configuration(op, variants, ids, profile, device_name)
                    exhausted = True
                    break
                if first_proposal_s is None:
                    first_proposal_s = time.time() - t0
                for i, config in chosen:
                    taken.add((i, config_key(config)))
                # Another exploration of this problem may have finished some of these points since this one read
                # the store (or may finish them while this one measures them): its results are kept and counted
                # as resumed, not measured again nor replaced.
                chosen, elsewhere, stale = _finished_elsewhere(store, chosen, device_key, problem, ids, origin)

                def outcomes():
                    for i, record in elsewhere:
                        yield i, record, None
                    for (i, config), outcome, where in (run_points(chosen, abort_ms, generated) if chosen else ()):
                        record = _record(op, variants[i], ids[i], config, outcome, device_key, profile, origin[i], where)
                        if store.put(record, replace=(i, config_key(config)) in stale):
                            yield i, record, outcome
                        else:
                            yield i, store.get(record.key) or record, None

                for i, record, outcome in outcomes():
                    known[(record.variant, canonical_json(record.config))] = record
                    if first_result_s is None and outcome is not None:
                        first_result_s = time.time() - t0
                    unseen.append((i, record.config, record.time_ms if record.status is Status.OK else None))
                    if record.status is Status.OK and record.time_ms is not None:
                        best_ms = record.time_ms if best_ms is None else min(best_ms, record.time_ms)
                    remaining -= 1
                    if outcome is None:
                        resumed += 1
                        bar.resume()
                        continue
                    ran += 1
                    failed += not outcome.ok
                    bar.update(outcome.status, record.time_ms, record.bytes)
                generated = {}
            bar.close()
            if plan_key is not None and ran and not exhausted:
                # Kernels are generated ahead in this run's workers (the measuring one without compile workers).
                pool = None if workers is not None or over_budget else (compiling if compiling is not None else measuring)
                if progress:  # the next proposal may screen more variants and lower its candidates: seconds
                    print(f"{op.name}: choosing the batch a resumed run starts with"
                          f"{' and generating its kernels' if pool is not None else ''} (kept in {Path(db).name})",
                          file=stream, flush=True)
                prebuilt = _save_plan(store, plan_key, points_state(known.values()), ready_strategy().propose(batch, taken),
                                      op, variants, ids, origin, limits, pool, Task,
                                      measuring if pool is not None else None, None if workers is not None else info.index)
            if references:
                _measure_references(store, op, device_key, seed, cluster.references if workers is not None else None)

            records = store.records(device=device_key, layer=problem)
        measured = [r for r in records if r.measured and not r.is_reference]
        refs = [r for r in records if r.is_reference and r.measured]
        lost, requeued = (cluster.lost, cluster.requeued) if workers is not None else (0, 0)
        ready = measuring.ready_at if workers is None else []
        steps = measuring.start_steps if workers is None else []
        return Exploration(op, device_key, records, pareto_front(measured), refs, ran, resumed, failed, search.name,
                           time.time() - t0, lost, requeued, first_proposal_s, first_result_s,
                           min(ready) - t0 if ready else None, steps[0] if steps else None, from_plan, prebuilt,
                           exhausted, over_budget, measured_bandwidth(profile))


def measured_bandwidth(profile) -> float | None:
    """The device's memory bandwidth in GB/s where a probe measured it (``liftpy probe``), else None: a
    roofline from a datasheet or a guess would make its fraction look exact when it is not."""
    entry = (profile.measured or {}).get("global_bandwidth_gbs") if profile is not None else None
    value = entry.get("value") if isinstance(entry, dict) else entry
    return float(value) if value else None


def _finished_elsewhere(store: Store, chosen: list, device_key: str, problem: str, ids, origin) -> tuple[list, list, set]:
    """(the chosen points still to run, (index, record) of those another run finished meanwhile, the points
    whose stored row is of another derivation order and is replaced as before): one query per point.  A
    finished row counts as this run's records do when it read the store (same variant id and index)."""
    from ..results.store import config_key

    run, finished, stale = [], [], set()
    for i, config in chosen:
        record = store.get(Key.of(device_key, problem, ids[i], config))
        if record is not None and record.status.finished:
            if record.metrics.get("variant_index") == origin[i]:
                finished.append((i, record))
                continue
            stale.add((i, config_key(config)))
        run.append((i, config))
    return run, finished, stale


def default_jobs(info) -> int:
    """The code-generation processes of an exploration that names none: on a GPU one per core of this
    machine but one, which the measuring worker and this process share (the searches of
    ``benchmarks/results`` ran with 15 on the H100's 16-core host); one for a device whose kernels run on
    this host's CPUs (``DeviceInfo.on_host_cpu``), where more would take cores from the kernels being timed."""
    return 1 if info.on_host_cpu else max(1, _cores() - 1)


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# Calls a model search on a CPU device hands its proposal workers at once before they are started
# (``worker.OnDemandPool``): screening a variant takes half a second on this project's 2-core machine and
# starting a worker some 3 s of a core, so a proposal screening fewer variants than this does it alone.
PROPOSAL_POOL_LEAST = 16


def _print_others(others: tuple[int, int], op, search: str, db, progress: bool, say) -> None:
    count, points = others
    if count and progress:
        say(f"{op.name}: the {search} search uses {points} points of {count} other problem(s) of these "
            f"variants in {Path(db).name} (their fastest as candidates, the {TRANSFER_POINTS} most recent to train "
            "its model)")


class _Later:
    """A function's result when asked for: computed meanwhile in a daemon thread (``thread``) or then;
    ``result`` raises what the function raised."""

    def __init__(self, fn, thread: bool = True):
        import threading

        self._fn, self._value, self._error = fn, None, None
        self._thread = threading.Thread(target=self._run, name="liftpy-rebuild-search", daemon=True) if thread else None
        if self._thread is not None:
            self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as e:  # noqa: BLE001 - handed to the thread that waits for the result
            self._error = e

    def result(self):
        if self._thread is None:
            return self._fn()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


# -- the batch a model search saves for the run that resumes it --------------------------------------------


STAGES_CODE = ("ir", "codegen", "views")  # what the generated kernels of a saved batch depend on


def _plan_settings(vkey: str, rules, seed: int, profile) -> dict:
    """What decides a model search's proposals besides the store: the variants (the operator's program
    and the rule filter), the seed and the device profile (its limits and the analytical model's machine)."""
    digest = lambda text: hashlib.sha1(text.encode()).hexdigest()  # noqa: E731
    return {"variants": digest(vkey), "rules": list(rules), "seed": seed,
            "profile": digest(canonical_json(profile.record()))}


def _saved_plan(store: Store, key: BatchKey, state: str, position: dict, ids, taken: set) -> list | None:
    """The points of the batch saved under ``key``, if it was saved for this state of the store and its
    points still name these variants and are not measured; a stale batch is deleted."""
    saved = store.saved_batch(key)
    if saved is None:
        return None
    points = _plan_points(saved, state, position, ids, taken)
    if points is None:
        store.drop_batch(key)
    return points


def _plan_points(saved: tuple[str, list], state: str, position: dict, ids, taken: set) -> list | None:
    from ..results.store import config_key

    saved_state, entries = saved
    if saved_state != state or not entries:
        return None
    points = []
    for entry in entries:
        i = position.get(entry.get("index"))
        if i is None or ids[i] != entry.get("variant") or not isinstance(entry.get("config"), dict):
            return None
        if (i, config_key(entry["config"])) in taken:
            return None
        points.append((i, entry["config"]))
    return points


def _stages_key(op, vid: str, config: dict, limits) -> str:
    """The disk-cache key of a point's generated kernels: everything ``compile_point`` reads (the
    variant's program and placements through its id, the sizes, the configuration, the device limits)."""
    return f"{vid}|{canonical_json(op.sizes())}|{canonical_json(config)}|{limits!r}"


def _generated(op, ids, chosen, limits) -> dict:
    """(stages, codegen seconds) of the chosen points whose kernels were generated when their batch was
    saved, by (variant, configuration key)."""
    from ..results.cache import recall
    from ..results.store import config_key

    out = {}
    for i, config in chosen:
        found = recall("stages", _stages_key(op, ids[i], config, limits), STAGES_CODE)
        if found is not None:
            out[(i, config_key(config))] = found
    return out


PREBUILD_POINTS = 1  # points of a saved batch built on the device when it is saved (``_save_plan``)


def _save_plan(store: Store, key: BatchKey, state: str, chosen: list, op, variants, ids, origin, limits, pool,
               Task, measuring=None, device=None) -> int:
    """Save the batch the strategy proposes next (``chosen``) for the store's ``state``; with a worker
    ``pool``, generate its kernels now and keep them in the disk cache, so that the run that resumes
    builds them on the device at once; with the ``measuring`` worker, build the first ``PREBUILD_POINTS``
    of them on ``device`` too, so that the resumed run's first build finds the compiler's output in
    pyopencl's binary cache.  Only the first: each build costs this run as much as it saves the next
    (2 s for a convolution tiling on the H100), and the resumed run builds the others while it measures.
    Returns how many points were built."""
    if not chosen:
        store.drop_batch(key)
        return 0
    generated = _generate_ahead(pool, op, variants, ids, chosen, limits, Task) if pool is not None else {}
    store.save_batch(key, state, [{"index": origin[i], "variant": ids[i], "config": dict(c)} for i, c in chosen])
    if measuring is None:
        return 0
    from ..results.store import config_key

    tasks = []
    for i, config in chosen[:PREBUILD_POINTS]:
        stages = generated.get((i, config_key(config)))
        if stages is not None:
            v = variants[i]
            payload = point_payload(op, v.program, v.placement_map, config, device, 0, 1, 0, limits, None)
            tasks.append(Task(prebuild_point, ({**payload, "stages": stages},), tag=(i, config)))
    # A point that fails to build is recorded as such when the resumed run measures it; nothing to do here.
    return sum(outcome.ok for _, outcome in measuring.imap_unordered(tasks))


def _generate_ahead(pool, op, variants, ids, chosen, limits, Task) -> dict:
    """Generate the kernels of ``chosen`` in ``pool`` and keep them in the disk cache; returns their stages
    by (variant, ``config_key``), as ``_generated`` finds them again."""
    from ..results.cache import cache_dir, remember
    from ..results.store import config_key

    if cache_dir() is None:
        return {}  # nowhere to keep them
    tasks = []
    for i, config in chosen:
        v = variants[i]
        # Only what code generation reads; the measuring settings come from the run that uses the kernels.
        payload = point_payload(op, v.program, v.placement_map, config, None, 0, 1, 0, limits, None)
        tasks.append(Task(compile_point, (payload,), tag=(i, config)))
    out: dict = {}
    for task, outcome in pool.imap_unordered(tasks):
        if outcome.ok:
            i, config = task.tag
            remember("stages", _stages_key(op, ids[i], config, limits),
                     (outcome.result["stages"], outcome.result["codegen_s"]), STAGES_CODE)
            out[(i, config_key(config))] = outcome.result["stages"]
    return out


HINTS_PER_PROBLEM = 3
# Measurements of other problems that train a model search's learned correction: offline on the H100 stores of
# VGG-16 layers 12, 10, 5 and 24 (each ranked by its own 50 points and the other layers'), held-out Kendall tau
# rose with how many (the most recent 256: 0.74-0.82; 1,024: 0.79-0.86; ``liftpy.model.learned``).  Each costs
# an analytical model at its own sizes the first time (0.1-0.3 s of code generation for a convolution tiling;
# 1,024 points of VGG-16 layers took 164 s in one process of a 2-core machine), made in the search's ``jobs``
# processes (``Spaces.prefetch_at``), then a read of its prediction from the disk cache (``Spaces.predict_at``:
# the same 1,024 in 0.4 s).
TRANSFER_POINTS = 1024


def _use_other_problems(store, strategy, op, device_key: str, position: dict, ids, jobs: int = 1) -> tuple[int, int]:
    """What the store measured on this device for other problems of the same variants (the other layers of a
    network, other sizes of a matrix product) informs the strategy before its first proposal, as TVM's
    transfer learning and vendors' heuristics do: the fastest points of each problem are offered as
    candidates (``hint``; a tiling fast on one layer is often fast, or one move away from fast, on the
    next), and up to ``TRANSFER_POINTS`` of the most recent measurements train its learned model
    (``learn_elsewhere``: which variants' code the formula misjudges carries over between sizes; their
    models made first in ``jobs`` processes where the disk cache lacks them).  Returns how many other
    problems and points there were."""
    hint, learn = getattr(strategy, "hint", None), getattr(strategy, "learn_elsewhere", None)
    if hint is None and learn is None:
        return 0, 0
    problem = op.problem
    by_problem: dict[str, list] = {}
    for r in store.records(device=device_key):
        if r.layer == problem or r.is_reference or r.status is not Status.OK or r.time_ms is None:
            continue
        i = position.get(r.metrics.get("variant_index", -1))
        if i is not None and ids[i] == r.variant:
            by_problem.setdefault(r.layer, []).append((i, r))
    sizes = {p: op.problem_sizes(p) for p in by_problem}
    if hint is not None:
        for points in by_problem.values():
            for i, r in sorted(points, key=lambda p: p[1].time_ms)[:HINTS_PER_PROBLEM]:
                hint(i, r.config)
    if learn is not None:
        recent = sorted(((i, r) for p, points in by_problem.items() if sizes[p] for i, r in points),
                        key=lambda p: p[1].finished_at or 0)[-TRANSFER_POINTS:]
        prefetch = getattr(strategy, "prefetch_elsewhere", None)
        if prefetch is not None and jobs > 1:
            prefetch([(i, sizes[r.layer], r.config) for i, r in recent], jobs)
        for i, r in recent:
            learn(i, r.config, r.time_ms, sizes[r.layer])
    return len(by_problem), sum(len(points) for points in by_problem.values())


def _record(op, v, vid: str, config: dict, outcome, device_key: str, profile, index: int, where=None) -> Record:
    """``where``: which device worker measured the point (``ran_on``, ``worker``), with device workers."""
    res = outcome.result if outcome.ok else {}
    extra = dict(where or {})
    if not outcome.ok and outcome.status is Status.ABORTED:
        extra["first_run_ms"] = _aborted_time(outcome.message)
    return Record(
        device=device_key,
        layer=op.problem,
        variant=vid,
        config=config,
        status=outcome.status,
        time_ms=res.get("time_ms"),
        bytes=res.get("bytes"),
        layer_name=op.name,
        source_hash=res.get("source_hash"),
        liftpy_version=__version__,
        profile=profile.record(),
        metrics={
            **{k: v_ for k, v_ in res.items() if k not in ("time_ms", "bytes", "source_hash")},
            **extra,
            "rules": [str(s) for s in v.trace],
            "program": variant_text(v),
            "placements": v.placement_map,
            "params": [str(s) for s in v.params],
            "variant_index": index,
        },
        error=None if outcome.ok else (outcome.message or str(outcome.status)),
    )


def _aborted_time(message: str | None) -> float | None:
    import re

    m = re.search(r"took ([0-9.eE+-]+) ms", message or "")
    return float(m.group(1)) if m else None


class _Null:
    def write(self, *_):
        pass

    def flush(self):
        pass

    def isatty(self):
        return False


def _measure_references(store: Store, op, device_key: str, seed: int, remote=None, refs=None) -> None:
    """The operator's references (or ``refs``), measured once per problem and device (kept in the store like
    every point); ``remote(op, seed)``: measure them where the device workers are, giving plain dicts."""
    refs = op.references() if refs is None else refs
    if all(store.done(Key.of(device_key, op.problem, REFERENCE_PREFIX + ref.name, {})) for ref in refs):
        return
    if remote is not None:
        results = remote(op, seed)
    else:
        results = [reference_result(ref.run(seed)) for ref in refs]
    for result in results:
        key = Key.of(device_key, op.problem, REFERENCE_PREFIX + result["name"], {})
        if store.done(key):
            continue
        now = time.time()
        store.put(Record(
            device=device_key, layer=op.problem, variant=REFERENCE_PREFIX + result["name"], config={}, status=Status.OK,
            time_ms=result["time_ms"], bytes=result["bytes"], layer_name=op.name, liftpy_version=__version__,
            metrics={"breakdown": result["breakdown"], "times_ms": result["times_ms"], "ran_on": result["device"]},
            started_at=now, finished_at=now,
        ))
