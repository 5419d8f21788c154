"""Benchmark, offline: does the learned correction rank a workload's held-out points better when it also learns
the other workloads' measurements on the same device (transfer across workloads, ``liftpy.model.learned``)?

    python benchmarks/transfer.py --stores DIR --profile benchmarks/results/h100-profile.json \
        --workloads vgg16:12 vgg16:10 vgg16:5 vgg16:24 --json out.json

``DIR`` holds the stores ``benchmarks/search.py`` leaves (``search-TAG-uniform.sqlite``, ``search-TAG-guided.sqlite``).
Leave one workload out: for workload W, the model learns W's own points (the first ``--own`` of its guided
store by time, as ``search.py`` takes them; without a guided store, a random ``--own`` of its uniform points,
drawn with ``--seed``: a proxy, spread over the kinds of variant as a guided search's are not) and, with
transfer, the other stores' points of other problems of the same variants (``search._transfer``: what a search
sharing one store with them learns), and ranks W's uniform points it did not learn.  Each record has
``kendall_tau`` with transfer and ``kendall_tau_no_transfer`` without, ``own`` (guided or random) and
``transfer`` (the stores, problems and points used).  Nothing is measured; the other stores' rows of W's own
problem are never learned.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stores", required=True, help="the folder of the search-*.sqlite stores")
    ap.add_argument("--workloads", nargs="+", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--conv-rules", default="tile2DReduce|tile2DReduceStrided")
    ap.add_argument("--own", type=int, default=50, help="the workload's own points the model learns (default 50)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()

    import copy

    from liftpy.host.profile import resolve_profile
    from liftpy.results.cache import cached_variants
    from liftpy.results.store import Store
    from liftpy.search import select_variants, variant_id
    from liftpy.search import ModelSearch, Spaces
    from search import _features, _tau, _transfer, workload

    folder = Path(args.stores)
    profile = resolve_profile(None, args.profile)
    records = []
    for name in args.workloads:
        op, rules = workload(name)
        rules = tuple(r for r in args.conv_rules.split(",") if r) if rules is None else rules
        tag = name.replace(":", "_").replace("@", "_")
        uni_db, guided_db = folder / f"search-{tag}-uniform.sqlite", folder / f"search-{tag}-guided.sqlite"
        # (by problem: a live ``search.py --transfer`` run's guided store holds other workloads' rows too)
        with Store(uni_db) as s:
            uniform = [r for r in s.records(layer=op.problem) if r.measured and not r.is_reference]
        if guided_db.exists():
            with Store(guided_db) as s:
                own = sorted((r for r in s.records(layer=op.problem) if not r.is_reference),
                             key=lambda r: r.finished_at or 0)[:args.own]
            own, held, how = [r for r in own if r.measured], uniform, "guided"
        else:
            picked = set(random.Random(args.seed).sample(range(len(uniform)), min(args.own, len(uniform) // 2)))
            own = [r for k, r in enumerate(uniform) if k in picked]
            held = [r for k, r in enumerate(uniform) if k not in picked]
            how = "random"
        device = own[0].device
        variants = select_variants(cached_variants(op), rules)
        spaces = Spaces(variants, op.sizes(), profile, args.seed, program=op.program())
        search = ModelSearch(spaces, args.seed)
        index = {variant_id(v): i for i, v in enumerate(variants)}
        own = [r for r in own if r.variant in index]
        held = [(index[r.variant], r) for r in held if r.variant in index]
        spaces.prefetch_access([(i, r.config) for i, r in held] + [(index[r.variant], r.config) for r in own], args.jobs)
        for r in own:
            search.observe(index[r.variant], r.config, r.time_ms)
        search.refit()
        plain = copy.deepcopy(search.learned)
        used = _transfer(search, op, folder, (uni_db, guided_db), device, index, args.jobs)
        search.refit()
        feats, base = _features(search, held)
        meas = [r.time_ms for _, r in held]
        rec = {"workload": name, "device": device, "own": how, "own_points": len(own), "held_out_points": len(held),
               "kendall_tau": _tau(search.learned.predict_log(feats, base), meas),
               "kendall_tau_no_transfer": _tau(plain.predict_log(feats, base), meas),
               "analytical_kendall_tau": _tau([math.log(max(b, 1e-12)) for b in base], meas),
               "transfer": used, "seed": args.seed}
        records.append(rec)
        print(json.dumps(rec), flush=True)
        Path(args.json).write_text(json.dumps(records, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
