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

The space comes from ``conv_space`` below, an interim hand-written model that constraint inference will
replace; it is the only place in this script that knows the model.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import sympy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from liftpy.constraints import Constraint, Parameter, Space, count_space, plan_space, sample  # noqa: E402
from liftpy.host.profile import DeviceProfile  # noqa: E402
from liftpy.ir.types import size_var  # noqa: E402

N_SAMPLES = 1000


@dataclass(frozen=True)
class ConvLayer:
    name: str
    C: int  # input channels
    H: int
    W: int
    M: int  # number of kernels (output channels)
    K: int = 3
    pad: int = 1
    stride: int = 1


# Table 3 of GPGPU'20 (Mogers et al.): the unique convolution layers of VGG-16.
VGG16 = {
    f"vgg16:{i}": ConvLayer(f"vgg16:{i}", c, h, h, m)
    for i, (c, h, m) in {
        0: (3, 224, 64),
        2: (64, 224, 64),
        5: (64, 112, 128),
        7: (128, 112, 128),
        10: (128, 56, 256),
        12: (256, 56, 256),
        17: (256, 28, 512),
        19: (512, 28, 512),
        24: (512, 14, 512),
    }.items()
}

# The limits the GPGPU'20 experiments ran under (ARM Mali-G72 MP12, Lift's settings file: 384 work-items
# per group and per dimension); local memory and the allocation limit are Mali's reported values, and 64
# registers per work-item is Bifrost's budget at full occupancy.
MALI_G72 = DeviceProfile(
    device="ARM | Mali-G72 MP12 (GPGPU'20 settings) | interim benchmark profile",
    source="benchmarks/space_sampling.py",
    max_work_group_size=384,
    max_work_item_sizes=(384, 384, 384),
    compute_units=12,
    local_mem_bytes=32768,
    global_mem_bytes=6 << 30,
    max_alloc_bytes=1 << 30,
    registers_per_item=64,
)


