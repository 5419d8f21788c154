"""The time/memory Pareto frontier of explored points, as a table and as a plot.

Both objectives are minimised.  A point dominates another when it is no slower and needs no more memory,
and is strictly better in at least one; the frontier is every measured point no other point dominates.
Points with exactly the same time and memory do not dominate each other: by default the frontier keeps the
first of them in the order given (``Store.records`` gives rows in the order they were first written), and
``keep_ties=True`` keeps them all.

Reference implementations (variants named ``reference:...``) are drawn and listed beside the frontier,
never on it: they are what the frontier is compared with.  Where references are passed in, they may be
stored records or fresh ``ReferenceResult`` objects (anything with ``time_ms``, ``bytes`` and a ``name`` or
``variant``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..errors import TuningError
from .precision import error_cells, front_with_error, mixed_precision, within_error
from .store import REFERENCE_PREFIX, Record

MB = 1e6  # memory is reported in decimal megabytes, as the paper does


def pareto_front(records: Iterable[Record], keep_ties: bool = False, max_error: float | None = None) -> list[Record]:
    """The non-dominated measured points of ``records`` (one layer on one device), fastest first.

    Records that are not ``ok``, lack a time or a memory figure, or are references are ignored; with
    ``max_error``, so are points whose largest relative error exceeds it.  Points of several precisions (half
    storage beside float) have a third objective, their error (``results.precision.front_with_error``).
    """
    points = [r for r in records if r.measured and not r.is_reference]
    if max_error is not None:
        points = [r for r in points if within_error(r, max_error)]
    if mixed_precision(points):
        return front_with_error(points, keep_ties)
    # A stable sort by (time, memory) puts every point after all points that could dominate it, and keeps
    # the input order among exact ties.
    points.sort(key=lambda r: (r.time_ms, r.bytes))
    front: list[Record] = []
    for r in points:
        if not front or r.bytes < front[-1].bytes:
            front.append(r)
        elif keep_ties and (r.time_ms, r.bytes) == (front[-1].time_ms, front[-1].bytes):
            front.append(r)
    return front


def frontiers(records: Iterable[Record], keep_ties: bool = False) -> dict[tuple[str, str], list[Record]]:
    """The frontier of every (device, layer) group among ``records``."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        groups[(r.device, r.layer)].append(r)
    return {g: pareto_front(rs, keep_ties) for g, rs in sorted(groups.items())}


def references_of(records: Iterable[Record]) -> list[Record]:
    """The measured reference points among ``records``."""
    return [r for r in records if r.is_reference and r.measured]


def _label(ref) -> str:
    # A stored reference record is named by its variant; a fresh ReferenceResult by its name.
    name = getattr(ref, "name", None)
    return name if isinstance(name, str) else ref.variant.split(":", 1)[-1]


def _short_config(config: dict, width: int) -> str:
    text = " ".join(f"{k}={v}" for k, v in sorted(config.items()))
    return text if len(text) <= width else text[: width - 3] + "..."


def format_frontier(
    frontier: Sequence[Record],
    references: Sequence = (),
    flops: int | None = None,
    config_width: int = 60,
    min_bytes: int | None = None,
    roofline_gb_s: float | None = None,
) -> str:
    """A plain-text table of the frontier (fastest first) followed by the references.

    With the problem's ``flops`` a GFLOP/s column is added; with ``min_bytes`` (the inputs read once and the
    output written once) a GB/s column, and with the device's measured memory bandwidth ``roofline_gb_s`` the
    share of it that GB/s is.  Each reference row shows the ratios of the fastest frontier point to it:
    ``speedup`` (reference time / liftpy time) and ``mem`` (reference memory / liftpy memory), above 1 where
    liftpy is better.
    """
    rates = (["GFLOP/s"] if flops else []) + (["GB/s"] if min_bytes else []) + (["of roofline"] if min_bytes and roofline_gb_s else [])
    errors = error_cells(frontier)  # (precision and error columns where the frontier is not all float)
    rates += errors.header
    header = ["#", "time ms", "memory MB"] + rates + ["variant", "configuration"]

    def rate_cells(time_ms: float) -> list[str]:
        cells = [f"{flops / (time_ms * 1e6):.4g}"] if flops else []
        if min_bytes:
            gbs = min_bytes / (time_ms * 1e6)
            cells.append(f"{gbs:.4g}")
            if roofline_gb_s:
                cells.append(f"{gbs / roofline_gb_s:.0%}")
        return cells

    rows = []
    for i, r in enumerate(frontier, 1):
        rows.append([str(i), f"{r.time_ms:.4g}", f"{r.bytes / MB:.4g}", *rate_cells(r.time_ms), *errors.of(r), r.variant,
                     _short_config(r.config, config_width)])
    best = min(frontier, key=lambda r: r.time_ms) if frontier else None
    for ref in references:
        note = ""
        if best is not None:
            note = f"speedup {ref.time_ms / best.time_ms:.3g}x, mem {ref.bytes / best.bytes:.3g}x vs fastest"
        rows.append(["ref", f"{ref.time_ms:.4g}", f"{ref.bytes / MB:.4g}", *rate_cells(ref.time_ms), *errors.blank,
                     f"{REFERENCE_PREFIX}{_label(ref)}", note])
    if not rows:
        return "no measured points"
    return format_table(header, rows, numeric={"#", "time ms", "memory MB", *rates})


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[str] = frozenset()) -> str:
    """Plain-text columns: the ``numeric`` ones right-aligned, a rule under the header."""
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]

    def line(cells) -> str:
        return "  ".join(c.rjust(w) if h in numeric else c.ljust(w) for c, w, h in zip(cells, widths, header)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(row) for row in rows])


