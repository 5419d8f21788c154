"""The generic exploration engine (issue 12): any program explored, stored and resumed; model-ranked search;
user functions in worker processes; parallel code generation; aborted runs; the variant cache; the CLI."""

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from liftpy import Array, Float, make_program, map, reduce, sizes, transpose
from liftpy import zip as lzip
from liftpy.ir.userfun import userfun_from_expression
from liftpy.tuning.engine import explore_operator, explore_program
from liftpy.tuning.operator import ProgramOperator, compare, load_program, parse_sizes
from liftpy.tuning.store import Status, canonical_json

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "programs" / "matmul_highlevel.lift"
M, N, K = sizes("M N K")

# A user function written as an expression: it travels to worker processes with the program.
MAD2 = userfun_from_expression("mad2", [("acc", Float), ("x", Float), ("y", Float)], Float, "acc + 2.0f * x * y")


def gpu_profile():
    """A GPU's profile without a GPU: what the model and the search rank points for."""
    from liftpy.host.profile import DeviceProfile

    return DeviceProfile("test GPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64), device_type="GPU")


def twice_matmul():
    return make_program("twice", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A, B: map(
        lambda row: map(lambda col: reduce(lambda acc, p: MAD2(acc, p[0], p[1]), 0.0, lzip(row, col)), transpose(B)), A))


def test_program_explored_with_model_search_and_resumed(tmp_path):
    db = tmp_path / "r.sqlite"
    ex = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=6, db=db, search="model", progress=False,
                         repeat=1, warmup=0, references=False)
    points = [r for r in ex.records if not r.is_reference]
    assert len(points) == 6 and ex.ran == 6
    assert all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert ex.frontier and ex.best is not None
    # The model ranks the tiled variants first: a vendor-shaped kernel is among the first measured (on a
    # CPU or GPU; the simulator's profile, one compute unit, makes the model prefer others).
    from conftest import on_simulator

    assert on_simulator() or any("tiled" in r.variant for r in points)
    again = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=8, db=db, search="model", progress=False,
                            repeat=1, warmup=0, references=False)
    assert again.resumed == 6 and again.ran == 2
    # Where a resume's time to its first run goes: the measuring worker's start-up and the point's steps.
    assert 0 < again.measure_ready_s < again.first_result_s
    steps = again.measure_start_steps
    assert set(steps) == {"interpreter_s", "imports_s", "device_s", "prepare_s", "total_s"}, steps
    assert all(v >= 0 for v in steps.values()) and steps["total_s"] >= steps["device_s"] + steps["prepare_s"]
    latest = max((r for r in again.records if not r.is_reference), key=lambda r: r.finished_at or 0)
    assert all(latest.metrics[k] >= 0 for k in ("build_s", "prepare_s", "run_s", "check_s"))
    # A point's record says how its time was taken: on a CPU device the fastest of 40 runs (one asked for).
    from liftpy.host.device import device_info
    from liftpy.host.timing import device_timing

    assert latest.metrics["timing"] == str(device_timing(device_info(None).type, 1))
    keys = [(r.variant, tuple(sorted(r.config.items()))) for r in again.records]
    assert len(keys) == len(set(keys)) == 8
    # A resume's progress line shows the exploration's best, the stored points' included.
    import io

    line = io.StringIO()
    third = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=8, db=db, search="model", progress=True,
                            stream=line, repeat=1, warmup=0, references=False)
    assert third.ran == 0
    best = min(r.time_ms for r in third.records if not r.is_reference and r.time_ms is not None)
    assert f"8 resumed | best {best:.4g} ms" in line.getvalue(), line.getvalue()


def test_rule_filter_alternatives_need_one_known_rule():
    """``A|B`` keeps the variants that use either; an alternative no variant uses is allowed beside a used
    one (one filter for plain and grouped convolutions), an entry none of whose rules any variant uses is
    an error naming the rules there are."""
    from liftpy.errors import TuningError
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator

    every = program_operator(str(MATMUL), "M=64,N=64,K=64").variants()
    tiled = select_variants(every, ["tile2DReduce"])
    assert tiled and len(tiled) < len(every)
    assert select_variants(every, ["tile2DReduce|groupsOut"]) == tiled
    with pytest.raises(TuningError, match="no variant uses the rule.s. groupsOut, tileTypo; the variants use: .*tile2DReduce"):
        select_variants(every, ["tile2DReduce", "groupsOut|tileTypo"])


def test_model_search_expands_its_fastest_points():
    """Neighbours of the fastest measured point (one or two parameters moved, valid by the constraints),
    its configuration on sibling variants and on variants with fewer rules (its parameters projected) become
    candidates, and part of the next batch."""
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces, config_key

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


def test_user_function_travels_to_workers_and_parallel_codegen(tmp_path):
    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8})
    ex = explore_operator(op, samples=4, db=tmp_path / "r.sqlite", search="uniform", jobs=2, progress=False,
                          repeat=1, warmup=0, references=False, seed=2)
    points = [r for r in ex.records if not r.is_reference]
    assert len(points) == 4
    assert all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert all(r.metrics.get("codegen_s", 0) > 0 for r in points)


def test_a_resumed_uniform_search_reads_its_plan_instead_of_drawing_it_again(tmp_path, monkeypatch):
    """A uniform search's points (drawn from every variant's solved space: seconds for a convolution layer)
    are kept on disk; the run that resumes it reads them, and measures only the ones the store lacks."""
    from liftpy.tuning import search as search_module

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8})
    kw = dict(db=tmp_path / "r.sqlite", search="uniform", progress=False, repeat=1, warmup=0, references=False, seed=3)
    first = explore_operator(op, samples=2, **kw)
    drawn = []
    real = search_module.UniformSearch.propose
    monkeypatch.setattr(search_module.UniformSearch, "propose", lambda self, n, taken: drawn.append(n) or real(self, n, taken))
    again = explore_operator(op, samples=2, **kw)
    assert drawn == [] and again.ran == 0 and again.resumed == 2
    more = explore_operator(op, samples=3, **kw)  # another plan: drawn, its first two points those of the first
    assert drawn == [3] and more.ran == 1
    points = lambda ex: [(r.variant, canonical_json(r.config)) for r in ex.records if not r.is_reference]
    assert points(first) == points(more)[:2]


def test_a_program_operator_computes_its_expected_output_once_for_all_the_points_it_checks():
    """``prepare`` (what the measuring worker keeps for a problem) computes the reference once; its check
    gives every output the verdict ``compare`` gives, a wrong element named."""
    calls = []

    def reference(a, b):
        calls.append(1)
        return a.astype(np.float64) @ b.astype(np.float64)

    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8}, reference=lambda a, b: 2 * reference(a, b))
    inputs, check = op.prepare(0)
    exp = 2 * (inputs[0].astype(np.float64) @ inputs[1].astype(np.float64))
    assert len(calls) == 1
    good, bad = exp.astype(np.float32), exp.astype(np.float32)
    bad[2, 3] += 1.0
    for out in (good, bad, good):
        assert check(out) == compare(out, exp)
    assert len(calls) == 1
    assert check(good).ok and not check(bad).ok and "(2, 3)" in check(bad).message


def test_wrong_kernel_is_caught_by_the_operator_check():
    exp = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert compare(exp + 1e-6, exp).ok
    bad = exp.copy()
    bad[1, 2] += 1.0
    v = compare(bad, exp)
    assert not v.ok and "(1, 2)" in v.message


