"""Benchmark: which loops marked for unrolling liftpy unrolls and which it leaves to the OpenCL compiler
(``#pragma unroll``): kernel time of given points under each policy, and code-generation time.

    python benchmarks/unroll_policy.py --profile benchmarks/results/h100-profile.json --json out.json \\
        --ways none reductions all none/-vectorize \\
        --point vgg16:5 'db+flat+glb+splitK+stageT+tiled-strided+unroll-item+wrg#9c007c5684' k0=8,ks0=288,m0=64,n0=128,r0=8,r1=8

Why: liftpy unrolls a loop by making and simplifying a copy of its body per iteration, so that the
vectorization pass can load and store runs of copies as vectors; the copies are most of what code
generation makes (every loop left to the compiler: 32,192 -> 10,308 lines over the 40 points of
``codegen.py``'s VGG-16 layer 12, median 0.147 -> 0.080 s per point on this project's 2-core machine).  A
way is a policy of ``liftpy.codegen.passes.unroll.POLICIES`` (``none``: liftpy unrolls every loop, as it did
up to 042d57b; ``all``: the compiler does; the default is ``liftpy.codegen.passes.unroll.COMPILER_UNROLLS``),
optionally with ``/-PASS`` to leave a pass of ``DEFAULT_PASSES`` out and ``/copies`` to leave the compiler the
steps of cooperative copies into local memory too (``liftpy.codegen.passes.copies.COMPILER_UNROLLS_COPIES``;
``--ways none none/copies`` is what ``h100-copy-unroll.json`` measured, with the script this one replaced).
Points are given (``--point``) or drawn uniformly from a workload's valid space for the device limits of
``--profile`` (``--sample``, ``--points`` each, as ``pass_worth.py`` draws them) (``none/-vectorize``:
liftpy's copies without their vector loads, to tell what the vectors are worth).
Each point is generated every way, built and checked, then timed in ``--rounds`` rounds of ``--repeat`` runs,
the ways in turn; a way's time is the median over the rounds of each round's median.  JSON: one record per
point with ``workload``, ``variant``, ``config``, ``ms`` and ``ratio`` (the first way's time over the way's:
above 1, the way is faster) per way, ``codegen_s`` and ``lines`` per way, and ``ok`` (every output right).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _way(text: str, policies: dict, passes: tuple) -> tuple[str, bool, tuple]:
    """A way's policy, whether the compiler unrolls copies, and its passes, or SystemExit naming what is wrong."""
    policy, *options = text.split("/")
    if policy not in policies:
        raise SystemExit(f"--ways: unknown policy {policy!r} (known: {', '.join(policies)})")
    names = [p.__name__ for p in passes]
    dropped = [o[1:] for o in options if o.startswith("-")]
    for o in options:
        if o != "copies" and not (o.startswith("-") and o[1:] in names):
            raise SystemExit(f"--ways: {o!r} in {text!r} is neither 'copies' nor a pass to leave out "
                             f"('-' and one of {', '.join(names)})")
    return policy, "copies" in options, tuple(p for p in passes if p.__name__ not in dropped)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--point", nargs=3, action="append", default=[], metavar=("WORKLOAD", "VARIANT", "CONFIG"))
    ap.add_argument("--sample", action="append", help="a workload (vgg16:12, sgemm:1024) to draw points of")
    ap.add_argument("--points", type=int, default=8, help="points drawn per --sample workload")
    ap.add_argument("--conv-rules", default="tile2DReduce|tile2DReduceStrided")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ways", nargs="+", default=["none", "all"])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if not args.point and not args.sample:
        ap.error("give points (--point) or workloads to draw them from (--sample)")

    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.codegen.passes import DEFAULT_PASSES, UNROLL_POLICIES, copies, unroll_policy, use_unroll_policy
    from liftpy.errors import LiftError
    from liftpy.explore.operator import parse_sizes
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.host.profile import DeviceProfile
    from liftpy.results.cache import cached_variants
    from liftpy.search import variant_id
    from pass_worth import _points
    from points import variant_named
    from search import workload

    ways = {w: _way(w, UNROLL_POLICIES, DEFAULT_PASSES) for w in args.ways}
    default_policy, default_copies = unroll_policy(), copies.COMPILER_UNROLLS_COPIES
    device = get_device(None)
    limits = DeviceProfile.load(args.profile).limits() if args.profile else device_limits(device)
    records = []
    print(f"{'workload':<14}" + "".join(f"{w[:22]:>24}" for w in ways) + "  (ms, ratio to the first; lines)  ok", flush=True)
    points = []
    for name, want, cfg in args.point:
        try:
            points.append((name, want, parse_sizes(cfg)))
        except LiftError as e:
            print(f"{name}: bad configuration {cfg!r}: {e}", file=sys.stderr)
            return 2
    if args.sample:
        drawn = argparse.Namespace(best=None, sample=args.sample, conv_rules=args.conv_rules, points=args.points, seed=args.seed)
        points += _points(drawn, DeviceProfile.load(args.profile) if args.profile else DeviceProfile.from_device(device))
    for name, want, config in points:
        op, _ = workload(name)
        variants = cached_variants(op)
        ids = [variant_id(v) for v in variants]
        k = variant_named(ids, want, f"{name}: ")
        if k is None:
            return 2
        v, vid = variants[k], ids[k]
        sizes = {**op.sizes(), **config}
        inputs, check = op.prepare(0)
        built = {}
        try:
            for way, (policy, compiler_copies, passes) in ways.items():
                use_unroll_policy(policy)
                copies.COMPILER_UNROLLS_COPIES = compiler_copies
                t = time.perf_counter()
                stages = generate_pipeline(v.program, sizes, limits, v.placement_map, passes)
                codegen_s = time.perf_counter() - t
                compiled = CompiledPipeline(v.program, sizes, device, v.placement_map, stages=stages)
                ok = check(compiled.run(*inputs, repeat=1, warmup=1).output).ok
                built[way] = (compiled, codegen_s, sum(ks.source.count("\n") for ks, _ in stages), ok)
        except LiftError as e:
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
            records.append({"workload": name, "variant": vid, "config": config, "error": str(e)})
            continue
        finally:
            use_unroll_policy(default_policy)
            copies.COMPILER_UNROLLS_COPIES = default_copies
        times = {way: [] for way in built}
        for _ in range(args.rounds):
            for way, (compiled, *_rest) in built.items():
                times[way].append(compiled.run(*inputs, repeat=args.repeat, warmup=3).time_ms)
        ms = {way: statistics.median(ts) for way, ts in times.items()}
        first = args.ways[0]
        rec = {"workload": name, "variant": vid, "config": config, "ms": ms,
               "ratio": {w: ms[first] / ms[w] for w in ms}, "rounds_ms": times,
               "codegen_s": {w: built[w][1] for w in built}, "lines": {w: built[w][2] for w in built},
               "ok": all(b[3] for b in built.values())}
        records.append(rec)
        print(f"{name:<14}" + "".join(f"{ms[w]:>9.4f} {rec['ratio'][w]:5.3f} {built[w][2]:>6}  " for w in ways)
              + ("ok" if rec["ok"] else "WRONG: " + ", ".join(w for w in built if not built[w][3])), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(records, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