def check_plot_path(path: str | Path) -> Path:
    """Refuse a plot path that cannot be written, before an exploration rather than after it: a PNG (a name
    ending otherwise would hold a PNG under another suffix) whose folder exists or can be made and written."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise TuningError(f"the plot {path} is a PNG: give a path ending in .png")
    if path.is_dir():
        raise TuningError(f"the plot {path} is a directory; give a file path ending in .png")
    folder = next((d for d in (path.parent, *path.parent.parents) if d.exists()), Path("."))
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise TuningError(f"cannot write the plot {path}: {folder} is not a writable folder; give another path")
    if path.exists() and not os.access(path, os.W_OK):
        raise TuningError(f"cannot write the plot {path}: the file is not writable; give another path")
    return path


def plot_frontier(
    records: Iterable[Record],
    frontier: Sequence[Record],
    references: Sequence,
    path: str | Path,
    title: str | None = None,
) -> Path:
    """Write a PNG: every measured point, the frontier as a staircase, and each reference as a labelled marker;
    time (ms) across, memory (MB) up."""
    # A bare Figure renders with Agg and leaves pyplot's global backend (a notebook's, say) alone.  Imported
    # here: matplotlib takes a second to import, which every store read and command would pay otherwise.
    from matplotlib.figure import Figure

    points = [r for r in records if r.measured and not r.is_reference]
    if not points and not references:
        raise TuningError("nothing to plot: no measured points or references (run an exploration first)")
    fig = Figure(figsize=(7, 5), dpi=120)
    ax = fig.add_subplot()
    if len(points) > 1 and same_memory(points):
        _time_distribution(ax, points, references, title)
        return _save(fig, path)
    if points:
        ax.scatter([r.time_ms for r in points], [r.bytes / MB for r in points], s=12, c="0.65", label=f"sampled ({len(points)})", zorder=1)
    if frontier:
        ft = [r.time_ms for r in frontier]
        fm = [r.bytes / MB for r in frontier]
        ax.step(ft, fm, where="post", color="tab:blue", lw=1.2, zorder=2)
        ax.scatter(ft, fm, s=28, color="tab:blue", label=f"Pareto frontier ({len(frontier)})", zorder=3)
    markers = "s^Dv<>ph*"
    for i, ref in enumerate(references):
        label = _label(ref)
        ax.scatter([ref.time_ms], [ref.bytes / MB], marker=markers[i % len(markers)], s=60, color=f"C{(i + 1) % 10}", zorder=4, label=label)
        ax.annotate(label, (ref.time_ms, ref.bytes / MB), textcoords="offset points", xytext=(6, 6), fontsize=8)
    times = [r.time_ms for r in points] + [r.time_ms for r in references]
    # Sampled times span orders of magnitude in a broad exploration; a log axis keeps the frontier readable.
    if min(times) > 0 and max(times) / min(times) > 30:
        ax.set_xscale("log")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("memory (MB)")
    ax.set_title(title or "time / memory Pareto frontier")
    ax.grid(True, which="both", lw=0.3, alpha=0.6)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)


def same_memory(points: Sequence[Record]) -> bool:
    """Whether every point needs the same memory: then the frontier is one point, and the times are the story."""
    return len({r.bytes for r in points}) == 1


def memory_note(points: Sequence[Record]) -> str:
    """A line for tables where every point ties on memory, else ''."""
    if len(points) < 2 or not same_memory(points):
        return ""
    return (f"every one of the {len(points)} measured points needs the same memory ({points[0].bytes / MB:.4g} MB), "
            "so the frontier is the fastest; the plot shows the distribution of their times")


def _time_distribution(ax, points: Sequence[Record], references: Sequence, title: str | None) -> None:
    """A histogram of the measured times (log-spaced bins when they span a decade), the fastest and each
    reference marked: what a frontier of one point cannot show."""
    times = np.array([r.time_ms for r in points])
    spread = times.max() / times.min() if times.min() > 0 else 1.0
    bins = np.geomspace(times.min(), times.max(), 30) if spread > 10 else 30
    ax.hist(times, bins=bins, color="0.65", label=f"measured ({len(points)})")
    if spread > 10:
        ax.set_xscale("log")
    ax.axvline(times.min(), color="tab:blue", lw=1.5, label=f"fastest {times.min():.4g} ms")
    for i, ref in enumerate(references):
        ax.axvline(ref.time_ms, color=f"C{(i + 1) % 10}", ls="--", lw=1.5, label=f"{_label(ref)} {ref.time_ms:.4g} ms")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("points")
    ax.set_title((title or "explored times") + f"\n(every point needs {points[0].bytes / MB:.4g} MB)", fontsize=10)
    ax.grid(True, which="both", lw=0.3, alpha=0.6)
    ax.legend(fontsize=8, loc="best")


def _save(fig, path) -> Path:
    path = check_plot_path(path)
    fig.tight_layout()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # as a store's folder is made for it
        fig.savefig(path, format="png")
    except OSError as e:
        where = f" ({e.filename})" if e.filename and str(e.filename) != str(path) else ""
        raise TuningError(f"cannot write the plot {path}: {e.strerror or e}{where}; give another path") from None
    return path
