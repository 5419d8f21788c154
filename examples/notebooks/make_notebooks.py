"""Writes the research notebooks from the cells below and executes them (nbclient), so that what is committed
carries the outputs of the machine that ran this script: ``python examples/notebooks/make_notebooks.py
[NAME ...]``.  Each notebook asks one question, measures, and ends with an answer printed from its own
measurements (nothing in a markdown cell states a result).

``tests/test_notebooks.py`` executes the committed notebooks again with ``LIFTPY_NOTEBOOK_SMALL=1``: the
same method on fewer points, so that CI runs each in a minute or two on PoCL; a failing cell fails the test.
The notebooks need pandas (the ``test`` and ``notebooks`` extras install it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

# ------------------------------------------------------------------------------------------------ stencil

STENCIL = [
    ("md", r"""# Which rewrite rules matter for a stencil?

liftpy derives the implementations of a program by rewriting it.  For a 2-D stencil, two rule families
shape most of the code: **overlapped tiling** (`tile2D`: the grid is cut into tiles that overlap by the
stencil's halo, one work-group or one work-item per tile) and **local-memory staging** (`localStage`: each
tile is first copied into the work-group's local memory and the stencil reads it there).  On a GPU staging
is the classic optimisation.  Does either pay on *this* device, and by how much?

**Method.**
1. The variants of `jacobi2d` (the library's 5-point Jacobi stencil) are split by the rules their
   derivation used (`liftpy.search.select_variants`, the filter behind `explore_operator(rules=...)`
   and `liftpy explore --rules`) into three disjoint arms: *untiled* (no `tile2D`), *tiled* (`tile2D`
   without `localStage`) and *tiled + local* (`localStage`, which only follows `tile2D`).
2. Each arm is explored on its own (uniform search over its variants and their tuning parameters), once
   per seed: a seed draws other points.  The order of the arms rotates from seed to seed.  Every point is
   validated against numpy before it is timed (the fastest of at least 40 runs on a CPU device).
3. An exploration times its points one after another, and on a shared CPU the machine's state drifts
   between them (a kernel that has both cores runs twice as fast as one that shares them).  So every
   measured point is timed again: a few rounds, each over all the points in a new random order.  A point's
   time is the fastest of its exploration's measurement and its rounds, so every arm met the same machine
   equally often.
4. Per arm: the median time of its points with a bootstrap 95% confidence interval (points resampled with
   replacement), and the best point of each exploration.  An arm's effect is the ratio of its median to the
   untiled median, with a bootstrap 95% interval; an interval that excludes 1 is a measurable effect.

The records go to pandas with `liftpy.results.to_pandas`."""),
    ("code", r"""import os

# The experiment's size.  tests/test_notebooks.py sets LIFTPY_NOTEBOOK_SMALL: the same method, fewer points.
OPERATOR, SIZES = "jacobi2d", {"H": 256, "W": 256}
SEEDS, SAMPLES, ROUNDS = (0, 1, 2, 3), 4, 5
if os.environ.get("LIFTPY_NOTEBOOK_SMALL"):
    SEEDS, SAMPLES, ROUNDS = (0, 1), 3, 2
print(f"{OPERATOR} at {SIZES}: {len(SEEDS)} seeds x {SAMPLES} points per arm, re-timed in {ROUNDS} rounds")"""),
    ("md", "## The variants and the arms"),
    ("code", r"""from collections import Counter

import numpy as np
import pandas as pd

from liftpy.explore.operator import library_operator
from liftpy.host.device import get_device
from liftpy.results.cache import cached_variants
from liftpy.rewrite.explore import features
from liftpy.search import select_variants

op = library_operator(OPERATOR, SIZES)
device = get_device(None)
variants = cached_variants(op)  # derived by the rewrite rules (cached on disk)
uses = Counter(f for v in variants for f in features(v))
print(f"{OPERATOR} at {SIZES} on {device.info.name}: {len(variants)} variants; how many use each rule family:")
print(pd.Series(uses).sort_values(ascending=False).to_string())

tiled = {id(v) for v in select_variants(variants, ["tile2D"])}
staged = {id(v) for v in select_variants(variants, ["localStage"])}
ARMS = {
    "untiled": [v for v in variants if id(v) not in tiled],
    "tiled": [v for v in variants if id(v) in tiled and id(v) not in staged],
    "tiled + local": [v for v in variants if id(v) in staged],
}
print()
for arm, vs in ARMS.items():
    print(f"{arm:14s} {len(vs):2d} variants")"""),
    ("md", "## The explorations"),
    ("code", r"""import time
from pathlib import Path

from liftpy.explore import explore_operator
from liftpy.results import to_pandas
from liftpy.search import UniformSearch

for old in Path(".").glob("stencil-rules-*.sqlite*"):
    old.unlink()  # measured afresh each time the notebook runs (a store would resume instead)

names = list(ARMS)
frames, t0, load = [], time.time(), [os.getloadavg()[0]]
for s, seed in enumerate(SEEDS):
    for arm in names[s % 3:] + names[:s % 3]:  # the order rotates, so no arm is always first
        ex = explore_operator(op, samples=SAMPLES, db=f"stencil-rules-{names.index(arm)}-seed{seed}.sqlite",
                              variants=ARMS[arm], seed=seed, search=UniformSearch, references=False, progress=False)
        frames.append(to_pandas(ex.records).assign(arm=arm, seed=seed))
    load.append(os.getloadavg()[0])
records = pd.concat(frames, ignore_index=True)
print(f"{len(records)} points explored in {time.time() - t0:.0f} s; the machine's load average (2 cores) was "
      f"{min(load):.1f}-{max(load):.1f} during the explorations")
print(records.groupby(["arm", "status"]).size().unstack(fill_value=0).to_string())"""),
    ("md", "## Every point timed again, interleaved"),
    ("code", r"""from liftpy.host.kernel import CompiledPipeline
from liftpy.host.timing import device_timing
from liftpy.search import find_variant

ok = records[records.status == "ok"].copy()
rule = device_timing(device.info.type, 5)  # the exploration's own rule: the fastest of 40 runs on a CPU
inputs = op.inputs(0)
t0 = time.time()
pipelines = []
for _, r in ok.iterrows():
    v = find_variant(ARMS[r.arm], r.variant)
    config = {k[len("config."):]: int(x) for k, x in r.items() if k.startswith("config.") and x == x}
    pipelines.append(CompiledPipeline(v.program, {**SIZES, **config}, device, v.placement_map))
shuffle = np.random.default_rng(0)
rounds = np.full((ROUNDS, len(pipelines)), np.nan)
for k in range(ROUNDS):
    for i in shuffle.permutation(len(pipelines)):
        rounds[k, i] = pipelines[i].run(*inputs, repeat=rule.runs, warmup=1, statistic=rule.statistic).time_ms
ok["explored_ms"] = ok.time_ms
ok["time_ms"] = np.minimum(rounds.min(axis=0), ok.explored_ms)  # the fastest of all its timings
spread = rounds.max(axis=0) / rounds.min(axis=0)
change = (ok.explored_ms / rounds.min(axis=0)).to_numpy()
print(f"{len(ok)} points re-timed in {ROUNDS} rounds, {time.time() - t0:.0f} s.  A point's slowest round / its fastest: "
      f"median {np.median(spread):.2f}, up to {spread.max():.2f}; its explored time / its fastest round: median "
      f"{np.median(change):.2f}, from {change.min():.2f} to {change.max():.2f}")"""),
    ("md", "## The distributions"),
    ("code", r"""rng = np.random.default_rng(0)
BOOT = 4000


def median_ci(x):
    # The median and a bootstrap 95% interval of it.
    x = np.asarray(x)
    meds = np.median(rng.choice(x, (BOOT, len(x))), axis=1)
    return np.median(x), *np.percentile(meds, [2.5, 97.5])


def ratio_ci(x, base):
    # median(x) / median(base) and a bootstrap 95% interval of it, each sample resampled on its own.
    x, base = np.asarray(x), np.asarray(base)
    r = np.median(rng.choice(x, (BOOT, len(x))), axis=1) / np.median(rng.choice(base, (BOOT, len(base))), axis=1)
    return np.median(x) / np.median(base), *np.percentile(r, [2.5, 97.5])


times = {arm: ok[ok.arm == arm].time_ms.to_numpy() for arm in ARMS}
best = ok.groupby(["arm", "seed"]).time_ms.min().unstack()  # the best point of each exploration
rows, effects = [], {}
for arm in ARMS:
    med, lo, hi = median_ci(times[arm])
    q1, q3 = np.percentile(times[arm], [25, 75])
    effects[arm] = ratio_ci(times[arm], times["untiled"])
    rows.append({"arm": arm, "points": len(times[arm]), "median ms": med, "95% CI": f"{lo:.3g}-{hi:.3g}",
                 "IQR": f"{q1:.3g}-{q3:.3g}", "GB/s at median": op.min_bytes() / med / 1e6,
                 "best per exploration, median": best.loc[arm].median(),
                 "range": f"{best.loc[arm].min():.3g}-{best.loc[arm].max():.3g}",
                 "x untiled": effects[arm][0], "95% CI ": f"{effects[arm][1]:.3f}-{effects[arm][2]:.3f}"})
summary = pd.DataFrame(rows).set_index("arm")
print("times in ms, re-timed; GB/s = the least traffic (grid read once, result written once) / time")
print(summary.to_string(float_format=lambda v: f"{v:.3g}"))"""),
    ("code", r"""import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
jitter = np.random.default_rng(1)
for i, arm in enumerate(ARMS):
    t = times[arm]
    left.scatter(i + jitter.uniform(-0.15, 0.15, len(t)), t, s=12, alpha=0.5)
    med, lo, hi = median_ci(t)
    left.errorbar(i + 0.3, med, yerr=[[med - lo], [hi - med]], fmt="o", color="k", capsize=4)
    b = best.loc[arm].dropna().to_numpy()
    right.scatter(np.full(len(b), i), b, s=20)
    right.errorbar(i + 0.2, np.median(b), yerr=[[np.median(b) - b.min()], [b.max() - np.median(b)]], fmt="s",
                   color="k", capsize=4)
for ax, title in ((left, "every point; median and bootstrap 95% CI"),
                  (right, f"best of {SAMPLES} points per seed; median and range")):
    ax.set_xticks(range(len(ARMS)), list(ARMS))
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(plt.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(plt.ScalarFormatter())
    ax.yaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_title(title, fontsize=10)
left.set_ylabel("time (ms), re-timed")
fig.suptitle(f"{OPERATOR} {SIZES['H']}x{SIZES['W']} on {device.info.name}: {len(SEEDS)} seeds x {SAMPLES} points per arm")
plt.tight_layout()
plt.show()"""),
    ("md", "## The answer"),
    ("code", r"""def effect(arm):
    r, lo, hi = effects[arm]
    if hi < 1:
        return f"is {1 / r:.2f}x faster (95% CI {1 / hi:.2f}-{1 / lo:.2f}x)"
    if lo > 1:
        return f"is {r:.2f}x slower (95% CI {lo:.2f}-{hi:.2f}x)"
    return f"takes {r:.2f}x the untiled time (95% CI {lo:.3f}-{hi:.3f}, which includes 1): no measurable difference"


lines = [f"On {device.info.name}, {OPERATOR} at {SIZES['H']}x{SIZES['W']} ({len(SEEDS)} seeds x {SAMPLES} points per "
         f"arm, re-timed), against the untiled variants (median point {summary.loc['untiled', 'median ms']:.3g} ms):"]
for arm, rule in (("tiled", "overlapped tiling (tile2D)"), ("tiled + local", "tiling with local-memory staging (localStage)")):
    lines.append(f"  {rule}: the median point {effect(arm)}; the best point of an exploration takes "
                 f"{summary.loc[arm, 'best per exploration, median']:.3g} ms against "
                 f"{summary.loc['untiled', 'best per exploration, median']:.3g} ms untiled (medians over the seeds).")
measurable = [arm for arm in ("tiled", "tiled + local") if effects[arm][1] > 1 or effects[arm][2] < 1]
if measurable:
    arm = max(measurable, key=lambda a: abs(np.log(effects[a][0])))
    lines.append(f"The family that matters most here is {arm}: its median point {effect(arm)}.")
else:
    lines.append("Neither family changes the time measurably at this size.")
fastest = ok.loc[ok.time_ms.idxmin()]
config = " ".join(f"{k[len('config.'):]}={int(x)}" for k, x in fastest.items() if k.startswith("config.") and x == x)
lines.append(f"The fastest point of all: {fastest.variant}{' ' + config if config else ''} ({fastest.arm}), "
             f"{fastest.time_ms:.3g} ms.")
print("\n".join(lines))"""),
]

# ------------------------------------------------------------------------------------------------ roofline

ROOFLINE = [
    ("md", r"""# How close is a matrix-vector product to the roofline?

A matrix-vector product reads the matrix once and does two flops per element: 0.5 flop per byte, far below
any device's ridge point, so its bound is memory bandwidth.  How much of that bandwidth do liftpy's best
kernel and numpy's BLAS reach on this device?  And which bandwidth is the bound: a working set that fits in
the device's cache can be read faster than DRAM delivers, so a "% of the roofline" above 100 says the
wrong roof was used.

**Method.**
1. The device's roofline, measured here by liftpy's probe: the fp32 rate (quick mode) and the read
   bandwidth of an OpenCL kernel against the working-set size (the full sweep).  The last-level cache
   size is what the OpenCL driver reports (`global_mem_cache_size`).
2. Two sizes chosen from that cache: one whose least traffic fits in a quarter of it, one at least eight
   times its size (`BEYOND`), so that not even a cache somewhat larger than the driver says (a CPU's other
   dies) can keep the matrix between runs.  The probe's curve at each working set shows what a plain read
   reaches.
3. At each size, an exploration of `gemv` with a numpy baseline timed on the same inputs
   (`baselines=("numpy_baselines:gemv",)`, defined in `numpy_baselines.py` beside this notebook).
4. The best kernel and the baseline timed again in alternating rounds (each round the fastest of at least
   40 runs, as the exploration times a point): the spread over the rounds is the error bar.
5. GB/s = the least traffic (`op.min_bytes()`: the matrix and the vector read once, the result written
   once) / time, compared with the DRAM and the cache roofs."""),
    ("code", r"""import os

SAMPLES, ROUNDS, QUICK_PROBE, BEYOND = 4, 7, False, 8  # full probe: windows up to 256 MiB (half a minute)
if os.environ.get("LIFTPY_NOTEBOOK_SMALL"):  # tests/test_notebooks.py: the same method, fewer and smaller points
    SAMPLES, ROUNDS, QUICK_PROBE, BEYOND = 3, 3, True, 2
print(f"{SAMPLES} points per size, {ROUNDS} rounds of timing, {'quick' if QUICK_PROBE else 'full'} bandwidth probe, "
      f"the large size at least {BEYOND} x the cache")"""),
    ("md", "## The device: its cache and its roofline"),
    ("code", r"""import time

from liftpy.host.device import get_device
from liftpy.probe import roofline, run_probes
from liftpy.probe.document import profile_document
from liftpy.probe.plan import reported

dev = get_device(None)
cache = reported(dev).global_cache_bytes  # pyopencl: device.global_mem_cache_size
if cache <= 0:
    raise RuntimeError(f"the driver of {dev.info.name} reports no cache size: set cache (bytes) by hand in this cell")
print(f"{dev.info.name}: last-level cache {cache / 2**20:.1f} MiB (global_mem_cache_size, as the driver reports it)")

t0 = time.time()
profile = profile_document(run_probes(dev, quick=True, only=["compute"]))
bandwidth = profile_document(run_probes(dev, quick=QUICK_PROBE, only=["buffer_bandwidth"]))
profile["measured"].update(bandwidth["measured"])
profile["curves"].update(bandwidth["curves"])
roof = roofline(profile)
measured = profile["measured"]
DRAM, CACHE_BW = roof.bandwidth("global"), roof.bandwidth("cache")
for name in ("cache_bandwidth_gbs", "global_bandwidth_gbs"):
    m = measured[name]
    print(f"{name}: {m['value']} GB/s, confidence {m['confidence']} ({m.get('note', '')})")
print(f"probe ({time.time() - t0:.0f} s): {roof.compute_gflops:.1f} GFLOP/s; an OpenCL kernel reads {CACHE_BW:.1f} GB/s "
      f"from the cache, {DRAM:.1f} GB/s from DRAM; ridge at {roof.ridge('global'):.1f} flop/byte")"""),
    ("code", r"""import numpy as np


def least_traffic(n):
    return 4 * (n * n + 2 * n)  # float32: the n x n matrix and the vector read once, the result written once

small = max(2**k for k in range(5, 16) if least_traffic(2**k) <= cache / 4)
large = min(2**k for k in range(5, 16) if least_traffic(2**k) >= BEYOND * cache)
SIDES = {"in cache": small, "beyond cache": large}
curve = profile["curves"]["bandwidth.buffer_float4"]
for label, n in SIDES.items():
    ws = least_traffic(n)
    text = f"{label:12s}: {n} x {n}, least traffic {ws / 2**20:.2f} MiB = {ws / cache:.2f} x the cache; "
    if ws <= 1.05 * max(curve["x"]):  # (the least traffic of a power-of-two side is a little over a power of two)
        read = np.interp(np.log(ws), np.log(curve["x"]), curve["y"])
        text += (f"the probe's kernel reads a window of that size at {read:.3g} GB/s ({read / CACHE_BW:.2f} x its cache "
                 f"figure, {read / DRAM:.2f} x its DRAM figure)")
    else:
        text += f"beyond the probe's largest window ({max(curve['x']) / 2**20:.0f} MiB)"
    print(text)"""),
    ("md", "## The explorations, with the numpy baseline"),
    ("code", r"""from pathlib import Path

from liftpy.explore import explore_operator
from liftpy.explore.operator import library_operator
from liftpy.search import UniformSearch

for old in Path(".").glob("gemv-roofline-*.sqlite*"):
    old.unlink()  # measured afresh each time the notebook runs
ops, explorations = {}, {}
for label, n in SIDES.items():
    ops[label] = op = library_operator("gemv", {"M": n, "N": n})
    t0 = time.time()
    explorations[label] = ex = explore_operator(op, samples=SAMPLES, db=f"gemv-roofline-{n}.sqlite", search=UniformSearch,
                                                progress=False, references=False, baselines=("numpy_baselines:gemv",))
    print(f"{label}, {n} x {n}: {ex.ran} points ({ex.failed} failed) in {time.time() - t0:.0f} s")
    print(ex.table(), "\n")"""),
    ("md", r"""## Error bars: the best kernel and the baseline, timed again in rounds

On a shared CPU every time is disturbed by whatever else runs.  Each round times liftpy's best kernel and
then numpy, each by the exploration's rule (the fastest of at least 40 runs, `liftpy.host.timing`).  The
fastest round is the estimate of what the code reaches undisturbed (the rule's own reasoning, one level up);
the median and the range over the rounds show how much the machine disturbed it."""),
    ("code", r"""import pandas as pd

from liftpy.explore.baseline import load_callable, measure_callable
from liftpy.host.kernel import CompiledPipeline
from liftpy.host.timing import device_timing
from liftpy.results.cache import cached_variants
from liftpy.search import find_variant

rule = device_timing(dev.info.type, 5)  # as the exploration timed its points
numpy_gemv = load_callable("numpy_baselines:gemv")
rows = []
for label, op in ops.items():
    best = explorations[label].best
    v = find_variant(cached_variants(op), best.variant)
    pipeline = CompiledPipeline(v.program, {**op.sizes(), **best.config}, dev, v.placement_map)
    inputs = op.inputs(0)
    for r in range(ROUNDS):  # alternating, so that a change in the machine's load falls on both
        liftpy_ms = pipeline.run(*inputs, repeat=rule.runs, warmup=1, statistic=rule.statistic).time_ms
        numpy_ms = measure_callable("numpy", numpy_gemv, inputs, lambda out: op.check(out, inputs)).time_ms
        rows += [{"size": label, "who": "liftpy", "round": r, "ms": liftpy_ms},
                 {"size": label, "who": "numpy", "round": r, "ms": numpy_ms}]
rounds = pd.DataFrame(rows)
rounds["GB/s"] = [ops[s].min_bytes() / ms / 1e6 for s, ms in zip(rounds["size"], rounds["ms"])]
table = rounds.groupby(["size", "who"], sort=False)["GB/s"].agg(best="max", median="median", worst="min")
table["best, % of DRAM roof"] = 100 * table["best"] / DRAM
table["best, % of cache roof"] = 100 * table["best"] / CACHE_BW
for label in ops:
    ex = explorations[label]
    ref = next(r for r in ex.references if r.variant.endswith("numpy_baselines:gemv"))
    print(f"{label}: liftpy's best point is {ex.best.variant} {ex.best.config}; numpy took {ref.time_ms:.3g} ms in the "
          f"exploration, {rounds[(rounds['size'] == label) & (rounds.who == 'numpy')].ms.min():.3g} ms in its best round")
print(f"\nGB/s over {ROUNDS} rounds (the least traffic / time) against the probe's roofs:")
print(table.to_string(float_format=lambda v: f"{v:.3g}"))"""),
    ("code", r"""import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
left.loglog(curve["x"], curve["y"], "-", color="0.6", label="probe: OpenCL float4 reads of a window")
left.axvline(cache, color="0.3", ls=":", label=f"reported cache {cache / 2**20:.0f} MiB")
left.axhline(DRAM, color="tab:red", ls="--", label=f"DRAM roof {DRAM:.3g} GB/s")
left.axhline(CACHE_BW, color="tab:green", ls="--", label=f"cache roof {CACHE_BW:.3g} GB/s")
x = np.logspace(-2, 2, 100)
right.loglog(x, np.minimum(roof.compute_gflops, DRAM * x), color="tab:red", label="DRAM roofline")
right.loglog(x, np.minimum(roof.compute_gflops, CACHE_BW * x), color="tab:green", label="cache roofline")
for (label, who), g in table.iterrows():
    op = ops[label]
    intensity = op.flops() / op.min_bytes()
    err = np.array([[g["best"] - g["worst"]], [0.0]])  # down to the worst round
    style = dict(fmt="s" if label == "in cache" else "^", color="tab:blue" if who == "liftpy" else "tab:orange",
                 capsize=3, label=f"{who}, {label}")
    left.errorbar(op.min_bytes(), g["best"], yerr=err, **style)
    right.errorbar(intensity, g["best"] * intensity, yerr=err * intensity, **style)
left.set_xlabel("working set (bytes)"); left.set_ylabel("GB/s (best round; bar: down to the worst)")
right.set_xlabel("arithmetic intensity (flop per byte of least traffic)"); right.set_ylabel("GFLOP/s")
left.legend(fontsize=7); right.legend(fontsize=7)
fig.suptitle(f"gemv on {dev.info.name}")
plt.tight_layout()
plt.show()"""),
    ("md", "## The answer"),
    ("code", r"""def spread(g):
    return f"{g['best']:.3g} GB/s (median {g['median']:.3g}, worst {g['worst']:.3g} over {ROUNDS} rounds)"


lines = []
for label, op in ops.items():
    ws, lift, base = op.min_bytes(), table.loc[(label, "liftpy")], table.loc[(label, "numpy")]
    text = (f"{label} ({op.sizes()['M']} x {op.sizes()['N']}): liftpy's best kernel reaches {spread(lift)}, numpy "
            f"{spread(base)}; liftpy at {lift['best'] / base['best']:.2f}x numpy's rate.")
    if ws <= cache:
        text += (f" The working set, {ws / 2**20:.2f} MiB, fits in the {cache / 2**20:.0f} MiB cache: the matrix can stay "
                 f"cached between the timed runs, so DRAM need not be the bound. Against the DRAM roof liftpy reaches "
                 f"{100 * lift['best'] / DRAM:.0f}%")
        text += (" (over 100% only because the data is cached)" if lift["best"] > DRAM else "")
        text += f"; against the cache roof, the one that applies, {100 * lift['best'] / CACHE_BW:.0f}%."
        roof_name, roof_value, confidence = "cache", CACHE_BW, measured["cache_bandwidth_gbs"]["confidence"]
    else:
        text += (f" The working set, {ws / 2**20:.0f} MiB, is {ws / cache:.1f}x the cache: too large for the cache "
                 f"to keep the matrix between runs, so the DRAM roof applies: liftpy reaches {100 * lift['best'] / DRAM:.0f}% of it, "
                 f"numpy {100 * base['best'] / DRAM:.0f}%.")
        roof_name, roof_value, confidence = "DRAM", DRAM, measured["global_bandwidth_gbs"]["confidence"]
    over = [who for who, g in (("liftpy", lift), ("numpy", base)) if g["best"] > roof_value]
    if over:
        text += (f" {' and '.join(over)} exceed{'s' if len(over) == 1 else ''} the probe's {roof_name} figure "
                 f"({roof_value:.3g} GB/s, confidence {confidence}): that figure is what the probe's OpenCL read "
                 f"kernel reaches, not the hardware's limit, which is at least {max(lift['best'], base['best']):.3g} GB/s "
                 f"(the faster of the two).")
    lines.append(text)
print("\n\n".join(lines))"""),
]

# ------------------------------------------------------------------------------------------------ network

NETWORK = [
    ("md", r"""# What memory does a network need?

A network's intermediate tensors need not each have their own buffer: a tensor is dead once the last layer
that reads it has run, and its bytes can hold a later tensor.  liftpy plans them into one *arena*
(`liftpy.network.memory`, TFLite GPU's greedy-by-size: largest tensor first, each at the lowest offset free
for its whole lifetime).  How much memory does a network then need, against one buffer per tensor and
against the lower bound (the most bytes alive at one step, which no plan can beat)?  And is the plan right?

**Method.**  The plan needs only the tensors' shapes and lifetimes, so the full-size networks are planned
without running them.  The reduced ResNet-18 (`get_model("resnet18", reduced=True)`: 32 x 32 images, an
eighth of the channels) is shown tensor by tensor, and its plan is checked by executing the network in the
arena: one float32 buffer of the arena's size, every tensor a view at its planned offset, every layer the
library's numpy reference.  A correct plan never overwrites a tensor another layer still has to read, so the
output equals the one computed with a buffer per tensor; a control plan that ignores lifetimes must not.
(Running the network's generated kernels on the device, `liftpy network resnet18 --reduced`, first explores
every distinct layer problem: minutes on PoCL, so this notebook plans and checks with numpy.)"""),
    ("md", "## The plan of the reduced ResNet-18, tensor by tensor"),
    ("code", r"""import math

import numpy as np
import pandas as pd

from liftpy.network.memory import check, greedy_by_size, lower_bound, naive
from liftpy.network.models import get_model
from liftpy.network.run import memory_tensors

net = get_model("resnet18", reduced=True)
tensors = memory_tensors(net)
plan = greedy_by_size(tensors)
check(tensors, plan)  # raises if two tensors alive at once share a byte
nodes = {n.name: n for n in net.nodes}
table = pd.DataFrame([{
    "tensor": t.name,
    "written by": nodes[t.name].op.split(":")[0] if t.name in nodes else "(the image)",
    "shape": "x".join(map(str, nodes[t.name].shape if t.name in nodes else net.input_shape)),
    "bytes": t.bytes, "offset": plan.offset(t.name), "end": plan.offset(t.name) + t.bytes,
    "live from step": t.first, "to step": t.last} for t in tensors])
print(f"{net.name} (reduced): {len(net.nodes)} layers, {len(tensors)} tensors; step -1 writes the input image, "
      f"step {len(net.nodes)} stands for the output being read back")
print(table.to_string(index=False))"""),
    ("code", r"""import matplotlib.pyplot as plt

steps = range(-1, len(net.nodes) + 1)
alive = [sum(t.bytes for t in tensors if t.first <= s <= t.last) for s in steps]
fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
top.step(steps, [a / 1e3 for a in alive], where="mid", label="bytes alive at the step")
for value, name, style in ((plan.arena_bytes, "arena", "--"), (lower_bound(tensors), "lower bound", ":"),
                           (naive(tensors), "one buffer each", "-.")):
    top.axhline(value / 1e3, ls=style, color="0.3" if name != "arena" else "tab:red", label=f"{name} {value / 1e3:.1f} kB")
top.set_ylabel("kB")
top.legend(fontsize=8)
for t in tensors:
    bottom.broken_barh([(t.first - 0.4, t.last - t.first + 0.8)], (plan.offset(t.name) / 1e3, t.bytes / 1e3), alpha=0.6,
                       edgecolor="k", linewidth=0.5)
bottom.set_xlabel("step (layer)")
bottom.set_ylabel("offset in the arena (kB)")
top.set_title(f"{net.name}, reduced: tensors alive per step (top), their place in the arena (bottom)")
plt.tight_layout()
plt.show()"""),
    ("md", "## Checking the plan: the network executed inside the arena"),
    ("code", r"""from liftpy.explore.operator import input_shapes, library_operator, random_inputs

ops = {n.name: library_operator(n.op, n.size_map) for n in net.nodes}


def weights(k, node):
    # The layer's weights: deterministic random numbers, He-scaled so that activations stay in range.
    op = ops[node.name]
    arrays = random_inputs(op.prog, op.sizes(), seed=k)[len(node.inputs):]
    return [(a * (math.sqrt(2.0 / math.prod(a.shape[1:])) if a.ndim > 1 else 0.01)).astype(np.float32) for a in arrays]


WEIGHTS = {n.name: weights(k, n) for k, n in enumerate(net.nodes)}
image = np.random.default_rng(0).standard_normal(net.input_shape).astype(np.float32)


def execute(offsets, arena_bytes):
    # The network with every tensor at its offset in one float32 arena (offsets None: a buffer per tensor).
    arena = np.full(arena_bytes // 4, np.nan, np.float32) if offsets else None
    own = {}

    def view(name, shape):
        if offsets is None:
            return own.setdefault(name, np.empty(shape, np.float32))
        start = offsets[name] // 4
        return arena[start:start + math.prod(shape)].reshape(shape)

    view("input", net.input_shape)[...] = image
    for node in net.nodes:
        op = ops[node.name]
        shapes = input_shapes(op.prog, op.sizes())[:len(node.inputs)]
        shape_of = lambda x: net.input_shape if x == "input" else nodes[x].shape
        acts = [view(x, shape_of(x)).reshape(s) for x, s in zip(node.inputs, shapes)]
        out = np.asarray(op.expected([*acts, *WEIGHTS[node.name]]), np.float32)
        view(node.name, node.shape)[...] = out.reshape(node.shape)
    return view(net.output.name, net.output.shape).copy()


reference = execute(None, 0)
in_arena = execute(dict(plan.offsets), plan.arena_bytes)
largest = max(t.bytes for t in tensors)
careless = execute({t.name: 0 for t in tensors}, largest)  # the control: every tensor at offset 0
print(f"arena plan ({plan.arena_bytes} bytes): output identical to a buffer per tensor: {np.array_equal(in_arena, reference)}")
print(f"control, every tensor at offset 0 ({largest} bytes): identical: {np.array_equal(careless, reference)}, "
      f"largest difference {np.nanmax(np.abs(careless - reference)):.3g} (output values up to {np.abs(reference).max():.3g})")"""),
    ("md", "## Every network, reduced and full size"),
    ("code", r"""def weight_bytes(network):
    total = 0
    for node in network.nodes:
        op = library_operator(node.op, node.size_map)
        total += sum(4 * math.prod(s) for s in input_shapes(op.prog, op.sizes())[len(node.inputs):])
    return total


rows = []
for name in ("vgg16", "resnet18", "mobilenet_v2"):
    for reduced in (True, False):
        network = get_model(name, reduced=reduced)
        ts = memory_tensors(network)
        p = greedy_by_size(ts)
        check(ts, p)
        w = weight_bytes(network)
        rows.append({"network": name, "size": "reduced" if reduced else "full", "layers": len(network.nodes),
                     "one buffer each MB": naive(ts) / 1e6, "arena MB": p.arena_bytes / 1e6,
                     "lower bound MB": lower_bound(ts) / 1e6, "arena / lower bound": p.arena_bytes / lower_bound(ts),
                     "saved": 1 - p.arena_bytes / naive(ts), "weights MB": w / 1e6,
                     "arena + weights MB": (p.arena_bytes + w) / 1e6})
networks = pd.DataFrame(rows)
print(networks.to_string(index=False, float_format=lambda v: f"{v:.3g}"))"""),
    ("md", "## The answer"),
    ("code", r"""full = networks[networks["size"] == "full"].set_index("network")
red = networks[networks["size"] == "reduced"].set_index("network")
lines = [f"The arena plan is {'right' if np.array_equal(in_arena, reference) else 'WRONG'} on the reduced ResNet-18: executed "
         f"inside its {plan.arena_bytes / 1e3:.1f} kB arena the network gives exactly the output of a buffer per tensor "
         f"({naive(tensors) / 1e3:.1f} kB), while reusing bytes without lifetimes "
         f"{'changes' if not np.array_equal(careless, reference) else 'does not change'} it."]
for name, r in full.iterrows():
    ratio = r["arena / lower bound"]
    lines.append(f"{name} at full size needs {r['arena MB']:.2f} MB for its intermediate tensors in the arena "
                 f"({100 * r['saved']:.0f}% less than {r['one buffer each MB']:.2f} MB one buffer each; "
                 f"{'at' if ratio <= 1 + 1e-9 else f'{ratio:.2f}x'} the lower bound), plus {r['weights MB']:.1f} MB "
                 f"of weights: {r['arena + weights MB']:.1f} MB before the workspaces of the chosen kernels.")
at_bound = int((networks["arena / lower bound"] <= 1 + 1e-9).sum())
lines.append(f"The greedy plan meets the lower bound in {at_bound} of the {len(networks)} plans above; the weights, "
             f"not the activations, dominate at full size in {int((full['weights MB'] > full['arena MB']).sum())} of "
             f"{len(full)} networks.")
print("\n".join(lines))"""),
]


NOTEBOOKS = {
    "which_rules_matter_for_a_stencil": STENCIL,
    "how_close_to_the_roofline": ROOFLINE,
    "what_memory_a_network_needs": NETWORK,
}


def build(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src) for kind, src in cells]
    return nb


def run(path: Path, timeout: int = 900) -> nbformat.NotebookNode:
    """Execute a notebook in its own folder (raises on the first failing cell) and return it with outputs."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def main() -> int:
    only = set(sys.argv[1:])
    unknown = only - set(NOTEBOOKS)
    if unknown:
        print(f"unknown notebook(s) {', '.join(sorted(unknown))}; choose from {', '.join(NOTEBOOKS)}", file=sys.stderr)
        return 2
    for name, cells in NOTEBOOKS.items():
        if only and name not in only:
            continue
        path = HERE / f"{name}.ipynb"
        nbformat.write(build(cells), path)
        t0 = time.time()
        nbformat.write(run(path), path)
        print(f"wrote {path} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
