"""How the analytical model sees a warp's requests served (``liftpy.model.access``): read off the statement
IR, the coalescing factor tells a variant whose neighbouring work-items read neighbouring floats from one
whose work-items read a row apart, and the bank factor a local tile read along its rows from one read down
its columns, which the byte counts alone rank alike."""

import pytest

from liftpy.host.profile import DeviceProfile
from liftpy.ir.parser import parse_program
from liftpy.model.access import _bank_passes, access_factors
from liftpy.model.analytical import Machine, VariantModel, model_code

# A matrix product with one work-item per output; DIMS says which NDRange dimension each map takes.
MATMUL = """
def matmul(A: [[float]K]M, B: [[float]N]K) =
  mapGlb({row},
    fun(row) =>
      mapGlb({col},
        fun(col) =>
          reduceSeq(fun(acc, p) => multAndSumUp(acc, p._0, p._1), toPrivate(id(0.0f)), zip(row, col)),
        transpose(B)),
    A)
"""
SIZES = {"M": 256, "N": 256, "K": 256}


def matmul(col_dim: int):
    return parse_program(MATMUL.format(row=1 - col_dim, col=col_dim))


def h100_like() -> Machine:
    return Machine(compute_units=132, fma_per_s=33e12, dram_bytes_per_s=3e12, cache_bytes_per_s=12e12,
                   local_bytes_per_s=24e12, launch_s=5e-6, registers_per_cu=65536, local_bytes_per_cu=4 * 49152,
                   items_per_cu=2048, warp=32, is_gpu=True)


def test_columns_on_dimension_zero_coalesce_and_rows_do_not():
    # Columns on dimension 0: a warp reads 32 consecutive floats of B and shares one float of A.
    ((good, _),) = access_factors(matmul(0), SIZES)
    # Rows on dimension 0: a warp reads 32 floats of A a row (K floats) apart, one line each.
    ((bad, _),) = access_factors(matmul(1), SIZES)
    assert good == pytest.approx(1.0)
    # Half the requests (A's) touch 32 lines, the other half (B's, shared) one.
    assert bad == pytest.approx((32 + 1) / 2)


def test_model_ranks_the_uncoalesced_variant_behind_only_through_the_probe():
    machine = h100_like()
    times = {}
    for col_dim in (0, 1):
        p = matmul(col_dim)
        with_probe = VariantModel(model_code(p, SIZES, (), probe={}), (), machine).predict({})
        without = VariantModel(model_code(p, SIZES, ()), (), machine).predict({})
        times[col_dim] = (with_probe, without)
    # Without a probe the two variants count the same bytes and are predicted alike ...
    assert times[0][1].seconds == pytest.approx(times[1][1].seconds)
    # ... with one, the scattered reads cost more than the shared and consecutive ones.
    assert times[1][0].seconds > 4 * times[0][0].seconds
    assert times[1][0].features["global_traffic"] == pytest.approx(16.5 * times[1][0].features["global_reads"])


