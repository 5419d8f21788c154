"""Device limits in every space: private memory per work-item and per work-group, local memory and
work-group size are constraints of the tuning space (inferred from the program) and checks of the kernel
actually generated (its memory plan), both read from one device profile; sampled points of several
programs all generate, and a sample of them builds and runs on the default device."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from liftpy.codegen.kernel import DeviceLimits, generate_pipeline
from liftpy.constraints import enumerate_valid, solve
from liftpy.constraints.infer import variant_space
from liftpy.errors import ConstraintError
from liftpy.explore.operator import program_operator
from liftpy.host.profile import DeviceProfile
from liftpy.results.cache import cached_variants
from liftpy.search import choose_points, variant_id

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "programs"
CPU = DeviceProfile("test CPU", "test", max_work_group_size=4096, max_work_item_sizes=(4096, 4096, 4096), device_type="CPU")
GPU = dataclasses.replace(CPU, device="test GPU", max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64), device_type="GPU")


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    import os

    os.environ.setdefault("LIFTPY_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    op = program_operator(str(PROGRAMS / "matmul_highlevel.lift"), "M=32,N=32,K=32")
    return op, list(cached_variants(op))


def _register_blocked(variants):
    """The global register-blocked matmul: one work-item computes an r0 x r1 block in private memory."""
    return next(v for v in variants if variant_id(v).startswith("block+glb+unroll#"))


def test_private_memory_of_a_group_bounds_register_blocks_on_a_cpu(matmul):
    op, variants = matmul
    v = _register_blocked(variants)
    cpu = {(c["r0"], c["r1"]) for c in enumerate_valid(solve(variant_space(v, op.sizes(), CPU)))}
    gpu = {(c["r0"], c["r1"]) for c in enumerate_valid(solve(variant_space(v, op.sizes(), GPU)))}
    # 32 x 32 floats are 4 KiB per work-item: 16 MiB in a group of 4,096 on the CPU (a stack overflow in
    # PoCL), so the launch of this global kernel, whose groups the driver would form, gives it groups
    # small enough (codegen.kernel.fit_private) instead of leaving the point out of the space.
    assert (32, 32) in gpu and (32, 32) in cpu
    assert (16, 16) in cpu


def test_generated_kernels_are_checked_against_the_same_limits(matmul):
    op, variants = matmul
    v = _register_blocked(variants)
    sizes = {**op.sizes(), "r0": 32, "r1": 32}
    assert generate_pipeline(v.program, sizes, GPU.limits(), v.placement_map)[0][0].launch.local_size is None
    big = {**op.sizes(), "M": 1024, "N": 1024, "r0": 16, "r1": 16}  # 1 KiB per item, 4,096 items: 4 MiB
    assert generate_pipeline(v.program, big, CPU.limits(), v.placement_map)[0][0].launch.local_size is None
    launch = generate_pipeline(v.program, sizes, CPU.limits(), v.placement_map)[0][0].launch
    assert launch.local_size is not None and 4096 * int(np.prod(launch.local_size)) <= CPU.private_group_limit_bytes
    tight = dataclasses.replace(GPU.limits(), private_item_bytes=1024)
    with pytest.raises(ConstraintError, match=r"acc_0 \(4096 B\)"):
        generate_pipeline(v.program, sizes, tight, v.placement_map)
    staged = next(x for x in variants if "stageT" in variant_id(x))
    config = choose_points([staged], op.sizes(), 1, GPU, 0)[0].config
    with pytest.raises(ConstraintError, match="local memory"):
        generate_pipeline(staged.program, {**op.sizes(), **config}, dataclasses.replace(GPU.limits(), local_mem_bytes=16),
                          staged.placement_map)


def test_stored_profiles_give_the_limits_they_were_made_with():
    record = GPU.record()
    assert DeviceProfile.from_record(record).limits() == GPU.limits()
    assert DeviceProfile.from_record({**record, "a_field_of_the_future": 1}).limits() == GPU.limits()
    assert DeviceProfile.from_record({}).limits() == DeviceProfile("x", "y").limits()


@pytest.mark.parametrize("program,sizes", [
    pytest.param("matmul_highlevel.lift", "M=32,N=32,K=32", marks=pytest.mark.slow),
    ("stencil_highlevel.lift", "H=34,W=34"),
    ("maxpool_highlevel.lift", "H=32,W=32"),
])
def test_every_sampled_point_generates_and_a_sample_runs(tmp_path, monkeypatch, program, sizes):
    """40 points drawn from all variants' spaces for the default device: none is refused by code
    generation (the spaces hold every limit the generated kernel is checked against); eight of them
    build, run and match the interpreter."""
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.host.profile import resolve_profile

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path))
    op = program_operator(str(PROGRAMS / program), sizes)
    variants = list(cached_variants(op))
    profile = resolve_profile(None)
    points = choose_points(variants, op.sizes(), 40, profile, seed=5)
    assert len(points) == 40
    for p in points:
        v = variants[p.variant_index]
        generate_pipeline(v.program, {**op.sizes(), **p.config}, profile.limits(), v.placement_map)
    inputs, check = op.prepare(0)
    device = get_device(None)
    for p in points[::5]:
        v = variants[p.variant_index]
        run = CompiledPipeline(v.program, {**op.sizes(), **p.config}, device, v.placement_map).run(*inputs, repeat=1, warmup=0)
        result = check(np.asarray(run.output))
        assert result.ok, (p.variant_id, p.config, result.message)
