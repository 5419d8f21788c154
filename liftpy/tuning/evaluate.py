"""Evaluating points of an exploration inside worker processes, in two steps.

``compile_point`` generates the OpenCL source of every kernel of a point (a variant's program with values
for its tuning parameters) for the device's limits.  It needs no device, so several compile workers run in
parallel on the CPUs while one measuring worker owns the device, and each point is measured as soon as it
is compiled (``evaluate_points``): SGEMM 1024's 1,000 uniform points took 48 s on the H100 this way against
77 s compiled whole before any was measured (``benchmarks/results/h100-search-overlap.json``).

On a GPU the compile workers also build each point's sources on the device (``compile_and_build_point``),
so that the OpenCL compiler's output is in pyopencl's binary cache when the measuring worker builds them:
a convolution tiling takes 0.2-2 s to build on the H100, and the measuring worker built every point in turn
(80 uniform points of a VGG-16 layer: 50 s of search, 42 s of it building, against 20 s with the builds
ahead; ``benchmarks/results/h100-search-build-ahead.json``).  Not on a CPU device, whose builds would take
the cores the measured kernels run on.

A batch's last compile steps are not waited for without end: one still running ``STRAGGLER_S`` seconds (or
twice the batch's longest compile step so far) after every other point of its batch went to the device is
stopped and stored as a timeout, whose message says so.  A model search proposes its next batch only when the
last one is measured, and on the H100 one tiling of VGG-16 layer 24 with a 2 x 64 register block took 19 s
to build (its kernel ran 20 times slower than the best), while its 29 companions took 0.1-1.8 s: the whole
search waited for it, 18 of its 46 s.

``measure_point`` builds the sources on the device, runs them on the operator's seeded inputs (warm-up,
then repeated runs, every kernel of a pipeline summed: on a GPU their median, on a CPU the fastest of at
least 40, ``liftpy.host.timing``), validates the output with the operator's check, and returns plain data
for the results store.  With ``abort_ms`` it stops after the first timed run when that run alone is
already slower (the point cannot beat the best so far by enough to matter) and reports it as ``aborted``.

Errors propagate as exceptions; the worker pool turns them into statuses (a build failure is a compile
error, a wrong output ``wrong_result``, and so on).

``prebuild_point`` only builds a point's sources on the device: the end of a search builds the first
points of the batch it saves, so that the OpenCL compiler's output is in pyopencl's binary cache (and the
driver's) when a resumed run measures them.  A convolution tiling took 2.0-2.1 s to build on the H100,
two thirds of a resumed search's time to its first run.
"""

from __future__ import annotations

import hashlib
import time
from functools import lru_cache

from ..errors import LiftError
from ..host.timing import device_timing
from ..results.store import Status


# Functions the worker processes run, by name (tasks carry names, not code).
EVALUATE = "liftpy.tuning.evaluate:evaluate_point"
COMPILE = "liftpy.tuning.evaluate:compile_point"
COMPILE_AND_BUILD = "liftpy.tuning.evaluate:compile_and_build_point"
MEASURE = "liftpy.tuning.evaluate:measure_point"
PREBUILD = "liftpy.tuning.evaluate:prebuild_point"
WARM_COMPILE = "liftpy.tuning.evaluate:warm_compile"
WARM_MEASURE = "liftpy.tuning.evaluate:warm_measure"


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


def compile_pool(workers: int, timeout_s: float):
    """Code-generation worker processes, started now (their imports overlap the caller's work)."""
    from .worker import WorkerPool

    return WorkerPool(workers, default_timeout_s=timeout_s, max_tasks_per_worker=TASKS_PER_WORKER,
                      initializer=WARM_COMPILE).warm()


def measure_pool(device, timeout_s: float, prepare=None):
    """The one worker process that builds and runs points on ``device``, started now with its context;
    ``prepare``: ``(operator, seed)`` whose inputs and reference it computes while starting."""
    from .worker import WorkerPool

    return WorkerPool(1, default_timeout_s=timeout_s, max_tasks_per_worker=MEASURES_PER_WORKER,
                      initializer=WARM_MEASURE, init_args=(device, prepare)).warm()


def reference_result(r, **extra) -> dict:
    """A measured reference as plain data for the store (its output left behind)."""
    return {"name": r.name, "time_ms": r.time_ms, "bytes": r.bytes, "breakdown": dict(r.breakdown),
            "times_ms": list(r.times_ms), "device": r.device, **extra}


class WrongResult(LiftError):
    """The kernel ran but its output does not match the reference."""

    status = Status.WRONG_RESULT


class Aborted(LiftError):
    """The point was stopped after one run: it was already slower than the run could afford."""

    status = Status.ABORTED

    def __init__(self, message: str, time_ms: float):
        self.time_ms = time_ms
        super().__init__(message)


