"""``liftpy explore``, ``liftpy pareto``, ``liftpy failures`` and ``liftpy show``: explorations from the command
line (the same operations as ``liftpy.explore`` and ``liftpy.results`` for notebooks).  The problem is a convolution layer
(``conv --layer vgg16:7``) or any high-level program with its sizes (``prog.lift -s M=1024,N=1024,K=1024``,
or ``file.py:function`` / ``module:function`` for a Python ``@program``)."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from ..cli_args import at_least_one, nonnegative_int, positive_float, positive_float_or_off, positive_int, read_program
from ..errors import TuningError
from ..host.profile import DeviceProfile
from ..operators import is_library_spec
from ..operators.conv import get_layer, layer_sizes, parse_layer_spec
from ..results.pareto import MB, check_plot_path, format_frontier, memory_note
from ..results.queries import best, frontier, plot
from ..results.store import Store
from ..runtime.cluster import parse_workers
from ..runtime.evaluate import STRAGGLER_S
from ..runtime.points import kernel_source

# Every ``liftpy`` command builds the whole parser, so this module is imported by each: the exploration's own
# modules (the operators, the loop, the search and the solver under it) are imported by the commands that use
# them.  At the head they made ``import liftpy.explore.cli`` take 1.0 s instead of 0.11 s on this project's
# 2-core machine.


def _layer(args):
    layer = get_layer(args.layer)
    given = _reduction_options(args)
    if getattr(args, "reduced", False):
        layer = layer.reduced(**{k: getattr(args, k) or v for k, v in _REDUCED_DEFAULTS.items()})
    elif given:
        raise TuningError(f"{', '.join(given)} shape{'s' if len(given) == 1 else ''} the layer --reduced makes; add "
                          "--reduced, or leave " + ("it" if len(given) == 1 else "them") + " out")
    return layer


_REDUCED_DEFAULTS = {"spatial": 16, "channels": 8, "kernels": 8}


def _reduction_options(args) -> list[str]:
    """The options of ``--reduced`` given on the command line (their defaults are None, to tell)."""
    return [f"--{k}" for k in _REDUCED_DEFAULTS if getattr(args, k, None) is not None]


def _operator(args):
    """The operator the arguments name: ``conv`` with ``--layer``, or a program with ``-s`` sizes."""
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from .conv import ConvOperator  # (the commands' imports: module head)
    from .operator import ProgramOperator, library_operator, parse_sizes

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..operators.precision import with_precision

    target = getattr(args, "operator", None) or "conv"
    precision = getattr(args, "precision", "fp32")
    if target == "conv":
        if not args.layer:
            raise TuningError("conv needs --layer (vgg16:0 ... vgg16:24, alexnet:0, or C,H,W,M,K,stride,pad)")
        if getattr(args, "sizes", None):
            raise TuningError("-s is for a program or a library operator; conv takes its sizes from --layer "
                              "(vgg16:0 ... vgg16:24, alexnet:0, or C,H,W,M,K,stride,pad)")
        return with_precision(ConvOperator.of(_layer(args), relu=getattr(args, "relu", False)), precision)
    if args.layer:
        raise TuningError(f"--layer is for conv; give the sizes of {target} with -s NAME=VALUE,...")
    unused = (["--reduced"] if getattr(args, "reduced", False) else []) + _reduction_options(args)
    if unused:
        raise TuningError(f"{', '.join(unused)} {'is' if len(unused) == 1 else 'are'} for conv --layer; give the sizes "
                          f"of {target} with -s NAME=VALUE,...")
    if getattr(args, "relu", False):
        raise TuningError(f"--relu is for conv; write the ReLU into {target} (map(relu, ...)) or use the library's "
                          "conv2d:...,relu=1")
    if is_library_spec(target):
        return library_operator(target, parse_sizes(args.sizes), precision)
    return with_precision(ProgramOperator.of(read_program(target), args.sizes or ""), precision)  # a program in any form


def _stored_problem_args(p) -> None:
    """The arguments naming one problem of a results store (``pareto``, ``failures``)."""
    p.add_argument("operator", nargs="?", default=None,
                   help="conv (with --layer) or a program (with -s); default: the one problem the store holds")
    _layer_args(p, required=False)
    p.add_argument("--sizes", "-s", default=None, metavar="N=V,...")
    p.add_argument("--db", default="results.sqlite")


def _layer_args(p, required=True) -> None:
    p.add_argument("--layer", "-l", required=required, help="vgg16:0 ... vgg16:24, alexnet:0, or C,H,W,M,K,stride,pad")
    p.add_argument("--reduced", action="store_true", help="a smaller version of the layer (same kernel, stride, padding)")
    p.add_argument("--spatial", type=positive_int, default=None, help="with --reduced: height and width at most this (default 16)")
    p.add_argument("--channels", type=positive_int, default=None, help="with --reduced: input channels at most this (default 8)")
    p.add_argument("--kernels", type=positive_int, default=None, help="with --reduced: kernels at most this (default 8)")
    p.add_argument("--relu", action="store_true", help="the layer with a ReLU after its bias, fused into the kernels "
                                                        "(a problem of its own in the store)")


def register(sub) -> None:
    p = sub.add_parser("explore", help="generate, validate and measure many implementations of an operator")
    p.add_argument("operator", help="conv (the direct convolution of the Lift paper, with --layer), an operator of the "
                                    "library (liftpy operators; e.g. jacobi2d:boundary=mirror, with -s), or a high-level "
                                    "program: FILE.lift, FILE.py:function or module:function (with -s)")
    _layer_args(p, required=False)
    p.add_argument("--sizes", "-s", default=None, metavar="N=V,...", help="sizes of the program (e.g. M=1024,N=1024,K=1024)")
    p.add_argument("--precision", choices=["fp32", "fp16-storage", "fp16"], default="fp32",
                   help="fp16-storage: arrays stored as half, arithmetic in float; fp16: half arithmetic too (default fp32)")
    p.add_argument("--samples", "-n", type=positive_int, default=100, help="points to evaluate (default 100)")
    p.add_argument("--db", default="results.sqlite", help="results store (SQLite); re-running resumes (default results.sqlite)")
    p.add_argument("--device", "-d", default=None, help="device index or name fragment (see liftpy devices)")
    p.add_argument("--profile", default=None, metavar="FILE", help="device profile JSON (from liftpy probe)")
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--timeout", type=positive_float, default=300.0, help="seconds one point may take (default 300)")
    p.add_argument("--repeat", type=positive_int, default=5,
                   help="timed runs per point (default 5, their median; on a CPU device the fastest of at least 40)")
    p.add_argument("--no-references", action="store_true", help="do not measure the reference implementations")
    p.add_argument("--reference", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="a baseline to time on the same inputs: a Python function of the program's inputs as numpy "
                        "arrays (module:function or file.py:function; repeatable)")
    p.add_argument("--plot", default=None, metavar="PNG", help="where to draw the frontier (default: next to the store)")
    p.add_argument("--rules", default=None, metavar="R1,R2",
                   help="only variants whose derivation uses every one of these rules (e.g. registerBlock2D), "
                        "A|B either, !R none of R (e.g. '!localStage')")
    p.add_argument("--search", choices=["model", "uniform"], default="model",
                   help="rank candidates with the cost model and learn from measurements (default), or sample uniformly")
    p.add_argument("--budget", default=None, metavar="T", help="stop starting new points after T (e.g. 10m, 90s, 1h)")
    p.add_argument("--jobs", "-j", type=positive_int, default=None,
                   help="parallel code-generation processes (default: on a GPU one per core but one, on a CPU "
                        "device 1, its cores timing the kernels; per device worker with --workers, default 1)")
    p.add_argument("--workers", default=None, metavar="SPEC",
                   help="spread the points over device workers on Ray: local:N (N devices of this machine), "
                        "ray://HOST:PORT (a Ray cluster) or ray (the cluster this machine joined); needs the ray extra")
    p.add_argument("--abort-factor", type=at_least_one, default=None, metavar="K",
                   help="stop a point after one run slower than K times the best so far (K >= 1)")
    p.add_argument("--straggler-wait", type=positive_float_or_off, default=STRAGGLER_S, metavar="S",
                   help=f"stop a point whose kernels are still compiling S seconds after the rest of its batch went to "
                        f"the device, and store it as a timeout (default {STRAGGLER_S:g}; off: wait for it)")
    p.set_defaults(func=cmd_explore)

    p = sub.add_parser("pareto", help="the time/memory Pareto frontier of a problem in a results store")
    _stored_problem_args(p)
    p.add_argument("--device-key", default=None, help="the device's key as stored (when the store has several devices)")
    p.add_argument("--plot", default=None, metavar="PNG", help="also draw the frontier to this PNG")
    p.add_argument("--max-error", type=positive_float, default=None, metavar="X",
                   help="only points whose largest relative error is at most X (half storage: about 1e-3)")
    p.set_defaults(func=cmd_pareto)

    p = sub.add_parser("failures", help="the failed points of a problem in a results store, grouped by reason")
    _stored_problem_args(p)
    p.add_argument("--all", action="store_true", help="every failed point with its whole first error line")
    p.set_defaults(func=cmd_failures)

    p = sub.add_parser("show", help="a stored implementation: its parameters, rules, program and OpenCL source")
    p.add_argument("operator", nargs="?", default=None, help="conv (with --layer) or a program (with -s); default: any")
    _layer_args(p, required=False)
    p.add_argument("--sizes", "-s", default=None, metavar="N=V,...")
    p.add_argument("--db", default="results.sqlite")
    p.add_argument("--best", action="store_true", help="the fastest correct implementation (the default)")
    p.add_argument("--device-key", default=None)
    p.set_defaults(func=cmd_show)


def _default_plot(db: str, name: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    return Path(db).with_name(f"{Path(db).stem}-{name}.png")


def parse_duration(text: str | None) -> float | None:
    """``90``, ``90s``, ``10m``, ``1.5h`` -> seconds."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([smh]?)\s*", text)
    if not m:
        raise TuningError(f"budget {text!r} is not a duration such as 90s, 10m or 1h")
    value = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    if value <= 0:
        raise TuningError(f"budget {text!r} must be positive")
    return value


