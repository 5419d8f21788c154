"""``liftpy space PROGRAM``: the tuning space of a parametric program for given sizes on a device."""

from __future__ import annotations

from ..cli_args import PROGRAM_FORMS, nonnegative_int


def register(sub) -> None:
    p = sub.add_parser("space", help="the tuning parameters of a program, their constraints and the valid space")
    p.add_argument("file", help=f"a lowered, parametric program (tuning parameters are its free size names): {PROGRAM_FORMS}")
    p.add_argument("--size", "-s", action="append", metavar="NAME=VALUE", help="the program's sizes (repeatable)")
    p.add_argument("--device", "-d", default=None, help="device whose limits apply (see liftpy devices)")
    p.add_argument("--profile", default=None, metavar="FILE", help="device profile JSON (from liftpy probe): measured limits")
    p.add_argument("--no-device", action="store_true", help="algorithmic constraints only")
    p.add_argument("--samples", type=nonnegative_int, default=5, help="print this many uniformly drawn valid configurations")
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.set_defaults(func=cmd_space)


def cmd_space(args) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..cli_args import parse_sizes, read_program
    from ..host.profile import DeviceProfile, resolve_profile
    from . import explain, format_space, sample, solve
    from .infer import infer_space

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.analysis import refuse_missing_sizes, refuse_unknown_sizes, refuse_unlowered

    program = read_program(args.file)
    sizes = parse_sizes(args.size)
    refuse_unknown_sizes(program, sizes)
    refuse_missing_sizes(program, sizes)
    refuse_unlowered(program, "have a tuning space (a lowered variant has one)", args.file)
    profile = None
    if not args.no_device:
        profile = DeviceProfile.load(args.profile) if (args.profile and args.device == "none") else resolve_profile(args.device, args.profile)
    space = infer_space(program, sizes, profile=profile)
    counted = solve(space, seed=args.seed)
    why = explain(space, seed=args.seed) if counted.size.valid == 0 else None
    where = f" on {profile.device} ({profile.source})" if profile is not None else " (no device limits)"
    print(f"{program.name} with {', '.join(f'{k} = {v}' for k, v in sizes.items()) or 'no sizes'}{where}\n")
    print(format_space(space, counted, explanation=why))
    if counted.size.valid and args.samples and space.parameters:  # (without parameters the one configuration is empty)
        n = min(args.samples, counted.size.valid)
        print(f"\n{n} uniformly drawn valid configuration{'s' if n != 1 else ''}:")
        for cfg in sample(counted, n, seed=args.seed):
            print("  " + ", ".join(f"{k} = {v}" for k, v in cfg.items()))
    return 0 if counted.size.valid else 1
