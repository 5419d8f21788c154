"""The operator library: every entry's program agrees with its numpy reference under the interpreter, every
entry is explored through the generic engine (generated, run on PoCL, validated against the reference),
and the 3D helpers (slide3D, pad3D) and element access (at) behave as numpy says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from liftpy.errors import InputError, LiftTypeError
from liftpy.explore.operator import library_operator, random_inputs
from liftpy.ir import dsl as L
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.ir.types import Array, Float
from liftpy.operators import OPERATORS, parse_spec
from liftpy.search import UniformSearch

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"N": 7, "H": 5, "W": 6, "D": 3, "C": 2, "M": 4, "K": 3, "B": 2}


def _specs():
    for name, entry in OPERATORS.items():
        if "boundary" in entry.params:
            yield from (f"{name}:boundary={b}" for b in entry.choices["boundary"])
        elif "k" in entry.params:
            yield from (name, f"{name}:k=3,stride=1", f"{name}:k=2,stride=3")
        else:
            yield name


@pytest.mark.parametrize("spec", list(_specs()))
def test_program_matches_numpy_reference(spec):
    entry, _ = parse_spec(spec)
    sizes = {s: SMALL[s] for s in entry.sizes}
    op = library_operator(spec, sizes)
    inputs = random_inputs(op.prog, sizes, seed=3)
    got = evaluate(op.prog, *inputs, sizes=sizes)
    verdict = op.check(np.asarray(got), inputs)
    assert verdict.ok, verdict.message


# Explored through the engine elsewhere: jacobi1d (the CLI test below), jacobi2d (a notebook), conv2d (the
# conv tests below), matmul (tests/test_engine.py, as examples/programs/matmul_highlevel.lift), sum (its
# variants run in tests/test_reductions.py).
ENGINE_ELSEWHERE = {"jacobi1d", "jacobi2d", "conv2d", "matmul", "sum"}


@pytest.mark.parametrize("name", sorted(set(OPERATORS) - ENGINE_ELSEWHERE))
@pytest.mark.usefixtures("pools_here")
def test_explored_through_the_engine(name, tmp_path):
    from liftpy.explore import explore_operator

    entry = OPERATORS[name]
    sizes = {s: SMALL[s] * 2 for s in entry.sizes}
    op = library_operator(name, sizes)
    result = explore_operator(op, samples=2, db=tmp_path / "r.sqlite", search=UniformSearch, progress=False,
                              references=False, timeout_s=120, repeat=1)
    statuses = [r.status.value for r in result.records]
    assert statuses and all(s == "ok" for s in statuses), [r.error for r in result.records]
    assert result.best.metrics["max_error"] is not None


def test_bad_specs_are_refused_with_the_remedy():
    with pytest.raises(InputError, match="it has: "):
        parse_spec("jacobi4d")
    with pytest.raises(InputError, match="boundary must be one of clamp, mirror, wrap, zero"):
        parse_spec("blur2d:boundary=reflect")
    with pytest.raises(InputError, match="k must be a whole number"):
        parse_spec("maxpool2d:k=two")
    with pytest.raises(InputError, match="its parameters"):
        parse_spec("gemv:boundary=clamp")
    with pytest.raises(InputError, match="needs the sizes H, W"):
        library_operator("jacobi2d", {"H": 4})
    with pytest.raises(InputError, match="has no size Q"):
        library_operator("gemv", {"M": 4, "N": 4, "Q": 1})


@pytest.mark.slow
def test_cli_lists_and_explores_library_operators(tmp_path):
    r = subprocess.run([sys.executable, "-m", "liftpy", "operators"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and all(name in r.stdout for name in OPERATORS)
    db = tmp_path / "r.sqlite"
    r = subprocess.run([sys.executable, "-m", "liftpy", "explore", "jacobi1d:boundary=wrap", "-s", "N=64", "--samples", "2",
                        "--search", "uniform", "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ran 2 points" in r.stdout and "points of this problem: ok 2" in r.stdout
    r = subprocess.run([sys.executable, "-m", "liftpy", "explore", "jacobi1d:boundary=reflect", "-s", "N=64"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "boundary must be one of" in r.stderr


def test_slide3D_and_pad3D_match_numpy():
    x = np.random.default_rng(0).random((3, 4, 5), dtype=np.float32)
    program = L.make_program("w", [("x", Array(Float, 3, 4, 5))], lambda x: L.slide3D((2, 3, 2), (1, 1, 3), x))
    got = evaluate(program, x)
    want = np.lib.stride_tricks.sliding_window_view(x, (2, 3, 2))[:, :, ::3]
    assert got.shape == want.shape and np.array_equal(got, want)
    for boundary, mode in (("clamp", "edge"), ("wrap", "wrap"), (0.5, "constant")):
        program = L.make_program("p", [("x", Array(Float, 3, 4, 5))], lambda x: L.pad3D(1, 2, 0, 1, 2, 1, boundary, x))
        kw = {"constant_values": 0.5} if mode == "constant" else {}
        assert np.array_equal(evaluate(program, x), np.pad(x, ((2, 1), (0, 1), (1, 2)), mode=mode, **kw))


def test_jacobi3d_example_reads_back_and_matches_numpy():
    text = (ROOT / "examples" / "programs" / "jacobi3d.lift").read_text()
    program = parse_program(text)
    printed = show_program(program)
    assert show_program(parse_program(printed)) == printed
    g = np.random.default_rng(1).random((3, 4, 5), dtype=np.float32)
    from liftpy.operators.stencils import jacobi3d_reference

    assert np.allclose(evaluate(program, g), jacobi3d_reference(g), atol=1e-6)


def test_at_reads_one_element_and_refuses_out_of_range():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    program = L.make_program("a", [("x", Array(Float, 3, 4))], lambda x: L.map(lambda row: L.at(2, row), x))
    assert np.array_equal(evaluate(program, x), x[:, 2])
    with pytest.raises(LiftTypeError, match="below the length 4"):
        evaluate(L.make_program("a", [("x", Array(Float, 3, 4))], lambda x: L.map(lambda row: L.at(4, row), x)), x)
    with pytest.raises(LiftTypeError, match=r"write at\(1, xs\)"):
        evaluate(L.make_program("a", [("x", Array(Float, 3, 4))], lambda x: L.map(lambda row: L.get(row, 1), x)), x)
    with pytest.raises(LiftTypeError, match="whole number or a size"):
        L.at(1.5, L.Var("x"))


CONV_CASES = [
    ("conv2d:k=3x5,stride=2x1,pad=1/0/2/1", {"C": 2, "H": 8, "W": 7, "M": 3}),
    ("conv2d:k=3,dilation=2,pad=2", {"C": 2, "H": 7, "W": 7, "M": 2}),
    ("conv2d:k=3,groups=2,relu=1", {"C": 4, "H": 5, "W": 5, "M": 6}),
    ("conv2d:k=3,groups=4", {"C": 4, "H": 5, "W": 5, "M": 4}),  # depthwise
    ("conv2d:k=1,pad=0", {"C": 4, "H": 3, "W": 3, "M": 5}),
    ("conv2d:k=2x3,stride=2,dilation=2x1,pad=1x0,groups=3,relu=1", {"C": 3, "H": 9, "W": 8, "M": 6}),
    ("conv2d:k=3,relu=1,residual=1", {"C": 4, "H": 5, "W": 5, "M": 6}),  # a residual add fused, then the ReLU
    ("conv2d:k=3,stride=2,groups=4,relu=6,residual=1", {"C": 4, "H": 7, "W": 6, "M": 4}),
]


@pytest.mark.parametrize("spec,sizes", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv2d_shapes_match_numpy(spec, sizes):
    op = library_operator(spec, sizes)
    inputs = random_inputs(op.prog, sizes, seed=5)
    verdict = op.check(np.asarray(evaluate(op.prog, *inputs, sizes=sizes)), inputs)
    assert verdict.ok, verdict.message


@pytest.mark.parametrize("spec,sizes", [CONV_CASES[3], CONV_CASES[5]], ids=["depthwise", "dilated-grouped-strided"])
@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_conv2d_shapes_explored(spec, sizes, tmp_path):
    from liftpy.explore import explore_operator

    result = explore_operator(library_operator(spec, sizes), samples=3, db=tmp_path / "r.sqlite", search=UniformSearch,
                              progress=False, references=False, timeout_s=120, repeat=1)
    assert [r.status.value for r in result.records] == ["ok"] * 3, [r.error for r in result.records]


@pytest.mark.parametrize("spec,sizes,rules,tag", [
    pytest.param("conv2d:k=3x5,stride=2x1,dilation=2x1,pad=2,relu=1", {"C": 4, "H": 9, "W": 8, "M": 8}, ("tile2DReduce",), "tiled",
                 marks=pytest.mark.slow),
    (CONV_CASES[5][0], {"C": 6, "H": 9, "W": 8, "M": 6}, ("groupsOut",), "groups+"),
    (CONV_CASES[5][0], {"C": 6, "H": 9, "W": 8, "M": 6}, ("splitKGroups",), "+splitK+"),
    # (without split-K, which applies an epilogue in a kernel of its own: the tiles write the sum out)
    (CONV_CASES[6][0], {"C": 4, "H": 6, "W": 6, "M": 8}, ("tile2DReduce|tile2DReduceStrided|registerBlock2D", "!splitK"), ""),
], ids=["dilated-asymmetric", "grouped", "grouped-split", "residual"])
@pytest.mark.usefixtures("pools_here")
def test_conv2d_gemm_view_variants_validate(spec, sizes, rules, tag, tmp_path):
    """Any kernel shape, stride, padding and dilation is a matrix product over the im2col view, tiled as
    one; grouped, one product per group (``groupsOut``), and split along each group's reduction too
    (``splitKGroups``): such points are derived, run and check out."""
    from liftpy.explore import explore_operator

    result = explore_operator(library_operator(spec, sizes), samples=3, db=tmp_path / "r.sqlite", search=UniformSearch,
                              progress=False, references=False, timeout_s=120, repeat=1, rules=rules)
    assert [r.status.value for r in result.records] == ["ok"] * 3, [r.error for r in result.records]
    assert all(tag in r.variant and ("tiled" in r.variant or "block" in r.variant) for r in result.records), \
        [r.variant for r in result.records]


def test_a_fused_residual_is_added_before_the_activation():
    """``conv2d:...,residual=1`` computes relu(conv(x) + shortcut), what the network's add after the plain
    convolution computed."""
    from liftpy.operators import OPERATORS

    ref = OPERATORS["conv2d"].reference
    rng = np.random.default_rng(3)
    x, s = rng.standard_normal((5, 5, 4)).astype(np.float32), rng.standard_normal((5, 5, 6)).astype(np.float32)
    w, b = rng.standard_normal((6, 3, 3, 4)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    fused = ref(x, s, w, b, relu=6, residual=1)
    assert np.allclose(fused, np.clip(ref(x, w, b, relu=0) + s, 0, 6), atol=1e-5)
    assert (fused != np.clip(ref(x, w, b, relu=6) + s, 0, 6)).any()  # (the activation is not applied twice)


def test_conv2d_bad_shapes_are_refused():
    with pytest.raises(InputError, match="groups=3 must divide C=4"):
        library_operator("conv2d:groups=3", {"C": 4, "H": 5, "W": 5, "M": 6})
    with pytest.raises(InputError, match="spans 7 > H=4"):
        library_operator("conv2d:k=4,dilation=2,pad=0", {"C": 1, "H": 4, "W": 9, "M": 1})
    with pytest.raises(InputError, match="pad must be"):
        library_operator("conv2d:pad=1/2", {"C": 1, "H": 4, "W": 4, "M": 1})
    with pytest.raises(InputError, match="k must be N or NxM"):
        library_operator("conv2d:k=3by3", {"C": 1, "H": 4, "W": 4, "M": 1})
