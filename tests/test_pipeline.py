"""Software pipelining and double buffering of local tiles (``codegen.passes.pipeline``): the next step's
tiles are loaded into registers while the current step computes, and tiles staged with ``toLocalDouble``
(the ``doubleBuffer`` rule) alternate between two halves, so that each step needs one barrier instead of
two.  Checked on the tiled convolution (a matrix product over the im2col view with both tiles staged in
local memory): the structure of the generated kernels, the memory the allocation analysis reports, and
their results on the default device against the reference."""

import pytest

from liftpy.codegen.allocation import allocations
from liftpy.codegen.kernel import DeviceLimits, generate_pipeline
from liftpy.codegen.stmt import Barrier, Loop, Store, walk
from liftpy.explore.conv import ConvOperator
from liftpy.host.device import get_device
from liftpy.host.kernel import CompiledPipeline
from liftpy.ir.levels import Level
from liftpy.rewrite.explore import ExploreOptions, explore
from liftpy.search import variant_id

LIMITS = DeviceLimits(local_mem_bytes=49152)


@pytest.fixture(scope="module")
def tiled():
    """The layer and its variants, derived with only the tiling rules (50 variants in 2 s instead of the
    operator's 3,000 in a minute on CI's CPU)."""
    op = ConvOperator.of("8,10,10,16,3,1,1")
    return op, explore(op.program(), ExploreOptions(
        images=False, vectorize=False, partial=False, register_block=False, tile=False, let_private=False,
        local_stage=False, split_k=False, reduce_kernels=False, let_global=False, all_pairs=False, tree_reduce=False))


def _named(variants, prefix: str):
    (v,) = [v for v in variants if variant_id(v).startswith(prefix)]
    return v


@pytest.fixture(scope="module")
def staged(tiled):
    """The layer, two variants whose k loop copies both tiles into local memory (the second with them
    double-buffered, otherwise the same) and a configuration."""
    op, variants = tiled
    single, double = _named(variants, "flat+stage+tiled+unroll-item+wrg#"), _named(variants, "db+flat+stage+tiled+unroll-item+wrg#")
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
    kernel computes the same (pipelined copies, and plain ones when nothing is prefetched).  (The other
    loops all unrolled by liftpy, policy ``none``, so that the only loops marked are the copies'.)"""
    import importlib

    from liftpy.codegen.passes import copies, pipeline

    monkeypatch.setattr(importlib.import_module("liftpy.codegen.passes.unroll"), "COMPILER_UNROLLS", "none")
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


@pytest.mark.parametrize("policy", ["none", "registers", "reductions", "reductions+registers", "all", "blocks"])
def test_each_unrolling_policy_leaves_its_loops_to_the_compiler_and_stays_correct(staged, monkeypatch, policy):
    """``unroll.COMPILER_UNROLLS`` picks the loops marked for unrolling that stay loops printed with
    ``#pragma unroll``: none of them (liftpy copies every body), a ``reduceSeqUnroll``'s steps, the loops
    that only move values between private arrays, or all; every kernel computes the same."""
    import importlib

    unroll = importlib.import_module("liftpy.codegen.passes.unroll")
    op, vs, vd, sizes = staged
    monkeypatch.setattr(unroll, "COMPILER_UNROLLS", policy)
    k = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]
    marked = [x for x in walk(k.ir.body) if isinstance(x, Loop) and x.compiler_unroll]
    assert all(x.level is Level.SEQ and not x.unroll and x.extent > 1 for x in marked)
    assert not [x for x in walk(k.ir.body) if isinstance(x, Loop) and x.unroll]  # the rest unrolled by liftpy
    notes = {x.note for x in marked}
    if policy == "none":
        assert not marked and "#pragma unroll" not in k.source
    if policy == "reductions":
        assert notes == {"reduceSeqUnroll"}
    if policy == "registers":
        assert marked and all(unroll._registers_only(x) for x in marked) and "reduceSeqUnroll" not in notes
    if policy in ("reductions+registers", "all"):
        assert "reduceSeqUnroll" in notes and any(unroll._registers_only(x) for x in marked)
    lines = k.source.splitlines()
    pragmas = [n for n, line in enumerate(lines) if line.strip() == "#pragma unroll"]
    assert len(pragmas) == len(marked) and all(lines[n + 1].strip().startswith("for (") for n in pragmas)
    assert _run(op, vs, sizes, [(k, "out")]).ok


