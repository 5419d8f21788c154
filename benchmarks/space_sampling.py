"""Time to draw 1,000 distinct, uniformly distributed valid configurations of the GPGPU'20 partial
convolution space, for the nine VGG-16 convolution layers, with liftpy and with the reference methods.

    python benchmarks/space_sampling.py --json results.json [--layers vgg16:0,vgg16:7] [--timeout 60]

Methods, all in this run and on the same space:

* ``liftpy``: plan (domains, groups, order) + memoised exact count + 1,000 distinct indices decoded;
* ``bruteforce``: enumerate the cross product of the parameters' candidate sets, filter, pick 1,000;
* ``python-constraint2``: kernel_tuner's CSP solver (``OptimizedBacktrackingSolver``) lists every valid
  configuration from string constraints, then 1,000 are picked;
* ``pyatf``: pyATF's chain-of-trees ``SearchSpace`` (each parameter's constraint is the conjunction of
  the constraints it completes, parameters in the order that minimises pyATF's own work), then 1,000
  distinct uniform indices through its 1-D access.

Every competitor receives the *search* candidate sets liftpy iterates (after its narrowing by
divisibility), never larger ones, so the comparison measures search rather than domain derivation.  Each
competitor runs in a child process with a time limit; a run past the limit is recorded as a timeout.

The space is the one liftpy explores: constraint inference (``liftpy.constraints.infer``) on the
parametric partial convolution the rewrite engine derives from the high-level expression (``space_variant``
below), with the device limits of the profile.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import platform
import random
import re
import sys
import time
from pathlib import Path

import sympy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from liftpy.constraints import Parameter, Space, count_space, plan_space, sample  # noqa: E402
from liftpy.host.profile import DeviceProfile  # noqa: E402
from liftpy.operators.conv import Layer, get_layer, network_layers  # noqa: E402

N_SAMPLES = 1000
VGG16 = [layer.name for layer in network_layers("vgg16")]


# The limits the GPGPU'20 experiments ran under (ARM Mali-G72 MP12, Lift's settings file: 384 work-items
# per group and per dimension); local memory and the allocation limit are Mali's reported values, and 64
# registers per work-item is Bifrost's budget at full occupancy.
MALI_G72 = DeviceProfile(
    device="ARM | Mali-G72 MP12 (GPGPU'20 settings) | benchmark profile",
    source="benchmarks/space_sampling.py",
    max_work_group_size=384,
    max_work_item_sizes=(384, 384, 384),
    compute_units=12,
    local_mem_bytes=32768,
    global_mem_bytes=6 << 30,
    max_alloc_bytes=1 << 30,
    registers_per_item=64,
    device_type="GPU",
)


# The variants whose spaces the benchmark samples: the GPGPU'20 partial convolution as the rewrite engine
# derives it (optimisational padding, 2D tiling, partial reduction with the summation in a kernel of its
# own); the excluded rules add no tuning parameter, and some add limits that empty the space.
SPACE_FEATURES = {"padOpt", "tile2D", "partialReduce", "splitPartialKernels"}
SPACE_EXCLUDES = {"placeInImage", "letPrivate", "unrollReduceSeq", "localStage", "coalesce", "materializeInput", "cropKernel"}


def conv_space(layer: Layer, profile: DeviceProfile):
    """(variant, space, plan): the explored variant of ``layer``'s convolution with the most tuning
    parameters that has a valid configuration on ``profile``, the space constraint inference derives for
    it, and liftpy's plan of that space."""
    from liftpy.constraints.infer import variant_space
    from liftpy.explore.conv import conv_variants
    from liftpy.operators.conv import layer_sizes
    from liftpy.rewrite.explore import features
    from liftpy.search import variant_id

    found = [v for v in conv_variants(layer.K, layer.stride, layer.pad)
             if SPACE_FEATURES <= set(features(v)) and not set(features(v)) & SPACE_EXCLUDES]
    for v in sorted(found, key=lambda v: (-len(v.params), variant_id(v))):
        space = variant_space(v, layer_sizes(layer), profile)
        plan = plan_space(space)
        if count_space(plan).size.valid:
            return v, space, plan
    raise SystemExit(f"no explored variant of {layer.name} with the rules {sorted(SPACE_FEATURES)} has a valid configuration")


