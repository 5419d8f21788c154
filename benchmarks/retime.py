"""Benchmark: the best points of earlier result files timed again, beside the vendor's references timed now
in the same process, one call at a time and in batches.

    python benchmarks/retime.py --profile benchmarks/results/h100-profile.json --json out.json \
        --from benchmarks/results/h100-vgg16-gemmview.json benchmarks/results/h100-conv-depthwise.json
    python benchmarks/retime.py --store vgg.sqlite --top 2 --json out.json   # a store's fastest points

Why: a ratio is only as fair as its reference.  Files measured before the CUDA references timed batches of
calls (``references.CUDA_BATCH``) counted the host's launch latency in the vendor's time; a new search is
not needed to correct them, only the same kernel and the vendor timed again side by side.  Each record of
a ``--from`` file that names a best point (``best_variant``, ``best_config``) of a convolution layer
(``vgg16:N`` or a layer spec), a depthwise layer (``dw:C,H,W,K,stride,pad``) or a reduction
(``dot-N``, ``sum-N``, ``max-N``) is regenerated, run, checked against the operator's reference and timed;
the vendor's references are timed with ``batch`` 1 and ``CUDA_BATCH``.

JSON: one record per point: ``workload``, ``source`` (the file it came from), ``variant``, ``config``,
``ok``, ``ms``, ``earlier_ms``, ``memory_bytes``, ``references`` (name -> ``batch_ms``, ``single_call_ms``),
``vendor`` and ``vendor_ms`` (the fastest batched reference), ``ratio_vs_vendor`` (``vendor_ms / ms``),
``single_call_ratio`` (the same against single-call times, as the earlier files measured),
``pooled_vendor_ms`` and ``pooled_ratio`` (against the least time the workload's references reached in the
whole run).  ``--best FILE``: each convolution layer's fastest point in ``conv_vgg16.py``'s record shape.
``--relu``: each convolution point's counterpart with the layer's bias and ReLU (the variant the same rules
derive from the convolution with a ReLU, the same configuration: the tile applies the ReLU as it writes out,
split-K in its sum kernel), against references that run the bias and ReLU too; workloads get ``+relu``,
``plain_variant`` names the point it came from.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REDUCTION = re.compile(r"(dot|sum|max)-(\d+)$")


def _operator(name: str, relu: bool = False):
    """The operator of a workload name and a function timing its vendor references: batch -> {name: ms};
    ``relu``: a convolution layer with its bias and ReLU (the references too)."""
    from liftpy.explore.conv import ConvOperator
    from liftpy.explore.operator import library_operator
    from liftpy.operators.conv import get_layer

    if m := REDUCTION.match(name):
        from reductions import vendor_ms

        op = library_operator(m.group(1), {"N": int(m.group(2))})
        inputs = op.inputs(0)
        return op, lambda batch: dict([vendor_ms(m.group(1), inputs, batch=batch)])
    if name.startswith(("dw:", "conv2d:")):
        from conv_vgg16 import _torch_conv2d, depthwise_layer, library_layer

        op, params, sizes = depthwise_layer(name)[:3] if name.startswith("dw:") else library_layer(name)
        return op, lambda batch: dict([_torch_conv2d(params, sizes, 20, batch=batch)])
    from liftpy.operators.conv.direct import NO_EPILOGUE, random_epilogue, random_inputs
    from liftpy.explore.vendor import available_references, measure_reference

    layer = get_layer(name.removesuffix(RELU))
    x, wt = random_inputs(layer, 0)
    epilogue = random_epilogue(layer, 0) if relu else NO_EPILOGUE
    names = [n for n in available_references() if n in ("cudnn", "im2col_gemm")] or list(available_references())
    return ConvOperator.of(layer, relu=relu), lambda batch: {
        n: measure_reference(n, x, wt, layer.stride, layer.pad, batch=batch, epilogue=epilogue).time_ms for n in names}


RELU = "+relu"


def _counterpart(plain: list, variants: list, vid: str):
    """The variant of ``variants`` (a convolution with ReLU) derived as ``vid`` was from the plain convolution
    (``plain``): the same rules (tags) and the same parameters, which name one variant among the tiled ones."""
    from liftpy.search import find_variant
    from liftpy.search.variants import variant_tags

    v = find_variant(plain, vid)
    if v is None:
        return None
    key = (variant_tags(v), frozenset(str(p) for p in v.params))
    same = [w for w in variants if (variant_tags(w), frozenset(str(p) for p in w.params)) == key]
    return same[0] if len(same) == 1 else None


def _store_points(path: str, top: int) -> list[tuple[str, dict]]:
    """The ``top`` fastest measured points of each workload in a results database, as ``--from`` records;
    a layer spec that names a VGG-16 layer is given that name."""
    from liftpy.errors import TuningError
    from liftpy.operators.conv import network_layers
    from liftpy.results.store import Status, Store

    if not Path(path).is_file():
        raise TuningError(f"no results database at {path}")
    names = {layer.spec: layer.name for layer in network_layers("vgg16")}
    by_workload: dict = {}
    with Store(path) as store:
        for r in store.records(status=Status.OK):
            if not r.is_reference and r.time_ms:
                by_workload.setdefault(r.layer, []).append(r)
    out = []
    for workload, rs in by_workload.items():
        for r in sorted(rs, key=lambda r: r.time_ms)[:top]:
            out.append((Path(path).name, {"layer": names.get(workload, workload), "best_variant": r.variant,
                                          "best_config": dict(r.config), "best_ms": r.time_ms}))
    return out


def main() -> int:
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.errors import LiftError
    from liftpy.explore.operator import parse_sizes
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.host.profile import DeviceProfile
    from liftpy.explore.vendor import CUDA_BATCH
    from liftpy.results.cache import cached_variants
    from liftpy.search import find_variant, variant_id

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="sources", nargs="*", default=[], metavar="FILE")
    ap.add_argument("--point", nargs=3, action="append", default=[], metavar=("WORKLOAD", "VARIANT", "K=V,..."),
                    help="a point of a workload's space to time beside the files' best points")
    ap.add_argument("--store", default=None, metavar="DB",
                    help="a results database whose fastest points per workload (--top) are timed too")
    ap.add_argument("--top", type=int, default=1, help="with --store: how many of each workload's fastest points")
    ap.add_argument("--json", required=True)
    ap.add_argument("--only", nargs="*", default=None, help="only these workloads")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--vendor-repeats", type=int, default=3,
                    help="time the references this many times per point; a workload's vendor time is the least of all")
    ap.add_argument("--best", default=None, metavar="JSON",
                    help="also write each convolution layer's fastest point, in conv_vgg16.py's record shape")
    ap.add_argument("--relu", action="store_true",
                    help="time each convolution point's counterpart with the layer's bias and ReLU fused (same rules, "
                         "same configuration) against references that run the bias and ReLU too")
    ap.add_argument("--device", default=None)
    ap.add_argument("--profile", default=None, help="device profile JSON whose limits code generation respects")
    args = ap.parse_args()
    if not args.sources and not args.point and not args.store:
        ap.error("give --from files, --store or --point")

    device = get_device(args.device)
    limits = DeviceProfile.load(args.profile).limits() if args.profile else device_limits(device)
    records, ops = [], {}
    try:
        points = [(s, r) for s in args.sources for r in json.loads(Path(s).read_text())]
    except (OSError, ValueError) as e:
        print(f"retime: cannot read the results file: {e}", file=sys.stderr)
        return 2
    try:
        points += [("--point", {"layer": w, "best_variant": v, "best_config": parse_sizes(c)}) for w, v, c in args.point]
    except LiftError as e:
        print(f"retime: --point: {e}", file=sys.stderr)
        return 2
    if args.store:
        try:
            points += _store_points(args.store, args.top)
        except LiftError as e:
            print(f"retime: --store: {e}", file=sys.stderr)
            return 2
    print(f"{'workload':<24}{'ms':>9}{'earlier':>9}{'vendor':>13}{'batch ms':>10}{'1-call ms':>10}{'ratio':>7}{'1-call':>7}")
    for source, rec in points:
        name = rec.get("layer") or rec.get("workload")
        if not rec.get("best_variant") or (args.only and name not in args.only):
            continue
        # A record of a ReLU search (``conv_vgg16.py --relu``: ``vgg16:5+relu``) is a ReLU point already.
        already = name.endswith(RELU)
        relu = (args.relu or already) and not (name.startswith("dw:") or REDUCTION.match(name))
        counterpart = relu and not already
        name = name + RELU if counterpart else name
        t0 = time.time()
        if name not in ops:
            try:
                op, vendor = _operator(name, relu)
                plain = cached_variants(_operator(name.removesuffix(RELU))[0]) if counterpart else None
            except (LiftError, ValueError) as e:
                print(f"retime: workload {name!r}: {e}", file=sys.stderr)
                return 2
            ops[name] = op, vendor, cached_variants(op), plain
        op, vendor, variants, plain = ops[name]
        out = {"workload": name, "device": device.key, "source": Path(source).name, "variant": rec["best_variant"],
               "config": rec["best_config"], "earlier_ms": rec.get("best_ms")}
        if counterpart:
            v = _counterpart(plain, variants, rec["best_variant"])
            out["plain_variant"] = rec["best_variant"]
            if v is not None:
                out["variant"] = variant_id(v)
        else:
            v = find_variant(variants, rec["best_variant"])
        if v is None:
            out["error"] = "variant not derived by this version"
            print(f"{name:<24} {out['error']}: {rec['best_variant']}", flush=True)
            records.append(out)
            continue
        try:
            sizes = {**op.sizes(), **rec["best_config"]}
            stages = generate_pipeline(v.program, sizes, limits, v.placement_map)
            inputs, check = op.prepare(0)
            result = CompiledPipeline(v.program, sizes, device, v.placement_map, stages=stages).run(
                *inputs, repeat=args.repeat, warmup=5)
        except LiftError as e:
            out["error"] = f"{type(e).__name__}: {e}"
            print(f"{name:<24} {out['error']}", flush=True)
            records.append(out)
            continue
        batched, single = _least(vendor, CUDA_BATCH, args.vendor_repeats), _least(vendor, 1, args.vendor_repeats)
        best = min(batched, key=batched.get)
        out.update(ok=bool(check(result.output).ok), ms=result.time_ms, memory_bytes=result.device_bytes,
                   references={n: {"batch_ms": batched[n], "single_call_ms": single[n]} for n in batched},
                   vendor=best, vendor_ms=batched[best], ratio_vs_vendor=batched[best] / result.time_ms,
                   single_call_ratio=min(single.values()) / result.time_ms, seconds=round(time.time() - t0, 1))
        records.append(out)
        print(f"{name:<24}{result.time_ms:>9.4f}{out['earlier_ms'] or 0:>9.4f}{best:>13}{batched[best]:>10.4f}"
              f"{min(single.values()):>10.4f}{out['ratio_vs_vendor']:>7.2f}{out['single_call_ratio']:>7.2f}"
              f"{'' if out['ok'] else '  WRONG'}  {out['seconds']} s", flush=True)
        Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    _pool_vendor(records)
    Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    if args.best:
        best = _best_per_layer(records, args.store)
        Path(args.best).write_text(json.dumps(best, indent=1) + "\n")
        print(f"wrote {args.best}")
    return 0


def _least(vendor, batch: int, repeats: int) -> dict:
    """Each reference's least time over ``repeats`` timings (each a median of batches of ``batch`` calls)."""
    out: dict = {}
    for _ in range(max(1, repeats)):
        for name, ms in vendor(batch).items():
            out[name] = min(out.get(name, ms), ms)
    return out


