"""A reduction of a whole array runs in parallel: partial sums in one kernel (one work-item or one
work-group per chunk, coalesced or not, vectorized or not), their sum in a second; every sampled variant of
the dot product, of a sum and of a maximum matches numpy on PoCL."""

from __future__ import annotations

import numpy as np
import pytest

from liftpy.codegen.kernel import generate_pipeline
from liftpy.constraints import sample, solve
from liftpy.constraints.infer import variant_space
from liftpy.host.device import get_device
from liftpy.host.kernel import CompiledPipeline
from liftpy.host.profile import resolve_profile
from liftpy.operators import linalg
from liftpy.rewrite.explore import explore, features


def test_dot_product_of_a_million_elements_has_parallel_variants():
    variants = explore(linalg.dot())
    sizes = {"N": 2**20}
    widest = 0
    for v in variants:
        if "reduceKernels" not in features(v):
            continue
        configs = sample(solve(variant_space(v, sizes)), 4, seed=0)
        for c in configs:
            stages = generate_pipeline(v.program, {**sizes, **c}, placements=v.placement_map)
            # the partial sums, then their sum (in the first kernel's last work-group, with fuseLastGroup)
            assert len(stages) == (1 if "fuseLastGroup" in features(v) else 2)
            first = stages[0][0].launch.global_size
            widest = max(widest, int(np.prod(first)))
    assert sum("reduceKernels" in features(v) for v in variants) >= 20
    assert widest >= 1024  # work-items computing partial sums at once (was 1 for every variant)


