"""Reading numbers off measured curves: steps, plateaus, knees and staircases.

Every reader works on the logarithm of the measured quantity, because what matters is a ratio (latency
doubles, bandwidth halves) and because noise on a shared machine is roughly proportional to the value.
Each returns a ``Reading``: the value, a confidence in [0, 1] and the name of the method.  Confidence is
``signal / (6 * noise)`` clipped to [0, 1], times a factor for how well the signal persists, where the
signal is the size of the feature in log units and the noise is the spread of neighbouring points
(``log_noise``), floored at 1 %.  A step that is six times the noise counts as certain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

NOISE_FLOOR = 0.01  # relative timing noise never assumed below 1 %


@dataclass(frozen=True)
class Reading:
    value: float | None
    confidence: float
    method: str
    index: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Level:
    start: int  # first and last index of the plateau in the curve
    end: int
    value: float  # median of the plateau
    spread: float  # relative spread (log units) inside the plateau


def _arrays(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("a curve needs x and y of equal length")
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise ValueError("curve readers need positive finite values")
    return x, y


def median_filter(y, width: int = 3) -> np.ndarray:
    """Median of each point and its neighbours; keeps steps sharp and removes single spikes."""
    y = np.asarray(y, dtype=float)
    if len(y) < width:
        return y.copy()
    h = width // 2
    out = y.copy()
    for i in range(h, len(y) - h):
        out[i] = np.median(y[i - h:i + h + 1])
    return out


def isotonic(y) -> np.ndarray:
    """The closest non-decreasing sequence in least squares (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [sum, count]
    for v in np.asarray(y, dtype=float):
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    return np.concatenate([np.full(int(c), s / c) for s, c in blocks])


def log_noise(ly) -> float:
    """Robust noise of a log-curve: scaled median absolute successive difference (trends cancel)."""
    ly = np.asarray(ly, dtype=float)
    if len(ly) < 3:
        return NOISE_FLOOR
    d = np.diff(ly)
    return max(float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2)), NOISE_FLOOR)


def confidence(signal: float, noise: float, persistence: float = 1.0) -> float:
    return float(np.clip(abs(signal) / (6.0 * max(noise, NOISE_FLOOR)), 0.0, 1.0) * np.clip(persistence, 0.0, 1.0))


def first_step(x, y, factor: float = 1.3, persist: int = 2, window: int = 4, min_before: int = 2,
               to_end: bool = False) -> Reading:
    """The last x before ``y`` rises by ``factor`` over the points just before it and stays up for
    ``persist`` points (ArchProbe reports the previous sweep point too; a jump must persist here so that a
    single slow sample on a busy machine is not taken for a step).  With ``to_end``, the median of every
    later point must stay up too: for effects that only grow along the sweep (spilling), a rise that
    falls back is something else."""
    x, y = _arrays(x, y)
    ly = np.log(y)
    jump = math.log(factor)
    for i in range(min_before, len(y) - persist + 1):
        base = float(np.median(ly[max(0, i - window):i]))
        if np.all(ly[i:i + persist] - base >= jump) and (not to_end or np.median(ly[i:]) - base >= jump):
            height = float(np.median(ly[i:i + persist + 2]) - base)
            noise = log_noise(ly[:i])
            return Reading(float(x[i - 1]), confidence(height, noise), f"step: last point before a x{factor:g} rise", i - 1,
                           f"rises x{math.exp(height):.2f} between {x[i - 1]:g} and {x[i]:g}")
    return Reading(None, 0.0, f"step: last point before a x{factor:g} rise", None, f"no x{factor:g} rise within {x[0]:g}..{x[-1]:g}")


