"""The models a search ranks points by (issue 12): the learned correction of the analytical formula (which
kinds of variant it corrects, features relative to a problem's work, what other problems teach) and the
formula's own terms (register spills, grids below one wave, the smooth maximum of its terms)."""

import math

import numpy as np
import pytest


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


def test_every_work_group_costs_its_unit_time():
    """Adding two 2^26-float arrays on an H200 took 1.27 ms in groups of 32 items and 0.20 ms in groups of
    256 with float4: starting a group costs a compute unit some 84 ns whatever the group does
    (``GPU_GROUP_S``).  The model predicts that, within a fifth, where every group size predicted the DRAM
    time before; a GPU profile has the cost, a CPU's does not (its operation counts carry its own)."""
    from liftpy.host.profile import DeviceProfile
    from liftpy.model.analytical import GPU_GROUP_S, Machine, predict_kernel

    gpu = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=4.2e12, cache_bytes_per_s=16e12,
                  local_bytes_per_s=32e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                  items_per_cu=2048, warp=32, is_gpu=True, group_s=GPU_GROUP_S)
    n = float(1 << 26)
    add = {"flops": n, "global_reads": 8 * n, "global_traffic": 8 * n, "local_reads": 0.0, "copy_bytes": 0.0,
           "written": 4 * n, "local_bytes": 0.0, "private_bytes": 32.0, "input_bytes": 8 * n}
    small = predict_kernel({**add, "items": 32.0, "groups": n / 32}, gpu)
    wide = predict_kernel({**add, "items": 256.0, "groups": n / 4 / 256}, gpu)  # float4 lanes: a quarter the items
    assert small.bound == "groups" and small.seconds == pytest.approx(1.27e-3, rel=0.2)
    assert wide.bound == "dram" and wide.seconds == pytest.approx(0.20e-3, rel=0.2)
    flat = predict_kernel({**add, "items": 32.0, "groups": n / 32}, Machine(**{**gpu.__dict__, "group_s": 0.0}))
    assert flat.seconds < 0.25 * small.seconds  # what the model said before: the DRAM time at any group size
    profile = DeviceProfile("test GPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                            device_type="GPU")
    assert Machine.from_profile(profile).group_s == GPU_GROUP_S
    cpu = DeviceProfile("test CPU", "test", max_work_group_size=4096, max_work_item_sizes=(4096, 4096, 4096),
                        device_type="CPU")
    assert Machine.from_profile(cpu).group_s == 0.0


def test_narrow_loads_take_longer_than_the_dram_time():
    """Adding two 2^26 arrays on an H200 in groups of 256 items (benchmarks/results/h200-halfload.json, the
    roofline store): one float an item 0.231 ms, one half 0.191, two halves at once about 0.12, four halves
    0.111, four floats 0.196.  The bytes a warp keeps in flight bound the bandwidth (``GPU_LOAD_LATENCY_S``);
    with the DRAM and group terms alone one float an item was predicted within a tenth of four.  Predicted
    within a fifth, in the order measured."""
    from liftpy.host.profile import DeviceProfile
    from liftpy.model.analytical import GPU_GROUP_S, GPU_LOAD_LATENCY_S, Machine, predict_kernel

    gpu = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=4.2e12, cache_bytes_per_s=16e12,
                  local_bytes_per_s=32e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                  items_per_cu=2048, warp=32, is_gpu=True, group_s=GPU_GROUP_S, load_latency_s=GPU_LOAD_LATENCY_S)
    n = float(1 << 26)

    def add(element_bytes: int, lanes: int) -> float:
        items = n / lanes
        f = {"flops": n, "applications": items, "global_reads": 2 * n * element_bytes, "global_loads": 2 * items,
             "global_traffic": 2 * n * element_bytes, "local_reads": 0.0, "copy_bytes": 0.0, "written": n * element_bytes,
             "local_bytes": 0.0, "private_bytes": 32.0, "input_bytes": 2 * n * element_bytes, "items": 256.0,
             "groups": items / 256, "unrolled_body": 1.0}
        return predict_kernel(f, gpu).seconds * 1e3

    measured = {(4, 1): 0.231, (2, 1): 0.191, (2, 4): 0.111, (4, 4): 0.196}
    predicted = {k: add(*k) for k in measured}
    for k, ms in measured.items():
        assert predicted[k] == pytest.approx(ms, rel=0.2), k
    assert predicted[(2, 4)] < predicted[(2, 1)] < predicted[(4, 1)] and predicted[(4, 4)] < predicted[(4, 1)]
    assert add(2, 2) < 0.7 * add(2, 1)
    assert Machine.from_profile(DeviceProfile("g", "t", device_type="GPU")).load_latency_s == GPU_LOAD_LATENCY_S
    assert Machine.from_profile(DeviceProfile("c", "t", device_type="CPU")).load_latency_s == 0.0


