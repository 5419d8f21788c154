"""Where an exploration's points run: this machine's device (``LocalDevice``: one measuring worker that owns
the device, code-generation workers beside it) or device workers on Ray (``RayDevices``).  The loop asks
both the same things: the device's key, name and profile, how many devices measure at once, and ``run``,
which yields each point's outcome as it is known.
"""

from __future__ import annotations

import contextlib
import os
import sys

from ..host.device import device_info
from ..probe.saved import PROBE_TIMEOUT_S, device_profile, probe_for_model
from ..runtime.cluster import Cluster
from ..runtime.evaluate import compile_pool, evaluate_points, measure_pool
from ..runtime.pool import OnDemandPool, Task
from ..results.cache import cache_dir, cached_variants, variants_cached
from .resume import generated_kernels

# Calls a model search on a CPU device hands its proposal workers at once before they are started
# (``runtime.pool.OnDemandPool``): screening a variant takes half a second on this project's 2-core machine and
# starting a worker some 3 s of a core, so a proposal screening fewer variants than this does it alone.
PROPOSAL_POOL_LEAST = 16


def default_jobs(info) -> int:
    """The code-generation processes of an exploration that names none: on a GPU one per core of this
    machine but one, which the measuring worker and this process share (the searches of
    ``benchmarks/results`` ran with 15 on the H100's 16-core host); one for a device whose kernels run on
    this host's CPUs (``DeviceInfo.on_host_cpu``), where more would take cores from the kernels being timed."""
    return 1 if info.on_host_cpu else max(1, cores() - 1)


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def open_devices(stack: contextlib.ExitStack, op, options):
    """Where ``options`` says the points of ``op`` run, its worker processes started now and closed with
    ``stack``: their imports and the device context then overlap with deriving and screening the variants
    (a resumed run reaches its first point sooner)."""
    return LocalDevice(stack, op, options) if options.workers is None else RayDevices(stack, options)


class LocalDevice:
    """This machine's device: one measuring worker, which builds and runs every kernel, and ``jobs``
    code-generation workers (none for one job)."""

    def __init__(self, stack: contextlib.ExitStack, op, options):
        o = self.options = options
        # The measuring worker starts first, before this process even lists the devices, and this
        # process makes no device context (the worker runs every kernel), with no more compile workers
        # than a batch has points: the worker's start-up (a GPU context, the reference) is what a resumed
        # search of one point waits for, and fifteen idle compile workers importing beside it took seconds
        # from it on a 16-core host.  The worker resolves ``device`` as this process does, to the same index.
        shared = o.shared
        if shared is not None:  # (a network's layers: workers started once serve every layer's exploration)
            self.measuring, self.jobs, self.compiling = shared.measuring, shared.jobs, shared.compiling
            info = device_info(o.device)
        else:
            self.measuring = stack.enter_context(measure_pool(getattr(o.device, "index", o.device), o.timeout_s, (op, o.seed)))
            info = device_info(o.device)
            self.jobs = default_jobs(info) if o.jobs is None else o.jobs
            self.compiling = stack.enter_context(compile_pool(min(self.jobs, o.batch or self.jobs), o.timeout_s)) if self.jobs > 1 else None
        self.proposing = self.compiling
        here = cores()
        if self.compiling is None and o.search.proposes_with_workers and info.on_host_cpu and here > 1:
            # No compile workers beside kernels timed on this host's CPUs; but while the strategy
            # proposes, nothing is timed, and a fresh problem's screening is most of such a search's time.
            self.proposing = stack.enter_context(OnDemandPool(lambda: compile_pool(here, o.timeout_s), here,
                                                              PROPOSAL_POOL_LEAST))
        self.key, self.name, self.width, self.index = info.key, info.name, 1, info.index
        self.profile = _profile(info, o.profile_path, self.measuring)
        self.limits = self.profile.limits()
        # The compile workers build the kernels too, into the OpenCL compiler's caches, where that does not
        # take this host's CPUs from the kernels being timed; a resumed run rebuilds its strategy in a thread
        # beside the measuring there too (beside kernels timed on this host's CPUs it would slow them).
        self.build_ahead = self.rebuild_beside = not info.on_host_cpu
        self.references = None  # measured in this process
        self.lost = self.requeued = 0

    def run(self, op, variants, chosen, abort_ms, generated, deadline):
        """((variant, configuration), outcome, None) of each chosen point as it is measured."""
        o = self.options
        # Workers get the device the driver resolved (by index), so both read the same limits.
        for point, outcome in evaluate_points(op, variants, chosen, self.compiling, self.measuring, self.index, o.seed,
                                              o.repeat, o.warmup, self.limits, abort_ms, generated, self.build_ahead,
                                              deadline, o.straggler_s):
            yield point, outcome, None

    def generated(self, op, ids, chosen) -> dict:
        """The kernels of ``chosen`` generated when the run before saved them (``resume.generated_kernels``)."""
        return generated_kernels(op, ids, chosen, self.limits)

    def ahead_pool(self, over_budget: bool):
        """The workers that generate the kernels of the batch a run saves (the measuring one without compile
        workers); None over budget."""
        return None if over_budget else (self.compiling if self.compiling is not None else self.measuring)

    def measure_ready_s(self, t0: float) -> float | None:
        ready = self.measuring.ready_at
        return max(0.0, min(ready) - t0) if ready else None  # (0: shared workers started before this run)

    @property
    def measure_start_steps(self) -> dict | None:
        steps = self.measuring.start_steps
        return steps[0] if steps else None