def cmd_explore(args) -> int:
    from .diagnose import failure_groups, format_failures  # (the commands' imports: module head)

    if args.jobs is not None and args.jobs < 1:
        raise TuningError(f"--jobs must be at least 1, got {args.jobs}")
    if args.workers is not None:
        parse_workers(args.workers)  # a malformed spec is refused before any work starts
    op = _operator(args)
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..operators.precision import require_device

    require_device(args.precision, args.device, args.profile)  # (half arithmetic: refused in one line before any work)
    check_plot_path(args.plot or _default_plot(args.db, op.name))  # before the exploration, not after it
    try:
        result = _explore(op, args)
    except KeyboardInterrupt:
        # What was measured is in the store already (each point as it finished): say so, and how to go on.
        print(f"\nliftpy explore: interrupted; {_stored(args.db, op)} point(s) of {op.name} are in {args.db}: run the "
              "same command again to resume", file=sys.stderr)
        return 130
    statuses: dict[str, int] = {}
    for r in result.records:
        if not r.is_reference:
            statuses[str(r.status)] = statuses.get(str(r.status), 0) + 1
    held = (f"; the store's {sum(statuses.values())} points of this problem: "
            + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))) if statuses else ""
    print(f"\n{op.name}: ran {result.ran} points, {result.resumed} already in {args.db}{held}")
    failures = format_failures(failure_groups(result.records))
    if failures:
        print(failures)
    if result.exhausted:
        print(f"every valid point of {op.name} on this device is in the store: {result.ran + result.resumed} "
              f"of the {args.samples} asked for")
    elif result.over_budget:
        print(f"the budget of {args.budget} ran out after {result.ran + result.resumed} of the {args.samples} points "
              "asked for: run the same command again to go on")
    if result.lost_workers:
        print(f"{result.lost_workers} device worker(s) died; {result.requeued} point(s) ran again on another")
    print(f"time/memory Pareto frontier ({len(result.frontier)} point{'s' if len(result.frontier) != 1 else ''}) on {result.device}:")
    print(result.table())
    note = memory_note([r for r in result.records if r.measured and not r.is_reference])
    if note:
        print(note)
    if result.frontier:
        path = plot(args.db, op, args.plot or _default_plot(args.db, op.name), device=result.device)
        print(f"frontier plot: {path}")
    return 0 if result.frontier else 1


