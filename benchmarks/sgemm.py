"""Benchmark: liftpy's SGEMM, derived by rewriting from the high-level matrix product, against the vendor
library measured in the same process on the same device.

    python benchmarks/sgemm.py --json out.json                      # 1024^3, 2048^3, 4096^3, 4096x1024x4096
    python benchmarks/sgemm.py --quick --json out.json              # small sizes, for PoCL
    python benchmarks/sgemm.py --sizes 1024,512x256x2048 --candidates 8 --json out.json

For each size (M, N, K) it derives the variants of ``examples/programs/matmul_highlevel.lift`` with the
rewrite rules, ranks every valid configuration of every variant with the analytical cost model
(``liftpy.model``), and measures the best ranked candidates (at most ``--per-variant`` of each variant,
``--candidates`` in all).  Every candidate is checked against a float64 product before its time counts.
The reference is ``torch.matmul`` in fp32 with TF32 off (cuBLAS) on CUDA, timed with CUDA events over a
batch of calls; on a CPU, numpy's BLAS (and torch's when installed).  Ratios are reference time / liftpy
time (above 1: liftpy faster).

JSON: a list of records with ``size`` [M, N, K], ``best_ms``, ``cublas_ms`` (the reference's time, also on
CPU, where ``reference`` names it), ``ratio``, ``best_variant``, ``best_config``, ``tflops``,
``model_rank`` of the best, ``measured``, ``valid`` and every measured candidate; ``--source-dir`` also
writes the best kernel's OpenCL source per size.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (4096, 1024, 4096)]
QUICK = [(128, 128, 128), (256, 128, 64)]


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
    times = []
    for _ in range(5):
        t = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - t) * 1e3)
    return "numpy_blas", statistics.median(times)


def candidates(variants, sizes: dict, profile, per_variant: int, total: int, pool: int, seed: int):
    """(predicted seconds, variant index, config, prediction) of the best ranked configurations."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.model import Machine, VariantModel

    machine = Machine.from_profile(profile)
    ranked = []
    for i, v in enumerate(variants):
        counted = solve(variant_space(v, sizes, profile), seed=seed)
        if not counted.size.valid:
            continue
        configs = sample(counted, min(pool, counted.size.valid), seed=seed)
        model = VariantModel(v.program, sizes, v.params, machine)
        preds = sorted(((model.predict(c), c) for c in configs), key=lambda pc: pc[0].seconds)
        for p, c in preds[:per_variant]:
            if math.isfinite(p.seconds):
                ranked.append((p.seconds, i, c, p))
    ranked.sort(key=lambda r: r[0])
    return ranked[:total]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True, metavar="FILE")
    ap.add_argument("--quick", action="store_true", help="small sizes and few candidates (PoCL)")
    ap.add_argument("--sizes", default=None, help="comma-separated N or MxNxK")
    ap.add_argument("--candidates", type=int, default=None, help="candidates measured per size (default 16, 4 with --quick)")
    ap.add_argument("--per-variant", type=int, default=6, help="at most this many candidates of one variant")
    ap.add_argument("--pool", type=int, default=4000, help="configurations ranked per variant")
    ap.add_argument("--profile", default=None, help="device profile JSON (default: the device's own limits)")
    ap.add_argument("--source-dir", default=None, help="write the best kernel of each size here")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from liftpy.errors import LiftError
    from liftpy.host.kernel import compile_program
    from liftpy.host.profile import resolve_profile
    from liftpy.ir.parser import parse_program
    from liftpy.rewrite.explore import explore, features
    from liftpy.tuning.references import Expectation, validate

    sizes = [parse_size(s) for s in args.sizes.split(",")] if args.sizes else (QUICK if args.quick else SIZES)
    n_cand = args.candidates or (4 if args.quick else 16)
    profile = resolve_profile(None, args.profile)
    program = parse_program((ROOT / "examples/programs/matmul_highlevel.lift").read_text())
    t0 = time.time()
    variants = explore(program)
    print(f"{len(variants)} variants of {program.name} in {time.time() - t0:.1f} s on {profile.device}", flush=True)
    records = []
    print(f"{'M x N x K':<20}{'ref':>11}{'ref ms':>9}{'best ms':>9}{'ratio':>7}{'TFLOP/s':>9}{'ok/run':>8}  best variant", flush=True)
    for m, n, k in sizes:
        t_size = time.time()
        rng = np.random.default_rng(args.seed)
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        # The exact product and, per element, the sum of the magnitudes of its k terms (fp32 error bound).
        expect = Expectation(a64 @ b64, np.abs(a64) @ np.abs(b64), k)
        ref_name, ref_ms = reference(a, b)
        sz = {"M": m, "N": n, "K": k}
        ranked = candidates(variants, sz, profile, args.per_variant, n_cand, args.pool, args.seed)
        measured = []
        best = None
        for rank, (pred, vi, config, p) in enumerate(ranked):
            v = variants[vi]
            entry = {"rank": rank, "variant": vi, "rules": sorted(features(v)), "config": config,
                     "predicted_ms": pred * 1e3, "bound": p.bound}
            try:
                t = time.time()
                kernel = compile_program(v.program, {**sz, **config}, placements=v.placement_map)
                entry["compile_s"] = round(time.time() - t, 2)
                result = kernel.run(a, b, repeat=args.repeat, warmup=3)
                out = result.output.reshape(m, n)
                check = validate(out, expect)
                entry.update(ok=check.ok, ms=result.time_ms, check=check.message)
                if check.ok and (best is None or result.time_ms < best[0]["ms"]):
                    best = (entry, kernel)
            except LiftError as e:
                entry.update(ok=False, ms=None, check=f"{type(e).__name__}: {str(e).splitlines()[0]}")
            measured.append(entry)
        rec = {"size": [m, n, k], "device": profile.device, "reference": ref_name, "cublas_ms": ref_ms,
               "measured": len(measured), "valid": sum(1 for e in measured if e["ok"]),
               "seconds": round(time.time() - t_size, 1), "candidates": measured}
        if best is not None:
            e, kernel = best
            rec.update(best_ms=e["ms"], ratio=ref_ms / e["ms"], best_variant=" + ".join(e["rules"]), best_config=e["config"],
                       tflops=2.0 * m * n * k / (e["ms"] * 1e-3) / 1e12, model_rank=e["rank"],
                       ref_tflops=2.0 * m * n * k / (ref_ms * 1e-3) / 1e12)
            if args.source_dir:
                path = Path(args.source_dir) / f"sgemm-{m}x{n}x{k}.cl"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(kernel.source)
            line = f"{e['ms']:>9.4f}{rec['ratio']:>7.2f}{rec['tflops']:>9.2f}"
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
