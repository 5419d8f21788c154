"""``liftpy explore``, ``liftpy pareto`` and ``liftpy show``: the exploration of direct convolutions from
the command line (the same operations as ``liftpy.tuning.engine`` for notebooks)."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import TuningError


def _layer(args):
    from .layers import get_layer

    layer = get_layer(args.layer)
    if getattr(args, "reduced", False):
        layer = layer.reduced(spatial=args.spatial, channels=args.channels, kernels=args.kernels)
    return layer


def _layer_args(p, required=True) -> None:
    p.add_argument("--layer", "-l", required=required, help="vgg16:0 ... vgg16:24, alexnet:0, or C,H,W,M,K,stride,pad")
    p.add_argument("--reduced", action="store_true", help="a smaller version of the layer (same kernel, stride, padding)")
    p.add_argument("--spatial", type=int, default=16, help="with --reduced: height and width at most this (default 16)")
    p.add_argument("--channels", type=int, default=8, help="with --reduced: input channels at most this (default 8)")
    p.add_argument("--kernels", type=int, default=8, help="with --reduced: kernels at most this (default 8)")


def register(sub) -> None:
    p = sub.add_parser("explore", help="generate, validate and measure many implementations of an operator")
    p.add_argument("operator", choices=["conv"], help="the operator (conv: the direct convolution of the Lift paper)")
    _layer_args(p)
    p.add_argument("--samples", "-n", type=int, default=100, help="points to evaluate (default 100)")
    p.add_argument("--db", default="results.sqlite", help="results store (SQLite); re-running resumes (default results.sqlite)")
    p.add_argument("--device", "-d", default=None, help="device index or name fragment (see liftpy devices)")
    p.add_argument("--profile", default=None, metavar="FILE", help="device profile JSON (from liftpy probe)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds one point may take (default 300)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per point (median; default 5)")
    p.add_argument("--no-references", action="store_true", help="do not measure the reference implementations")
    p.add_argument("--plot", default=None, metavar="PNG", help="where to draw the frontier (default: next to the store)")
    p.add_argument("--rules", default=None, metavar="R1,R2",
                   help="only variants whose derivation uses every one of these rules (e.g. registerBlock2D)")
    p.set_defaults(func=cmd_explore)

    p = sub.add_parser("pareto", help="the time/memory Pareto frontier of a layer in a results store")
    _layer_args(p)
    p.add_argument("--db", default="results.sqlite")
    p.add_argument("--device-key", default=None, help="the device's key as stored (when the store has several devices)")
    p.add_argument("--plot", default=None, metavar="PNG", help="also draw the frontier to this PNG")
    p.set_defaults(func=cmd_pareto)

    p = sub.add_parser("show", help="a stored implementation: its parameters, rules, program and OpenCL source")
    _layer_args(p, required=False)
    p.add_argument("--db", default="results.sqlite")
    p.add_argument("--best", action="store_true", help="the fastest correct implementation (the default)")
    p.add_argument("--device-key", default=None)
    p.set_defaults(func=cmd_show)


def _default_plot(db: str, layer) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", layer.name)
    return Path(db).with_name(f"{Path(db).stem}-{name}.png")


def cmd_explore(args) -> int:
    from .engine import explore_layer, plot

    layer = _layer(args)
    result = explore_layer(
        layer,
        samples=args.samples,
        db=args.db,
        device=args.device,
        profile_path=args.profile,
        seed=args.seed,
        timeout_s=args.timeout,
        repeat=args.repeat,
        references=not args.no_references,
        rules=tuple(r.strip() for r in args.rules.split(",") if r.strip()) if args.rules else (),
    )
    statuses: dict[str, int] = {}
    for r in result.records:
        if not r.is_reference:
            statuses[str(r.status)] = statuses.get(str(r.status), 0) + 1
    print(f"\n{layer.name}: ran {result.ran} points, {result.resumed} already in {args.db}; "
          f"statuses: {', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}")
    print(f"time/memory Pareto frontier ({len(result.frontier)} points) on {result.device}:")
    print(result.table())
    if result.frontier:
        path = plot(args.db, layer, args.plot or _default_plot(args.db, layer), device=result.device)
        print(f"frontier plot: {path}")
    return 0 if result.frontier else 1


def cmd_pareto(args) -> int:
    from .engine import frontier, plot
    from .pareto import format_frontier

    layer = _layer(args)
    front, refs, measured = frontier(args.db, layer, args.device_key)
    if not measured:
        raise TuningError(f"{args.db} has no measured point for {layer.name} ({layer.spec})")
    print(f"{layer.name} ({layer.spec}): {len(measured)} measured points, {len(front)} on the frontier")
    print(format_frontier(front, refs, flops=layer.flops))
    if args.plot:
        print(f"frontier plot: {plot(args.db, layer, args.plot, args.device_key)}")
    return 0


def cmd_show(args) -> int:
    from .engine import best
    from .evaluate import kernel_source

    layer = _layer(args) if args.layer else None
    r = best(args.db, layer, args.device_key)
    print(f"fastest correct implementation of {r.layer_name} ({r.layer}) on {r.device}:")
    print(f"  variant {r.variant}: {r.time_ms:.4g} ms, {r.bytes / 2**20:.4g} MB")
    print(f"  parameters: {', '.join(f'{k} = {v}' for k, v in sorted(r.config.items())) or 'none'}")
    for step in r.metrics.get("rules", []):
        print(f"  rule: {step}")
    program = r.metrics.get("program", "")
    print("\n" + program + "\n")
    text = program.split("\n// placement:")[0]
    placements = r.metrics.get("placements") or {}
    print(kernel_source({"layer": r.layer, "program": text, "config": r.config, "placements": placements}))
    return 0
