"""Benchmark: VGG-16, ResNet-18 and MobileNetV2 whole, liftpy against PyTorch eager and under CUDA graphs.

    python benchmarks/networks.py --json benchmarks/results/h200-networks.json [--only resnet18] [--budget 8]

Each network (batch 1, 224 x 224 by default) runs as ``liftpy network`` runs it (``liftpy.network.run``):
every distinct layer explored into one store (``--samples`` points, ``--budget`` seconds of search each),
then the network layer by layer on the device with every layer's best implementation, each layer checked
against its numpy reference, and one forward pass chained on the device (``liftpy.network.chain``), timed
``--chain`` times.  PyTorch computes the same network from the same weights in the same process (float32, TF32
off, cuDNN benchmark mode): eager, and one forward pass captured in a CUDA graph (kernel time without launch
gaps), each timed with CUDA events over batches of calls; its output is compared with liftpy's.  Without
PyTorch or a CUDA device the torch fields are null and the rest still runs (a CPU smoke test:
``--resolution 32 --width 0.0625 --samples 1``).

JSON: a list of records ``network``, ``liftpy_ms`` (the sum of the layers' kernel times, profiling events),
``liftpy_wall_ms`` (the median wall time of one chained forward pass), ``torch_graph_ms``, ``torch_eager_ms``,
``ratio_vs_graph`` (torch_graph_ms / liftpy_ms: above 1 is faster than PyTorch's CUDA graph),
``ratio_wall_vs_eager`` (torch_eager_ms / liftpy_wall_ms), ``explore_s`` (finding every layer's best,
exploring those the store lacks), ``peak_bytes`` (liftpy's planned peak: arena + weights + the largest
workspace), with ``layers``, ``points``, ``ok``, ``end_to_end_error``, ``torch_error``, ``device``.
Target (issue 54): each network >= 1.2x the CUDA-graph time, explored in <= 180 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from gpu_common import Results, torch_cuda, torch_ms

NETWORKS = ("vgg16", "resnet18", "mobilenet_v2")


def torch_forward(torch, net, weights: dict):
    """The network as PyTorch computes it, NCHW on the GPU, from liftpy's weights (converted once): a function
    of the NCHW input tensor."""
    import torch.nn.functional as F

    from liftpy.errors import LiftError
    from liftpy.operators import parse_spec
    from liftpy.operators.conv import ConvShape

    def dev(a):
        return torch.from_numpy(np.ascontiguousarray(a, np.float32)).cuda()

    shapes = {"input": net.input_shape, **{n.name: n.shape for n in net.nodes}}
    steps = []
    for node in net.nodes:
        entry, p = parse_spec(node.op)
        ws = weights[node.name]
        if entry.name == "conv2d":
            cs = ConvShape.of(**p)
            w, b = dev(np.transpose(ws[0], (0, 3, 1, 2))), dev(ws[1])  # [M][kh][kw][C/g] -> [M][C/g][kh][kw]
            pads = (cs.left, cs.right, cs.top, cs.bottom)
            symmetric = cs.left == cs.right and cs.top == cs.bottom

            def conv(x, *shortcut, w=w, b=b, cs=cs, pads=pads, symmetric=symmetric, p=p):
                y = F.conv2d(x if symmetric else F.pad(x, pads), w, b, stride=(cs.sh, cs.sw),
                             padding=(cs.top, cs.left) if symmetric else 0, dilation=(cs.dh, cs.dw), groups=p["groups"])
                if p["residual"]:  # liftpy fuses a residual add into the convolution; PyTorch adds after it
                    y = y + shortcut[0]
                return y.clamp(0, 6) if p["relu"] == 6 else (F.relu(y) if p["relu"] else y)

            steps.append((node, conv))
        elif entry.name == "maxpool_hwc":
            steps.append((node, lambda x, p=p: F.max_pool2d(x, p["k"], p["stride"], padding=p["pad"])))
        elif entry.name == "add":
            steps.append((node, lambda x, y, p=p: F.relu(x + y) if p["relu"] else x + y))
        elif entry.name == "global_avgpool":
            steps.append((node, lambda x: x.mean(dim=(2, 3))))
        elif entry.name == "fully_connected":
            w = ws[0]
            src = shapes[node.inputs[0]]
            if len(src) == 3:  # liftpy flattens [H][W][C]; PyTorch's NCHW flattens C, H, W: reorder the columns once
                h, wd, c = src
                w = w.reshape(w.shape[0], h, wd, c).transpose(0, 3, 1, 2).reshape(w.shape[0], -1)
            w, b = dev(w), dev(ws[1])

            def linear(x, w=w, b=b, p=p):
                y = F.linear(x.reshape(1, -1), w, b)
                return F.relu(y) if p["relu"] else y

            steps.append((node, linear))
        else:
            raise LiftError(f"{net.name}: layer {node.name} ({entry.name}) has no PyTorch form in this benchmark")

    def forward(x):
        values = {"input": x}
        for node, fn in steps:
            values[node.name] = fn(*(values[i] for i in node.inputs))
        return values[net.output.name]

    return forward


def torch_times(torch, net, weights: dict, image: np.ndarray, liftpy_output: np.ndarray) -> dict:
    """PyTorch's eager and CUDA-graph times of one forward pass, and the largest difference of its output from
    liftpy's (relative to the output's rms)."""
    forward = torch_forward(torch, net, weights)
    x = torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)[None], np.float32)).cuda()
    with torch.no_grad():
        for _ in range(3):  # cuDNN's benchmark mode picks its algorithms in the first calls
            out = forward(x)
        torch.cuda.synchronize()
        want = liftpy_output.astype(np.float64).reshape(-1)
        got = out.detach().cpu().numpy().astype(np.float64).reshape(-1)
        rms = float(np.sqrt(np.mean(want ** 2))) or 1.0
        error = float(np.max(np.abs(got - want))) / rms
        eager = torch_ms(lambda: forward(x))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream before capture, as PyTorch's docs do
            for _ in range(3):
                forward(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            forward(x)
        graph_ms = torch_ms(graph.replay)
    del graph, forward, x
    torch.cuda.empty_cache()
    return {"torch_eager_ms": eager, "torch_graph_ms": graph_ms, "torch_error": error}


def main(argv=None) -> int:
    from liftpy.cli_args import positive_float

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", help="comma-separated networks (default: all three)")
    ap.add_argument("--samples", type=int, default=8, help="points per distinct layer")
    ap.add_argument("--search", choices=["model", "uniform"], default="model")
    ap.add_argument("--jobs", type=int, default=None, help="code-generation processes (default: liftpy's)")
    ap.add_argument("--budget", type=float, default=None, help="seconds of search per distinct layer")
    ap.add_argument("--time", type=positive_float, default=None,
                    help="seconds for a network's whole exploration (liftpy network --time)")
    ap.add_argument("--chain", type=int, default=20, help="chained forward passes timed (their median)")
    ap.add_argument("--db", default=None, help="results store shared by the networks (default: a temporary one)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--resolution", type=int, default=224)
    ap.add_argument("--width", type=float, default=1.0, help="scale of every channel count")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--unfused", action="store_true", help="each residual add a kernel of its own (liftpy network --unfused)")
    args = ap.parse_args(argv)
    from liftpy.errors import LiftError
    from liftpy.network.models import get_model
    from liftpy.network.run import network_image, network_weights, run_network
    from liftpy.search import named

    only = args.only.split(",") if args.only else list(NETWORKS)
    unknown = sorted(set(only) - set(NETWORKS))
    if unknown:
        print(f"networks: unknown network(s) {', '.join(unknown)}; choose from {', '.join(NETWORKS)}", file=sys.stderr)
        return 2
    torch = torch_cuda()
    if torch is None:
        print("networks: no PyTorch with a CUDA device here: the torch fields are null", flush=True)
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "networks.sqlite"
    print(f"{'network':<14}{'liftpy ms':>10}{'wall ms':>9}{'graph ms':>9}{'eager ms':>9}{'vs graph':>9}{'explore s':>10}"
          f"{'peak MB':>9}{'points':>7}  check", flush=True)
    results = Results(args.json, replace="network")  # one network per command adds to the file
    status = 0
    for name in only:
        net = get_model(name, fuse=not args.unfused, resolution=args.resolution, width=args.width, classes=args.classes)
        rec = {"network": name, "input_shape": list(net.input_shape), "layers": len(net.nodes), "fused": not args.unfused,
               "samples": args.samples,
               "search": args.search, "budget_s": args.budget, "time_s": args.time, "liftpy_ms": None, "liftpy_wall_ms": None,
               "torch_graph_ms": None, "torch_eager_ms": None, "ratio_vs_graph": None, "ratio_wall_vs_eager": None,
               "explore_s": None, "peak_bytes": None, "points": None, "ok": False, "end_to_end_error": None,
               "torch_error": None, "device": None, "error": None}
        t = time.time()
        try:
            run = run_network(net, db=db, samples=args.samples, search=named(args.search), jobs=args.jobs, device=args.device,
                              budget_s=args.budget, chain_repeat=max(1, args.chain), progress=True, time_s=args.time)
        except LiftError as e:  # one network's failure is recorded; the next still runs
            rec.update(error=str(e).splitlines()[0][:500], explore_s=round(time.time() - t, 1))
            print(f"{name:<14}{'failed':>10}  {rec['error']}", flush=True)
            results.add(rec)
            status = 1
            continue
        rec.update(liftpy_ms=run.time_ms, liftpy_wall_ms=run.chained.wall_ms, explore_s=round(run.explore_seconds, 1),
                   peak_bytes=run.peak_bytes, points=run.explored, ok=run.ok, end_to_end_error=run.end_to_end_error,
                   chain_error=run.chain_error, device=run.device, seconds=round(run.seconds, 1),
                   variants=[layer.variant for layer in run.layers])
        if torch is not None:
            rec.update(torch_times(torch, net, network_weights(net), network_image(net), run.output))
            rec.update(ratio_vs_graph=rec["torch_graph_ms"] / run.time_ms,
                       ratio_wall_vs_eager=rec["torch_eager_ms"] / run.chained.wall_ms)
        status = status or (0 if run.ok else 1)

        def show(v, fmt):  # (a torch field is None without PyTorch and CUDA)
            return format(v, fmt) if v is not None else format("-", fmt[:2])

        print(f"{name:<14}{run.time_ms:>10.4g}{run.chained.wall_ms:>9.4g}{show(rec['torch_graph_ms'], '>9.4g')}"
              f"{show(rec['torch_eager_ms'], '>9.4g')}{show(rec['ratio_vs_graph'], '>9.2f')}{run.explore_seconds:>10.0f}"
              f"{run.peak_bytes / 1e6:>9.4g}{run.explored:>7}  {'ok' if run.ok else 'WRONG'}", flush=True)
        results.add(rec)
    return status


if __name__ == "__main__":
    sys.exit(main())
