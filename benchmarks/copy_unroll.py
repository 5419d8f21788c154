"""Benchmark: cooperative copies into local memory unrolled by liftpy, or left loops that the OpenCL compiler
unrolls (``#pragma unroll``): kernel time of given points under both, and code-generation time.

    python benchmarks/copy_unroll.py --profile benchmarks/results/h100-profile.json --json out.json \
        --point vgg16:5 'db+flat+glb+splitK+stageT+tiled-strided+unroll-item+wrg#9c007c5684' k0=8,ks0=288,m0=64,n0=128,r0=8,r1=8

Why: unrolling a copy's steps in liftpy's statement IR makes every step's indices (a share of a tile:
divisions and moduli of the work-item's id and the step) simplified again for its constant, twice for a
pipelined copy (this step's loads and the next's); on the 40 points of ``codegen.py``'s VGG-16 layer 12 that
was a fifth of code generation.  A loop of constant trip count marked ``#pragma unroll`` is unrolled by the
OpenCL compiler instead, which folds the same constants; whether the kernels stay as fast is what this
measures.  Each point is generated both ways (``liftpy.codegen.passes.copies.COMPILER_UNROLLS_COPIES``),
built, checked, then timed in ``--rounds`` alternating rounds of ``--repeat`` runs; a way's time is the
median over the rounds of each round's median.  JSON: one record per point with ``workload``, ``variant``,
``config``, ``liftpy_ms``, ``compiler_ms``, ``ratio`` (``liftpy_ms / compiler_ms``: above 1, the compiler's
unrolling is faster), ``codegen_s`` of both ways, ``lines`` of both sources and ``ok`` (both outputs right).
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--point", nargs=3, action="append", required=True, metavar=("WORKLOAD", "VARIANT", "CONFIG"))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.codegen.passes import copies
    from liftpy.errors import LiftError
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.host.profile import DeviceProfile
    from liftpy.tuning.cache import cached_variants
    from liftpy.tuning.engine import variant_id
    from liftpy.tuning.operator import parse_sizes
    from points import variant_named
    from search import workload

    device = get_device(None)
    limits = DeviceProfile.load(args.profile).limits() if args.profile else device_limits(device)
    records = []
    print(f"{'workload':<24}{'liftpy ms':>11}{'compiler ms':>13}{'ratio':>8}{'codegen s':>16}{'lines':>13}  ok", flush=True)
    for name, want, cfg in args.point:
        op, _ = workload(name)
        variants = cached_variants(op)
        ids = [variant_id(v) for v in variants]
        k = variant_named(ids, want, f"{name}: ")
        if k is None:
            return 2
        v, vid = variants[k], ids[k]
        try:
            config = parse_sizes(cfg)
        except LiftError as e:
            print(f"{name}: bad configuration {cfg!r}: {e}", file=sys.stderr)
            return 2
        sizes = {**op.sizes(), **config}
        inputs, check = op.prepare(0)
        ways = {}
        try:
            for way, flag in (("liftpy", False), ("compiler", True)):
                copies.COMPILER_UNROLLS_COPIES = flag
                t = time.perf_counter()
                stages = generate_pipeline(v.program, sizes, limits, v.placement_map)
                codegen_s = time.perf_counter() - t
                compiled = CompiledPipeline(v.program, sizes, device, v.placement_map, stages=stages)
                ok = check(compiled.run(*inputs, repeat=1, warmup=1).output).ok
                ways[way] = (compiled, codegen_s, sum(ks.source.count("\n") for ks, _ in stages), ok)
        except LiftError as e:
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
            records.append({"workload": name, "variant": vid, "config": config, "error": str(e)})
            continue
        finally:
            copies.COMPILER_UNROLLS_COPIES = False
        times = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, (compiled, *_rest) in ways.items():
                times[way].append(compiled.run(*inputs, repeat=args.repeat, warmup=3).time_ms)
        ms = {way: statistics.median(ts) for way, ts in times.items()}
        rec = {"workload": name, "variant": vid, "config": config, "liftpy_ms": ms["liftpy"],
               "compiler_ms": ms["compiler"], "ratio": ms["liftpy"] / ms["compiler"],
               "rounds_ms": times, "codegen_s": {w: ways[w][1] for w in ways}, "lines": {w: ways[w][2] for w in ways},
               "ok": all(ways[w][3] for w in ways)}
        records.append(rec)
        print(f"{name:<24}{ms['liftpy']:>11.4f}{ms['compiler']:>13.4f}{rec['ratio']:>8.3f}"
              f"{ways['liftpy'][1]:>8.2f}/{ways['compiler'][1]:<7.2f}{ways['liftpy'][2]:>6}/{ways['compiler'][2]:<6}  "
              f"{'ok' if rec['ok'] else 'WRONG: ' + ', '.join(w for w in ways if not ways[w][3])}", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(records, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
