"""Benchmark: how well any model could rank a search's measured points, next to how well ours does.

    python benchmarks/tau_ceiling.py --stores DIR [DIR ...] --json out.json
    python benchmarks/tau_ceiling.py --stores DIR --remeasure 60 --json out.json   # also measures again

Each ``DIR`` holds the stores of a run of ``benchmarks/search.py`` (``search-<workload>-uniform.sqlite``).
Over the uniform store's measured points it reports Kendall's tau between measured times and:

- ``analytical_tau``: the analytical formula (``liftpy.model.analytical``) as the search computes it;
  ``analytical_tau_buffers``: the same over the points whose inputs are all buffers (no image reads, the
  formula's largest term on a CPU, which alone separates half the points);
- ``oracle_variant_tau``: the formula shifted, per variant, by that variant's median residual over these
  very points: the best a correction per kind of variant could do, knowing the answers;
- ``learned_cv_tau``: the engine's learned correction (``liftpy.model.learned``) trained on four fifths of
  the uniform points and ranking the fifth, pooled over five folds (a guided search trains on 50 points near
  its optimum, not on 800 spread over the space);
- ``trees_cv_tau``: gradient-boosted trees given more than the engine's model sees (its features, every
  tuning parameter's value and the variant's index), cross-validated the same way.

``--remeasure N`` measures N of the uniform points (a random choice) again, ``--rounds`` times (two by
default), each built once, the rounds in alternation, each run as the engine runs a point (``--repeat``
runs asked for, timed by the device's rule, ``liftpy.host.timing``, named in ``remeasured.rule``):
``remeasured.rounds_tau`` is the tau between rounds (the mean over pairs of rounds) and
``remeasured.stored_tau`` between the store and the first round: how far measurements on this device agree
with themselves, whatever the model.  ``remeasured.rules_tau`` is the same agreement for other ways of
taking a time from the same runs (``RULES_COMPARED``: the median or the fastest of a round's first 5, 20
or 40 runs), which is how ``liftpy.host.timing`` chose its rule for a CPU.

JSON: one record per folder and workload with those fields, ``points``, ``buffer_points``, ``workload`` and
``store`` (the folder's name).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from search import _cv_tau, _features, _folds, _tau, workload  # noqa: E402


def _oracle_variant_tau(variants, base_s, measured_ms) -> float | None:
    residual = defaultdict(list)
    for v, b, m in zip(variants, base_s, measured_ms):
        residual[v].append(math.log(m) - math.log(b))
    shift = {v: statistics.median(rs) for v, rs in residual.items()}
    return _tau([math.log(b) + shift[v] for v, b in zip(variants, base_s)], measured_ms)


def _trees_cv_tau(rows, base_s, measured_ms, seed: int, folds: int = 5) -> float | None:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingRegressor

    n = len(rows)
    if n < 2 * folds:
        return None
    X = np.array(rows, dtype=float)
    residual = np.log(measured_ms) - np.log(base_s)
    predicted = np.zeros(n)
    for train, held in _folds(n, seed, folds):
        trees = HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, random_state=seed)
        trees.fit(X[train], residual[train])
        predicted[held] = np.log(np.array(base_s)[held]) + trees.predict(X[held])
    return _tau(list(predicted), measured_ms)


# Timing rules compared over the same runs (``--remeasure``): (runs, statistic), the first runs of a round.
RULES_COMPARED = ((5, "median"), (5, "fastest"), (20, "median"), (20, "fastest"), (40, "median"), (40, "fastest"))


def _remeasure(op, variants, index, records, profile, count: int, repeat: int, seed: int, rounds: int = 2) -> dict:
    """``count`` of ``records`` measured again ``rounds`` times in alternation (each point built once), each
    time as many runs as the device's rule or any of ``RULES_COMPARED`` needs."""
    from itertools import combinations

    from liftpy.errors import LiftError
    from liftpy.host.device import device_info
    from liftpy.host.timing import TimingRule, device_timing
    from liftpy.runtime.points import _build, _prepared, compile_point, point_payload

    chosen = random.Random(seed).sample(records, min(count, len(records)))
    limits = profile.limits()
    inputs, check = _prepared(op, seed)
    built = {}
    for k, r in enumerate(chosen):
        v = variants[index[r.variant]]
        payload = point_payload(op, v.program, v.placement_map, r.config, None, seed, repeat, 2, limits, None)
        try:
            payload["stages"] = compile_point(payload)["stages"]
            built[k] = _build(payload)[0]
        except LiftError:
            pass
    engine = device_timing(device_info(None).type, repeat)  # the device the points were built on
    compared = [TimingRule(n, stat) for n, stat in RULES_COMPARED]
    runs = max([engine.runs] + [c.runs for c in compared])
    times: list[dict] = [{} for _ in range(max(rounds, 2))]
    for measured in times:
        for k, compiled in built.items():
            try:
                result = compiled.run(*inputs, repeat=runs, warmup=2)
            except LiftError:
                continue
            if check(result.output).ok:
                measured[k] = result.times_ms
    both = sorted(set.intersection(*(set(t) for t in times)))

    def agreement(rule) -> float | None:
        """Mean tau over pairs of rounds, each point's time by ``rule`` from the first runs of its round."""
        values = [[rule.of(t[k][:rule.runs]) for k in both] for t in times]
        taus = [_tau([math.log(x) for x in a], b) for a, b in combinations(values, 2)]
        return None if None in taus else statistics.mean(taus)

    first = [engine.of(times[0][k][:engine.runs]) for k in both]
    return {"points": len(both), "repeat": repeat, "rule": str(engine), "rounds": len(times),
            "rounds_tau": agreement(engine),
            "stored_tau": _tau([math.log(chosen[k].time_ms) for k in both], first),
            "rules_tau": {str(rule): agreement(rule) for rule in compared}}


