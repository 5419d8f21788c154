"""The exploration loop: many generated implementations of one operator on one device, each validated and
measured, kept in the results store, with the time/memory Pareto frontier and reference points.

The engine knows nothing of convolutions or matrix products: an operator (``liftpy.explore.operator``)
gives the program, the sizes, the inputs, the check of an output and the references; the engine derives
the variants (cached on disk, ``liftpy.results.cache``), asks a search strategy (``liftpy.search``:
uniform sampling, or ranking by the cost model with online learning) for points in batches, evaluates
each point in isolated worker processes with a time limit (code generation in ``jobs`` parallel
processes, measurement in one that owns the device), and stores every outcome as soon as it is known.
An interrupted run resumes: finished points are not run again, and a model search learns from them
first.  Nor are the points another exploration of the same problem finished after this one read the store:
each batch is checked against the store before it is handed out, and a point the other finished while this
one measured it keeps the other's result (both count as resumed).  Two runs that measure one point at the
same moment still both measure it: the store knows finished points, not who is measuring what.

A run's steps, each a method of ``_Run``: derive the variants (``_derive``), read what the store holds
(``_read_store``), find the batch the run before saved (``resume``), make the strategy (``_rebuild``; told of
other problems by ``transfer``), plan the points (``_plan``), then measure batch after batch (``_measure``:
propose, generate and measure on ``devices``, record) and save the next batch for the run that resumes.

Python API (for notebooks): ``explore_operator`` (any operator, ``ExplorationOptions`` or their keywords)
and ``explore_program`` (a program and its sizes) return an ``Exploration`` with the records, the frontier
and the references (``conv.explore_layer`` is the convolution's); ``liftpy.results`` reads a store again.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..ir.typecheck import check_sizes
from ..results.cache import SCREEN_CODE, cached_variants, memo
from ..results.pareto import pareto_front
from ..results.store import BatchKey, Status, Store, canonical_json, config_key, points_state
from ..runtime.process import uncached_imports
from ..search.spaces import Spaces
from ..search.variants import VariantIds, select
from .baseline import baseline_reference
from .devices import open_devices
from .diagnose import no_configuration
from .operator import ProgramOperator, load_program
from .options import Exploration, ExplorationOptions
from .progress import Progress
from .records import finished_elsewhere, measure_references, point_record
from .resume import Later, plan_settings, save_plan, saved_plan
from .transfer import print_others, use_other_problems


def explore_operator(op, options: ExplorationOptions | None = None, **changes) -> Exploration:
    """Explore an operator on a device, resuming from the store ``options.db``; keywords are settings of
    ``ExplorationOptions`` (``explore_operator(op, samples=50, search=ModelSearch)``), taking the place of
    those of ``options``.

    A model search resumes with the batch the run before saved (``liftpy.explore.resume``): what that run
    would have measured next, so resuming changes nothing but the time to the first run
    (``first_proposal_s`` then measures only loading the batch; ``from_saved_batch`` says how many of its
    points were used)."""
    options = replace(options or ExplorationOptions(), **changes) if changes else options or ExplorationOptions()
    # An ill-typed program, or sizes it cannot take (``zip`` of lengths K and N with K != N), has no variant
    # with a valid configuration either; said here, with the primitive and where, instead of that.
    check_sizes(op.program(), op.sizes())
    baselines = tuple(baseline_reference(spec, op) for spec in options.baselines)  # a bad spec is refused now
    Store(options.db).close()  # a path that cannot be a store is refused now, not after the variants are derived
    t0 = time.time()
    options.search.warm_up()
    # The pools close however the exploration ends (an error, Ctrl-C).
    with contextlib.ExitStack() as stack:
        devices = open_devices(stack, op, options)
        return _Run(op, options, devices, baselines, t0).explore()


def explore_program(program, sizes: dict, options: ExplorationOptions | None = None, *, reference=None,
                    **changes) -> Exploration:
    """Explore any high-level program (a ``Program``, a ``.lift`` file or ``module:function``) at the given
    sizes (``explore_operator``'s options and keywords); ``reference``: a module-level numpy function of the
    inputs giving the expected output, where the interpreter would be too slow."""
    if not hasattr(program, "body"):
        program = load_program(str(program))
    return explore_operator(ProgramOperator.of(program, sizes, reference=reference), options, **changes)


def measured_bandwidth(profile) -> float | None:
    """The device's memory bandwidth in GB/s where a probe measured it (``liftpy probe``), else None: a
    roofline from a datasheet or a guess would make its fraction look exact when it is not."""
    entry = (profile.measured or {}).get("global_bandwidth_gbs") if profile is not None else None
    value = entry.get("value") if isinstance(entry, dict) else entry
    return float(value) if value else None


@dataclass(frozen=True)
class _Variants:
    """The variants an exploration explores, in the order of their derivation (``origin``: the index of each
    there; ``position``: the inverse), with their ids and their stable keys for the disk cache (``keys``:
    None for variants the caller gave, whose derivation is not the operator's, ``vkey``)."""

    variants: list
    origin: list
    keys: list | None
    vkey: str | None
    ids: VariantIds
    position: dict


def _derive(op, o: ExplorationOptions) -> _Variants:
    if o.variants is not None:
        origin, variants = select(tuple(o.variants), o.rules)
        keys = vkey = None
    else:
        # The rule filter's result is cached too: loading the few selected variants is much faster than
        # loading thousands and filtering them again.  (origin: index in the derivation order.)
        vkey = op.variant_key()  # prints the program: once, not per variant
        origin, variants = memo("selected", f"{vkey}|{o.rules!r}", lambda: select(cached_variants(op), o.rules))
        keys = [f"{vkey}|{k}" for k in origin]
    return _Variants(variants, origin, keys, vkey, VariantIds(variants, keys), {k: i for i, k in enumerate(origin)})


class _Null:
    """Where the progress goes when it is not shown."""

    def write(self, *_):
        pass

    def flush(self):
        pass

    def isatty(self):
        return False


class _Run:
    """One exploration, its steps sharing the operator, the options, the devices and what the store holds."""

    def __init__(self, op, options: ExplorationOptions, devices, baselines: tuple, t0: float):
        self.op, self.o, self.devices, self.baselines, self.t0 = op, options, devices, baselines, t0
        self.search = options.search
        self.stream = options.stream or sys.stdout
        # Shown at once: deriving the variants and screening their spaces can take a minute before any point.
        self.bar = Progress(options.samples, label=op.name, stream=self.stream if options.progress else _Null())
        self.ran = self.failed = self.from_plan = self.prebuilt = 0
        self.first_proposal_s = self.first_result_s = None
        self.unseen: list = []  # measured points the strategy has not been told of yet (told before it proposes)

    def explore(self) -> Exploration:
        o, op, devices = self.o, self.op, self.devices
        self.bar.phase("deriving the variants")
        self.v = _derive(op, o)
        self._say_what_runs()
        self.bar.phase(self.search.phase)
        self.batch = o.batch or self.search.batch_size(o.samples, devices.jobs, devices.width)
        with Store(o.db) as store:
            self.store = store
            if self.baselines:  # first: a baseline that computes something else is refused before any point runs
                measure_references(store, op, devices.key, o.seed, None, self.baselines)
            self._read_store()
            self._find_saved_batch()
            self._start_strategy()
            self._plan()
            self._measure()
            self.bar.close()
            if o.save_batch:
                self._save_next_batch()
            if o.references:
                measure_references(store, op, devices.key, o.seed, devices.references)
            records = store.records(device=devices.key, layer=op.problem)
        measured = [r for r in records if r.measured and not r.is_reference]
        refs = [r for r in records if r.is_reference and r.measured]
        return Exploration(op, devices.key, records, pareto_front(measured), refs, self.ran, self.resumed, self.failed,
                           self.search.name, time.time() - self.t0, devices.lost, devices.requeued,
                           self.first_proposal_s, self.first_result_s, devices.measure_ready_s(self.t0),
                           devices.measure_start_steps, self.from_plan, self.prebuilt, self.exhausted,
                           self.over_budget, measured_bandwidth(devices.profile))

    def _say_what_runs(self) -> None:
        if not self.o.progress:
            return
        where = self.devices.name if self.o.workers is None else f"{self.devices.width} x {self.devices.name}"
        self.bar.note(f"{self.op.name} ({self.op.problem}) on {where}: {len(self.v.variants)} variants from the rewrite "
                      f"rules ({time.time() - self.t0:.1f} s); {self.search.name} search for {self.o.samples} points")
        slow = uncached_imports()
        if slow:
            self.bar.note(f"note: Python keeps no bytecode for {', '.join(slow)} here (PYTHONDONTWRITEBYTECODE), so each "
                          "worker process compiles them from source as it starts (seconds each); set PYTHONPYCACHEPREFIX "
                          "to a writable folder and unset PYTHONDONTWRITEBYTECODE once to keep it")

    def _read_store(self) -> None:
        """The finished points the store holds of this problem: taken, told to the strategy, the best so far."""
        v = self.v
        done = [r for r in self.store.records(device=self.devices.key, layer=self.op.problem)
                if not r.is_reference and r.status.finished]
        self.taken: set = set()
        self.observed: list = []  # (variant, config, time or None, kernel times) of the stored points, for the strategy
        self.best_ms = self.best_bytes = None
        for r in done:
            # Records name their variant by id and by index in the (deterministic, cached) derivation order;
            # an id is checked before the record counts, so records of other rule versions are ignored.
            i = v.position.get(r.metrics.get("variant_index", -1))
            if i is None or v.ids[i] != r.variant:
                continue
            self.taken.add((i, config_key(r.config)))
            self.observed.append(_observed(i, r))
            if r.status is Status.OK and r.time_ms is not None and (self.best_ms is None or r.time_ms < self.best_ms):
                self.best_ms, self.best_bytes = r.time_ms, r.bytes
        self.known = {(r.variant, canonical_json(r.config)): r for r in done}  # what the strategy learns from

    def _find_saved_batch(self) -> None:
        o, v = self.o, self.v
        self.plan_key = self.plan = None
        if self.search.saves_next_batch and v.vkey is not None:
            settings = plan_settings(v.vkey, o.rules, o.seed, self.devices.profile)
            self.plan_key = BatchKey.of(self.devices.key, self.op.problem, self.search.name, settings)
        if self.plan_key is not None and o.samples > len(self.taken):
            self.plan = saved_plan(self.store, self.plan_key, points_state(self.known.values()), v.position, v.ids,
                                   self.taken)

    def _start_strategy(self) -> None:
        if self.plan:
            # The batch the last run saved is what its strategy would have proposed next: measured at once,
            # while this run rebuilds the strategy from the store in a thread (the main thread mostly waits
            # for the worker processes meanwhile).  Not beside kernels that run on this host's CPUs: the
            # rebuilding would slow them, and their measured times.
            beside = self.devices.rebuild_beside
            self.building = Later(lambda: self._rebuild(beside), thread=beside)
            self.strategy = None
        else:
            self.building = None
            self.strategy, others = self._rebuild(False)
            print_others(others, self.op, self.search.name, self.o.db, self.o.progress, self.bar.note)

    def _rebuild(self, in_thread: bool):
        """The strategy, told everything the store holds (the stored points and other problems')."""
        o, v = self.o, self.v
        spaces = Spaces(v.variants, self.op.sizes(), self.devices.profile, o.seed, v.keys, program=self.op.program())
        strategy = self.search(spaces, o.seed)
        if not in_thread:  # what the store says of other problems is modelled there (``use_other_problems``;
            self._lend_workers(spaces)  # in a thread the main one may be using them)
        for point in self.observed:
            strategy.observe(*point)
        # A thread needs its own connection (SQLite's are not shared between threads).
        with (Store(o.db) if in_thread else contextlib.nullcontext(self.store)) as own:
            others = use_other_problems(own, strategy, self.op, self.devices.key, v.position, v.ids, self.devices.jobs)
        if in_thread:
            strategy.prepare(self.batch)
        return strategy, others

    def _ready_strategy(self):
        """The strategy, built if a thread was building it, and told of what was measured since it proposed."""
        if self.building is not None:
            self.strategy, others = self.building.result()
            self.building = None
            print_others(others, self.op, self.search.name, self.o.db, self.o.progress, self.bar.note)
        for point in self.unseen:
            self.strategy.observe(*point)
        self.unseen.clear()
        self._lend_workers(self.strategy.spaces)  # idle while the strategy proposes: its candidates are lowered there
        return self.strategy

    def _lend_workers(self, spaces) -> None:
        proposing = self.devices.proposing
        if proposing is not None:
            spaces.use_workers(proposing.run_all, proposing.width)

    def _plan(self) -> None:
        """How many points are left to run; a strategy that plans ahead draws them all now."""
        o, v = self.o, self.v
        if self.search.plans_ahead:
            # The same seed names the same points: those already in the store are skipped, not replaced.
            # The plan is kept on disk: drawing it solves the space of every variant it draws from (a
            # VGG-16 layer's 40 tiled variants: 7 s on this project's 2-core machine), which a resumed run
            # repeated before its first point.
            def draw():
                return self.strategy.propose(o.samples, set())

            planned = draw() if v.vkey is None else memo(
                "plans", f"{v.vkey}|{o.rules!r}|{self.search.name}|{o.samples}|{self.strategy.spaces.problem_key()}",
                draw, SCREEN_CODE)
            self.resumed = sum(1 for i, c in planned if (i, config_key(c)) in self.taken)
            self.queue = [(i, c) for i, c in planned if (i, config_key(c)) not in self.taken]
            self.exhausted = len(planned) < o.samples  # the space holds fewer valid points than were asked for
        else:
            self.resumed = min(len(self.taken), o.samples)
            self.queue = None
            self.exhausted = False
        self.remaining = len(self.queue) if self.queue is not None else o.samples - self.resumed
        if self.remaining <= 0 and not self.taken and self.search.plans_ahead:
            raise self._nothing_valid()
        best = (self.best_ms, self.best_bytes) if self.best_ms is not None else None
        self.bar.start(self.resumed + self.remaining, self.resumed, best)

    def _nothing_valid(self):
        return no_configuration(self.op, self.v.variants, self.v.ids, self.devices.profile, self.devices.name)

    def _abort_ms(self) -> float | None:
        # Read as each point is handed to the device, not once a batch: a uniform search is one batch, and its
        # points were never aborted.
        return self.o.abort_factor * self.best_ms if (self.o.abort_factor and self.best_ms) else None

    def _measure(self) -> None:
        """Batch after batch until the points asked for are in the store, the budget is spent, or the search
        has no valid point left."""
        o = self.o
        self.over_budget = False
        while self.remaining > 0:
            if o.budget_s is not None and time.time() - self.t0 > o.budget_s:
                self.over_budget = True
                break
            chosen, generated = self._next_batch(min(self.batch, self.remaining))
            if not chosen:
                if not self.taken:
                    raise self._nothing_valid()
                self.exhausted = True
                break
            if self.first_proposal_s is None:
                self.first_proposal_s = time.time() - self.t0
            for i, config in chosen:
                self.taken.add((i, config_key(config)))
            for i, record, outcome in self._outcomes(chosen, generated):
                self._count(i, record, outcome)

    def _next_batch(self, want: int) -> tuple[list, dict]:
        """The next points (from the batch the run before saved, the plan, or the strategy), and the kernels
        of those generated before."""
        if self.plan:
            chosen, self.plan = self.plan[:want], None
            self.from_plan = len(chosen)
            self.store.drop_batch(self.plan_key)  # used: the end of this run saves the next one
            return chosen, self.devices.generated(self.op, self.v.ids, chosen)
        if self.queue is not None:
            chosen, self.queue = self.queue[:want], self.queue[want:]
            return chosen, {}
        return self._ready_strategy().propose(want, self.taken), {}

    def _outcomes(self, chosen: list, generated: dict):
        """(variant, record, outcome) of each chosen point as it is known, its record stored; the outcome is
        None for a point another exploration of this problem finished since this one read the store (or
        finishes while this one measures it): its result is kept and counted as resumed, not replaced."""
        op, v, devices = self.op, self.v, self.devices
        chosen, elsewhere, stale = finished_elsewhere(self.store, chosen, devices.key, op.problem, v.ids, v.origin)
        for i, record in elsewhere:
            yield i, record, None
        if not chosen:
            return
        deadline = None if self.o.budget_s is None else self.t0 + self.o.budget_s
        for (i, config), outcome, where in devices.run(op, v.variants, chosen, self._abort_ms, generated, deadline):
            record = point_record(op, v.variants[i], v.ids[i], config, outcome, devices.key, devices.profile,
                                  v.origin[i], where)
            if self.store.put(record, replace=(i, config_key(config)) in stale):
                yield i, record, outcome
            else:
                yield i, self.store.get(record.key) or record, None

    def _count(self, i: int, record, outcome) -> None:
        self.known[(record.variant, canonical_json(record.config))] = record
        if self.first_result_s is None and outcome is not None:
            self.first_result_s = time.time() - self.t0
        self.unseen.append(_observed(i, record))
        if record.status is Status.OK and record.time_ms is not None:
            self.best_ms = record.time_ms if self.best_ms is None else min(self.best_ms, record.time_ms)
        self.remaining -= 1
        if outcome is None:
            self.resumed += 1
            self.bar.resume()
            return
        self.ran += 1
        self.failed += not outcome.ok
        self.bar.update(outcome.status, record.time_ms, record.bytes)

    def _save_next_batch(self) -> None:
        """For a strategy that saves its next batch: that batch, with its kernels generated ahead in this run's
        workers (``resume.save_plan``)."""
        if self.plan_key is None or not self.ran or self.exhausted:
            return
        pool = self.devices.ahead_pool(self.over_budget)
        if self.o.progress:  # the next proposal may screen more variants and lower its candidates: seconds
            print(f"{self.op.name}: choosing the batch a resumed run starts with"
                  f"{' and generating its kernels' if pool is not None else ''} (kept in {Path(self.o.db).name})",
                  file=self.stream, flush=True)
        v = self.v
        self.prebuilt = save_plan(self.store, self.plan_key, points_state(self.known.values()),
                                  self._ready_strategy().propose(self.batch, self.taken), self.op, v.variants, v.ids,
                                  v.origin, self.devices.limits, pool,
                                  self.devices.measuring if pool is not None else None, self.devices.index)


def _observed(i: int, record) -> tuple:
    """What a strategy is told of a measured point: (variant, config, time or None, each kernel's time or None;
    a store written by hand or by another version may hold anything there)."""
    ok = record.status is Status.OK
    kernels = record.metrics.get("kernel_ms") if ok else None
    if not (isinstance(kernels, (list, tuple)) and kernels
            and all(isinstance(t, (int, float)) and math.isfinite(t) and t >= 0 for t in kernels)):
        kernels = None
    return i, record.config, record.time_ms if ok else None, kernels