def compile_point(payload: dict) -> dict:
    """Generate the kernels of one point; returns them (without device) and the time it took."""
    from ..codegen.kernel import generate_pipeline

    t = time.perf_counter()
    op = payload["operator"]
    sizes = {**op.sizes(), **payload["config"]}
    stages = generate_pipeline(payload["program"], sizes, payload["limits"], payload.get("placements") or {})
    return {"stages": stages, "codegen_s": time.perf_counter() - t}


def compile_and_build_point(payload: dict) -> dict:
    """``compile_point``, then the kernels built on the device once, so that the OpenCL compiler's output is in
    pyopencl's binary cache (and the driver's) when the measuring worker builds them: on a GPU a convolution
    tiling takes 0.2-2 s to build, and the one measuring worker built every point in turn while the compile
    workers waited.  A build that fails here is left to the measuring worker, which reports it as before.
    ``prebuild_s``: how long the build took here (the measuring worker's ``build_s`` then reads the caches): on
    the H100 one register-blocked tiling of VGG-16 layer 24 (a 2 x 64 block) took 19.3 s here, which is what
    its batch waited for (``STRAGGLER_S`` now bounds that wait)."""
    out = compile_point(payload)
    try:
        out["prebuild_s"] = prebuild_point({**payload, "stages": out["stages"]})["build_s"]
    except Exception:  # noqa: BLE001 (only the caches were to gain; the measuring worker meets it again)
        pass
    return out


def warm_compile() -> None:
    """Worker initializer of code-generation workers: the code generator imported before the first point."""
    from ..codegen import kernel  # noqa: F401


def warm_measure(device, prepare=None) -> dict:
    """Worker initializer of the measuring worker: the device's context made, and the inputs and reference
    result of ``prepare`` (operator, seed) computed, before the first point (a layer's float64 reference
    takes seconds, which a resumed search would otherwise wait for after its first kernel is built)."""
    t = time.perf_counter()
    from ..errors import LiftError
    from ..host.device import get_device
    from ..host import kernel  # noqa: F401

    steps = {"imports_s": time.perf_counter() - t}
    t = time.perf_counter()
    get_device(device)
    steps["device_s"] = time.perf_counter() - t
    if prepare is not None:
        t = time.perf_counter()
        try:
            _prepared(*prepare)
        except (LiftError, ValueError, MemoryError):
            pass  # the first point prepares again, and reports the error as that point's
        steps["prepare_s"] = time.perf_counter() - t
    return steps


_PREPARED: dict = {}


def _prepared(op, seed: int):
    """The operator's inputs for a seed and a checker of outputs, kept while the worker lives (one problem
    at a time: a new problem replaces the old one's arrays)."""
    key = (op.problem, seed)
    if key not in _PREPARED:
        _PREPARED.clear()
        _PREPARED[key] = op.prepare(seed)
    return _PREPARED[key]


def measure_point(payload: dict) -> dict:
    """Build, run, time and validate one point on the device; returns metrics."""
    op = payload["operator"]
    compiled, kernels, build_s = _build(payload)
    t = time.perf_counter()
    inputs, check = _prepared(op, payload.get("seed", 0))
    prepare_s = time.perf_counter() - t  # zero once the worker has the inputs and reference
    t = time.perf_counter()
    abort_ms = payload.get("abort_ms")
    warmup, repeat = payload.get("warmup", 1), payload.get("repeat", 5)
    timing = device_timing(compiled.device.info.type, repeat)
    # The abort test is the first timed run of the runs themselves: a run of its own, with its own
    # inputs uploaded, warm-up and output read back, was a third of a measured SGEMM 1024 point's time on
    # the H100 (5.6 of 18 ms).
    result = compiled.run(*inputs, repeat=timing.runs, warmup=warmup, statistic=timing.statistic, stop_above_ms=abort_ms)
    if result.stopped:
        raise Aborted(f"one run took {result.time_ms:.4g} ms, more than the {abort_ms:.4g} ms allowed", result.time_ms)
    run_s = time.perf_counter() - t
    t = time.perf_counter()
    validation = check(result.output)
    check_s = time.perf_counter() - t
    if not validation.ok:
        raise WrongResult(validation.message)
    source = compiled.source
    return {
        "time_ms": result.time_ms,
        "timing": str(timing),
        "bytes": result.device_bytes,
        "source_hash": hashlib.sha1(source.encode()).hexdigest()[:16],
        "max_error": validation.max_abs_error,
        "kernels": len(kernels),
        "kernel_ms": list(getattr(compiled, "kernel_times_ms", (result.time_ms,))),
        "launches": [str(k.launch) for k, _ in kernels],
        "local_bytes": sum(k.plan.local_bytes for k, _ in kernels),
        "private_bytes": max(k.plan.private_bytes for k, _ in kernels),
        "device": compiled.device.key,
        "build_s": build_s,
        "prepare_s": prepare_s,
        "run_s": run_s,
        "check_s": check_s,
    }