def test_abort_factor_stops_slow_points(tmp_path):
    op = ProgramOperator.of(load_program(str(MATMUL)), {"M": 32, "N": 32, "K": 32})
    ex = explore_operator(op, samples=10, db=tmp_path / "r.sqlite", search="uniform", progress=False, repeat=2,
                          warmup=0, references=False, abort_factor=1e-6, batch=1, seed=5)
    statuses = [r.status for r in ex.records if not r.is_reference]
    assert Status.ABORTED in statuses and Status.OK in statuses  # the first point sets the bar
    aborted = [r for r in ex.records if r.status is Status.ABORTED]
    assert all(r.metrics.get("first_run_ms") for r in aborted)


def test_abort_factor_stops_slow_points_of_a_uniform_search_in_one_batch(tmp_path):
    """The bar is the best so far when each point is handed out, not when its batch began: a uniform search
    is one batch, and before this none of its points was ever aborted.  (The second point is handed out
    while the first runs, before any bar exists.)"""
    op = ProgramOperator.of(load_program(str(MATMUL)), {"M": 32, "N": 32, "K": 32})
    ex = explore_operator(op, samples=6, db=tmp_path / "r.sqlite", search="uniform", progress=False, repeat=2,
                          warmup=0, references=False, abort_factor=1e-6, seed=5, jobs=1)
    statuses = [r.status for r in ex.records if not r.is_reference]
    assert statuses[:2] == [Status.OK, Status.OK] and statuses[2:] == [Status.ABORTED] * (len(statuses) - 2)


def test_variant_cache_skips_derivation(tmp_path, monkeypatch):
    from liftpy.tuning import cache

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    op = ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8, "K": 8})
    first = cache.cached_variants(op)
    calls = []
    monkeypatch.setattr(ProgramOperator, "variants", lambda self: calls.append(1) or ())
    second = cache.cached_variants(op)
    assert not calls and len(second) == len(first) and second[0].program == first[0].program
    # Read back without sympy's evaluation, the programs are the same expressions, hashes included.
    assert second == first and [hash(v.program) for v in second] == [hash(v.program) for v in first]
    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    assert cache.cached_variants(op) == () and calls


def test_learned_model_corrects_the_formula():
    from liftpy.model.learned import LearnedModel

    rng = np.random.default_rng(0)
    model = LearnedModel(("a", "b"))
    # The formula misses a factor 3 whenever feature 0 is large: the trees learn it.  The last two features
    # are the rule flags (variants derived with rule a, not b).
    feats = np.hstack([rng.uniform(0, 1, size=(60, 3)), np.tile([1.0, 0.0], (60, 1))])
    analytical = rng.uniform(1e-4, 1e-3, size=60)
    measured_ms = analytical * 1e3 * np.where(feats[:, 0] > 0.5, 3.0, 1.0)
    for f, a, m in zip(feats, analytical, measured_ms):
        model.add(list(f), float(a), float(m))
    model.fit()
    pred = np.exp(model.predict_log([list(f) for f in feats], list(analytical))) * 1e3
    assert np.median(np.abs(np.log(pred / measured_ms))) < 0.2


def test_learned_model_corrects_only_kinds_of_variant_it_has_measured():
    """A kind of variant (rule combination) measured fewer than KIND_MIN times is predicted by the formula plus
    the offset all kinds share (the median over kinds of their median residual), and ranked by a search at
    the formula's word: trees fitted near a search's optimum do not extrapolate to the rest, nor does the
    residual of the kind measured most.  A measured kind takes the trees' correction in proportion to how
    often it was measured."""
    from liftpy.model.learned import KIND_MIN, SHRINK, LearnedModel

    rng = np.random.default_rng(2)
    model = LearnedModel(("a", "b"))
    seen, rare, unseen, other = [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]
    rows = ([list(rng.uniform(0, 1, 3)) + seen for _ in range(20)] + [list(rng.uniform(0, 1, 3)) + rare for _ in range(KIND_MIN - 1)]
            + [list(rng.uniform(0, 1, 3)) + other for _ in range(KIND_MIN)])
    for f in rows:
        a = float(rng.uniform(1e-4, 1e-3))
        slow = (6.0 if f[0] > 0.5 else 2.0) if f[3:] == seen else 1.0
        model.add(f, a, a * 1e3 * slow)
    model.fit()
    assert model._trees is not None
    # The shared offset is the median over the three kinds (about log 3.5, log 1, log 1), not over the 20
    # measurements of the slow kind.
    assert model._shared == pytest.approx(0.0, abs=1e-9)
    probe = [list(rng.uniform(0, 1, 3)) + k for k in (seen, rare, unseen) for _ in range(10)]
    a = list(rng.uniform(1e-4, 1e-3, len(probe)))
    formula = np.log(a)
    pred = model.predict_log(probe, a)
    ranked = model.predict_log(probe, a, optimistic=True)
    # The rare and the unseen kind: the formula plus the shared offset; a search takes the formula's word.
    assert np.allclose(pred[10:], formula[10:] + model._shared)
    assert np.allclose(ranked[10:], formula[10:])
    # The measured kind: the trees' correction, weighed by how often it was measured.
    assert np.all(pred[:10] - formula[:10] > 0.5)
    weight = 20 / (20 + SHRINK)
    trees = model._trees.predict(np.asarray(probe[:10]))
    assert np.allclose(pred[:10], formula[:10] + weight * trees + (1 - weight) * model._shared)
    assert np.allclose(ranked[:10], pred[:10])
    # The trees' correction of the measured kind follows the factor they learned.
    fast, slow = [k for k in range(10) if probe[k][0] <= 0.5], [k for k in range(10) if probe[k][0] > 0.5]
    if fast and slow:
        assert min(pred[k] - math.log(a[k]) for k in slow) > max(pred[k] - math.log(a[k]) for k in fast)


def test_learned_model_with_few_measurements_ranks_better_than_the_formula():
    """Ten measurements: the trees learn where the formula is wrong (a kind of point three times slower than
    it predicts) and rank unseen points better than the formula, never beyond the residuals they saw."""
    from scipy.stats import kendalltau

    from liftpy.model.learned import MIN_FIT, LearnedModel

    rng = np.random.default_rng(1)
    model = LearnedModel(("a",))
    n = 10
    assert n >= MIN_FIT

    def truth(f, a):
        return a * 1e3 * np.where(f[:, 0] > 0.5, 3.0, 1.0)

    def kind_a(x):  # the last feature is the rule flag: one kind of variant
        return np.hstack([x, np.ones((len(x), 1))])

    feats = kind_a(rng.uniform(0, 1, size=(n, 3)))
    analytical = rng.uniform(1e-4, 1e-3, size=n)
    for f, a, m in zip(feats, analytical, truth(feats, analytical)):
        model.add(list(f), float(a), float(m))
    model.fit()
    assert model._trees is not None
    test = kind_a(rng.uniform(-5, 5, size=(60, 3)))  # far outside the features it saw, too
    a_test = rng.uniform(1e-4, 1e-3, size=60)
    pred = model.predict_log([list(f) for f in test], list(a_test))
    measured = np.log(truth(test, a_test))
    assert kendalltau(pred, measured).statistic > kendalltau(np.log(a_test), measured).statistic + 0.1
    residual = np.asarray(model.y) - np.asarray(model.base)
    correction = pred - np.log(a_test)
    assert correction.min() >= residual.min() - 1e-9 and correction.max() <= residual.max() + 1e-9


def _prediction(work: float, ratio: float, rng):
    """A point of a problem of ``work`` user-function applications that reads ``ratio`` local bytes per
    application: its analytical prediction, every count growing with the problem."""
    from liftpy.model.analytical import Prediction

    features = {"flops": work, "global_reads": 4 * work * rng.uniform(0.5, 2), "local_reads": ratio * work,
                "copy_bytes": 0.1 * work, "written": 1e-3 * work, "items": 1e-3 * work, "groups": 1e-5 * work,
                "local_bytes": 4096.0, "private_bytes": 64.0, "input_bytes": 2e-3 * work,
                "global_traffic": 4 * work, "local_traffic": ratio * work}
    return Prediction(seconds=work * 1e-12 * float(rng.uniform(0.5, 2)), bound="cache", occupancy=2, features=features)


