"""The model search's proposals (issue 12): the fastest points expanded, a proposal prepared ahead, batches
spread over kinds of variant, leaders ranked by their own configuration's reads, and the same proposals
when its screening, models and lowering go to workers (computed in this process here: ``_workers_here``)."""

import math

import pytest

from engine_helpers import MATMUL, _workers_here, gpu_profile


@pytest.mark.slow
def test_model_search_expands_its_fastest_points():
    """Neighbours of the fastest measured point (one or two parameters moved, valid by the constraints),
    its configuration on sibling variants and on variants with fewer rules (its parameters projected) become
    candidates, and part of the next batch."""
    from liftpy.explore.operator import program_operator
    from liftpy.results.store import config_key
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    gpu = gpu_profile()
    spaces = Spaces(variants, op.sizes(), gpu, 0)
    search = ModelSearch(spaces, 0)
    first = search.propose(8, set())
    # The first proposal is the fastest, a point of a variant with a reduced form (split-K) first of all.
    def splits(i):
        return any(search._params[j] < search._params[i] for j in search._reduced(i))

    first.sort(key=lambda p: not splits(p[0]))
    assert splits(first[0][0]), "no proposed variant has a form with fewer rules and parameters"
    for k, (i, c) in enumerate(first):
        search.observe(i, c, 1.0 + k)
    taken = {(i, config_key(c)) for i, c in first}
    second = search.propose(8, taken)
    fastest = first[: search.expand_best]

    def moved(a, b):
        return sum(a[k] != b[k] for k in a) if set(a) == set(b) else 99

    assert search._neighbours
    kinds = set()
    climbed = []  # the candidates only a climb from a projection explains
    for cand in search._neighbours:
        assert spaces.valid(cand.variant, cand.config)
        explained = set()
        for i, c in fastest:
            if cand.variant == i and 1 <= moved(cand.config, c) <= 2:
                explained.add("move")
            elif cand.variant != i and moved(cand.config, c) == 0:
                explained.add("sibling")
            elif search.rules[cand.variant] < search.rules[i] and search._params[cand.variant] <= search._params[i]:
                # the projection of the point, and where the formula climbs from there
                explained.add("reduced" if all(c[k] == v for k, v in cand.config.items()) else "climbed")
        assert explained, (cand.variant, cand.config)
        kinds |= explained
        if explained == {"climbed"}:
            climbed.append(cand)
    assert {"move", "reduced"} <= kinds, kinds  # a split-K point expands to its tiling without the split
    for cand in climbed:  # the formula predicts a climbed point faster than the projection it started from
        model = search.spaces.model(cand.variant)
        starts = [{k: c[k] for k in search._params[cand.variant]} for i, c in fastest
                  if cand.variant in search._reduced(i)]
        assert any(model.predict(cand.config).seconds < model.predict(st).seconds for st in starts)
    near = {(c.variant, config_key(c.config)) for c in search._neighbours}
    assert sum((i, config_key(c)) in near for i, c in second) >= 2
    assert not any((i, config_key(c)) in taken for i, c in second)
    # One point of the batch is the neighbour the analytical formula alone ranks best, among kinds of
    # variant measured at most once.
    seen = [search.rules[i] for i, _ in first]
    open_near = [c for c in search._neighbours if (c.variant, config_key(c.config)) not in taken
                 and seen.count(search.rules[c.variant]) <= 1]
    assert open_near
    best_formula = min(c.prediction.seconds for c in open_near)
    proposed = {(i, config_key(c)) for i, c in second}
    assert any(c.prediction.seconds == best_formula for c in open_near if (c.variant, config_key(c.config)) in proposed)


@pytest.mark.slow
def test_preparing_a_proposal_ahead_does_not_change_it():
    """``ModelSearch.prepare`` (a resumed run's screening and refit, done while its first batch runs) leaves
    the next proposal as it would have been, although points are observed after it."""
    from liftpy.explore.operator import program_operator
    from liftpy.results.store import config_key
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    gpu = gpu_profile()

    def search():
        return ModelSearch(Spaces(variants, op.sizes(), gpu, 0), 0)

    points = search().propose(12, set())
    assert len(points) == 12
    # The last points observed are the fastest: they change which points the proposal expands.
    times = [3.0 + 0.1 * k for k in range(8)] + [1.0 + 0.1 * k for k in range(4)]
    taken = {(i, config_key(c)) for i, c in points}
    ahead, plain = search(), search()
    for (i, c), t in zip(points[:8], times):
        ahead.observe(i, c, t)
        plain.observe(i, c, t)
    ahead.prepare(8)
    for (i, c), t in zip(points[8:], times[8:]):
        ahead.observe(i, c, t)
        plain.observe(i, c, t)
    assert ahead.propose(8, taken) == plain.propose(8, taken)
    assert ahead.screened == plain.screened


