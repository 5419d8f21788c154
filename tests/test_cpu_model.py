"""The analytical model on a CPU (``liftpy.model.analytical``): reads of an input a variant placed in an image
are counted apart (``liftpy.model.counts``), and cost a CPU, which emulates each ``read_imagef`` in software,
far more than a buffer read, while a GPU's prediction does not change with the placement; a CPU's rates are
its scalar ones, probed or assumed; a CPU runs work-items as vector lanes over short unrolled stretches of
code without barriers."""

import pytest
import sympy

from liftpy.host.profile import DeviceProfile
from liftpy.ir.parser import parse_program
from liftpy.model.analytical import (CPU_IMAGE_READS_PER_CU, CPU_SCALAR_GFLOPS_PER_CU, CPU_VECTOR_BODY_LIMIT,
                                     TEXEL_BYTES, Machine, VariantModel, model_code, predict_kernel)
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


UNROLLED = """
def doubled(A: [[float]K]M) =
  mapGlb(0, fun(row) => join(mapSeq(fun(chunk) => {inner}(fun(x) => add(x, x), chunk), split({n}, row))), A)
"""


def test_unrolled_body_counts_the_copies_unrolled_loops_put_in_one_stretch():
    for inner, n, body in (("mapSeq", 4, 1), ("mapSeqUnroll", 4, 4), ("mapSeqUnroll", 8, 8)):
        assert count(parse_program(UNROLLED.format(inner=inner, n=n))).unrolled_body == body


def features(unrolled_body: int, copy_bytes: float = 0.0, items: int = 8) -> dict:
    """One kernel's features: 2^20 multiply-adds over 64 groups, reads of its inputs only."""
    return {"flops": 2.0 ** 20, "global_reads": 4.0 * 2 ** 20, "local_reads": 0.0, "image_reads": 0.0,
            "copy_bytes": copy_bytes, "written": 4096.0, "items": float(items), "groups": 64.0, "local_bytes": 0.0,
            "private_bytes": 32.0, "input_bytes": 8192.0, "unrolled_body": float(unrolled_body)}


def test_a_cpu_vectorizes_work_items_over_short_stretches_without_barriers():
    cpu, gpu = Machine.from_profile(profile("CPU")), Machine.from_profile(profile("GPU"))
    short, long = predict_kernel(features(1), cpu).seconds, predict_kernel(features(CPU_VECTOR_BODY_LIMIT), cpu).seconds
    busy_short, busy_long = short - cpu.launch_s, long - cpu.launch_s
    # Four lanes at a stretch of one copy: 1 + 3 * (1 - 1/32) times as fast as without them.
    assert busy_long / busy_short == pytest.approx(1 + 3 * (1 - 1 / CPU_VECTOR_BODY_LIMIT))
    # No gain past the limit, with barriers (tiles staged in local memory), or with a single work-item.
    assert predict_kernel(features(4 * CPU_VECTOR_BODY_LIMIT), cpu).seconds == pytest.approx(long)
    assert predict_kernel(features(1, copy_bytes=4.0), cpu).seconds > 2 * short
    assert predict_kernel(features(1, items=1), cpu).seconds > 2 * short
    # A GPU's prediction does not depend on the stretch.
    assert predict_kernel(features(1), gpu).seconds == predict_kernel(features(256), gpu).seconds
