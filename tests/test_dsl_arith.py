"""Arithmetic in the embedded DSL: ``+ - * /``, unary minus, comparisons and ``select``, ``sqrt``, ``exp``,
``fabs`` build calls of built-in user functions, so a program written with them type-checks, evaluates,
prints, parses back and compiles like any other; on scalars and on vectors."""

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