def _build(payload: dict):
    """(the compiled kernel or pipeline, its (kernel, output) list, seconds the OpenCL compiler took)."""
    from ..host.device import get_device
    from ..host.kernel import CompiledKernel, CompiledPipeline

    stages = payload["stages"]
    device = get_device(payload.get("device"))
    t = time.perf_counter()
    if len(stages) == 1:
        compiled = CompiledKernel(stages[0][0], device)
        kernels = [(compiled, "out")]
    else:
        compiled = CompiledPipeline(payload["program"], {**payload["operator"].sizes(), **payload["config"]}, device,
                                    payload.get("placements"), stages=stages)
        kernels = compiled.kernels
    return compiled, kernels, time.perf_counter() - t  # the compiler's time: on GPUs often more than the runs


def prebuild_point(payload: dict) -> dict:
    """Build a point's generated sources on the device and nothing else (module docstring)."""
    _, kernels, build_s = _build(payload)
    return {"build_s": build_s, "kernels": len(kernels)}


def evaluate_point(payload: dict) -> dict:
    """Compile and measure in one step (one worker): for callers without a separate compile pool."""
    out = compile_point(payload)
    metrics = measure_point({**payload, "stages": out["stages"]})
    metrics["codegen_s"] = out["codegen_s"]
    return metrics


@lru_cache(maxsize=64)
def _program(text: str):
    from ..ir.parser import parse_program

    return parse_program(text)


def kernel_source(program, sizes: dict, placements: dict | None = None, limits=None) -> str:
    """The OpenCL source of a stored point (for ``liftpy show``), generated again for the device limits
    it was measured with."""
    from ..codegen.kernel import DeviceLimits, generate_pipeline

    if isinstance(program, str):
        program = _program(program)
    stages = generate_pipeline(program, sizes, limits or DeviceLimits(), placements or {})
    if len(stages) == 1:
        return stages[0][0].source
    return "\n".join(f"// ===== kernel {i + 1} of {len(stages)}: writes {out} =====\n{ks.source}"
                     for i, (ks, out) in enumerate(stages))


def point_payload(op, program, placements, config, device, seed, repeat, warmup, limits, abort_ms) -> dict:
    """What a worker needs to compile and measure one point (plain, picklable data).  ``abort_ms``: a number,
    None, or a function returning either, asked now (the threshold of the best point measured so far)."""
    return {"operator": op, "program": program, "placements": placements, "config": config, "device": device,
            "seed": seed, "repeat": repeat, "warmup": warmup, "limits": limits, "abort_ms": abort_threshold(abort_ms)}


def abort_threshold(abort_ms) -> float | None:
    """``abort_ms`` as a number (or None): called where it is a function of the measurements so far."""
    return abort_ms() if callable(abort_ms) else abort_ms


def compile_steps(result: dict) -> dict:
    """What a compile step's result says of the step itself (its code generation's time, ``codegen_s``, and
    where it built the kernels ahead, that build's, ``prebuild_s``): all of it but the kernels."""
    return {k: v for k, v in result.items() if k != "stages"}


def with_compile_steps(outcome, steps: dict, ahead: bool = False):
    """A measurement's outcome with its compile step's ``compile_steps`` added to its result; ``ahead``: that
    step ran before this run (``codegen_ahead`` in the result)."""
    from dataclasses import replace

    if not outcome.ok:
        return outcome
    return replace(outcome, result={**outcome.result, **steps, **({"codegen_ahead": True} if ahead else {})})


def evaluate_points(op, variants, chosen, compile_pool, measure_pool, device, seed, repeat, warmup, limits, abort_ms, Task,
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
    from ..results.store import config_key

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
            ahead.append(Task(MEASURE, ({**payload(i, c), "stages": stages},), tag=(i, c, {"codegen_s": codegen_s})))
    for task, outcome in measure_pool.imap_unordered(in_time(ahead)):
        i, c, steps = task.tag
        yield (i, c), with_compile_steps(outcome, steps, ahead=True)
    chosen = [(i, c) for i, c in chosen if (i, config_key(c)) not in generated]
    if not chosen:
        return
    if compile_pool is None:
        tasks = (Task(EVALUATE, (payload(i, c),), tag=(i, c)) for i, c in chosen)
        for task, outcome in measure_pool.imap_unordered(in_time(tasks)):
            yield task.tag, outcome
        return
    step = COMPILE_AND_BUILD if build_ahead else COMPILE
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
            yield Task(MEASURE, (p,), tag=(i, c, compile_steps(outcome.result)))

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
