"""Registers per work-item, and how work-items of a group share them (Romou, section 3.1, Listing 1).

For each count n of live float values (one kernel per n, one program for the sweep) and each work-group
size w, one work-group runs the ring-multiply loop; the curve is the time per multiply.

* ``registers_per_item``: with one work-item, the last n before the time per multiply rises 1.3x and stays
  up to the end of the sweep (spilling only grows with n; a rise that falls back is not spilling).  Where the compiler reports private memory per work-item, a jump in it at the same n
  confirms the step; if only the compiler's figure jumps, it gives the value at lower confidence.
* ``register_pool``: where the driver shrinks a kernel's work-group limit (CL_KERNEL_WORK_GROUP_SIZE)
  below the device maximum as its register use grows (NVIDIA), the registers of one work-group's pool are
  at least n * limit(n); the largest such product over the counts that do not spill is the pool.
  Elsewhere, by timing: with w work-items the step comes at fewer values per item when they share one
  pool (Adreno: 384 x 181), and the pool is the median of w * n over the group sizes that hit the limit
  before the single work-item did.
* ``register_sharing``: ``pooled`` when the work-group limit shrinks with register use or some group size
  hits the limit below 3/4 of the single-item value, ``dedicated`` when neither happens within the sweep.
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from .context import ProbeContext
from .curves import Reading, first_step
from .results import Curve, Measurement, ProbeResult

STEP = 1.3
MIN_CONFIDENCE = 0.5  # below this a profile field is left to pyopencl (value null)


def _sweep(ctx: ProbeContext, kernels: dict, counts, items: int, out) -> tuple[list[int], list[float], int | None]:
    """Time per multiply (ns) for each count; stops at the first count the driver cannot launch with
    ``items`` work-items and returns the last launchable count as the limit."""
    xs, ys = [], []
    work = 1 << 12
    for n in counts:
        k = kernels[f"probe_registers_{n}"]
        if ctx.group_limit(k) < items:
            return xs, ys, (xs[-1] if xs else None)

        def args(iters, out=out):
            return (out, np.int32(iters), np.float32(1.0), np.float32(0.0))

        t = ctx.timer.calibrate(k, (items,), (items,), args, work=work, what=f"registers ({n} values, {items} items)")
        xs.append(n)
        ys.append(t.net / (t.work * n) * 1e9)
        work = max(1, t.work * n // (n + 8))  # the next count does more multiplies per iteration
    return xs, ys, None


def _private_jump(counts, private) -> int | None:
    """The last count before the compiler reports more private memory than at the smallest count."""
    if not private or min(private) < 0:
        return None
    for i in range(1, len(private)):
        if private[i] > private[0]:
            return counts[i - 1]
    return None


def probe_registers(ctx: ProbeContext) -> ProbeResult:
    plan = ctx.plan
    counts = list(plan.register_counts)
    kernels = ctx.kernels(*[K.registers(n) for n in counts])
    out = ctx.empty_buffer(4 * max(counts) + 4)
    single_x, single_y, _ = _sweep(ctx, kernels, counts, 1, out)
    step = first_step(single_x, single_y, STEP, to_end=True)
    if plan.register_refine and step.index is not None and step.index + 1 < len(single_x):
        lo, hi = single_x[step.index], single_x[step.index + 1]
        fine = [n for n in range(lo + 4, hi, 4)]
        if fine:
            fine_kernels = ctx.kernels(*[K.registers(n) for n in fine])
            fx, fy, _ = _sweep(ctx, fine_kernels, fine, 1, out)
            kernels.update(fine_kernels)
            merged = sorted(zip(single_x + fx, single_y + fy))
            single_x, single_y = [p[0] for p in merged], [p[1] for p in merged]
            step = first_step(single_x, single_y, STEP, to_end=True)
    private = [ctx.private_bytes(kernels[f"probe_registers_{n}"]) for n in single_x]
    pj = _private_jump(single_x, private)

    value, conf, method, note = step.value, step.confidence, f"one work-item; {step.method} in ns per multiply", step.note
    if pj is not None:
        if value is not None and abs(pj - value) <= max(8, 0.1 * value):
            conf = max(conf, 0.9)
            note = (note + "; " if note else "") + f"compiler-reported private memory grows after {pj} too"
        elif value is None:
            value, conf = pj, 0.7
            method = "compiler-reported private memory per work-item (CL_KERNEL_PRIVATE_MEM_SIZE) grows after this count"
            note = "timing shows no spill step; " + step.note
    r1 = int(value) if value is not None else None

    curves = [Curve("registers.items_1", tuple(single_x), tuple(single_y), "live float values per work-item",
                    "ns per multiply", group="registers", marks=((r1, "spill"),) if r1 else ())]
    if any(p >= 0 for p in private):
        curves.append(Curve("registers.private_bytes", tuple(single_x), tuple(float(max(p, 0)) for p in private),
                            "live float values per work-item", "private bytes reported by the compiler", group="registers.private"))

    limits: list[tuple[int, int]] = []  # (items, last count before a slowdown or the launch limit)
    for items in plan.register_items:
        if items == 1:
            continue
        xs, ys, launch_limit = _sweep(ctx, kernels, single_x, items, out)
        if xs:
            curves.append(Curve(f"registers.items_{items}", tuple(xs), tuple(ys), "live float values per work-item",
                                "ns per multiply", group="registers"))
        s = first_step(xs, ys, STEP, to_end=True) if len(xs) >= 3 else Reading(None, 0.0, "")
        if s.value is not None:
            limits.append((items, int(s.value)))
        elif launch_limit is not None:
            limits.append((items, launch_limit))
    if limits:
        curves.append(Curve("registers.limit", tuple(float(i) for i, _ in limits), tuple(float(n) for _, n in limits),
                            "work-items in the group", "live values before slowdown or launch limit", group="registers.limit"))

    device_max = ctx.reported.max_work_group_size
    group_limits = [(n, ctx.group_limit(kernels[f"probe_registers_{n}"])) for n in single_x]
    # a kernel that spills keeps only the registers a work-item may have, so only counts that fit tell the pool
    shrunk = [(n, lim) for n, lim in group_limits if lim < device_max and (r1 is None or n <= r1)]
    if shrunk:
        curves.append(Curve("registers.group_limit", tuple(float(n) for n, _ in group_limits), tuple(float(lim) for _, lim in group_limits),
                            "live float values per work-item", "kernel work-group limit", group="registers.group_limit"))
    shared = [(i, n) for i, n in limits if r1 is not None and n < 0.75 * r1]
    if shrunk:
        n_best, lim_best = max(shrunk, key=lambda p: p[0] * p[1])
        pool, pool_method = n_best * lim_best, "max over counts n of n x the kernel's work-group limit, where the limit is below the device maximum"
        sharing, s_conf, s_note = "pooled", 0.8, f"{n_best} live values allow {lim_best} work-items (device maximum {device_max})"
    elif r1 is None:
        pool, pool_method = None, "median over group sizes of items x live values at the slowdown"
        sharing, s_conf, s_note = None, 0.0, "no single-item register limit to compare with"
    elif shared:
        pool, pool_method = int(np.median([i * n for i, n in shared])), "median over group sizes of items x live values at the slowdown"
        sharing, s_conf, s_note = "pooled", min(conf, 0.9), ", ".join(f"{i} items: {n}" for i, n in shared)
    else:
        tested = [i for i in plan.register_items if i > 1]
        pool, pool_method = None, "median over group sizes of items x live values at the slowdown"
        sharing, s_conf, s_note = "dedicated", min(conf, 0.6), f"no group of {tested} items hits the limit earlier"
    measurements = (
        Measurement("registers_per_item", r1 if conf >= MIN_CONFIDENCE else None, "registers", method, conf,
                    note if conf >= MIN_CONFIDENCE or r1 is None else f"estimate {r1} below confidence {MIN_CONFIDENCE}; {note}"),
        Measurement("register_pool", pool, "registers", pool_method, s_conf if pool else 0.0,
                    s_note if pool else "no group size hit the limit before one work-item did"),
        Measurement("register_sharing", sharing, "kind",
                    "pooled if the work-group limit shrinks with register use or some group size hits the limit below 3/4 "
                    "of the single-item value", s_conf, s_note),
    )
    return ProbeResult("registers", measurements, tuple(curves))