def test_features_relative_to_the_problems_work_are_the_same_on_every_size():
    """With the problem's work, a point of a problem four times larger (every count and the time four times
    larger) has the features of the smaller one's point; without it, they differ."""
    from liftpy.model.analytical import FEATURES, Prediction
    from liftpy.model.learned import EXTENSIVE, feature_vector

    small = _prediction(1e9, 30.0, np.random.default_rng(3))
    large = Prediction(small.seconds * 4, small.bound, small.occupancy,
                       {k: v * 4 if k in EXTENSIVE else v for k, v in small.features.items()})
    rules = frozenset({"a"})
    # (the same up to log1p's +1 on counts in the thousands)
    assert feature_vector(small, rules, ("a", "b"), 1e9) == pytest.approx(feature_vector(large, rules, ("a", "b"), 4e9), abs=1e-3)
    assert feature_vector(small, rules, ("a", "b")) != pytest.approx(feature_vector(large, rules, ("a", "b")), abs=0.5)
    # What does not grow with the problem is left as it is: local and private bytes, occupancy, bound, rules.
    assert feature_vector(small, rules, ("a", "b"), 1e9)[-8:] == feature_vector(small, rules, ("a", "b"))[-8:]
    fv = feature_vector(small, rules, ("a", "b"), 1e9)
    assert fv[FEATURES.index("local_bytes")] == pytest.approx(math.log1p(4096.0))


def test_measurements_of_other_problems_teach_the_kinds_a_search_did_not_measure():
    """A guided search measured one kind of variant (rules a); another problem of the same variants, four
    times the work, measured the other kind too (rules b), whose points are four times slower than the formula
    says where they read more than 10 local bytes per application.  Learning from those measurements, with
    features relative to each problem's work, the model ranks this problem's points of kind b far better
    than the formula (which it falls back to without them), and better than with features not put on one scale."""
    from scipy.stats import kendalltau

    from liftpy.model.learned import LearnedModel, feature_vector

    rng = np.random.default_rng(4)
    names, kind_a, kind_b = ("a", "b"), frozenset({"a"}), frozenset({"b"})

    def measured_ms(p, rules, work):
        slow = 4.0 if rules == kind_b and p.features["local_reads"] / work > 10 else 1.0
        return p.seconds * 1e3 * slow * float(rng.uniform(0.9, 1.1))

    def points(work, rules, n):
        out = []
        for ratio in np.exp(rng.uniform(math.log(1), math.log(100), n)):
            p = _prediction(work, float(ratio), rng)
            out.append((p, rules, work, measured_ms(p, rules, work)))
        return out

    own = points(1e9, kind_a, 30)
    other = points(4e9, kind_b, 60) + points(4e9, kind_a, 30)
    test = points(1e9, kind_b, 80)

    def tau(transfer: list, scaled: bool) -> float:
        model = LearnedModel(names)
        for p, rules, work, ms in transfer + own:
            model.add(feature_vector(p, rules, names, work if scaled else None), p.seconds, ms)
        model.fit()
        pred = model.predict_log([feature_vector(p, r, names, w if scaled else None) for p, r, w, _ in test],
                                 [p.seconds for p, _, _, _ in test])
        return kendalltau(pred, [math.log(ms) for *_, ms in test]).statistic

    alone, raw, scaled = tau([], True), tau(other, False), tau(other, True)
    formula = kendalltau([math.log(p.seconds) for p, *_ in test], [math.log(ms) for *_, ms in test]).statistic
    assert alone == pytest.approx(formula)  # kind b never measured here: the formula's ranking
    assert scaled > alone + 0.2
    assert scaled > raw + 0.05


def test_sizes_and_programs_are_checked():
    from liftpy.errors import InputError

    with pytest.raises(InputError, match="positive integer"):
        parse_sizes("M=-3")
    with pytest.raises(InputError, match="NAME=VALUE"):
        parse_sizes("M")
    with pytest.raises(InputError, match="needs a value for"):
        ProgramOperator.of(load_program(str(MATMUL)), {"M": 8})
    with pytest.raises(InputError, match="has no size Q; its sizes are K, M, N"):
        ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8, "K": 8, "Q": 8})
    # a size is a whole number, never truncated; the command line's form is read as well
    with pytest.raises(InputError, match="size N of matmul must be a positive integer, got 8.5"):
        ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8.5, "K": 8})
    with pytest.raises(InputError, match="must be a mapping"):
        ProgramOperator.of(load_program(str(MATMUL)), [("M", 8)])
    assert ProgramOperator.of(load_program(str(MATMUL)), "M=8,N=4,K=2").sizes() == {"M": 8, "N": 4, "K": 2}
    assert ProgramOperator.of(load_program(str(MATMUL)), {"M": np.int64(8), "N": 4, "K": 2}).size_values == (
        ("K", 2), ("M", 8), ("N", 4))
    with pytest.raises(InputError, match="cannot read"):
        load_program("missing.lift")



def test_a_search_that_runs_out_of_valid_points_says_so(tmp_path):
    """A lowered program has few points (its only parameters are the launch's): asked for more, the search
    runs every one of them, says the space is exhausted, and a second run adds nothing and says so again."""
    from liftpy.tuning.operator import program_operator

    op = program_operator(str(ROOT / "examples" / "matmul.py") + ":matmul", {"M": 16, "N": 16, "K": 16})
    for search in ("uniform", "model"):
        db = tmp_path / f"{search}.sqlite"
        kw = dict(references=False, progress=False, repeat=1, warmup=0, search=search)
        first = explore_operator(op, samples=50, db=db, **kw)
        assert first.exhausted and 0 < first.ran < 50, search
        again = explore_operator(op, samples=50, db=db, **kw)
        assert again.exhausted and again.ran == 0 and again.resumed == first.ran, search
        enough = explore_operator(op, samples=first.ran, db=tmp_path / f"{search}-enough.sqlite", **kw)
        assert not enough.exhausted and enough.ran == first.ran and not enough.over_budget, search
    # A budget that runs out first is said apart: the points are there to be run by the next call.
    short = explore_operator(op, samples=50, db=tmp_path / "budget.sqlite", budget_s=1e-3, **kw)
    assert short.over_budget and not short.exhausted and short.ran < first.ran

def _liftpy(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "liftpy", *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def test_cli_explores_a_program_and_rejects_bad_input(tmp_path):
    db = str(tmp_path / "r.sqlite")
    r = _liftpy("explore", str(MATMUL), "-s", "M=16,N=16,K=16", "--samples", "3", "--db", db, "--repeat", "1",
                "--no-references", "--plot", str(tmp_path / "f.png"))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "Pareto frontier" in r.stdout and (tmp_path / "f.png").exists()
    r = _liftpy("show", str(MATMUL), "-s", "M=16,N=16,K=16", "--db", db)
    assert r.returncode == 0 and "kernel void" in r.stdout, r.stderr
    for bad in (["-s", "M=-3,N=4,K=4"], ["-s", "M=4"], ["--budget", "soon", "-s", "M=4,N=4,K=4"]):
        r = _liftpy("explore", str(MATMUL), *bad, "--db", db)
        assert r.returncode != 0
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_register_overflow_is_slower_not_impossible():
    """A group whose private arrays exceed the register file still runs (spilled): the model ranks it
    behind the same work that fits, with a finite time; local memory beyond the device's cannot launch."""
    from liftpy.model.analytical import Machine, predict_kernel

    gpu = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=3e12, cache_bytes_per_s=12e12,
                  local_bytes_per_s=24e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                  items_per_cu=2048, warp=32, is_gpu=True)
    work = {"flops": 2e9, "global_reads": 1e8, "local_reads": 1e9, "copy_bytes": 1e7, "written": 4e6,
            "items": 256.0, "groups": 4096.0, "local_bytes": 8192.0, "input_bytes": 8e6}
    fits = predict_kernel({**work, "private_bytes": 64 * 4}, gpu)
    spills = predict_kernel({**work, "private_bytes": 1024 * 4}, gpu)
    assert fits.occupancy >= 1 and spills.occupancy == 1
    assert math.isfinite(spills.seconds) and spills.seconds > 2 * fits.seconds
    too_much_local = predict_kernel({**work, "private_bytes": 64 * 4, "local_bytes": 1e6}, gpu)
    assert too_much_local.bound == "invalid" and math.isinf(too_much_local.seconds)


