"""Benchmark: liftpy's explored direct convolutions on VGG-16's nine layers, against references measured
in the same run on the same device.

    python benchmarks/conv_vgg16.py --quick --json out.json            # reduced layers, PoCL (CI)
    python benchmarks/conv_vgg16.py --samples 30 --json out.json       # full layers (a GPU)

For each layer it explores N sampled points (variant and configuration), validates each, and reports the
best time, its throughput and memory, and the references: on CUDA machines PyTorch's cuDNN conv2d (fp32,
TF32 off) and im2col + cuBLAS GEMM; on CPU im2col + numpy BLAS GEMM and PyTorch's conv2d when installed.
Ratios are reference time / liftpy time (above 1: liftpy faster) and reference memory / liftpy memory.
JSON: a list of records with layer, device, samples, valid, best_ms, best_bytes (= memory_bytes: every
buffer of the best point, partial sums of a split reduction included), split (how many parts the best
point's reduction is split into across work-groups: 1 when it is not), and per reference (cudnn,
im2col_gemm, torch_cpu, as present) its ms and bytes.  ``--relu`` explores each layer as a network runs it
(convolution, bias, ReLU: the tilings fuse the ReLU into their write-out, split-K into its sum kernel) against
references that run the same (cuDNN's convolution with its bias, then an in-place ReLU; the GEMM with the bias
as its addend, then the ReLU); the record's ``relu`` says which.  ``--search model`` ranks candidates with the cost
model and learns from what it measures; ``--rules 'tile2DReduce|tile2DReduceStrided'`` keeps the
convolutions computed as a tiled matrix product over the im2col view.

A layer ``dw:C,H,W,K,stride,pad`` is a depthwise convolution (groups = C = M): the library's ``conv2d``
operator explored as it is (it has no matrix product to tile, so ``--rules`` does not apply to it),
against PyTorch's depthwise conv2d (cuDNN on CUDA machines, the CPU otherwise) timed in this process.
A layer ``conv2d:PARAMS@C=..,H=..,W=..,M=..`` is any layer of the library's ``conv2d`` (``liftpy operators``:
kernel shape, stride, padding per side, dilation, groups), for example
``conv2d:k=3,dilation=2,pad=2@C=512,H=28,W=28,M=512``, against PyTorch's same layer; ``--rules`` applies
(``tile2DReduce|tile2DReduceStrided`` the matrix product over its im2col view, ``groupsOut`` a grouped one).

The references are timed in this run even when the store already holds them (from the run that first
explored a layer); the liftpy points of a resumed store keep their earlier times (``retime.py`` times a
store's best points again beside the references).
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LAYERS = ["vgg16:0", "vgg16:2", "vgg16:5", "vgg16:7", "vgg16:10", "vgg16:12", "vgg16:17", "vgg16:19", "vgg16:24"]
REF_KEYS = {"cudnn": "cudnn", "im2col_gemm": "im2col_gemm", "im2col_gemm_numpy": "im2col_gemm", "torch_cpu": "torch_cpu"}
ORDER = {"cudnn": 0, "im2col_gemm": 1, "torch_cpu": 2, "im2col_gemm_numpy": 3}


def main() -> int:
    from liftpy.explore.conv import explore_layer
    from liftpy.operators.conv import get_layer
    from liftpy.search import named
    from liftpy.operators.conv.direct import NO_EPILOGUE, random_epilogue, random_inputs
    from liftpy.explore.vendor import available_references, measure_reference

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced layers (16x16, 8 channels, 8 kernels) and few samples")
    ap.add_argument("--samples", type=int, default=None, help="points per layer (default 24, 4 with --quick)")
    ap.add_argument("--json", required=True, metavar="FILE")
    ap.add_argument("--layers", nargs="*", default=LAYERS)
    ap.add_argument("--db", default=None, help="results store (default: next to the JSON file)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0, help="which points are sampled (the same seed resumes the same points)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per point (default 10, 2 with --quick)")
    ap.add_argument("--rules", default="", metavar="R1,R2", help="only variants derived with all these rules (e.g. registerBlock2D; A|B: either)")
    ap.add_argument("--search", default="uniform", choices=["uniform", "model"])
    ap.add_argument("--jobs", type=int, default=1, help="parallel code-generation processes")
    ap.add_argument("--relu", action="store_true",
                    help="each layer as a network runs it: convolution, bias, ReLU (the references too)")
    args = ap.parse_args()
    samples = args.samples or (4 if args.quick else 24)
    repeat = args.repeat or (2 if args.quick else 10)
    db = args.db or str(Path(args.json).with_suffix(".sqlite"))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)

    records = []
    print(f"{'layer':<22}{'pts':>4}{'ok':>4}{'best ms':>10}{'GFLOP/s':>9}{'MB':>8}   references (ms, MB, time ratio ref/liftpy, memory ratio ref/liftpy)")
    for name in args.layers:
        if name.startswith(("dw:", "conv2d:")):
            rec = library_conv(name, args, samples, repeat, db)
            records.append(rec)
            Path(args.json).write_text(json.dumps(records, indent=1))
            continue
        layer = get_layer(name)
        if args.quick:
            layer = layer.reduced(spatial=16, channels=8, kernels=8)
        t0 = time.time()
        ex = explore_layer(layer, samples=samples, db=db, device=args.device, profile_path=args.profile,
                           timeout_s=args.timeout, repeat=repeat, warmup=2, progress=False, seed=args.seed,
                           rules=tuple(r for r in args.rules.split(",") if r), search=named(args.search), jobs=args.jobs,
                           relu=args.relu)
        rec, best, line = _summary(ex.operator.name if not args.quick else layer.name + ("+relu" if args.relu else ""),
                                   ex.operator.problem, ex, args.rules or None, io_bytes(layer), layer.flops, t0)
        rec["split"] = split_of(best.config, layer) if best else None
        rec["relu"] = args.relu
        refs = []
        # The references are timed again here, in this run: a resumed store keeps the ones of the run that
        # first met the layer, maybe on another machine of the same kind, whose vendor times differ.
        # The GPU's im2col + cuBLAS is the im2col reference where there is one; numpy's only otherwise.
        x, w = random_inputs(layer, args.seed)
        epilogue = random_epilogue(layer, args.seed) if args.relu else NO_EPILOGUE
        for name in sorted(available_references(), key=lambda n: ORDER.get(n, 9)):
            key = REF_KEYS.get(name)
            if key is None or key in rec:
                continue
            r = measure_reference(name, x, w, layer.stride, layer.pad, epilogue=epilogue)
            rec[key] = {"ms": r.time_ms, "bytes": r.bytes, "name": name}
            if best:
                refs.append(f"{key} {r.time_ms:.4g} ms {r.bytes / 2**20:.3g} MB x{r.time_ms / best.time_ms:.3g} m{r.bytes / best.bytes:.3g}")
        records.append(rec)
        print(line + "   " + "; ".join(refs), flush=True)
        Path(args.json).write_text(json.dumps(records, indent=1))
    print(f"wrote {args.json}")
    return 0


def depthwise_layer(name: str, quick: bool = False):
    """The library's ``conv2d`` with groups = C = M for ``dw:C,H,W,K,stride,pad`` (``quick``: C, H, W reduced
    to 8, 16, 16): what ``library_layer`` gives (operator, parameters, sizes) and its (C, H, W, K, stride, pad)."""
    from liftpy.errors import InputError

    try:
        c, h, w, k, stride, pad = (int(x) for x in name[3:].split(","))
    except ValueError:
        raise InputError(f"depthwise layer {name!r}: give dw:C,H,W,K,stride,pad (for example dw:32,112,112,3,1,1)") from None
    if quick:
        c, h, w = 8, 16, 16
    op, params, sizes = library_layer(f"conv2d:k={k}x{k},stride={stride},pad={pad},groups={c}@C={c},H={h},W={w},M={c}")
    return op, params, sizes, (c, h, w, k, stride, pad)


def library_layer(name: str, quick: bool = False):
    """The library's ``conv2d`` for ``conv2d:PARAMS@C=..,H=..,W=..,M=..`` (any kernel shape, stride, padding,
    dilation, groups; ``quick``: channels, kernels and the image reduced, groups kept dividing them): the
    operator, its parameters and its sizes."""
    from liftpy.errors import InputError
    from liftpy.explore.operator import library_operator
    from liftpy.operators import parse_spec

    spec, _, size_text = name.partition("@")
    try:
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(","))}
    except ValueError:
        raise InputError(f"layer {name!r}: give conv2d:PARAMS@C=..,H=..,W=..,M=.. "
                         "(for example conv2d:k=3,dilation=2,pad=2@C=512,H=28,W=28,M=512)") from None
    _, params = parse_spec(spec)
    if quick:
        g = params["groups"]
        depthwise = g == sizes["C"] == sizes["M"]
        c = 8 if g == 1 else (g if depthwise else 2 * g)
        sizes = {"C": c, "H": 16, "W": 16, "M": c}
    return library_operator(spec, sizes), params, sizes


def library_conv(name: str, args, samples: int, repeat: int, db: str) -> dict:
    """Explore one layer of the library's ``conv2d`` (``dw:`` or ``conv2d:``) and time PyTorch's same layer
    on the same device; the record and its table line.  ``--rules`` applies to ``conv2d:`` layers (a grouped
    one is a matrix product per group, ``groupsOut``), not to ``dw:`` ones (one kernel per group: nothing to
    tile)."""
    from liftpy.explore import explore_operator
    from liftpy.operators.conv import ConvShape
    from liftpy.search import named

    if name.startswith("dw:"):
        op, params, sizes, (c, h, w, k, stride, pad) = depthwise_layer(name, args.quick)
        rules = ()
        label, spec = f"dw:{c},{h},{w},{k},{stride},{pad}", f"C={c},H={h},W={w},K={k},stride={stride},pad={pad},groups={c}"
    else:
        op, params, sizes = library_layer(name, args.quick)
        rules = tuple(r for r in args.rules.split(",") if r)
        label = name.partition("@")[0] + "@" + ",".join(f"{k}={v}" for k, v in sizes.items())
        spec = label
    t0 = time.time()
    ex = explore_operator(op, samples=samples, db=db, device=args.device, profile_path=args.profile, timeout_s=args.timeout,
                          repeat=repeat, warmup=2, progress=False, seed=args.seed, references=False, search=named(args.search),
                          jobs=args.jobs, rules=rules)
    cs = ConvShape.of(**params)
    oh, ow = cs.output(sizes["H"], sizes["W"])
    c, m, g = sizes["C"], sizes["M"], params["groups"]
    taps = c // g * cs.kh * cs.kw
    rec, best, line = _summary(label, spec, ex, ",".join(rules) or None,
                               4 * (c * sizes["H"] * sizes["W"] + m * taps + m + m * oh * ow), op.flops(), t0)
    ks = best.config.get("ks0") if best else None
    rec["split"] = taps // int(ks) if ks else 1
    timed = _torch_conv2d(params, sizes, repeat)
    if timed is not None:
        ref, ms = timed
        rec[ref] = {"ms": ms, "bytes": rec["io_bytes"], "name": ref}
        if best:
            line += f"   {ref} {ms:.4g} ms x{ms / best.time_ms:.3g}"
    print(line, flush=True)
    return rec


def _summary(layer: str, spec: str, ex, rules, io_bytes: int, flops: float, t0: float):
    """The record of an exploration's points (best time, memory, statuses), its best point and the start of
    its table line."""
    from liftpy.results.store import Status

    points = [r for r in ex.records if not r.is_reference]
    ok = [r for r in points if r.status is Status.OK]
    best = min(ok, key=lambda r: r.time_ms) if ok else None
    rec = {"layer": layer, "spec": spec, "device": ex.device, "samples": len(points), "valid": len(ok), "rules": rules,
           "best_ms": best.time_ms if best else None, "best_bytes": best.bytes if best else None,
           "memory_bytes": best.bytes if best else None, "split": None, "io_bytes": io_bytes,
           "best_variant": best.variant if best else None, "best_config": best.config if best else None,
           "gflops": flops / best.time_ms / 1e6 if best else None,
           "statuses": {s: sum(1 for r in points if str(r.status) == s) for s in sorted({str(r.status) for r in points})},
           "seconds": round(time.time() - t0, 1)}
    line = f"{layer:<22}{len(points):>4}{len(ok):>4}"
    line += f"{best.time_ms:>10.4g}{rec['gflops']:>9.4g}{best.bytes / 2**20:>8.3g}" if best else f"{'-':>10}{'-':>9}{'-':>8}"
    return rec, best, line


def _torch_conv2d(params: dict, sizes: dict, repeat, batch: int | None = None) -> tuple[str, float] | None:
    """PyTorch's convolution of the layer (fp32, TF32 off; cuDNN on CUDA machines): its name and median ms,
    timed with CUDA events in batches of ``batch`` calls (``references.cuda_times``; ``CUDA_BATCH`` by
    default), or on the CPU; None without PyTorch.  Uneven padding is a separate pad first (PyTorch's
    convolution pads evenly), as a framework would run it."""
    try:
        import torch
    except ImportError:
        return None
    from liftpy.operators.conv import ConvShape
    from liftpy.explore.vendor import CUDA_BATCH, cuda_times

    cs = ConvShape.of(**params)
    g = params["groups"]
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = False, True
    torch.backends.cuda.matmul.allow_tf32 = False
    x = torch.randn(1, sizes["C"], sizes["H"], sizes["W"], device=dev)
    wt = torch.randn(sizes["M"], sizes["C"] // g, cs.kh, cs.kw, device=dev)
    b = torch.randn(sizes["M"], device=dev)
    even = cs.top == cs.bottom and cs.left == cs.right

    def run():
        xin = x if even else torch.nn.functional.pad(x, (cs.left, cs.right, cs.top, cs.bottom))
        return torch.nn.functional.conv2d(xin, wt, b, stride=(cs.sh, cs.sw), padding=(cs.top, cs.left) if even else 0,
                                          dilation=(cs.dh, cs.dw), groups=g)

    with torch.inference_mode():
        for _ in range(3):
            run()
        if cuda:
            times, _ = cuda_times(run, max(repeat, 5), batch or CUDA_BATCH)
        else:
            times = []
            for _ in range(max(repeat, 5)):
                t = time.perf_counter()
                run()
                times.append((time.perf_counter() - t) * 1e3)
    return ("cudnn" if cuda else "torch_cpu"), sorted(times)[len(times) // 2]


def split_of(config: dict, layer) -> int:
    """Parts of the reduction (C*K*K terms) done by separate work-groups: C*K*K / ks for split-K, else 1."""
    ks = config.get("ks0")
    return (layer.C * layer.K * layer.K) // int(ks) if ks else 1


def io_bytes(layer) -> int:
    """Bytes of a layer's input, weights, biases and output: what a convolution needs at the least."""
    return 4 * (layer.C * layer.H * layer.W + layer.M * layer.C * layer.K * layer.K + layer.M
                + layer.M * layer.out_h * layer.out_w)


if __name__ == "__main__":
    sys.exit(main())
