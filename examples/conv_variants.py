"""Explore the high-level convolution (Listing 3) with the rewrite rules and check every variant.

Prints the number of distinct fully lowered variants the exploration finds (they differ in tiling, work
mapping, vectorization, address spaces and buffer/image placement), then, for each, draws three valid
configurations (problem size and tuning parameters) with the constraint solver, compiles them on the
default OpenCL device and compares with the reference interpreter.  Exits with status 1 on any mismatch; a
variant with fewer feasible configurations than asked for is checked on those it has.

    python examples/conv_variants.py                    # every variant of the convolution
    python examples/conv_variants.py --program stencil  # or the stencil, or matmul
    python examples/conv_variants.py --max 20           # a feature-diverse selection of 20
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from highlevel import PROGRAMS, SHAPES, inputs  # noqa: E402

from liftpy.constraints import solve  # noqa: E402
from liftpy.constraints.infer import variant_space  # noqa: E402
from liftpy.host.profile import resolve_profile  # noqa: E402
from liftpy.rewrite.explore import diverse, explore  # noqa: E402
from liftpy.rewrite.validate import check_variant  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", choices=sorted(PROGRAMS), default="conv")
    ap.add_argument("--max", type=int, default=None, help="check a feature-diverse selection of this many variants")
    ap.add_argument("--configs", type=int, default=3, help="configurations per variant (default 3)")
    args = ap.parse_args(argv)

    program = PROGRAMS[args.program]()
    start = time.time()
    variants = explore(program)
    shapes = SHAPES[args.program]
    # The default device's limits (work-group size, local and private memory) are constraints too: a
    # configuration beyond them is never drawn, rather than drawn and refused as if it were a mismatch.
    profile = resolve_profile()
    feasible = [v for v in variants if any(solve(variant_space(v, s, profile)).size.valid for s in shapes)]
    print(f"{args.program}: {len(variants)} distinct fully lowered variants "
          f"({len(feasible)} with valid configurations for the test sizes) in {time.time() - start:.1f} s")
    chosen = diverse(feasible, args.max) if args.max else feasible
    failures = fewer = infeasible = 0
    for i, v in enumerate(chosen):
        check = check_variant(v, program, shapes, lambda s: inputs(args.program, s), count=args.configs, profile=profile)
        # A variant whose sizes leave it fewer feasible configurations than asked for (an unrolled loop's bound
        # fixes a parameter) is checked on those it has: fewer checks are not a mismatch.
        infeasible += not check.feasible
        failures += check.feasible and not check.ok
        fewer += check.ok and len(check.checks) < args.configs
        status = "----" if not check.feasible else "FAIL" if not check.ok else ("OK  " if len(check.checks) >= args.configs else f"OK{len(check.checks)}")
        print(f"[{i:3d}] {status} {check.summary()}")
        for c in check.checks:
            if not c.ok:
                print(f"       {c.sizes} {c.params}: error {c.max_error:.3g} {c.message}")
    note = f"; {fewer} variants had fewer than {args.configs} feasible configurations, checked on those" if fewer else ""
    note += f"; {infeasible} had none" if infeasible else ""
    print(f"checked {len(chosen)} variants x up to {args.configs} configurations in {time.time() - start:.0f} s: "
          f"{'all match' if not failures else f'{failures} MISMATCH'}{note}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
