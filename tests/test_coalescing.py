"""The coalescing factor of the analytical model (``liftpy.model.coalescing``): read off the statement IR,
it tells a variant whose neighbouring work-items read neighbouring floats from one whose work-items read
a row apart, which the byte counts alone rank alike."""

import pytest

from liftpy.host.profile import DeviceProfile
from liftpy.ir.parser import parse_program
from liftpy.model.analytical import Machine, VariantModel, model_code
from liftpy.model.coalescing import coalescing_factors

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
    (good,) = coalescing_factors(matmul(0), SIZES)
    # Rows on dimension 0: a warp reads 32 floats of A a row (K floats) apart, one line each.
    (bad,) = coalescing_factors(matmul(1), SIZES)
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
    from liftpy.tuning.cache import cached_variants
    from liftpy.tuning.engine import select_variants
    from liftpy.tuning.operator import ProgramOperator, load_program
    from liftpy.tuning.search import Spaces
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
    # A CPU has no warps whose reads coalesce: no probe, no code generation for it.
    cpu = DeviceProfile("test CPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 1024), device_type="CPU")
    assert Spaces(variants, op.sizes(), cpu, 0)._probe(0) is None