def test_a_grid_below_one_wave_runs_at_the_speed_of_its_groups():
    """256 groups on 132 compute units that could hold more: each unit runs its two groups, at the
    speed their warps allow (a register block hides latency with fewer warps), not at the share of slots
    the grid fills."""
    from liftpy.model.analytical import Machine, predict_kernel

    gpu = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=3e12, cache_bytes_per_s=32e12,
                  local_bytes_per_s=32e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                  items_per_cu=2048, warp=32, is_gpu=True)
    work = {"flops": 1.07e9, "global_reads": 1e7, "local_reads": 1e8, "copy_bytes": 1e7, "written": 4e6,
            "items": 64.0, "groups": 256.0, "local_bytes": 5120.0, "input_bytes": 8e6}
    floor = work["flops"] / gpu.fma_per_s + gpu.launch_s
    blocked = predict_kernel({**work, "private_bytes": 128 * 4}, gpu)  # 8 x 8 accumulators and more
    assert blocked.occupancy > 2  # the units could hold more groups than the grid gives them
    assert blocked.seconds <= 1.1 * floor
    # Few private values: two groups of two warps each leave latency half hidden.
    plain = predict_kernel({**work, "private_bytes": 8 * 4}, gpu)
    assert plain.seconds == pytest.approx(2 * (blocked.seconds - gpu.launch_s) + gpu.launch_s, rel=1e-6)
    # A grid of many waves is still counted by waves: twice the groups, twice the time.
    many = {**work, "groups": 132.0 * blocked.occupancy * 4, "flops": work["flops"] * 132 * blocked.occupancy * 4 / 256}
    more = {**many, "groups": many["groups"] * 2, "flops": many["flops"] * 2}
    t1 = predict_kernel({**many, "private_bytes": 512}, gpu).seconds - gpu.launch_s
    t2 = predict_kernel({**more, "private_bytes": 512}, gpu).seconds - gpu.launch_s
    assert t2 == pytest.approx(2 * t1, rel=1e-6)


def test_terms_combine_as_a_smooth_maximum_and_partial_warps_pay_their_cache_lines_once():
    """Two equal terms (compute and cache) take 2 ** (1/4) times either alone.  A group of one work-item
    whose reads each touch their own cache line (coalescing factor 32) pays the 32 lines and the issue of a
    warp of one lane (8x from below a quarter of a warp), not the lines again for every idle lane: a quarter
    of the 32 x 32 a full-warp's penalty applied twice gave."""
    from liftpy.model.analytical import Machine, predict_kernel

    gpu = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=3e12, cache_bytes_per_s=12e12,
                  local_bytes_per_s=24e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                  items_per_cu=2048, warp=32, is_gpu=True)
    base = {"flops": 3.3e9, "global_reads": 0.0, "global_traffic": 0.0, "local_reads": 0.0, "local_traffic": 0.0,
            "copy_bytes": 0.0, "written": 0.0, "items": 256.0, "groups": 132.0 * 64, "local_bytes": 0.0,
            "private_bytes": 64.0, "input_bytes": 0.0}
    alone = predict_kernel(base, gpu).seconds - gpu.launch_s
    both = predict_kernel({**base, "global_reads": 1.2e9, "global_traffic": 1.2e9}, gpu).seconds - gpu.launch_s
    assert both == pytest.approx(2 ** 0.25 * alone, rel=1e-6)

    reads = {**base, "flops": 0.0, "global_reads": 1e8}
    full = predict_kernel({**reads, "global_traffic": 1e8}, gpu)
    lone = predict_kernel({**reads, "global_traffic": 32e8, "items": 1.0, "groups": base["groups"] * 256}, gpu)
    assert full.bound == lone.bound == "cache"
    assert (lone.seconds - gpu.launch_s) / (full.seconds - gpu.launch_s) == pytest.approx(32 * 8, rel=0.05)


def test_other_problems_inform_the_search(tmp_path):
    """An exploration of new sizes is offered the fastest points the store holds for other sizes of the
    same program on this device (those valid for the new sizes become candidates of the model search), and
    their measurements train its learned model."""
    from liftpy.tuning.engine import HINTS_PER_PROBLEM, _LazyIds, _use_other_problems
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces, config_key
    from liftpy.tuning.store import Store

    db = tmp_path / "r.sqlite"
    small = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=6, db=db, search="uniform", progress=False,
                            repeat=1, warmup=0, references=False)
    ok = [r for r in small.records if r.status is Status.OK]
    fastest = sorted(ok, key=lambda r: r.time_ms)[:HINTS_PER_PROBLEM]
    op = program_operator(str(MATMUL), "M=64,N=64,K=32")
    assert op.problem_sizes(small.records[0].layer) == {"M": 32, "N": 32, "K": 16}
    variants = op.variants()
    position = {k: k for k in range(len(variants))}

    class Spy:
        def __init__(self):
            self.hints, self.learned = [], []

        def hint(self, i, config):
            self.hints.append((i, config_key(config)))

        def learn_elsewhere(self, i, config, time_ms, sizes):
            self.learned.append((i, config_key(config), time_ms, sizes))

    spy = Spy()
    with Store(db) as store:
        _use_other_problems(store, spy, op, small.device, position, _LazyIds(variants))
        assert spy.hints == [(r.metrics["variant_index"], config_key(r.config)) for r in fastest]
        assert sorted(spy.learned) == sorted((r.metrics["variant_index"], config_key(r.config), r.time_ms,
                                              {"M": 32, "N": 32, "K": 16}) for r in ok)
        # The problem itself: nothing (its own points are observed, not hinted).
        same = program_operator(str(MATMUL), "M=32,N=32,K=16")
        again = Spy()
        _use_other_problems(store, again, same, small.device, position, _LazyIds(variants))
        assert again.hints == [] and again.learned == []
    gpu = gpu_profile()
    search = ModelSearch(Spaces(variants, op.sizes(), gpu, 0), 0)
    for r in fastest:
        search.hint(r.metrics["variant_index"], r.config)
    near = {(c.variant, config_key(c.config)) for c in search._neighbours}
    valid = {h for h in spy.hints if search.spaces.valid(h[0], dict(h[1]))}
    assert valid and near == valid
    for r in ok:
        search.learn_elsewhere(r.metrics["variant_index"], r.config, r.time_ms, {"M": 32, "N": 32, "K": 16})
    assert len(search.learned.y) == len(ok)
    # With the high-level program, the features are relative to each problem's work (M * N * K
    # applications): a point measured at other sizes is learned on this problem's scale.
    from liftpy.model.learned import feature_vector

    spaces = Spaces(variants, op.sizes(), gpu, 0, program=op.program())
    assert spaces.work() == 64 * 64 * 32 and spaces.work({"M": 32, "N": 32, "K": 16}) == 32 * 32 * 16
    scaled = ModelSearch(spaces, 0)
    assert scaled.work == 64 * 64 * 32
    r = ok[0]
    i = r.metrics["variant_index"]
    scaled.learn_elsewhere(i, r.config, r.time_ms, {"M": 32, "N": 32, "K": 16})
    p = spaces.model(i, {"M": 32, "N": 32, "K": 16}, r.config).predict(r.config)
    assert scaled.learned.X[-1] == feature_vector(p, scaled.rules[i], scaled.learned.rule_names, 32 * 32 * 16)
    assert scaled.learned.X[-1][0] == pytest.approx(math.log1p(p.features["flops"]) - math.log(32 * 32 * 16))