def _pool_vendor(records: list[dict]) -> None:
    """Every point of a workload against the least time its references reached over the whole run
    (``pooled_vendor_ms``, ``pooled_ratio``): a GPU's clocks drift between points, and a ratio should not
    favour the point whose vendor timing fell in a slow moment.  Prints the summary per workload."""
    import math

    pool: dict = {}
    for r in records:
        for name, t in (r.get("references") or {}).items():
            w = pool.setdefault(r["workload"], {})
            w[name] = min(w.get(name, t["batch_ms"]), t["batch_ms"])
    ratios = []
    print(f"{'workload':<24}{'best ms':>9}{'vendor':>13}{'least ms':>10}{'ratio':>7}")
    for workload, refs in pool.items():
        vendor = min(refs, key=refs.get)
        mine = [r for r in records if r["workload"] == workload and r.get("ok")]
        for r in mine:
            r["pooled_references_ms"] = dict(refs)
            r["pooled_vendor"], r["pooled_vendor_ms"] = vendor, refs[vendor]
            r["pooled_ratio"] = refs[vendor] / r["ms"]
        if mine:
            fastest = min(mine, key=lambda r: r["ms"])
            ratios.append(fastest["pooled_ratio"])
            print(f"{workload:<24}{fastest['ms']:>9.4f}{vendor:>13}{refs[vendor]:>10.4f}{fastest['pooled_ratio']:>7.2f}")
    if ratios:
        print(f"geomean of the workloads' fastest points: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}x")