@pytest.mark.slow
def test_model_search_batch_spreads_over_kinds_of_variant():
    """The best ranked candidates fill a batch with at most a quarter of it from one kind of variant while
    other kinds have candidates: a formula that overrates one kind cannot spend a whole batch on it."""
    from liftpy.explore.operator import program_operator
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    gpu = gpu_profile()
    n = 16
    counts = {}
    for share, expect_cap in ((0.25, 4), (1.0, None)):
        search = ModelSearch(Spaces(variants, op.sizes(), gpu, 0), 0, explore_share=0.0, kind_share=share)
        batch = search.propose(n, set())
        per_kind = {}
        for i, _ in batch:
            per_kind[search.rules[i]] = per_kind.get(search.rules[i], 0) + 1
        counts[share] = per_kind
        assert len(batch) == n
        if expect_cap is not None:
            assert max(per_kind.values()) <= expect_cap
    # Without the cap the formula's favourite kind takes more of the batch (the test would pass vacuously
    # otherwise).
    assert max(counts[1.0].values()) > 4


def test_model_search_ranks_its_leaders_with_the_access_factors_of_their_own_configuration():
    """On a GPU the leaders of the ranking are predicted again with how their own configuration's reads
    are served (the screening uses what one configuration per variant measured): a leader whose reads turn
    out scattered drops out of the batch, and what is measured is learned with the same features."""
    from liftpy.explore.operator import program_operator
    from liftpy.model.access import AccessFactors
    from liftpy.results.store import config_key
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    gpu = gpu_profile()
    n = 8
    # Without refinement: the ranking of the screening, each variant's reads measured at its probe.
    plain = ModelSearch(Spaces(variants, op.sizes(), gpu, 0), 0, explore_share=0.0, refine=0)
    leaders = {(i, config_key(c)) for i, c in plain.propose(n, set())}
    assert len(leaders) == n

    class Scattered(Spaces):
        """The same spaces, where the plain ranking's leaders read far worse than at their probes (a factor
        far beyond a warp's 32, so that the reads decide their time at this small size)."""

        def access(self, i, config):
            real = super().access(i, config)
            if (i, config_key(config)) in leaders and real is not None:
                return tuple(AccessFactors(1e4, 1.0) for _ in real)
            return real

    spaces = Scattered(variants, op.sizes(), gpu, 0)
    search = ModelSearch(spaces, 0, explore_share=0.0)
    batch = search.propose(n, set())
    assert len(batch) == n
    assert not leaders & {(i, config_key(c)) for i, c in batch}
    for i, c in batch:
        cand = search._index[(i, config_key(c))]
        assert cand.refined
        assert cand.prediction.seconds == pytest.approx(spaces.predict(i, c).seconds)
    # Measured points are learned with the prediction at their own configuration.
    for k, (i, c) in enumerate(batch):
        search.observe(i, c, 1.0 + k)
    search.refit()
    assert search.learned.base == pytest.approx([math.log(spaces.predict(i, c).seconds) for i, c in batch])


