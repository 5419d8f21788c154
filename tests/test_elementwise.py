"""Several elements per work-item for elementwise maps, with vector loads and stores (issue 54, item 3).

The library's ``add`` is explored into float-vector variants (``vectorizeMap``), alone or with several
vectors per work-item, in contiguous chunks (``splitJoin``) or strided so that neighbouring work-items read
neighbouring vectors at every step (``splitStrided``); each variant runs on the default device and
matches the interpreter.
"""

import numpy as np

from liftpy.codegen.kernel import generate_kernel
from liftpy.operators import linalg
from liftpy.rewrite.explore import explore, features
from liftpy.rewrite.validate import check_variant


def test_add_has_vector_and_strided_variants_that_match_the_interpreter():
    program = linalg.add()
    variants = explore(program)
    kinds = [features(v) for v in variants]
    assert any({"vectorizeMap", "splitStrided"} <= k for k in kinds)
    assert any({"vectorizeMap", "splitJoin"} <= k and "mapSeq" in str(v.program) for k, v in zip(kinds, variants))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    for v in variants:
        check = check_variant(v, program, [{"N": 256}], lambda s: [a, b], count=2, rtol=0, atol=0)
        assert check.ok, check.summary()


def test_a_strided_vector_add_loads_and_stores_float4_a_group_apart():
    """Work-item k adds vectors k, k + s, k + 2s, ...: float4 loads and stores, its steps s vectors apart."""
    v = next(v for v in explore(linalg.add()) if {"vectorizeMap", "splitStrided"} <= features(v))
    params = {p.name: 4 if p.name.startswith("v") else 16 for p in v.params}
    ks = generate_kernel(v.program, {"N": 1024, **params})
    body = ks.source[ks.source.index("kernel void"):]
    assert body.count("float4*)") == 3, body  # two loads, one store
    assert "i_0 * 64" in body and "gl_0 * 4" in body, body  # 16 items of 4 floats: the next step 64 floats on


def test_a_user_function_is_vectorized_only_where_its_body_is_known_to_suit_vectors():
    """An expression user function (its C printed from its syntax tree) vectorizes, and its kernel defines
    the function of the width the point gives (float<v0> at v0 = 8: float8); an OpenCL body the user wrote
    for scalars is left scalar."""
    import numpy as np

    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.ir.parser import parse_program
    from liftpy.rewrite.explore import explore_all

    expression = parse_program('userfun twice(a: float): float = "a + a"\ndef f(x: [float]N) = map(twice, x)\n')
    written = parse_program('userfun double(a: float): float = opencl "return a + a;"\ndef g(x: [float]N) = map(double, x)\n')
    assert not any("vectorizeMap" in {s.rule for s in v.trace} for v in explore_all(written)[0])
    vectorized = [v for v in explore_all(expression)[0] if "vectorizeMap" in {s.rule for s in v.trace}]
    assert vectorized
    x = np.arange(64, dtype=np.float32)
    for v in vectorized:
        for config in sample(solve(variant_space(v, {"N": 64})), 2, seed=0):
            pipeline = CompiledPipeline(v.program, {"N": 64, **config}, get_device(None), v.placement_map)
            assert f"float{config['v0']} uf_twice" in pipeline.source
            assert np.array_equal(pipeline.run(x).output, 2 * x)


def test_reductions_of_a_function_of_each_element_read_as_vectors_compute_on_the_device():
    """``vectorizeSum`` computes an element function on the vector (``sqrt(fabs(x))``, ``exp(-x) / 3``):
    the variants that read four or eight elements a step compute on the default device what the
    interpreter computes of the scalar program."""
    from liftpy import Array, Float, make_program, reduce
    from liftpy.ir.types import size_var
    from liftpy.ir.userfun import BUILTINS as B

    n = size_var("N")
    programs = {
        "sum of sqrt(fabs(x))": make_program("p", [("a", Array(Float, n))],
                                             lambda a: reduce(lambda acc, x: B["add"](acc, B["sqrt"](B["fabs"](x))), 0.0, a)),
        "max of exp(-x) / 3": make_program("p", [("a", Array(Float, n))],
                                           lambda a: reduce(lambda acc, x: B["max"](acc, B["div"](B["exp"](B["neg"](x)), 3.0)), -1.0, a)),
    }
    a = np.random.default_rng(2).standard_normal(256).astype(np.float32)
    for name, program in programs.items():
        vectors = [v for v in explore(program) if {"vectorizeSum", "vectorizeSumWide"} & features(v)]
        checked = 0
        for v in vectors:
            check = check_variant(v, program, [{"N": 256}], lambda s: [a], count=1, rtol=1e-5, atol=1e-5)
            if check.feasible:  # (a variant unrolling more steps than allowed has no point at this size)
                assert check.ok, (name, check.summary())
                checked += 1
        assert checked >= 4, (name, checked)
