"""The list of probes and running a selection of them on one device.

A probe that cannot apply (no image support) is recorded as skipped; one that fails with a liftpy error
(the compiler rejects a kernel, a launch fails, a result shows the work was deleted) is recorded as
failed with the reason, and the others still run.  Any other exception is a defect in the probe; it is
recorded as failed too ("internal error ..."), because a run on a borrowed GPU is too costly to lose to
one probe.  ``on_done`` gets a snapshot of the run after every probe, so a caller can save progress.  Buffers are released between probes so a large GPU
sweep does not keep the previous probe's memory.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable

from ..errors import LiftError
from ..host.device import Device
from .bandwidth import probe_buffer_bandwidth, probe_constant_bandwidth, probe_image_bandwidth, probe_local_bandwidth
from .cache import probe_buffer_cache, probe_image_cache
from .compute import probe_compute
from .context import ProbeContext
from .errors import ProbeError, ProbeNotApplicable
from .half import probe_half
from .launch import probe_launch
from .order import probe_running_order
from .patterns import probe_image_patterns
from .plan import ProbePlan, Reported, make_plan, reported
from .registers import probe_registers
from .results import ProbeResult
from .timing import Timer
from .warp import probe_warp


@dataclass(frozen=True)
class Probe:
    name: str
    run: Callable[[ProbeContext], ProbeResult]
    summary: str


PROBES: tuple[Probe, ...] = (
    Probe("launch", probe_launch, "kernel launch overhead"),
    Probe("compute", probe_compute, "fp32 multiply-add throughput, scalar and vector"),
    Probe("registers", probe_registers, "registers per work-item and their sharing (Romou Listing 1)"),
    Probe("warp", probe_warp, "warp width and work-items a compute unit runs at once (latency steps)"),
    Probe("running_order", probe_running_order, "running order of a work-group (Romou Listing 3)"),
    Probe("buffer_cache", probe_buffer_cache, "buffer cache levels: size, line, latency (pointer chase)"),
    Probe("image_cache", probe_image_cache, "image cache levels: size, line, latency (pointer chase)"),
    Probe("image_patterns", probe_image_patterns, "2D image access patterns row/column/block (TMModel)"),
    Probe("buffer_bandwidth", probe_buffer_bandwidth, "global-memory bandwidth against window, float and float4"),
    Probe("image_bandwidth", probe_image_bandwidth, "read_imagef bandwidth against window"),
    Probe("local_bandwidth", probe_local_bandwidth, "local-memory bandwidth"),
    Probe("constant_bandwidth", probe_constant_bandwidth, "constant-memory bandwidth"),
    Probe("half_arithmetic", probe_half, "whether half + - * / and mad build and compute right (cl_khr_fp16)"),
)


@dataclass(frozen=True)
class ProbeRun:
    identity: dict  # platform, name, driver, version, type
    reported: Reported
    plan: ProbePlan
    date: str
    results: tuple[ProbeResult, ...]
    seconds: float


def select(only: Iterable[str] | None) -> tuple[Probe, ...]:
    if not only:
        return PROBES
    names = [n.strip() for n in only if n.strip()]
    known = {p.name for p in PROBES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ProbeError(f"unknown probe {', '.join(unknown)}; the probes are: {', '.join(p.name for p in PROBES)}")
    return tuple(p for p in PROBES if p.name in names)


def run_probes(device: Device, quick: bool = False, only: Iterable[str] | None = None, seed: int = 0,
               on_start: Callable[[int, int, Probe], None] | None = None,
               on_done: Callable[[int, int, ProbeResult, "ProbeRun"], None] | None = None) -> ProbeRun:
    probes = select(only)
    rep = reported(device)
    plan = make_plan(rep, quick)
    ctx = ProbeContext(device, plan, rep, Timer(device, plan.target_s, plan.repeats, plan.warmup), seed)
    started = time.perf_counter()
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    info = device.info
    identity = {"platform": info.platform, "name": info.name, "driver": info.driver, "version": info.version, "type": info.type}
    results = []
    for i, probe in enumerate(probes, 1):
        if on_start:
            on_start(i, len(probes), probe)
        t0 = time.perf_counter()
        try:
            result = probe.run(ctx)
        except ProbeNotApplicable as e:
            result = ProbeResult(probe.name, status="skipped", reason=str(e))
        except LiftError as e:
            result = ProbeResult(probe.name, status="failed", reason=str(e).strip().splitlines()[0])
        except Exception as e:  # noqa: BLE001 - see the module docstring
            result = ProbeResult(probe.name, status="failed",
                                 reason=f"internal error ({type(e).__name__}): {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
        gc.collect()
        result = ProbeResult(result.probe, result.measurements, result.curves, result.status, result.reason,
                             time.perf_counter() - t0)
        results.append(result)
        if on_done:
            on_done(i, len(probes), result, ProbeRun(identity, rep, plan, date, tuple(results), time.perf_counter() - started))
    return ProbeRun(identity, rep, plan, date, tuple(results), time.perf_counter() - started)