@pytest.mark.slow
def test_model_search_refines_its_candidates_on_worker_processes_to_the_same_proposals(monkeypatch):
    """With worker processes (``Spaces.use_workers``: an exploration's code-generation workers, idle while its
    strategy proposes), the candidates a ranking is about to refine are lowered there, several at once; the
    ranking then refines them one by one from the cache, so it proposes the same batches as without.  (The
    three workers compute in this process, ``_workers_here``: a lowering there is not the driver's.)"""
    from liftpy.explore.operator import program_operator
    from liftpy.search import spaces as search_module
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")  # every access computed, none read from disk
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    gpu = gpu_profile()
    here, inside, lowered = [], [False], []
    real = search_module._access_of

    def counted(args):
        if not inside[0]:
            here.append(1)
        return real(args)

    monkeypatch.setattr(search_module, "_access_of", counted)

    def batches(spaces):
        search = ModelSearch(spaces, 0)
        out, taken = [], set()
        for _ in range(3):
            batch = search.propose(6, taken)
            out.append(batch)
            for i, c in batch:  # a deterministic time for each point: its formula's, scaled by its variant
                taken.add((i, tuple(sorted(c.items()))))
                search.observe(i, c, spaces.model(i).predict(c).seconds * 1e3 * (1 + i % 3))
        return out

    alone = batches(Spaces(variants, op.sizes(), gpu, 0))
    in_driver = len(here)
    here.clear()
    spaces = Spaces(variants, op.sizes(), gpu, 0)
    spaces.use_workers(_workers_here(search_module._access_of, lambda a: a, lowered, inside), 3)
    assert spaces.prefetching() == 3
    helped = batches(spaces)
    assert helped == alone
    assert in_driver > 6 and len(here) < in_driver / 2  # most candidates were lowered by the workers


@pytest.mark.slow
def test_model_search_hands_its_workers_rounds_of_one_unlowered_candidate_each(monkeypatch):
    """The candidates refined ahead go to the workers in rounds of at most one per worker, each round only
    candidates not lowered yet (the ranking waits for a round's slowest lowering)."""
    from liftpy.explore.operator import program_operator
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces
    from liftpy.search import spaces as search_module

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    spaces = Spaces(variants, op.sizes(), gpu_profile(), 0)
    rounds = []

    def run_all(fn, args):  # four "workers", computed here
        if fn == search_module._screen_of:
            return [(True, search_module._screen_of(a)) for a in args]
        rounds.append([(id(a[0]), tuple(sorted(a[1].items())), repr(a[3])) for a in args])
        return [(True, search_module._access_of(a)) for a in args]

    spaces.use_workers(run_all, 4)
    search, taken = ModelSearch(spaces, 0), set()
    for _ in range(2):
        batch = search.propose(6, taken)
        for i, c in batch:
            taken.add((i, tuple(sorted(c.items()))))
            search.observe(i, c, spaces.model(i).predict(c).seconds * 1e3)
    lowered = [p for r in rounds for p in r]
    assert rounds and max(len(r) for r in rounds) <= 4 and any(len(r) == 4 for r in rounds)
    assert len(lowered) == len(set(lowered))


@pytest.mark.slow
def test_model_search_screens_its_variants_on_its_workers_to_the_same_proposals(monkeypatch):
    """A fresh problem's screening (each variant's space inferred and solved, its probe lowered, a pool of
    its configurations predicted) goes to the workers of ``use_workers``, several variants at once; their
    spaces and models come back with the screens, so the driver infers none itself, and the proposals are
    those screened in the driver."""
    from liftpy.explore.operator import program_operator
    from liftpy.search import spaces as search_module
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])[:8]  # a few: each screening costs
    inferred, inside = [], [False]
    real = search_module.variant_space
    monkeypatch.setattr(search_module, "variant_space", lambda *a, **k: inferred.append(inside[0]) or real(*a, **k))
    screened = []
    run_all = _workers_here(search_module._screen_of, lambda a: a[1], screened, inside)

    def first_batch(workers: bool):
        spaces = Spaces(variants, op.sizes(), gpu_profile(), 0)
        if workers:
            spaces.use_workers(run_all, 4)
        return ModelSearch(spaces, 0).propose(6, set())

    alone = first_batch(False)
    assert inferred and not any(inferred)
    inferred.clear()
    assert first_batch(True) == alone
    assert len(screened) == len(variants) == len(set(screened)) and inferred and all(inferred)