_COLUMNS = ("analytical_tau", "analytical_tau_buffers", "oracle_variant_tau", "learned_cv_tau", "trees_cv_tau")


def _table(records: list[dict]) -> str:
    from liftpy.results.pareto import format_table

    def fmt(x):
        return "-" if x is None else f"{x:.3f}"

    header = ["workload", "store", "points", *(c.removesuffix("_tau").replace("_tau_", " ") for c in _COLUMNS),
              "remeasured", "rounds", "stored"]
    rows = []
    for r in records:
        again = r.get("remeasured") or {}
        rows.append([r["workload"], r["store"], str(r["points"]), *(fmt(r[c]) for c in _COLUMNS), str(again.get("points", "-")),
                     fmt(again.get("rounds_tau")), fmt(again.get("stored_tau"))])
    return format_table(header, rows, numeric=set(header[2:]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stores", nargs="+", required=True, help="folders of search.py's stores")
    ap.add_argument("--workloads", nargs="*", default=["vgg16:7@reduced"])
    ap.add_argument("--conv-rules", default="tile2DReduce|tile2DReduceStrided")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--remeasure", type=int, default=0, metavar="N")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs asked for per measurement of --remeasure (search.py's default; on a CPU the fastest of at least 40)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of --remeasure (at least 2)")
    ap.add_argument("--json", required=True)
    args = ap.parse_args()

    from liftpy.host.profile import resolve_profile
    from liftpy.results.cache import cached_variants
    from liftpy.results.store import Store
    from liftpy.search import select_variants, variant_id
    from liftpy.search import ModelSearch, Spaces

    profile = resolve_profile(None, args.profile)
    out = []
    for folder, name in [(Path(f), w) for f in args.stores for w in args.workloads]:
        op, rules = workload(name)
        rules = tuple(r for r in args.conv_rules.split(",") if r) if rules is None else rules
        db = folder / f"search-{name.replace(':', '_').replace('@', '_')}-uniform.sqlite"
        if not db.exists():
            raise SystemExit(f"no store {db} (run benchmarks/search.py with --json in that folder first)")
        with Store(db) as store:
            records = [r for r in store.records(layer=op.problem) if r.measured and not r.is_reference]
        variants = select_variants(cached_variants(op), rules)
        index = {variant_id(v): i for i, v in enumerate(variants)}
        records = [r for r in records if r.variant in index]
        spaces = Spaces(variants, op.sizes(), profile, args.seed, program=op.program())
        search = ModelSearch(spaces, args.seed)
        points = [(index[r.variant], r) for r in records]
        spaces.prefetch_access([(i, r.config) for i, r in points], args.jobs)
        predictions = [spaces.predict(i, r.config) for i, r in points]
        feats, base = _features(search, points, predictions)
        measured = [r.time_ms for r in records]
        buffers = [k for k, p in enumerate(predictions) if not p.features.get("image_reads")]
        names = sorted({k for r in records for k in r.config})
        rich = [f + [math.log2(1 + r.config.get(k, 0)) for k in names] + [i] for f, (i, r) in zip(feats, points)]
        rec = {
            "workload": name, "store": folder.name, "points": len(records), "buffer_points": len(buffers),
            "analytical_tau": _tau([math.log(b) for b in base], measured),
            "analytical_tau_buffers": _tau([math.log(base[k]) for k in buffers], [measured[k] for k in buffers]),
            "oracle_variant_tau": _oracle_variant_tau([i for i, _ in points], base, measured),
            "learned_cv_tau": _cv_tau(feats, base, measured, search.learned.rule_names, args.seed),
            "trees_cv_tau": _trees_cv_tau(rich, base, measured, args.seed),
        }
        if args.remeasure:
            rec["remeasured"] = _remeasure(op, variants, index, records, profile, args.remeasure, args.repeat, args.seed,
                                           args.rounds)
        out.append(rec)
    print(_table(out))
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