@pytest.mark.parametrize("layout", ["stageT", "stage"])
def test_the_default_policy_keeps_the_register_blocks_vector_loads(tiled, monkeypatch, layout):
    """The default leaves the compiler a register block's k steps, not the block inside a step: liftpy
    still copies the block and loads its operands as vectors (what the kernels' speed needs, ``unroll``'s
    docstring), with far fewer lines than copying every loop.  Staged transposed (``stageTilesT``), a
    step's operands lie side by side, and the steps are one loop; staged as they are (``stageTiles``), the
    same operand of consecutive steps does, and the loop runs over groups of four steps copied by liftpy."""
    import importlib

    unroll = importlib.import_module("liftpy.codegen.passes.unroll")
    op, variants = tiled
    vs, sizes = _named(variants, f"flat+{layout}+tiled+unroll-item+wrg#"), {**op.sizes(), "m0": 20, "n0": 8, "k0": 8, "r0": 4, "r1": 4}
    assert unroll.COMPILER_UNROLLS == "reductions+registers"
    default = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]
    monkeypatch.setattr(unroll, "COMPILER_UNROLLS", "none")
    copied = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]
    monkeypatch.setattr(unroll, "COMPILER_UNROLLS", "all")
    rolled = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]

    def vector_loads(k):
        return k.source.count("(local float4*)")

    assert vector_loads(copied) > 0 and vector_loads(default) > 0 and vector_loads(rolled) == 0
    assert len(rolled.source) < len(default.source) < len(copied.source)
    steps = [x for x in walk(default.ir.body) if isinstance(x, Loop) and x.note == "reduceSeqUnroll"]
    assert len(steps) == 1 and steps[0].compiler_unroll and steps[0].extent == (8 if layout == "stageT" else 2)
    assert _run(op, vs, sizes, [(default, "out")]).ok


def test_the_blocks_policy_leaves_a_register_block_to_the_compiler_in_blocks_of_four_by_four(tiled, monkeypatch):
    """``blocks`` (measured, not the default: ``unroll``'s docstring) leaves the compiler the maps of a register
    block too, in groups of four iterations copied by liftpy, the groups of the two maps interchanged so
    that one loop body holds a 4 x 4 block whose operands still load as vectors; the kernel computes the
    same in fewer lines."""
    import importlib

    unroll = importlib.import_module("liftpy.codegen.passes.unroll")
    op, variants = tiled
    vs, sizes = _named(variants, "flat+stageT+tiled+unroll-item+wrg#"), {**op.sizes(), "m0": 100, "n0": 16, "k0": 8, "r0": 20, "r1": 8}
    default = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]
    monkeypatch.setattr(unroll, "COMPILER_UNROLLS", "blocks")
    blocks = generate_pipeline(vs.program, sizes, LIMITS, vs.placement_map)[0][0]
    (step,) = [x for x in walk(blocks.ir.body) if isinstance(x, Loop) and x.note == "reduceSeqUnroll"]
    (rows,) = step.body.items  # the block's rows, five groups of four
    (cols,) = rows.body.items  # inside each, its columns: two groups of four
    assert (rows.extent, cols.extent) == (5, 2) and rows.compiler_unroll and cols.compiler_unroll
    fmas = [x for x in walk(cols.body) if isinstance(x, Store) and x.buffer.space == "private" and "multAndSumUp" in str(x.value)]
    assert len(fmas) == 16
    vectors = [line for line in blocks.source.splitlines() if "(local float4*)" in line]
    assert len(vectors) == 2  # one vector of each operand per block
    assert len(blocks.source) < len(default.source)
    assert _run(op, vs, sizes, [(blocks, "out")]).ok
