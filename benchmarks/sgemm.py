"""Benchmark: liftpy's SGEMM, derived by rewriting from the high-level matrix product and found by the
exploration engine's model-guided search, against the vendor library measured in the same process.

    python benchmarks/sgemm.py --json out.json                      # 1024^3, 2048^3, 4096^3, 4096x1024x4096
    python benchmarks/sgemm.py --quick --json out.json              # small sizes, for PoCL
    python benchmarks/sgemm.py --sizes 1024,512x256x2048 --samples 16 --json out.json

For each size (M, N, K) the engine (``liftpy.explore.explore_operator``) explores
``examples/programs/matmul_highlevel.lift``: every variant the rewrite rules derive, ranked by the cost
model, the best few measured, the model refitted, ``--samples`` points in all; every point is checked
against a float64 product before its time counts (``--rules`` narrows the variants, e.g. to the tiled
ones).  The reference is ``torch.matmul`` in fp32 with TF32 off (cuBLAS) on CUDA, timed with CUDA events
over a batch of calls; on a CPU, PyTorch's CPU product (numpy's BLAS without PyTorch).  Ratios are reference time / liftpy time (above 1: liftpy
faster).

JSON: a list of records with ``size`` [M, N, K], ``best_ms``, ``cublas_ms`` (the reference's time, on a CPU
too, where ``reference`` names it), ``ratio``, ``best_variant``, ``best_config``, ``tflops``, ``measured``,
``valid``, ``first_within_5pct`` (the run at which the search first came within 5% of its final best) and
the measured points in search order; ``--source-dir`` also writes the best kernel's OpenCL source per size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (4096, 1024, 4096)]
QUICK = [(128, 128, 128), (256, 128, 64)]


def exact_matmul(a, b):
    """The float64 product: the reference of the check (the interpreter is too slow at these sizes)."""
    return a.astype(np.float64) @ b.astype(np.float64)


def parse_size(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in text.lower().split("x")]
    if len(parts) == 1:
        parts = parts * 3
    if len(parts) != 3 or min(parts) < 1:
        raise SystemExit(f"sgemm.py: size {text!r} is neither N nor MxNxK with positive integers")
    return tuple(parts)


def reference(a: np.ndarray, b: np.ndarray, repeat: int = 20) -> tuple[str, float]:
    """(name, milliseconds) of the vendor product, fp32."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        for _ in range(5):
            torch.matmul(ta, tb)
        torch.cuda.synchronize()
        times = []
        for _ in range(7):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(repeat):
                torch.matmul(ta, tb)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / repeat)
        return "cublas", statistics.median(times)
    if torch is not None:  # PyTorch's CPU product (MKL or OpenBLAS), as the issue's CPU reference
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        for _ in range(2):
            torch.matmul(ta, tb)
        times = []
        for _ in range(7):
            t = time.perf_counter()
            torch.matmul(ta, tb)
            times.append((time.perf_counter() - t) * 1e3)
        return "torch_cpu", statistics.median(times)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - t) * 1e3)
    return "numpy_blas", statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True, metavar="FILE")
    ap.add_argument("--quick", action="store_true", help="small sizes and few points (PoCL)")
    ap.add_argument("--sizes", default=None, help="comma-separated N or MxNxK")
    ap.add_argument("--samples", type=int, default=None, help="points measured per size (default 32, 6 with --quick)")
    ap.add_argument("--rules", default="", help="only variants derived with these rules (A|B: either)")
    ap.add_argument("--search", default="model", choices=["model", "uniform"])
    ap.add_argument("--jobs", type=int, default=1, help="parallel code-generation processes")
    ap.add_argument("--profile", default=None, help="device profile JSON (default: the device's own limits)")
    ap.add_argument("--db", default=None, help="results store (default: next to the JSON file)")
    ap.add_argument("--source-dir", default=None, help="write the best kernel of each size here")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from liftpy.explore import explore_operator
    from liftpy.explore.operator import ProgramOperator
    from liftpy.ir.parser import parse_program
    from liftpy.runtime.points import kernel_source
    from liftpy.search import named

    sizes = [parse_size(s) for s in args.sizes.split(",")] if args.sizes else (QUICK if args.quick else SIZES)
    samples = args.samples or (6 if args.quick else 32)
    db = args.db or str(Path(args.json).with_suffix(".sqlite"))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    program = parse_program((ROOT / "examples/programs/matmul_highlevel.lift").read_text())
    rules = tuple(r for r in args.rules.split(",") if r)
    records = []
    print(f"{'M x N x K':<20}{'ref':>11}{'ref ms':>9}{'best ms':>9}{'ratio':>7}{'TFLOP/s':>9}{'ok/run':>8}  best variant", flush=True)
    for m, n, k in sizes:
        t0 = time.time()
        op = ProgramOperator.of(program, {"M": m, "N": n, "K": k}, reference=exact_matmul if max(m, n, k) > 256 else None,
                                flop_count=2.0 * m * n * k)
        ex = explore_operator(op, samples=samples, db=db, profile_path=args.profile, seed=args.seed, repeat=args.repeat,
                              warmup=3, references=False, progress=False, rules=rules, search=named(args.search), jobs=args.jobs)
        a, b = op.inputs(args.seed)
        ref_name, ref_ms = reference(a, b)
        points = sorted((r for r in ex.records if not r.is_reference), key=lambda r: r.finished_at or 0)
        ok = [r for r in points if r.measured]
        best = min(ok, key=lambda r: r.time_ms) if ok else None
        rec = {"size": [m, n, k], "device": ex.device, "reference": ref_name, "cublas_ms": ref_ms, "search": args.search,
               "measured": len(points), "valid": len(ok), "seconds": round(time.time() - t0, 1),
               "points": [{"variant": r.variant, "config": r.config, "status": str(r.status), "ms": r.time_ms,
                           "codegen_s": r.metrics.get("codegen_s")} for r in points]}
        if best is not None:
            running, first = float("inf"), None
            for idx, r in enumerate(points):
                if r.measured:
                    running = min(running, r.time_ms)
                if first is None and running <= 1.05 * best.time_ms:
                    first = idx + 1
            rec.update(best_ms=best.time_ms, ratio=ref_ms / best.time_ms, best_variant=best.variant, best_config=best.config,
                       best_rules=sorted({s.split(" at ")[0] for s in best.metrics.get("rules", [])}),
                       tflops=2.0 * m * n * k / (best.time_ms * 1e-3) / 1e12, ref_tflops=2.0 * m * n * k / (ref_ms * 1e-3) / 1e12,
                       first_within_5pct=first, memory_bytes=best.bytes)
            if args.source_dir:
                path = Path(args.source_dir) / f"sgemm-{m}x{n}x{k}.cl"
                path.parent.mkdir(parents=True, exist_ok=True)
                text = best.metrics["program"].split("\n// placement:")[0]
                from liftpy.host.profile import resolve_profile

                path.write_text(kernel_source(text, {**op.sizes(), **best.config}, best.metrics.get("placements"),
                                              resolve_profile(None, args.profile).limits()))
            line = f"{best.time_ms:>9.4f}{rec['ratio']:>7.2f}{rec['tflops']:>9.2f}"
        else:
            rec.update(best_ms=None, ratio=None, best_variant=None, best_config=None, tflops=None)
            line = f"{'-':>9}{'-':>7}{'-':>9}"
        records.append(rec)
        print(f"{f'{m}x{n}x{k}':<20}{ref_name:>11}{ref_ms:>9.4f}{line}{rec['valid']:>4}/{rec['measured']:<3}  "
              f"{rec['best_variant']} {rec['best_config']}", flush=True)
        Path(args.json).write_text(json.dumps(records, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
