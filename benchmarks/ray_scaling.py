"""Benchmark: points per second of one exploration on Ray device workers, with 1 and with 2 (or more) GPUs.

    python benchmarks/ray_scaling.py --layer vgg16:10 --samples 96 --jobs 8 --gpus 1 2 --json out.json
    python benchmarks/ray_scaling.py --layer vgg16:10 --samples 1000 --window 120 --jobs 8 --json out.json
    python benchmarks/ray_scaling.py --quick --json out.json      # CPU workers on PoCL, a reduced layer

Each run explores the same points (uniform search, one seed) of one convolution layer into a fresh store with
``--workers local:N`` (the driver's cache of built kernels off, so that no run builds faster for the other); the time counted is the exploration's, from the first point handed out to the last
result stored, with Ray and its device workers already started (their start-up is reported apart) and the
variants already derived, so both runs do the same work.  Every point is validated against the reference
as in any exploration.  With ``--window S`` each run hands out points for S seconds and counts the points
finished within them: a steady-state throughput, which a fixed set of points does not give when a few of
its kernels take a minute to build (the run then waits for its slowest build, whatever the GPU count).
Writes ``points_per_s_1_gpu``, ``points_per_s_2_gpus`` and ``speedup_2_gpus`` (goal
>= 1.8) with one record per run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--layer", default="vgg16:10")
    ap.add_argument("--samples", type=int, default=96)
    ap.add_argument("--jobs", type=int, default=8, help="code-generation processes per device worker")
    ap.add_argument("--gpus", type=int, nargs="+", default=[1, 2], help="device workers of each run")
    ap.add_argument("--rules", default="tile2DReduce|tile2DReduceStrided")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--window", type=float, default=None, metavar="S",
                    help="throughput over a fixed window: hand out points for S seconds and count those finished "
                         "within it (--samples is then the size of the queue, which should not run out)")
    ap.add_argument("--quick", action="store_true", help="a reduced layer on CPU workers (PoCL), few points")
    args = ap.parse_args()

    from liftpy.explore import explore_operator
    from liftpy.explore.conv import ConvOperator
    from liftpy.operators.conv import get_layer
    from liftpy.results.cache import cached_variants
    from liftpy.runtime.cluster import Cluster
    from liftpy.search import UniformSearch
    from liftpy.search import select_variants

    layer = get_layer(args.layer)
    if args.quick:
        layer = layer.reduced(spatial=16, channels=8, kernels=8)
        args.samples, args.jobs = min(args.samples, 12), 1
    op = ConvOperator.of(layer)
    rules = tuple(r for r in args.rules.split(",") if r)
    t = time.time()
    print(f"{len(select_variants(cached_variants(op), rules))} variants of {layer.name} ({time.time() - t:.1f} s)", flush=True)
    out_dir = Path(tempfile.mkdtemp(prefix="liftpy-ray-"))
    # Both runs build the same kernels: NVIDIA's driver and pyopencl would serve the second run's builds from
    # their disk caches of compiled kernels (the first run measured here at 7x "speedup" that way).  The device workers
    # inherit this environment from the Ray instance each run starts.
    os.environ["CUDA_CACHE_DISABLE"] = "1"
    os.environ["PYOPENCL_NO_CACHE"] = "1"
    runs = []
    for n in args.gpus:
        t = time.time()
        with Cluster(f"local:{n}", jobs=args.jobs, timeout_s=300) as cluster:
            started_s = time.time() - t
            t = time.time()
            result = explore_operator(op, samples=args.samples, db=out_dir / f"ray-{n}.sqlite", search=UniformSearch,
                                      workers=cluster, progress=True, references=False, rules=rules,
                                      repeat=args.repeat, jobs=args.jobs, budget_s=args.window)
            wall_s = time.time() - t
            seconds = args.window or wall_s
            device = cluster.device_name
        points = [r for r in result.records if not r.is_reference]
        finished = len(points)
        if args.window:  # what finished after the window (points already handed out) does not count
            points = [r for r in points if r.finished_at is not None and r.finished_at <= t + args.window]
        statuses: dict[str, int] = {}
        for r in points:
            statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
        best = result.best
        ok = [r for r in points if r.measured]
        for r in points:
            if r.error:
                print(f"  {r.status.value}: {r.variant} {r.config}: {r.error[:300]}", flush=True)
        runs.append({
            "codegen_s_sum": round(sum(r.metrics.get("codegen_s", 0.0) for r in ok), 2),
            "build_s_sum": round(sum(r.metrics.get("build_s", 0.0) for r in ok), 2),
            "build_s_max": round(max((r.metrics.get("build_s", 0.0) for r in ok), default=0.0), 2),
            "workers": n, "points": len(points), "seconds": round(seconds, 3), "start_s": round(started_s, 3),
            "wall_s": round(wall_s, 3), "points_finished": finished, "window_s": args.window,
            "points_per_s": round(len(points) / seconds, 4), "statuses": statuses, "device": device,
            "ran_on": sorted({r.metrics.get("ran_on") for r in points}),
            "best_ms": best.time_ms if best else None, "lost_workers": result.lost_workers,
        })
        print(f"{n} worker(s): {len(points)} points in {seconds:.1f} s = {len(points) / seconds:.3f} points/s "
              f"(start-up {started_s:.1f} s; {statuses}; ran on {runs[-1]['ran_on']}; code generation "
              f"{runs[-1]['codegen_s_sum']:.1f} s, OpenCL builds {runs[-1]['build_s_sum']:.1f} s in all, "
              f"longest build {runs[-1]['build_s_max']:.1f} s)", flush=True)
        _write(args.json, layer, args, rules, runs)
    _write(args.json, layer, args, rules, runs, final=True)
    return 0


def _write(path, layer, args, rules, runs, final=False) -> None:
    """The JSON document, written after every run (so an interrupted benchmark keeps what it measured)."""
    by = {r["workers"]: r for r in runs}
    doc = {"layer": layer.name, "spec": layer.spec, "samples": args.samples, "jobs_per_worker": args.jobs,
           "window_s": args.window, "rules": list(rules), "device": runs[0]["device"], "runs": runs}
    if 1 in by:
        doc["points_per_s_1_gpu"] = by[1]["points_per_s"]
    if 2 in by:
        doc["points_per_s_2_gpus"] = by[2]["points_per_s"]
    if 1 in by and 2 in by:
        doc["speedup_2_gpus"] = round(by[2]["points_per_s"] / by[1]["points_per_s"], 3)
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")
    if not final:
        return
    print()
    print(f"{'workers':>7}  {'points':>6}  {'seconds':>8}  {'points/s':>8}")
    for r in runs:
        print(f"{r['workers']:>7}  {r['points']:>6}  {r['seconds']:>8.1f}  {r['points_per_s']:>8.3f}")
    if "speedup_2_gpus" in doc:
        print(f"speedup with 2: {doc['speedup_2_gpus']:.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
