"""``liftpy network NAME``: a whole network with the best stored implementation of each layer."""

from __future__ import annotations

import json
from pathlib import Path

from ..cli_args import nonnegative_int, positive_float, positive_int
from ..errors import TuningError


def register(sub) -> None:
    p = sub.add_parser("network", help="run VGG-16, ResNet-18 or MobileNetV2 with the best implementation of every "
                                       "layer (exploring missing ones), validated, with its memory plan and frontier")
    p.add_argument("name", help="vgg16, resnet18 or mobilenet_v2")
    p.add_argument("--reduced", action="store_true", help="32 x 32 images, an eighth of the channels, 10 classes")
    p.add_argument("--unfused", action="store_true",
                   help="keep each residual add a kernel of its own (by default it is fused into its convolution)")
    p.add_argument("--samples", "-n", type=positive_int, default=8, help="points per layer the store should hold (default 8; up to 2x for the layers doing "
                   "most of the arithmetic)")
    p.add_argument("--search", choices=["model", "uniform"], default="model")
    p.add_argument("--jobs", "-j", type=positive_int, default=None,
                   help="parallel code-generation processes (default: on a GPU one per core but one, on a CPU device 1)")
    p.add_argument("--db", default="results.sqlite")
    p.add_argument("--device", "-d", default=None)
    p.add_argument("--budget", type=positive_float, default=None, metavar="SECONDS", help="seconds of search per distinct layer")
    p.add_argument("--time", type=positive_float, default=None, metavar="SECONDS",
                   help="seconds for the whole exploration, shared out between the layers (the heaviest may then ask "
                        "for more points); a layer left with no time still gets one point")
    p.add_argument("--chain", type=nonnegative_int, default=0, metavar="N",
                   help="also time N forward passes with every layer chained on the device (the wall clock)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the run as JSON")
    p.add_argument("--precision", choices=["fp32", "fp16-storage", "fp16"], default="fp32",
                   help="fp16-storage: every layer's arrays stored as half, arithmetic in float; fp16: half arithmetic too")
    p.set_defaults(func=cmd_network)


def cmd_network(args) -> int:
    # Here, not at the head: every ``liftpy`` command builds the whole parser, and the exploration's modules
    # (the search, the solver, the model) would add to the start-up of each.
    from ..search import named
    from .models import get_model
    from .run import format_run, run_network, run_record

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..operators.precision import require_device

    require_device(args.precision, args.device)
    if args.chain and args.precision != "fp32":
        raise TuningError("--chain passes float tensors from layer to layer; chain a network in --precision fp32")
    net = get_model(args.name, reduced=args.reduced, fuse=not args.unfused)
    fused = sum("residual=1" in n.op for n in net.nodes)
    said = f" ({fused} residual adds fused into their convolutions; --unfused keeps them)" if fused else ""
    print(f"{net.name}: {len(net.nodes)} layers{said}, {len({n.key for n in net.nodes})} distinct problems, "
          f"input {net.input_shape}", flush=True)
    run = run_network(net, db=args.db, samples=args.samples, search=named(args.search), jobs=args.jobs, device=args.device,
                      budget_s=args.budget, chain_repeat=args.chain, precision=args.precision, time_s=args.time)
    print(format_run(run))
    if args.json:
        Path(args.json).write_text(json.dumps(run_record(run), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0 if run.ok else 1
