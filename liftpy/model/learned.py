"""A learned correction of the analytical model, fitted online to the measurements of one device.

Features of a point (a variant and a configuration) are what the analytical model computes for it (the
logarithms of its flops, memory traffic, work-items, groups, local and private bytes, the predicted time
and which term bounds it, the occupancy) and which rules derived the variant; the target is the logarithm
of the measured time.  A gradient-boosted tree ensemble (scikit-learn's ``HistGradientBoostingRegressor``)
learns what the formula misses: the cost of bank conflicts in one local layout, of a register block that
is too large for the compiler, of uncoalesced reads the counts do not see.  With few measurements it
predicts the analytical value plus the offset every kind shares, so it ranks as the formula it corrects;
from ``MIN_FIT`` measurements the trees correct it.  A linear (ridge) correction over the first few
dozen measurements was tried and dropped: measured on the H100 searches' stores (SGEMM 1024, VGG-16
layers 5 and 12), trained on a guided search's first 10-30 points and ranking the 300-1,000 uniform
points, it extrapolated to configurations at the edge of the features (Kendall tau -0.39 to 0.65, and
a second batch of 17 points at k0 = 1) where the trees, whose predictions stay within the residuals
they saw, ranked at 0.40-0.63.  A random forest (100 trees, leaves of one, half the features per split) was tried too: offline, on
the stores of SGEMM 1024 and VGG-16 layers 12, 10 and 24 with the same training points, it ranked better on
every workload (tau 0.58 against 0.52 on average from 50 points, 0.46 against 0.43 from 8); in live searches
on the H100 it ranked layer 24 better (0.57 against 0.49, 12 runs to within 5% against 11) but SGEMM worse
(0.34 against 0.40, and not within 5% in 50 runs, where the boosted trees needed 43), so it was not adopted.

The trees correct only the kinds of variant (rule combinations) they have seen measured, ``KIND_MIN`` times
or more, and each in proportion to how often: their correction of a kind measured n times is weighed
n / (n + ``SHRINK``) against the offset all kinds share (the median over kinds of each kind's median
residual), which is also what any other kind gets.  A search measures few kinds, near its optimum, and trees
fitted there extrapolate badly to the rest: on the H100 stores, trained on a guided search's 50 points and
ranking the 300-1,000 uniform ones (about five sixths of them of kinds never measured), trees applied to
every kind ranked worse than their own formula on every workload (SGEMM 0.43 against 0.57, VGG-16 layer
12 0.45 against 0.63); applied to the measured kinds at full weight, the others at the formula's word,
still worse (mean Kendall tau 0.66 against 0.69 with the formula of ``liftpy.model.access``); weighed and
with the shared offset, level with the formula (0.684 against 0.686 over five workloads; 0.670 at full
weight).  The shared offset is a median over kinds, not over measurements: when most measurements are of
one kind the formula overrates (SGEMM's unstaged tiles, 2.2x slower than predicted), the median residual
of all measurements is that kind's, and would condemn every kind never measured with it.

What a search ranks by is ``predict_log(..., optimistic=True)``: a kind measured fewer than ``KIND_MIN``
times is taken at the formula's word, without the shared offset, which is optimistic while the formula
overrates what was measured, so the search measures it; a live search on the H100 that gave such kinds
the median residual of all measurements spent 40 of its 50 runs on the one kind it had measured most.

Measurements of other problems of the same variants on the same device (the other layers of a network, other
sizes of a product; ``ModelSearch.learn_elsewhere``) train the same model, as TVM's cost model reuses the
logs of other tasks.  They are what fills the gap above: a guided search measures few kinds, but the searches
of the layers before it measured others, and a kind measured ``KIND_MIN`` times on any problem is corrected
by the trees.  The features of such a point are computed at its own problem's sizes, so what grows with a
problem (flops, reads, traffic, work-items, groups, bytes in and out, the predicted time) is taken relative
to the problem's work (``feature_vector``'s ``work``: the high-level program's user-function applications at
those sizes): a tiling that reads 30 bytes per multiply-add is the same point on a layer of twice the work,
and the trees split on what a kind of variant does per unit of work, not on which problem it was measured
on.  The residual (log measured - log formula) is scale-free already.  Offline, leave one workload out, on the
H100 stores of VGG-16 layers 12, 10, 5 and 24 (each layer's 50 guided points, or for layers 5 and 24, which
have no guided store, a random 50 of their uniform points, plus every point of the other layers; ranking the
layer's uniform points, which no model saw), Kendall tau went from 0.691 / 0.671 / 0.727 / 0.761 without
transfer to 0.758 / 0.789 / 0.796 / 0.836 with the raw features and 0.805 / 0.813 / 0.803 / 0.850 relative
to the work; how many points transfer matters (the 256 most recent: 0.737 / 0.724 / 0.766 / 0.818; 1,024:
0.811 / 0.788 / 0.803 / 0.857; the engine's ``TRANSFER_POINTS`` is 1,024, and ``benchmarks/transfer.py``
gives 0.810 / 0.789 / 0.804 / 0.842 with it, layer 24 holding out half its 84 points).  These choices were
made by the mean over the layers of each held out with the fourth layer's points removed from the training
data altogether (nested leave one out), where the work-relative features with equal weights ranked at the
top of 48 settings (0.8015; 0.8020 with each problem's residuals centred, not worth the step) and 1,024
points as well as all (0.802; 256: 0.770).  Tried and dropped, none better by more than 0.001 on that mean:
weighing the problem's own points three times the transferred ones, centring each problem's residuals on
their median, counting a transferred point as a quarter of a measurement toward its kind
(0.787 / 0.787 / 0.789 / 0.840 held out), and features relative to the point's own flops instead of the
problem's work (0.784 / 0.814 / 0.795 / 0.840).  Measurements of another operator (SGEMM's variants for a
convolution's, the rule flags disjoint) do not carry over: with them SGEMM fell from 0.706 to 0.693 and the
layers ranked worse than with their own operator's alone; the engine only transfers between problems of the
same variants, and SGEMM, with no other size measured in these stores, is unchanged (0.706).  What transfers
is the kinds the other problems measured: layer 12 learning layer 10's points alone ranked at 0.688 from its
guided search's 50 (few kinds, as its own), 0.753 from its 300 uniform ones and 0.800 from both (layer 10
from layer 12's: 0.684, 0.792, 0.798; 0.691 and 0.671 without), so a network searched layer by layer with
guided searches alone gains little until some of its stores hold points spread over the kinds (a uniform
sample, or searches' exploration).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import numpy as np

from .analytical import FEATURES

BOUNDS = ("compute", "local", "cache", "dram", "latency", "image", "groups", "invalid")
MIN_FIT = 8  # measurements before the trees are fitted (the median residual before)
KIND_MIN = 3  # measurements of a kind of variant before the trees correct it (module docstring)
SHRINK = 5  # a kind measured n times takes n / (n + SHRINK) of the trees' correction (module docstring)
# Features that grow with the problem: relative to its work (``feature_vector``; the bytes of local memory and
# of registers per work-item, the occupancy, the bound and the rules do not).
EXTENSIVE = frozenset(FEATURES) - {"local_bytes", "private_bytes"}


def prefetch() -> None:
    """Import scikit-learn's trees in a background thread: a resumed search with enough measurements fits
    them before its first proposal, and the import (a second or more) then overlaps with loading the
    variants, the store and the screens instead of following them."""
    def load():
        try:
            import sklearn.ensemble  # noqa: F401
            import threadpoolctl  # noqa: F401
        except ImportError:
            pass  # fit reports it when it needs them

    threading.Thread(target=load, name="liftpy-prefetch-sklearn", daemon=True).start()


def feature_vector(prediction, rules: frozenset, rule_names: tuple[str, ...], work: float | None = None) -> list[float]:
    """The features of a point (module docstring).  ``work``: the problem's work (user-function applications
    of its high-level program at its sizes); given, the features that grow with a problem are taken relative
    to it (logarithms less log ``work``), so that points of problems of other sizes are comparable."""
    f = prediction.features
    shift = math.log(work) if work else 0.0
    out = [math.log1p(max(float(f.get(k, 0.0)), 0.0)) - (shift if k in EXTENSIVE else 0.0) for k in FEATURES]
    out.append((math.log(max(prediction.seconds, 1e-9)) - shift) if math.isfinite(prediction.seconds) else 10.0)
    out.append(float(prediction.occupancy))
    out.extend(1.0 if prediction.bound == b else 0.0 for b in BOUNDS)
    out.extend(1.0 if r in rules else 0.0 for r in rule_names)
    return out


@dataclass
class LearnedModel:
    rule_names: tuple[str, ...]
    X: list = field(default_factory=list)
    y: list = field(default_factory=list)  # log(measured seconds)
    base: list = field(default_factory=list)  # log(analytical seconds)
    _trees: object = None
    _shared: float = 0.0  # the offset all kinds share: the median over kinds of their median residual
    _kinds: dict = field(default_factory=dict)  # measurements per kind of variant, as of the last fit

    def _kind(self, features: list[float]) -> tuple:
        """The rule flags of a feature vector (``feature_vector`` puts them last)."""
        return tuple(features[len(features) - len(self.rule_names):]) if self.rule_names else ()

    def add(self, features: list[float], analytical_s: float, measured_ms: float) -> None:
        self.X.append(features)
        self.y.append(math.log(measured_ms * 1e-3))
        self.base.append(math.log(max(analytical_s, 1e-9)) if math.isfinite(analytical_s) else 10.0)

    def fit(self) -> None:
        n = len(self.y)
        if n == 0:
            return
        residual = np.asarray(self.y) - np.asarray(self.base)
        self._trees = None
        by_kind: dict = {}
        for f, r in zip(self.X, residual):
            by_kind.setdefault(self._kind(f), []).append(r)
        self._kinds = {kind: len(rs) for kind, rs in by_kind.items()}
        self._shared = float(np.median([np.median(rs) for rs in by_kind.values()]))
        if n < MIN_FIT:
            return
        # scikit-learn (a second or more) only once there is enough to fit: ``prefetch`` overlaps it
        from sklearn.ensemble import HistGradientBoostingRegressor
        from threadpoolctl import threadpool_limits

        trees = HistGradientBoostingRegressor(max_iter=150, learning_rate=0.1, max_leaf_nodes=15,
                                              min_samples_leaf=max(2, n // 20), random_state=0)
        # One thread: a few hundred rows fit in milliseconds, while OpenMP's threads spin against the
        # compile and measure workers beside them (17 s instead of 0.3 s for eight rows on two cores).
        with threadpool_limits(1):
            trees.fit(np.asarray(self.X), residual)
        self._trees = trees

    @property
    def fitted(self) -> bool:
        return bool(self.y)

    def predict_log(self, features: list[list[float]], analytical_s: list[float], optimistic: bool = False) -> np.ndarray:
        """log(predicted seconds) for many points: the analytical time corrected by the learned residual.
        ``optimistic``: kinds of variant measured fewer than ``KIND_MIN`` times at the formula's word (what a
        search ranks by; module docstring)."""
        base = np.asarray([math.log(max(a, 1e-9)) if math.isfinite(a) else 10.0 for a in analytical_s])
        if not self.y:
            return base
        counts = np.asarray([self._kinds.get(self._kind(f), 0) for f in features], dtype=float)
        seen = counts >= KIND_MIN
        out = base + np.where(seen | (not optimistic), self._shared, 0.0)
        if self._trees is None or not seen.any():
            return out
        from threadpoolctl import threadpool_limits  # (loaded with scikit-learn by the fit above)

        with threadpool_limits(1):
            correction = self._trees.predict(np.asarray(features)[seen])
        weight = counts[seen] / (counts[seen] + SHRINK)
        out[seen] = base[seen] + weight * correction + (1 - weight) * self._shared
        return out
