"""``liftpy variants FILE``: the distinct lowered variants of a program given in text form."""

from __future__ import annotations

from ..cli_args import PROGRAM_FORMS, nonnegative_int, positive_int
from ..errors import LiftError


def register(sub) -> None:
    p = sub.add_parser("variants", help="explore the lowered variants of a high-level program")
    p.add_argument("file", help=f"a high-level program: {PROGRAM_FORMS}")
    p.add_argument("--rules", action="append", default=[], metavar="FILE", help="extra rewrite rules in text form (repeatable)")
    p.add_argument("--size", "-s", action="append", metavar="NAME=VALUE", help="sizes: also count each variant's valid configurations and drop infeasible ones")
    p.add_argument("--device", "-d", default=None, help="device whose limits bound the spaces (with --size; default: "
                   "the default device, as explore and space use)")
    p.add_argument("--profile", default=None, metavar="FILE", help="device profile JSON (e.g. from liftpy probe)")
    p.add_argument("--no-device", action="store_true", help="with --size: algorithmic constraints only, no device limits")
    p.add_argument("--depth", type=nonnegative_int, default=2, help="how many algorithmic macros one variant may combine (default 2)")
    p.add_argument("--no-images", action="store_true", help="do not place inputs in images")
    p.add_argument("--full", action="store_true", help="print each variant's program text")
    p.add_argument("--max", type=positive_int, default=None, help="print at most this many variants")
    p.add_argument("--dropped", action="store_true", help="list the lowered variants dropped because no size makes them a kernel, with the reason")
    p.set_defaults(func=cmd_variants)


def cmd_variants(args) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from pathlib import Path

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..cli_args import parse_sizes, read_program
    from .explore import ExploreOptions, explore_all
    from .text_rules import load_rules

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.analysis import refuse_missing_sizes, refuse_unknown_sizes
    from ..ir.typecheck import typecheck

    program = read_program(args.file)
    sizes = parse_sizes(args.size)
    refuse_unknown_sizes(program, sizes or {})
    if sizes:  # (without sizes, the variants are listed with symbolic ones)
        refuse_missing_sizes(program, sizes)
    # An ill-typed program, or sizes it cannot take, has no variant (none with a valid configuration): said
    # here with the primitive and where, not as "0 distinct lowered variants".  Sizes not given stay symbolic.
    typecheck(program, bindings=sizes or None)
    extra = []
    for f in args.rules:
        if not Path(f).exists():
            raise LiftError(f"rules file {f} does not exist")
        extra.extend(load_rules(f))
    opts = ExploreOptions(depth=args.depth, images=not args.no_images, extra_rules=tuple(extra))
    variants, refused = explore_all(program, opts)
    if args.dropped:
        print(f"{program.name}: {len(refused)} lowered variants dropped (no size makes them a kernel)")
        for i, d in enumerate(refused[: args.max] if args.max else refused):
            rules = " -> ".join(s.rule + (f"[{', '.join(s.params)}]" if s.params else "") for s in d.variant.trace)
            print(f"\n[{i}] {d.reason}")
            print(f"    rules: {rules}")
            if args.full:
                print("    " + d.variant.program.text().replace("\n", "\n    "))
        return 0
    counts = {}
    if sizes:
        # imported when the command runs, not at start-up (liftpy/cli.py says why)
        from ..constraints import solve
        from ..constraints.infer import variant_space
        from ..host.profile import resolve_profile

        # The default device's limits unless told otherwise, as explore and space: a variant counted valid
        # here that no device can run (a 40 GB buffer, a work-group too large) is not one explore would try.
        profile = None if args.no_device else resolve_profile(args.device, args.profile)
        kept, empty = [], []
        for v in variants:
            space = variant_space(v, sizes, profile)
            c = solve(space)
            if c.size.valid > 0:
                counts[id(v)] = c.size
                kept.append(v)
            else:
                empty.append((" -> ".join(s.rule for s in v.trace) or "(no rules)", space))
        dropped = len(variants) - len(kept)
        variants = kept
    print(f"{program.name}: {len(variants)} distinct lowered variants" + (f" ({dropped} more have no valid configuration for these sizes)" if sizes else ""))
    if sizes and empty:
        # imported when the command runs, not at start-up (liftpy/cli.py says why)
        from ..constraints.why import format_reasons, reasons

        found, looked = reasons(empty, limit=40)
        print(format_reasons(found, looked, len(empty)))
    if sizes and not variants and dropped and profile is not None:
        print(f"(within the limits of {profile.device}; --no-device counts without them)")
    for i, v in enumerate(variants[: args.max] if args.max else variants):
        rules = " -> ".join(s.rule + (f"[{', '.join(s.params)}]" if s.params else "") for s in v.trace)
        params = ", ".join(map(str, v.params)) or "none"
        place = "; " + ", ".join(f"{k} in {w}" for k, w in v.placements) if v.placements else ""
        extra_txt = f"; valid configurations: {counts[id(v)]}" if id(v) in counts else ""
        print(f"\n[{i}] parameters: {params}{place}{extra_txt}")
        print(f"    rules: {rules}")
        if args.full:
            print("    " + v.program.text().replace("\n", "\n    "))
    return 0