def test_models_of_other_problems_points_are_made_in_processes_and_kept(tmp_path, monkeypatch):
    """``prefetch_at`` makes the models of many points of another problem in worker processes and keeps them
    on disk (and in memory): ``predict_at`` then predicts each without making a model itself, and as it
    would have."""
    import liftpy.model.analytical as analytical
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import PREFETCH_AT_MIN, Spaces

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    op = program_operator(str(MATMUL), "M=64,N=64,K=32")
    other = {"M": 32, "N": 32, "K": 16}
    variants = op.variants()
    gpu = gpu_profile()
    there = Spaces(variants, other, gpu, 0)
    points = [(i, other, c) for i in range(len(variants)) for c in there.sample(i, 2, 0)][:2 * PREFETCH_AT_MIN]
    assert len(points) >= PREFETCH_AT_MIN
    spaces = Spaces(variants, op.sizes(), gpu, 0)
    spaces.prefetch_at(points, jobs=2)

    def refuse(*args, **kwargs):
        raise AssertionError("a model was made after the prefetch")

    monkeypatch.setattr(analytical, "model_code", refuse)
    kept = [spaces.predict_at(i, sizes, c) for i, sizes, c in points]
    monkeypatch.undo()
    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    fresh = Spaces(variants, op.sizes(), gpu, 0)
    made = [fresh.predict_at(i, sizes, c) for i, sizes, c in points]
    assert [p.seconds for p in kept] == pytest.approx([p.seconds for p in made])
    assert [p.features for p in kept] == [p.features for p in made]
    # Without a disk cache the models made in the processes serve from memory.
    uncached = Spaces(variants, op.sizes(), gpu, 0)
    uncached.prefetch_at(points, jobs=2)
    monkeypatch.setattr(analytical, "model_code", refuse)
    assert [uncached.predict_at(i, sizes, c).seconds for i, sizes, c in points] == pytest.approx([p.seconds for p in made])


def test_conv_problem_sizes_are_those_of_layers_with_the_same_kernel():
    from liftpy.tuning.conv import ConvOperator
    from liftpy.tuning.layers import get_layer

    op = ConvOperator.of(get_layer("vgg16:5"))
    assert op.problem_sizes(get_layer("vgg16:7").spec) == {"C": 128, "H": 112, "W": 112, "M": 128}
    assert op.problem_sizes("3,224,224,64,7,2,3") is None  # another kernel: other variants
    assert op.problem_sizes("not a layer") is None


def test_find_variant_by_id():
    from liftpy.tuning.engine import find_variant, variant_id
    from liftpy.tuning.operator import program_operator

    variants = program_operator(str(MATMUL), "M=16,N=16,K=16").variants()
    for v in variants[:: max(1, len(variants) // 8)]:
        assert find_variant(variants, variant_id(v)) is v
    vid = variant_id(variants[0])
    assert find_variant(variants, vid.split("#")[0] + "#0000000000") is None


def test_variant_ids_stay_those_stores_hold():
    """A store keys each point by its variant's id, a digest of the variant's program text (bound names'
    hints included): a change to a rule that renames or reorders anything gives every affected variant a new
    id, and resumed explorations silently re-measure those points.  The ids of the high-level matmul are
    pinned; change the digest only together with a note that older stores' points of those variants are
    measured again."""
    import hashlib

    from liftpy.tuning.engine import variant_id
    from liftpy.tuning.operator import program_operator

    ids = sorted(variant_id(v) for v in program_operator(str(MATMUL), "M=16,N=16,K=16").variants())
    assert len(ids) == 124
    assert "db+glb+splitK+stage+tiled+unroll-item+wrg#e38601c611" in ids
    assert hashlib.sha1("\n".join(ids).encode()).hexdigest()[:16] == "501e2818375154d9"


def test_padded_reduction_compiles_and_validates():
    """K = 27 terms, which k steps of 4 or 8 do not divide: with ``pad_k`` the tiled variants include ones
    whose operands are padded with zeros (a view), and such a point with k step 4 over 27 + 1 terms runs
    and matches the reference.  The convolution asks for them where C*K*K is no multiple of four."""
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.rewrite.explore import ExploreOptions, explore
    from liftpy.tuning.conv import ConvOperator
    from liftpy.tuning.engine import variant_id
    from liftpy.tuning.operator import program_operator

    assert ConvOperator.of("vgg16:0").pad_k and not ConvOperator.of("vgg16:2").pad_k
    assert ConvOperator.of("vgg16:0").variant_key() == ConvOperator.of("4,224,224,64,3,1,1").variant_key() + "|padK"
    op = program_operator(str(MATMUL), "M=16,N=16,K=27")
    variants = explore(load_program(str(MATMUL)), ExploreOptions(pad_k=True, images=False, pipeline=False))
    padded = [v for v in variants if "padK" in variant_id(v) and "splitK" not in variant_id(v)]
    assert padded
    v = padded[0]
    config = {"kp0": 1, "k0": 4, **{p: 4 for p in ("m0", "n0")}, "r0": 2, "r1": 2}
    config = {k: config[k] for k in (str(p) for p in v.params)}
    sizes = {**op.sizes(), **config}
    dev = get_device(None)
    stages = generate_pipeline(v.program, sizes, device_limits(dev), v.placement_map)
    inputs, check = op.prepare(0)
    out = CompiledPipeline(v.program, sizes, dev, v.placement_map, stages=stages).run(*inputs).output
    assert check(out).ok


def test_convolution_with_relu_is_its_own_problem_and_validated_after_the_relu(tmp_path):
    """A layer with a ReLU is a problem of its own in the store (its points never mix with the plain
    convolution's), its check rejects an output without the ReLU, and its tiled variants (the ReLU fused
    into the tiles' write-out and split-K's sum kernel) run correctly."""
    from liftpy.tuning.conv import ConvOperator, layer_inputs

    op = ConvOperator.of("8,12,12,8,3,1,1", relu=True)
    plain = ConvOperator.of("8,12,12,8,3,1,1")
    assert op.problem == plain.problem + "+relu" and op.variant_key() == plain.variant_key() + "|relu"
    assert op.problem_sizes("16,12,12,8,3,1,1+relu") == {"C": 16, "H": 12, "W": 12, "M": 8}
    assert op.problem_sizes(plain.problem) is None and plain.problem_sizes(op.problem) is None
    inputs, check = op.prepare(0)
    exp = layer_inputs(op.layer, 0)[1].expected  # [M][OH][OW], bias included
    as_program = lambda a: np.ascontiguousarray(a.transpose(1, 2, 0))[..., None].astype(np.float32)  # noqa: E731
    assert (exp < 0).any() and not check(as_program(exp)).ok
    assert check(as_program(np.maximum(exp, 0.0))).ok
    ex = explore_operator(op, samples=4, db=tmp_path / "r.sqlite", search="model", progress=False, repeat=1,
                          warmup=0, references=False, rules=("tile2DReduce|tile2DReduceStrided",))
    points = [r for r in ex.records if not r.is_reference]
    assert len(points) == 4 and all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert all(r.layer == op.problem for r in points)


def test_relu_after_the_dot_product_is_fused_into_tiles_and_the_sum_kernel():
    """map(relu, dot) still tiles: the ReLU is applied as a tile writes its results out, and after the
    partial sums are added in split-K's sum kernel; both kinds of point match the reference on the device."""
    from liftpy import multAndSumUp, relu
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.rewrite.explore import ExploreOptions, explore
    from liftpy.tuning.engine import variant_id

    prog = make_program("mmrelu", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))], lambda A, B: map(
        lambda row: map(lambda col: map(relu, reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, lzip(row, col))),
                        transpose(B)), A))
    variants = {variant_id(v): v for v in explore(prog, ExploreOptions(images=False))}
    rng = np.random.default_rng(3)
    A = rng.standard_normal((16, 16)).astype(np.float32)
    B = rng.standard_normal((16, 16)).astype(np.float32)
    want = np.maximum(A.astype(np.float64) @ B, 0.0)
    dev = get_device(None)
    for kind, config in (("stage+tiled+unroll-item+wrg", {"m0": 8, "n0": 8, "k0": 4, "r0": 2, "r1": 2}),
                         ("glb+splitK+stage+tiled+unroll-item+wrg", {"ks0": 8, "m0": 8, "n0": 8, "k0": 4, "r0": 2, "r1": 2})):
        v = next(v for vid, v in variants.items() if vid.split("#")[0] == kind)
        sizes_ = {"M": 16, "N": 16, "K": 16, **config}
        stages = generate_pipeline(v.program, sizes_, device_limits(dev), v.placement_map)
        out = CompiledPipeline(v.program, sizes_, dev, v.placement_map, stages=stages).run(A, B).output
        assert np.allclose(out.reshape(16, 16), want, rtol=1e-4, atol=1e-4), kind
        assert (out >= 0).all() and (want == 0).any()


