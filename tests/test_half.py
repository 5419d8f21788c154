"""Half precision in the type system, the text form and the interpreter (issue 57, item 1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy as L
from liftpy import Array, Float, Half, Half4, parse_program, parse_type
from liftpy.ir.precision import FP16, FP16_STORAGE, FP32, check_precision, relative_errors, tolerance, widen
from liftpy.ir.types import VectorType

N = L.size_var("N")
add = L.BUILTINS["add"]


def test_half_types_name_their_storage():
    assert str(Half) == "half" and Half.dtype == np.float16 and Half.nbytes == 2
    assert str(Half4) == "half4" and Half4.nbytes == 8
    assert parse_type("[half4]N") == Array(Half4, N)
    assert parse_type("half<S>") == VectorType(Half, L.size_var("S"))


def test_a_half_program_reads_back_from_its_text():
    @L.program
    def scale(x: Array(Half, N)):
        return L.map(lambda v: L.BUILTINS["mult"](v, L.lit(0.5, Half)), x)

    text = str(scale)
    assert "value(0.5f, half)" in text and "[half]N" in text
    assert parse_program(text) == scale


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1000, 1000, width=16), min_size=1, max_size=64))
def test_half_arithmetic_is_float32_rounded_to_half(values):
    a = np.array(values, dtype=np.float16)
    b = a[::-1].copy()

    @L.program
    def vadd(x: Array(Half, N), y: Array(Half, N)):
        return L.map(lambda t: add(L.get(t, 0), L.get(t, 1)), L.zip(x, y))

    out = L.evaluate(vadd, a, b)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16))


def test_a_half_reduction_rounds_its_accumulator_to_half():
    # 2048 + 1 is not a half: a half accumulator stays at 2048 where a float one reaches 2049.
    x = np.array([2048.0, 1.0], dtype=np.float16)

    @L.program
    def total(x: Array(Half, N)):
        return L.reduce(add, L.lit(0.0, Half), x)

    assert float(L.evaluate(total, x)[0]) == 2048.0
    assert widen([x])[0].dtype == np.float32


def test_the_tolerance_grows_with_half_arrays_and_accumulation():
    assert tolerance(FP32) == 1e-3
    assert tolerance(FP16_STORAGE, half_arrays=3) == pytest.approx(1e-3 + 3 * 2**-11)
    assert tolerance(FP16, half_arrays=3, reduction_length=1024) > tolerance(FP16, half_arrays=3, reduction_length=16)
    with pytest.raises(ValueError, match="fp16-storage"):
        check_precision("bf16")


def test_relative_errors_are_normalised_by_the_reference():
    ref = np.array([1.0, -1.0, 0.0, 2.0])
    out = ref + np.array([0.0, 0.01, 0.01, 0.0])
    rms = np.sqrt(np.mean(ref**2))
    worst, rms_err = relative_errors(out, ref)
    assert worst == pytest.approx(0.01 / rms)
    assert rms_err < worst
    assert relative_errors(ref, ref) == (0.0, 0.0)
