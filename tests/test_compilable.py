"""Every variant ``explore`` returns compiles: a lowered variant that no size can turn into a kernel (a
computed map read where nothing can hold it) is dropped at derivation, with the reason, and listed by
``liftpy variants --dropped``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

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


def test_variants_code_generation_refuses_are_dropped_with_a_reason():
    program = parse_program(ROW_TWICE)
    kept, dropped = explore_all(program)
    assert len(kept) + len(dropped) == 90 and len(dropped) == 12
    assert all("used as an input" in d.reason for d in dropped)
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
        if k % 8 == 0:  # a sample also runs and matches the interpreter
            out = CompiledPipeline(v.program, {**sizes, **configs[0]}, device, v.placement_map, stages=stages).run(
                A, x, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).reshape(want.shape), want, atol=1e-4), k


def test_cli_lists_dropped_variants(tmp_path):
    f = tmp_path / "rowtwice.lift"
    f.write_text(ROW_TWICE)
    r = subprocess.run([sys.executable, "-m", "liftpy", "variants", str(f), "--dropped"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "12 lowered variants dropped" in r.stdout and "used as an input" in r.stdout
    r = subprocess.run([sys.executable, "-m", "liftpy", "variants", str(f)], capture_output=True, text=True, timeout=300)
    assert "78 distinct lowered variants" in r.stdout
