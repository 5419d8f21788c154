"""Benchmark: the all-pairs interaction of ``examples/tuples.py`` (points as (x, y) tuples, a tuple
accumulator), explored by the engine, with the tiled variants that stage each tile of the input in local
memory (``tileAllPairs`` + ``localStage``, the N-body shape) against the variants without tiles.

    python benchmarks/allpairs.py --n 4096 --samples 48 --json out.json

Every point is checked against a float64 numpy computation before its time counts.  The ratio is the
best untiled time over the best tiled time with local memory, both measured in this run on this device.

JSON: a list of records, one per kind of variant (``untiled``, ``tiled``, ``tiled+local``), with
``workload``, ``kind``, ``best_ms``, ``best_variant``, ``best_config``, ``measured`` (valid points of that
kind), ``interactions_per_s``; a last record ``summary`` with ``speedup_local_over_untiled``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def kind_of(variant: str) -> str:
    if "allpairs-tiles" not in variant:
        return "untiled"
    return "tiled+local" if "local" in variant.split("#")[0].split("+") else "tiled"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--samples", type=int, default=48)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--db", default=None)
    ap.add_argument("--json", required=True)
    args = ap.parse_args(argv)

    from examples.tuples import all_pairs, all_pairs_reference
    from liftpy.explore import explore_program
    from liftpy.search import UniformSearch

    db = args.db or str(Path(tempfile.mkdtemp()) / "allpairs.sqlite")
    ex = explore_program(all_pairs, {"N": args.n}, samples=args.samples, reference=all_pairs_reference,
                         db=db, search=UniformSearch, jobs=args.jobs)
    best: dict = {}
    counts: dict = {}
    for r in ex.records:
        if not r.measured or r.is_reference:
            continue
        k = kind_of(r.variant)
        counts[k] = counts.get(k, 0) + 1
        if k not in best or r.time_ms < best[k].time_ms:
            best[k] = r
    out = []
    print(f"all-pairs, N = {args.n}, on {ex.device}")
    print(f"{'kind':<14}{'best ms':>10}{'points':>8}  variant / config")
    for k in ("untiled", "tiled", "tiled+local"):
        if k not in best:
            continue
        r = best[k]
        out.append({"workload": f"allpairs-{args.n}", "kind": k, "best_ms": r.time_ms, "best_variant": r.variant,
                    "best_config": r.config, "measured": counts[k], "device": ex.device,
                    "interactions_per_s": args.n * args.n / (r.time_ms * 1e-3)})
        print(f"{k:<14}{r.time_ms:>10.4f}{counts[k]:>8}  {r.variant} {r.config}")
    if "untiled" in best and "tiled+local" in best:
        speedup = best["untiled"].time_ms / best["tiled+local"].time_ms
        out.append({"workload": f"allpairs-{args.n}", "kind": "summary", "speedup_local_over_untiled": speedup})
        print(f"tiled with local memory vs untiled: {speedup:.2f}x")
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
