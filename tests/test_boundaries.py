"""pad / pad2D with boundary functions (constant, clamp, mirror, wrap): the interpreter against an
independent numpy model, the text form, the requirements the type rule states, and every lowered variant
of a 2D blur compiling and matching numpy for each boundary (the padded image is a view, never copied)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.errors import LiftTypeError, ParseError
from liftpy.ir import dsl as L
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.ir.typecheck import typecheck
from liftpy.ir.types import Array, Float, size_var

ROOT = Path(__file__).resolve().parents[1]
BLUR = (ROOT / "examples" / "programs" / "blur_boundary.lift").read_text()
MODES = {"clamp": "edge", "mirror": "symmetric", "wrap": "wrap"}


def reference_index(boundary: str, j: np.ndarray, n: int) -> np.ndarray:
    """Which element position ``j`` (relative to the array's start) reads, written out case by case."""
    if boundary == "clamp":
        return np.minimum(np.maximum(j, 0), n - 1)
    if boundary == "mirror":
        return np.where(j < 0, -1 - j, np.where(j >= n, 2 * n - 1 - j, j))
    return np.where(j < 0, j + n, np.where(j >= n, j - n, j))


@settings(max_examples=60)
@given(st.sampled_from(sorted(MODES)), st.integers(1, 9), st.data())
def test_pad_boundary_matches_model(boundary, n, data):
    most = 5 if boundary == "clamp" else n
    left, right = data.draw(st.integers(0, most)), data.draw(st.integers(0, most))
    x = np.arange(1, n + 1, dtype=np.float32) * 1.5
    program = L.make_program("p", [("x", Array(Float, n))], lambda x: L.pad(left, right, boundary, x))
    got = evaluate(program, x)
    want = x[reference_index(boundary, np.arange(left + n + right) - left, n)]
    assert np.array_equal(got, want)
    assert np.array_equal(got, np.pad(x, (left, right), mode=MODES[boundary]))


@pytest.mark.parametrize("boundary", sorted(MODES))
def test_pad2D_boundary_text_round_trip(boundary):
    program = parse_program(BLUR.replace("clamp,", f"{boundary},"))
    text = show_program(program)
    assert f"pad(1, 1, {boundary}, " in text
    assert show_program(parse_program(text)) == text
    rng = np.random.default_rng(1)
    w, img = rng.random((3, 3), dtype=np.float32), rng.random((5, 7), dtype=np.float32)
    assert np.allclose(evaluate(parse_program(text), w, img).reshape(5, 7), _blur(w, img, boundary), atol=1e-5)


def _blur(w, img, boundary):
    padded = np.pad(img, 1, mode=MODES[boundary]) if boundary in MODES else np.pad(img, 1)
    h, wd = img.shape
    return np.array([[(padded[i:i + 3, j:j + 3] * w).sum() for j in range(wd)] for i in range(h)], dtype=np.float32)


def test_bad_boundaries_are_refused_naming_pad():
    x = ("x", Array(Float, 4))
    with pytest.raises(LiftTypeError, match="unknown boundary 'reflect'"):
        typecheck(L.make_program("p", [x], lambda x: L.pad(1, 1, "reflect", x)))
    with pytest.raises(LiftTypeError, match="clamp boundary pads and cannot crop"):
        typecheck(L.make_program("p", [x], lambda x: L.pad(-1, 0, "clamp", x)))
    with pytest.raises(LiftTypeError, match="must not exceed the length 4"):
        typecheck(L.make_program("p", [x], lambda x: L.pad(0, 5, "mirror", x)))
    with pytest.raises(ParseError, match="a boundary"):
        parse_program("def f(x: [float]N) = pad(1, 1, edge, x)")


def test_symbolic_amounts_become_requirements():
    """With symbolic sizes the limits of mirror and wrap are requirements (constraints of the space)."""
    r, n = size_var("R"), size_var("N")
    program = L.make_program("p", [("x", Array(Float, n))], lambda x: L.pad(r, r, "wrap", x))
    preds = {req.predicate for req in typecheck(program).requirements}
    assert sympy.Le(r, n) in preds  # (R >= 0 holds already: sizes are positive)


@pytest.mark.parametrize("boundary", ["clamp", "mirror", "wrap"])
@pytest.mark.slow
def test_every_blur_variant_compiles_and_matches(boundary):
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.rewrite.explore import explore_all

    program = parse_program(BLUR.replace("clamp,", f"{boundary},"))
    kept, dropped = explore_all(program)
    assert kept and not dropped
    sizes = {"H": 6, "W": 8}
    rng = np.random.default_rng(0)
    w, img = rng.random((3, 3), dtype=np.float32), rng.random((6, 8), dtype=np.float32)
    want = _blur(w, img, boundary)
    device = get_device(None)
    ran = 0
    # Every variant generates under the clamp boundary, every third under the others (their index
    # functions differ, the variants do not); a sixth of those also run (PoCL builds cost time).
    step = 1 if boundary == "clamp" else 3
    for k, v in list(enumerate(kept))[::step]:
        configs = sample(solve(variant_space(v, sizes)), 1, seed=k)
        if not configs:
            continue
        stages = generate_pipeline(v.program, {**sizes, **configs[0]}, placements=v.placement_map)
        if k % 6 == 0:
            out = CompiledPipeline(v.program, {**sizes, **configs[0]}, device, v.placement_map, stages=stages).run(
                w, img, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).reshape(want.shape), want, atol=1e-4), (k, [str(s) for s in v.trace])
            ran += 1
    assert ran >= 8 if boundary == "clamp" else ran >= 3


def test_non_linear_stencil_reading_single_neighbours():
    """examples/programs/gradient_magnitude.lift: a square root of squared differences of neighbours read
    with at(), under a clamp boundary; the interpreter and sampled kernels against numpy."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.host.profile import resolve_profile
    from liftpy.rewrite.explore import explore_all

    program = parse_program((ROOT / "examples" / "programs" / "gradient_magnitude.lift").read_text())
    img = np.random.default_rng(2).random((6, 9), dtype=np.float32)
    p = np.pad(img.astype(np.float64), 1, mode="edge")
    want = np.sqrt(((p[1:-1, 2:] - p[1:-1, :-2]) / 2) ** 2 + ((p[2:, 1:-1] - p[:-2, 1:-1]) / 2) ** 2)
    assert np.allclose(evaluate(program, img), want, atol=1e-5)
    kept, dropped = explore_all(program)
    assert kept and not dropped
    device, profile = get_device(None), resolve_profile(None)
    ran = 0
    for k, v in enumerate(kept[::3]):
        for config in sample(solve(variant_space(v, {"H": 6, "W": 9}, profile)), 1, seed=k):
            out = CompiledPipeline(v.program, {"H": 6, "W": 9, **config}, device, v.placement_map).run(img, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).reshape(want.shape), want, atol=1e-4), k
            ran += 1
    assert ran >= 3
