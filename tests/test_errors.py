"""Errors a user can cause surface as liftpy's exception types with messages that name what is wrong.

Type errors (``LiftTypeError``): the primitive, the expected and actual types, the sizes involved (concrete,
symbolic, and symbolic with values given).  Input errors when running (``InputError``).  Programs that cannot
become OpenCL as written (``CodegenError``), device choice (``DeviceError``), and a kernel the OpenCL
compiler rejects (``KernelBuildError`` carrying the build log and the source).
"""

import numpy as np
import pytest

import liftpy as L
from liftpy import (
    Array,
    CodegenError,
    DeviceError,
    Float,
    InputError,
    Int,
    KernelBuildError,
    LiftError,
    LiftTypeError,
    evaluate,
    make_program,
    typecheck,
)
from liftpy.codegen.kernel import generate_kernel
from liftpy.ir.expr import Call, Var

N, M, S = L.sizes("N M S")


def type_error(fn, *args, **kwargs) -> LiftTypeError:
    with pytest.raises(LiftTypeError) as info:
        fn(*args, **kwargs)
    err = info.value
    assert isinstance(err, LiftError)
    return err


def prog(inputs, body, name="p"):
    return make_program(name, inputs, body)


# --------------------------------------------------------------------------------------------------
# zip of unequal lengths


def test_zip_of_unequal_concrete_lengths():
    p = prog([("a", Array(Float, 3)), ("b", Array(Float, 4))], lambda a, b: L.zip(a, b))
    err = type_error(typecheck, p)
    assert err.primitive == "zip"
    msg = str(err)
    assert "same length" in msg and "length 3" in msg and "length 4" in msg
    assert "zip(a, b)" in msg  # the offending expression


def test_zip_of_provably_different_symbolic_lengths():
    p = prog([("a", Array(Float, N)), ("b", Array(Float, N + 1))], lambda a, b: L.zip(a, b))
    msg = str(type_error(typecheck, p))
    assert "length N" in msg and "(N + 1)" in msg


def test_zip_of_symbolic_lengths_is_a_requirement_until_sizes_are_given():
    p = prog([("a", Array(Float, N)), ("b", Array(Float, M))], lambda a, b: L.zip(a, b))
    (req,) = typecheck(p).requirements
    assert req.primitive == "zip" and "length N" in req.message and "length M" in req.message

    msg = str(type_error(typecheck, p, bindings={"N": 3, "M": 4}))
    assert "zip" in msg and "N = 3" in msg and "M = 4" in msg

    # running on arrays of different lengths says the same
    msg = str(type_error(evaluate, p, np.ones(3), np.ones(4)))
    assert "zip" in msg and "length 3" in msg and "length 4" in msg
    # equal lengths are fine
    assert evaluate(p, np.ones(3), np.zeros(3))[0].shape == (3,)


def test_zip_of_unequal_lengths_deep_inside_a_lambda():
    p = prog(
        [("a", Array(Float, 4, 6)), ("b", Array(Float, 4, 5))],
        lambda a, b: L.map(lambda rows: L.zip(rows[0], rows[1]), L.zip(a, b)),
    )
    msg = str(type_error(typecheck, p))
    assert "zip" in msg and "length 6" in msg and "length 5" in msg


# --------------------------------------------------------------------------------------------------
# split that does not divide


def test_split_that_does_not_divide_concrete():
    p = prog([("a", Array(Float, 10))], lambda a: L.split(4, a))
    err = type_error(typecheck, p)
    assert err.primitive == "split"
    assert "10 % 4 == 0" in str(err)


def test_split_that_does_not_divide_symbolic():
    p = prog([("a", Array(Float, N))], lambda a: L.split(4, a))
    (req,) = typecheck(p).requirements
    assert req.primitive == "split" and "N % 4 == 0" in req.message
    for run in (lambda: typecheck(p, bindings={"N": 10}), lambda: evaluate(p, np.ones(10, np.float32))):
        msg = str(type_error(run))
        assert "10 % 4 == 0" in msg and "N = 10" in msg
    # the same at code generation
    lowered = prog([("a", Array(Float, N))], lambda a: L.mapGlb(0, lambda c: L.mapSeq(L.id, c), L.split(4, a)))
    assert "10 % 4 == 0" in str(type_error(generate_kernel, lowered, {"N": 10}))