# -- methods -----------------------------------------------------------------------------------------
# Each method gets the space and returns (configurations, valid size).  Inputs each competitor needs
# (domains, constraint strings) are prepared before its clock starts: translating liftpy's space into
# their formats is this script's work, not theirs.


def _search_problem(space: Space):
    """Candidate sets (liftpy's search sets, in liftpy's binding order) and the constraints that mention
    more than one parameter (constraints on one parameter are already applied to its set)."""
    plan = plan_space(space)
    order = list(plan.order)
    domains = {n: list(plan.search_domains[n].values) for n in order}
    shared = [c for c in space.constraints if len(c.names) > 1]
    return plan, order, domains, shared


def _python_text(pred) -> str:
    """The predicate as the Python expression a user of the other tools would write (``%``, ``/``)."""
    from sympy.printing.pycode import pycode

    return pycode(pred, fully_qualified_modules=False)


# Names pycode may print besides the parameters (floor, ceil, ...), for the functions built from its text.
_TEXT_NAMESPACE = {"floor": math.floor, "ceil": math.ceil, "sqrt": math.sqrt, "Min": min, "Max": max}


def _plain(text: str, names) -> bool:
    """Whether python-constraint2 can take ``text`` as a string constraint (only parameters, numbers and
    operators); otherwise it gets a function."""
    idents = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)) - {"and", "or", "not", "True", "False"}
    return idents <= set(names)


def run_liftpy(space: Space, rng: random.Random, progress):
    t0 = time.perf_counter()
    plan = plan_space(space)
    t1 = time.perf_counter()
    counted = count_space(plan)
    t2 = time.perf_counter()
    configs = sample(counted, N_SAMPLES, rng)
    t3 = time.perf_counter()
    phases = {"plan_s": round(t1 - t0, 4), "count_s": round(t2 - t1, 4), "sample_s": round(t3 - t2, 4)}
    return configs, counted.size.valid, {"exact": counted.size.exact, "order": list(plan.order), **phases}


def prepare_bruteforce(space: Space):
    from liftpy.constraints.compile import compile_predicate

    plan, order, domains, shared = _search_problem(space)
    check = compile_predicate(sympy.And(*[c.predicate for c in shared]), order)
    return order, domains, check


def run_bruteforce(prepared, rng: random.Random, progress):
    import itertools

    order, domains, check = prepared
    valid = []
    seen = 0
    for values in itertools.product(*(domains[n] for n in order)):
        seen += 1
        if seen & 0xFFFF == 0:
            progress.value = seen
        if check(*values):
            valid.append(values)
    progress.value = seen
    picked = rng.sample(valid, min(N_SAMPLES, len(valid)))
    return [dict(zip(order, v)) for v in picked], len(valid), {}


def prepare_python_constraint(space: Space):
    plan, order, domains, shared = _search_problem(space)
    constraints = []
    for c in shared:
        text = _python_text(c.predicate)
        if _plain(text, order):
            constraints.append((text, None))
        else:
            args = sorted(c.names)
            ns = dict(_TEXT_NAMESPACE)
            exec(f"def _c({', '.join(args)}):\n    return {text}\n", ns)
            constraints.append((ns["_c"], args))
    return order, domains, constraints


def run_python_constraint(prepared, rng: random.Random, progress):
    from constraint import OptimizedBacktrackingSolver, Problem

    order, domains, constraints = prepared
    problem = Problem(OptimizedBacktrackingSolver())
    for n in order:
        problem.addVariable(n, domains[n])
    for constraint, args in constraints:
        problem.addConstraint(constraint, args)
    solutions = problem.getSolutions()
    picked = rng.sample(solutions, min(N_SAMPLES, len(solutions)))
    return [dict(s) for s in picked], len(solutions), {}


def prepare_pyatf(space: Space):
    plan, order, domains, shared = _search_problem(space)
    order = _pyatf_order(order, domains, shared)
    pos = {n: i for i, n in enumerate(order)}
    per_param: dict[str, list[str]] = {n: [] for n in order}
    for c in shared:
        per_param[max(c.names, key=pos.get)].append(c)
    sources = {}
    for n in order:
        cs = per_param[n]
        if not cs:
            continue
        args = sorted(set().union(*(c.names for c in cs)) | {n}, key=pos.get)
        body = " and ".join(f"({_python_text(c.predicate)})" for c in cs)
        sources[n] = (args, body)
    return order, domains, sources