def test_search_spaces_probe_each_variant_with_a_valid_configuration():
    from liftpy.explore.operator import ProgramOperator, load_program
    from liftpy.results.cache import cached_variants
    from liftpy.search import select_variants
    from liftpy.search import Spaces
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    op = ProgramOperator(load_program(str(root / "examples/programs/matmul_highlevel.lift")), tuple({"M": 64, "N": 64, "K": 64}.items()))
    variants = select_variants(cached_variants(op), ("registerBlock2D",))[:2]
    profile = DeviceProfile.load(str(root / "benchmarks/results/h100-profile.json"))
    spaces = Spaces(variants, op.sizes(), profile, 0)
    for i in range(len(variants)):
        probe = spaces._probe(i)
        assert probe is not None and spaces.valid(i, probe)
        f = spaces.model(i).features(probe)[0]
        assert f["global_traffic"] > 0
    # A CPU has no warps whose reads coalesce: its probe counts the operations of the variant's code.
    cpu = DeviceProfile("test CPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 1024), device_type="CPU")
    on_cpu = Spaces(variants, op.sizes(), cpu, 0)
    probe = on_cpu._probe(0)
    assert probe is not None and on_cpu.valid(0, probe)
    f = on_cpu.model(0).features(probe)[0]
    assert f["private_reads"] > 0 and f["address_ops"] > 0
    assert f["global_traffic"] == f["global_reads"]


def test_search_spaces_predict_a_point_with_the_coalescing_of_its_own_configuration():
    """A variant's coalescing depends on its configuration (its tile and register block decide which
    work-items share a row): ``Spaces.predict`` measures it at the point, ``Spaces.model`` keeps the probe's."""
    from liftpy.explore.operator import ProgramOperator, load_program
    from liftpy.results.cache import cached_variants
    from liftpy.search import select_variants
    from liftpy.search import Spaces
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    op = ProgramOperator(load_program(str(root / "examples/programs/matmul_highlevel.lift")), tuple({"M": 64, "N": 64, "K": 64}.items()))
    variants = select_variants(cached_variants(op), ("registerBlock2D",))[:2]
    profile = DeviceProfile.load(str(root / "benchmarks/results/h100-profile.json"))
    spaces = Spaces(variants, op.sizes(), profile, 0)
    differ = 0
    for i in range(len(variants)):
        probe = spaces.model(i).features(spaces._probe(i))[0]
        for config in spaces.sample(i, 12, 1):
            ((factor, banks),) = spaces.access(i, config)
            assert ((factor, banks),) == access_factors(variants[i].program, {**op.sizes(), **config})
            f = spaces.predict(i, config).features
            assert f["global_traffic"] == pytest.approx(f["global_reads"] * factor)
            assert f["local_traffic"] == pytest.approx(f["local_reads"] * banks)
            at_probe = spaces.model(i).features(config)[0]
            assert at_probe["global_traffic"] == pytest.approx(at_probe["global_reads"] * probe["global_traffic"] / probe["global_reads"])
            differ += abs(f["global_traffic"] - at_probe["global_traffic"]) > 0.05 * at_probe["global_traffic"]
    assert differ, "every sampled configuration coalesces as its variant's probe does"
    # On a CPU the point's own operations (``liftpy.model.operations``) take the place of the factors.
    from liftpy.model.operations import operation_counts

    cpu = DeviceProfile("test CPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 1024), device_type="CPU")
    on_cpu = Spaces(variants, op.sizes(), cpu, 0)
    config = on_cpu.sample(0, 1, 1)[0]
    counts = on_cpu.access(0, config)
    assert counts == operation_counts(variants[0].program, {**op.sizes(), **config}, variants[0].placement_map)
    assert on_cpu.predict(0, config).features["private_reads"] == counts[0].private_reads


def test_bank_passes_count_the_most_distinct_words_of_one_bank():
    # 32 consecutive floats: one word per bank, one pass.
    assert _bank_passes([4 * k for k in range(32)], 4) == (1, 1)
    # Down a column of a row-major tile 32 floats wide: every word on bank 0, 32 passes.
    assert _bank_passes([4 * 32 * k for k in range(32)], 4) == (32, 1)
    # A row 33 floats wide (padded): the column spreads over all banks again.
    assert _bank_passes([4 * 33 * k for k in range(32)], 4) == (1, 1)
    # One word for the whole warp is a broadcast.
    assert _bank_passes([64] * 32, 4) == (1, 1)
    # float4 per work-item, consecutive: served 8 work-items at a time, four parts without conflict.
    assert _bank_passes([16 * k for k in range(32)], 16) == (4, 4)
    # float4 per work-item, 16 floats apart: of a part's 8 work-items, every other one asks the same four
    # banks (for other words), so each part takes four passes.
    assert _bank_passes([64 * k for k in range(32)], 16) == (16, 4)



@pytest.mark.parametrize("policy, conflicts", [("none", 2.5), ("reductions+registers", 2.0)])
def test_a_tile_staged_row_major_and_read_down_its_columns_has_bank_conflicts_its_transpose_has_not(monkeypatch, policy, conflicts):
    """The two staged layouts of one tiling (``stageTiles``, ``stageTilesT``) read the same bytes of local
    memory; one reads the A tile down its columns, 64 floats a row, so a warp's requests conflict.  How
    much depends on the reads the kernel makes: with liftpy copying the register block's k steps
    (unrolling policy ``none``) it loads runs of them as vectors (3 passes a request), with the steps left
    to the OpenCL compiler (the default) it reads scalars (2.5)."""
    import importlib

    monkeypatch.setattr(importlib.import_module("liftpy.codegen.passes.unroll"), "COMPILER_UNROLLS", policy)
    from liftpy.explore.operator import program_operator
    from liftpy.rewrite.explore import features
    from liftpy.search import select_variants
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    op = program_operator(str(root / "examples/programs/matmul_highlevel.lift"), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce", "stageTiles|stageTilesT"])
    plain = {"mapLcl", "mapWrg", "tile2DReduce", "unrollInItem"}
    by_layout = {layout: next(v for v in variants if set(features(v)) == plain | {layout})
                 for layout in ("stageTiles", "stageTilesT")}
    config = {"m0": 4, "n0": 32, "k0": 64, "r0": 4, "r1": 8}
    ((_, row_major),) = access_factors(by_layout["stageTiles"].program, {**op.sizes(), **config})
    ((_, transposed),) = access_factors(by_layout["stageTilesT"].program, {**op.sizes(), **config})
    assert transposed == pytest.approx(1.0)
    assert row_major > conflicts
    machine = h100_like()
    local = {}
    for layout, v in by_layout.items():
        model = VariantModel(model_code(v.program, op.sizes(), v.params, probe=config), v.params, machine)
        f = model.features(config)[0]
        assert f["local_traffic"] == pytest.approx(f["local_reads"] * (row_major if layout == "stageTiles" else transposed))
        local[layout] = f["local_traffic"]
    assert local["stageTiles"] > conflicts * local["stageTilesT"]


@pytest.mark.slow
def test_search_spaces_measure_many_points_in_worker_processes(tmp_path, monkeypatch):
    """``Spaces.prefetch_access`` (a benchmark's hundreds of held-out points) finds what ``Spaces.access``
    would, computed in worker processes and kept on disk for it."""
    from liftpy.explore.operator import program_operator
    from liftpy.results.store import config_key
    from liftpy.search import select_variants
    from liftpy.search import Spaces
    from pathlib import Path

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path))
    root = Path(__file__).resolve().parents[1]
    op = program_operator(str(root / "examples/programs/matmul_highlevel.lift"), "M=64,N=64,K=64")
    variants = select_variants(op.variants(), ["tile2DReduce", "stageTiles|stageTilesT"])[:3]
    profile = DeviceProfile.load(str(root / "benchmarks/results/h100-profile.json"))
    spaces = Spaces(variants, op.sizes(), profile, 0)
    points = [(i, c) for i in range(len(variants)) for c in spaces.sample(i, 3, 1)]
    spaces.prefetch_access(points + points[:2], jobs=2)
    assert len(spaces._access) == len(points)
    for i, c in points:
        assert spaces._access[(i, config_key(c))] == access_factors(variants[i].program, {**op.sizes(), **c})
    # Kept on disk: another search's spaces find them without measuring.
    again = Spaces(variants, op.sizes(), profile, 0)
    monkeypatch.setattr("liftpy.search.spaces._access_of", lambda args: pytest.fail("measured again"))
    for i, c in points:
        assert again.access(i, c) == spaces._access[(i, config_key(c))]


def test_index_functions_evaluate_for_all_work_items_at_once_as_sympy_does():
    """The tally evaluates each index for a warp's work-items in one call (numpy), compiled from its own
    Python form: the values are sympy's (the oracle, through ``arith.bridge``), exact divisions included
    (49 * x / 49 is not 49 * x * (1/49))."""
    from fractions import Fraction

    import numpy as np
    import sympy

    from liftpy import arith
    from liftpy.arith.bridge import CDiv, CMod, to_sympy
    from liftpy.model.access import _index_fn

    x, y, k = arith.var("x"), arith.var("y"), arith.var("k")
    exprs = [3 * x + 7 * y + 2, arith.floordiv(x, 4) + arith.mod(y, 3), arith.scale(x * 49, Fraction(1, 49)) + arith.scale(x, Fraction(3, 7)) * 7,
             arith.cdiv(5 * x + y, 3) * 11 + arith.cmod(x + 2 * y, 8), arith.floordiv(49 * x + k, 49),
             arith.maximum((x - 3, 0)) + arith.minimum((y, 5)) + k * k]
    xs, ys = np.arange(32), (np.arange(32) * 7) % 13
    for e in exprs:
        syms, fn, vector = _index_fn(e)
        assert vector, e
        env = {x: xs, y: ys, k: 5}
        got = np.broadcast_to(np.asarray(fn(*[env[s] for s in syms])), (32,))
        # CDiv and CMod are opaque to sympy (C's division of a non-negative dividend): floor division here.
        c = to_sympy(e).replace(CDiv, lambda a, d: sympy.floor(a / d)).replace(CMod, lambda a, d: sympy.Mod(a, d))
        sx, sy, sk = sympy.symbols("x y k")
        want = [int(c.subs({sx: int(a), sy: int(b), sk: 5})) for a, b in zip(xs, ys)]
        assert [int(v) for v in np.trunc(got)] == want, e


def test_unrolled_copies_share_one_compiled_index_function_and_count_the_same(monkeypatch):
    """The 16 copies of an unrolled reduction read at indices that differ in their constant only: the tally
    compiles one function for all of them (``_Tally.fn``), and its factors are those of compiling each
    index on its own."""
    import importlib

    import liftpy.model.access as A

    unroll = importlib.import_module("liftpy.codegen.passes.unroll")  # the module (the package exports its pass)
    monkeypatch.setattr(unroll, "COMPILER_UNROLLS", "none")  # every unrolled loop becomes copies
    p = parse_program(MATMUL.format(row=1, col=0).replace("reduceSeq(", "reduceSeqUnroll("))
    sizes = {"M": 64, "N": 64, "K": 16}
    compiled = []
    real = A._index_fn
    monkeypatch.setattr(A, "_index_fn", lambda e: compiled.append(e) or real(e))
    shared = access_factors(p, sizes)
    shared_count = len(compiled)
    monkeypatch.setattr(A, "without_constant", lambda e: (e, 0))
    compiled.clear()
    alone = access_factors(p, sizes)
    assert shared == alone
    assert len(compiled) >= 16 and shared_count <= 2  # (A read as float4s: 4 indices; B: 16)


def test_an_array_kept_as_half_is_read_as_halves_when_its_reads_are_weighed():
    """A row of a matrix kept as half, read eight halves at a time per work-item (rows read as words), is one
    sixteen-byte request per item: coalesced.  Weighed without the variant's placements the same reads were
    eight floats, two requests 32 bytes apart, a factor of 2 that put every half kernel reading words of eight
    behind those reading four (the H200's gemv, jacobi3d and blur2d: the fastest measured, ranked down)."""
    from liftpy.explore.operator import library_operator
    from liftpy.rewrite.explore import explore
    from liftpy.search.variants import variant_tags

    sizes = {"M": 64, "N": 1024}
    op = library_operator("gemv", sizes, "fp16-storage")
    v = next(v for v in explore(op.program(), op.explore_options())
             if variant_tags(v) == "half+rows-vec+tree+unroll-item+wrg" and "image" not in v.placement_map.values())
    config = {**sizes, "L0": 32, "v0": 8}
    (floats,) = access_factors(v.program, config)
    (halves,) = access_factors(v.program, config, v.placement_map)
    assert floats.coalescing == 2.0 and halves.coalescing == 1.0
    from liftpy.model.analytical import measure_at
    assert measure_at(v.program, config, v.placement_map, False) == (halves,)