def test_a_gpu_issues_a_long_unrolled_stretch_slower():
    """On an H200 the same 64 x 128 tiles with 8 x 8 register blocks multiplied two 1024 matrices in 0.066,
    0.068 and 0.095 ms at reduction steps of 8, 16 and 32: unrolled stretches of 512, 1024 and 2048 copies,
    the last past what the instruction cache holds (``GPU_UNROLLED_BODY_LIMIT``).  Predicted alike up to the
    limit (the formula alone put the longer steps faster, with fewer barriers), a third slower at twice it;
    a memory-bound kernel and a CPU are not slowed."""
    from liftpy.host.profile import DeviceProfile
    from liftpy.model.analytical import GPU_UNROLLED_BODY_COST, GPU_UNROLLED_BODY_LIMIT, Machine, predict_kernel

    gpu = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=4.2e12, cache_bytes_per_s=16e12,
                  local_bytes_per_s=32e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                  items_per_cu=2048, warp=32, is_gpu=True)
    n = 1024.0
    tile = {"flops": n ** 3, "global_reads": 4 * n ** 3 / 42, "global_traffic": 4 * n ** 3 / 42, "local_reads": 4 * n ** 3 / 4,
            "copy_bytes": 4 * n ** 3 / 42, "written": 4 * n * n, "local_bytes": 12288.0, "private_bytes": 512.0,
            "input_bytes": 8 * n * n, "items": 128.0, "groups": 128.0}

    def ms(body, f=tile, machine=gpu):
        return predict_kernel({**f, "unrolled_body": float(body)}, machine).seconds * 1e3

    def busy(body):  # (the kernel's time without its launch: the terms this tile is bound by)
        return ms(body) - gpu.launch_s * 1e3

    assert ms(GPU_UNROLLED_BODY_LIMIT // 2) == pytest.approx(ms(GPU_UNROLLED_BODY_LIMIT))
    # (bound by its local reads and arithmetic, both issued slower: by the cost per doubling past the limit)
    assert busy(2 * GPU_UNROLLED_BODY_LIMIT) / busy(GPU_UNROLLED_BODY_LIMIT) == pytest.approx(1 + GPU_UNROLLED_BODY_COST, rel=0.01)
    assert busy(4 * GPU_UNROLLED_BODY_LIMIT) / busy(GPU_UNROLLED_BODY_LIMIT) == pytest.approx(1 + 2 * GPU_UNROLLED_BODY_COST, rel=0.01)
    streaming = {**tile, "flops": n * n, "local_reads": 0.0, "copy_bytes": 0.0, "input_bytes": 4e9, "global_reads": 4e9,
                 "global_traffic": 4e9}
    assert ms(4 * GPU_UNROLLED_BODY_LIMIT, streaming) == pytest.approx(ms(1, streaming), rel=0.01)
    cpu = Machine.from_profile(DeviceProfile("c", "t", device_type="CPU", max_work_group_size=4096,
                                             max_work_item_sizes=(4096, 4096, 4096)))
    assert ms(4 * GPU_UNROLLED_BODY_LIMIT, machine=cpu) == pytest.approx(ms(GPU_UNROLLED_BODY_LIMIT, machine=cpu))


def test_arrays_stored_as_half_move_two_bytes_an_element():
    """A half-storage variant's global reads, inputs and output count two bytes an element (its arithmetic
    stays float): four halves a load are eight bytes, and eight halves a load, which the H200 reads at
    float4's rate (``h200-halfconv.json``), rank ahead of them."""
    from liftpy.explore.operator import library_operator
    from liftpy.model.analytical import GPU_GROUP_S, GPU_LOAD_LATENCY_S, Machine, VariantModel, model_code

    machine = Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=4.2e12, cache_bytes_per_s=16e12,
                      local_bytes_per_s=32e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                      items_per_cu=2048, warp=32, is_gpu=True, group_s=GPU_GROUP_S, load_latency_s=GPU_LOAD_LATENCY_S)
    n = 1 << 26

    def predict(precision):
        op = library_operator("add", {"N": n}, precision)
        v = next(v for v in op.variants() if [str(p) for p in v.params] == ["v0"])
        model = VariantModel(model_code(v.program, op.sizes(), v.params, placements=v.placement_map), v.params, machine)
        return {w: model.predict({"v0": w}) for w in (4, 8)}

    half, full = predict("fp16-storage"), predict("fp32")
    for w in (4, 8):
        assert half[w].features["global_reads"] == 2 * 2 * n and full[w].features["global_reads"] == 2 * 4 * n
        assert half[w].features["input_bytes"] == 2 * 2 * n and half[w].features["written"] == 2 * n
    assert half[8].seconds < half[4].seconds  # (counted as floats, four halves ranked ahead of eight)
    assert half[8].seconds < 0.6 * full[8].seconds


