"""Arithmetic in the embedded DSL: ``+ - * /``, unary minus, comparisons and ``select``, ``sqrt``, ``exp``,
``fabs`` build calls of built-in user functions, so a program written with them type-checks, evaluates,
prints, parses back and compiles like any other; on scalars and on vectors."""

import math  # noqa: F401 - used by the bodies of test_python_that_would_build_a_constant_or_crash_is_refused

import numpy as np
import pytest

from liftpy import (Array, Float, Int, asScalar, asVector, compile, evaluate, exp, fabs, lit, mapGlb, parse_program,
                    program, select, sizes, sqrt, typecheck, zip)
from liftpy.errors import LiftTypeError
from liftpy.ir.types import Float4

N, = sizes("N")


@program
def blend(x: Array(Float, N), y: Array(Float, N)):
    return mapGlb(0, lambda p: select(p[0] < p[1], 0.5 * p[0] + p[1] / 2,
                                      -sqrt(fabs(p[0])) + exp(p[1]) - 1), zip(x, y))


def _reference(x, y):
    return np.where(x < y, 0.5 * x + y / 2, -np.sqrt(np.abs(x)) + np.exp(y) - 1)


def test_arithmetic_evaluates_prints_parses_and_runs():
    rng = np.random.default_rng(0)
    x, y = (rng.random(64, dtype=np.float32) - 0.5 for _ in range(2))
    assert np.allclose(evaluate(blend, x, y), _reference(x, y), atol=1e-6)
    text = str(blend)
    assert "select(" in text and "lt(p._0, p._1)" in text and "mult(0.5f, p._0)" in text
    assert parse_program(text) == blend
    kernel = compile(blend, {"N": 64})
    assert np.allclose(kernel.run(x, y).output, _reference(x, y), atol=1e-5)


def test_comparisons_and_select_are_lane_wise_on_vectors():
    @program
    def relu_sq(x: Array(Float, N)):
        return asScalar(mapGlb(0, lambda v: select(v > lit(0.0, Float4), v * v, v - v), asVector(4, x)))

    rng = np.random.default_rng(1)
    x = rng.random(32, dtype=np.float32) - 0.5
    want = np.where(x > 0, x * x, 0)
    assert np.allclose(evaluate(relu_sq, x), want)
    out = compile(relu_sq, {"N": 32}).run(x).output
    assert np.allclose(out, want, atol=1e-6)


def test_mixed_types_are_type_errors_naming_the_operation():
    @program
    def bad(x: Array(Float, N)):
        return mapGlb(0, lambda v: v * lit(2, Int), x)

    with pytest.raises(LiftTypeError, match="mult"):
        typecheck(bad)
    assert isinstance(2 * blend.params[0], type(blend.body))  # a Python number beside a value is a float literal
    with pytest.raises(LiftTypeError, match="per lane"):
        lit((1.0, 2.0), Float4)  # refused when built, not later in printing or compiling


def test_user_functions_over_arrays_are_refused_when_defined():
    from liftpy import Array, userfun

    with pytest.raises(LiftTypeError, match="parameter 'a' has the array type"):
        userfun("sum3", [("a", Array(Float, 3))], Float, "return a[0] + a[1] + a[2];", lambda a: a.sum(-1))


# ----------------------------------------------------------------------------- Python that builds nothing

@pytest.mark.parametrize("body,words", [
    ("lambda x: x == 0.5", "returned the Python value False"),
    ("lambda x: x != 0.5", "returned the Python value True"),
    ("lambda x: max(x, 0.3)", "truth value"),
    ("lambda x: x - 1 if x > 0.5 else x", "truth value"),
    ("lambda x: (x > 0.2) and (x < 0.8)", "truth value"),
    ("lambda x: x ** 2", "write x \\* x"),
    ("lambda x: abs(x)", "fabs"),
    ("lambda x: math.sqrt(x)", "float"),
    ("lambda x: np.sqrt(x)", "cannot be applied"),
    ("lambda x, y: x + y", "cannot be applied to 1"),
])
def test_python_that_would_build_a_constant_or_crash_is_refused(body, words):
    """``==``, ``if``, ``and``, ``max()`` on DSL values ran while the program was built and silently made it a
    constant (``fun(x) => false``, one branch for every element); ``x ** 2`` or ``np.sqrt(x)`` raised a
    TypeError of Python's.  Each is a LiftTypeError saying what to write instead."""

    with pytest.raises(LiftTypeError, match=words):
        @program(name="q")
        def q(v: Array(Float, N)):
            return mapGlb(0, eval(body), v)


def test_expression_user_functions_mean_in_the_interpreter_what_they_mean_in_c():
    """An expression user function is C: ``1/3`` of integers is 0 and ``%`` keeps the dividend's sign, in the
    interpreter as in the kernel; what is not C arithmetic is refused where it is defined."""
    from liftpy.errors import LiftError
    from liftpy.ir.userfun import userfun_from_expression

    third = userfun_from_expression("third_t", [("x", Float)], Float, "x * (1/3) + x / 2")
    assert float(third.numpy(np.float32(4.0))) == 2.0
    rem = userfun_from_expression("rem_t", [("i", Int)], Int, "(i - 5) % 3 + (i - 5) / 2")
    i = np.arange(-4, 12, dtype=np.int32)
    expected = np.fmod(i - 5, 3) + np.trunc((i - 5) / 2).astype(np.int32)
    assert np.array_equal(rem.numpy(i), expected)
    for text in ("x ** 2", "x // 2", "0 < x < 1"):
        with pytest.raises(LiftError, match="not OpenCL C"):
            userfun_from_expression("bad_t", [("x", Float)], Float, text)
    with pytest.raises(LiftError, match="fmod"):
        userfun_from_expression("fm_t", [("x", Float)], Float, "x % 2").numpy(np.float32(3))

    @program
    def rems(v: Array(Int, N)):
        return mapGlb(0, rem, v)

    kernel = compile(rems, {"N": 16})
    assert np.array_equal(kernel.run(i).output, expected)
    assert np.array_equal(evaluate(rems, i), expected)


