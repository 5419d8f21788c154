"""Explorations through the generic engine (issue 12): any program explored and stored, a uniform search's plan
kept for the run that resumes it, slow points aborted, a search that runs out of points, other problems'
points, a convolution with a ReLU; and kernels the engine's rules make, run on the device.

The explorations' workers run in this process (``pools_here`` in conftest.py): what is tested is what the
engine does with their outcomes.  tests/test_engine_workers.py and tests/test_engine_resume.py start real
worker processes."""

import math

import numpy as np
import pytest

from engine_helpers import MATMUL, ROOT, M, N, K, gpu_profile, twice_matmul
from liftpy import Array, Float, make_program, map, reduce, transpose
from liftpy import zip as lzip
from liftpy.explore import explore_operator, explore_program
from liftpy.explore.operator import ProgramOperator, load_program
from liftpy.results.store import Status, canonical_json
from liftpy.search import ModelSearch, UniformSearch

pytestmark = pytest.mark.usefixtures("pools_here")


def test_a_resumed_uniform_search_reads_its_plan_instead_of_drawing_it_again(tmp_path, monkeypatch):
    """A uniform search's points (drawn from every variant's solved space: seconds for a convolution layer)
    are kept on disk; the run that resumes it reads them, and measures only the ones the store lacks."""
    from liftpy import search as search_module

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8})
    kw = dict(db=tmp_path / "r.sqlite", search=UniformSearch, progress=False, repeat=1, warmup=0, references=False, seed=3)
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


