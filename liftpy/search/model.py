"""Model search: every candidate point (a variant and a configuration of its tuning parameters) is ranked before
it is measured, deterministically for a seed, in batches; the exploration measures a batch, tells the strategy
what it measured (``observe``) and asks again.

Variants are screened (their space solved, a pool of configurations sampled, the analytical model of
``liftpy.model`` built) a chunk at a time, so that exploring thousands of variants does not start with minutes
of solving; the best ranked unmeasured candidates are proposed, plus a share of random ones (exploration).  On
a GPU the leaders of the ranking are predicted again with how the reads of their own configuration are served
(coalescing, bank conflicts; the screening uses what one configuration per variant measured), as a cascade of
a cheap and a costlier model (``_best_first``); what was measured is learned with the same features.  After
every batch the learned correction (``liftpy.model.learned``) is refitted to what was measured, and the
ranking uses it. This is the loop of TVM's MetaSchedule and kernel_tuner's model-based strategies: model,
measure the best few, refit, repeat.  The variants of a chunk are screened, and the candidates about to be
refined lowered, several at a time on the exploration's code-generation workers, idle while it proposes
(``Spaces.use_workers``).  Sampled pools alone rarely hold a space's best configuration (a tiled variant of a
convolution layer has hundreds of thousands; 400 are sampled), so, as MetaSchedule's evolutionary search
mutates its best measured schedules, the fastest measured points (and the fastest of each other kind of
variant within 25% of the best) are expanded into candidates:
- neighbours: one or two parameters moved to other values the parameter takes in the pool, valid by the
  variant's constraints;
- siblings: the same configuration on every variant with the same parameters (derived with or without one
  rule);
- reduced forms: the point on every variant derived with fewer of its rules whose parameters are a subset (a
  split-K tiling without the split), as it is and after climbing the analytical formula from there one or two
  parameters at a time (what suits a split tile rarely suits an unsplit one);
- recombined points: for a variant of several kernels with parameters of their own (two chained products), each
  kernel's parameters from the measured point where that kernel ran fastest (the workers time each kernel),
  given a place in the next batch.
A share of every batch goes to the best ranked of these (exploitation), one point in ten to the one the
analytical formula alone ranks best among kinds of variant measured at most once on the problem: the learned
correction, fitted to a few measurements, can condemn a whole kind of variant for what only some of its points
(or its points on other problems) did.  The rest of a batch is the best ranked of all candidates, at most a
quarter of the batch of one kind of variant and half of one family (the variants with the same parameters)
while others have candidates (the formula can overrate a whole kind), and a share of random ones.  What the
store measured for other problems of the same variants (the other layers of a network, other sizes) is used
before the first proposal: their fastest points join the same candidates (``hint``), their measurements train
the learned correction (``learn_elsewhere``), with features relative to each problem's work (the high-level
program's user-function applications at its sizes, ``Spaces.work``), so that a layer of twice the work is not
a new region of the features; a guided search measures a few kinds of variant, and the other layers'
measurements are what the learned correction knows of the rest (``liftpy.model.learned``).
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Sequence

from ..model.learned import LearnedModel, feature_vector, prefetch
from ..results.cache import SCREEN_CODE, memo
from ..results.store import config_key
from ..rewrite.explore import features
from .spaces import Spaces
from .strategy import Strategy


@dataclass
class _Candidate:
    variant: int
    config: dict
    prediction: object
    features: list = field(default_factory=list)
    refined: bool = False  # the prediction's access factors measured at this configuration (``Spaces.predict``)


class ModelSearch(Strategy):
    """Model-ranked search (module docstring)."""

    name = "model"
    phase = "screening the variants' spaces"
    saves_next_batch = True
    proposes_with_workers = True

    @staticmethod
    def warm_up() -> None:
        prefetch()  # scikit-learn's trees, imported in a thread while the variants are derived

    @staticmethod
    def batch_size(samples: int, jobs: int, width: int) -> int:
        return max(4, 2 * jobs) * width

    def __init__(self, spaces: Spaces, seed: int = 0, pool: int = 400, screen: int = 128, explore_share: float = 0.2,
                 features_of=None, exploit_share: float = 0.3, expand_best: int = 3, formula_share: float = 0.1,
                 expand_within: float = 1.25, kind_share: float = 0.25, refine: bool = True):
        self.spaces = spaces
        self.rng = random.Random(seed)
        self.pool_size = pool
        self.screen_size = screen
        self.explore_share = explore_share
        self.rules = [frozenset(features(v)) for v in spaces.variants]
        # Variants are screened round-robin over their rule combinations, so that the first chunks meet every
        # kind of variant (a family of 24 tiled variants among 3,500 others is screened at once).
        groups: dict = {}
        for i, r in enumerate(self.rules):
            groups.setdefault(r, []).append(i)
        glist = list(groups.values())
        self.rng.shuffle(glist)
        for g in glist:
            self.rng.shuffle(g)
        self.order = [g[d] for d in range(max((len(g) for g in glist), default=0)) for g in glist if d < len(g)]
        self.screened = 0
        self.candidates: list[_Candidate] = []
        names = tuple(sorted(set().union(*self.rules))) if self.rules else ()
        self.learned = LearnedModel(names)
        self.work = spaces.work()  # what the learned model's features are relative to (``liftpy.model.learned``)
        self._index: dict = {}
        self._dirty = False
        self._pending: list = []
        self.exploit_share = exploit_share
        self.formula_share = formula_share
        self.expand_best = expand_best
        self.expand_within = expand_within
        self.kind_share = kind_share
        self.refine = refine
        self.measured: list[tuple[float, int, dict]] = []  # (ms, variant, config) of every observed point
        self._expanded: set = set()
        self._neighbours: list[_Candidate] = []
        self._near: set = set()  # their keys
        self._params = [frozenset(str(p) for p in v.params) for v in spaces.variants]
        by_params: dict = {}
        for i, ps in enumerate(self._params):
            by_params.setdefault(ps, []).append(i)
        self._siblings = {i: g for g in by_params.values() for i in g}
        self._prepared = False  # the next proposal's screening is done (``prepare``)
        self._kernel_times: dict = {}  # variant -> [(config, each kernel's time)] of its measured pipelines
        self._joined: list = []  # keys of recombined points (``_recombined``), each given a place in a batch

    def _screen(self, count: int) -> None:
        end = min(len(self.order), self.screened + count)
        draws = [(i, self.pool_size, self.rng.randrange(2**31)) for i in self.order[self.screened:end]]
        self.spaces.prefetch_screens(draws)
        for i, n, seed in draws:
            pool = self.spaces.screen(i, n, seed)
            for c, p in pool:
                cand = _Candidate(i, c, p, feature_vector(p, self.rules[i], self.learned.rule_names, self.work))
                self._index[(i, config_key(c))] = cand
                self.candidates.append(cand)
            for config in self._composed(i, pool):
                self._add(i, config, near=False)
        self.screened = end

    def predicted_log(self, cands: list[_Candidate]) -> list[float]:
        if not cands:
            return []
        return list(self.learned.predict_log([c.features for c in cands], [c.prediction.seconds for c in cands], optimistic=True))

    def _values(self, i: int) -> dict:
        """The values each parameter of variant ``i`` takes among its candidates."""
        out: dict = {}
        for c in self.candidates:
            if c.variant == i:
                for k, v in c.config.items():
                    out.setdefault(k, set()).add(v)
        return out

    def _add(self, i: int, config: dict, near: bool = True) -> None:
        """``config`` of variant ``i`` a candidate, if valid; ``near``: a neighbour of the fastest too."""
        key = (i, config_key(config))
        if key in self._index:
            if near and key not in self._near:  # a pool candidate is a neighbour now too
                self._near.add(key)
                self._neighbours.append(self._index[key])
            return
        if not self.spaces.valid(i, config):
            return
        p = self.spaces.model(i).predict(config)
        if not math.isfinite(p.seconds):
            return
        cand = _Candidate(i, config, p, feature_vector(p, self.rules[i], self.learned.rule_names, self.work))
        self._index[key] = cand
        self.candidates.append(cand)
        if near:
            self._near.add(key)
            self._neighbours.append(cand)

    def hint(self, i: int, config: dict) -> None:
        """A point worth measuring from elsewhere (another problem's fastest): a candidate among the
        neighbours, if this problem's constraints allow it."""
        self._add(i, dict(config))

    def prefetch_elsewhere(self, points, jobs: int) -> None:
        """The models of points of other problems (variant, sizes, configuration) that ``learn_elsewhere``
        is about to learn, made in ``jobs`` processes (``Spaces.prefetch_at``)."""
        self.spaces.prefetch_at(points, jobs)

    def learn_elsewhere(self, i: int, config: dict, time_ms: float, sizes: dict) -> None:
        """A measurement of variant ``i`` at other sizes (another problem of the same variants): training data
        for the learned correction, its features from the analytical model at those sizes, relative to the
        work of that problem (``Spaces.work``)."""
        work = self.spaces.work(sizes) if self.work else None
        if self.work and not work:
            return  # its features could not be put on this problem's scale
        p = self.spaces.predict_at(i, sizes, config)
        if math.isfinite(p.seconds):
            self.learned.add(feature_vector(p, self.rules[i], self.learned.rule_names, work), p.seconds, time_ms)
            self._dirty = True

    def _expand(self) -> None:
        """Neighbours and siblings of the fastest measured points become candidates (module docstring)."""
        ranked = sorted(self.measured, key=lambda m: m[0])
        chosen = ranked[: self.expand_best]
        # and the best point of every other kind of variant (rule combination) close to the best: the
        # fastest few are often one tiling on sibling variants, and a kind a little slower may be one
        # move away from the fastest of all.
        kinds = {self.rules[i] for _, i, _ in chosen}
        for m in ranked[self.expand_best:]:
            if m[0] > self.expand_within * ranked[0][0]:
                break
            if self.rules[m[1]] not in kinds:
                kinds.add(self.rules[m[1]])
                chosen.append(m)
        fresh = [i for _, i, config in chosen if (i, config_key(config)) not in self._expanded]
        self.spaces.prefetch_models([j for i in fresh for j in (*self._siblings.get(i, ()), *self._reduced(i)) if j != i])
        for _, i, config in chosen:
            key = (i, config_key(config))
            if key in self._expanded:
                continue
            self._expanded.add(key)
            for j in self._siblings.get(i, ()):
                if j != i:
                    self._add(j, dict(config))
            for j in self._reduced(i):
                start = {k: config[k] for k in self._params[j]}
                self._add(j, start)
                self._add(j, self._climbed(j, start))
            for moved in _moves(config, self._values(i)):
                self._add(i, moved)
        for i in dict.fromkeys(i for _, i, _ in chosen):
            joined = self._recombined(i)
            if joined is not None:
                self._add(i, joined)
                key = (i, config_key(joined))
                if key in self._index:  # (valid): the latest of its variant, made from the most measurements
                    self._joined = [k for k in self._joined if k[0] != i] + [key]

    def _recombined(self, i: int) -> dict | None:
        """Variant ``i``'s configuration with each kernel's own parameters (those no other kernel's formulas
        read) taken from the measured point where that kernel ran fastest, the others from its fastest point:
        a pipeline's times add up, so where its kernels have parameters of their own (two chained products,
        five each), the fastest of each makes a point that no pool, move or climb is likely to hold (a joint
        space of ten parameters).  None for a variant of one kernel, with fewer than two measured points, fewer
        than two kernels with parameters of their own, a parameter no kernel's formulas read (which kernel it
        belongs to is not known), or a kernel whose times do not tell its points apart (ties on a CPU device)."""
        own = self._own_params(i)
        times = [(c, t) for c, t in self._kernel_times.get(i, ()) if own is not None and len(t) == len(own)]
        if len(times) < 2:
            return None
        for k, ps in enumerate(own):
            ranked = sorted(t[k] for _, t in times)
            if ps and ranked[0] == ranked[1]:
                return None
        return _joined(min(times, key=lambda ct: sum(ct[1]))[0], own, times, 1)[0]

    def _own_params(self, i: int) -> list[frozenset] | None:
        """Each kernel's own tuning parameters in variant ``i`` (those no other kernel's formulas read), where
        at least two kernels have some and every parameter is read by some kernel's formulas; else None (one
        kernel; a split-K tiling, whose sum kernel reads the tiling's parameters; a parameter whose kernel is
        not known)."""
        model = self.spaces.model(i)
        reads = model.kernel_params
        if len(reads) < 2 or frozenset().union(*reads) != frozenset(model.params):
            return None
        own = [ps.difference(*(q for j, q in enumerate(reads) if j != k)) for k, ps in enumerate(reads)]
        return own if sum(1 for ps in own if ps) >= 2 else None

    def _composed(self, i: int, pool: list, per_kernel: int = 2) -> list[dict]:
        """Configurations of variant ``i`` whose kernels each take their own parameters from the pool's
        configurations the formula predicts fastest for that kernel (the ``per_kernel`` best of each, every
        combination), the shared ones from the pool's fastest in all: ``_recombined`` before anything is
        measured.  A pipeline's predicted time is the sum of its kernels', so where each has parameters of its
        own the joint space is separable, and a random pool of it seldom holds a configuration good for every
        kernel: two chained products (ten parameters) kept 32 x 256 and 16 x 256 tiles on the H200 (0.174 ms),
        where 64 x 128 tiles for both ran in 0.127-0.142 ms, and the formula predicted them faster."""
        if not pool or len(pool[0][1].kernel_seconds) < 2:
            return []  # (one kernel: its model need not be made, where the pool came from the disk)
        own = self._own_params(i)
        if own is None:
            return []
        scored = [(c, p.kernel_seconds) for c, p in pool if len(p.kernel_seconds) == len(own)]
        if len(scored) < 2:
            return []
        return _joined(min(pool, key=lambda cp: cp[1].seconds)[0], own, scored, per_kernel)

    def _climbed(self, i: int, config: dict) -> dict:
        """``_climb``, kept on disk: a resumed search expands the same points before its first proposal."""
        key = f"{self.spaces._key(i)}|{config_key(config)}"
        return dict(memo("climbs", key, lambda: self._climb(i, config), SCREEN_CODE + ("search",)))

    def _climb(self, i: int, config: dict, steps: int = 8) -> dict:
        """``config`` of variant ``i`` moved while the analytical formula predicts it faster: one parameter
        to any value its constraints allow, or, where no single move helps, two parameters each to a value
        next to their own (a tile twice as tall with a register block half as tall).  A point expanded into
        a variant of another shape starts from a configuration chosen for the first (a split-K tile), and
        the formula knows what suits the second."""
        # The solver's search domains (narrowed by divisibility), not derive_domains' raw ranges: a parameter
        # that must divide another (split(w1, split(w0, x)) over 2^26 elements) has the raw range 1..2^26, and
        # one step over it built and checked 67 million configurations (the H200's exploration of ``sum`` never
        # chose its next batch).  No value outside the search domain is valid.
        counted = self.spaces.counted(i)
        if counted is None or not self.spaces.valid(i, config):
            return config
        values = {k: tuple(d.values) for k, d in counted.plan.search_domains.items()}
        model = self.spaces.model(i)
        best, best_s = config, model.predict(config).seconds
        for _ in range(steps):
            for moves in (_moves(best, values, pairs=False), _pairs_next(best, values)):
                moved = [c for c in moves if self.spaces.valid(i, c)]
                scored = [(model.predict(c).seconds, k) for k, c in enumerate(moved)]
                if scored and min(scored)[0] < best_s:
                    best_s, k = min(scored)
                    best = moved[k]
                    break
            else:
                return best
        return best

    def _reduced(self, i: int) -> list[int]:
        """Variants derived with a strict subset of variant ``i``'s rules whose parameters are a subset of its
        own: the same point without a rule (a split-K point's tiling without the split, which costs
        no partial buffer and may be faster where the grid already fills the device)."""
        return [j for j, (r, ps) in enumerate(zip(self.rules, self._params))
                if r < self.rules[i] and ps <= self._params[i] and ps]

    def prepare(self, n: int) -> None:
        """The costly part of the next proposal (of ``n`` points) done now: its screening, learning what was
        observed and refitting.  A resumed run does this in a thread while its first batch (saved by the run
        before) is measured.  The proposal then screens nothing more and proposes what it would have without
        the call: the screening draws the same numbers in the same order, and the refit learns every
        observation in the order observed.  (Expanding the fastest points waits for the proposal: expanding
        those of fewer observations first would add candidates.)"""
        if not self._prepared:
            self._screen_next(n)
            self._prepared = True
        self.refit()

    def _screen_next(self, n: int) -> None:
        if self.screened < len(self.order):
            # A full chunk first; then two new variants per point of the batch, at most a quarter chunk, so
            # that the ranking keeps meeting new variants without the screening costing more than the
            # measuring.  (A GPU's batches of 30 points screen a quarter chunk each, as before; a CPU device's
            # batches of 4 points, measured in a second, screened a quarter chunk too: with the expansion, some
            # 10 s between batches of the README's exploration on this project's 2-core machine.)
            self._screen(self.screen_size if not self.screened else max(1, min(self.screen_size // 4, 2 * n)))

    def propose(self, n: int, taken: set) -> list[tuple[int, dict]]:
        if not self._prepared:
            self._screen_next(n)
        self._prepared = False
        self.refit()
        self._expand()
        open_ = [c for c in self.candidates if (c.variant, config_key(c.config)) not in taken]
        while not open_ and self.screened < len(self.order):
            self._screen(self.screen_size)
            open_ = [c for c in self.candidates if (c.variant, config_key(c.config)) not in taken]
        if not open_:
            return []
        scores = dict(zip(map(id, open_), self.predicted_log(open_)))
        near = {id(c) for c in self._neighbours}
        # A recombined point first, one a batch, the latest made: each kernel's part was measured fastest
        # already.  (Not in a batch of one, which is what the ranking thinks best: a CPU device's first points.)
        self._joined = [k for k in self._joined if k not in taken]
        chosen = [self._index[k] for k in self._joined[-1:]] if n > 1 else []
        picked = {id(c) for c in chosen}
        chosen += list(itertools.islice(self._best_first([c for c in open_ if id(c) in near and id(c) not in picked], scores),
                                        int(round(n * self.exploit_share))))
        picked = {id(c) for c in chosen}
        # The formula's own favourite among the neighbours too: the learned correction generalises from a
        # few measurements by rule (a layer whose unsplit points were slow for their tile shapes ranks every
        # unsplit point slow), and only a measurement of the point the formula prefers can correct it.
        # Only kinds of variant measured at most once on this problem: where the correction has seen a kind
        # measured several times here, it knows better than the formula (unstaged tiles the formula loves).
        seen: dict = {}
        for _, i, _ in self.measured:
            seen[self.rules[i]] = seen.get(self.rules[i], 0) + 1
        n_formula = int(n * self.formula_share) or (1 if n >= 4 else 0)
        unseen_near = [c for c in open_ if id(c) in near and id(c) not in picked and seen.get(self.rules[c.variant], 0) <= 1]
        formula = {id(c): math.log(max(c.prediction.seconds, 1e-12)) for c in unseen_near}
        by_formula = list(itertools.islice(self._best_first(unseen_near, formula, formula_only=True), n_formula))
        chosen += by_formula
        picked |= {id(c) for c in by_formula}
        rest = [c for c in open_ if id(c) not in picked]
        left = n - len(chosen)
        n_explore = int(round(n * self.explore_share)) if len(rest) > left else 0
        best = self._diverse(rest, scores, left - n_explore, chosen)
        chosen += best
        taken_now = {id(c) for c in best}
        rest = [c for c in rest if id(c) not in taken_now]
        if n_explore and rest:
            chosen += self.rng.sample(rest, min(n_explore, len(rest)))
        return [(c.variant, c.config) for c in chosen]

    def _best_first(self, cands: list[_Candidate], scores: dict, formula_only: bool = False, skip=None):
        """``cands`` in the order of ``scores`` (log seconds by id), each predicted again with how the reads
        of its own configuration are served (``Spaces.predict``) before it is given out, and put back in its place if
        that moved it: a cascade of a cheap model (one configuration's factor per variant, for ranking
        thousands) and a costlier one (code generation up to the passes that assign reads to work-items,
        some 40-100 ms for a convolution tiling) for what a batch takes.  With each point's own factor,
        the formula alone ranked VGG-16 layer 5's 300 uniform H100 points with Kendall tau 0.71 instead
        of 0.59.  ``scores`` is updated with what refining finds; ``formula_only``: they are the formula's
        own (no learned correction); ``skip``: candidates the caller will pass over whatever their time,
        given out without refining them (a batch's kind caps pass over hundreds)."""
        heap = [(scores[id(c)], k, c) for k, c in enumerate(cands)]
        heapq.heapify(heap)
        while heap:
            score, k, c = heapq.heappop(heap)
            if not c.refined and not (skip is not None and skip(c)):
                self._prefetch(c, heap, skip)
                if self._refine(c):
                    scores[id(c)] = (math.log(max(c.prediction.seconds, 1e-12)) if formula_only
                                     else float(self.predicted_log([c])[0]))
                    heapq.heappush(heap, (scores[id(c)], k, c))
                    continue
            yield c

    def _prefetch(self, cand: _Candidate, heap: list, skip) -> None:
        """Before ``cand`` is refined, the access of the candidates ranked next that would be refined after it
        computed with it, on the workers of ``Spaces.use_workers``: the ranking then refines them one by
        one as before, in the same order with the same results, from the cache.  A guided search refines
        some twenty candidates for each point it measures, each a lowering of 0.05-0.2 s: on PoCL, with one
        process, they were 212 of its 261 s under a profiler; on the H100 with 15 workers, layer 24's 50 runs
        took 65 s instead of 81 s, the same points (``benchmarks/results/h100-search-refine-workers.json``).
        A round is one point per worker, all of them not lowered yet: the ranking waits for a round's
        slowest, and rounds of twice the workers that counted points already lowered were 30 waves of
        lowering for three batches of layer 24, where these are 20, and 228 lowerings instead of 244."""
        width = self.spaces.prefetching()
        if not self.refine or width <= 1 or self.spaces.has_access(cand.variant, cand.config):
            return
        ahead = [c for _, _, c in heapq.nsmallest(8 * width, heap)
                 if not c.refined and not (skip is not None and skip(c))
                 and not self.spaces.has_access(c.variant, c.config)][: width - 1]
        self.spaces.prefetch_access([(c.variant, c.config) for c in [cand] + ahead])

    def _refine(self, cand: _Candidate) -> bool:
        """``cand``'s prediction and features made with how its own reads are served; whether they changed."""
        if not self.refine:
            return False
        cand.refined = True
        if self.spaces.access(cand.variant, cand.config) is None:
            return False
        p = self.spaces.predict(cand.variant, cand.config)
        if not math.isfinite(p.seconds):
            return False
        cand.prediction = p
        cand.features = feature_vector(p, self.rules[cand.variant], self.learned.rule_names, self.work)
        return True

    def _diverse(self, cands: list, scores: dict, count: int, chosen: list) -> list:
        """The best ``count`` of ``cands`` (``_best_first`` by ``scores``), at most ``kind_share`` of the batch from one kind of variant
        (rule combination) and twice that from one family (the variants with the same tuning parameters:
        a tiling with or without a split, whatever its placements) while others have candidates.  The
        formula can overrate a whole kind or family: on SGEMM it put one unstaged tiling's points, 2.2x
        slower than it said, at the top 24 times over; on VGG-16 layer 10 unsplit tilings in six
        placements, 3-5x slower than it said, where the split ones were fastest."""
        if count <= 0:
            return []
        size = len(chosen) + count
        caps = (max(2, int(self.kind_share * size)), max(2, int(2 * self.kind_share * size)))
        per: dict = {}

        def keys(c):  # its kind, and its family: the variants with the same tuning parameters
            return (("kind", self.rules[c.variant]), ("family", self._params[c.variant]))

        for c in chosen:
            for k in keys(c):
                per[k] = per.get(k, 0) + 1

        def blocked(c):
            return any(per.get(k, 0) >= cap for k, cap in zip(keys(c), caps))

        out, skipped = [], []
        for c in self._best_first(cands, scores, skip=blocked):
            if len(out) == count:
                break
            ks = keys(c)
            if blocked(c):
                skipped.append(c)
                continue
            for k in ks:
                per[k] = per.get(k, 0) + 1
            out.append(c)
        return out + skipped[: count - len(out)]

    def observe(self, i: int, config: dict, time_ms: float | None, kernel_ms: Sequence[float] | None = None) -> None:
        if time_ms is None or not (time_ms > 0):
            return
        self.measured.append((time_ms, i, dict(config)))
        if kernel_ms is not None and len(kernel_ms) > 1:
            self._kernel_times.setdefault(i, []).append((dict(config), tuple(kernel_ms)))
        # Learned at the next proposal: a resumed run observes its stored points before it screens, and most
        # of them are then found among the (cached) screened candidates instead of being modelled one by one.
        self._pending.append((i, config, time_ms))
        self._dirty = True

    def refit(self) -> None:
        """Learn what was observed since the last proposal and refit the learned model."""
        self._learn_pending()
        if self._dirty:
            self.learned.fit()
            self._dirty = False

    def _learn_pending(self) -> None:
        if self.refine and self.spaces.prefetching() > 1:  # a resumed run learns its stored points at once
            self.spaces.prefetch_access([(i, config) for i, config, _ in self._pending
                                         if not getattr(self._index.get((i, config_key(config))), "refined", False)])
        for i, config, time_ms in self._pending:
            cand = self._index.get((i, config_key(config)))
            if cand is None:
                p = self.spaces.model(i).predict(config)
                cand = _Candidate(i, config, p, feature_vector(p, self.rules[i], self.learned.rule_names, self.work))
            if not cand.refined:
                # What was measured is learned with the features of its own configuration, as the
                # candidates it is compared with are ranked.
                self._refine(cand)
            self.learned.add(cand.features, cand.prediction.seconds, time_ms)
        self._pending = []


def _joined(base: dict, own: list, timed: list, per_kernel: int) -> list[dict]:
    """``base`` with each kernel's own parameters (``own[k]``) taken from the ``per_kernel`` configurations of
    ``timed`` (configuration, each kernel's time) where kernel ``k`` is fastest (distinct in those parameters),
    in every combination: what ``ModelSearch._recombined`` (measured times) and ``_composed`` (predicted
    ones) make of a pipeline whose kernels have parameters of their own."""
    choices = []
    for k, ps in enumerate(own):
        picks: list = []
        for c, _ in sorted(timed, key=lambda ct: ct[1][k]) if ps else ():
            part = {p: c[p] for p in ps}
            if part not in picks:
                picks.append(part)
                if len(picks) == per_kernel:
                    break
        choices.append(picks or [{}])
    out = []
    for parts in itertools.product(*choices):
        config = dict(base)
        for part in parts:
            config.update(part)
        out.append(config)
    return out


def _pairs_next(config: dict, values: dict):
    """``config`` with two parameters each moved to a value next to its own in ``values``."""
    def near(k):
        vs = sorted(values.get(k, ()))
        if config[k] not in vs:
            return []
        at = vs.index(config[k])
        return vs[max(0, at - 1):at] + vs[at + 1:at + 2]

    for a, b in itertools.combinations(sorted(config), 2):
        for va, vb in itertools.product(near(a), near(b)):
            yield {**config, a: va, b: vb}


def _moves(config: dict, values: dict, pairs: bool = True):
    """``config`` with one (or, with ``pairs``, two) parameters moved to other values they take in ``values``."""
    def other(k):
        return [v for v in sorted(values.get(k, ())) if v != config[k]]

    names = sorted(config)
    for a in names:
        for va in other(a):
            yield {**config, a: va}
    if not pairs:
        return
    for a, b in itertools.combinations(names, 2):
        for va, vb in itertools.product(other(a), other(b)):
            yield {**config, a: va, b: vb}
