"""Benchmark: half storage against float, PyTorch fp16 and fp32 in the same run (issue 57).

    python benchmarks/half.py --json benchmarks/results/h200-half.json [--only add,vgg16:5] [--samples 24]
    python benchmarks/half.py --small --json benchmarks/results/cpu-half.json      # small sizes, any device

Operators: the memory-bound operators of the roofline benchmark (``roofline.OPERATORS``) and the nine
VGG-16 convolution layers (the library's ``conv2d``, 3x3, stride 1, padding 1).  Each is explored twice into
one store, in fp32 and in fp16-storage (arrays stored as half, arithmetic in float; ``docs/precision.md``),
and a third time in fp16 (half arithmetic) where the device passes the half probe.  Every point is validated
against the float64 numpy reference with its precision's tolerance.  PyTorch runs the same arithmetic on the
same device in fp16 and in fp32 (TF32 off; CUDA only: the fields are null without a CUDA PyTorch).

JSON: a list of records, one per operator and precision explored: ``operator``, ``precision``,
``memory_bound`` (bool), ``best_ms`` (the precision's best point), ``fp32_ms`` (the fp32 best of the same
run), ``speedup`` (fp32_ms / best_ms), ``max_rel_error`` (of the best point, ``|out - ref| / (|ref| +
rms(ref))``), ``torch_fp16_ms``, ``torch_fp32_ms``, with ``sizes``, ``best_bytes``, ``variant``, ``config``,
``points``, ``explore_s``, ``device``, ``command`` and ``error`` (why a precision has no point).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from gpu_common import Results, explore_best, torch_cuda, torch_ms
from roofline import OPERATORS, torch_fn

VGG16 = ["vgg16:0", "vgg16:2", "vgg16:5", "vgg16:7", "vgg16:10", "vgg16:12", "vgg16:17", "vgg16:19", "vgg16:24"]
CONV_SPEC = "conv2d:k=3x3,stride=1,pad=1"

# --small: sizes a CPU explores in seconds (the same operators and programs).
SMALL = {
    "gemv": {"M": 64, "N": 64}, "fully_connected_b1": {"B": 1, "M": 32, "N": 64}, "jacobi2d": {"H": 32, "W": 32},
    "jacobi3d": {"D": 8, "H": 8, "W": 8}, "blur2d": {"H": 32, "W": 32}, "add": {"N": 4096}, "sum": {"N": 4096},
    "max": {"N": 4096}, "maxpool2d": {"C": 4, "H": 16, "W": 16}, "avgpool2d": {"C": 4, "H": 16, "W": 16},
    "global_avgpool": {"H": 8, "W": 8, "C": 16}, "softmax_rows": {"M": 16, "N": 64}, "layernorm_rows": {"M": 16, "N": 64},
}


def small_conv(layer) -> dict:
    """A VGG-16 layer shrunk for --small, channels and image divided by 16 (so that the nine stay distinct)."""
    return {"C": max(layer.C // 16, 3), "H": max(layer.H // 16, 4), "W": max(layer.W // 16, 4), "M": max(layer.M // 16, 4)}


def cases(small: bool, only: set | None):
    """(name, library spec, sizes, memory bound) of every operator of the run."""
    from liftpy.operators.conv.layers import get_layer

    out = [(name, spec, SMALL[name] if small else sizes, True) for name, spec, sizes in OPERATORS]
    for name in VGG16:
        layer = get_layer(name)
        sizes = small_conv(layer) if small else {"C": layer.C, "H": layer.H, "W": layer.W, "M": layer.M}
        out.append((name, CONV_SPEC, sizes, False))
    return [c for c in out if only is None or c[0] in only]


def torch_times(torch, name: str, spec: str, op) -> tuple[float | None, float | None]:
    """PyTorch's (fp16 ms, fp32 ms) for the operator on the CUDA device: fp16 on half tensors (under autocast
    too, so that a stencil's float weights follow its input); (None, None) without a CUDA PyTorch."""
    if torch is None:
        return None, None
    import torch.nn.functional as F

    def build(dtype):
        xs = [torch.from_numpy(a).cuda().to(dtype) for a in op.inputs(0)]
        if spec != CONV_SPEC:
            return torch_fn(torch, name, xs)
        x, w, b = xs
        x = x.permute(2, 0, 1)[None].contiguous()  # the library's [H][W][C] as NCHW
        w = w.permute(0, 3, 1, 2).contiguous()  # [M][KH][KW][C] as [M][C][KH][KW]
        return lambda: F.conv2d(x, w, b, padding=1)

    fp32 = torch_ms(build(torch.float32))
    fn16 = build(torch.float16)

    def half():
        with torch.autocast("cuda", dtype=torch.float16):
            return fn16()

    fp16 = torch_ms(half)
    torch.cuda.empty_cache()
    return fp16, fp32


