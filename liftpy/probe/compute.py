"""fp32 fma throughput, scalar and vector (ArchProbe Gflops; clpeak compute_sp).

Each work-item runs eight independent multiply-add chains (so the latency is hidden on every lane) of
float, float2, ... float16, with several work-groups per compute unit.  Each chain step is written three
ways (fma(), mad(), x * a + b) because compilers differ in which reaches full rate; a width's rate is the
best form's.  GFLOP/s = 2 * multiply-adds / net time.

* ``fp32_scalar_gflops``: float chains.
* ``fp32_vector_gflops`` and ``fp32_vector_width``: the best vector width.
* ``fp32_gflops``: the best of all: the compute ceiling of the roofline.
* ``fp32_lanes_per_cu``: fp32_gflops / (2 * reported maximum clock * compute units), the fp32 lanes
  (ALUs) of one compute unit, which no latency step can show; lower when the clock under load is below
  the reported maximum.
Confidence is the agreement of the repeated launches of the kept variant.
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from .bandwidth import rate_confidence
from .context import ProbeContext
from .results import Curve, Measurement, ProbeResult

CHAINS, UNROLL = 8, 8


def probe_compute(ctx: ProbeContext) -> ProbeResult:
    widths = list(ctx.plan.compute_widths)
    forms = list(K.FMA_FORMS)
    ks = ctx.kernels(*(K.fma_throughput(w, f, CHAINS, UNROLL) for w in widths for f in forms))
    out = ctx.empty_buffer(4 * ctx.plan.groups * ctx.plan.group_size)
    rates, timings, best_forms, curves = [], [], [], []
    by_form: dict[str, list[float]] = {f: [] for f in forms}
    work = 16
    for w in widths:
        best = None
        for f in forms:
            k = ks[f"probe_fma_{f}_{'float' if w == 1 else f'float{w}'}"]
            local = min(ctx.plan.group_size, ctx.group_limit(k))
            g = ctx.plan.groups * local
            t = ctx.timer.calibrate(k, (g,), (local,), lambda it: (out, np.int32(it), np.float32(0.999), np.float32(0.001)),
                                    work=work, what=f"fp32 {f}, width {w}")
            rate = g * t.work * 2 * CHAINS * UNROLL * w / t.net / 1e9
            by_form[f].append(rate)
            if best is None or rate > best[0]:
                best = (rate, t, f)
            work = max(1, t.work // 2)
        rates.append(best[0])
        timings.append(best[1])
        best_forms.append(best[2])
    top = int(np.argmax(rates))
    vec = [i for i, w in enumerate(widths) if w > 1]
    bv = max(vec, key=lambda i: rates[i]) if vec else top
    what = f"{CHAINS} independent multiply-add chains per work-item, {ctx.plan.groups} groups"

    def how(i: int) -> str:
        return f"{what}; {'float' if widths[i] == 1 else f'float{widths[i]}'} written as {best_forms[i]}"

    measurements = (
        Measurement("fp32_gflops", round(rates[top], 3), "GFLOP/s", f"best of widths {widths} and forms {forms}: {how(top)}",
                    rate_confidence(timings[top])),
        Measurement("fp32_scalar_gflops", round(rates[0], 3), "GFLOP/s", how(0), rate_confidence(timings[0])),
        Measurement("fp32_vector_gflops", round(rates[bv], 3), "GFLOP/s", f"best vector width: {how(bv)}", rate_confidence(timings[bv])),
        Measurement("fp32_vector_width", widths[top], "floats", "width of the fastest variant", rate_confidence(timings[top]),
                    ", ".join(f"{w}: {r:.4g}" for w, r in zip(widths, rates)) + " GFLOP/s"),
    )
    clock, cus = ctx.reported.clock_mhz, ctx.reported.compute_units
    if clock > 0 and cus > 0:
        lanes = rates[top] * 1e9 / (2 * clock * 1e6 * cus)
        measurements += (Measurement("fp32_lanes_per_cu", round(lanes, 2), "lanes",
                                     f"fp32_gflops / (2 x reported max clock {clock} MHz x {cus} compute units)",
                                     0.8 * rate_confidence(timings[top]), "counts every lane busy at the reported clock"),)
    for f in forms:
        curves.append(Curve(f"compute.fp32_{f}", tuple(widths), tuple(by_form[f]), "vector width", "GFLOP/s", group="compute", log_x=True))
    return ProbeResult("compute", measurements, tuple(curves))
