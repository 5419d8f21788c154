"""Evaluating the points of an exploration on this machine's worker processes: code generation in parallel
compile workers, measurement in the one worker that owns the device, each point measured as soon as it is
compiled (``evaluate_points``); the workers' tasks are ``liftpy.runtime.points``.

Compiling on several CPUs while one worker measures: SGEMM 1024's 1,000 uniform points took 48 s on the H100
this way against 77 s compiled whole before any was measured (``benchmarks/results/h100-search-overlap.json``).
On a GPU the compile workers also build each point's sources on the device (``compile_and_build_point``): a
convolution tiling takes 0.2-2 s to build on the H100, and the measuring worker built every point in turn
(80 uniform points of a VGG-16 layer: 50 s of search, 42 s of it building, against 20 s with the builds
ahead; ``benchmarks/results/h100-search-build-ahead.json``).  Not on a CPU device, whose builds would take
the cores the measured kernels run on.

A batch's last compile steps are not waited for without end: one still running ``STRAGGLER_S`` seconds (or
twice the batch's longest compile step so far) after every other point of its batch went to the device is
stopped and stored as a timeout, whose message says so.  A model search proposes its next batch only when the
last one is measured, and on the H100 one tiling of VGG-16 layer 24 with a 2 x 64 register block took 19 s
to build (its kernel ran 20 times slower than the best), while its 29 companions took 0.1-1.8 s: the whole
search waited for it, 18 of its 46 s.
"""

from __future__ import annotations

import time

from ..results.store import config_key
from .points import (
    compile_and_build_point,
    compile_point,
    compile_steps,
    evaluate_point,
    measure_point,
    point_payload,
    warm_compile,
    warm_measure,
    with_compile_steps,
)
from .pool import Task, WorkerPool


# A compile step (on a GPU: generating and building a point's kernels) still running this many seconds after
# every other point of its batch went to the device is stopped (module docstring).
STRAGGLER_S = 5.0
STRAGGLER_REASON = ("its kernels were still compiling {s:.1f} s after the rest of the batch had gone to the device, "
                    "and the next batch waits for every point of this one")

TASKS_PER_WORKER = 200  # a compile worker is replaced after this many points, bounding what its caches grow to
# The measuring worker grows slowly (SGEMM 1024 on an H100: 263 -> 382 MB over 1,000 points, the OpenCL
# driver's share of the programs it built), and replacing it costs a new interpreter, a device context and
# the problem's reference: 1.6-2.0 s on an H100 host, each time the search waits (four replacements were
# 8 s of a 52 s search of 1,000 SGEMM points).
MEASURES_PER_WORKER = 1000


def compile_pool(workers: int, timeout_s: float) -> WorkerPool:
    """Code-generation worker processes, started now (their imports overlap the caller's work)."""
    return WorkerPool(workers, default_timeout_s=timeout_s, max_tasks_per_worker=TASKS_PER_WORKER,
                      initializer=warm_compile).warm()


def measure_pool(device, timeout_s: float, prepare=None):
    """The one worker process that builds and runs points on ``device``, started now with its context;
    ``prepare``: ``(operator, seed)`` whose inputs and reference it computes while starting."""
    return WorkerPool(1, default_timeout_s=timeout_s, max_tasks_per_worker=MEASURES_PER_WORKER,
                      initializer=warm_measure, init_args=(device, prepare)).warm()