def test_abort_factor_stops_slow_points(tmp_path):
    op = ProgramOperator.of(load_program(str(MATMUL)), {"M": 32, "N": 32, "K": 32})
    ex = explore_operator(op, samples=10, db=tmp_path / "r.sqlite", search=UniformSearch, progress=False, repeat=2,
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
    ex = explore_operator(op, samples=6, db=tmp_path / "r.sqlite", search=UniformSearch, progress=False, repeat=2,
                          warmup=0, references=False, abort_factor=1e-6, seed=5, jobs=1)
    statuses = [r.status for r in ex.records if not r.is_reference]
    assert statuses[:2] == [Status.OK, Status.OK] and statuses[2:] == [Status.ABORTED] * (len(statuses) - 2)


def test_a_search_that_runs_out_of_valid_points_says_so(tmp_path):
    """A lowered program has few points (its only parameters are the launch's): asked for more, the search
    runs every one of them, says the space is exhausted, and a second run adds nothing and says so again."""
    from liftpy.explore.operator import program_operator

    op = program_operator(str(ROOT / "examples" / "matmul.py") + ":matmul", {"M": 16, "N": 16, "K": 16})
    for search in (UniformSearch, ModelSearch):
        db = tmp_path / f"{search.name}.sqlite"
        kw = dict(references=False, progress=False, repeat=1, warmup=0, search=search)
        first = explore_operator(op, samples=50, db=db, **kw)
        assert first.exhausted and 0 < first.ran < 50, search
        again = explore_operator(op, samples=50, db=db, **kw)
        assert again.exhausted and again.ran == 0 and again.resumed == first.ran, search
        enough = explore_operator(op, samples=first.ran, db=tmp_path / f"{search.name}-enough.sqlite", **kw)
        assert not enough.exhausted and enough.ran == first.ran and not enough.over_budget, search
    # A budget that runs out first is said apart: the points are there to be run by the next call.
    short = explore_operator(op, samples=50, db=tmp_path / "budget.sqlite", budget_s=1e-3, **kw)
    assert short.over_budget and not short.exhausted and short.ran < first.ran


@pytest.mark.slow
def test_other_problems_inform_the_search(tmp_path):
    """An exploration of new sizes is offered the fastest points the store holds for other sizes of the
    same program on this device (those valid for the new sizes become candidates of the model search), and
    their measurements train its learned model."""
    from liftpy.explore.operator import program_operator
    from liftpy.explore.transfer import HINTS_PER_PROBLEM, use_other_problems
    from liftpy.results.store import config_key
    from liftpy.results.store import Store
    from liftpy.search import ModelSearch, Spaces
    from liftpy.search.variants import VariantIds

    db = tmp_path / "r.sqlite"
    small = explore_program(MATMUL, {"M": 32, "N": 32, "K": 16}, samples=6, db=db, search=UniformSearch, progress=False,
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
        use_other_problems(store, spy, op, small.device, position, VariantIds(variants))
        assert spy.hints == [(r.metrics["variant_index"], config_key(r.config)) for r in fastest]
        assert sorted(spy.learned) == sorted((r.metrics["variant_index"], config_key(r.config), r.time_ms,
                                              {"M": 32, "N": 32, "K": 16}) for r in ok)
        # The problem itself: nothing (its own points are observed, not hinted).
        same = program_operator(str(MATMUL), "M=32,N=32,K=16")
        again = Spy()
        use_other_problems(store, again, same, small.device, position, VariantIds(variants))
        assert again.hints == [] and again.learned == []
    # A problem of another program with the same sizes (its own variants): its fastest points are offered to
    # this program's variants of the same kind and parameters, and teach nothing (their models are another
    # program's).
    from types import SimpleNamespace

    from liftpy.explore.transfer import KINDRED_HINTS
    from liftpy.search.variants import variant_tags

    twice = explore_operator(ProgramOperator.of(twice_matmul(), {"M": 32, "N": 32, "K": 16}), samples=4,
                             db=tmp_path / "twice.sqlite", search=UniformSearch, progress=False, repeat=1, warmup=0,
                             references=False)
    twice_ok = sorted((r for r in twice.records if r.status is Status.OK), key=lambda r: r.time_ms)
    kindred = Spy()
    kindred.spaces = SimpleNamespace(variants=variants)
    with Store(tmp_path / "twice.sqlite") as store:
        use_other_problems(store, kindred, op, small.device, position, VariantIds(variants))
    assert kindred.hints and kindred.learned == []
    offered = {(r.variant.split("#")[0], config_key(r.config)) for r in twice_ok[:KINDRED_HINTS]}
    for i, config in kindred.hints:
        assert (variant_tags(variants[i]), config) in offered
        assert {str(p) for p in variants[i].params} == {k for k, _ in config}
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


@pytest.mark.slow
def test_convolution_with_relu_is_its_own_problem_and_validated_after_the_relu(tmp_path):
    """A layer with a ReLU is a problem of its own in the store (its points never mix with the plain
    convolution's), its check rejects an output without the ReLU, and its tiled variants (the ReLU fused
    into the tiles' write-out and split-K's sum kernel) run correctly."""
    from liftpy.explore.conv import ConvOperator
    from liftpy.operators.conv import layer_inputs

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
    ex = explore_operator(op, samples=4, db=tmp_path / "r.sqlite", search=ModelSearch, progress=False, repeat=1,
                          warmup=0, references=False, rules=("tile2DReduce|tile2DReduceStrided",))
    points = [r for r in ex.records if not r.is_reference]
    assert len(points) == 4 and all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert all(r.layer == op.problem for r in points)


def test_padded_reduction_compiles_and_validates():
    """K = 27 terms, which k steps of 4 or 8 do not divide: with ``pad_k`` the tiled variants include ones
    whose operands are padded with zeros (a view), and such a point with k step 4 over 27 + 1 terms runs
    and matches the reference.  The convolution asks for them where C*K*K is no multiple of four."""
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.explore.conv import ConvOperator
    from liftpy.explore.operator import program_operator
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.rewrite.explore import ExploreOptions, explore
    from liftpy.search import variant_id

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


def test_relu_after_the_dot_product_is_fused_into_tiles_and_the_sum_kernel():
    """map(relu, dot) still tiles: the ReLU is applied as a tile writes its results out, and after the
    partial sums are added in split-K's sum kernel; both kinds of point match the reference on the device."""
    from liftpy import multAndSumUp, relu
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline, device_limits
    from liftpy.rewrite.explore import ExploreOptions, explore
    from liftpy.search import variant_id

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


def test_kindred_hints_come_from_the_problems_measured_last():
    """Hints from problems of other variants come from the ``KINDRED_PROBLEMS`` measured last (a network's
    later layers would otherwise check hints from every layer before them), the fastest ``KINDRED_HINTS`` of
    each, offered to the variants of their kind and parameter names."""
    from types import SimpleNamespace

    from liftpy.explore.transfer import KINDRED_HINTS, KINDRED_PROBLEMS, KINDRED_VARIANTS, _kindred_hints
    from liftpy.search.variants import variant_tags

    variants = ProgramOperator.of(load_program(str(MATMUL)), {"M": 64, "N": 64, "K": 32}).variants()
    v = next(v for v in variants if v.params)
    tags, names = variant_tags(v), sorted(str(p) for p in v.params)
    kind = [i for i, w in enumerate(variants) if variant_tags(w) == tags and sorted(str(p) for p in w.params) == names]
    config = dict.fromkeys(names, 4)
    kindred = {f"p{k}": [SimpleNamespace(variant=f"{tags}#{k:010d}", config=config, time_ms=1.0 + j, finished_at=100.0 * k + j)
                         for j in range(3)] for k in range(10)}
    kindred["other-kind"] = [SimpleNamespace(variant="nosuchkind#0", config=config, time_ms=0.1, finished_at=1e6)]
    hints = _kindred_hints(SimpleNamespace(spaces=SimpleNamespace(variants=variants)), kindred)
    per_problem = KINDRED_HINTS * min(KINDRED_VARIANTS, len(kind))
    assert len(hints) == (KINDRED_PROBLEMS - 1) * per_problem  # the last measured is of no kind here
    assert {i for i, _ in hints} <= set(kind) and all(c == config for _, c in hints)