def _stored(db: str, op) -> int:
    """How many points of ``op``'s problem ``db`` holds (any device, references aside); 0 if unreadable."""
    try:
        with Store(db, create=False) as store:
            return sum(1 for r in store.records(layer=op.problem) if not r.is_reference)
    except Exception:  # noqa: BLE001 - an interrupted run reports what it can
        return 0


def _explore(op, args):
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..search import named  # (the commands' imports: module head)
    from .loop import explore_operator

    return explore_operator(
        op,
        search=named(args.search),
        budget_s=parse_duration(args.budget),
        jobs=args.jobs,
        abort_factor=args.abort_factor,
        straggler_s=args.straggler_wait,
        samples=args.samples,
        db=args.db,
        device=args.device,
        profile_path=args.profile,
        seed=args.seed,
        timeout_s=args.timeout,
        repeat=args.repeat,
        references=not args.no_references,
        rules=tuple(r.strip() for r in args.rules.split(",") if r.strip()) if args.rules else (),
        workers=args.workers,
        baselines=tuple(args.reference),
    )


def cmd_pareto(args) -> int:
    if args.operator is None and not args.layer:
        problem = _only_problem(args.db)
        name, flops = problem.split("#")[0].split(":")[0], None
    else:
        problem = _operator(args)
        name, flops = problem.name, problem.flops()
    least = problem.min_bytes() if hasattr(problem, "min_bytes") else None
    key = getattr(problem, "problem", problem)
    front, refs, measured = frontier(args.db, problem, args.device_key, args.max_error)
    if not measured:
        raise TuningError(f"{args.db} has no measured point for {name} ({key})")
    if not front and args.max_error is not None:
        raise TuningError(f"no measured point of {name} ({key}) has a relative error of at most {args.max_error:g}; "
                          "raise --max-error")
    print(f"{name} ({key}): {len(measured)} measured points, {len(front)} on the frontier")
    print(format_frontier(front, refs, flops=flops, min_bytes=least))
    note = memory_note(measured)
    if note:
        print(note)
    if args.plot:
        print(f"frontier plot: {plot(args.db, problem, args.plot, args.device_key)}")
    return 0


