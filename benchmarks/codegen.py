"""Benchmark: code-generation time per point (IR -> OpenCL source), the time a search spends before a
kernel can be built.

    python benchmarks/codegen.py --json benchmarks/results/cpu-codegen.json
    python benchmarks/codegen.py --workloads vgg16:12 --points 40 --profile benchmarks/results/h100-profile.json

For each workload it draws ``--points`` points (variant and configuration) uniformly from the valid
space for the device limits of ``--profile`` (the H100's by default: the kernels a GPU search generates),
generates every kernel of each point once, after one warm-up point, and reports the median, p90 and
maximum seconds per point.  The points fall on as many variants as there are points, so each pays its
variant's one-time work (its typing, its program's text); ``--repeat K`` generates each point K times and
takes the least, what a point costs once that is done.  No device is needed: code generation is pure Python, so the numbers say
how fast this machine's CPU runs it (one process, one core).

``--passes R`` (3 by default) makes that pass over the points R times, each in a fresh process doing the
same work from the same start (its imports, its choice of points, its warm-up point), and takes each point's
least time over the passes: a shared host's slow moments (on the project's 2-core machine the same pass's
median moved by a fifth from one minute to the next) then count only where every pass met them.  The
first pass's median is kept beside it (``first_pass_median_s``), and the passes must generate the same
sources (one digest), or the run fails.  The workloads are those of
``benchmarks/search.py``; a layer workload keeps the variants of ``--conv-rules`` (the tiled ones a
GPU search explores), ``sgemm:N`` all of them.

JSON: one record per workload with ``workload``, ``points``, ``median_s``, ``p90_s``, ``max_s``,
``total_s``, ``variants``, ``repeat``, ``passes``, ``first_pass_median_s``, ``pass_medians_s``, ``python``,
``cpu``; and ``source_sha1`` (a digest of every generated source,
to tell a faster code generator that changed its output from one that did not).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="*", default=["sgemm:1024", "vgg16:12", "vgg16:5"])
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--conv-rules", default="tile2DReduce|tile2DReduceStrided")
    ap.add_argument("--profile", default=str(ROOT / "benchmarks/results/h100-profile.json"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="generate each point K times and take the least: what a point costs once its variant's "
                         "one-time work (its typing, its program's text) is done, as in a search that generates "
                         "several configurations of a variant")
    ap.add_argument("--compiler-unrolls-copies", action="store_true",
                    help="leave copies' steps to the OpenCL compiler (codegen.passes.copies.COMPILER_UNROLLS_COPIES)")
    ap.add_argument("--compiler-unrolls", default=None, metavar="POLICY",
                    help="the loops marked for unrolling left to the OpenCL compiler: a policy of "
                         "codegen.passes.unroll.POLICIES (none: every loop copied by liftpy; all; by default reductions+registers)")
    ap.add_argument("--passes", type=int, default=3, metavar="R",
                    help="make the pass over the points R times, each in a fresh process, and take each point's "
                         "least time (default 3; 1: one pass in this process)")
    ap.add_argument("--one-pass", default=None, help=argparse.SUPPRESS)  # (a pass's process: its JSON file)
    args = ap.parse_args()
    if args.passes < 1:
        ap.error("--passes must be at least 1")
    if args.compiler_unrolls_copies:
        from liftpy.codegen.passes import copies

        copies.COMPILER_UNROLLS_COPIES = True
    if args.compiler_unrolls:
        from liftpy.codegen.passes import use_unroll_policy
        from liftpy.errors import CodegenError

        try:
            use_unroll_policy(args.compiler_unrolls)
        except CodegenError as e:
            ap.error(f"--compiler-unrolls: {e}")

    if args.one_pass:
        Path(args.one_pass).write_text(json.dumps({name: _one_pass(args, name) for name in args.workloads}))
        return 0
    records = []
    print(f"{'workload':<14}{'variants':>9}{'points':>8}{'median s':>10}{'p90 s':>9}{'max s':>9}{'total s':>9}", flush=True)
    for name in args.workloads:
        passes = [_one_pass(args, name)] if args.passes == 1 else [_pass_in_a_process(args, name) for _ in range(args.passes)]
        first = passes[0]
        if not first["times"]:
            print(f"{name:<14} no point could be generated", flush=True)
            continue
        if any(p["source_sha1"] != first["source_sha1"] or len(p["times"]) != len(first["times"]) for p in passes):
            print(f"{name}: the passes generated different sources ({', '.join(p['source_sha1'] for p in passes)})",
                  file=sys.stderr)
            return 1
        times = sorted(min(ts) for ts in zip(*(p["times"] for p in passes)))
        rec = {
            "workload": name,
            "variants": first["variants"],
            "compiler_unrolls_copies": args.compiler_unrolls_copies,
            "compiler_unrolls": first["compiler_unrolls"],
            "repeat": max(1, args.repeat),
            "passes": len(passes),
            "points": len(times),
            "failed": first["failed"],
            "median_s": statistics.median(times),
            "p90_s": times[int(0.9 * (len(times) - 1))],
            "max_s": times[-1],
            "total_s": sum(times),
            "first_pass_median_s": statistics.median(first["times"]),
            "pass_medians_s": [statistics.median(p["times"]) for p in passes],
            "source_sha1": first["source_sha1"],
            "python": platform.python_version(),
            "cpu": _cpu(),
        }
        records.append(rec)
        print(f"{name:<14}{rec['variants']:>9}{rec['points']:>8}{rec['median_s']:>10.3f}{rec['p90_s']:>9.3f}"
              f"{rec['max_s']:>9.3f}{rec['total_s']:>9.1f}", flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(records, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def _pass_in_a_process(args, name: str) -> dict:
    """One pass over ``name``'s points in a fresh process: this script with the options that decide the
    points and their sources (built from the parsed options, so an abbreviated one reaches it too)."""
    options = ["--points", str(args.points), "--conv-rules", args.conv_rules, "--profile", args.profile,
               "--seed", str(args.seed), "--repeat", str(args.repeat)]
    options += ["--compiler-unrolls-copies"] if args.compiler_unrolls_copies else []
    options += ["--compiler-unrolls", args.compiler_unrolls] if args.compiler_unrolls else []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pass.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--workloads", name, *options, "--passes", "1",
               "--one-pass", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"a pass over {name} failed:\n{done.stderr.strip()}")
        return json.loads(out.read_text())[name]


def _one_pass(args, name: str) -> dict:
    """Each point of ``name`` generated once (or ``--repeat`` times, the least taken) after a warm-up point:
    the seconds per point (in the points' order), the digest of every source, the points refused."""
    from liftpy.codegen.kernel import forget_programs, generate_pipeline
    from liftpy.codegen.passes import unroll_policy
    from liftpy.errors import LiftError
    from liftpy.host.profile import DeviceProfile
    from liftpy.results.cache import cached_variants
    from liftpy.search import choose_points, select_variants
    from search import workload

    profile = DeviceProfile.load(args.profile)
    limits = profile.limits()
    op, rules = workload(name)
    rules = tuple(r for r in args.conv_rules.split(",") if r) if rules is None else rules
    variants = select_variants(cached_variants(op), rules)
    points = choose_points(variants, op.sizes(), args.points + 1, profile, args.seed)
    forget_programs()  # (choosing split and typed the programs: each point pays its variant's one-time work)
    times, digest, failed = [], hashlib.sha1(), 0
    for n, p in enumerate(points):
        v = variants[p.variant_index]
        dt = float("inf")
        try:
            for _ in range(max(1, args.repeat)):
                t = time.perf_counter()
                stages = generate_pipeline(v.program, {**op.sizes(), **p.config}, limits, v.placement_map)
                dt = min(dt, time.perf_counter() - t)
        except LiftError:
            failed += 1  # a point the limits admit but generation refuses: not timed
            continue
        if n == 0:
            continue  # warm-up: imports and first-use caches
        times.append(dt)
        for ks, _ in stages:
            digest.update(ks.source.encode())
    return {"times": times, "source_sha1": digest.hexdigest()[:16], "failed": failed, "variants": len(variants),
            "compiler_unrolls": unroll_policy()}


if __name__ == "__main__":
    sys.exit(main())
