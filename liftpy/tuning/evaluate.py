"""Evaluating one point of a convolution exploration, inside a worker process.

A point is a variant (its program in text form and its placements), a configuration (values of its
tuning parameters) and a layer.  The worker generates and builds every kernel of the pipeline, runs it
on seeded random inputs (warm-up, then the median of repeated runs of the whole pipeline, pad and crop
kernels included), validates the output against the float64 reference convolution, and returns plain
data for the results store.  Errors propagate as exceptions; the worker pool turns them into statuses
(a build failure is a compile error, and so on).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from ..errors import LiftError
from .layers import get_layer


class WrongResult(LiftError):
    """The kernel ran but its output does not match the reference."""

    from .store import Status as _S

    status = _S.WRONG_RESULT


@lru_cache(maxsize=4)
def _layer_data(spec: str, seed: int):
    from .conv import layer_inputs

    return layer_inputs(get_layer(spec), seed)


@lru_cache(maxsize=64)
def _program(text: str):
    from ..ir.parser import parse_program

    return parse_program(text)


def evaluate_point(payload: dict) -> dict:
    """Build, run, time and validate one (variant, configuration) on a layer; returns metrics."""
    from ..host.kernel import CompiledPipeline, compile_program
    from .conv import layer_sizes, to_reference_layout
    from .references import validate

    layer = get_layer(payload["layer"])
    program = _program(payload["program"])
    sizes = {**layer_sizes(layer), **payload["config"]}
    compiled = compile_program(program, sizes, device=payload.get("device"), placements=payload.get("placements") or {})
    inputs, expected = _layer_data(layer.spec, payload.get("seed", 0))
    result = compiled.run(*inputs, repeat=payload.get("repeat", 5), warmup=payload.get("warmup", 1))
    check = validate(to_reference_layout(result.output, layer), expected)
    if not check.ok:
        raise WrongResult(check.message)
    kernels = compiled.kernels if isinstance(compiled, CompiledPipeline) else [(compiled, "out")]
    source = compiled.source
    return {
        "time_ms": result.time_ms,
        "bytes": result.device_bytes,
        "source_hash": hashlib.sha1(source.encode()).hexdigest()[:16],
        "max_error": check.max_abs_error,
        "kernels": len(kernels),
        "kernel_ms": list(getattr(compiled, "kernel_times_ms", (result.time_ms,))),
        "launches": [str(k.launch) for k, _ in kernels],
        "local_bytes": sum(k.plan.local_bytes for k, _ in kernels),
        "private_bytes": max(k.plan.private_bytes for k, _ in kernels),
        "device": compiled.device.key,
    }


def kernel_source(payload: dict) -> str:
    """The OpenCL source of a stored point (for ``liftpy show``), generated again in this process."""
    from ..codegen.kernel import generate_kernel
    from ..ir.kernels import split_kernels
    from .conv import layer_sizes

    layer = get_layer(payload["layer"])
    program = _program(payload["program"])
    sizes = {**layer_sizes(layer), **payload["config"]}
    placements = payload.get("placements") or {}
    parts = []
    stages = split_kernels(program)
    for i, st in enumerate(stages):
        place = {k: v for k, v in placements.items() if k in {p.name for p in st.program.params}}
        ks = generate_kernel(st.program, sizes, placements=place)
        parts.append(f"// ===== kernel {i + 1} of {len(stages)}: writes {st.output} =====\n{ks.source}")
    return "\n".join(parts)
