"""Software pipelining and double buffering of local tiles (``codegen.passes.pipeline``): the next step's
tiles are loaded into registers while the current step computes, and tiles staged with ``toLocalDouble``
(the ``doubleBuffer`` rule) alternate between two halves, so that each step needs one barrier instead of
two.  Checked on the tiled convolution (a matrix product over the im2col view with both tiles staged in
local memory): the structure of the generated kernels, the memory the allocation analysis reports, and
their results on the default device against the reference."""

import pytest

from liftpy.codegen.allocation import allocations
from liftpy.codegen.kernel import DeviceLimits, generate_pipeline
from liftpy.codegen.stmt import Barrier, Loop, walk
from liftpy.host.device import get_device
from liftpy.ir.levels import Level
from liftpy.rewrite.explore import ExploreOptions, explore
from liftpy.host.kernel import CompiledPipeline
from liftpy.tuning.conv import ConvOperator
from liftpy.tuning.engine import variant_id

LIMITS = DeviceLimits(local_mem_bytes=49152)


@pytest.fixture(scope="module")
def staged():
    """The layer, two variants whose k loop copies both tiles into local memory (the second with them
    double-buffered, otherwise the same) and a configuration.  Derived with only the tiling rules (50
    variants in 2 s instead of the operator's 3,000 in a minute on CI's CPU)."""
    op = ConvOperator.of("8,10,10,16,3,1,1")
    variants = explore(op.program(), ExploreOptions(
        images=False, vectorize=False, partial=False, register_block=False, tile=False, let_private=False,
        local_stage=False, split_k=False, reduce_kernels=False, let_global=False, all_pairs=False, tree_reduce=False))
    (single,) = [v for v in variants if variant_id(v).startswith("flat+stage+tiled+unroll-item+wrg#")]
    (double,) = [v for v in variants if variant_id(v).startswith("db+flat+stage+tiled+unroll-item+wrg#")]
    return op, single, double, {**op.sizes(), "m0": 20, "n0": 8, "k0": 8, "r0": 4, "r1": 4}


def _k_loop(kernel):
    """The loop of the k steps: the sequential loop that holds a barrier."""
    loops = [x for x in walk(kernel.body) if isinstance(x, Loop) and x.level is Level.SEQ
             and any(isinstance(y, Barrier) for y in walk(x.body))]
    return loops[0]


def _barriers(stmt) -> int:
    return sum(1 for x in walk(stmt) if isinstance(x, Barrier))


def _run(op, v, sizes, stages):
    inputs, check = op.prepare(0)
    pipe = CompiledPipeline(v.program, sizes, get_device(), v.placement_map, stages=stages)
    return check(pipe.run(*inputs).output)


def test_double_buffered_tiles_need_one_barrier_per_step_and_stay_correct(staged):
    op, vs, vd, sizes = staged
    ks = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]
    kd = generate_pipeline(vd.program, sizes, LIMITS, vd.placement_map)[0][0]
    assert kd.ir.notes.get("pipelined") and ks.ir.notes.get("pipelined")
    assert kd.ir.notes["double_buffered"] == ("loc_0", "loc_1") and "double_buffered" not in ks.ir.notes
    assert kd.plan.local_bytes == 2 * ks.plan.local_bytes
    assert _barriers(_k_loop(kd.ir)) == 1 and _barriers(_k_loop(ks.ir)) == 2
    assert _run(op, vs, sizes, [(ks, "out")]).ok
    assert _run(op, vd, sizes, [(kd, "out")]).ok


def test_the_allocation_analysis_counts_both_halves(staged):
    """The constraint inference bounds local memory with what the analysis says: both halves."""
    op, vs, vd, sizes = staged
    kd = generate_pipeline(vd.program, sizes, LIMITS, vd.placement_map)[0][0]
    local = {a.name: a for a in allocations(vd.program) if a.space == "local"}
    assert sorted(local) == ["loc_0", "loc_1"] and all(a.copies == 2 for a in local.values())
    for b in kd.plan.buffers:
        if b.space == "local":
            assert b.nbytes == int(local[b.name].item_bytes.subs({s: sizes[str(s)] for s in local[b.name].item_bytes.free_symbols}))
    assert "toLocalDouble" in kd.source  # the header records the choice


def test_double_buffering_without_prefetching(staged, monkeypatch):
    """Tiles too large to prefetch into registers are still double-buffered: their copies are lowered in
    place and store into the step's half."""
    from liftpy.codegen.passes import pipeline

    op, vs, vd, sizes = staged
    monkeypatch.setattr(pipeline, "MAX_PREFETCH", 0)
    kd = generate_pipeline(vd.program, sizes, LIMITS, vd.placement_map)[0][0]
    assert "pipelined" not in kd.ir.notes and kd.ir.notes["double_buffered"] == ("loc_0", "loc_1")
    assert _barriers(_k_loop(kd.ir)) == 1
    assert _run(op, vd, sizes, [(kd, "out")]).ok


@pytest.mark.parametrize("prefetch", [True, False])
def test_copies_left_to_the_opencl_compiler_are_loops_marked_for_it_and_stay_correct(staged, monkeypatch, prefetch):
    """With ``copies.COMPILER_UNROLLS_COPIES`` a copy's steps stay one loop, printed with ``#pragma unroll``
    (and both loops where the division pass splits it), instead of one copy of the body per step; the
    kernel computes the same (pipelined copies, and plain ones when nothing is prefetched)."""
    from liftpy.codegen.passes import copies, pipeline

    op, vs, vd, sizes = staged
    if not prefetch:
        monkeypatch.setattr(pipeline, "MAX_PREFETCH", 0)
    before = generate_pipeline(vd.program, sizes, LIMITS, vd.placement_map)[0][0]
    monkeypatch.setattr(copies, "COMPILER_UNROLLS_COPIES", True)
    after = generate_pipeline(vd.program, sizes, LIMITS, vd.placement_map)[0][0]

    def copy_loops(k):
        return [x for x in walk(k.ir.body) if isinstance(x, Loop) and x.note.startswith("cooperative copy")]

    marked = [x for x in walk(after.ir.body) if isinstance(x, Loop) and x.compiler_unroll]
    assert not [x for x in walk(before.ir.body) if isinstance(x, Loop) and x.compiler_unroll]
    assert marked and all(x.level is Level.SEQ and not x.unroll and x.extent > 1 for x in marked)
    assert len(copy_loops(after)) > len(copy_loops(before))  # unrolled here, a copy's steps leave no loop
    lines = after.source.splitlines()
    pragmas = [n for n, line in enumerate(lines) if line.strip() == "#pragma unroll"]
    assert len(pragmas) == len(marked) and all(lines[n + 1].strip().startswith("for (") for n in pragmas)
    assert _barriers(_k_loop(after.ir)) == _barriers(_k_loop(before.ir))
    assert _run(op, vd, sizes, [(after, "out")]).ok