@pytest.mark.slow
def test_model_search_expands_onto_unscreened_variants_on_its_workers_to_the_same_proposals(monkeypatch):
    """Expanding the fastest points meets sibling variants and reduced forms that were never screened (a search
    over thousands of variants screens a hundred at first); their spaces and models are made on the workers of
    ``use_workers`` (``Spaces.prefetch_models``), not one after another in the driver, and the proposals are
    those made in the driver."""
    from liftpy.explore.operator import program_operator
    from liftpy.results.store import config_key
    from liftpy.search import spaces as search_module
    from liftpy.search import select_variants
    from liftpy.search import ModelSearch, Spaces

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    inferred, inside = [], [False]
    real = search_module.variant_space
    monkeypatch.setattr(search_module, "variant_space", lambda v, *a, **k: inferred.append((id(v), inside[0])) or real(v, *a, **k))
    modelled = []
    run_all = _workers_here(search_module._model_of, lambda a: id(a[0]), modelled, inside)

    def two_batches(workers: bool):
        spaces = Spaces(variants, op.sizes(), gpu_profile(), 0)
        if workers:
            spaces.use_workers(run_all, 4)
        search = ModelSearch(spaces, 0, screen=4)  # four variants screened first: the expansion meets others
        first = search.propose(8, set())
        for k, (i, c) in enumerate(first):
            search.observe(i, c, 1.0 + k)
        return first, search.propose(8, {(i, config_key(c)) for i, c in first})

    alone = two_batches(False)
    assert not any(inside for _, inside in inferred)
    inferred.clear()
    assert two_batches(True) == alone
    assert len(modelled) >= 2, "the expansion met no unscreened variant: the test proves nothing"
    assert all(inside for v, inside in inferred if v in set(modelled))


def _chained_products():
    """(A B) C for square matrices: two matrix products, one reading the other's result."""
    from liftpy import Array, Float, join, make_program, map, reduce, sizes, transpose
    from liftpy import zip as lzip

    (n,) = sizes("N")

    def product(x, y):
        return map(lambda row: join(map(lambda col: reduce(lambda acc, p: acc + p[0] * p[1], 0.0, lzip(row, col)),
                                        transpose(y))), x)

    return make_program("chained", [("A", Array(Float, n, n)), ("B", Array(Float, n, n)), ("C", Array(Float, n, n))],
                        lambda a, b, c: product(product(a, b), c))


def test_a_pipelines_kernels_fastest_parameters_are_recombined_and_measured_next():
    """Two chained products are one variant with the parameters of both tilings: told each kernel's time, the
    search makes the point with each kernel's own parameters from the point where that kernel ran fastest,
    and proposes it first in the next batch; a variant measured once is not recombined."""
    from liftpy.explore.operator import ProgramOperator
    from liftpy.results.store import config_key
    from liftpy.search import ModelSearch, Spaces, select_variants

    op = ProgramOperator.of(_chained_products(), {"N": 64})
    variants = select_variants(op.variants(), ["tile2DReduce"])
    spaces = Spaces(variants, op.sizes(), gpu_profile(), 0)
    i = next(k for k, v in enumerate(variants) if len(spaces.model(k).kernel_params) == 2)
    first, second = spaces.model(i).kernel_params
    assert first and second and not first & second  # each tiling reads parameters of its own
    # two measured points whose tilings differ, and whose crossing is valid (each tiling's constraints its own)
    pool = spaces.sample(i, 40, 1)
    a, b = next((x, y) for x in pool for y in pool
                if all(any(x[p] != y[p] for p in ps) for ps in (first, second)) and spaces.valid(i, {**y, **{p: x[p] for p in first}}))
    search = ModelSearch(spaces, 0)
    search.propose(4, set())
    search.observe(i, a, 3.0, [1.0, 2.0])  # a: the first kernel fastest
    assert search._recombined(i) is None  # (measured once)
    search.observe(i, b, 2.5, [1.5, 1.0])  # b: the second kernel fastest, and the fastest point
    joined = search._recombined(i)
    assert joined == {**b, **{p: a[p] for p in first}}
    proposed = search.propose(4, {(i, config_key(a)), (i, config_key(b))})
    assert proposed[0] == (i, joined)
    # measured, the joined point is no longer proposed; tied kernel times tell nothing: not recombined
    search.observe(i, joined, 2.0, [1.0, 1.0])
    assert (i, joined) not in search.propose(4, {(i, config_key(c)) for c in (a, b, joined)})
    search._kernel_times[i] = [(a, (1.0, 1.0)), (b, (1.0, 2.0))]
    assert search._recombined(i) is None