def test_split_by_a_tuning_parameter_needs_its_value():
    p = prog([("a", Array(Float, N))], lambda a: L.mapGlb(0, lambda c: L.mapSeq(L.id, c), L.split(S, a)))
    msg = str(type_error(generate_kernel, p, {"N": 12}))
    assert "S" in msg and "without a value" in msg
    msg = str(type_error(generate_kernel, p, {"N": 12, "S": 5}))
    assert "S = 5" in msg and ("12 % 5 == 0" in msg or "12 % S == 0" in msg), msg


def test_symbolic_split_factor_with_arithmetic_does_not_crash_the_type_checker():
    """``split(S + 1)`` of an array of length ``N - 2``: a requirement ``(N - 2) % (S + 1) == 0`` to decide
    later, not a RecursionError escaping from sympy (sympy.Mod(N - 2, S + 1) recurses forever)."""
    p = prog([("a", Array(Float, N))], lambda a: L.split(S + 1, L.pad(0, -2, 0.0, a)))
    typing = typecheck(p)
    assert any(r.primitive == "split" for r in typing.requirements)


# --------------------------------------------------------------------------------------------------
# user functions applied to the wrong types

RT_SCALE = L.userfun("rt_scale", [("a", Float), ("k", Int)], Float, "return a * k;", lambda a, k: a * k)


def test_userfun_with_wrong_scalar_type_names_function_and_parameter():
    p = prog([("a", Array(Int, N))], lambda a: L.map(L.relu, a))
    err = type_error(typecheck, p)
    assert err.primitive == "relu"
    assert "'x'" in str(err) and "float" in str(err) and "int" in str(err)

    p = prog([("a", Array(Float, N))], lambda a: L.map(lambda v: RT_SCALE(v, v), a))
    msg = str(type_error(typecheck, p))
    assert "rt_scale" in msg and "'k'" in msg and "expects int" in msg and "got float" in msg


def test_userfun_applied_to_an_array_names_the_array_type():
    p = prog([("a", Array(Float, N, M))], lambda a: L.map(L.relu, a))
    msg = str(type_error(typecheck, p))
    assert "relu" in msg and "[float]M" in msg


def test_generic_userfun_with_disagreeing_arguments():
    p = prog([("a", Array(Int, N)), ("b", Array(Float, N))], lambda a, b: L.map(lambda q: L.add(q[0], q[1]), L.zip(a, b)))
    msg = str(type_error(typecheck, p))
    assert "add" in msg and "'y'" in msg and "int" in msg and "float" in msg


def test_userfun_with_wrong_number_of_arguments():
    with pytest.raises(LiftTypeError, match=r"add.*expects 2 arguments, got 1"):
        L.add(Var("v"))
    p = prog([("a", Array(Float, N))], lambda a: L.map(lambda v: Call(L.add, (v,)), a))
    assert "expects 2 arguments, got 1" in str(type_error(typecheck, p))


def test_reduce_whose_function_returns_the_wrong_type():
    p = prog([("a", Array(Float, N))], lambda a: L.reduce(lambda acc, x: L.dot(acc, x), 0.0, L.asVector(4, a)))
    err = type_error(typecheck, p)
    assert "float4" in str(err) and "float" in str(err)


# --------------------------------------------------------------------------------------------------
# vectors, tuples, arrays, variables


def test_asvector_on_a_non_multiple():
    p = prog([("a", Array(Float, 10))], lambda a: L.asVector(4, a))
    err = type_error(typecheck, p)
    assert err.primitive == "asVector" and "10 % 4 == 0" in str(err)
    p = prog([("a", Array(Float, N))], lambda a: L.asVector(4, a))
    assert "10 % 4 == 0" in str(type_error(evaluate, p, np.ones(10, np.float32)))


def test_asvector_width_and_element_type():
    assert "2, 3, 4, 8 or 16" in str(type_error(typecheck, prog([("a", Array(Float, 10))], lambda a: L.asVector(5, a))))
    msg = str(type_error(typecheck, prog([("a", Array(Float, 8, 8))], lambda a: L.asVector(4, a))))
    assert "array of scalars" in msg and "[[float]8]8" in msg
    msg = str(type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.asScalar(a))))
    assert "asScalar" in msg and "vectors" in msg


def test_get_on_a_non_tuple_and_out_of_range():
    err = type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.map(lambda v: L.get(v, 0), a)))
    assert err.primitive == "get" and "expects a tuple, got float" in str(err)
    err = type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.map(lambda v: v[0], a)))
    assert err.primitive == "index" and "a component of a tuple or an element of an array, got float" in str(err)
    msg = str(type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.map(lambda v: v[2], L.zip(a, a)))))
    assert "component 2" in msg and "2-tuple" in msg
    msg = str(type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.map(lambda w: w[3], L.slide(3, 1, a)))))
    assert "index 3 must be below the length 3" in msg


