"""Benchmark: how much of a vendor reference's time is the host's launch latency (a CUDA machine).

    python benchmarks/vendor_gaps.py --json out.json

liftpy's times are OpenCL profiling events of the kernels alone.  A PyTorch call timed alone between two
CUDA events also counts the time the GPU waits for the host to launch it, which on small layers is a
large part; the references now time batches of calls (``references.CUDA_BATCH``).  This prints, for VGG-16's
nine 3x3 layers (cuDNN, im2col + cuBLAS) and the reductions of 2^24 floats, the per-call median timed one
call at a time and in batches, so that results measured before the change can be read against it.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LAYERS = ["vgg16:0", "vgg16:2", "vgg16:5", "vgg16:7", "vgg16:10", "vgg16:12", "vgg16:17", "vgg16:19", "vgg16:24"]


def _reduction_ms(fn, batch: int) -> float:
    import numpy as np

    from liftpy.explore.vendor import cuda_times

    for _ in range(3):
        fn()
    return float(np.median(cuda_times(fn, 30, batch)[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("vendor_gaps: needs PyTorch with a CUDA GPU", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("vendor_gaps: needs PyTorch with a CUDA GPU", file=sys.stderr)
        return 2
    from liftpy.operators.conv import get_layer
    from liftpy.explore.vendor import CUDA_BATCH, measure_reference
    from liftpy.operators.conv.direct import random_inputs

    out = []
    print(f"{'workload':<12}{'reference':<14}{'1 call ms':>11}{'batch ms':>10}{'gap':>7}")
    for name in LAYERS:
        layer = get_layer(name)
        x, w = random_inputs(layer, 0)
        for ref in ("cudnn", "im2col_gemm"):
            one = measure_reference(ref, x, w, layer.stride, layer.pad, batch=1).time_ms
            many = measure_reference(ref, x, w, layer.stride, layer.pad, batch=CUDA_BATCH).time_ms
            out.append({"workload": name, "reference": ref, "single_call_ms": one, "batch_ms": many})
            print(f"{name:<12}{ref:<14}{one:>11.4f}{many:>10.4f}{one / many:>7.2f}", flush=True)
    x = torch.randn(1 << 24, device="cuda")
    y = torch.randn(1 << 24, device="cuda")
    for name, fn in {"dot": lambda: torch.dot(x, y), "sum": lambda: torch.sum(x), "max": lambda: torch.max(x)}.items():
        one, many = _reduction_ms(fn, 1), _reduction_ms(fn, CUDA_BATCH)
        out.append({"workload": name, "reference": "torch", "single_call_ms": one, "batch_ms": many})
        print(f"{name:<12}{'torch':<14}{one:>11.4f}{many:>10.4f}{one / many:>7.2f}", flush=True)
    Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