def test_a_pipelines_intermediate_and_a_staged_copy_count_half_where_stored_so():
    """``sum``'s two kernels with their partial sums kept as half: the first writes half as many bytes, the
    second reads half as many, and the result stays float.  A tiling staging a half input into local memory
    reads half the bytes from global memory and stages as many floats as before."""
    from liftpy.explore.operator import library_operator
    from liftpy.host.profile import DeviceProfile
    from liftpy.ir.kernels import split_kernels
    from liftpy.model.analytical import Machine, VariantModel, model_code
    from liftpy.search import select_variants
    from liftpy.search.variants import variant_id

    machine = Machine.from_profile(DeviceProfile("g", "t", device_type="GPU", max_work_group_size=1024,
                                                 max_work_item_sizes=(1024, 1024, 64)))

    def features(op, v, placements, config):
        return VariantModel(model_code(v.program, op.sizes(), v.params, placements=placements), v.params, machine).features(config)

    op = library_operator("sum", {"N": 1 << 20})
    v = next(v for v in op.variants() if [s.output for s in split_kernels(v.program)] == ["parts", "out"])
    config = {str(p): 64 for p in v.params}
    full, half = features(op, v, None, config), features(op, v, {"parts": "half"}, config)
    assert half[0]["written"] == full[0]["written"] / 2 and half[0]["global_reads"] == full[0]["global_reads"]
    assert half[1]["input_bytes"] == full[1]["input_bytes"] / 2 and half[1]["global_reads"] == full[1]["global_reads"] / 2
    assert half[1]["written"] == full[1]["written"]

    op = library_operator("matmul", {"M": 64, "N": 64, "K": 64})
    v = next(v for v in select_variants(op.variants(), ["tile2DReduce"]) if variant_id(v).startswith("stage+tiled"))
    config = {"m0": 16, "n0": 16, "k0": 8, "r0": 4, "r1": 4}
    (full,), (half,) = features(op, v, None, config), features(op, v, {"A": "half", "B": "half"}, config)
    assert full["copy_bytes"] > 0 and half["copy_bytes"] == full["copy_bytes"]
    assert half["global_reads"] == full["global_reads"] / 2


def test_a_zipped_pair_read_whole_counts_each_array_as_stored():
    """``id`` of each pair of zip(a, b), a kept as half and b as float: six bytes an element, not the eight of
    two floats (the zip's origin merges to global) nor the four of two halves."""
    from liftpy import Array, Float, id, make_program, mapGlb, sizes, zip
    from liftpy.model.counts import count

    (n,) = sizes("N")
    pairs = make_program("p", [("a", Array(Float, n)), ("b", Array(Float, n))], lambda a, b: mapGlb(0, lambda t: id(t), zip(a, b)))
    assert count(pairs).global_reads == 8 * n
    assert count(pairs, halves=frozenset({"a"})).global_reads == 6 * n
    assert count(pairs, halves=frozenset({"a", "b"})).global_reads == 4 * n


def test_loads_are_counted_one_per_scalar_or_vector_read():
    """``global_loads``: a float4 read is one load of 16 bytes, a zipped pair of floats two of 4."""
    from liftpy.ir.types import Array, Float, TupleType, Vector
    from liftpy.model.counts import _loads

    assert _loads(Float) == 1 and _loads(Vector(Float, 4)) == 1
    assert _loads(TupleType((Float, Float))) == 2
    assert _loads(Array(Float, 8)) == 8
