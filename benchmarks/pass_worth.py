"""Benchmark: what one low-level pass is worth, in kernel time on a device and in code-generation time.

    python benchmarks/pass_worth.py --pass eliminate_divmod \
        --best benchmarks/results/h100-vgg16-gemmview.json --sample vgg16:12 --points 12 --json out.json

    python benchmarks/pass_worth.py --passes merge_barriers,pipeline_copies,lower_copies,simplify,unroll,\
        privatize,vectorize,eliminate_divmod,hoist --sample vgg16:12 --points 40 --json out.json

Each point (variant and configuration) is generated twice, with ``DEFAULT_PASSES`` and with the named pass
left out (every occurrence of it), or with the passes ``--passes`` names in that order (another order
of the same passes: the ``without`` side of the record is then that order).  Where the two sources are the same, nothing is
run; otherwise both are built, run and checked against the operator's reference, their times taken alternately (with, without, with, without) and the
better of each side's two medians kept.  Points come from ``--best`` (the best point of each record of a
results file with ``layer``, ``best_variant`` and ``best_config``, as ``conv_vgg16.py`` writes them) and from
``--sample`` (``--points`` drawn uniformly from a workload's tiled variants, for the limits of the device).

JSON: one record per point with ``workload``, ``variant``, ``config``, ``pass``, ``same_source``,
``ms_with``, ``ms_without``, ``ok_with``, ``ok_without``, ``codegen_with_s``, ``codegen_without_s``.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _points(args, limits_profile):
    """(workload, variant id, config) of every point asked for."""
    from liftpy.results.cache import cached_variants
    from liftpy.search import choose_points, select_variants, variant_id
    from search import workload

    out = []
    for path in args.best or ():
        for rec in json.loads(Path(path).read_text()):
            out.append((rec["layer"], rec["best_variant"], dict(rec["best_config"])))
    for name in args.sample or ():
        op, rules = workload(name)
        rules = (args.conv_rules,) if rules is None else rules
        variants = select_variants(cached_variants(op), rules)
        for p in choose_points(variants, op.sizes(), args.points, limits_profile, args.seed):
            out.append((name, variant_id(variants[p.variant_index]), dict(p.config)))
    return out


def main() -> int:
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.codegen.passes import DEFAULT_PASSES
    from liftpy.errors import LiftError
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.host.profile import DeviceProfile
    from liftpy.results.cache import cached_variants
    from liftpy.search import variant_id
    from search import workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    side = ap.add_mutually_exclusive_group(required=True)
    side.add_argument("--pass", dest="name", help="the pass of DEFAULT_PASSES to leave out (e.g. eliminate_divmod)")
    side.add_argument("--passes", help="the other side's passes, comma-separated names of passes of DEFAULT_PASSES in their order")
    ap.add_argument("--best", action="append", help="a results file whose records' best points to compare")
    ap.add_argument("--sample", action="append", help="a workload (vgg16:12, sgemm:1024) to draw points of")
    ap.add_argument("--points", type=int, default=12)
    ap.add_argument("--conv-rules", default="tile2DReduce|tile2DReduceStrided")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--profile", default=str(Path(__file__).resolve().parent / "results/h100-profile.json"),
                    help="device profile for drawing --sample points")
    ap.add_argument("--device", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    by_name = {p.__name__: p for p in DEFAULT_PASSES}
    if args.passes is not None:
        unknown = [n for n in args.passes.split(",") if n not in by_name]
        if unknown:
            ap.error(f"--passes: {', '.join(unknown)} not among the default passes ({', '.join(by_name)})")
        without = tuple(by_name[n] for n in args.passes.split(","))
        args.name = "order:" + args.passes
    elif args.name not in by_name:
        ap.error(f"--pass {args.name!r} is not one of the default passes ({', '.join(by_name)})")
    else:
        without = tuple(p for p in DEFAULT_PASSES if p.__name__ != args.name)

    device = get_device(args.device)
    limits = device_limits(device)
    points = _points(args, DeviceProfile.load(args.profile))
    records = []
    print(f"{'workload':<10}{'variant':<64}{'with ms':>9}{'w/o ms':>9}{'ratio':>7}  codegen with / without", flush=True)

    @functools.cache
    def problem(name):
        """A workload's operator and its variants by id, read from disk once, not once per point."""
        op, _ = workload(name)
        return op, {variant_id(v): v for v in cached_variants(op)}

    @functools.cache
    def prepared(name):
        """A workload's inputs and reference check, computed once and only if some point is run."""
        return problem(name)[0].prepare(0)

    for name, vid, config in points:
        op, variants = problem(name)
        rec = {"workload": name, "variant": vid, "config": config, "pass": args.name}
        v = variants.get(vid)
        if v is None:
            print(f"{name:<10}{vid:<64} no such variant in this tree", flush=True)
            records.append({**rec, "error": "no such variant"})
            continue
        sizes = {**op.sizes(), **config}
        try:
            t = time.perf_counter()
            a = generate_pipeline(v.program, sizes, limits, v.placement_map)
            ta = time.perf_counter() - t
            t = time.perf_counter()
            b = generate_pipeline(v.program, sizes, limits, v.placement_map, passes=without)
            tb = time.perf_counter() - t
        except LiftError as e:
            print(f"{name:<10}{vid:<64} {type(e).__name__}: {e}", flush=True)
            records.append({**rec, "error": str(e)})
            continue
        same = all(x.source == y.source for (x, _), (y, _) in zip(a, b))
        rec.update(same_source=same, codegen_with_s=ta, codegen_without_s=tb)
        if not same:
            inputs, check = prepared(name)
            times: dict = {"with": [], "without": []}
            oks: dict = {"with": [], "without": []}
            try:
                compiled = {"with": CompiledPipeline(v.program, sizes, device, v.placement_map, stages=a),
                            "without": CompiledPipeline(v.program, sizes, device, v.placement_map, stages=b)}
                for _ in range(2):  # alternately, so that a drift of the device's clock hits both sides
                    for side, c in compiled.items():
                        r = c.run(*inputs, repeat=args.repeat, warmup=3)
                        times[side].append(r.time_ms)
                        oks[side].append(check(r.output).ok)
            except LiftError as e:
                print(f"{name:<10}{vid:<64} {type(e).__name__}: {e}", flush=True)
                records.append({**rec, "error": str(e)})
                continue
            rec.update(ms_with=min(times["with"]), ms_without=min(times["without"]), ok_with=all(oks["with"]),
                       ok_without=all(oks["without"]))
        records.append(rec)
        if same:
            line = f"{'same source':>25}"
        else:
            flag = "" if rec["ok_with"] and rec["ok_without"] else "  WRONG"
            line = f"{rec['ms_with']:>9.4f}{rec['ms_without']:>9.4f}{rec['ms_without'] / rec['ms_with']:>7.2f}{flag}"
        print(f"{name:<10}{vid:<64}{line}  {ta:.2f} / {tb:.2f} s  {config}", flush=True)
        if args.json:  # after every point: an interrupted run keeps what it measured
            Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