def _pyatf_order(names: list[str], domains: dict, shared: list) -> list[str]:
    """The parameter order that minimises pyATF's own work (its chain of trees tries every candidate of
    the next parameter below every valid prefix: sum over levels of candidates x valid prefixes), so
    pyATF is measured at its best.  The number of valid prefixes depends only on the *set* of parameters
    bound, so it is counted once per subset, with liftpy (untimed preparation)."""
    from liftpy.constraints import solve

    if len(names) > 8:
        return names
    prefix_count: dict[frozenset, int] = {}

    def valid(subset: frozenset) -> int:
        if subset not in prefix_count:
            sub = Space(
                tuple(Parameter(n, domain=tuple(domains[n])) for n in names if n in subset),
                tuple(c for c in shared if c.names <= subset),
            )
            prefix_count[subset] = solve(sub).size.valid if subset else 1
        return prefix_count[subset]

    best: dict[frozenset, tuple[int, tuple]] = {frozenset(): (0, ())}
    for size in range(len(names)):
        for subset, (cost, order) in [kv for kv in best.items() if len(kv[0]) == size]:
            for n in names:
                if n in subset:
                    continue
                nxt = subset | {n}
                c2 = cost + len(domains[n]) * valid(subset)
                if nxt not in best or c2 < best[nxt][0]:
                    best[nxt] = (c2, order + (n,))
    return list(best[frozenset(names)][1])


def run_pyatf(prepared, rng: random.Random, progress):
    from pyatf.range import Set
    from pyatf.search_space import SearchSpace
    from pyatf.tp import TP

    order, domains, sources = prepared
    tps = []
    for n in order:
        fn = None
        if n in sources:
            args, body = sources[n]
            ns = dict(_TEXT_NAMESPACE)
            exec(f"def _c({', '.join(args)}):\n    return {body}\n", ns)
            fn = ns["_c"]
        tps.append(TP(n, Set(*domains[n]), fn))
    space = SearchSpace(*tps, enable_1d_access=True, verbosity=0)
    total = space.constrained_size
    picked = rng.sample(range(total), min(N_SAMPLES, total))
    return [dict(space.get_configuration(i)) for i in picked], total, {}


METHODS = {
    "liftpy": (lambda space: space, run_liftpy),
    "bruteforce": (prepare_bruteforce, run_bruteforce),
    "python-constraint2": (prepare_python_constraint, run_python_constraint),
    "pyatf": (prepare_pyatf, run_pyatf),
}


# -- running one method in a child process -----------------------------------------------------------


def _child(method: str, space: Space, seed: int, started, progress, results):
    try:
        from liftpy.constraints import violated

        prepare, run = METHODS[method]
        prepared = prepare(space)
        rng = random.Random(seed)
        started.set()
        t0 = time.perf_counter()
        configs, valid, extra = run(prepared, rng, progress)
        seconds = time.perf_counter() - t0
        keys = {tuple(sorted(c.items())) for c in configs}
        bad = sum(1 for c in configs if violated(space, {k: int(v) for k, v in c.items()}))
        results.put({"status": "ok", "seconds": seconds, "valid_size": int(valid), "samples": len(configs),
                     "distinct": len(keys), "invalid_samples": bad, **extra})
    except BaseException as e:  # noqa: BLE001 - reported in the record, the run goes on
        started.set()
        results.put({"status": "error", "error": f"{type(e).__name__}: {e}"})


