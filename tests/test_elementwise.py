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
