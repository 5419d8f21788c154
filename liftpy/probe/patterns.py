"""2D image access patterns as the number of work-items grows (TMModel, section 3.2.1, Fig. 3 and 4).

One work-group of t work-items reads RGBA float texels of a square image in one of four patterns with
growing cache-line reuse distance: ``column`` (neighbouring work-items read neighbouring texels of a row
at once: coalesced), ``row`` (each work-item walks its own row), ``block2`` and ``block4`` (each
work-item zigzags down 2 or 4 rows of its own).  Throughput = texel bytes / net time, for t from 1 to the
largest group.

* ``image_<pattern>_gbs``: throughput at the largest t (the group fills one compute unit).
* ``image_best_pattern``: the fastest pattern there; confidence from its lead over the runner-up.
The image is side x side texels (the plan's ``pattern_side``); footprints that fit a cache are served by
it, which is what a kernel reading that much would see.
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels as K
from .bandwidth import rate_confidence
from .context import ProbeContext
from .curves import confidence
from .results import Curve, Measurement, ProbeResult


def probe_image_patterns(ctx: ProbeContext) -> ProbeResult:
    ctx.require_images()
    side = ctx.plan.pattern_side
    img = ctx.image(ctx.rng(7).random((side, side, 4), dtype=np.float32))
    ks = ctx.kernels(*(K.image_pattern(p) for p in K.PATTERNS))
    out = ctx.empty_buffer(4 * max(ctx.plan.pattern_threads))
    measurements, curves, top = [], [], {}
    for pattern in K.PATTERNS:
        k = ks[f"probe_image_pattern_{pattern}"]
        threads = [t for t in ctx.plan.pattern_threads if t <= ctx.group_limit(k)]
        rates, timings = [], []
        work = 64
        for t in threads:
            tm = ctx.timer.calibrate(k, (t,), (t,), lambda steps: (img, out, np.int32(steps), np.int32(side)), work=work,
                                     what=f"image pattern {pattern} with {t} work-items")
            rates.append(t * tm.work * 16 / tm.net / 1e9)
            timings.append(tm)
            work = max(1, tm.work // 4)
        top[pattern] = rates[-1]
        measurements.append(Measurement(f"image_{pattern}_gbs", round(rates[-1], 4), "GB/s",
                                        f"one work-group of {threads[-1]} work-items reading in '{pattern}' order",
                                        rate_confidence(timings[-1]), f"image {side}x{side} RGBA float"))
        curves.append(Curve(f"image_patterns.{pattern}", tuple(threads), tuple(rates), "work-items in the group", "GB/s",
                            group="image_patterns", log_x=True, log_y=True))
    ranked = sorted(top.items(), key=lambda kv: -kv[1])
    lead = math.log(ranked[0][1] / ranked[1][1]) if len(ranked) > 1 else 0.0
    noise = max(1.0 - m.confidence for m in measurements) * 0.3
    measurements.append(Measurement("image_best_pattern", ranked[0][0], "pattern",
                                    "fastest pattern at the largest group", confidence(lead, noise),
                                    ", ".join(f"{p} {v:.3g}" for p, v in ranked) + " GB/s"))
    return ProbeResult("image_patterns", tuple(measurements), tuple(curves))
