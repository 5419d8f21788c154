"""The analytical model on a CPU (``liftpy.model.analytical``): reads of an input a variant placed in an image
are counted apart (``liftpy.model.counts``), and cost a CPU, which emulates each ``read_imagef`` in software,
far more than a buffer read, while a GPU's prediction does not change with the placement; a CPU's rates are
its scalar ones, probed or assumed."""

import pytest
import sympy

from liftpy.host.profile import DeviceProfile
from liftpy.ir.parser import parse_program
from liftpy.model.analytical import (CPU_IMAGE_READS_PER_CU, CPU_SCALAR_GFLOPS_PER_CU, TEXEL_BYTES, Machine,
                                     VariantModel, model_code)
from liftpy.model.counts import count

MATMUL = """
def matmul(A: [[float]K]M, B: [[float]N]K) =
  mapGlb(1,
    fun(row) =>
      mapGlb(0,
        fun(col) =>
          reduceSeq(fun(acc, p) => multAndSumUp(acc, p._0, p._1), toPrivate(id(0.0f)), zip(row, col)),
        transpose(B)),
    A)
"""
SIZES = {"M": 64, "N": 32, "K": 16}


def profile(kind: str, measured: dict | None = None) -> DeviceProfile:
    return DeviceProfile(f"test {kind}", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                         compute_units=4, device_type=kind, measured=measured or {})


def test_image_reads_are_the_global_reads_of_the_placed_input():
    p = parse_program(MATMUL)
    plain, placed = count(p), count(p, frozenset({"A"}))
    at = {sympy.Symbol(k, positive=True, integer=True): v for k, v in SIZES.items()}
    # Every work-item reads its row of A and its column of B once: M * N * K floats of each.
    each = SIZES["M"] * SIZES["N"] * SIZES["K"] * 4
    assert plain.image_reads == 0
    assert placed.global_reads.subs(at) == plain.global_reads.subs(at) == 2 * each
    assert placed.image_reads.subs(at) == each
    assert count(p, frozenset({"A", "B"})).image_reads.subs(at) == 2 * each


def test_a_cpu_pays_for_emulated_image_reads_and_a_gpu_does_not():
    p = parse_program(MATMUL)
    cpu, gpu = Machine.from_profile(profile("CPU")), Machine.from_profile(profile("GPU"))
    buffer, image = model_code(p, SIZES, ()), model_code(p, SIZES, (), placements={"A": "image"})
    on_gpu = [VariantModel(code, (), gpu).predict({}) for code in (buffer, image)]
    assert on_gpu[0].seconds == on_gpu[1].seconds
    on_cpu = [VariantModel(code, (), cpu).predict({}) for code in (buffer, image)]
    reads = SIZES["M"] * SIZES["N"] * SIZES["K"]  # of A, one emulated read_imagef each
    emulated = reads / (4 * CPU_IMAGE_READS_PER_CU)
    assert on_cpu[1].bound == "image"
    assert on_cpu[1].seconds > on_cpu[0].seconds + 0.8 * emulated
    assert on_cpu[1].features["image_reads"] == 4 * reads


def test_a_cpu_is_modelled_at_its_scalar_rates():
    assumed = Machine.from_profile(profile("CPU"))
    assert assumed.fma_per_s == pytest.approx(4 * CPU_SCALAR_GFLOPS_PER_CU * 1e9 / 2)
    assert assumed.image_reads_per_s == pytest.approx(4 * CPU_IMAGE_READS_PER_CU)
    probed = Machine.from_profile(profile("CPU", {
        "fp32_gflops": {"value": 40.0}, "fp32_scalar_gflops": {"value": 16.0},
        "cache_bandwidth_gbs": {"value": 63.0}, "cache_scalar_bandwidth_gbs": {"value": 19.6},
        "image_cache_bandwidth_gbs": {"value": 1.2}}))
    assert probed.fma_per_s == pytest.approx(8e9)
    assert probed.cache_bytes_per_s == pytest.approx(19.6e9)
    assert probed.image_reads_per_s == pytest.approx(1.2e9 / TEXEL_BYTES)
    # A GPU keeps its vector rates and has no image term.
    gpu = Machine.from_profile(profile("GPU", {"fp32_gflops": {"value": 40.0}, "fp32_scalar_gflops": {"value": 16.0},
                                               "image_cache_bandwidth_gbs": {"value": 1.2}}))
    assert gpu.fma_per_s == pytest.approx(20e9)
    assert gpu.image_reads_per_s is None
