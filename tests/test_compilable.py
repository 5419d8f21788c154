"""Every variant ``explore`` returns compiles: a lowered variant that no size can turn into a kernel (a
computed map read where nothing can hold it) is dropped at derivation, with the reason, and listed by
``liftpy variants --dropped``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from liftpy.codegen.kernel import generate_pipeline
from liftpy.constraints import sample, solve
from liftpy.constraints.infer import variant_space
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.rewrite.explore import explore, explore_all

# Issue 17's example: a user function applied to each row's sum.  12 of its 90 lowered variants
# (partialReduce under mapWrg/mapLcl) used to fail in code generation.
ROW_TWICE = """
def rowtwice(A: [[float]N]M, x: [float]N) =
  join(map(fun(row) => map(fun(s) => add(s, s), reduce(fun(a, q) => multAndSumUp(a, q._0, q._1), 0.0f, zip(row, x))), A))
"""


# A let-bound intermediate (y = A x, then A^T y) without a kernel boundary written by hand: letGlobal makes
# it a kernel of its own; without that rule no lowering can place it, and every variant is dropped, each
# with its reason.
LET_BOUND = """
def ata(A: [[float]N]M, x: [float]N) =
  let(fun(t) => join(map(fun(c) => reduce(fun(a, q) => multAndSumUp(a, q._0, q._1), 0.0f, zip(c, t)), transpose(A))),
      join(map(fun(r) => reduce(fun(a, q) => multAndSumUp(a, q._0, q._1), 0.0f, zip(r, x)), A)))
"""

# A newcomer's batched matrix product: the inner product a fold (``at(0, reduce(...))``) stored as each
# element.  Every variant of the general stages used to fail in code generation ("cannot be stored through
# at"), none of them dropped at derivation.
BATCHED_FOLD = """
def batched_matmul(a: [[[float]K]N]B, b: [[[float]M]K]B) =
  map(fun(pair) => map(fun(row) => map(fun(col) =>
        at(0, reduce(fun(acc, p) => add(acc, mult(p._0, p._1)), 0.0f, zip(row, col))),
      transpose(pair._1)), pair._0), zip(a, b))
"""


def _parallel_map_over_reduction(e) -> bool:
    """A map over a reduction's result spread over work-items.  The one exception is a work-group's
    cooperative reduction (reduceLcl, from the row rules): its result is shared by the group, and the map
    over it is the group's own local items (mapLcl), not a dimension of work-items of its own."""
    from liftpy.ir import primitives as P
    from liftpy.ir.expr import Call, subterms

    def cooperative(t) -> bool:
        return isinstance(t.fn, P.MapLike) and t.fn.name.startswith("mapLcl") and isinstance(t.args[0].fn, P.ReduceLcl)

    return any(isinstance(t, Call) and isinstance(t.fn, P.MapLike) and t.fn.level is not None and t.fn.level.parallel
               and isinstance(t.args[0], Call) and isinstance(t.args[0].fn, P.ReduceLike) and not cooperative(t)
               for t in subterms(e))


def test_a_map_over_a_reduction_result_stays_sequential_and_every_variant_compiles():
    """The map over each row's sum never becomes a dimension of work-items of its own (it used to, and 12
    of 90 lowered variants combining it with partialReduce did not compile)."""
    program = parse_program(ROW_TWICE)
    kept, dropped = explore_all(program)
    assert kept and not dropped
    assert not any(_parallel_map_over_reduction(v.program.body) for v in kept)
    assert explore(program) == kept
    sizes = {"N": 8, "M": 6}
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((6, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    want = evaluate(program, A, x)
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline

    device = get_device(None)
    for k, v in enumerate(kept):
        configs = sample(solve(variant_space(v, sizes)), 1, seed=k)
        assert configs, f"variant {k} has no valid configuration at {sizes}"
        stages = generate_pipeline(v.program, {**sizes, **configs[0]}, placements=v.placement_map)
        shares_a_row = bool({s.rule for s in v.trace} & {"dealRows", "splitRows", "reduceLclShared"})
        if k % 8 == 0 or shares_a_row:  # a sample, and every work-group sharing a row, runs and matches
            out = CompiledPipeline(v.program, {**sizes, **configs[0]}, device, v.placement_map, stages=stages).run(
                A, x, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).reshape(want.shape), want, atol=1e-4), k


def test_every_variant_of_a_batched_product_written_with_fold_compiles():
    """A fold stored as a map's element is written through ``at`` of its one-element result; every variant
    of the batched product, with the normal form and without (its fold then never rewritten), generates
    code; none is dropped."""
    from liftpy.rewrite.explore import ExploreOptions

    program = parse_program(BATCHED_FOLD)
    sizes = {"B": 2, "N": 8, "K": 8, "M": 8}
    for options, every in ((ExploreOptions(), 1), (ExploreOptions(normal_form=False), 3)):
        kept, dropped = explore_all(program, options)
        assert kept and not dropped
        for k, v in enumerate(kept[::every]):
            for config in sample(solve(variant_space(v, sizes)), 1, seed=k):
                generate_pipeline(v.program, {**sizes, **config}, placements=v.placement_map)


def test_variants_code_generation_refuses_are_dropped_with_a_reason():
    from liftpy.rewrite.explore import ExploreOptions

    kept, dropped = explore_all(parse_program(LET_BOUND), ExploreOptions(let_global=False))
    assert not kept and len(dropped) == 20
    assert all("used as an input" in d.reason for d in dropped)


def test_let_bound_intermediate_becomes_a_kernel_and_matches():
    program = parse_program(LET_BOUND)
    kept, dropped = explore_all(program)
    assert kept and not dropped
    assert all("letGlobal" in {s.rule for s in v.trace} for v in kept)
    sizes = {"M": 12, "N": 8}
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((12, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    want = A.T.astype(np.float64) @ (A.astype(np.float64) @ x)
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.host.profile import resolve_profile

    device, profile = get_device(None), resolve_profile(None)
    ran = 0
    for k, v in enumerate(kept):
        for config in sample(solve(variant_space(v, sizes, profile)), 1, seed=k):
            pipeline = CompiledPipeline(v.program, {**sizes, **config}, device, v.placement_map)
            # (A^T y over blocks of rows, then the blocks' sums: a third kernel)
            assert len(pipeline.kernels) == 2 + ("splitColumns" in {s.rule for s in v.trace})
            out = pipeline.run(A, x, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).ravel(), want, atol=1e-3), k
            ran += 1
    assert ran >= 10


@pytest.mark.slow
def test_cli_lists_dropped_variants(tmp_path):
    f = tmp_path / "ata.lift"
    f.write_text(LET_BOUND)
    r = subprocess.run([sys.executable, "-m", "liftpy", "variants", str(f), "--dropped"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "0 lowered variants dropped" in r.stdout
    f = tmp_path / "rowtwice.lift"
    f.write_text(ROW_TWICE)
    r = subprocess.run([sys.executable, "-m", "liftpy", "variants", str(f)], capture_output=True, text=True, timeout=300)
    # 32 sequential-per-row variants and 10 where a work-group (or a warp of it) shares a row
    assert "42 distinct lowered variants" in r.stdout  # none staging an array each item only reads its own part of
