"""What a worker process does with a point (a variant's program with values for its tuning parameters): the
task functions an exploration hands its workers, and the plain data they take and give back.

``compile_point`` generates the OpenCL source of every kernel of a point for the device's limits.  It needs
no device, so several compile workers run it in parallel on the CPUs while one measuring worker owns the
device (``liftpy.runtime.evaluate``).  On a GPU the compile workers also build each point's sources on the
device (``compile_and_build_point``), so that the OpenCL compiler's output is in pyopencl's binary cache when
the measuring worker builds them.

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

The code generator and the OpenCL bindings are imported inside the tasks, in the worker that runs them: the
driver, which only names these functions, would otherwise load pyopencl (0.16 s) and the code generator
(0.1 s) for nothing, as would ``liftpy --help``.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from functools import lru_cache

from ..errors import LiftError
from ..host.device import get_device
from ..host.timing import device_timing
from ..ir import parser
from ..results.precision import precision_check, precision_metrics
from ..results.store import Status


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
    from ..codegen.kernel import generate_pipeline  # in the worker (module docstring)

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
    from ..codegen import kernel  # noqa: F401 - what this initializer is for


def warm_measure(device, prepare=None) -> dict:
    """Worker initializer of the measuring worker: the device's context made, and the inputs and reference
    result of ``prepare`` (operator, seed) computed, before the first point (a layer's float64 reference
    takes seconds, which a resumed search would otherwise wait for after its first kernel is built)."""
    t = time.perf_counter()
    from ..host import kernel  # noqa: F401 - the OpenCL bindings, in the worker (module docstring)

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
    result = compiled.run(*inputs, repeat=timing.runs, warmup=warmup, statistic=timing.statistic, stop_above_ms=abort_ms,
                            budget_ms=timing.budget_ms)
    if result.stopped:
        raise Aborted(f"one run took {result.time_ms:.4g} ms, more than the {abort_ms:.4g} ms allowed", result.time_ms)
    run_s = time.perf_counter() - t
    t = time.perf_counter()
    # (half storage: its tolerance, and the half inputs as the kernels received them; the errors recorded are
    # against the float reference, end to end)
    verdict = precision_check(check, payload.get("placements"), getattr(op, "rtol", None), op, inputs)
    validation = verdict(result.output)
    errors = precision_metrics(result.output, check, payload.get("placements"), payload.get("program"))
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
        **errors,
    }


def _build(payload: dict):
    """(the compiled kernel or pipeline, its (kernel, output) list, seconds the OpenCL compiler took)."""
    from ..host.kernel import CompiledKernel, CompiledPipeline  # in the worker (module docstring)

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
    return parser.parse_program(text)


def kernel_source(program, sizes: dict, placements: dict | None = None, limits=None) -> str:
    """The OpenCL source of a stored point (for ``liftpy show``), generated again for the device limits
    it was measured with."""
    from ..codegen.kernel import DeviceLimits, generate_pipeline  # (the code generator: module docstring)

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
    if not outcome.ok:
        return outcome
    return replace(outcome, result={**outcome.result, **steps, **({"codegen_ahead": True} if ahead else {})})
