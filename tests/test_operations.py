"""What a CPU executes for a point (``liftpy.model.operations``), counted on the final statement IR, and how
the analytical model weighs it on a CPU device (``liftpy.model.analytical``): the counts follow the loops
around each statement, a search's model keeps them as shares measured at its probe and counts them again at
a point, and a CPU's time is the busiest core's share of them plus the launch."""

import math

import pytest

from liftpy.host.profile import DeviceProfile
from liftpy.ir.parser import parse_program
from liftpy.model.analytical import CPU_OPERATION_S, Machine, VariantModel, model_code, predict_kernel
from liftpy.model.operations import OperationCounts, operation_counts
from test_codegen import _tiled_stencil as tiled_stencil

# Per pixel of an H x W image of C channels, the sum of its squared channels: each multAndSumUp reads its
# element twice.
SUMS = """
def sums(I: [[[float]C]W]H) =
  mapGlb(1, fun(row) => mapGlb(0, fun(px) => reduceSeq(fun(acc, x) => multAndSumUp(acc, x, x), toPrivate(id(0.0f)), px), row), I)
"""


def cpu() -> Machine:
    return Machine.from_profile(DeviceProfile("test CPU", "test", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                                              compute_units=2, device_type="CPU"))


def test_counts_follow_the_loops_around_each_statement():
    p = tiled_stencil()
    ((c,),) = [operation_counts(p, {"N": 64, "T": 16})]
    # Four groups each stage their tile of 16 and its two halo elements, read through the zero padding.
    assert c.local_writes == 4 * 18
    assert c.conditional_reads == 4 * 18
    # Each of the 64 outputs reads its accumulator at each of its three steps and once to store it.
    assert c.private_reads == 64 * 4
    assert c.image_calls == 0
    # Twice the input: twice every count, the address arithmetic included.
    ((twice,),) = [operation_counts(p, {"N": 128, "T": 16})]
    assert twice == OperationCounts(*(2 * x for x in c))
    # Smaller tiles: more groups, each staging its own halo.
    ((small,),) = [operation_counts(p, {"N": 64, "T": 8})]
    assert small.local_writes == 8 * 10


def test_image_reads_are_calls_counted_where_the_code_makes_them():
    p = parse_program(SUMS)
    sizes = {"H": 4, "W": 8, "C": 4}
    ((plain,),), ((placed,),) = [operation_counts(p, sizes)], [operation_counts(p, sizes, {"I": "image"})]
    assert plain.image_calls == 0
    assert placed.image_calls == 2 * 4 * 8 * 4
    # The texel's coordinates replace the buffer's flattened index.
    assert placed.address_ops < plain.address_ops


def test_a_cpu_model_keeps_the_probe_counts_as_shares_and_takes_a_points_own():
    p, machine = tiled_stencil(), cpu()
    sizes, probe, other = {"N": 256}, {"T": 16}, {"T": 32}
    model = VariantModel(model_code(p, sizes, ("T",), probe=probe, cpu=True), ("T",), machine)
    ((at_probe,),) = [operation_counts(p, {**sizes, **probe})]
    f = model.features(probe)[0]
    for name, value in at_probe._asdict().items():
        assert f[name] == pytest.approx(value)
    # Elsewhere the shares scale with what the symbolic counts give there: the user-function applications
    # (the symbolic counts do not see this copy of a computed value as one, so its writes scale with them) ...
    ((own,),) = [operation_counts(p, {**sizes, **other})]
    g = model.features(other)[0]
    assert f["copy_bytes"] == 0
    for name in ("private_reads", "local_writes"):
        assert g[name] == pytest.approx(getattr(at_probe, name) / f["flops"] * g["flops"])
    assert g["local_writes"] != own.local_writes  # fewer, larger tiles: fewer halo elements staged
    # ... and the point's own counts, where given, replace them.
    h = model.features(other, (own,))[0]
    for name, value in own._asdict().items():
        assert h[name] == value
    assert model.predict(other, (own,)).bound == "operations"
    # A GPU's model (no ``cpu``) measures coalescing at the probe instead, and no operations.
    assert "private_reads" not in VariantModel(model_code(p, sizes, ("T",), probe=probe), ("T",), machine).features(probe)[0]


def kernel(groups: float, items: float, **ops) -> dict:
    f = {"flops": 1e6, "global_reads": 0.0, "local_reads": 0.0, "image_reads": 0.0, "unrolled_body": 1.0, "copy_bytes": 4.0,
         "written": 0.0, "items": items, "groups": groups, "local_bytes": 0.0, "private_bytes": 4.0, "input_bytes": 0.0}
    return {**f, **OperationCounts(**ops)._asdict()}


def test_a_cpu_runs_whole_groups_on_each_core_and_pays_for_each_operation():
    machine = cpu()
    launch = CPU_OPERATION_S["launch"]
    busy = {g: predict_kernel(kernel(g, 8, private_reads=1e6), machine).seconds - launch for g in (2, 3, 4)}
    # The same operations over 2 or 4 groups keep both cores busy alike; over 3, one core runs two of them.
    assert busy[2] == pytest.approx(busy[4])
    assert busy[3] == pytest.approx(busy[2] * (2 / 3) / (1 / 2))
    assert busy[2] == pytest.approx(1e6 * CPU_OPERATION_S["private_reads"] / 2)
    # Every kind of operation costs; an emulated image read the most.
    for name in ("private_reads", "address_ops", "conditional_reads", "local_writes", "image_calls"):
        assert predict_kernel(kernel(2, 8, **{name: 1e6}), machine).seconds > launch
    costs = {name: predict_kernel(kernel(2, 1, **{name: 1e6}), machine).seconds for name in ("private_reads", "image_calls")}
    assert costs["image_calls"] > 50 * costs["private_reads"]
    # A copy's element costs more the more work-items share the copy.
    copies = [predict_kernel(kernel(2, items, local_writes=1e6), machine).seconds - launch for items in (1, 15, 255)]
    assert copies[1] == pytest.approx(4 * copies[0]) and copies[2] == pytest.approx(8 * copies[0])
    # Without barriers, work-items run as vector lanes over a short stretch.
    lanes = {c: predict_kernel({**kernel(2, 8, private_reads=1e6), "copy_bytes": c}, machine).seconds - launch for c in (0.0, 4.0)}
    assert lanes[0.0] == pytest.approx(lanes[4.0] / (1 + 3 * (1 - 1 / 32)))
    assert math.isfinite(predict_kernel(kernel(1, 1), machine).seconds)
