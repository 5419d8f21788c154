"""Drawing a profile's raw curves with matplotlib (Agg, no display needed): one panel per curve group,
log axes where the probe asked for them, and a dashed line at each number read off a curve."""

from __future__ import annotations

import math
from pathlib import Path

from .document import read
from .errors import ProbeError


def plot_profile(path: str | Path, png: str | Path | None = None) -> Path:
    # matplotlib (a second to import) only for a plot, never for a probe run
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # (after the backend is chosen)

    doc = read(path)
    groups: dict[str, list[tuple[str, dict]]] = {}
    for name, c in doc["curves"].items():
        groups.setdefault(c.get("group") or name, []).append((name, c))
    if not groups:
        raise ProbeError(f"profile {path} holds no curves to draw")
    cols = 3
    rows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    for ax, (group, curves) in zip(axes.flat, groups.items()):
        for name, c in curves:
            ax.plot(c["x"], c["y"], marker=".", markersize=4, linewidth=1, label=name.split(".", 1)[-1])
            for mark in c.get("marks", []):
                ax.axvline(mark["x"], linestyle="--", linewidth=0.8, color="grey")
                ax.annotate(mark["label"], (mark["x"], 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                            rotation=90, va="top", ha="right")
        first = curves[0][1]
        if first.get("log_x"):
            ax.set_xscale("log", base=2)
        if first.get("log_y"):
            ax.set_yscale("log")
        ax.set_title(group, fontsize=9)
        ax.set_xlabel(first["x_label"], fontsize=8)
        ax.set_ylabel(first["y_label"], fontsize=8)
        ax.tick_params(labelsize=7)
        if len(curves) > 1:
            ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    dev = doc["device"]
    fig.suptitle(f"{dev.get('name')} ({dev.get('platform')}, driver {dev.get('driver')}) - {doc['date']}", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    out = Path(png) if png else Path(path).with_suffix(".png")
    try:
        fig.savefig(out, dpi=110)
    except OSError as e:
        raise ProbeError(f"cannot write {out}: {e.strerror}") from None
    finally:
        plt.close(fig)
    return out