def conv_space(layer: ConvLayer, profile: DeviceProfile) -> Space:
    """INTERIM MODEL, to be replaced by constraint inference on the parametric convolution: the tuning
    space of GPGPU'20's partial convolution (Listing 4, two lambdas fused, as in Lift's code).

    Parameters (Table 2): rho, optimisational padding; theta, tile size; kappa, kernels per work-group;
    sigma, sliding windows per work-item; omega, window elements per work-item chunk; upsilon, vector
    width.
    """
    C, K, s, pad, M = layer.C, layer.K, layer.stride, layer.pad, layer.M
    rho, theta, kappa, sigma, omega, upsilon = (size_var(n) for n in ("rho", "theta", "kappa", "sigma", "omega", "upsilon"))
    window = K * K * C
    padded = sorted({layer.H + 2 * pad, layer.W + 2 * pad})
    windows_per_tile = ((theta - K) / s + 1) ** 2
    chunks = sympy.Integer(window) / omega
    params = (
        Parameter("rho", lo=0, hi=max(padded) - 1, doc="optimisational padding (right and bottom); larger values add no new tilings"),
        Parameter("theta", lo=K, doc="input tile size (square)"),
        Parameter("kappa", doc="kernels per work-group"),
        Parameter("sigma", doc="sliding windows per work-item"),
        Parameter("omega", doc="window elements per work-item chunk"),
        Parameter("upsilon", doc="vector width (1: scalar)"),
    )
    cons = []

    def add(pred, origin, primitive, kind):
        cons.append(Constraint(pred, origin, primitive, kind))

    for n in padded:
        add(sympy.Eq(sympy.Mod(n + rho - theta, theta - (K - s)), 0),
            f"slideStrict(theta, theta - {K - s}) tiles [..]{n} + rho exactly: ({n} + rho - theta) % (theta - {K - s}) == 0",
            "slideStrict", "algorithmic")
        add(theta <= n + rho, f"a tile lies inside the padded input: theta <= {n} + rho", "range", "range")
    if s > 1:
        add(sympy.Eq(sympy.Mod(theta - K, s), 0), f"slideStrict({K}, {s}) covers a tile: (theta - {K}) % {s} == 0", "slideStrict", "algorithmic")
        add(sympy.Eq(sympy.Mod(rho, s), 0), f"cropping rho / {s} must be whole: rho % {s} == 0", "pad", "algorithmic")
    add(sympy.Eq(sympy.Mod(M, kappa), 0), f"split(kappa) of the {M} kernels needs {M} % kappa == 0", "split", "algorithmic")
    add(sympy.Eq(sympy.Mod(windows_per_tile, sigma), 0),
        f"split(sigma) of the windows of a tile needs {sympy.sstr(windows_per_tile)} % sigma == 0", "split", "algorithmic")
    add(sympy.Eq(sympy.Mod(window, omega), 0), f"split(omega) of a flat window [float]{window} needs {window} % omega == 0", "split", "algorithmic")
    add(sympy.Eq(sympy.Mod(omega, upsilon), 0), "asVector(upsilon) of a chunk [float]omega needs omega % upsilon == 0", "asVector", "algorithmic")
    add(sympy.Contains(upsilon, sympy.FiniteSet(1, 2, 4, 8, 16)), "OpenCL vector widths: upsilon in {1, 2, 4, 8, 16}", "asVector", "range")

    wi0, wi1 = profile.max_work_item_sizes[0], profile.max_work_item_sizes[1]
    add(chunks <= wi0, f"work-items in dimension 0 ({window}/omega chunks per window) <= {wi0}", "device:max_work_item_sizes[0]", "hardware")
    add(windows_per_tile / sigma <= wi1, f"work-items in dimension 1 (windows per tile / sigma) <= {wi1}", "device:max_work_item_sizes[1]", "hardware")
    add(windows_per_tile / sigma * chunks <= profile.max_work_group_size,
        f"work-group size (windows per tile / sigma) * ({window}/omega) <= {profile.max_work_group_size}",
        "device:max_work_group_size", "hardware")
    add(4 * kappa * windows_per_tile * chunks <= profile.local_mem_bytes,
        f"local memory for a work-group's partial sums, 4 B * kappa * windows per tile * {window}/omega <= {profile.local_mem_bytes} B",
        "device:local_mem_bytes", "hardware")
    if profile.private_mem_bytes is not None:
        add(4 * (kappa * sigma + sigma * upsilon) <= profile.private_mem_bytes,
            f"private memory per work-item, 4 B * (kappa*sigma accumulators + sigma*upsilon inputs) <= {profile.private_mem_bytes} B",
            "device:private_mem_bytes", "hardware")
    add(4 * C * (layer.H + 2 * pad + rho) * (layer.W + 2 * pad + rho) <= profile.max_alloc_bytes,
        f"padded input buffer 4 B * {C} * ({layer.H + 2 * pad} + rho) * ({layer.W + 2 * pad} + rho) <= {profile.max_alloc_bytes} B",
        "device:max_alloc_bytes", "hardware")
    out_h = (layer.H + 2 * pad + rho - K) / s + 1
    out_w = (layer.W + 2 * pad + rho - K) / s + 1
    add(4 * M * out_h * out_w <= profile.max_alloc_bytes,
        f"uncropped output buffer 4 B * {M} * outH * outW <= {profile.max_alloc_bytes} B", "device:max_alloc_bytes", "hardware")
    return Space(params, tuple(cons))


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
    from sympy.printing.pycode import pycode

    return pycode(pred, fully_qualified_modules=False)


def run_liftpy(space: Space, rng: random.Random, progress):
    counted = count_space(plan_space(space))
    return sample(counted, N_SAMPLES, rng), counted.size.valid, {"exact": counted.size.exact}


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
    return order, domains, [_python_text(c.predicate) for c in shared]


def run_python_constraint(prepared, rng: random.Random, progress):
    from constraint import OptimizedBacktrackingSolver, Problem

    order, domains, texts = prepared
    problem = Problem(OptimizedBacktrackingSolver())
    for n in order:
        problem.addVariable(n, domains[n])
    for t in texts:
        problem.addConstraint(t)
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
            ns: dict = {}
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


def _child(method: str, layer: ConvLayer, profile: DeviceProfile, seed: int, started, progress, results):
    try:
        from liftpy.constraints import violated

        space = conv_space(layer, profile)
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


def measure(method: str, layer: ConvLayer, profile: DeviceProfile, timeout: float, seed: int) -> dict:
    ctx = mp.get_context("fork")
    started, progress, results = ctx.Event(), ctx.Value("q", 0), ctx.Queue()
    proc = ctx.Process(target=_child, args=(method, layer, profile, seed, started, progress, results), daemon=True)
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
    layers = [VGG16[n.strip()] for n in args.layers.split(",") if n.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {list(METHODS)}")

    records = []
    for layer in layers:
        space = conv_space(layer, profile)
        plan = plan_space(space)
        raw = plan.raw_size
        search_product = 1
        for d in plan.search_domains.values():
            search_product *= len(d)
        for method in methods:
            r = measure(method, layer, profile, args.timeout, args.seed)
            rec = {"layer": layer.name, "method": method, "seconds": r.pop("seconds", None),
                   "valid_size": r.pop("valid_size", None), "raw_size": raw, "search_product": search_product,
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
