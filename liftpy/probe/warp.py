"""Warp width and the work-items one compute unit runs at once, by the latency-step method.

* ``warp_size``: many work-groups (several per compute unit, so the device is saturated) of w work-items
  each run four independent multiply-add chains; w sweeps 1, 2, 3, ...  A warp partly filled costs as much as a
  full one, so the time is a staircase a * ceil(w / warp) + b.  The warp is the best-fitting period among
  powers of two (at least two periods inside the sweep); the first 1.25x step must agree for full
  confidence (Romou, Fig. 7; ArchProbe WarpSizeMethodB).
* ``concurrent_items_per_cu``: one work-group of w work-items, one dependent multiply-add chain each.  While the
  compute unit can keep all of them in flight the time stays flat; beyond, each item adds its full time.
  The knee of a flat-then-proportional fit is the number of work-items the unit runs at once.
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from .context import ProbeContext
from .curves import first_step, hinge_knee, staircase_period
from .results import Curve, Measurement, ProbeResult

MIN_CONFIDENCE = 0.5


def _args(out):
    return lambda iters: (out, np.int32(iters), np.float32(0.999), np.float32(0.001))


def _sweep(ctx: ProbeContext, kernel, widths, shape, args, first) -> list[float]:
    """Time per loop iteration (ns, launch overhead removed) for each width; ``first`` is the calibrated
    timing of the first.  The iteration count halves whenever a launch grows past four times the target,
    so a device where every work-item costs its full time (a CPU) does not make the sweep quadratic."""
    iters = first.work
    out = [first.net / iters * 1e9]
    for w in widths[1:]:
        t = ctx.timer.measure(kernel, *shape(w), args(iters))
        out.append(max(t.seconds - first.overhead_s, 0.05 * t.seconds) / iters * 1e9)
        seconds = t.seconds
        while seconds > 4 * ctx.timer.target_s and iters > 1:
            iters //= 2
            seconds /= 2
    return out


def probe_warp(ctx: ProbeContext) -> ProbeResult:
    plan = ctx.plan
    ks = ctx.kernels(K.lane_chains(4), K.lane_chains(1))
    wide, single = ks["probe_lanes_4"], ks["probe_lanes_1"]

    widths = [w for w in plan.warp_widths if w <= ctx.group_limit(wide)]
    groups = plan.groups
    out = ctx.empty_buffer(4 * groups * max(widths + list(plan.knee_widths)))
    args = _args(out)
    base = ctx.timer.calibrate(wide, (groups,), (1,), args, work=256, what="warp staircase")
    per_iter = _sweep(ctx, wide, widths, lambda w: ((groups * w,), (w,)), args, base)
    period = staircase_period(widths, per_iter)
    step = first_step(widths, per_iter, 1.25)
    conf = period.confidence
    note = period.note
    if period.value is not None:
        if step.value == period.value:
            note += f"; first step after {int(step.value)} agrees"
        else:
            conf *= 0.6
            note += f"; first 1.25x step {'after ' + format(step.value, 'g') if step.value else 'not found'} disagrees"
    warp = int(period.value) if period.value is not None else None

    knee_widths = [w for w in plan.knee_widths if w <= ctx.group_limit(single)]
    kb = ctx.timer.calibrate(single, (1,), (1,), args, work=256, what="single-group concurrency")
    knee_t = _sweep(ctx, single, knee_widths, lambda w: ((w,), (w,)), args, kb)
    knee = hinge_knee(knee_widths, knee_t)

    curves = (
        Curve("warp.staircase", tuple(widths), tuple(per_iter), "work-items per group", f"ns per loop iteration ({groups} groups)",
              group="warp.staircase", marks=((warp, "warp" if conf >= MIN_CONFIDENCE else "warp?"),) if warp else ()),
        Curve("warp.single_group", tuple(knee_widths), tuple(knee_t), "work-items in the only group",
              "ns per loop iteration", group="warp.single_group", log_x=True, log_y=True,
              marks=((knee.value, "knee"),) if knee.value else ()),
    )
    measurements = (
        Measurement("warp_size", warp if conf >= MIN_CONFIDENCE else None, "work-items",
                    f"latency step over {groups} groups; {period.method}", conf,
                    note if conf >= MIN_CONFIDENCE or warp is None else f"estimate {warp} below confidence {MIN_CONFIDENCE}; {note}"),
        Measurement("concurrent_items_per_cu", int(knee.value) if knee.value else None, "work-items",
                    f"one work-group, one dependent multiply-add chain per item; {knee.method}", knee.confidence, knee.note),
    )
    return ProbeResult("warp", measurements, curves)