def test_sizes_given_to_compile_are_whole_and_named():
    from liftpy.codegen.kernel import generate_kernel
    from liftpy.errors import CodegenError, InputError

    with pytest.raises(CodegenError, match="16.5"):
        generate_kernel(blend, {"N": 16.5})
    with pytest.raises(InputError, match="no size Q"):
        compile(blend, {"N": 16, "Q": 3})
    assert generate_kernel(blend, {"N": 16.0}).source == generate_kernel(blend, {"N": 16}).source
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    assert np.allclose(blend.compile("N=16").run(x, x[::-1].copy()).output, _reference(x, x[::-1]), atol=1e-5)


def test_user_function_names_types_and_definitions_are_checked():
    from liftpy import userfun
    from liftpy.errors import LiftError, ParseError

    with pytest.raises(LiftError, match="add is a built-in"):
        userfun("add", [("x", Float), ("y", Float)], Float, "return x - y;", np.subtract)
    plus1 = userfun("plus1_t", [("a", "float")], "float", "return a + 1.0f;", lambda a: a + 1)
    assert plus1.param_types == (Float,) and plus1.result_type == Float
    with pytest.raises(LiftError, match="'flaot' is not a type"):
        userfun("q_t", [("a", "flaot")], Float, "return a;", np.abs)
    with pytest.raises(ParseError, match="defined twice"):
        parse_program('userfun f2(x: float): float = "x + 1.0f"\nuserfun f2(x: float): float = "x + 2.0f"\n'
                      "def p(v: [float]N) = map(f2, v)")
    # an element at a size expression prints as it reads back
    last = parse_program("def f(v: [float]N) = map(fun(x) => add(x, v[N - 1]), v)")
    assert "at((N - 1), v)" in str(last) and parse_program(str(last)) == last


def test_an_int_literal_takes_whole_numbers():
    assert lit(2.0, Int).value == 2 and lit(1.5, Float).value == 1.5
    for bad in (1.5, float("inf")):
        with pytest.raises(LiftTypeError, match="whole numbers"):
            lit(bad, Int)


@pytest.mark.parametrize("name", ["mad", "sin", "out", "gl_0", "x"])
def test_a_user_function_may_take_any_name_the_kernel_also_uses(name):
    """A user's function is named apart in the C source: mad and sin are OpenCL built-ins, out, gl_0 and x a
    kernel's own names, and each was a build error."""
    from liftpy import userfun

    f = userfun(name, [("a", Float), ("b", Float)], Float, "return a * b + 1.0f;", lambda a, b: a * b + 1)

    @program
    def p(x: Array(Float, N), y: Array(Float, N)):
        return mapGlb(0, lambda t: f(t[0], t[1]), zip(x, y))

    v = np.arange(8, dtype=np.float32)
    assert np.allclose(p.compile({"N": 8}).run(v, v).output, v * v + 1)


def test_inputs_that_would_change_on_the_way_to_the_device_are_refused():
    """Text, complex numbers, integers beyond 32 bits (they wrapped) and fractions for an int input were
    converted silently (numpy's astype); each is an InputError naming the input."""
    from liftpy.errors import InputError

    @program
    def inc(v: Array(Int, N)):
        return mapGlb(0, lambda t: t + lit(1, Int), v)

    x = np.ones(8, np.float32)
    for bad, words in (("abcdefgh", "takes numbers"), (x * 1j, "takes numbers")):
        with pytest.raises(InputError, match=words):
            evaluate(blend, x, np.array(list(bad)) if isinstance(bad, str) else bad)
    with pytest.raises(InputError, match="do not fit the device's int32"):
        evaluate(inc, np.arange(8) + 2**33)
    with pytest.raises(InputError, match="whole numbers"):
        evaluate(inc, np.arange(8) + 0.5)
    assert np.array_equal(evaluate(inc, np.arange(8.0)), np.arange(1, 9))


def test_numpy_scalars_are_literals_on_either_side_of_an_operator():
    """``x * np.float32(2)`` was refused while ``np.float32(2) * x`` worked: numpy's scalars are literals."""
    import numpy as np

    from liftpy.ir.expr import Var
    from liftpy.ir.printer import show

    x = Var("x")
    assert show(x * np.float32(2)) == "mult(x, 2.0f)"
    assert show(x + np.int64(3)) == "add(x, 3)"
    assert show(np.float64(0.5) * x) == "mult(0.5f, x)"


def test_a_user_function_name_that_is_no_c_identifier_is_a_liftpy_error():
    from liftpy import Float, userfun
    from liftpy.errors import LiftError

    with pytest.raises(LiftError, match="'my-fun' is not a C identifier"):
        userfun("my-fun", [("x", Float)], Float, "return x;", lambda x: x)
