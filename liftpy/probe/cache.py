"""Cache hierarchy by pointer chase, for buffers and for images (Romou, Listing 2; ArchProbe's
Buffer/ImageCacheHierarchyPChase).

One work-item follows a cycle of indices stored in the buffer (or of coordinates stored in RGBA uint32
texels), so every load waits for the previous one and the time per load is the latency of the level that
serves it.  Two sweeps:

* size: the cycle visits one element per 32-byte slot (buffer; at most the smallest plausible line, so
  every line of the footprint is used) or every texel (image) in random order, which defeats
  prefetchers.  Before timing, the cycle is walked once (within a time budget) so the caches hold what
  fits.  Latency against footprint is a rising staircase: each flat stretch spanning about an octave or
  more is a level (``curves.plateaus``); its last footprint is the level's size, its median the level's
  latency; stretches less than 1.3x apart are one level (TLB reach and replacement effects make such
  small steps).  The last stretch is memory, unless the curve still rises 1.3x beyond it: then it is a
  cache too, and the memory latency is read at the largest footprints (a lower bound).
* stride, per level: a footprint between this level and the next, cut into 4 KiB blocks visited in random
  order; inside a block the cycle visits every ``stride`` bytes, also in random order.  Each line costs one
  miss, so latency grows with the stride until the stride reaches the line and then stays: the line size
  is the knee (``curves.saturation_knee``).  On devices that fetch sectors smaller than a line (NVIDIA:
  32-byte sectors of 128-byte lines) this measures the fetch granularity.  Where pages are small (CPUs,
  4 KiB) and the footprint exceeds the TLB's reach, every block also costs a page miss, so the outer
  levels' line sizes read high; GPUs map memory in large pages.

The position in the cycle survives between launches (it is kept on the device), so launches continue
around the cycle instead of re-reading its start.  A short chase from a known start is checked against
the host's copy of the cycle once per medium.
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels as K
from .context import ProbeContext
from .curves import Level, confidence, log_noise, plateaus, saturation_knee
from .errors import ProbeError
from .results import Curve, Measurement, ProbeResult

MAX_CYCLE = 16 << 20  # accesses in one stride-sweep cycle; bounds host memory and set-up time
LEVEL_RATIO = 1.3  # a further cache level is at least this much slower; closer plateaus are one level


class _BufferMedium:
    name = "buffer"
    unit = 4  # bytes per chased element

    def __init__(self, ctx: ProbeContext, max_bytes: int):
        self.ctx = ctx
        self.kernel = ctx.kernels(K.chase_buffer())["probe_chase_buffer"]
        self.data = ctx.empty_buffer(max_bytes)
        self.state = ctx.empty_buffer(8)

    def load(self, order: np.ndarray) -> None:
        nxt = np.zeros(int(order.max()) + 1, dtype=np.uint32)
        nxt[order] = np.roll(order, -1)
        self.ctx.write(self.data, nxt)
        self.start(int(order[0]))

    def start(self, position: int) -> None:
        self.ctx.write(self.state, np.array([position, 0], dtype=np.uint32))

    def position(self) -> int:
        return int(self.ctx.read(self.state, np.uint32, 1)[0])

    def args(self, steps: int):
        return (self.data, self.state, np.int32(steps))


class _ImageMedium:
    name = "image"
    unit = 16  # bytes per RGBA uint32 texel

    def __init__(self, ctx: ProbeContext, width: int):
        ctx.require_images()
        self.ctx = ctx
        self.kernel = ctx.kernels(K.chase_image())["probe_chase_image"]
        self.max_width = width
        self.width = 1
        self.image = None
        self.state = ctx.empty_buffer(8)

    def load(self, order: np.ndarray) -> None:
        extent = int(order.max()) + 1
        self.width = min(self.max_width, extent)
        height = -(-extent // self.width)
        texels = np.zeros((height * self.width, 4), dtype=np.uint32)
        nxt = np.roll(order, -1)
        texels[order, 0] = nxt % self.width
        texels[order, 1] = nxt // self.width
        self.image = None  # free the previous image before allocating the next
        self.image = self.ctx.image(texels.reshape(height, self.width, 4))
        self.start(int(order[0]))

    def start(self, position: int) -> None:
        self.ctx.write(self.state, np.array([position % self.width, position // self.width], dtype=np.int32))

    def position(self) -> int:
        x, y = self.ctx.read(self.state, np.int32, 2)
        return int(y) * self.width + int(x)

    def args(self, steps: int):
        return (self.image, self.state, np.int32(steps))


def _latency_ns(ctx: ProbeContext, medium, order: np.ndarray, what: str) -> float:
    """Load the cycle, warm the caches with (up to) one walk around it, and time the chase."""
    medium.load(order)
    k = medium.kernel
    probe = int(min(len(order), 2048))
    per = min(ctx.timer.run(k, (1,), (1,), medium.args(probe))) / probe
    warm = int(min(len(order), ctx.plan.chase_warm_s / max(per, 1e-10)))
    chunk = max(1, int(0.05 / max(per, 1e-10)))  # keep every launch short (watchdogs)
    while warm > 0:
        ctx.timer.run(k, (1,), (1,), medium.args(min(warm, chunk)))
        warm -= chunk
    t = ctx.timer.calibrate(k, (1,), (1,), medium.args, work=max(64, int(ctx.timer.target_s / max(per, 1e-10))),
                            what=what)
    return t.net / t.work * 1e9


def _verify(ctx: ProbeContext, medium, order: np.ndarray) -> None:
    steps = int(min(len(order) * 2 + 3, 5000))
    medium.load(order)
    ctx.timer.run(medium.kernel, (1,), (1,), medium.args(steps))
    got, want = medium.position(), int(order[steps % len(order)])
    if got != want:
        raise ProbeError(f"the {medium.name} pointer chase on {ctx.device.info.name} ended at {got} after {steps} steps, "
                         f"the cycle says {want}: the kernel was miscompiled or the {medium.name} was not written")


def _size_order(rng, size: int, slot: int, unit: int) -> np.ndarray:
    count = max(2, size // slot)
    return (rng.permutation(count) * (slot // unit)).astype(np.uint32)


def _stride_order(rng, footprint: int, stride: int, block: int, unit: int) -> np.ndarray:
    blocks = footprint // block
    per = block // stride
    offsets = np.arange(per, dtype=np.uint32) * (stride // unit)
    inner = offsets[np.argsort(rng.random((blocks, per)), axis=1)]
    return (rng.permutation(blocks).astype(np.uint32)[:, None] * (block // unit) + inner).ravel()


def _line_footprint(sizes: list[int], i: int, limit: int, block: int) -> int:
    """A footprint that misses level i but fits the next level where there is one."""
    c = sizes[i]
    nxt = sizes[i + 1] if i + 1 < len(sizes) else None
    r = 4 * c if nxt is None else min(4 * c, nxt // 2)
    if nxt is not None and r < 2 * c:
        r = int(math.sqrt(c * nxt))
    r = min(r, limit)
    return max(2 * block, r // block * block)


def _level_confidence(levels: list[Level], i: int, x, noise: float) -> float:
    lv = levels[i]
    span = math.log2(x[lv.end] / x[lv.start]) if lv.end > lv.start else 0.0
    ratio = levels[i + 1].value / lv.value if i + 1 < len(levels) else 2.0
    return confidence(math.log(max(ratio, 1.0)), noise, min(1.0, span / 2.0))


def chase(ctx: ProbeContext, medium) -> ProbeResult:
    plan = ctx.plan
    name = medium.name
    rng = ctx.rng(1 if name == "buffer" else 2)
    slot = plan.chase_slot if name == "buffer" else medium.unit
    sizes = list(plan.chase_sizes if name == "buffer" else plan.image_chase_sizes)
    _verify(ctx, medium, _size_order(rng, min(sizes[-1], 64 << 10), slot, medium.unit))
    lat = [_latency_ns(ctx, medium, _size_order(rng, s, slot, medium.unit), f"{name} chase over {s} bytes") for s in sizes]

    levels = plateaus(sizes, lat, tol=0.15, min_octaves=0.9 if plan.octave_points >= 3 else 1.0, min_ratio=LEVEL_RATIO)
    noise = log_noise(np.log(lat))
    tail = float(np.median(lat[-2:]))
    rising = bool(levels) and levels[-1].end < len(sizes) - 1 and tail > 1.3 * levels[-1].value
    caches = levels if rising else levels[:-1]
    level_bytes = [int(sizes[lv.end]) for lv in caches]
    measurements = [Measurement(f"{name}_cache_levels", len(caches), "levels",
                                "flat stretches (about an octave or more) of latency against footprint, less the last",
                                min([_level_confidence(levels, i, sizes, noise) for i in range(len(caches))] or [0.3]),
                                f"footprints {sizes[0]}..{sizes[-1]} bytes")]
    curves = [Curve(f"{name}_cache.latency", tuple(sizes), tuple(lat), "footprint (bytes)", "ns per dependent load",
                    group=f"{name}_cache.latency", log_x=True, log_y=True,
                    marks=tuple((b, f"L{i + 1}") for i, b in enumerate(level_bytes)))]
    for i, lv in enumerate(caches):
        conf = _level_confidence(levels, i, sizes, noise)
        nxt = sizes[lv.end + 1] if lv.end + 1 < len(sizes) else None
        measurements.append(Measurement(f"{name}_l{i + 1}_bytes", level_bytes[i], "bytes",
                                        "plateau: last footprint of the level's flat stretch", conf,
                                        f"the level ends between {level_bytes[i]} and {nxt} bytes" if nxt else ""))
        measurements.append(Measurement(f"{name}_l{i + 1}_latency_ns", round(lv.value, 3), "ns",
                                        "plateau: median latency of the level's flat stretch",
                                        conf * float(np.clip(1.0 - lv.spread / 0.1, 0.0, 1.0))))
    if rising or not levels:
        measurements.append(Measurement(
            f"{name}_memory_latency_ns", round(tail, 3), "ns", "median latency of the two largest footprints", 0.4,
            f"the curve still rises at the largest footprint ({sizes[-1]} bytes): memory latency is at least this"))
    else:
        last = levels[-1]
        measurements.append(Measurement(
            f"{name}_memory_latency_ns", round(last.value, 3), "ns",
            "plateau: median latency of the last flat stretch (memory if the sweep passes the last cache)",
            min(1.0, (last.end - last.start + 1) / 3), f"largest footprint {sizes[-1]} bytes"))

    for i in range(min(len(caches), plan.chase_levels)):
        footprint = _line_footprint(level_bytes, i, sizes[-1], plan.chase_block)
        strides = [s for s in plan.chase_strides if s >= medium.unit and footprint // s <= MAX_CYCLE]
        ys = [_latency_ns(ctx, medium, _stride_order(rng, footprint, s, plan.chase_block, medium.unit),
                          f"{name} stride {s} over {footprint} bytes") for s in strides]
        knee = saturation_knee(strides, ys)
        measurements.append(Measurement(f"{name}_l{i + 1}_line_bytes", int(knee.value) if knee.value else None, "bytes",
                                        f"stride sweep over {footprint} bytes; {knee.method}", knee.confidence, knee.note))
        curves.append(Curve(f"{name}_cache.line_l{i + 1}", tuple(strides), tuple(ys), "stride inside a block (bytes)",
                            "ns per dependent load", group=f"{name}_cache.line", log_x=True,
                            marks=((knee.value, "line"),) if knee.value else ()))
    return ProbeResult(f"{name}_cache", tuple(measurements), tuple(curves))


def probe_buffer_cache(ctx: ProbeContext) -> ProbeResult:
    return chase(ctx, _BufferMedium(ctx, max(ctx.plan.chase_sizes)))


def probe_image_cache(ctx: ProbeContext) -> ProbeResult:
    ctx.require_images()
    return chase(ctx, _ImageMedium(ctx, min(4096, ctx.reported.image2d_max[0])))
