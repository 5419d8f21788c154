"""Writes the example notebooks from the cells below and runs them (nbclient), so that what is committed
carries its outputs: ``python examples/notebooks/make_notebooks.py``.  ``tests/test_notebooks.py`` runs the
committed notebooks again, at their small sizes on PoCL; a failing cell fails the test."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

EXPLORE = [
    ("md", """# Write an operator and explore it

A 5-point Jacobi stencil whose border mirrors the grid, written once in liftpy's Python DSL.  liftpy derives
its implementations by rewriting, explores their tuning spaces on an OpenCL device (here the first one:
PoCL on the CPU unless a GPU is present), validates every run against the reference interpreter, and keeps
time and memory of each point in a results store.  Sizes are small so that the notebook runs in a minute."""),
    ("code", """import numpy as np
from liftpy import Array, Float, make_program, map2D, slide2D, pad2D, at, sizes, evaluate

H, W = sizes("H W")

def cell(nb):  # nb: the 3x3 window around a cell
    return 0.2 * (at(1, at(1, nb)) + at(1, at(0, nb)) + at(1, at(2, nb)) + at(0, at(1, nb)) + at(2, at(1, nb)))

jacobi = make_program("jacobi_mirror", [("grid", Array(Float, H, W))],
                      lambda g: map2D(cell, slide2D(3, 1, pad2D(1, 1, 1, 1, "mirror", g))))
print(jacobi)"""),
    ("md", "The interpreter is the reference; here it agrees with numpy's own mirror padding:"),
    ("code", """g = np.random.default_rng(0).random((6, 8), dtype=np.float32)
p = np.pad(g, 1, mode="symmetric")
want = 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
print("max difference:", float(np.abs(evaluate(jacobi, g) - want).max()))"""),
    ("md", "The implementations the rewrite rules derive, and their tuning parameters:"),
    ("code", """from liftpy.rewrite.explore import explore
from liftpy.tuning.engine import variant_id

variants = explore(jacobi)
print(len(variants), "variants; for example:")
for v in variants[:4]:
    print(" ", variant_id(v), "parameters:", [str(s) for s in v.params])"""),
    ("md", """Explore: sample points (variant and configuration), run each in an isolated worker, validate, store.
Re-running the cell resumes from the store instead of measuring again."""),
    ("code", """from liftpy.tuning.engine import explore_program

sizes_ = {"H": 64, "W": 64}
ex = explore_program(jacobi, sizes_, samples=6, db="notebook-results.sqlite", search="uniform", progress=False)
print(f"{ex.ran} points run, {ex.resumed} resumed, {ex.failed} failed")
print(ex.table())"""),
    ("md", "The time/memory frontier as a plot (every measured point, the frontier joined):"),
    ("code", """from IPython.display import Image
from liftpy.tuning.engine import plot

Image(filename=str(plot("notebook-results.sqlite", ex.operator, "notebook-frontier.png")))"""),
    ("md", "The chosen kernel: the fastest correct point, its rules, configuration and OpenCL source."),
    ("code", """from liftpy.tuning.evaluate import kernel_source

best = ex.best
print(best.variant, best.config, f"{best.time_ms:.4g} ms")
print("rules:", *best.metrics["rules"], sep="\\n  ")
source = kernel_source(best.metrics["program"], {**sizes_, **best.config}, best.metrics["placements"])
print("\\n".join(source.splitlines()[:40]))"""),
]

ROOFLINE = [
    ("md", """# Probe a device and see its roofline

liftpy measures the limits its code generation needs with its own micro-benchmarks (ArchProbe-style).
Here: the fp32 rate and the global-memory bandwidth (quick sweeps), the roofline they make, and where the
best kernel of a small matrix-vector exploration sits under it."""),
    ("code", """from liftpy.host.device import get_device, list_devices
from liftpy.probe import run_probes, roofline, attained
from liftpy.probe.document import profile_document

for d in list_devices():
    print(d)
dev = get_device(None)
run = run_probes(dev, quick=True, only=["compute", "buffer_bandwidth"])
profile = profile_document(run)
roof = roofline(profile)
print(f"{roof.device}: {roof.compute_gflops:.1f} GFLOP/s, {roof.bandwidth('global'):.1f} GB/s global, "
      f"ridge at {roof.ridge('global'):.1f} flop/byte")"""),
    ("code", """from liftpy.tuning.engine import explore_operator
from liftpy.tuning.operator import library_operator

