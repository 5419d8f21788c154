"""The idioms a new user reaches for (issue 55): a row softmax, a triangular update, a stencil step that
keeps its border, a scaled reduction.

- Sharing: a DSL value bound to a Python variable is computed once (``liftpy.ir.share``): used twice, or used
  inside a function traced after it was made (the row maximum inside the map over the row's elements).
- Element indices: ``iota(n)``, ``mapIdx``; conditions ``eq``, ``ne``, ``and``, ``or``, ``not`` (and ``& | ~``),
  the conversions ``toFloat``/``toInt``, and a ``select`` whose condition is an int choosing floats.
- Sizes as values: ``x / N``, ``lit(N - 1)``, ``lit(N, Float)``.
- A reduction's one-element result in arithmetic: ``fold``, and the message ``alpha * reduce(...)`` gets.

Every new built-in and primitive is run through the device (the default one, PoCL) against the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy as L
from liftpy import Array, Float, Int, compile, evaluate, lit, parse_program, program, sizes, typecheck
from liftpy.errors import LiftTypeError
from liftpy.ir import primitives as P
from liftpy.ir.dsl import (and_, eq, fold, ge, gt, iota, le, lt, make_program, mapIdx, ne, not_, or_, toFloat,
                           toInt)
from liftpy.ir.expr import Call, Lambda, subterms

M, N = sizes("M N")


def _reductions(p, fn_name: str) -> list:
    """The reductions of ``p`` whose function is ``fn_name`` (max, add), with how many maps enclose each."""
    out = []

    def walk(node, maps):
        if isinstance(node, Lambda):
            walk(node.body, maps)
        elif isinstance(node, Call):
            fn = node.fn
            inner = maps + (1 if isinstance(fn, P.MapLike) else 0)
            if isinstance(fn, P.ReduceLike) and fn.f.body.fn.name == fn_name:
                out.append(maps)
            if isinstance(fn, Lambda):
                walk(fn, maps)
            else:
                for _, lam in L.ir.expr.primitive_functions(fn):
                    walk(lam, inner)
            for a in node.args:
                walk(a, maps)

    walk(p.body, 0)
    return out


# --------------------------------------------------------------------------------------------- sharing


def naive_softmax(x):
    """Written as a newcomer writes it: Python variables, no let."""
    def row(r):
        m = fold(lambda a, v: L.fmax(a, v), -np.inf, r)
        e = L.map(lambda v: L.exp(v - m), r)
        s = fold(lambda a, v: a + v, 0.0, e)
        return L.map(lambda v: v / s, e)

    return L.map(row, x)


SOFTMAX = make_program("softmax", [("x", Array(Float, M, N))], naive_softmax)


def _softmax_reference(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_the_naive_softmax_computes_the_row_maximum_once_per_row():
    """The row maximum, used inside the map over the row's elements, is bound once in the row's function
    (one map encloses it), not computed for every element; the exponentials, used twice, are computed once."""
    assert _reductions(SOFTMAX, "max") == [1]
    assert _reductions(SOFTMAX, "add") == [1]
    text = str(SOFTMAX)
    assert text.count("reduce(max") == 1 and text.count("exp(") == 1
    inlined = make_program("softmax", [("x", Array(Float, M, N))], naive_softmax, shared=False)
    assert sorted(_reductions(inlined, "max")) == [2, 3] and str(inlined).count("exp(") == 2  # as before: per element
    x = np.random.default_rng(0).standard_normal((3, 7)).astype(np.float32)
    np.testing.assert_allclose(evaluate(SOFTMAX, x), _softmax_reference(x), rtol=1e-5)
    np.testing.assert_array_equal(evaluate(SOFTMAX, x), evaluate(inlined, x))
    assert parse_program(text) == SOFTMAX


def test_the_naive_softmax_lowers_to_variants_that_compile_and_validate():
    from liftpy.rewrite.explore import ExploreOptions, explore_all
    from liftpy.rewrite.validate import check_variant

    variants, _ = explore_all(SOFTMAX, ExploreOptions())
    assert len(variants) > 4
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    picked = variants[:: max(1, len(variants) // 4)][:4]
    for v in picked:
        check = check_variant(v, SOFTMAX, [{"M": 4, "N": 8}], lambda s: [x], count=1)
        assert check.ok, (check.summary(), str(v.program))


def test_a_value_is_bound_where_its_variables_are_not_outside():
    """A value that uses a function's parameter stays in that function (bound in its body); one that uses no
    parameter of the function it is used in is bound outside it."""
    def body(x):
        return L.map(lambda v: (lambda t: t * t + t)(L.exp(v)), x)

    p = make_program("f", [("x", Array(Float, N))], body)
    (mp,) = [n for n in subterms(p.body) if isinstance(n, Call) and isinstance(n.fn, P.Map)]
    assert isinstance(mp.fn.f.body.fn, P.Let)  # let inside the element's function: exp(v) needs v
    assert str(p).count("exp(") == 1

    def scaled(x):
        total = fold(lambda a, v: a + v, 0.0, x)
        k = total * total  # made outside, used twice inside
        return L.map(lambda v: v * k + k, x)

    q = make_program("g", [("x", Array(Float, N))], scaled)
    assert _reductions(q, "add") == [0]
    assert isinstance(q.body.fn, P.Let) and str(q).count("reduce(") == 1
    v = np.linspace(-1, 1, 5, dtype=np.float32)
    np.testing.assert_allclose(evaluate(q, v), v * v.sum() ** 2 + v.sum() ** 2, rtol=1e-5)


def test_a_program_that_shares_nothing_is_built_as_before():
    def body(a, b):
        return L.map(lambda p: L.fmax(p[0] * 2.0, p[1]), L.zip(a, L.map(lambda v: v + 1.0, b)))

    inputs = [("a", Array(Float, N)), ("b", Array(Float, N))]
    assert make_program("f", inputs, body) == make_program("f", inputs, body, shared=False)


# Random programs with shared subexpressions: a recipe of steps over a pool of arrays and a pool of scalars
# (reductions), and inside each map a pool of element values; every step picks its operands from the pools,
# so a value is often used several times, inside functions made after it, or both.

_OPS = ["add", "sub", "mult", "max", "min"]


@st.composite
def recipes(draw):
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["map", "map", "fold", "zipmap", "scalar"]))
        inner = [(draw(st.sampled_from(_OPS)), draw(st.integers(0, 9)), draw(st.integers(0, 9)))
                 for _ in range(draw(st.integers(1, 4)))]
        steps.append((kind, draw(st.integers(0, 9)), draw(st.integers(0, 9)), inner,
                      draw(st.sampled_from(["add", "max"]))))
    return steps, draw(st.booleans())


def _run_recipe(recipe, x):
    steps, _ = recipe
    arrays, scalars = [x], []

    def element(values, inner):
        pool = list(values) + scalars
        for op, i, j in inner:
            pool.append(L.BUILTINS[op](pool[i % len(pool)], pool[j % len(pool)]))
        return pool[-1]

    for kind, i, j, inner, red in steps:
        a = arrays[i % len(arrays)]
        if kind == "map":
            arrays.append(L.map(lambda v, inner=inner: element([v], inner), a))
        elif kind == "zipmap":
            b = arrays[j % len(arrays)]
            arrays.append(L.map(lambda p, inner=inner: element([p[0], p[1]], inner), L.zip(a, b)))
        elif kind == "fold":
            scalars.append(fold(lambda acc, v, red=red: L.BUILTINS[red](acc, v), 0.0, a))
        elif scalars:
            scalars.append(L.BUILTINS[inner[0][0]](scalars[i % len(scalars)], scalars[j % len(scalars)]))
    out = arrays[-1]
    if scalars:  # the last scalars used by the result, inside its function
        out = L.map(lambda v: v + scalars[-1] * scalars[0], out)
    return out


def _work(p) -> int:
    return sum(1 for n in subterms(p.body) if isinstance(n, Call) and (isinstance(n.fn, (L.UserFun, P.ReduceLike))))


@settings(max_examples=60)
@given(recipes())
def test_random_programs_with_shared_values_evaluate_as_the_inlined_program(recipe):
    rows = recipe[1]
    if rows:  # the recipe per row of a matrix: its scalars are the row's
        inputs, body = [("x", Array(Float, M, N))], lambda x: L.map(lambda r: _run_recipe(recipe, r), x)
        x = np.random.default_rng(2).uniform(-1, 1, (3, 5)).astype(np.float32)
    else:
        inputs, body = [("x", Array(Float, N))], lambda x: _run_recipe(recipe, x)
        x = np.random.default_rng(2).uniform(-1, 1, 6).astype(np.float32)
    shared = make_program("r", inputs, body)
    inlined = make_program("r", inputs, body, shared=False)
    typecheck(shared)
    np.testing.assert_array_equal(evaluate(shared, x), evaluate(inlined, x))
    # computed no more often: no more calls of user functions and reductions than the inlined tree has
    assert _work(shared) <= _work(inlined)
    assert parse_program(str(shared)) == shared


# ------------------------------------------------------------------------------------------ indices


TRIANGLE = make_program("upper", [("A", Array(Float, N, N))], lambda A: mapIdx(
    lambda i, row: mapIdx(lambda j, a: L.select(le(i, j), a, 0.0), row), A))


def _border_step(x):
    """A 3-point average that keeps the two border elements as they are."""
    def point(i, w):
        border = or_(eq(i, lit(0)), eq(i, lit(N - 1)))
        return L.select(border, w[1], (w[0] + w[1] + w[2]) / 3)

    return mapIdx(point, L.slide(3, 1, L.pad(1, 1, "clamp", x)))


BORDER = make_program("step", [("x", Array(Float, N))], _border_step)


def test_mapidx_and_iota_are_typed_printed_parsed_and_interpreted():
    assert typecheck(TRIANGLE).type == Array(Float, N, N)
    text = str(TRIANGLE)
    assert "zip(iota(N), A)" in text and "indices" not in text
    assert "toFloat(le(" in text  # the int condition chooses floats through its conversion
    assert parse_program(text) == TRIANGLE
    a = np.arange(25, dtype=np.float32).reshape(5, 5)
    np.testing.assert_array_equal(evaluate(TRIANGLE, a), np.triu(a))
    x = np.arange(6, dtype=np.float32) ** 2
    want = x.copy()
    want[1:-1] = (x[:-2] + x[1:-1] + x[2:]) / 3
    np.testing.assert_allclose(evaluate(BORDER, x), want, rtol=1e-6)
    assert parse_program(str(BORDER)) == BORDER
    iot = parse_program("def f(x: [float]N) = map(fun(p) => add(p._1, toFloat(p._0)), zip(iota(N), x))")
    np.testing.assert_array_equal(evaluate(iot, np.zeros(4, np.float32)), [0, 1, 2, 3])
    assert typecheck(parse_program("def f(x: [int]N) = iota((2*N))")).type == Array(Int, 2 * N)


def _variants_check(prog, size, inputs, count=3):
    from liftpy.rewrite.explore import ExploreOptions, explore_all
    from liftpy.rewrite.validate import check_variant

    variants, _ = explore_all(prog, ExploreOptions())
    assert variants
    for v in variants[:count]:
        check = check_variant(v, prog, [size], lambda s: inputs, count=1)
        assert check.ok, (check.summary(), str(v.program))


def test_a_triangular_and_a_border_condition_run_on_the_device():
    a = np.random.default_rng(3).standard_normal((8, 8)).astype(np.float32)
    _variants_check(TRIANGLE, {"N": 8}, [a])
    x = np.random.default_rng(4).standard_normal(16).astype(np.float32)
    _variants_check(BORDER, {"N": 16}, [x])


def test_iota_is_a_view_of_no_memory_whose_elements_are_indices():
    @program
    def shifted(x: Array(Int, N)):
        return L.mapGlb(0, lambda p: p[0] * p[1] + lit(N - 1), L.zip(L.reorder(L.reverse, iota(N)), x))

    k = compile(shifted, {"N": 12})
    assert "global" in k.source and "int* restrict iota" not in k.source
    x = np.arange(12, dtype=np.int32) - 5
    np.testing.assert_array_equal(k.run(x).output, evaluate(shifted, x))
    np.testing.assert_array_equal(evaluate(shifted, x), (11 - np.arange(12)) * x + 11)
    # indices(xs) where a program is not made by the DSL or the parser (which make it iota(n)): iota all the same
    from liftpy.ir.dsl import indices
    from liftpy.ir.expr import Lambda as Lam, Var

    v, q = Var("x"), Var("q")
    body = L.mapGlb(0, Lam((q,), L.get(q, 0) - L.get(q, 1)), L.zip(v, indices(L.reorder(L.reverse, v))))
    raw = L.Program("raw", (v,), (Array(Int, N),), body)
    assert "indices(reorder(reverse, x))" in str(raw)
    np.testing.assert_array_equal(evaluate(raw, x), x - np.arange(12))
    np.testing.assert_array_equal(compile(raw, {"N": 12}).run(x).output, x - np.arange(12))
    assert "iota(N)" in str(parse_program(str(raw)))  # read back, it is made iota(N)


@settings(max_examples=8)
@given(st.integers(1, 40), st.integers(0, 3), st.integers(1, 3))
def test_iota_on_the_device_is_what_the_interpreter_gives(n, left, step):
    """Element indices through layouts (a pad, a slide, a split of the windows) read on the device."""
    size = ((n + left + 1 - 2) // step + 1)

    @program
    def windows(x: Array(Float, N)):
        return L.mapGlb(0, lambda w: toFloat(w[0] + w[1] * lit(2) + w[1]), L.slide(2, step, L.pad(left, 1, 7, iota(N))))

    if size < 1:
        return
    x = np.zeros(n, np.float32)
    np.testing.assert_array_equal(compile(windows, {"N": n}).run(x).output, evaluate(windows, x))


# ------------------------------------------------------------------------------------ conditions


@program
def conditions(x: Array(Float, N), y: Array(Float, N), i: Array(Int, N), j: Array(Int, N)):
    """Every new built-in (and the old comparisons) on floats and ints, one output per element."""
    def one(p):
        a, b, k, m = p[0], p[1], p[2], p[3]
        c_float = and_(ne(a, b), or_(eq(a, b), not_(lt(a, b)))) + ge(a, b) * 2.0 + gt(a, b) * 4.0 + le(a, b) * 8.0
        c_int = and_(ne(k, m), or_(eq(k, m), not_(lt(k, m))))
        conv = toFloat(k) * 16.0 + toFloat(toInt(a * 100.0)) + toFloat(~eq(k, m)) * 32.0
        return c_float + toFloat(c_int) * 64.0 + conv + L.select(c_int, a, b) + toFloat(L.select(ge(a, b), m, k))

    return L.mapGlb(0, one, L.zip(x, y, i, j))


_KERNEL = {}


def _conditions_kernel():
    if "k" not in _KERNEL:
        _KERNEL["k"] = compile(conditions, {"N": 64})
    return _KERNEL["k"]


_F = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e6, -3.999, 21474.836, np.nan, np.inf]),
               st.floats(-2e7, 2e7, width=32))
_I = st.one_of(st.sampled_from([0, 1, -1, 2**24 + 1, -(2**31), 2**31 - 1]), st.integers(-(2**31), 2**31 - 1))


@settings(max_examples=25)
@given(st.lists(st.tuples(_F, _F, _I, _I), min_size=64, max_size=64))
def test_conditions_and_conversions_on_the_device_are_what_the_interpreter_gives(rows):
    x, y, i, j = (np.array(c, dtype=d) for c, d in zip(zip(*rows), (np.float32, np.float32, np.int32, np.int32)))
    x = np.where(np.isfinite(x), x, 0.5).astype(np.float32)  # toInt of a value beyond int (or NaN) is undefined in C
    j = np.where(np.arange(64) % 3 == 0, i, j).astype(np.int32)  # some equal pairs
    y = np.where(np.arange(64) % 4 == 0, x, y).astype(np.float32)
    with np.errstate(all="ignore"):
        want = evaluate(conditions, x, y, i, j)
    got = _conditions_kernel().run(x, y, i, j).output
    np.testing.assert_array_equal(got, want)


def test_a_python_bool_from_equality_is_refused_with_what_to_write():
    with pytest.raises(LiftTypeError, match=r"== and != on DSL values compare expressions.*eq\(a, b\)"):
        make_program("f", [("x", Array(Float, N))], lambda x: L.map(lambda v: L.select(v == v, v, 0.0), x))
    with pytest.raises(LiftTypeError, match="eq"):
        make_program("f", [("x", Array(Float, N))], lambda x: L.map(lambda v: v + (v != v), x))
    with pytest.raises(LiftTypeError, match="truth value"):
        make_program("f", [("x", Array(Float, N))], lambda x: L.map(lambda v: 0.0 < v < 1.0, x))


def test_logical_operators_on_dsl_values_are_and_or_not():
    p = make_program("f", [("x", Array(Float, N))], lambda x: L.map(lambda v: ((v > 0.0) & (v < 0.5)) | ~(v < 0.9), x))
    assert "or(and(gt(v, 0.0f), lt(v, 0.5f)), not(lt(v, 0.9f)))" in str(p)
    v = np.array([-1, 0.25, 0.6, 0.95], np.float32)
    np.testing.assert_array_equal(evaluate(p, v), [0, 1, 0, 1])
    assert parse_program(str(p)) == p


def test_select_converts_a_condition_of_the_other_scalar_type():
    """An int condition (of indices) chooses floats, a float one ints; vectors are left to the type error."""
    p = parse_program("def f(x: [float]N, k: [int]N) = map(fun(p) => select(gt(p._1, 0), p._0, 1.0f), zip(x, k))")
    assert "select(toFloat(gt(p._1, 0)), p._0, 1.0f)" in str(p)
    q = make_program("g", [("x", Array(Float, N)), ("k", Array(Int, N))],
                     lambda x, k: L.map(lambda p: L.select(p[0] > 0.0, p[1], lit(-1)), L.zip(x, k)))
    assert "select(toInt(gt(" in str(q)
    np.testing.assert_array_equal(evaluate(q, np.array([1, -1], np.float32), np.array([5, 6], np.int32)), [5, -1])
    with pytest.raises(LiftTypeError, match="select"):
        typecheck(parse_program("def f(x: [float4]N, k: [int]N) = map(fun(p) => select(p._1, p._0, p._0), zip(x, k))"))


# ------------------------------------------------------------------------------------ sizes as values


def test_a_size_is_a_value_in_arithmetic_and_in_the_text_form():
    @program
    def mean_centered(x: Array(Float, N)):
        mean = L.at(0, L.reduceSeq(lambda a, v: a + v, 0.0, x)) / N
        return L.mapGlb(0, lambda v: (v - mean) * lit(N - 1, Float) + toFloat(lit(N - 1)), x)

    text = str(mean_centered)
    assert "value(N, float)" in text and "value((N - 1), float)" in text and "value((N - 1), int)" in text
    assert parse_program(text) == mean_centered
    x = np.arange(5, dtype=np.float32)
    want = (x - x.mean()) * 4 + 4
    np.testing.assert_allclose(evaluate(mean_centered, x), want, rtol=1e-6)
    k = compile(mean_centered, {"N": 5})
    # (toFloat of the int constant 4 is the float constant: views.conditions folds conversions of constants)
    assert "5.0f" in k.source and "4.0f" in k.source and "toFloat(4)" not in k.source
    np.testing.assert_allclose(k.run(x).output, want, rtol=1e-6)


def test_an_int_size_value_must_be_whole_at_the_sizes_given():
    p = make_program("f", [("x", Array(Int, N))], lambda x: L.map(lambda v: v + lit(N / 2), x))
    np.testing.assert_array_equal(evaluate(p, np.zeros(4, np.int32)), [2, 2, 2, 2])
    with pytest.raises(LiftTypeError, match=r"is 5/2 with N = 5, not a whole number: write floor\(N/2\)"):
        evaluate(p, np.zeros(5, np.int32))
    q = make_program("f", [("x", Array(Float, N))], lambda x: L.map(lambda v: v + lit(N / 3, Float), x))
    np.testing.assert_allclose(evaluate(q, np.zeros(7, np.float32)), np.float32(7 / 3))
    assert parse_program(str(q)) == q


@settings(max_examples=6)
@given(st.integers(1, 50), st.integers(1, 5))
def test_size_values_on_the_device_are_what_the_interpreter_gives(n, d):
    @program
    def scaled(x: Array(Float, N)):
        return L.mapGlb(0, lambda v: v / N + lit(N / d, Float) - toFloat(lit(2 * N + d)), x)

    x = np.linspace(-3, 3, n, dtype=np.float32)
    np.testing.assert_array_equal(compile(scaled, {"N": n}).run(x).output, evaluate(scaled, x))


# ------------------------------------------------------------------------------------ reductions' values


def test_a_reduction_in_arithmetic_says_what_to_write_and_fold_is_its_value():
    with pytest.raises(LiftTypeError, match=r"one-element array, as reduce gives: take its element with r\[0\] "
                                            r"or at\(0, r\), or write fold"):
        typecheck(make_program("f", [("x", Array(Float, N))],
                               lambda x: L.map(lambda v: v * L.reduce(L.add, 0.0, x), x)))

    @program
    def normalized(x: Array(Float, N)):
        total = L.at(0, L.reduceSeq(lambda a, v: a + v, 0.0, x))  # fold, lowered
        return L.mapGlb(0, lambda v: 2.0 * v / total, x)

    x = np.arange(1, 9, dtype=np.float32)
    np.testing.assert_allclose(evaluate(normalized, x), 2 * x / x.sum(), rtol=1e-6)
    np.testing.assert_allclose(compile(normalized, {"N": 8}).run(x).output, 2 * x / x.sum(), rtol=1e-6)