def evaluate_points(op, variants, chosen, compile_pool, measure_pool, device, seed, repeat, warmup, limits, abort_ms,
                    generated=None, build_ahead: bool = False, deadline: float | None = None,
                    straggler_s: float | None = STRAGGLER_S):
    """(point, outcome) for each chosen point: compiled in parallel when there is a compile pool, and
    measured one at a time, each as soon as it is compiled and the measuring worker is free (the first of
    the chosen order among those compiled).  ``abort_ms`` may be a function, asked as each point is handed
    to the measuring worker.  ``generated``: (stages, codegen seconds) of points whose kernels were
    generated before, by (variant, ``config_key``): those are measured first, without a compile step.
    ``build_ahead``: the compile workers also build each point's kernels on the device
    (``compile_and_build_point``), for a device whose builds do not run beside the measured kernels on this
    host's CPUs.  ``deadline`` (a ``time.time()``): no point is handed to the measuring worker after it; the
    one it runs then finishes, and the points compiled for later are dropped.  ``straggler_s``: a compile
    step still running this many seconds after every other point was handed to the measuring worker is
    stopped and reported as a timeout (module docstring); None waits for it."""
    def payload(i, config):
        v = variants[i]
        return point_payload(op, v.program, v.placement_map, config, device, seed, repeat, warmup, limits, abort_ms)

    def in_time(tasks):
        for task in tasks:
            if deadline is not None and time.time() > deadline:
                return
            yield task

    generated = generated or {}
    ahead = []
    for i, c in chosen:
        if (i, config_key(c)) in generated:
            stages, codegen_s = generated[(i, config_key(c))]
            ahead.append(Task(measure_point, ({**payload(i, c), "stages": stages},), tag=(i, c, {"codegen_s": codegen_s})))
    for task, outcome in measure_pool.imap_unordered(in_time(ahead)):
        i, c, steps = task.tag
        yield (i, c), with_compile_steps(outcome, steps, ahead=True)
    chosen = [(i, c) for i, c in chosen if (i, config_key(c)) not in generated]
    if not chosen:
        return
    if compile_pool is None:
        tasks = (Task(evaluate_point, (payload(i, c),), tag=(i, c)) for i, c in chosen)
        for task, outcome in measure_pool.imap_unordered(in_time(tasks)):
            yield task.tag, outcome
        return
    step = compile_and_build_point if build_ahead else compile_point
    compiled: dict = {}  # compile outcomes not measured yet, by position in ``chosen``
    failed: list = []  # points whose compile step failed, for the caller in the order found
    drawn = [0]  # compile tasks the pool has taken
    left = [len(chosen)]  # points not handed to the measuring worker nor failed
    longest = [0.0]  # the longest compile step of the batch so far, in seconds
    limited = [False]

    def compile_tasks():
        for k, (i, c) in enumerate(chosen):
            drawn[0] += 1
            yield Task(step, (payload(i, c),), tag=(k, i, c))

    def ready() -> bool:
        """Asked by the compile pool before each wait: True when a compiled point is waiting (the pool then
        does not block).  Once only compile steps still running are left, every other point on its way to
        the device, those are given ``straggler_s`` more, or twice the batch's longest compile step so far
        where that is longer."""
        if (not compiled and not limited[0] and straggler_s is not None and drawn[0] == len(chosen)
                and left[0] < len(chosen)):
            grace = max(straggler_s, 2 * longest[0])
            limited[0] = compile_pool.limit_busy(grace, STRAGGLER_REASON.format(s=grace)) > 0
        return bool(compiled)

    # The compile workers take the points in order; whatever they finished is taken in whenever the measuring
    # worker is handed its next point (without waiting for the busy ones), and the pool waits for them only
    # when no compiled point is waiting.  So the two overlap: before, every point of a batch was generated
    # before the first was measured, and a uniform search's one batch measured nothing, stored nothing and
    # showed no progress until all its points were generated.
    compiles = compile_pool.imap_unordered(compile_tasks(), poll=ready)

    def measure_tasks():
        while left[0]:
            for done in compiles:
                if done is not None:
                    task, outcome = done
                    compiled[task.tag[0]] = (task.tag[1], task.tag[2], outcome)
                    longest[0] = max(longest[0], outcome.elapsed_s or 0.0)
                elif compiled:
                    break
            k = min(compiled)
            i, c, outcome = compiled.pop(k)
            left[0] -= 1
            if not outcome.ok:
                failed.append(((i, c), outcome))
                continue
            p = payload(i, c)
            p["stages"] = outcome.result["stages"]
            yield Task(measure_point, (p,), tag=(i, c, compile_steps(outcome.result)))

    measured = measure_pool.imap_unordered(in_time(measure_tasks()))
    try:
        for task, outcome in measured:
            while failed:
                yield failed.pop(0)
            i, c, steps = task.tag
            yield (i, c), with_compile_steps(outcome, steps)
        yield from failed
    finally:  # the caller stopped early (a budget, an interrupt): the workers' unfinished points are dropped
        measured.close()
        compiles.close()
