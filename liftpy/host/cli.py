"""``liftpy devices``, ``liftpy compile`` and ``liftpy run``."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli_args import PROGRAM_FORMS, nonnegative_int, parse_sizes, read_program
from ..errors import LiftError


def register(sub) -> None:
    p = sub.add_parser("devices", help="list the OpenCL devices liftpy can use")
    p.set_defaults(func=cmd_devices)

    p = sub.add_parser("compile", help="print the OpenCL kernel of a lowered program")
    p.add_argument("file", help=f"a lowered program: {PROGRAM_FORMS}")
    p.add_argument("--size", "-s", action="append", metavar="NAME=VALUE", help="size or parameter value (repeatable)")
    p.add_argument("--image", action="append", default=[], metavar="INPUT", help="place an input in an OpenCL image")
    p.add_argument("--plan", action="store_true", help="also print the memory plan")
    p.add_argument("--build", action="store_true", help="also build the kernel on the device")
    p.add_argument("--device", "-d", default=None, help="device index or name fragment (see liftpy devices)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("run", help="run a lowered program on random inputs and check it against the interpreter")
    p.add_argument("file", help=f"a lowered program: {PROGRAM_FORMS}")
    p.add_argument("--size", "-s", action="append", metavar="NAME=VALUE")
    p.add_argument("--image", action="append", default=[], metavar="INPUT")
    p.add_argument("--device", "-d", default=None)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.set_defaults(func=cmd_run)


def cmd_devices(args) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from .device import _pick, build_problem, list_devices

    default = _pick(None)
    for d in list_devices():
        mark = "*" if d.index == default else " "
        problem = build_problem(d.index) if d.type == "CPU" else None
        print(f"{mark} {d}" + (f": {problem}" if problem else ""))
        print(
            f"      {d.version}; driver {d.driver}; {d.compute_units} compute units; work-group <= {d.max_work_group_size} "
            f"{d.max_work_item_sizes}; local {d.local_mem_bytes // 1024} KiB; global {d.global_mem_bytes / 2**30:.1f} GiB; "
            f"images {'yes' if d.image_support else 'no'}"
        )
    print("(* = default device; choose another with --device N or LIFTPY_DEVICE)")
    return 0


def cmd_compile(args) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..codegen.kernel import generate_kernel
    from .device import get_device
    from .kernel import build, device_limits
    from .profile import DeviceProfile

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.analysis import refuse_unknown_sizes, refuse_unlowered

    program = read_program(args.file)
    refuse_unknown_sizes(program, parse_sizes(args.size, parameters=True))
    refuse_unlowered(program, "be compiled", args.file)
    placements = {name: "image" for name in args.image}
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.kernels import kernel_count

    if kernel_count(program) > 1:  # a pipeline (kernel boundaries, several results): each kernel in order
        return _compile_pipeline(program, args, placements)
    if args.build or args.device is not None:
        dev = get_device(args.device)
        ks = generate_kernel(program, parse_sizes(args.size, parameters=True), device_limits(dev), placements=placements)
        if args.build:
            build(dev, ks.source)
    else:
        ks = generate_kernel(program, parse_sizes(args.size, parameters=True), DeviceProfile("default", "defaults").limits(), placements=placements)
    print(ks.source, end="")
    if args.plan:
        print()
        print(ks.plan.table())
    return 0


def _compile_pipeline(program, args, placements) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..codegen.kernel import generate_pipeline
    from .device import get_device
    from .kernel import build, device_limits
    from .profile import DeviceProfile

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.typecheck import check_sizes
    from ..ir.types import as_size

    sizes = parse_sizes(args.size, parameters=True)
    check_sizes(program, {as_size(k): v for k, v in sizes.items()})  # (what a size left out is, said of the program)
    dev = get_device(args.device) if args.build or args.device is not None else None
    limits = device_limits(dev) if dev is not None else DeviceProfile("default", "defaults").limits()
    stages = generate_pipeline(program, sizes, limits, placements)
    for i, (ks, out) in enumerate(stages):
        if args.build:
            build(dev, ks.source)
        print(f"// ===== kernel {i + 1} of {len(stages)}: writes {out} =====")
        print(ks.source, end="")
        if args.plan:
            print()
            print(ks.plan.table())
        print()
    return 0


def cmd_run(args) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.compare import compare
    from ..ir.interpreter import evaluate
    from ..ir.inputs import random_inputs
    from ..ir.values import leaves
    from .kernel import compile_program

    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from ..ir.analysis import refuse_unknown_sizes, refuse_unlowered

    program = read_program(args.file)
    sizes = parse_sizes(args.size, parameters=True)
    refuse_unknown_sizes(program, sizes)
    refuse_unlowered(program, "be run", args.file)
    k = compile_program(program, sizes, device=args.device, placements={n: "image" for n in args.image})
    # Before the inputs are made: at sizes near 2^31 elements they alone filled the host's memory.  The host
    # keeps the inputs and the interpreter's result besides what the run itself allocates.
    k.check_memory(host_bytes=sum(b.nbytes for b in k.buffers() if b.role in ("input", "output")))
    inputs = random_inputs(program, sizes, seed=args.seed)
    result = k.run(*inputs, repeat=3, warmup=1)
    expected = evaluate(program, *inputs, sizes=sizes)
    # The verdict explore gives (liftpy.ir.compare): NaNs and infinities where the interpreter has them.
    checks = [compare(g, w) for g, w in zip(leaves(result.output), leaves(expected))]
    bad = next((c for c in checks if not c.ok), None)
    err = max((c.max_abs_error for c in checks), default=0.0)
    print(f"device: {k.device.info.name}")
    launches = getattr(k, "launches", None) or [k.launch]  # a pipeline has one launch per kernel
    print(f"launch: {'; '.join(map(str, launches))}")
    print(f"kernel time: {result.time_ms:.4f} ms (median of 3); device memory: {result.device_bytes} bytes")
    if bad is None:
        print(f"max abs error vs interpreter: {err:.3g} -> OK")
        return 0
    print(f"vs interpreter: MISMATCH: {bad.message}")
    return 1