def test_a_pipelines_screen_composes_each_kernels_fastest_parameters():
    """Before anything is measured, the screen of a two-kernel pipeline adds the configurations whose kernels
    each take their own parameters from the pool's configurations predicted fastest for that kernel: the
    formula's best of the separable space, which the pool itself does not hold; a variant of one kernel
    composes nothing."""
    from liftpy.explore.operator import ProgramOperator
    from liftpy.results.store import config_key
    from liftpy.search import ModelSearch, Spaces, select_variants

    import dataclasses

    op = ProgramOperator.of(_chained_products(), {"N": 256})
    variants = select_variants(op.variants(), ["tile2DReduce"])
    spaces = Spaces(variants, op.sizes(), gpu_profile(), 0)
    i = next(k for k, v in enumerate(variants) if len(spaces.model(k).kernel_params) == 2)
    model = spaces.model(i)
    search = ModelSearch(spaces, 0, pool=60)
    search.propose(4, set())
    pool = next(found for (j, _, _), found in spaces._screens.items() if j == i)  # what the search screened
    for c, p in pool:
        assert len(p.kernel_seconds) == 2 and p.seconds == pytest.approx(sum(p.kernel_seconds))
    composed = search._composed(i, pool)
    # the two best own parts of each kernel, every pairing: four distinct configurations
    assert len(composed) == 4 and len({config_key(c) for c in composed}) == 4
    best = model.predict(composed[0])
    for k in range(2):  # each kernel as fast as the fastest the pool holds for it
        assert best.kernel_seconds[k] == pytest.approx(min(p.kernel_seconds[k] for _, p in pool))
    assert best.seconds < min(p.seconds for _, p in pool), "the pool held the composition: the test proves nothing"
    assert all((i, config_key(c)) in search._index for c in composed if spaces.valid(i, c))
    assert any(spaces.valid(i, c) for c in composed)
    one_kernel = [(c, dataclasses.replace(p, kernel_seconds=(p.seconds,))) for c, p in pool]
    assert search._composed(i, one_kernel) == []


@pytest.mark.usefixtures("pools_here")
def test_the_exploration_tells_its_search_each_kernels_time(tmp_path):
    """Each measured point of a two-kernel pipeline reaches the search with its two kernels' times, and so do
    the stored points of a resumed exploration."""
    from liftpy.explore import explore_operator
    from liftpy.explore.operator import ProgramOperator
    from liftpy.search import ModelSearch

    told = []

    class Told(ModelSearch):
        def observe(self, i, config, time_ms, kernel_ms=None):
            told.append((time_ms, kernel_ms))
            super().observe(i, config, time_ms, kernel_ms)

    op = ProgramOperator.of(_chained_products(), {"N": 8})
    for samples in (2, 3):  # the second run resumes the first's two points and measures one more
        told.clear()
        explore_operator(op, samples=samples, db=tmp_path / "r.sqlite", search=Told, progress=False, references=False,
                         timeout_s=120, repeat=1, rules=("tile2DReduce",))
        ok = [k for t, k in told if t is not None]
        assert len(ok) == samples and all(len(k) == 2 and sum(k) > 0 for k in ok), told
        assert all(abs(sum(k) - t) <= 1e-9 + 1e-9 * t for t, k in told if t is not None), told  # (kernels of the point's run)


def test_a_stores_kernel_times_reach_the_search_only_when_they_are_times():
    """A store is data another version (or a hand) may have written: kernel times that are not a list of
    finite numbers are passed on as unknown, never raised on while a resumed run replays its points."""
    from liftpy.explore.loop import _observed
    from liftpy.results.store import Record, Status

    def told(metrics, status=Status.OK):
        return _observed(3, Record("d", "p", "v", {"m0": 4}, status, time_ms=2.0, metrics=metrics))

    assert told({"kernel_ms": [1.5, 0.5]}) == (3, {"m0": 4}, 2.0, [1.5, 0.5])
    for bad in ("1.5", 2.0, [], [1.0, "x"], [1.0, float("nan")], [1.0, -1.0], None):
        assert told({"kernel_ms": bad})[3] is None, bad
    assert told({}) == (3, {"m0": 4}, 2.0, None)
    assert told({"kernel_ms": [1.0, 1.0]}, Status.WRONG_RESULT)[2:] == (None, None)
