"""Programs with several results (issue 55, item 4): ``return (total, normalised)`` in the embedded DSL,
``tuple(a, b)`` in the text form, results of different lengths and ranks.

- the interpreter gives a Python tuple of arrays, equal to numpy's (hypothesis over inputs and operations);
- the text form prints and parses them back;
- ``split_kernels`` makes one kernel per result (``out0``, ``out1``) after the kernels of what they share;
- every variant ``explore_all`` derives computes what the program does (the interpreter, every variant),
  and sampled variants and configurations run on the default device (PoCL) and match the interpreter
  (every variant of ``stats`` in the slow test);
- ``tuple`` anywhere but as what the program returns is refused, saying what to write;
- ``liftpy explore file.py:stats`` searches such a program from the command line (slow).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy as lp
from liftpy import Array, Float, Int, LiftTypeError, make_program, program, sizes
from liftpy.codegen.kernel import generate_kernel
from liftpy.errors import CodegenError
from liftpy.host.kernel import CompiledPipeline, compile_program
from liftpy.ir.compare import compare
from liftpy.ir.interpreter import evaluate
from liftpy.ir.kernels import result_buffers, split_kernels
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.rewrite.explore import explore_all
from liftpy.rewrite.outputs import rename_sizes, split_parts
from liftpy.rewrite.validate import configurations
from liftpy.ir.analysis import size_symbols
from liftpy.ir.types import size_var

N, M = sizes("N M")
ROOT = Path(__file__).resolve().parents[1]


def add(a, b):
    return a + b


@program
def stats(x: Array(Float, N)):
    """The issue's example: the sum (one element) and the array divided by it (N elements), the sum shared."""
    total = lp.reduce(add, 0.0, x)
    return (total, lp.map(lambda v: v / total[0], x))


@program
def folded(x: Array(Float, N)):
    """The same with the sum as a scalar (``fold``): its array is shared, each result reads its element."""
    total = lp.fold(add, 0.0, x)
    return (total, lp.map(lambda v: v / total, x))


@program
def rows(xs: Array(Float, M, N)):
    """Three results of different ranks: row sums [M], the input returned as it is [M][N], a map [M][N]."""
    sums = lp.join(lp.map(lambda r: lp.reduce(add, 0.0, r), xs))
    return (sums, xs, lp.map(lambda r: lp.map(lambda v: 2.0 * v + 1.0, r), xs))


def _positive(n: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) + 0.5).astype(np.float32)


def _same(got, want, tol=1e-4) -> bool:
    return (isinstance(got, tuple) and len(got) == len(want)
            and all(np.allclose(np.asarray(g).reshape(np.shape(w)), w, rtol=tol, atol=tol) for g, w in zip(got, want)))


# ------------------------------------------------------------------------------------ the interpreter


REDUCTIONS = {"sum": (lambda a, b: a + b, 0.0, np.sum), "max": (lp.fmax, -np.inf, np.max)}
MAPS = {"affine": (lambda v: 2.0 * v + 1.0, lambda x: 2 * x + 1), "square": (lambda v: v * v, lambda x: x * x),
        "negate": (lambda v: -v, lambda x: -x)}


@settings(max_examples=30)
@given(n=st.integers(1, 64), seed=st.integers(0, 2**16), red=st.sampled_from(sorted(REDUCTIONS)),
       fn=st.sampled_from(sorted(MAPS)), shared=st.booleans())
def test_the_interpreter_returns_each_result_as_numpy_computes_it(n, seed, red, fn, shared):
    """A reduction's result (one element) and an elementwise map (n elements), with the map reading the
    reduction's result or not."""
    f, init, reduce_np = REDUCTIONS[red]
    g, g_np = MAPS[fn]

    def body(x):
        r = lp.reduce(f, init, x)
        return (r, lp.map(lambda v: g(v) - r[0] if shared else g(v), x))

    prog = make_program("pair", [("x", Array(Float, N))], body)
    x = _positive(n, seed)
    got = evaluate(prog, x)
    r = reduce_np(x.astype(np.float64))
    want = (np.array([r]), g_np(x.astype(np.float64)) - (r if shared else 0))
    assert isinstance(got, tuple) and [a.shape for a in got] == [(1,), (n,)]
    assert _same(got, want)


@settings(max_examples=10)
@given(m=st.integers(1, 8), n=st.integers(1, 16), seed=st.integers(0, 2**16))
def test_results_of_different_ranks(m, n, seed):
    xs = np.random.default_rng(seed).standard_normal((m, n)).astype(np.float32)
    sums, same, mapped = evaluate(rows, xs)
    assert sums.shape == (m,) and np.allclose(sums, xs.sum(axis=1), atol=1e-4)
    assert np.array_equal(same, xs)
    assert np.allclose(mapped, 2 * xs + 1)


