"""Diagnostic: a matrix-product spelling of ``benchmarks/spellings.py`` (two chained products by default)
at one size, each tiled variant run over a grid of tile shapes (the same for every product), each
kernel's time printed beside PyTorch's mm and addmm of the same sizes: which tile shapes the device runs
fastest at this size, and so whether the search misses them or the tilings lack them.

    python benchmarks/device/tile_grid.py --size 1024 --json "$OUT/chained-grid.json" [--budget 240]
    python benchmarks/device/tile_grid.py --computation sgemm --size 2048 --shapes 128,128,8,8,16 128,128,16,8,16 ...
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import spellings as S  # noqa: E402

from liftpy.errors import LiftError  # noqa: E402
from liftpy.explore.operator import ProgramOperator  # noqa: E402
from liftpy.host.profile import resolve_profile  # noqa: E402
from liftpy.results.cache import cached_variants  # noqa: E402
from liftpy.runtime import points as ev  # noqa: E402
from liftpy.search.variants import variant_id  # noqa: E402

TILES = [(128, 128), (128, 64), (64, 128), (64, 64), (32, 256), (256, 32), (32, 128), (128, 32), (32, 64), (64, 32)]
BLOCKS = [(8, 8), (8, 16), (16, 8), (4, 8), (8, 4), (4, 16), (16, 4), (4, 4)]


def configs(variant_params, shapes=None):
    """Each (m, n, k, r0, r1) for both products, as the variant names them (m0 n0 k0 r0 r1, m1 n1 k1 r2 r3)."""
    grid = shapes or [(m, n, k, ra, rb) for (m, n), k, (ra, rb) in itertools.product(TILES, (8, 16), BLOCKS)
                      if m % ra == 0 and n % rb == 0 and (m // ra) * (n // rb) in (64, 128, 256)]
    for m, n, k, ra, rb in grid:
        one = {"m0": m, "n0": n, "k0": k, "r0": ra, "r1": rb, "m1": m, "n1": n, "k1": k, "r2": ra, "r3": rb}
        yield (m, n, k, ra, rb), {p: v for p, v in one.items() if p in variant_params}


def torch_times(size: int) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b, c, d = (torch.rand(size, size, device="cuda") for _ in range(4))
    out = {}
    for name, fn in (("mm", lambda: torch.mm(a, b)), ("addmm", lambda: torch.addmm(d, a, c, beta=0.5, alpha=1.5))):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(50):
            fn()
        end.record()
        torch.cuda.synchronize()
        out[name] = start.elapsed_time(end) / 50
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--json", required=True)
    ap.add_argument("--budget", type=float, default=240.0)
    ap.add_argument("--variants", default="", help="comma-separated variant-id prefixes (default: every tiled one)")
    ap.add_argument("--computation", default="chained_products", help="a matrix product of spellings.py")
    ap.add_argument("--shapes", nargs="*", default=None, help="m,n,k,r0,r1 each (default: a grid)")
    args = ap.parse_args(argv)
    name, spellings, sizes, reference = next((c[0], c[1], c[2], c[3]) for c in S.computations() if c[0] == args.computation)
    sizes = {k: args.size for k in sizes}
    op = ProgramOperator.of(S.build(next(iter(spellings.values())), sizes), sizes, reference=reference)
    shapes = [tuple(int(x) for x in s.split(",")) for s in args.shapes] if args.shapes else None
    profile = resolve_profile(None, None)
    variants = cached_variants(op)
    wanted = [w for w in args.variants.split(",") if w]
    chosen = [v for v in variants if "tiled" in variant_id(v) and (not wanted or any(variant_id(v).startswith(w) for w in wanted))]
    torch_ms = torch_times(args.size)
    print("torch", {k: round(v, 4) for k, v in torch_ms.items()}, flush=True)
    records, t0 = [], time.perf_counter()
    for v in chosen:
        params = {str(p) for p in v.params}
        for shape, cfg in configs(params, shapes):
            if time.perf_counter() - t0 > args.budget:
                break
            try:
                p = ev.point_payload(op, v.program, v.placement_map, cfg, None, 0, 10, 2, profile.limits(), None)
                p["stages"] = ev.compile_point(p)["stages"]
                m = ev.measure_point(p)
            except (LiftError, ValueError, RuntimeError) as e:
                print(f"{variant_id(v)[:44]:44s} {shape} error {str(e).splitlines()[0][:90]}", flush=True)
                continue
            ks = [round(x, 4) for x in m["kernel_ms"]]
            print(f"{variant_id(v)[:44]:44s} {shape} {m['time_ms']:.4f} ms kernels {ks} {m['launches']}", flush=True)
            records.append({"variant": variant_id(v), "shape": shape, "config": cfg, "time_ms": m["time_ms"],
                            "kernel_ms": m["kernel_ms"], "launches": m["launches"]})
            Path(args.json).write_text(json.dumps({"torch_ms": torch_ms, "size": args.size, "points": records}, indent=1))
    Path(args.json).write_text(json.dumps({"torch_ms": torch_ms, "size": args.size, "points": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