sizes_ = {"M": 256, "N": 256}
op = library_operator("gemv", sizes_)
ex = explore_operator(op, samples=4, db="notebook-roofline.sqlite", search="uniform", progress=False, references=False)
best = ex.best
moved = 4 * (sizes_["M"] * sizes_["N"] + sizes_["N"] + sizes_["M"])  # bytes the product must read and write
print(f"best gemv: {best.time_ms:.4g} ms")
for level, _ in roof.bandwidths_gbs:  # a problem that fits in a cache can beat the global-memory bound
    a = attained(profile, op.flops(), moved, best.time_ms / 1e3, memory=level)
    print(f"  {a.gflops:.2f} GFLOP/s at {a.intensity:.2f} flop/byte: {100 * a.fraction:.0f}% of the {level}-memory roofline")"""),
    ("code", """import numpy as np
import matplotlib.pyplot as plt

x = np.logspace(-2, 3, 200)
fig, ax = plt.subplots(figsize=(6, 4))
for level, bw in roof.bandwidths_gbs:
    ax.loglog(x, np.minimum(roof.compute_gflops, bw * x), label=f"{level} memory, {bw:.0f} GB/s")
ax.scatter([a.intensity], [a.gflops], color="k", zorder=3, label="best gemv")
ax.set_xlabel("arithmetic intensity (flop/byte)")
ax.set_ylabel("GFLOP/s")
ax.set_title(roof.device[:60])
ax.legend()
plt.show()"""),
]


NETWORK = [
    ("md", """# A network's memory plan

liftpy runs whole networks from its operator library.  Their intermediate tensors share one arena: each
tensor lives from the layer that writes it to the last layer that reads it, and tensors are placed largest
first at the lowest offset free during their lifetime (TFLite GPU's greedy-by-size).  Planning needs only the
shapes, so the full-size networks are planned here without running them."""),
    ("code", """from liftpy.network.models import get_model
from liftpy.network.memory import greedy_by_size, naive, lower_bound, check
from liftpy.network.run import memory_tensors

for name in ("vgg16", "resnet18", "mobilenet_v2"):
    net = get_model(name)
    tensors = memory_tensors(net)
    plan = greedy_by_size(tensors)
    check(tensors, plan)  # no two tensors alive at once share a byte
    print(f"{name:13s} {len(net.nodes):3d} layers: arena {plan.arena_bytes / 1e6:7.2f} MB, one buffer each "
          f"{naive(tensors) / 1e6:7.2f} MB ({naive(tensors) / plan.arena_bytes:.1f}x), most alive at once "
          f"{lower_bound(tensors) / 1e6:6.2f} MB")"""),
    ("md", "Where each tensor of ResNet-18 sits in the arena over time (offsets reused once a tensor is dead):"),
    ("code", """import matplotlib.pyplot as plt

net = get_model("resnet18")
tensors = memory_tensors(net)
plan = greedy_by_size(tensors)
fig, ax = plt.subplots(figsize=(8, 4))
for t in tensors:
    ax.broken_barh([(t.first, t.last - t.first + 1)], (plan.offset(t.name) / 1e6, t.bytes / 1e6), alpha=0.6)
ax.set_xlabel("layer")
ax.set_ylabel("offset in the arena (MB)")
ax.set_title(f"ResNet-18: {plan.arena_bytes / 1e6:.1f} MB arena")
plt.show()"""),
    ("md", """Running a network: every layer with the best stored implementation of its problem (explored first if
the store lacks it), chained on the device and validated against numpy.  A small network here; `liftpy
network resnet18 --reduced` runs the reduced ResNet-18 the same way."""),
    ("code", """from liftpy.network.graph import Builder
from liftpy.network.run import run_network, format_run

b = Builder("small", 8, 8, 3)
x = b.conv("input", 4)
y = b.conv(x, 4, relu=0)
x = b.add(y, x, relu=1)          # a residual connection
x = b.maxpool(x, k=3, stride=2, pad=1)
x = b.global_avgpool(x)
b.fc(x, 5, relu=0)
run = run_network(b.build(), db="notebook-network.sqlite", samples=2, search="uniform", progress=False)
print(format_run(run))"""),
]


def build(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src) for kind, src in cells]
    return nb


def run(path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Execute a notebook in its own folder (raises on the first failing cell) and return it with outputs."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def main() -> int:
    only = set(sys.argv[1:])
    for name, cells in (("explore_an_operator", EXPLORE), ("device_roofline", ROOFLINE), ("network_memory_plan", NETWORK)):
        if only and name not in only:
            continue
        path = HERE / f"{name}.ipynb"
        nbformat.write(build(cells), path)
        nbformat.write(run(path), path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