def test_the_type_is_a_tuple_of_the_results_types():
    assert str(lp.typecheck(stats).type) == "([float]1, [float]N)"
    assert str(lp.typecheck(rows).type) == "([float]M, [[float]N]M, [[float]N]M)"


# ---------------------------------------------------------------------------------------- text form


@pytest.mark.parametrize("prog", [stats, folded, rows], ids=lambda p: p.name)
def test_text_round_trip(prog):
    text = show_program(prog)
    assert "tuple(" in text
    back = parse_program(text)
    assert back == prog and show_program(back) == text
    x = _positive(12, 1) if prog is not rows else _positive(12, 1).reshape(3, 4)
    assert _same(evaluate(back, x), evaluate(prog, x), 0)


def test_lowered_variants_round_trip():
    variants, _ = explore_all(stats)
    for v in variants[::17]:
        text = show_program(v.program)
        assert parse_program(text) == v.program and show_program(parse_program(text)) == text


def test_hand_written_text():
    p = parse_program("def f(x: [float]N) = let(fun(s) => tuple(s, map(fun(a) => sub(a, s._0), x)), "
                      "reduce(add, 0.0f, x))".replace("s._0", "at(0, s)"))
    x = np.arange(4, dtype=np.float32)
    s, d = evaluate(p, x)
    assert s.tolist() == [6.0] and d.tolist() == [-6.0, -5.0, -4.0, -3.0]


# ------------------------------------------------------------------------------------------- refusals


def test_a_tuple_inside_a_function_is_refused_saying_what_to_write():
    with pytest.raises(LiftTypeError, match="only what a program returns"):
        make_program("f", [("x", Array(Float, N))], lambda x: lp.map(lambda v: (v, v), x))
    with pytest.raises(LiftTypeError, match="may only be what the program returns"):
        lp.typecheck(parse_program("def f(x: [float]N) = map(fun(a) => tuple(a, a), x)"))
    with pytest.raises(LiftTypeError, match="may only be what the program returns"):
        lp.typecheck(parse_program("def f(x: [float]N) = get(0, tuple(x, x))"))


def test_nested_or_single_results_are_refused():
    with pytest.raises(LiftTypeError, match="list every result in one tuple"):
        make_program("f", [("x", Array(Float, N))], lambda x: (x, (x, x)))
    with pytest.raises(LiftTypeError, match="tuple of 1"):
        make_program("f", [("x", Array(Float, N))], lambda x: (x,))
    with pytest.raises(LiftTypeError, match="may only be what the program returns"):
        lp.typecheck(parse_program("def f(x: [float]N) = tuple(x, tuple(x, x))"))  # (the inner one is an argument)


def test_one_kernel_of_several_results_is_refused_saying_how_to_compile_them():
    low = explore_all(stats)[0][0].program
    with pytest.raises(CodegenError, match="several results"):
        generate_kernel(low, {"N": 8})


# ------------------------------------------------------------------------------------------- kernels


def test_compile_prints_one_kernel_per_result(tmp_path):
    from conftest import liftpy_here

    low = tmp_path / "stats.lift"
    low.write_text(show_program(explore_all(stats)[0][0].program))
    code, out, err = liftpy_here(["compile", low, "-s", "N=16"])
    assert code == 0, err
    heads = [line for line in out.splitlines() if line.startswith("// =====")]
    assert heads == ["// ===== kernel 1 of 3: writes v =====", "// ===== kernel 2 of 3: writes out0 =====",
                     "// ===== kernel 3 of 3: writes out1 ====="]
    code, out, err = liftpy_here(["run", low, "-s", "N=16"])
    assert code == 0 and "-> OK" in out, out + err
    code, out, err = liftpy_here(["compile", low])
    assert code != 0 and "no value for N" in err


def test_one_kernel_per_result_after_the_shared_ones():
    low = explore_all(stats)[0][0].program
    stages = split_kernels(low)
    assert [(st.output, st.result) for st in stages] == [("v", None), ("out0", 0), ("out1", 1)]
    assert result_buffers(low) == ("out0", "out1") and result_buffers(explore_all(rows)[0][0].program) == ("out0", "out1", "out2")
    # An input called out0 keeps its name; the first result's buffer takes another.
    p = make_program("f", [("out0", Array(Float, N))], lambda x: (lp.mapGlb(0, lp.id, x), lp.mapGlb(0, lambda v: v * v, x)))
    assert result_buffers(p) == ("out0_", "out1")