SMALL = {"M": 32, "N": 32, "K": 16}


def _saved_batches(db):
    import json
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return [(seed_rules, state, json.loads(points))
                for seed_rules, state, points in con.execute("SELECT settings, state, points FROM next_batches")]
    finally:
        con.close()


def _new_points(before, after):
    """The points of ``after`` not in ``before``, in the order they were stored."""
    old = {(r.variant, tuple(sorted(r.config.items()))) for r in before}
    return [(r.variant, r.config) for r in after if not r.is_reference and (r.variant, tuple(sorted(r.config.items()))) not in old]


def test_resumed_model_search_starts_with_the_batch_the_last_run_saved(tmp_path, monkeypatch):
    """A model search that ends saves the batch its strategy proposes next; the run that resumes it measures
    that batch first, before its own strategy proposes anything, with the kernels generated when the batch
    was saved.  (Compared with the first run's own proposal: a run that went on in one go would propose the
    same only if every time measured were the same, and measured times vary.)"""
    from liftpy.tuning import search as search_module
    from liftpy.tuning.search import config_key

    proposals = []
    propose = search_module.ModelSearch.propose

    def spy(self, n, taken):
        out = propose(self, n, taken)
        proposals.append(out)
        return out

    monkeypatch.setattr(search_module.ModelSearch, "propose", spy)
    db = tmp_path / "r.sqlite"
    kw = dict(db=db, search="model", progress=False, repeat=1, warmup=0, references=False, batch=3, jobs=2)
    first = explore_program(MATMUL, SMALL, samples=6, **kw)
    assert first.ran == 6 and first.from_saved_batch == 0
    # The first point of the saved batch was built on the device too (its binary in pyopencl's cache).
    assert first.prebuilt == 1
    [(_, _, saved)] = _saved_batches(db)
    # No rule filter: a variant's index in the derivation order is its index in the search.
    assert [(p["index"], config_key(p["config"])) for p in saved] == [(i, config_key(c)) for i, c in proposals[-1]]
    assert len(saved) == 3
    proposals.clear()
    again = explore_program(MATMUL, SMALL, samples=8, **kw)
    assert again.ran == 2 and again.from_saved_batch == 2
    assert _new_points(first.records, again.records) == [(p["variant"], p["config"]) for p in saved[:2]]
    assert len(proposals) == 1  # only the batch this run saves in turn: its first batch was not proposed
    new = [r for r in again.records if (r.variant, r.config) in [(p["variant"], p["config"]) for p in saved]]
    assert all(r.metrics.get("codegen_ahead") for r in new), [r.metrics for r in new]
    [(_, _, resaved)] = _saved_batches(db)
    assert [(p["index"], config_key(p["config"])) for p in resaved] == [(i, config_key(c)) for i, c in proposals[-1]]


def test_saved_batch_is_unused_once_the_store_changed_or_the_search_differs(tmp_path):
    """A saved batch is what the last run's strategy, knowing exactly the finished points then stored, would
    measure next: a point measured again since (by another exploration), or a search with another seed,
    does not start with it."""
    import dataclasses

    from liftpy.tuning.store import Store

    db = tmp_path / "r.sqlite"
    kw = dict(db=db, search="model", progress=False, repeat=1, warmup=0, references=False, batch=2)
    first = explore_program(MATMUL, SMALL, samples=4, **kw)
    [(_, state, saved)] = _saved_batches(db)
    other_seed = explore_program(MATMUL, SMALL, samples=5, seed=1, **kw)
    assert other_seed.from_saved_batch == 0 and other_seed.ran == 1
    # The other seed's run changed the store: the first seed's batch is stale now.
    assert sum(s == state for _, s, _ in _saved_batches(db)) == 1
    again = explore_program(MATMUL, SMALL, samples=6, **kw)
    assert again.from_saved_batch == 0 and again.ran == 1
    with Store(db) as store:
        latest = store.records()[-1]
        assert latest.status is Status.OK
        resumed = explore_program(MATMUL, SMALL, samples=7, **kw)
        assert resumed.from_saved_batch == 1  # nothing changed since the last run saved its batch
        store.put(dataclasses.replace(latest, time_ms=latest.time_ms * 2, finished_at=None))
    changed = explore_program(MATMUL, SMALL, samples=8, **kw)
    assert changed.from_saved_batch == 0 and changed.ran == 1


def test_preparing_a_proposal_ahead_does_not_change_it():
    """``ModelSearch.prepare`` (a resumed run's screening and refit, done while its first batch runs) leaves
    the next proposal as it would have been, although points are observed after it."""
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces, config_key

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


def test_model_search_batch_spreads_over_kinds_of_variant():
    """The best ranked candidates fill a batch with at most a quarter of it from one kind of variant while
    other kinds have candidates: a formula that overrates one kind cannot spend a whole batch on it."""
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces

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
    from liftpy.model.access import AccessFactors
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces, config_key

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


def test_model_search_refines_its_candidates_on_worker_processes_to_the_same_proposals(monkeypatch):
    """With worker processes (``Spaces.use_workers``: an exploration's code-generation workers, idle while its
    strategy proposes), the candidates a ranking is about to refine are lowered there, several at once; the
    ranking then refines them one by one from the cache, so it proposes the same batches as without."""
    from liftpy.tuning import search as search_module
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces
    from liftpy.tuning.worker import WorkerPool

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")  # every access computed, none read from disk
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    gpu = gpu_profile()
    here = []
    real = search_module._access_of
    monkeypatch.setattr(search_module, "_access_of", lambda args: here.append(1) or real(args))

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
    with WorkerPool(3, default_timeout_s=120) as pool:
        spaces.use_workers(pool.run_all, pool.width)
        assert spaces.prefetching() == 3
        helped = batches(spaces)
    assert helped == alone
    assert in_driver > 6 and len(here) < in_driver / 2  # most candidates were lowered by the workers