def _case(program, reference, n: int, seed: int):
    """Random inputs of length ``n``, numpy's result, the default device and its profile."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(n).astype(np.float32) for _ in program.params]
    return inputs, float(reference(*inputs)[0]), get_device(None), resolve_profile(None)


@pytest.mark.parametrize("build,reference", [(linalg.dot, linalg.dot_reference), (linalg.total, linalg.total_reference),
                                             (linalg.maximum, linalg.maximum_reference)])
def test_every_parallel_reduction_variant_matches_numpy(build, reference):
    program, n = build(), 3 * 512
    inputs, want, device, profile = _case(program, reference, n, seed=0)
    ran = 0
    for k, v in enumerate(explore(program)):
        if "reduceKernels" not in features(v) or k % 2:  # every other variant: PoCL builds cost time
            continue
        for c in sample(solve(variant_space(v, {"N": n}, profile)), 1, seed=k):
            out = CompiledPipeline(v.program, {"N": n, **c}, device, v.placement_map).run(*inputs, repeat=1, warmup=0).output
            got = float(np.asarray(out).ravel()[0])
            assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), (k, c, got, want, [str(s) for s in v.trace])
            ran += 1
    assert ran >= 8


@pytest.mark.parametrize("build,reference", [(linalg.dot, linalg.dot_reference), (linalg.maximum, linalg.maximum_reference)])
def test_each_work_group_combines_its_items_results_as_a_tree_in_local_memory(build, reference):
    """Lift's parallel reduction: every ``reduceLcl`` variant halves its work-group's partial results in
    local memory, a barrier after each step, with groups of a power of two and of other sizes (12 items:
    12 -> 6 -> 3 -> 2 -> 1), and matches numpy."""
    program, n = build(), 3 * 512
    inputs, want, device, profile = _case(program, reference, n, seed=1)
    trees = [v for v in explore(program) if "reduceLcl" in features(v) and "fuseLastGroup" not in features(v)]
    assert len(trees) >= 2  # with and without the coalescing reorder (and vectorized, for the dot product)
    ran = 0
    for k, v in enumerate(trees):
        space = solve(variant_space(v, {"N": n}, profile))
        configs = sample(space, 400, seed=k)
        for items in (12, 64):
            c = next((c for c in configs if c["w0"] // c["w1"] == items), None)
            assert c is not None, (items, [str(s) for s in v.trace])
            stages = generate_pipeline(v.program, {"N": n, **c}, placements=v.placement_map)
            source = stages[0][0].source
            assert stages[0][0].launch.local_size == (items,)
            assert source.count("reduceLcl(0):") == int(np.ceil(np.log2(items)))
            assert source.count("barrier(CLK_LOCAL_MEM_FENCE)") >= int(np.ceil(np.log2(items)))
            out = CompiledPipeline(v.program, {"N": n, **c}, device, v.placement_map).run(*inputs, repeat=1, warmup=0).output
            got = float(np.asarray(out).ravel()[0])
            assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), (c, got, want, [str(s) for s in v.trace])
            ran += 1
    assert ran >= 4


@pytest.mark.parametrize("build,reference", [(linalg.total, linalg.total_reference), (linalg.maximum, linalg.maximum_reference)])
def test_the_partial_results_are_added_by_one_work_group(build, reference):
    """``reduceGroup``: the second kernel of a parallel reduction runs on one work-group of ``w2`` items,
    each reading every ``w2``-th partial result and the items' results combined as a tree, where it ran on
    one work-item; groups of a power of two and of other sizes (12 items) match numpy."""
    program, n = build(), 3 * 512
    inputs, want, device, profile = _case(program, reference, n, seed=2)
    grouped = [v for v in explore(program) if "reduceGroup" in features(v) and "fuseLastGroup" not in features(v)]
    assert len(grouped) >= 2  # with and without the coalescing reorder, vectorized or not
    ran = 0
    for k, v in enumerate(grouped[:4]):
        configs = sample(solve(variant_space(v, {"N": n}, profile)), 400, seed=k)
        for items in (12, 64):
            c = next((c for c in configs if c["w2"] == items), None)
            if c is None:
                continue
            stages = generate_pipeline(v.program, {"N": n, **c}, placements=v.placement_map)
            second = stages[1][0]
            assert second.launch.global_size == (items,) and second.launch.local_size == (items,)
            assert second.source.count("reduceLcl(0):") == int(np.ceil(np.log2(items)))
            out = CompiledPipeline(v.program, {"N": n, **c}, device, v.placement_map).run(*inputs, repeat=1, warmup=0).output
            got = float(np.asarray(out).ravel()[0])
            assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), (c, got, want, [str(s) for s in v.trace])
            ran += 1
    assert ran >= 4


@pytest.mark.parametrize("build,reference", [(linalg.dot, linalg.dot_reference), (linalg.total, linalg.total_reference),
                                             (linalg.maximum, linalg.maximum_reference)])
def test_the_partial_results_are_added_in_the_last_work_group(build, reference):
    """``fuseLastGroup``: one kernel, whose last work-group to take a ticket adds the partial results (on
    one item, or on the group with more or fewer items than the sum's own group had); launched again and
    again on the same buffers with new inputs, each launch gives its own inputs' result: the counter is
    back at zero after each."""
    from liftpy.host.device import _cl
    from liftpy.host.kernel import CompiledKernel, scratch_buffers

    cl = _cl()
    program, n = build(), 3 * 512
    device, profile = get_device(None), resolve_profile(None)
    fused = [v for v in explore(program) if "fuseLastGroup" in features(v)]
    assert len(fused) >= 4 and any("reduceGroup" in features(v) for v in fused)
    ran = 0
    for k, v in enumerate(fused):
        if k % 2:  # every other variant: PoCL builds cost time
            continue
        (c,) = sample(solve(variant_space(v, {"N": n}, profile)), 1, seed=k)
        (ks, _), = generate_pipeline(v.program, {"N": n, **c}, placements=v.placement_map)
        assert ks.source.count("kernel void") == 1 and "atomic_inc(ticket)" in ks.source
        assert [b.name for b in ks.scratch][-1] == "ticket"
        kernel = CompiledKernel(ks, device)
        ctx, queue = device.context, device.queue
        args = [cl.Buffer(ctx, cl.mem_flags.READ_ONLY, 4 * n) for _ in program.params]
        args += scratch_buffers(ks, ctx)
        out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4)
        for launch in range(3):
            inputs, want, _, _ = _case(program, reference, n, seed=10 * k + launch)
            for buf, arr in zip(args, inputs):
                cl.enqueue_copy(queue, buf, arr)
            kernel.kernel(queue, ks.launch.global_size, ks.launch.local_size, *args, out).wait()
            got = np.empty(1, np.float32)
            cl.enqueue_copy(queue, got, out).wait()
            assert abs(float(got[0]) - want) <= 1e-4 * max(1.0, abs(want)), (launch, c, float(got[0]), want,
                                                                           [str(s) for s in v.trace])
        ran += 1
    assert ran >= 2


def test_a_group_that_takes_several_chunks_waits_before_the_next_chunks_local_stores():
    """With fewer groups launched than chunks, each group's loop takes chunk after chunk; its items read
    the tree's result from local memory at the end of one chunk, and write the next chunk's values at the
    start of the next: a barrier ends each chunk, else one item's next store races another's last read
    (what Oclgrind reported of a group-sum variant).  The first kernel of a tree variant, launched with
    two groups for 24 chunks, matches the interpreter."""
    from liftpy.codegen.kernel import Launch, generate_kernel
    from liftpy.host.kernel import CompiledKernel
    from liftpy.ir.interpreter import evaluate
    from liftpy.ir.kernels import split_kernels

    program, n = linalg.total(), 3 * 512
    v = next(v for v in explore(program) if "reduceLcl" in features(v) and "fuseLastGroup" not in features(v)
             and "vectorizeSum" not in features(v) and "vectorizeSumWide" not in features(v))
    first = split_kernels(v.program)[0].program
    sizes = {"N": n, "w0": 64, "w1": 8}  # 24 chunks of 64, 8 items each
    ks = generate_kernel(first, sizes, launch=Launch((16,), (8,)))
    loop = ks.source[ks.source.index("for (int wg_0"):]
    assert "barrier(CLK_LOCAL_MEM_FENCE);  // before the next chunk's local stores" in loop[:loop.index("\n  }\n")]
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    got = CompiledKernel(ks, get_device(None)).run(x).output
    np.testing.assert_allclose(got, evaluate(first, x, sizes=sizes), rtol=1e-5, atol=1e-5)


def test_a_stage_run_in_the_last_work_group_shares_the_kernels_local_memory():
    """Two stages in one kernel (``fuseLastGroup``) hold their local memory together: on a device of 4,200
    bytes a first stage of 64 items (256 bytes) and a last group's tree of 1,024 (4,096 bytes) fit each
    alone, not together, and the space refuses the pair, naming both kernels."""
    import dataclasses

    from liftpy.constraints.solver import checker

    program = linalg.total()
    profile = dataclasses.replace(resolve_profile(None), local_mem_bytes=4200, max_work_group_size=1024,
                                  max_work_item_sizes=(1024, 1024, 1024))
    v = next(v for v in explore(program) if {"reduceGroup", "fuseLastGroup"} <= features(v) and "coalesce" not in features(v))
    space = variant_space(v, {"N": 1 << 16}, profile)
    violated = checker(space)({"w0": 64, "w1": 1, "w2": 1024})
    assert [c.primitive for c in violated] == ["device:local_mem_bytes"]
    assert "total_0 with total_1 run in its last work-group" in violated[0].origin
    assert not checker(space)({"w0": 64, "w1": 1, "w2": 512})
