"""Benchmark: whole-array reductions (dot product, sum, maximum) in parallel, explored by the engine, by
kind of variant: partial results per work-item summed by a second kernel (``reduceKernels``), Lift's
parallel reduction, where each work-group combines its items' results as a tree in local memory
(``reduceLcl``) before the second kernel, and the same in one kernel whose last work-group adds the
groups' results (``fuseLastGroup``); against the vendor's reduction (PyTorch on the GPU: cuBLAS's
dot, CUDA's sum and max) timed in the same process, or numpy where there is no GPU.

    python benchmarks/reductions.py --n 16777216 --samples 40 --json out.json

Every point is checked against a float64 numpy result before its time counts.

JSON: a list of records, one per (workload, kind), with ``workload``, ``kind`` (``partial``, ``tree`` or ``one-kernel``),
``best_ms``, ``best_variant``, ``best_config``, ``measured`` (valid points of that kind), ``reference``
(what the vendor time is), ``reference_ms``, ``ratio`` (``reference_ms / best_ms``: above 1 is faster than
the vendor) and ``gb_per_s`` (input bytes read per second).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKLOADS = ("dot", "sum", "max")
# (kind, the rules its variants have, which variant tags are of it): the groups' results added by a second
# kernel, with or without the groups' trees, or in the first kernel's last work-group (``fuseLastGroup``)
KINDS = (
    ("partial", ("reduceKernels",), lambda tags: "tree" not in tags),
    ("tree", ("reduceLcl",), lambda tags: "tree" in tags and "one-kernel" not in tags),
    ("one-kernel", ("fuseLastGroup",), lambda tags: "one-kernel" in tags),
)


def vendor_ms(name: str, inputs: list, repeat: int = 20, batch: int | None = None) -> tuple[str, float]:
    """The median time of the vendor's reduction: PyTorch on CUDA (events around ``batch`` calls, by default
    ``references.CUDA_BATCH``) when there is a GPU, else numpy."""
    try:
        import torch

        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if cuda:
        from liftpy.explore.vendor import CUDA_BATCH, cuda_times

        xs = [torch.from_numpy(x).cuda() for x in inputs]
        fn = {"dot": lambda: torch.dot(xs[0], xs[1]), "sum": lambda: torch.sum(xs[0]), "max": lambda: torch.max(xs[0])}[name]
        for _ in range(3):
            fn()
        times, _ = cuda_times(fn, repeat, batch or CUDA_BATCH)
        return f"torch {torch.__version__} CUDA", float(np.median(times))
    fn = {"dot": lambda: np.dot(*inputs), "sum": lambda: inputs[0].sum(), "max": lambda: inputs[0].max()}[name]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return f"numpy {np.__version__}", float(np.median(times))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--samples", type=int, default=40, help="points per kind of variant")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--json", required=True)
    args = ap.parse_args(argv)

    from liftpy.explore import explore_operator
    from liftpy.explore.operator import library_operator

    tmp = Path(tempfile.mkdtemp())
    out = []
    print(f"{'workload':<10}{'kind':<11}{'best ms':>10}{'vendor ms':>11}{'ratio':>7}{'GB/s':>8}{'points':>8}  variant / config")
    for name in args.workloads.split(","):
        op = library_operator(name, {"N": args.n})
        inputs = op.inputs(0)
        reference, ref_ms = vendor_ms(name, inputs)
        for kind, rules, of_kind in KINDS:
            ex = explore_operator(op, samples=args.samples, db=str(tmp / f"{name}-{kind}.sqlite"), rules=rules,
                                  jobs=args.jobs, references=False, progress=False)
            ok = [r for r in ex.records if r.measured and not r.is_reference and of_kind(r.variant)]
            if not ok:
                print(f"{name:<10}{kind:<11}  no valid point")
                continue
            best = min(ok, key=lambda r: r.time_ms)
            gbs = sum(x.nbytes for x in inputs) / (best.time_ms * 1e-3) / 1e9
            rec = {"workload": f"{name}-{args.n}", "kind": kind, "best_ms": best.time_ms, "best_variant": best.variant,
                   "best_config": best.config, "measured": len(ok), "device": ex.device, "reference": reference,
                   "reference_ms": ref_ms, "ratio": ref_ms / best.time_ms, "gb_per_s": gbs}
            out.append(rec)
            print(f"{name:<10}{kind:<11}{best.time_ms:>10.4f}{ref_ms:>11.4f}{rec['ratio']:>7.2f}{gbs:>8.1f}{len(ok):>8}  "
                  f"{best.variant} {best.config}")
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
