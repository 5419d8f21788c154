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
    for name, cells in (("explore_an_operator", EXPLORE), ("device_roofline", ROOFLINE)):
        path = HERE / f"{name}.ipynb"
        nbformat.write(build(cells), path)
        nbformat.write(run(path), path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
