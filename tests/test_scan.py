"""scanSeq(f, init, xs), the inclusive prefix fold, a computing primitive added through the primitive protocol
(its class in ``ir/prims/folds.py``, its execution in ``codegen/execution.py``, its DSL builder): the
interpreter against numpy, its type rule, its text form, and kernels that match the interpreter on PoCL,
whether the scan is stored or read as an input, and whose memory the allocation analysis describes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy import BUILTINS
from liftpy.codegen.allocation import allocations
from liftpy.codegen.kernel import generate_kernel
from liftpy.errors import CodegenError, LiftTypeError
from liftpy.host.kernel import compile_program
from liftpy.ir import dsl as L
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.ir.typecheck import typecheck
from liftpy.ir.types import Array, Float, Int, Tuple, TupleType
from liftpy.ir.userfun import userfun, userfun_from_expression

add, mult, fmax = BUILTINS["add"], BUILTINS["mult"], BUILTINS["max"]
# Not associative: the order of the steps shows (a running average that forgets the past by halves).
decay = userfun_from_expression("decay", [("acc", Float), ("x", Float)], Float, "0.5f * acc + x")


def _rows(f, init=0.0):
    return L.make_program("scanRows", [("x", Array(Float, "M", "N"))],
                          lambda x: L.mapGlb(0, lambda row: L.scanSeq(f, init, row), x))


def _decay_reference(x, init=0.0):
    out, acc = np.empty_like(x), np.full(x.shape[:-1], init, np.float32)
    for i in range(x.shape[-1]):
        acc = (np.float32(0.5) * acc + x[..., i]).astype(np.float32)
        out[..., i] = acc
    return out


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 9), st.integers(0, 10**6))
def test_the_interpreter_computes_every_prefix(m, n, seed):
    x = np.random.default_rng(seed).standard_normal((m, n)).astype(np.float32)
    np.testing.assert_allclose(evaluate(_rows(add), x), np.cumsum(x, axis=1, dtype=np.float32), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(evaluate(_rows(decay, 1.0), x), _decay_reference(x, 1.0), rtol=1e-6)
    np.testing.assert_array_equal(evaluate(_rows(fmax, -np.inf), x), np.maximum.accumulate(x, axis=1))


def test_a_tuple_accumulator_is_carried_component_by_component():
    step = userfun("countSum", [("acc", Tuple(Int, Float)), ("x", Float)], Tuple(Int, Float),
                   "return make_Tuple2_int_float(acc._0 + 1, acc._1 + x);",
                   lambda acc, x: ((acc[0] + 1).astype(np.int32), (acc[1] + x).astype(np.float32)))
    program = L.make_program("countSums", [("x", Array(Float, "N"))],
                             lambda x: L.scanSeq(step, L.lit((0, 0.0), Tuple(Int, Float)), x))
    assert typecheck(program).type.elem == TupleType((Int, Float))
    x = np.arange(1, 6, dtype=np.float32)
    counts, sums = evaluate(program, x)
    np.testing.assert_array_equal(counts, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(sums, np.cumsum(x))


def test_the_type_rule():
    assert str(typecheck(_rows(add)).type) == "[[float]N]M"
    to_int = userfun("toI", [("acc", Float), ("x", Float)], Int, "return (int)(acc + x);",
                     lambda acc, x: (acc + x).astype(np.int32))
    with pytest.raises(LiftTypeError, match="returns int but the accumulator"):
        typecheck(_rows(to_int))
    with pytest.raises(LiftTypeError, match="an array to scan"):
        typecheck(L.make_program("s", [("x", Float)], lambda x: L.scanSeq(add, 0.0, x)))


def test_the_text_form_reads_back():
    text = show_program(_rows(decay, 1.0))
    assert "scanSeq(decay, 1.0f, row)" in text
    again = parse_program(text)
    assert show_program(again) == text
    x = np.random.default_rng(1).standard_normal((2, 7)).astype(np.float32)
    np.testing.assert_array_equal(evaluate(again, x), evaluate(_rows(decay, 1.0), x))


@pytest.mark.parametrize("f,init", [(add, 0.0), (decay, 1.0), (fmax, -3.0)], ids=["sum", "decay", "max"])
def test_stored_scans_match_the_interpreter_on_pocl(f, init):
    program = _rows(f, init)
    x = np.random.default_rng(2).standard_normal((6, 33)).astype(np.float32)
    kernel = compile_program(program, {"M": 6, "N": 33})
    np.testing.assert_allclose(kernel.run(x).output, evaluate(program, x), rtol=1e-5, atol=1e-5)


def test_a_scan_read_as_an_input_lives_in_a_private_temporary():
    # Each row's prefix sums, squared: the map reads the scan, so the scan is computed into private memory first.
    program = L.make_program("squares", [("x", Array(Float, "M", "N"))], lambda x: L.mapGlb(
        0, lambda row: L.mapSeq(lambda s: mult(s, s), L.scanSeq(add, 0.0, row)), x))
    sizes = {"M": 5, "N": 12}
    x = np.random.default_rng(3).standard_normal((5, 12)).astype(np.float32)
    np.testing.assert_allclose(compile_program(program, sizes).run(x).output, np.cumsum(x, axis=1) ** 2, rtol=1e-4, atol=1e-5)
    found = [(a.name, a.space, a.role, str(a.type)) for a in allocations(program)]
    assert found == [("priv_0", "private", "temporary", "[float]N"), ("acc_0", "private", "accumulator", "float")]
    plan = {(b.name, b.space, b.role) for b in generate_kernel(program, sizes).plan.buffers if b.space == "private"}
    assert plan == {(name, space, role) for name, space, role, _ in found}


def test_a_scan_read_by_a_whole_work_group_is_refused():
    program = L.make_program("groups", [("x", Array(Float, "M", "N"))], lambda x: L.mapWrg(
        0, lambda row: L.mapLcl(0, lambda s: mult(s, s), L.scanSeq(add, 0.0, row)), x))
    with pytest.raises(CodegenError, match="result of scanSeq is used as an input"):
        generate_kernel(program, {"M": 4, "N": 8})
