"""Read bandwidths: global buffers (float and float4) and images against the working-set size, local
memory, constant memory (ArchProbe's *Bandwidth aspects, with the curve read instead of only its ends).

Throughput kernels run several work-groups per compute unit.  For a window of W bytes, work-item g reads
elements g, g + G, ... wrapped into the window, so neighbouring work-items read neighbouring elements
(buffers also try one contiguous run per work-item, which CPUs stream better, and keep the layout that
is faster at the largest window); the window decides which level serves the loads; every launch reads the whole window at least once, so a
window larger than the last cache streams from memory on every launch.  Bandwidth = bytes delivered to
work-items / net kernel time (launch overhead removed), in GB/s (1e9 bytes per second).  Each window is
timed on the way up and again on the way down, and the faster kept, so a burst of load from another
process does not bend the curve.

* ``cache_bandwidth_gbs`` / ``global_bandwidth_gbs`` (float4), the same ``_scalar_`` for float, and
  ``image_cache_bandwidth_gbs`` / ``image_bandwidth_gbs``: medians of the smallest windows (the fastest
  level) and of the largest windows (memory when they exceed the reported cache twice over).
* ``local_bandwidth_gbs``: each work-group reads its local tile; the best work-group size.
* ``constant_bandwidth_gbs``: all work-items read the same float4 at each step (broadcast); best window.
Confidence of a single rate is the agreement of its repeated launches; of a plateau, the agreement of its
points.
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels as K
from .context import ProbeContext
from .curves import edge_plateau
from .results import Curve, Measurement, ProbeResult
from .timing import Timing


def rate_confidence(t: Timing) -> float:
    """Agreement of the repeated launches: 1 when median and minimum agree, 0 when they differ by 30 %."""
    return float(np.clip(1.0 - math.log(t.median_s / t.seconds) / 0.3, 0.0, 1.0))


def _shape(ctx: ProbeContext, kernel) -> tuple[int, int]:
    local = min(ctx.plan.group_size, ctx.group_limit(kernel))
    return ctx.plan.groups * local, local


def _window_sweep(ctx: ProbeContext, kernel, windows, elem: int, loads: int, args_for) -> list[float]:
    g, l = _shape(ctx, kernel)
    timings = []
    work = 16
    for window in windows:
        n = window // elem
        covering = -(-n // (g * loads))
        t = ctx.timer.calibrate(kernel, (g,), (l,), args_for(n - 1), work=max(work, covering), work_min=covering,
                                what=f"{kernel.function_name} over {window} bytes")
        timings.append(t)
        work = t.work
    # A second pass, largest window first, with the calibrated work: interference from other processes only
    # adds time, and a burst of it that slowed a window on the way up seldom slows it again on the way down
    # (on a 2-core CPU shared with a test run, a single pass reported a cache plateau 40 % under memory).
    for i in reversed(range(len(windows))):
        t = timings[i]
        again = ctx.timer.measure(kernel, (g,), (l,), args_for(windows[i] // elem - 1)(t.work), t.work, t.overhead_s)
        if again.seconds < t.seconds:
            timings[i] = again
    return [g * t.work * loads * elem / t.net / 1e9 for t in timings]


def _edges(ctx: ProbeContext, windows, rates, prefix: str, what: str, cache_name: str, memory_name: str):
    count = 1 if ctx.plan.quick else 2
    first = edge_plateau(windows, rates, "first", 3)
    last = edge_plateau(windows, rates, "last", count)
    big_enough = ctx.reported.global_cache_bytes <= 0 or windows[-count] >= 2 * ctx.reported.global_cache_bytes
    note = "" if big_enough else (f"the largest windows ({windows[-count]} bytes) are under twice the reported cache "
                                  f"({ctx.reported.global_cache_bytes} bytes) and may be served by it")
    return (
        Measurement(cache_name, round(first.value, 3), "GB/s", f"{what}; {first.method} (smallest windows: the fastest level)",
                    first.confidence, f"windows {windows[0]}..{windows[min(2, len(windows) - 1)]} bytes"),
        Measurement(memory_name, round(last.value, 3), "GB/s", f"{what}; {last.method} (largest windows: memory)",
                    last.confidence * (1.0 if big_enough else 0.5), note or f"windows up to {windows[-1]} bytes"),
    )


def probe_buffer_bandwidth(ctx: ProbeContext) -> ProbeResult:
    windows = list(ctx.plan.bandwidth_windows)
    ks = ctx.kernels(*(K.read_buffer(w, layout) for w in (1, 4) for layout in K.BUFFER_LAYOUTS))
    data = ctx.buffer(ctx.rng(3).random(max(windows) // 4, dtype=np.float32))
    out = ctx.empty_buffer(4 * ctx.plan.groups * ctx.plan.group_size)
    measurements, curves = [], []
    for elem, t, suffix in ((16, "float4", ""), (4, "float", "_scalar")):
        def args(mask):
            return lambda it: (data, out, np.int32(it), np.uint32(mask))

        trial = {layout: _window_sweep(ctx, ks[f"probe_read_buffer_{t}_{layout}"], windows[-1:], elem, 4, args)[0]
                 for layout in K.BUFFER_LAYOUTS}
        layout = max(trial, key=trial.get)
        rates = _window_sweep(ctx, ks[f"probe_read_buffer_{t}_{layout}"], windows, elem, 4, args)
        what = f"{t} loads, {layout} layout (faster at the largest window: " + ", ".join(f"{k} {v:.3g}" for k, v in trial.items()) + " GB/s)"
        measurements += _edges(ctx, windows, rates, t, what, f"cache{suffix}_bandwidth_gbs", f"global{suffix}_bandwidth_gbs")
        curves.append(Curve(f"bandwidth.buffer_{t}", tuple(windows), tuple(rates), "window (bytes)", "GB/s",
                            group="bandwidth.buffer", log_x=True, log_y=True))
    return ProbeResult("buffer_bandwidth", tuple(measurements), tuple(curves))


def probe_image_bandwidth(ctx: ProbeContext) -> ProbeResult:
    ctx.require_images()
    windows = list(ctx.plan.image_windows)
    k = ctx.kernels(K.read_image())["probe_read_image"]
    width = ctx.plan.image_width
    texels = max(windows) // 16
    height = max(1, texels // width)
    img = ctx.image(ctx.rng(4).random((height, min(width, texels), 4), dtype=np.float32))
    out = ctx.empty_buffer(4 * ctx.plan.groups * ctx.plan.group_size)
    log2w = int(math.log2(min(width, texels)))
    rates = _window_sweep(ctx, k, windows, 16, 2,
                          lambda mask: (lambda it: (img, out, np.int32(it), np.uint32(mask), np.uint32(log2w))))
    measurements = _edges(ctx, windows, rates, "image", "read_imagef on RGBA float", "image_cache_bandwidth_gbs", "image_bandwidth_gbs")
    curve = Curve("bandwidth.image", tuple(windows), tuple(rates), "window (bytes)", "GB/s", group="bandwidth.image", log_x=True, log_y=True)
    return ProbeResult("image_bandwidth", measurements, (curve,))


def probe_local_bandwidth(ctx: ProbeContext) -> ProbeResult:
    elems = ctx.plan.local_tile_bytes // 16
    k = ctx.kernels(K.read_local(elems))["probe_read_local"]
    limit = ctx.group_limit(k)
    sizes = [min(ctx.plan.group_size, limit)] if ctx.plan.quick else [s for s in (64, 128, 256, 512, 1024) if s <= limit] or [limit]
    seed = ctx.buffer(ctx.rng(5).random(elems * 4, dtype=np.float32))
    out = ctx.empty_buffer(4 * ctx.plan.groups * max(sizes))
    rates, timings = [], []
    for local in sizes:
        g = ctx.plan.groups * local
        t = ctx.timer.calibrate(k, (g,), (local,), lambda it: (seed, out, np.int32(it)), work=64, what="local-memory reads")
        rates.append(g * t.work * 4 * 16 / t.net / 1e9)
        timings.append(t)
    best = int(np.argmax(rates))
    return ProbeResult("local_bandwidth", (
        Measurement("local_bandwidth_gbs", round(rates[best], 3), "GB/s",
                    f"float4 reads of a {elems * 16}-byte local tile; best work-group size ({sizes[best]})",
                    rate_confidence(timings[best]), f"work-group sizes {sizes}"),
    ), (Curve("bandwidth.local", tuple(sizes), tuple(rates), "work-group size", "GB/s", group="bandwidth.local"),))


def probe_constant_bandwidth(ctx: ProbeContext) -> ProbeResult:
    windows = list(ctx.plan.constant_windows)
    k = ctx.kernels(K.read_constant())["probe_read_constant"]
    table = ctx.buffer(ctx.rng(6).random(max(windows) // 4, dtype=np.float32))
    g, l = _shape(ctx, k)
    out = ctx.empty_buffer(4 * g)
    rates, timings = [], []
    for window in windows:
        mask = window // 16 - 1
        t = ctx.timer.calibrate(k, (g,), (l,), lambda it, m=mask: (table, out, np.int32(it), np.uint32(m)), work=16,
                                what=f"constant reads over {window} bytes")
        rates.append(g * t.work * 4 * 16 / t.net / 1e9)
        timings.append(t)
    best = int(np.argmax(rates))
    return ProbeResult("constant_bandwidth", (
        Measurement("constant_bandwidth_gbs", round(rates[best], 3), "GB/s",
                    f"uniform float4 reads (broadcast), bytes delivered to work-items; best window ({windows[best]} bytes)",
                    rate_confidence(timings[best]), f"windows {windows} bytes"),
    ), (Curve("bandwidth.constant", tuple(windows), tuple(rates), "window (bytes)", "GB/s", group="bandwidth.constant", log_x=True),))
