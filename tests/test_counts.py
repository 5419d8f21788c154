"""The symbolic counts of a lowered program (``liftpy.model.counts``): a register block's operands are read
once per reduction step, as the OpenCL compiler, which unrolls the loops over a private array, reads them."""

from pathlib import Path

import sympy

from liftpy.model.counts import count

ROOT = Path(__file__).resolve().parents[1]


def test_a_register_blocks_operands_are_read_once_per_step():
    from liftpy.explore.operator import ProgramOperator, load_program
    from liftpy.results.cache import cached_variants
    from liftpy.search import select_variants

    sizes = {"M": 64, "N": 64, "K": 64}
    op = ProgramOperator(load_program(str(ROOT / "examples/programs/matmul_highlevel.lift")), tuple(sizes.items()))
    # registerBlock2D with both output dimensions on mapGlb, its block loops left to the compiler
    (v,) = [v for v in select_variants(cached_variants(op), ("registerBlock2D",))
            if [s.rule for s in v.trace][:3] == ["registerBlock2D", "mapGlb1", "mapGlb0"] and len(v.trace) <= 8
            and not any("nroll" in s.rule for s in v.trace)]
    for r0, r1 in ((4, 4), (2, 8), (8, 1)):
        at = {sympy.Symbol(k, positive=True, integer=True): n for k, n in {**sizes, "r0": r0, "r1": r1}.items()}
        items = sizes["M"] * sizes["N"] // (r0 * r1)
        # Each work-item reads a column of r0 floats of A and a row of r1 floats of B at each of K steps
        # (counted as loops, B's row would be read again for each of the r0 rows: items * K * (r0 + r0 * r1)).
        assert count(v.program).global_reads.subs(at) == 4 * items * sizes["K"] * (r0 + r1)


# A row's maximum bound above the map over its elements: where that map is mapGlb(0) inside the mapGlb(1)
# over rows, every item of the row computes the maximum again; where it is mapSeq, one item does, once.
_ROW_SHIFT = """
def shift(x: [[float]N]M) =
  {rows}fun(r) => let(fun(top) => {elems}fun(v) => sub(v, top[0]), r), reduceSeq(max, -3e38f, r)), x)
"""


def test_work_outside_an_inner_parallel_map_is_counted_once_per_work_item_that_repeats_it():
    from liftpy.ir.parser import parse_program

    at = {sympy.Symbol("M", positive=True, integer=True): 8, sympy.Symbol("N", positive=True, integer=True): 32}
    repeated = count(parse_program(_ROW_SHIFT.format(rows="mapGlb(1, ", elems="mapGlb(0, ")))
    once = count(parse_program(_ROW_SHIFT.format(rows="mapGlb(0, ", elems="mapSeq(")))
    # once: M rows x (N max + N sub); repeated: each of a row's N items runs the N max again.
    assert once.flops.subs(at) == 8 * (32 + 32)
    assert repeated.flops.subs(at) == 8 * (32 * 32 + 32)
    assert repeated.global_reads.subs(at) > once.global_reads.subs(at)


def test_a_tile_staged_in_local_memory_is_copied_once_per_group_not_per_item():
    """A group's items divide the copy of its tiles into local memory between them: a tiled matrix
    product staging both operands copies, at each of K / k0 steps, an m0 x k0 and a k0 x n0 tile per group.
    Staged outside the maps over the group's items, the copy was counted once per item: a tiling of
    VGG-16 layer 12 was predicted 16 ms where it ran in 0.44 (the fastest of its layer on the H200), and
    Kendall tau over the H200 networks' convolution layers was 0.15 (VGG-16) and -0.02 (ResNet-18)."""
    from liftpy.explore.operator import ProgramOperator, load_program
    from liftpy.results.cache import cached_variants
    from liftpy.search import select_variants

    sizes = {"M": 64, "N": 64, "K": 64}
    op = ProgramOperator(load_program(str(ROOT / "examples/programs/matmul_highlevel.lift")), tuple(sizes.items()))
    staged = [v for v in select_variants(cached_variants(op), ("stageTiles",))
              if [s.rule for s in v.trace][:2] == ["tile2DReduce", "mapWrg1"]]  # (with and without double buffers)
    assert staged
    M, N, K = sizes["M"], sizes["N"], sizes["K"]
    for v in staged:
        c = count(v.program)
        for m0, n0, k0, r0, r1 in ((16, 16, 8, 4, 4), (32, 16, 4, 8, 2), (16, 32, 16, 2, 8)):
            at = {sympy.Symbol(k, positive=True, integer=True): n
                  for k, n in {**sizes, "m0": m0, "n0": n0, "k0": k0, "r0": r0, "r1": r1}.items()}
            groups, steps = (M // m0) * (N // n0), K // k0
            assert c.copy_bytes.subs(at) == 4 * groups * steps * (m0 * k0 + k0 * n0)
            assert c.global_reads.subs(at) == c.copy_bytes.subs(at)  # every global read is a tile's copy