def plateaus(x, y, tol: float = 0.15, min_octaves: float = 0.9, min_ratio: float = 1.0) -> list[Level]:
    """Flat stretches of a rising curve over a geometric x (the levels of a cache hierarchy in a latency
    curve).

    The curve is first replaced by its closest non-decreasing fit (``isotonic``, in log units), because
    latency cannot fall as the footprint grows: a dip or a bump is noise or aliasing, and is averaged
    with its neighbours instead of becoming a level.  Points are then grouped greedily: a point joins the
    current stretch while the stretch's largest value stays within ``tol`` of its smallest.  Stretches
    spanning less than ``min_octaves`` of x (and single points) are the transitions between levels, which
    are gradual where replacement is not strict LRU, and are dropped; neighbouring levels are merged while
    the merged stretch stays within 1.5 * ``tol``, or while their medians differ by less than ``min_ratio``
    (a new level of a hierarchy must be clearly slower)."""
    x, y = _arrays(x, y)
    ly = isotonic(np.log(median_filter(y, 3)))
    lim = math.log1p(tol)
    segs: list[tuple[int, int]] = []
    start = 0
    for j in range(1, len(ly)):
        if ly[j] - ly[start] > lim:  # the fit is non-decreasing: ly[start] is the stretch's smallest
            segs.append((start, j - 1))
            start = j
    segs.append((start, len(ly) - 1))
    kept = [s for s in segs if s[1] > s[0] and math.log2(x[s[1]] / x[s[0]]) >= min_octaves - 1e-9]
    merged: list[tuple[int, int]] = []
    for s in kept:
        def med(seg):
            return float(np.median(ly[seg[0]:seg[1] + 1]))

        if merged and (ly[s[1]] - ly[merged[-1][0]] < 1.5 * lim or med(s) - med(merged[-1]) < math.log(min_ratio)):
            merged[-1] = (merged[-1][0], s[1])
        else:
            merged.append(s)
    levels = []
    for a, b in merged:
        seg = np.log(y[a:b + 1])
        levels.append(Level(a, b, float(np.exp(np.median(seg))), float(np.median(np.abs(seg - np.median(seg))))))
    return levels


def saturation_knee(x, y, min_rise: float = 1.3) -> Reading:
    """The x where a rising curve stops rising: the line size L of a stride sweep, where one access in
    L / stride misses, so y = lo + rise * min(x, L) / L.  That model is fitted by least squares for every
    sampled L (after a 3-point median filter, which removes single slow samples) and the best fit wins;
    confidence combines its lead over the runner-up, the share of the curve it explains (R^2, squared)
    and the size of the rise against the noise."""
    x, y = _arrays(x, y)
    ys = median_filter(y, 3)
    method = "knee: least-squares fit of lo + rise * min(x, L) / L over the sampled L"
    if top_plateau(ys, 3) < float(np.median(ys[:2])) * min_rise:
        return Reading(None, 0.0, method, None, f"y rises only x{top_plateau(ys, 3) / float(np.median(ys[:2])):.2f} over the sweep")
    fits = []
    for k in range(1, len(x)):
        A = np.column_stack([np.ones_like(x), np.minimum(x, x[k]) / x[k]])
        coef, *_ = np.linalg.lstsq(A, ys, rcond=None)
        if coef[1] > 0:
            fits.append((float(np.sum((A @ coef - ys) ** 2)), k, float(coef[0]), float(coef[1])))
    if not fits:
        return Reading(None, 0.0, method, None, "no rising fit")
    fits.sort()
    sse, k, lo, rise = fits[0]
    lead = 1.0 - sse / fits[1][0] if len(fits) > 1 and fits[1][0] > 0 else 0.5
    r2 = 1.0 - sse / float(np.sum((ys - ys.mean()) ** 2))  # how much of the curve the model explains
    conf = float(np.clip(lead, 0.0, 1.0) * np.clip(r2, 0.0, 1.0) ** 2) * \
        confidence(math.log1p(rise / lo), log_noise(np.log(y)), 1.0 if k < len(x) - 1 else 0.5)
    note = "" if k < len(x) - 1 else f"the knee is the last point: the true value may exceed {x[k]:g}"
    return Reading(float(x[k]), conf, method, k, note)