def measure(method: str, space: Space, timeout: float, seed: int) -> dict:
    ctx = mp.get_context("fork")
    started, progress, results = ctx.Event(), ctx.Value("q", 0), ctx.Queue()
    proc = ctx.Process(target=_child, args=(method, space, seed, started, progress, results), daemon=True)
    proc.start()
    if not started.wait(600):
        proc.kill()
        return {"status": "error", "error": "preparation took more than 600 s"}
    t0 = time.perf_counter()
    deadline = t0 + timeout
    out = None
    while out is None and time.perf_counter() < deadline:
        try:
            out = results.get(timeout=min(0.5, max(0.01, deadline - time.perf_counter())))
        except Exception:  # queue.Empty
            if not proc.is_alive() and results.empty():
                out = {"status": "error", "error": f"child exited with status {proc.exitcode}"}
    if out is None:
        elapsed = time.perf_counter() - t0
        proc.kill()
        proc.join()
        out = {"status": "timeout", "seconds": None, "elapsed": round(elapsed, 1)}
        if progress.value:
            out["checked_before_timeout"] = int(progress.value)
        return out
    proc.join(5)
    if proc.is_alive():
        proc.kill()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True, help="write the records to this file")
    ap.add_argument("--layers", default=",".join(VGG16), help="comma-separated layer names (default: all nine)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods (default: all)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds each competitor may run (default 60)")
    ap.add_argument("--profile", default=None, help="device profile JSON applied on top of the GPGPU'20 Mali-G72 limits")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    profile = DeviceProfile.load(args.profile, MALI_G72) if args.profile else MALI_G72
    layers = [get_layer(n.strip()) for n in args.layers.split(",") if n.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {list(METHODS)}")

    records = []
    for layer in layers:
        from liftpy.search import variant_id

        chosen, space, plan = conv_space(layer, profile)
        variant = variant_id(chosen)
        print(f"{layer.name}: variant {variant}, parameters {', '.join(p.name for p in space.parameters)}, "
              f"{len(space.constraints)} constraints", flush=True)
        raw = plan.raw_size
        search_product = 1
        for d in plan.search_domains.values():
            search_product *= len(d)
        for method in methods:
            r = measure(method, space, args.timeout, args.seed)
            rec = {"layer": layer.name, "method": method, "seconds": r.pop("seconds", None),
                   "valid_size": r.pop("valid_size", None), "raw_size": raw, "variant": variant, "search_product": search_product,
                   "timeout_s": args.timeout, **r}
            if rec["status"] == "timeout" and method == "bruteforce" and rec.get("checked_before_timeout"):
                rec["estimated_seconds"] = round(rec["elapsed"] * search_product / rec["checked_before_timeout"], 1)
            records.append(rec)
            print(f"  {layer.name:10s} {method:20s} {_fmt(rec)}", flush=True)

    meta = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "profile": profile.record(), "samples": N_SAMPLES}
    for rec in records:
        rec["environment"] = meta
    Path(args.json).write_text(json.dumps(records, indent=1))
    print()
    print(table(records, methods))
    return 0


def _fmt(rec: dict) -> str:
    if rec["status"] == "ok":
        return f"{rec['seconds']:8.3f} s  valid {rec['valid_size']}"
    if rec["status"] == "timeout":
        est = f", est. {rec['estimated_seconds']:.3g} s" if "estimated_seconds" in rec else ""
        return f"timeout after {rec['timeout_s']:.0f} s{est}"
    return f"error: {rec.get('error')}"


def table(records: list[dict], methods: list[str]) -> str:
    layers = list(dict.fromkeys(r["layer"] for r in records))
    head = f"{'layer':10s} {'raw size':>16s} {'valid size':>11s} " + " ".join(f"{m:>19s}" for m in methods)
    lines = [head, "-" * len(head)]
    for layer in layers:
        rs = {r["method"]: r for r in records if r["layer"] == layer}
        first = next(iter(rs.values()))
        valid = next((r["valid_size"] for r in rs.values() if r["valid_size"] is not None), None)
        cells = []
        for m in methods:
            r = rs.get(m)
            if r is None:
                cells.append(f"{'-':>19s}")
            elif r["status"] == "ok":
                cells.append(f"{r['seconds']:>17.3f} s")
            elif r["status"] == "timeout":
                cells.append(f"{'> ' + format(r['timeout_s'], '.0f') + ' s':>19s}")
            else:
                cells.append(f"{'error':>19s}")
        lines.append(f"{layer:10s} {first['raw_size']:>16.3e} {valid if valid is not None else '-':>11} " + " ".join(cells))
        sizes = {r["valid_size"] for r in rs.values() if r["valid_size"] is not None}
        if len(sizes) > 1:
            lines.append(f"{'':10s} !! methods disagree on the valid size: {sorted(sizes)}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
