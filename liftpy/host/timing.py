"""How a time is taken from repeated runs, by where the runs execute.

On a GPU a kernel's time is the median of its timed runs (``repeat``, five by default in an exploration):
the device runs one kernel at a time and its runs agree closely.

On a CPU the OpenCL device (PoCL) shares the host's cores with everything else on the machine, and its
times come in regimes: on the 2-core machine this project tests on, one tiling of the reduced VGG-16 layer 7
ran at 0.98 ms for a dozen consecutive runs, then at 0.58, then at 0.37, with nothing else of ours running.
The median of five runs reports whichever regime the point happened to meet.  The fastest of many runs is
what the kernel takes when nothing interferes, and it is what repeats: 150 points of that layer, measured in
four rounds of 40 runs each (alternating between points), ranked alike round against round at Kendall tau

    median of 5: 0.754    fastest of 5: 0.765    fastest of 20: 0.794    fastest of 40: 0.838

(median of 40: 0.766; ``benchmarks/tau_ceiling.py --remeasure 150 --rounds 4``, its ``rules_tau``, in
``benchmarks/results/pocl-tau-ceiling.json``).  Forty runs of those kernels (0.02-3 ms each) cost less than
building one.  So everything timed on a CPU, liftpy's kernels on a CPU device and the references that run on
the host, is timed alike (``cpu_timing``): the fastest of at least 40 runs, or of the runs that fit in
``CPU_BUDGET_MS`` of timed runs (at least ``MIN_RUNS``): forty runs of a 300 ms point (a variant
recomputing each row's maximum in every work-item) took 12 s of an exploration for a point far from the
best, and the references on the host already stop after about two seconds.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

CPU_RUNS = 40
CPU_BUDGET_MS = 2000.0
MIN_RUNS = 3


@dataclass(frozen=True)
class TimingRule:
    """``runs`` timed runs (after warm-up), summarised by ``statistic``: ``median`` or ``fastest``."""

    runs: int
    statistic: str = "median"
    budget_ms: float | None = None  # timed runs end once they add up to this (after MIN_RUNS of them)

    def __post_init__(self) -> None:
        if self.statistic not in ("median", "fastest"):
            raise ValueError(f"unknown timing statistic {self.statistic!r} (median or fastest)")

    def enough(self, times_ms: Sequence[float]) -> bool:
        """Whether the timed runs so far end the timing before ``runs`` of them."""
        return self.budget_ms is not None and len(times_ms) >= MIN_RUNS and sum(times_ms) >= self.budget_ms

    def of(self, times_ms: Sequence[float]) -> float:
        return min(times_ms) if self.statistic == "fastest" else statistics.median(times_ms)

    def runs_read(self, times_ms: Sequence[float]) -> list[int]:
        """The indices of the runs ``of`` reads: the fastest, or the middle one (two, for an even count).
        A pipeline's kernels are reported from these runs, so that their times add up to the pipeline's:
        each kernel's own fastest run comes from a different run on a noisy CPU, and those added up to a
        fifth of the fastest whole run (1.5 of 7 us, two 8x8 products on a 2-core machine)."""
        order = sorted(range(len(times_ms)), key=times_ms.__getitem__)
        if self.statistic == "fastest":
            return order[:1]
        mid = len(order) // 2
        return order[mid:mid + 1] if len(order) % 2 else order[mid - 1:mid + 1]

    def __str__(self) -> str:
        within = f" within {self.budget_ms / 1000:g} s" if self.budget_ms is not None else ""
        return f"{self.statistic} of {self.runs} run{'s' if self.runs != 1 else ''}{within}"


def cpu_timing(repeat: int) -> TimingRule:
    """How runs on a CPU are timed when ``repeat`` runs were asked for (module docstring)."""
    return TimingRule(max(repeat, CPU_RUNS), "fastest", CPU_BUDGET_MS)


def device_timing(device_type: str, repeat: int) -> TimingRule:
    """How a kernel on an OpenCL device of ``device_type`` (``DeviceInfo.type``: ``GPU``, ``CPU``, ...) is
    timed when ``repeat`` runs were asked for.  A simulator calling itself a GPU and a CPU (Oclgrind) is
    timed as a GPU: its times mean nothing, and forty runs of it take long."""
    kinds = device_type.split("/")
    return cpu_timing(repeat) if "CPU" in kinds and "GPU" not in kinds else TimingRule(max(repeat, 1))