def best_of(ex, precision: str):
    """The fastest measured point of ``precision`` among an exploration's records (None if it has none)."""
    from liftpy.results.precision import point_precision

    points = [r for r in ex.records if r.measured and not r.is_reference and point_precision(r) == precision]
    return min(points, key=lambda r: r.time_ms) if points else None


def half_arithmetic_available(device) -> bool:
    from liftpy.host.device import get_device
    from liftpy.probe.half import run_probe

    return bool(run_probe(get_device(device)).value)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--only", help="comma-separated operator names (add, vgg16:5, ...; default: all)")
    ap.add_argument("--small", action="store_true", help="small sizes: a CPU device, a test")
    ap.add_argument("--samples", type=int, default=24, help="points per operator and precision (default 24)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--budget", type=float, default=None, help="seconds of search per operator and precision")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one point may take (default 60)")
    ap.add_argument("--db", default=None, help="results store (default: a temporary one)")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    from liftpy.errors import LiftError
    from liftpy.explore.operator import library_operator
    from liftpy.host.device import device_info

    torch = torch_cuda()
    only = set(args.only.split(",")) if args.only else None
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "half.sqlite"
    precisions = ["fp32", "fp16-storage"] + (["fp16"] if half_arithmetic_available(args.device) else [])
    device = device_info(args.device).key
    print(f"{device}: precisions {', '.join(precisions)}; PyTorch {'on CUDA' if torch else 'absent (torch_* null)'}")
    print(f"{'operator':<20}{'precision':>14}{'best ms':>11}{'fp32 ms':>11}{'speedup':>9}{'max rel err':>13}"
          f"{'torch16 ms':>12}{'torch32 ms':>12}")
    results = Results(args.json, replace=("operator", "precision"))  # (two commands of a device part, one file)
    command = "python benchmarks/half.py " + " ".join(argv if argv is not None else sys.argv[1:])
    for name, spec, sizes, memory_bound in cases(args.small, only):
        torch16, torch32 = torch_times(torch, name, spec, library_operator(spec, sizes))
        fp32_ms = None
        for precision in precisions:
            rec = {"command": command, "operator": name, "precision": precision, "memory_bound": memory_bound, "sizes": sizes, "device": device,
                   "best_ms": None, "fp32_ms": None, "speedup": None, "max_rel_error": None, "torch_fp16_ms": torch16,
                   "torch_fp32_ms": torch32, "best_bytes": None, "variant": None, "config": None, "points": 0,
                   "explore_s": 0.0, "error": None}
            try:
                op = library_operator(spec, sizes, precision)
            except LiftError as e:  # (half arithmetic refuses a user function declared on float)
                rec["error"] = str(e).splitlines()[0][:300]
                results.add(rec)
                print(f"{name:<20}{precision:>14}  {rec['error']}", flush=True)
                continue
            # (a store per precision: fp32 and fp16-storage points are one problem, and --samples counts a store's)
            store = db.with_name(f"{db.stem}-{precision}{db.suffix}")
            best, seconds, points, ex = explore_best(op, args.samples, store, args.jobs, args.budget, timeout_s=args.timeout)
            best = best_of(ex, precision) if best is not None else None
            rec.update(points=points, explore_s=round(seconds, 1))
            if best is None:
                rec["error"] = str(ex).splitlines()[0][:300] if isinstance(ex, Exception) else "no valid point"
            else:
                if precision == "fp32":
                    fp32_ms = best.time_ms
                rec.update(best_ms=best.time_ms, best_bytes=best.bytes, variant=best.variant, config=best.config,
                           max_rel_error=best.metrics.get("max_rel_error"), fp32_ms=fp32_ms,
                           speedup=fp32_ms / best.time_ms if fp32_ms else None)
            results.add(rec)
            cell = lambda v, f: format(v, f) if v is not None else "-".rjust(int(f.split(".")[0]))  # noqa: E731
            print(f"{name:<20}{precision:>14}{cell(rec['best_ms'], '11.4f')}{cell(fp32_ms, '11.4f')}"
                  f"{cell(rec['speedup'], '9.2f')}{cell(rec['max_rel_error'], '13.2e')}{cell(torch16, '12.4f')}"
                  f"{cell(torch32, '12.4f')}  {rec['error'] or ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