def _profile(info, profile_path, measuring):
    """The device's profile (``probe.saved.device_profile``): on a GPU without one, measured once by the worker
    that owns the device, what it did said on stderr."""
    return device_profile(info, profile_path, lambda: _probe(measuring, info.index),
                          lambda line: print(line, file=sys.stderr, flush=True))


def _probe(measuring, index) -> tuple[dict | None, str]:
    """The model's probes run by the measuring worker (``probe.saved.device_profile``'s ``probe``)."""
    outcome = measuring.run(Task(probe_for_model, (index,), timeout_s=PROBE_TIMEOUT_S))
    if outcome.ok:
        return outcome.result, ""
    last = (outcome.message or "").strip().splitlines()[-1:] or [""]
    return None, f"{getattr(outcome.status, 'value', outcome.status)}: {last[0][:200]}"


class SharedWorkers:
    """The measuring worker and the code-generation workers of this machine's device, started once and
    handed to several explorations (``ExplorationOptions.shared``): a network explores each distinct layer in
    turn, and starting the workers again for each (their imports, the device context) took seconds per
    layer, a third of a short per-layer budget.  A context manager: the workers stop when it closes."""

    def __init__(self, device=None, jobs: int | None = None, timeout_s: float = 300.0):
        self._stack = contextlib.ExitStack()
        info = device_info(device)
        self.device = info.index
        self.jobs = default_jobs(info) if jobs is None else jobs
        self.measuring = self._stack.enter_context(measure_pool(info.index, timeout_s))
        self.compiling = self._stack.enter_context(compile_pool(self.jobs, timeout_s)) if self.jobs > 1 else None

    def derive(self, ops) -> int:
        """The variants of ``ops`` that the disk cache lacks, derived at once on the code-generation workers
        (one operator each) into the cache, where each exploration then finds them.  A network's distinct
        layer kinds were derived one after the other in this process as each was first explored: a
        convolution's take seconds (ResNet-18's nine kinds: 69 s of a 383 s run on the 2-core machine), while
        the workers waited.  Nothing without workers or without a disk cache (the variants could only come
        back through a pipe, and unpickling them costs what deriving them here saves).  Returns how many
        operators were derived."""
        if self.compiling is None or cache_dir() is None:
            return 0
        todo = {op.variant_key(): op for op in ops if not variants_cached(op)}
        if len(todo) < 2:
            return 0  # one is derived as fast where it is needed
        done = self.compiling.run_all(_derive_variants, list(todo.values()))
        return sum(ok for ok, _ in done)

    def profile(self, profile_path=None):
        """The device's profile (``_profile``), measured now where a GPU has none kept: before a network's first
        layer, whose share of the time it would otherwise take."""
        return _profile(device_info(self.device), profile_path, self.measuring)

    def __enter__(self) -> "SharedWorkers":
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()


def _derive_variants(op) -> int:
    """A code-generation worker's task: ``op``'s variants derived into the disk cache (``SharedWorkers.derive``)."""
    return len(cached_variants(op))


class RayDevices:
    """Device workers on Ray (``liftpy.runtime.cluster``), each generating and measuring its points; this
    process proposes alone."""

    def __init__(self, stack: contextlib.ExitStack, options):
        o = self.options = options
        self.jobs = 1 if o.jobs is None else o.jobs
        self.cluster = o.workers if isinstance(o.workers, Cluster) else stack.enter_context(Cluster(o.workers, self.jobs, o.timeout_s))
        self.key, self.name = self.cluster.device_key, self.cluster.device_name
        self.profile = self.cluster.profile(o.profile_path)
        self.limits = self.profile.limits()
        self.width = len(self.cluster.slots)
        self.compiling = self.proposing = self.measuring = self.index = None
        self.build_ahead, self.rebuild_beside = False, True
        self.references = self.cluster.references

    def run(self, op, variants, chosen, abort_ms, generated, deadline):
        """((variant, configuration), outcome, which worker) of each chosen point as it is measured: handed out
        one by one, so a budget stops the exploration between points."""
        o = self.options
        return self.cluster.evaluate(op, variants, chosen, o.seed, o.repeat, o.warmup, self.limits, abort_ms, deadline)

    def generated(self, op, ids, chosen) -> dict:
        return {}  # the device workers generate every point's kernels themselves

    def ahead_pool(self, over_budget: bool):
        return None

    @property
    def lost(self) -> int:
        return self.cluster.lost

    @property
    def requeued(self) -> int:
        return self.cluster.requeued

    def measure_ready_s(self, t0: float) -> float | None:
        return None

    measure_start_steps = None
