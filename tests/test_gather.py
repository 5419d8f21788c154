"""gather(indices, xs): elements (or rows) selected through an index array read from memory: the
interpreter against numpy, its type rule and errors, and every variant of a neighbour-list program and
of a row gather compiling to kernels (``pos[nbrs[i]]``) that match numpy on PoCL."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.errors import LiftError, LiftTypeError
from liftpy.ir import dsl as L
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.ir.typecheck import typecheck
from liftpy.ir.types import Array, Float, Int

ROOT = Path(__file__).resolve().parents[1]
NEIGHBOURS = (ROOT / "examples" / "programs" / "neighbour_sum.lift").read_text()
ROWS = """
def rownorms(points: [[float]3]N, picks: [int]M) =
  map(fun(p) => reduce(fun(acc, v) => add(acc, mult(v, v)), 0.0f, p), gather(picks, points))
"""


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 10**6))
def test_gather_matches_numpy(n, m, seed):
    rng = np.random.default_rng(seed)
    xs, idx = rng.standard_normal((n, 2)).astype(np.float32), rng.integers(0, n, m).astype(np.int32)
    program = L.make_program("g", [("i", Array(Int, m)), ("x", Array(Float, n, 2))], lambda i, x: L.gather(i, x))
    assert np.array_equal(evaluate(program, idx, xs), xs[idx])


def test_type_rule_and_errors():
    with pytest.raises(LiftTypeError, match="indices must be an array of int"):
        typecheck(L.make_program("g", [("i", Array(Float, 3)), ("x", Array(Float, 4))], lambda i, x: L.gather(i, x)))
    program = parse_program(NEIGHBOURS)
    pos = np.zeros(4, np.float32)
    with pytest.raises(LiftError, match="index 7 outside the 4 elements"):
        evaluate(program, pos, np.array([[0, 7]] * 4, np.int32))
    assert show_program(parse_program(show_program(program))) == show_program(program)


@pytest.mark.parametrize("text,sizes", [(NEIGHBOURS, {"N": 24, "K": 5}), (ROWS, {"N": 16, "M": 12})], ids=["neighbours", "rows"])
def test_every_variant_compiles_and_matches(text, sizes):
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.host.profile import resolve_profile
    from liftpy.rewrite.explore import explore_all

    program = parse_program(text)
    kept, dropped = explore_all(program)
    assert kept and not dropped
    rng = np.random.default_rng(0)
    if "K" in sizes:
        a = rng.standard_normal(sizes["N"]).astype(np.float32)
        b = rng.integers(0, sizes["N"], (sizes["N"], sizes["K"])).astype(np.int32)
        want = (a[b].astype(np.float64) ** 2).sum(axis=1)
    else:
        a = rng.standard_normal((sizes["N"], 3)).astype(np.float32)
        b = rng.integers(0, sizes["N"], sizes["M"]).astype(np.int32)
        want = (a[b].astype(np.float64) ** 2).sum(axis=1)
    device, profile = get_device(None), resolve_profile(None)
    ran = 0
    for k, v in enumerate(kept):
        for config in sample(solve(variant_space(v, sizes, profile)), 1, seed=k):
            pipeline = CompiledPipeline(v.program, {**sizes, **config}, device, v.placement_map)
            if ran == 0:
                assert ("nbrs[" if "K" in sizes else "picks[") in pipeline.source  # the index read from memory
            out = pipeline.run(a, b, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).ravel(), want, atol=1e-4), (k, config)
            ran += 1
    assert ran >= 5