def test_the_parts_explored_apart():
    parts = split_parts(stats)
    shared = parts[0].var.name
    assert [(p.label, p.copy, [q.name for q in p.program.params]) for p in parts] == [
        ("shared v", False, ["x"]), ("result 0", True, [shared]), ("result 1", False, ["x", shared])]
    # fold's scalar: its array is shared, each result reads the element
    assert [p.label for p in split_parts(folded)] == ["shared v", "result 0", "result 1"]
    assert [p.copy for p in split_parts(rows)] == [False, True, False]


def test_parameters_are_renamed_apart():
    variants, _ = explore_all(stats)
    for v in variants:
        names = [str(p) for p in v.params]
        assert len(names) == len(set(names)), names
        assert {str(p) for p in v.params} <= size_symbols(v.program) | {b for b, _ in v.lower_bounds}
    # the renaming reaches every size a program holds
    s0, t0 = size_var("s0"), size_var("t0")
    p = parse_program("def f(x: [float]N) = join(map(fun(c) => map(fun(a) => a, c), split(s0, x)))")
    assert "s0" not in size_symbols(p.with_body(rename_sizes(p.body, {s0: t0})))


@pytest.mark.parametrize("prog", [stats, folded, rows], ids=lambda p: p.name)
def test_every_variant_computes_what_the_program_does(prog):
    """In the interpreter, every variant at one valid configuration (the device runs a sample below)."""
    variants, _ = explore_all(prog)
    assert variants
    shape = {"N": 24} if prog is not rows else {"M": 4, "N": 8}
    x = _positive(24, 3) if prog is not rows else _positive(32, 3).reshape(4, 8)
    want = evaluate(prog, x)
    checked = 0
    for v in variants:
        for sz, params in configurations(v, [shape], 1):
            got = evaluate(v.program, x, sizes={**sz, **params})
            assert _same(got, want, 1e-5), v.text()
            checked += 1
    assert checked >= len(variants) * 0.9  # (a variant may have no valid configuration at these sizes)


# ------------------------------------------------------------------------------------------- device


def _run_variant(prog, v, shape, x):
    want = evaluate(prog, x)
    for sz, params in configurations(v, [shape], 1, seed=7):
        kernel = compile_program(v.program, {**sz, **params}, placements=v.placement_map)
        assert isinstance(kernel, CompiledPipeline)
        got = kernel.run(x).output
        check = compare(got, want)
        assert check.ok, f"{check.message}\n{v.text()}"
        roles = [b.role for b in kernel.buffers()]
        assert roles.count("output") == len(want)


STATS_VARIANTS = None


def _stats_variants():
    global STATS_VARIANTS
    if STATS_VARIANTS is None:
        STATS_VARIANTS = explore_all(stats)[0]
    return STATS_VARIANTS


@settings(max_examples=4)
@given(data=st.data())
def test_sampled_variants_run_on_the_device(data):
    variants = _stats_variants()
    v = variants[data.draw(st.integers(0, len(variants) - 1), label="variant")]
    n = data.draw(st.sampled_from([64, 96, 256]), label="N")
    _run_variant(stats, v, {"N": n}, _positive(n, n))


def test_results_of_different_ranks_run_on_the_device():
    variants = explore_all(rows)[0]
    for v in variants[:: max(1, len(variants) // 2)]:
        _run_variant(rows, v, {"M": 8, "N": 16}, np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32))


def test_the_operator_checks_each_result():
    """Exploration's verdict (``ProgramOperator``): each result against the interpreter's."""
    from liftpy.explore.operator import ProgramOperator

    op = ProgramOperator.of(stats, {"N": 32})
    inputs, check = op.prepare(0)
    want = evaluate(stats, *inputs)
    assert check(want).ok
    assert not check((want[0], want[1] * 1.01)).ok and not check((want[0] + 1, want[1])).ok
    assert not check(want[1]).ok


@pytest.mark.slow
def test_every_variant_runs_on_the_device():
    for v in _stats_variants():
        _run_variant(stats, v, {"N": 128}, _positive(128, 5))


@pytest.mark.slow
def test_explore_from_the_command_line(tmp_path):
    (tmp_path / "stats.py").write_text(textwrap.dedent('''
        import liftpy as lp
        from liftpy import Array, Float, program, sizes

        N, = sizes("N")


        def add(a, b):
            return a + b


        @program
        def stats(x: Array(Float, N)):
            total = lp.reduce(add, 0.0, x)
            return (total, lp.map(lambda v: v / total[0], x))
    '''))
    env = {**os.environ, "LIFTPY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "liftpy", "explore", "stats.py:stats", "-s", "N=512", "--samples", "4",
                        "--jobs", "1", "--no-references", "--db", str(tmp_path / "r.sqlite")],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "4 ok, 0 failed" in r.stdout + r.stderr, r.stdout[-3000:] + r.stderr[-3000:]