def test_model_search_hands_its_workers_rounds_of_one_unlowered_candidate_each(monkeypatch):
    """The candidates refined ahead go to the workers in rounds of at most one per worker, each round only
    candidates not lowered yet (the ranking waits for a round's slowest lowering)."""
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces
    from liftpy.tuning import search as search_module

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    spaces = Spaces(variants, op.sizes(), gpu_profile(), 0)
    rounds = []

    def run_all(fn, args):  # four "workers", computed here
        if fn == search_module.SCREEN_TASK:
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


def _workers_here(task: str, pick, seen: list, inside: list):
    """A ``run_all`` for ``Spaces.use_workers`` that computes each call in this process: ``inside[0]`` is True
    meanwhile, and ``pick`` of each argument of a ``task`` call is added to ``seen``."""
    from liftpy.tuning.worker import _resolve

    def run_all(fn, args):
        inside[0] = True
        try:
            if fn == task:
                seen.extend(pick(a) for a in args)
            return [(True, _resolve(fn)(a)) for a in args]
        finally:
            inside[0] = False

    return run_all


def test_model_search_screens_its_variants_on_its_workers_to_the_same_proposals(monkeypatch):
    """A fresh problem's screening (each variant's space inferred and solved, its probe lowered, a pool of
    its configurations predicted) goes to the workers of ``use_workers``, several variants at once; their
    spaces and models come back with the screens, so the driver infers none itself, and the proposals are
    those screened in the driver."""
    import liftpy.constraints.infer as infer
    from liftpy.tuning import search as search_module
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])[:8]  # a few: each screening costs
    inferred, inside = [], [False]
    real = infer.variant_space
    monkeypatch.setattr(infer, "variant_space", lambda *a, **k: inferred.append(inside[0]) or real(*a, **k))
    screened = []
    run_all = _workers_here(search_module.SCREEN_TASK, lambda a: a[1], screened, inside)

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


