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
