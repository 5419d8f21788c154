"""Benchmark: given points (variant and configuration) of one workload, timed side by side on one device,
every output checked against the operator's reference.

    python benchmarks/points.py --workload vgg16:5 \
        --variant db+flat+stageT+tiled-strided+unroll-item+wrg --config k0=8,m0=128,n0=128,r0=8,r1=8 \
        --variant flat+stageT+tiled-strided+unroll-item+wrg --config k0=8,m0=128,n0=128,r0=8,r1=8 --json out.json

It answers "what is this rule (or this configuration) worth on this kernel" without a search: the same
program and parameters, one variant with the rule and one without (``db+`` marks double-buffered tiles).
``--variant`` is matched against variant ids: a hash, or the whole tag list before ``#``.  JSON: one
record per point with workload, variant, config, ms, the local bytes of its kernels and whether its
output was right.  ``--source-dir`` writes each point's OpenCL source there; with ``--generate-only`` the
points are only generated (for the limits of ``--profile``, no device needed).
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def variant_named(ids: list[str], want: str, where: str = "") -> int | None:
    """The position of the one variant id that ``want`` names (a whole id, its hash or its tags before
    ``#``); None, with a one-line error on stderr, when it names none or several."""
    hits = [i for i, s in enumerate(ids) if want in (s, *s.split("#"))]
    if len(hits) != 1:
        print(f"{where}--variant {want!r} names {len(hits)} variants", file=sys.stderr)
        return None
    return hits[0]


def main() -> int:
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.errors import LiftError
    from liftpy.explore.operator import parse_sizes
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.host.profile import DeviceProfile
    from liftpy.results.cache import cached_variants
    from liftpy.search import variant_id
    from search import workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", required=True, help="sgemm:MxNxK, a layer (vgg16:5) or a layer spec")
    ap.add_argument("--variant", required=True, action="append", help="the variant's id, its hash or its tags (before #)")
    ap.add_argument("--config", required=True, action="append", help="k=v,... (one per --variant)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--device", default=None)
    ap.add_argument("--profile", default=None, help="device profile JSON whose limits code generation respects")
    ap.add_argument("--json", default=None)
    ap.add_argument("--source-dir", default=None, help="write each point's OpenCL source here")
    ap.add_argument("--generate-only", action="store_true", help="generate the sources, run nothing")
    args = ap.parse_args()
    if len(args.config) != len(args.variant):
        ap.error("give one --config per --variant")
    if args.generate_only and not args.profile:
        ap.error("--generate-only needs --profile (the limits to generate for)")
    op, _ = workload(args.workload)
    device = None if args.generate_only else get_device(args.device)
    limits = DeviceProfile.load(args.profile).limits() if args.profile else device_limits(device)
    inputs, check = (None, None) if args.generate_only else op.prepare(0)
    variants = cached_variants(op)  # derived once per operator and rule set, kept on disk
    ids = [variant_id(v) for v in variants]
    records = []
    for want, cfg in zip(args.variant, args.config):
        k = variant_named(ids, want)
        if k is None:
            return 2
        v, vid = variants[k], ids[k]
        try:
            config = parse_sizes(cfg)
            sizes = {**op.sizes(), **config}
            stages = generate_pipeline(v.program, sizes, limits, v.placement_map)
            if args.source_dir:
                path = Path(args.source_dir) / f"{args.workload.replace(':', '-')}-{vid.split('#')[1]}-{len(records)}.cl"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(f"// ===== kernel {n + 1} of {len(stages)}: writes {out} =====\n{ks.source}"
                                          for n, (ks, out) in enumerate(stages)))
                print(f"wrote {path}")
            if args.generate_only:
                records.append({"workload": args.workload, "variant": vid, "config": config})
                continue
            compiled = CompiledPipeline(v.program, sizes, device, v.placement_map, stages=stages)
            result = compiled.run(*inputs, repeat=args.repeat, warmup=3)
        except LiftError as e:
            print(f"{vid:<72}{cfg:<40} {type(e).__name__}: {e}", flush=True)
            records.append({"workload": args.workload, "variant": vid, "config": config, "error": str(e)})
            continue
        ok = check(result.output).ok
        rec = {"workload": args.workload, "variant": vid, "config": config, "ms": result.time_ms,
               "local_bytes": [ks.plan.local_bytes for ks, _ in stages], "ok": ok}
        print(f"{rec['variant']:<72}{cfg:<40}{result.time_ms:>10.4f} ms  local {rec['local_bytes']}  {'ok' if ok else 'WRONG'}", flush=True)
        records.append(rec)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
