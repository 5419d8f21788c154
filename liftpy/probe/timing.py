"""Timing kernels with OpenCL profiling events, calibrated to beat timer resolution and launch overhead.

A measurement launches a kernel ``warmup`` times untimed and then ``repeats`` times back to back, and
keeps the event time (END - START) of each.  The estimate is the *minimum*: on a shared machine
interference only ever adds time, so the fastest run is the least disturbed one (the median is kept for
the record).  Calibration grows the kernel's work argument until one launch takes ``target_s``; if the
work reaches its cap while the time stays far below the target, the compiler has deleted the timed loop
and the probe stops with ``ProbeError`` (ArchProbe's ``ensure_min_niter`` check).  ``overhead`` is the
time of the same launch with no work, subtracted where a probe divides time by work.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import KernelRunError
from ..host.device import Device, _cl
from .errors import ProbeError


@dataclass(frozen=True)
class Timing:
    seconds: float  # fastest of the timed launches
    median_s: float
    runs: tuple[float, ...]
    work: int  # the work argument the launches used
    overhead_s: float = 0.0  # the same launch with no work (0 when not measured)

    @property
    def net(self) -> float:
        """Time of the work alone; never below 5 % of the launch, so a noisy overhead cannot make it vanish."""
        return max(self.seconds - self.overhead_s, 0.05 * self.seconds)


ArgsFor = Callable[[int], Sequence]


class Timer:
    """Launches and times kernels on one device's profiling queue."""

    def __init__(self, device: Device, target_s: float, repeats: int, warmup: int):
        self.device = device
        self.target_s = target_s
        self.repeats = max(1, repeats)
        self.warmup = max(0, warmup)
        self.launches = 0

    def _enqueue(self, kernel, gsize, lsize, args):
        cl = _cl()
        try:
            return kernel(self.device.queue, tuple(gsize), None if lsize is None else tuple(lsize), *args)
        except cl.Error as e:
            raise KernelRunError(
                f"launching probe kernel {kernel.function_name} with global {tuple(gsize)} and local "
                f"{None if lsize is None else tuple(lsize)} failed on {self.device.info.name}: {e}"
            ) from None

    def run(self, kernel, gsize, lsize, args, count: int = 1) -> list[float]:
        """Launch ``count`` times back to back; the event time of each, in seconds."""
        cl = _cl()
        events = [self._enqueue(kernel, gsize, lsize, args) for _ in range(count)]
        try:
            events[-1].wait()
            self.device.queue.finish()
            times = [(ev.profile.end - ev.profile.start) * 1e-9 for ev in events]
        except cl.Error as e:
            raise KernelRunError(f"probe kernel {kernel.function_name} failed on {self.device.info.name}: {e}") from None
        self.launches += count
        return times

    def wall(self, kernel, gsize, lsize, args, count: int) -> tuple[float, list[float]]:
        """Host wall time per launch when ``count`` launches are queued back to back, and the wall time of
        each of ``count`` launches enqueued and waited for one at a time."""
        self.run(kernel, gsize, lsize, args, 1)
        t0 = time.perf_counter()
        events = [self._enqueue(kernel, gsize, lsize, args) for _ in range(count)]
        events[-1].wait()
        self.device.queue.finish()
        pipelined = (time.perf_counter() - t0) / count
        single = []
        for _ in range(count):
            t0 = time.perf_counter()
            self._enqueue(kernel, gsize, lsize, args).wait()
            single.append(time.perf_counter() - t0)
        self.launches += 2 * count + 1
        return pipelined, single

    def measure(self, kernel, gsize, lsize, args, work: int = 0, overhead_s: float = 0.0) -> Timing:
        if self.warmup:
            self.run(kernel, gsize, lsize, args, self.warmup)
        runs = self.run(kernel, gsize, lsize, args, self.repeats)
        return Timing(min(runs), statistics.median(runs), tuple(runs), work, overhead_s)

    def overhead(self, kernel, gsize, lsize, args_for: ArgsFor) -> float:
        """Event time of the launch with zero work: the fixed cost a probe subtracts."""
        return min(self.run(kernel, gsize, lsize, args_for(0), 3))

    def calibrate(self, kernel, gsize, lsize, args_for: ArgsFor, work: int = 1, work_min: int = 1,
                  work_max: int = 1 << 30, target_s: float | None = None, subtract_overhead: bool = True,
                  what: str = "") -> Timing:
        """Grow ``work`` until one launch takes ``target_s``, then measure."""
        target = self.target_s if target_s is None else target_s
        overhead = self.overhead(kernel, gsize, lsize, args_for) if subtract_overhead else 0.0
        work = int(min(max(work, work_min, 1), work_max))
        t = min(self.run(kernel, gsize, lsize, args_for(work), 1))
        while t < target and work < work_max:
            net = max(t - overhead, 0.02 * t)
            grow = min(max(1.25 * target / net, 2.0), 64.0)
            work = int(min(work * grow, work_max))
            t = min(self.run(kernel, gsize, lsize, args_for(work), 1))
        if t < target and work >= work_max:
            # One launch on a busy host can stall longer than the whole loop; only a time that stays short
            # over several launches (the shortest of this one and three more) says the loop is gone.
            t = min(t, *self.run(kernel, gsize, lsize, args_for(work), 3))
        if t < target / 10 and work >= work_max:
            raise ProbeError(
                f"{what or kernel.function_name}: {work} units of work took only {t * 1e6:.1f} us on "
                f"{self.device.info.name}; the time does not grow with the work, so the compiler probably "
                "removed the timed loop.  Report this with the device name and driver version."
            )
        return self.measure(kernel, gsize, lsize, args_for(work), work, overhead)