def _best_per_layer(records: list[dict], store: str | None) -> list[dict]:
    """Each convolution layer's fastest correct point as a ``conv_vgg16.py`` record (vendor: the pooled least)."""
    from conv_vgg16 import io_bytes, split_of

    from liftpy.operators.conv import get_layer
    from liftpy.results.store import Status, Store

    out = []
    for workload in dict.fromkeys(r["workload"] for r in records):
        mine = [r for r in records if r["workload"] == workload and r.get("ok")]
        if not mine or workload.startswith("dw:") or REDUCTION.match(workload):
            continue
        layer = get_layer(workload.removesuffix(RELU))
        suffix = RELU if workload.endswith(RELU) else ""
        r = min(mine, key=lambda r: r["ms"])
        rec = {"layer": workload, "spec": layer.spec + suffix, "relu": bool(suffix), "device": r.get("device"), "best_ms": r["ms"],
               "best_bytes": r["memory_bytes"], "memory_bytes": r["memory_bytes"],
               "split": split_of(r["config"], layer), "io_bytes": io_bytes(layer),
               "best_variant": r["variant"], "best_config": r["config"], "gflops": layer.flops / r["ms"] / 1e6}
        for name, ms in r["pooled_references_ms"].items():
            rec[name] = {"ms": ms, "name": name}
        rec.update(vendor_ms=r["pooled_vendor_ms"], ratio_vs_vendor=r["pooled_ratio"], found_in=r["source"])
        if store and Path(store).is_file():
            with Store(store) as db:
                points = [p for p in db.records(layer=layer.spec + suffix) if not p.is_reference]
            if points:  # else the point came from a --from file, whose search the store did not hold
                rec["samples"] = len(points)
                rec["valid"] = sum(1 for p in points if p.status is Status.OK)
        out.append(rec)
    return out


if __name__ == "__main__":
    sys.exit(main())
