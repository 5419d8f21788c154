"""The running order of one work-group's work-items (Romou, Listing 3 and Fig. 8).

Each work-item of the largest group takes a ticket from a local atomic counter.  Read off the tickets:

* ``running_order_run``: neighbouring work-items whose tickets rise by the same step ran as one unit (a
  warp): step 1 when warps take their tickets one after another, step k when k warps take them in turn.
  The run length is the most common length of such runs, and the confidence is the share of runs that
  start at a multiple of it (scaled down for runs shorter than four, which any random order has).  When the whole group is in id order, no unit is visible and the run is the
  group (low confidence).
* ``running_order_items``: the number of runs whose ticket ranges overlap (warps that ran interleaved)
  times the run length: the work-items that were running at once.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from . import kernels as K
from .context import ProbeContext
from .errors import ProbeError
from .results import Curve, Measurement, ProbeResult


def analyse(tickets: np.ndarray) -> tuple[int, float, int]:
    """(run length, confidence, work-items running at once) of one ticket array."""
    n = len(tickets)
    starts = [0]
    i = 0
    while i < n - 1:
        step = tickets[i + 1] - tickets[i]
        j = i + 1
        while step > 0 and j < n - 1 and tickets[j + 1] - tickets[j] == step:
            j += 1
        i = j + 1 if step > 0 else j
        if i < n:
            starts.append(i)
    if len(starts) == 1:
        return n, 0.2, n
    run = Counter(np.diff(starts + [n]).tolist()).most_common(1)[0][0]
    aligned = sum(1 for b in starts[1:] if b % run == 0) / (len(starts) - 1) * min(1.0, (run - 1) / 3)
    spans = [(tickets[a:a + run].min(), tickets[a:a + run].max()) for a in range(0, n - run + 1, run)]
    overlaps = [sum(1 for lo2, hi2 in spans if lo2 <= hi and hi2 >= lo) for lo, hi in spans]
    return int(run), float(aligned), int(np.median(overlaps)) * int(run)


def probe_running_order(ctx: ProbeContext) -> ProbeResult:
    k = ctx.kernels(K.running_order())["probe_running_order"]
    n = min(1024, ctx.group_limit(k))
    buf = ctx.empty_buffer(4 * n)
    readings = []
    first = None
    for _ in range(ctx.plan.order_launches):
        ctx.timer.run(k, (n,), (n,), (buf,))
        tickets = ctx.read(buf, np.int32, n)
        if not np.array_equal(np.sort(tickets), np.arange(n)):
            raise ProbeError(f"the {n} tickets from local atomic_inc on {ctx.device.info.name} are not 0..{n - 1}: "
                             "local atomics do not work as OpenCL requires; report the driver version")
        if first is None:
            first = tickets
        readings.append(analyse(tickets))
    run = Counter(r[0] for r in readings).most_common(1)[0][0]
    same = [r for r in readings if r[0] == run]
    agree = len(same) / len(readings)
    aligned = float(np.mean([r[1] for r in same]))
    items = int(np.median([r[2] for r in same]))
    conf = aligned * agree
    note = "all work-items took tickets in id order" if run == n else f"{len(readings)} launches of {n} work-items"
    return ProbeResult(
        "running_order",
        (
            Measurement("running_order_run", run, "work-items",
                        "most common length of runs of consecutive tickets in id order", conf, note),
            Measurement("running_order_items", items, "work-items",
                        "runs with overlapping ticket ranges times the run length", conf * 0.8, note),
        ),
        (Curve("running_order.tickets", tuple(range(n)), tuple(float(t) for t in first), "work-item id", "ticket (order of atomic_inc)",
               group="running_order"),),
    )