def cmd_failures(args) -> int:
    from .diagnose import failure_groups, first_line, format_failures  # (the commands' imports: module head)

    problem = _operator(args).problem if (args.layer or args.operator) else _only_problem(args.db)
    with Store(args.db, create=False) as store:
        records = [r for r in store.records(layer=problem) if not r.is_reference]
    failed = [r for r in records if r.status.failed]
    print(f"{problem}: {len(failed)} of {len(records)} stored points failed")
    if args.all:
        for r in failed:
            config = ",".join(f"{k}={v}" for k, v in sorted(r.config.items())) or "no parameters"
            print(f"  {r.status.value:14s} {r.variant} {config}: {first_line(r.error)}")
    elif failed:
        print(format_failures(failure_groups(failed), lines=20))
    return 0


def _only_problem(db: str) -> str:
    """The key of the one problem ``db`` holds (``pareto`` without a program); several are an error naming them."""
    with Store(db, create=False) as store:
        held = sorted({layer for _, layer in store.groups()})
    if len(held) == 1:
        return held[0]
    if not held:
        raise TuningError(f"{db} holds no results yet")
    raise TuningError(f"{db} holds several problems; name one (a program with -s, or conv with --layer): {', '.join(held)}")


def cmd_show(args) -> int:
    # Without a program named, the one problem the store holds (several: an error naming them, as ``pareto``
    # says; the fastest point of any problem was shown).
    op = _operator(args) if (args.layer or args.operator) else _only_problem(args.db)
    r = best(args.db, op, args.device_key)
    print(f"fastest correct implementation of {r.layer_name} ({r.layer}) on {r.device}:")
    print(f"  variant {r.variant}: {r.time_ms:.4g} ms, {r.bytes / MB:.4g} MB")
    print(f"  parameters: {', '.join(f'{k} = {v}' for k, v in sorted(r.config.items())) or 'none'}")
    for step in r.metrics.get("rules", []):
        print(f"  rule: {step}")
    program = r.metrics.get("program", "")
    print("\n" + program + "\n")
    text = program.split("\n// placement:")[0]
    placements = r.metrics.get("placements") or {}
    # The limits the point was generated for (the profile stored with it), so the source is the one timed.
    limits = DeviceProfile.from_record(r.profile or {}).limits()
    source = kernel_source(text, {**_problem_sizes(r.layer), **r.config}, placements, limits)
    if r.source_hash and hashlib.sha1(source.encode()).hexdigest()[:16] != r.source_hash:
        print("// note: this liftpy generates a different source than the one measured (another version or device limits)")
    print(source)
    return 0


def _problem_sizes(problem: str) -> dict:
    """The sizes a stored problem names: a program's ``name#hash:M=1,N=2``, or a layer's spec."""
    from .operator import parse_sizes  # (the commands' imports: module head)

    if ":" in problem and "=" in problem:
        return parse_sizes(problem.split(":", 1)[1])

    return layer_sizes(parse_layer_spec(problem))
