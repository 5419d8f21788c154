"""Kernel launch overhead (clpeak kernel_latency, with each definition named).

A kernel that does nothing is launched ``launch_count`` times in three ways; each number is a median,
because launch cost is what every launch pays, not a best case:

* ``launch_overhead_us``: host wall time per launch when launches are queued back to back (the cost per
  kernel in a pipeline of small kernels).
* ``launch_roundtrip_us``: host wall time of one enqueue followed by waiting for it.
* ``empty_kernel_us``: the profiling event's END - START of the empty kernel (the device-side floor).
Confidence: 1 minus the interquartile range over the median of the round trips (clipped to [0, 1]).
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from .context import ProbeContext
from .results import Curve, Measurement, ProbeResult


def probe_launch(ctx: ProbeContext) -> ProbeResult:
    k = ctx.kernels(K.empty())["probe_empty"]
    local = min(ctx.plan.group_size, ctx.group_limit(k))
    out = ctx.empty_buffer(4 * local)
    args = (out, np.int32(0))
    n = ctx.plan.launch_count
    pipelined, single = ctx.timer.wall(k, (local,), (local,), args, n)
    events = ctx.timer.run(k, (local,), (local,), args, n)
    single_us = np.array(single) * 1e6
    q1, med, q3 = np.percentile(single_us, [25, 50, 75])
    conf = float(np.clip(1.0 - (q3 - q1) / med, 0.0, 1.0))
    ev_us = np.array(events) * 1e6
    eq1, emed, eq3 = np.percentile(ev_us, [25, 50, 75])
    measurements = (
        Measurement("launch_overhead_us", round(pipelined * 1e6, 3), "us",
                    f"host wall time per launch, {n} launches queued back to back", conf),
        Measurement("launch_roundtrip_us", round(float(med), 3), "us", f"median host wall time of enqueue + wait, {n} launches", conf),
        Measurement("empty_kernel_us", round(float(emed), 3), "us", f"median event END - START of an empty kernel, {n} launches",
                    float(np.clip(1.0 - (eq3 - eq1) / max(emed, 1e-9), 0.0, 1.0))),
    )
    curves = (
        Curve("launch.roundtrip", tuple(range(n)), tuple(single_us), "launch", "us (enqueue + wait)", group="launch"),
        Curve("launch.event", tuple(range(n)), tuple(ev_us), "launch", "us (event END - START)", group="launch"),
    )
    return ProbeResult("launch", measurements, curves)