def hinge_knee(x, y) -> Reading:
    """The x where a flat curve turns into growth proportional to x: fits log y = a + max(0, log x - log k)
    for every sampled k and keeps the best (the number of work-items a compute unit runs at once: beyond
    it, each added item adds its full time)."""
    x, y = _arrays(x, y)
    lx, ly = np.log(x), np.log(y)
    sse = []
    for k in range(len(x)):
        h = np.maximum(0.0, lx - lx[k])
        a = float(np.mean(ly - h))
        sse.append(float(np.sum((ly - a - h) ** 2)))
    best = int(np.argmin(sse))
    method = "hinge: flat, then proportional to x (least squares in log-log)"
    flat, prop = sse[-1], sse[0]
    worst_alt = min(flat, prop) if best not in (0, len(x) - 1) else max(flat, prop)
    fit = 1.0 - sse[best] / worst_alt if worst_alt > 0 else 0.0
    rise = float(ly[-1] - ly[best])
    conf = float(np.clip(fit, 0.0, 1.0)) * confidence(rise if best < len(x) - 1 else ly[-1] - ly[0] + 1.0, log_noise(ly))
    note = ""
    if best == len(x) - 1:
        note = f"no growth up to {x[-1]:g}: the knee is at least that"
    elif best == 0:
        note = "grows from the first point"
    return Reading(float(x[best]), conf, method, best, note)


def staircase_period(x, y, candidates=(1, 2, 4, 8, 16, 32, 64, 128)) -> Reading:
    """The period s of a staircase y = a * ceil(x / s) + b (warp width: a partly filled warp costs as much
    as a full one).  Candidates need at least two full periods inside the sweep.  Confidence compares the
    best fit with the runner-up."""
    x, y = _arrays(x, y)
    yn = y / float(np.median(y))
    fits = []
    for s in candidates:
        if x.max() < 2 * s:
            continue
        A = np.column_stack([np.ceil(x / s), np.ones_like(x)])
        coef, *_ = np.linalg.lstsq(A, yn, rcond=None)
        if coef[0] <= 0:
            continue
        fits.append((float(np.sum((A @ coef - yn) ** 2)), s))
    method = "staircase: least-squares period of a*ceil(x/s)+b"
    if not fits:
        return Reading(None, 0.0, method, None, "no candidate period rises within the sweep")
    fits.sort()
    best_sse, best = fits[0]
    if len(fits) == 1:
        return Reading(float(best), 0.3, method, None, "only one candidate fits inside the sweep")
    ratio = best_sse / fits[1][0] if fits[1][0] > 0 else 1.0
    return Reading(float(best), float(np.clip(1.0 - ratio, 0.0, 1.0)), method, None,
                   f"runner-up period {fits[1][1]} fits {1 / max(ratio, 1e-9):.1f}x worse")


def top_plateau(y, count: int = 3) -> float:
    """Median of the ``count`` largest values: a peak that a single fast outlier cannot set."""
    ys = np.sort(np.asarray(y, dtype=float))[::-1]
    return float(np.median(ys[:max(1, min(count, len(ys)))]))


def edge_plateau(x, y, side: str, count: int = 3) -> Reading:
    """Median of the first or last ``count`` points, with confidence from their agreement."""
    x, y = _arrays(x, y)
    seg = y[:count] if side == "first" else y[-count:]
    if len(seg) == 1:
        return Reading(float(seg[0]), 0.5, f"plateau: the {side} point alone (no neighbour to agree with)")
    spread = float(np.max(np.abs(np.log(seg / np.median(seg)))))
    conf = float(np.clip(1.0 - spread / 0.3, 0.0, 1.0)) * min(1.0, len(seg) / count)
    return Reading(float(np.median(seg)), conf, f"plateau: median of the {side} {len(seg)} points")