def test_map_over_a_non_array():
    for mapper in (L.map, L.mapSeq, lambda f, x: L.mapGlb(0, f, x)):
        err = type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.map(lambda v: mapper(L.id, v), a)))
        assert "expects an array, got float" in str(err)
        assert err.primitive in ("map", "mapSeq", "mapGlb")


def test_layout_primitives_on_the_wrong_shapes():
    msg = str(type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.transpose(a))))
    assert "transpose" in msg and "two-dimensional" in msg
    msg = str(type_error(typecheck, prog([("a", Array(Float, 8))], lambda a: L.join(a))))
    assert "join" in msg and "array of arrays" in msg
    msg = str(type_error(typecheck, prog([("a", Array(Float, 4))], lambda a: L.slide(5, 1, a))))
    assert "window size 5" in msg and "length 4" in msg
    msg = str(type_error(typecheck, prog([("a", Array(Float, 4))], lambda a: L.pad(-3, -2, 0.0, a))))
    assert "pad" in msg


def test_unbound_variable():
    p = prog([("a", Array(Float, 8))], lambda a: L.map(lambda v: L.add(v, Var("zz")), a))
    err = type_error(typecheck, p)
    assert "'zz' is not defined" in str(err)
    assert "'zz' is not defined" in str(type_error(evaluate, p, np.ones(8, np.float32)))


def test_ndrange_dimension_out_of_range_in_the_dsl():
    with pytest.raises(LiftTypeError, match="0, 1 and 2"):
        L.mapGlb(3, L.id, Var("a"))


# --------------------------------------------------------------------------------------------------
# running with the wrong inputs

PAIR = prog([("a", Array(Float, N)), ("b", Array(Float, N))], lambda a, b: L.map(lambda q: L.add(q[0], q[1]), L.zip(a, b)), "pair")


@pytest.mark.parametrize(
    "args, kwargs, words",
    [
        ((np.ones(8),), {}, ["missing input", "b"]),
        ((np.ones(8),) * 3, {}, ["takes 2 inputs", "got 3"]),
        ((np.ones(8), np.ones(9)), {}, ["input 'b'", "length 9", "N", "8"]),
        ((np.ones(8), np.ones((8, 2))), {}, ["input 'b'", "2 dimensions", "has 1"]),
        ((np.ones(8),), {"c": np.ones(8)}, ["no input 'c'", "a, b"]),
        ((np.ones(8),), {"a": np.ones(8)}, ["'a' given twice"]),
    ],
)
def test_evaluate_with_wrong_inputs(args, kwargs, words):
    with pytest.raises(InputError) as info:
        evaluate(PAIR, *args, **kwargs)
    for w in words:
        assert w in str(info.value), str(info.value)


def test_evaluate_with_sizes_that_contradict_the_inputs():
    with pytest.raises(InputError, match="length 8"):
        evaluate(PAIR, np.ones(8), np.ones(8), sizes={"N": 5})


def test_kernel_run_with_wrong_inputs():
    lowered = prog([("a", Array(Float, N)), ("b", Array(Float, N))],
                   lambda a, b: L.mapGlb(0, lambda q: L.add(q[0], q[1]), L.zip(a, b)), "pair_glb")
    kernel = lowered.compile({"N": 8})
    a = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(kernel.run(a, a).output, 2 * a)
    with pytest.raises(InputError, match="missing input"):
        kernel.run(a)
    with pytest.raises(InputError) as info:
        kernel.run(np.ones(9, np.float32), np.ones(9, np.float32))
    msg = str(info.value)
    assert "length 9" in msg and "N" in msg and "8" in msg, msg
    with pytest.raises(InputError, match="dimensions"):
        kernel.run(a, a.reshape(2, 4))


def test_a_tuple_input_given_as_one_array_is_refused_with_advice():
    p = L.Program("t", (Var("t"),), (L.Tuple(Float, Float),), Var("t"))
    with pytest.raises(InputError, match="as a tuple of arrays"):
        evaluate(p, np.ones(2))


# --------------------------------------------------------------------------------------------------
# programs that cannot become OpenCL as written


def test_unlowered_map_reaching_code_generation():
    with pytest.raises(CodegenError) as info:
        generate_kernel(PAIR, {"N": 8})
    msg = str(info.value)
    assert "map must be lowered" in msg and "mapGlb" in msg and "mapSeq" in msg
    assert "map(" in msg  # names the offending expression