def test_model_search_expands_onto_unscreened_variants_on_its_workers_to_the_same_proposals(monkeypatch):
    """Expanding the fastest points meets sibling variants and reduced forms that were never screened (a search
    over thousands of variants screens a hundred at first); their spaces and models are made on the workers of
    ``use_workers`` (``Spaces.prefetch_models``), not one after another in the driver, and the proposals are
    those made in the driver."""
    import liftpy.constraints.infer as infer
    from liftpy.tuning import search as search_module
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import program_operator
    from liftpy.tuning.search import ModelSearch, Spaces, config_key

    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    op = program_operator(str(MATMUL), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce|tile2DReduceStrided"])
    inferred, inside = [], [False]
    real = infer.variant_space
    monkeypatch.setattr(infer, "variant_space", lambda v, *a, **k: inferred.append((id(v), inside[0])) or real(v, *a, **k))
    modelled = []
    run_all = _workers_here(search_module.MODEL_TASK, lambda a: id(a[0]), modelled, inside)

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


def test_a_worker_pool_runs_a_function_on_many_arguments_in_their_order():
    """``WorkerPool.run_all``: results in the order of the arguments, a failed call as ``(False, None)``."""
    from liftpy.tuning.worker import WorkerPool

    with WorkerPool(2, default_timeout_s=60) as pool:
        assert pool.width == 2
        assert pool.run_all("math:sqrt", [4.0, -1.0, 9.0, 16.0]) == [(True, 2.0), (False, None), (True, 3.0), (True, 4.0)]



def test_an_on_demand_pool_starts_its_processes_only_for_enough_calls_at_once():
    """``OnDemandPool``: fewer calls than ``least`` run in this process, in order, a failing one as
    ``(False, None)`` as a worker's would be; the first batch of ``least`` or more starts the pool, which then
    takes every later call, however few."""
    from liftpy.tuning.worker import OnDemandPool

    started, handed = [], []

    class Fake:
        def run_all(self, fn, args):
            handed.append(list(args))
            return [(True, ("pool", a)) for a in args]

        def close(self):
            started.append("closed")

    def start():
        started.append("started")
        return Fake()

    with OnDemandPool(start, 3, least=3) as pool:
        assert pool.width == 3
        assert pool.run_all("math:sqrt", [4.0, 9.0]) == [(True, 2.0), (True, 3.0)]
        assert pool.run_all("math:sqrt", [-1.0, 16.0]) == [(False, None), (True, 4.0)]
        assert not started and not handed
        assert pool.run_all("math:sqrt", [1.0, 2.0, 3.0]) == [(True, ("pool", a)) for a in (1.0, 2.0, 3.0)]
        assert pool.run_all("math:sqrt", [5.0]) == [(True, ("pool", 5.0))]
    assert started == ["started", "closed"] and handed == [[1.0, 2.0, 3.0], [5.0]]

def test_a_polled_worker_pool_hands_control_back_while_its_workers_are_busy():
    """``imap_unordered(poll=...)``: while ``poll`` says so, a round in which no task finished yields None
    instead of waiting for the busy workers; the outcomes come as before."""
    from liftpy.tuning.worker import Task, WorkerPool

    with WorkerPool(1, default_timeout_s=60) as pool:
        pool.run(Task("math:sqrt", (1.0,)))  # started: the rounds below wait for the task, not the start-up
        got = []
        for item in pool.imap_unordered([Task("time:sleep", (0.3,), tag="slept")], poll=lambda: True):
            got.append(item)
            time.sleep(0.01)
        assert got[0] is None and got.count(None) == len(got) - 1
        assert got[-1][0].tag == "slept" and got[-1][1].ok
        # Without poll (or while it says no) the pool waits: only the outcome comes.
        got = list(pool.imap_unordered([Task("time:sleep", (0.05,), tag="slept")], poll=lambda: False))
        assert len(got) == 1 and got[0][1].ok


def test_a_worker_takes_its_next_task_before_the_caller_has_its_outcome():
    """The task drawn already goes to the worker that finished before the caller gets that worker's outcome:
    the one measuring worker runs the next point while the exploration stores the last one's record."""
    from liftpy.tuning.worker import Task, WorkerPool

    with WorkerPool(1, default_timeout_s=60) as pool:
        pool.run(Task("math:sqrt", (1.0,)))
        got = []
        for task, outcome in pool.imap_unordered([Task("time:sleep", (0.2,)), Task("time:time")]):
            got.append((time.time(), outcome.result))
            time.sleep(0.5)  # the caller's bookkeeping
        (received, _), (_, ran_at) = got
        assert ran_at < received + 0.4


def test_an_exploration_without_jobs_uses_the_cores_a_gpu_leaves_free_and_one_beside_a_cpu_device(monkeypatch):
    """``default_jobs``: a device whose kernels run on this host's CPUs (PoCL) gets one code-generation process,
    whose cores would otherwise be taken from the kernels being timed; a GPU one per core but one."""
    import os
    from dataclasses import replace

    from liftpy.host.device import device_info
    from liftpy.tuning import engine

    info = device_info(None)
    cpu, gpu = replace(info, type="CPU"), replace(info, type="GPU")
    assert cpu.on_host_cpu and not gpu.on_host_cpu
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert engine.default_jobs(cpu) == 1 and engine.default_jobs(gpu) == 15
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert engine.default_jobs(gpu) == 1


class _FakePools:
    """A compile pool and a measuring pool in this process that log what they are handed and finish, for
    ``evaluate_points``: the compile pool one point per round, with an empty round after each when polled."""

    def __init__(self, failing=(), measure_s=0.0, slow=()):
        self.log, self.failing, self.measure_s, self.slow = [], set(failing), measure_s, set(slow)
        self.closed, self.limits = [], []

    def limit_busy(self, seconds, reason):
        self.limits.append((seconds, reason))
        return len(self.slow)

    def compiles(self, tasks, poll=None):
        """Compiles in order, but the points in ``slow`` finish only after all others: stopped (a timeout
        with the reason) if they were limited by then, else compiled."""
        from liftpy.tuning.store import Status
        from liftpy.tuning.worker import Outcome

        def outcome(k):
            ok = k not in self.failing
            return Outcome(Status.OK if ok else Status.COMPILE_ERROR,
                           {"stages": [f"kernel {k}"], "codegen_s": 0.01} if ok else None, message="no", elapsed_s=0.1)

        try:
            held = []
            for t in tasks:
                k = t.tag[0]
                if k in self.slow:
                    held.append(t)
                    continue
                self.log.append(("compiled", k))
                yield t, outcome(k)
                if poll is not None and poll():
                    yield None
            while poll is not None and poll():  # the points compiled are taken before the pool waits
                yield None
            for t in held:
                k = t.tag[0]
                self.log.append(("stopped" if self.limits else "compiled", k))
                yield t, (Outcome(Status.TIMEOUT, message=f"{self.limits[-1][1]} (stopped after 5.0 s)")
                          if self.limits else outcome(k))
        finally:
            self.closed.append("compile")

    def measures(self, tasks, poll=None):
        from liftpy.tuning.store import Status
        from liftpy.tuning.worker import Outcome

        for t in tasks:
            self.log.append(("measured", t.args[0]["stages"][0]))
            time.sleep(self.measure_s)
            yield t, Outcome(Status.OK, {"time_ms": 1.0})


def _evaluate_with(pools, n, deadline=None, **kw):
    from types import SimpleNamespace

    from liftpy.tuning import evaluate as ev
    from liftpy.tuning.worker import Task

    variants = [SimpleNamespace(program=None, placement_map=None)] * n
    chosen = [(k, {"x": k}) for k in range(n)]
    compile_pool = SimpleNamespace(imap_unordered=pools.compiles, limit_busy=pools.limit_busy)
    measure_pool = SimpleNamespace(imap_unordered=pools.measures)
    return list(ev.evaluate_points(None, variants, chosen, compile_pool, measure_pool, None, 0, 1, 0, None, None, Task,
                                   deadline=deadline, **kw))


def test_points_are_measured_as_they_are_compiled_not_after_the_whole_batch():
    """The measuring worker gets each point as soon as it and the points before it are compiled (a uniform
    search's one batch used to be compiled whole before anything was measured, stored or shown), in the
    points' order; a point whose compile failed is reported and skipped."""
    pools = _FakePools(failing={2})
    got = _evaluate_with(pools, 5)
    assert [(i, o.ok) for (i, _), o in got] == [(0, True), (1, True), (2, False), (3, True), (4, True)]
    log = pools.log
    assert log.index(("measured", "kernel 0")) < log.index(("compiled", 1))
    assert [e[1] for e in log if e[0] == "measured"] == ["kernel 0", "kernel 1", "kernel 3", "kernel 4"]
    assert pools.closed == ["compile"]


def test_a_batch_does_not_wait_on_end_for_a_point_still_compiling_after_the_rest_was_measured():
    """Points go to the measuring worker as they are compiled (the first of the chosen order among those
    ready), so a slow compile holds back no point behind it; once only slow ones are left, every other
    point on its way to the device, they are given ``straggler_s`` more (or twice the batch's longest
    compile step), then stopped and reported as timeouts that say why.  With ``straggler_s=None`` they are
    waited for and measured."""
    from liftpy.tuning import evaluate as ev
    from liftpy.tuning.store import Status

    pools = _FakePools(slow={1})
    got = _evaluate_with(pools, 4, straggler_s=3.0)
    assert [e for e in pools.log if e[0] == "measured"] == [("measured", f"kernel {k}") for k in (0, 2, 3)]
    assert pools.limits == [(3.0, ev.STRAGGLER_REASON.format(s=3.0))]
    (late, outcome), = [(i, o) for (i, _), o in got if not o.ok]
    assert late == 1 and outcome.status is Status.TIMEOUT and "after the rest of the batch" in outcome.message
    assert pools.log.index(("stopped", 1)) > pools.log.index(("measured", "kernel 3"))

    waited = _FakePools(slow={1})
    got = _evaluate_with(waited, 4, straggler_s=None)
    assert waited.limits == [] and all(o.ok for _, o in got) and len(got) == 4
    assert [e[1] for e in waited.log if e[0] == "measured"] == ["kernel 0", "kernel 2", "kernel 3", "kernel 1"]
    # a batch whose points all compile at once, none measured yet, is not limited: nothing went on without them
    alone = _FakePools(slow={0})
    assert [o.ok for _, o in _evaluate_with(alone, 1, straggler_s=3.0)] == [True] and alone.limits == []
    # the grace is twice the batch's longest compile step where that is longer
    longer = _FakePools(slow={2})
    _evaluate_with(longer, 3, straggler_s=0.05)
    assert longer.limits[0][0] == 0.2


def test_no_point_is_handed_to_the_measuring_worker_after_the_deadline():
    """``deadline`` (the exploration's budget): the point measuring then finishes, no other starts, and the
    compile workers' points for later are dropped."""
    pools = _FakePools(measure_s=0.2)
    got = _evaluate_with(pools, 5, deadline=time.time() + 0.1)
    assert len(got) == 1 and got[0][1].ok
    assert pools.closed == ["compile"]
    assert _evaluate_with(_FakePools(), 3, deadline=time.time() - 1) == []


def test_compile_workers_can_build_the_kernels_ahead_into_the_compilers_caches(monkeypatch):
    """``build_ahead`` (GPU devices: ``explore_operator`` turns it on where builds do not share the CPUs with the
    kernels being timed): the compile workers build each point's kernels on the device after generating them,
    the measuring worker then measures the same points with the same outcomes; a build that fails ahead is
    left to the measuring worker."""
    from liftpy.host.device import device_info
    from liftpy.host.profile import resolve_profile
    from liftpy.tuning import evaluate as ev
    from liftpy.tuning.search import Spaces
    from liftpy.tuning.worker import Task

    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8})
    variants = op.variants()
    index = device_info(None).index
    limits = resolve_profile(index, None).limits()
    spaces = Spaces(variants, op.sizes(), resolve_profile(index, None), 0)
    chosen = [(i, c) for i in range(min(len(variants), 6)) for c in spaces.sample(i, 1, 0)][:3]
    assert len(chosen) == 3
    outcomes = {}
    for ahead in (False, True):
        with ev.compile_pool(2, 120) as compiling, ev.measure_pool(index, 120, (op, 0)) as measuring:
            got = list(ev.evaluate_points(op, variants, chosen, compiling, measuring, index, 0, 1, 0, limits, None, Task,
                                          build_ahead=ahead))
        outcomes[ahead] = sorted((i, tuple(sorted(c.items())), o.status.value) for (i, c), o in got)
        # the compile workers' build time is in each result where they built the kernels
        assert all(("prebuild_s" in o.result) == ahead and o.result.get("prebuild_s", 1.0) > 0 for _, o in got)
    assert outcomes[True] == outcomes[False] and all(s == "ok" for *_, s in outcomes[True])
    # In one process: the kernels generated are those compile_point generates, built once; a failed build is passed over.
    built = []
    monkeypatch.setattr(ev, "_build", lambda payload: built.append(payload["stages"]) or (_ for _ in ()).throw(ev.LiftError("no")))
    i, c = chosen[0]
    payload = ev.point_payload(op, variants[i].program, variants[i].placement_map, c, index, 0, 1, 0, limits, None)
    out = ev.compile_and_build_point(payload)
    assert [k.source for k, _ in out["stages"]] == [k.source for k, _ in ev.compile_point(payload)["stages"]]
    assert len(built) == 1 and built[0] is out["stages"]
