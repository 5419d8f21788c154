"""Does an OpenCL driver compute a kernel's output the same built with and without optimisation?

    python benchmarks/opt_check.py SOURCE.cl --inputs 576,8,2048 --output 2048 [--device Portable]

Builds the generated kernel SOURCE (its ``// launch:`` header line gives the NDRange) twice on the device,
as is and with ``-cl-opt-disable``, runs both on the same random float inputs (one buffer per size in
``--inputs``, in the kernel's argument order, then the output) and prints how many output elements differ
and where.  A generated kernel that Oclgrind runs clean (no data races, no out-of-bounds accesses) and whose
two builds differ points at the driver's optimiser, not at the kernel: ``pocl-miscompile-*.cl`` in
``benchmarks/results`` are such a pair on PoCL 3.0 (the README there).
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("--inputs", required=True, help="float elements of each input buffer, comma-separated")
    ap.add_argument("--output", type=int, required=True, help="float elements of the output buffer")
    ap.add_argument("--device", default="Portable", help="a fragment of the platform or device name")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import pyopencl as cl

    try:
        src = open(args.source).read()
        launch = next(line for line in src.splitlines() if line.startswith("// launch:"))
        sizes = [tuple(int(x) for x in g.split(",")) for g in re.findall(r"\(([\d, ]+)\)", launch)]
        kernel = re.search(r"kernel void (\w+)\(", src).group(1)
    except (OSError, StopIteration, AttributeError) as e:
        print(f"opt_check: {args.source}: not a generated kernel with a launch line ({e})", file=sys.stderr)
        return 2
    devices = [d for p in cl.get_platforms() for d in p.get_devices() if args.device in f"{p.name} {d.name}"]
    if not devices:
        print(f"opt_check: no OpenCL device matches {args.device!r}", file=sys.stderr)
        return 2
    ctx = cl.Context(devices[:1])
    queue = cl.CommandQueue(ctx)
    rng = np.random.default_rng(args.seed)
    inputs = [rng.random(int(n)).astype(np.float32) for n in args.inputs.split(",")]
    outputs = []
    for options in ([], ["-cl-opt-disable"]):
        program = cl.Program(ctx, src).build(options=options)
        bufs = [cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a) for a in inputs]
        out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * args.output)
        getattr(program, kernel)(queue, sizes[0], sizes[1] if len(sizes) > 1 else None, *bufs, out)
        result = np.empty(args.output, np.float32)
        cl.enqueue_copy(queue, result, out)
        queue.finish()
        outputs.append(result)
    bad = np.nonzero(np.abs(outputs[0] - outputs[1]) > 1e-4 * (1 + np.abs(outputs[1])))[0]
    print(f"{devices[0].name}: {len(bad)} of {args.output} elements differ between the optimised and the "
          f"unoptimised build{': ' + ', '.join(map(str, bad[:16])) if len(bad) else ''}")
    return 1 if len(bad) else 0


if __name__ == "__main__":
    sys.exit(main())