def test_unlowered_reduce_reaching_code_generation():
    p = prog([("a", Array(Float, N))], lambda a: L.toGlobal(L.mapSeq(L.id, L.reduce(L.add, 0.0, a))))
    with pytest.raises(CodegenError, match="reduce must be lowered to reduceSeq") as info:
        generate_kernel(p, {"N": 8})
    assert "reduce(add, 0.0f, a)" in str(info.value)


def test_unlowered_map_inside_a_global_map():
    p = prog([("a", Array(Float, N, 4))], lambda a: L.mapGlb(0, lambda r: L.map(L.id, r), a))
    with pytest.raises(CodegenError, match="lowered"):
        generate_kernel(p, {"N": 8})


@pytest.mark.parametrize(
    "body",
    [
        lambda a: L.mapGlb(0, lambda r: L.mapSeq(L.id, L.toLocal(L.mapSeq(L.id, r))), a),  # in a work-item
        lambda a: L.mapWrg(0, lambda r: L.mapLcl(0, lambda v: L.toLocal(L.id(v)), r), a),  # inside mapLcl
        lambda a: L.toLocal(L.mapGlb(0, lambda r: L.mapSeq(L.id, r), a)),  # at kernel level
    ],
    ids=["in-mapGlb", "in-mapLcl", "kernel-level"],
)
def test_toLocal_in_the_wrong_place(body):
    p = prog([("a", Array(Float, N, 4))], body)
    with pytest.raises(CodegenError) as info:
        generate_kernel(p, {"N": 8})
    msg = str(info.value)
    assert "toLocal" in msg and "mapWrg" in msg


def test_toLocal_in_the_right_place_is_accepted():
    p = prog([("a", Array(Float, N, 4))],
             lambda a: L.mapWrg(0, lambda r: L.mapLcl(0, L.id, L.toLocal(L.mapLcl(0, L.id, r))), a))
    ks = generate_kernel(p, {"N": 8})
    assert ks.plan.of_space("local") and "barrier(" in ks.source


def test_parallel_maps_nested_wrongly():
    cases = {
        "mapLcl(0) must be nested inside a mapWrg": lambda a: L.mapLcl(0, lambda r: L.mapSeq(L.id, r), a),
        "mapGlb(0) nested inside another mapGlb(0)": lambda a: L.mapGlb(0, lambda r: L.mapGlb(0, L.id, r), a),
        "mapGlb(0) inside mapWrg": lambda a: L.mapWrg(0, lambda r: L.mapGlb(0, L.id, r), a),
    }
    for words, body in cases.items():
        with pytest.raises(CodegenError) as info:
            generate_kernel(prog([("a", Array(Float, N, 4))], body), {"N": 8})
        assert words in str(info.value)


def test_parallel_map_result_used_as_an_input_without_memory():
    p = prog([("a", Array(Float, N, 4))],
             lambda a: L.mapWrg(0, lambda r: L.mapLcl(0, L.id, L.mapLcl(0, L.id, r)), a))
    with pytest.raises(CodegenError, match=r"toLocal\(\.\.\.\) or toPrivate"):
        generate_kernel(p, {"N": 8})


def test_tuples_of_arrays_cannot_be_a_kernel_output():
    p = prog([("a", Array(Float, N))], lambda a: L.zip(L.split(2, a), L.split(2, a)))
    with pytest.raises(CodegenError, match="scalars, vectors or tuples of them"):
        generate_kernel(p, {"N": 8})


# --------------------------------------------------------------------------------------------------
# devices and the OpenCL compiler


def test_unknown_device():
    with pytest.raises(DeviceError, match="devices are"):
        L.host.device.get_device(99)
    with pytest.raises(DeviceError, match="no OpenCL device matches"):
        L.host.device.get_device("no-such-accelerator-xyz")


def test_opencl_build_failure_is_a_kernel_build_error_with_the_log():
    broken = L.userfun("rt_broken", [("x", Float)], Float, "return x +* ;", lambda x: x)
    p = prog([("a", Array(Float, N))], lambda a: L.mapGlb(0, broken, a), "uses_broken")
    with pytest.raises(KernelBuildError) as info:
        p.compile({"N": 8})
    err = info.value
    assert "rt_broken" in err.source and "return x +* ;" in err.source
    assert "error" in err.log.lower()
    assert "build log" in str(err) and err.log.strip() in str(err)
