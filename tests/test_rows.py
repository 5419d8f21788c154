"""Cooperative row reductions (``liftpy.rewrite.rows``): a work-group shares each row, so rows too long for
one work-item (softmax and layer norm of 32,768 floats on PoCL, of 8,192 on a GPU) have valid variants;
those variants, and the matrix-vector products', build and match the reference on PoCL; each item's reads
of a row are coalesced (the local id is the fastest-varying term of the index).  The rules' property
tests are in tests/test_rules_rows.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy

from liftpy import Array, Float, add, fmax, make_program, map, reduce, sizes
from liftpy.ir import dsl as L
from liftpy.codegen.kernel import generate_pipeline
from liftpy.constraints import sample, solve
from liftpy.constraints.infer import variant_space
from liftpy.host.device import get_device
from liftpy.host.kernel import CompiledPipeline
from liftpy.host.profile import DeviceProfile, resolve_profile
from liftpy.operators import linalg, parse_spec, rows
from liftpy.rewrite.explore import explore, features
from liftpy.rewrite.validate import check_variant

COOPERATIVE = {"dealRows", "dealRowsVector"}
GPU = DeviceProfile(device="GPU-like", source="test", max_work_group_size=1024, local_mem_bytes=49152, device_type="GPU",
                    warp_size=32, compute_units=132, global_mem_bytes=140 << 30, max_alloc_bytes=35 << 30)


def _cooperative(variants, *also):
    return [v for v in variants if features(v) & COOPERATIVE and set(also) <= features(v)]


def _run(v, sizes_, config, inputs):
    out = CompiledPipeline(v.program, {**sizes_, **config}, get_device(None), v.placement_map).run(*inputs, repeat=1, warmup=0)
    return np.asarray(out.output)


@pytest.mark.parametrize("name", ["softmax_rows", "layernorm_rows"])
def test_rows_too_long_for_one_work_item_are_shared_by_a_work_group(name):
    """128 KiB rows: more private memory than PoCL lets a work-item keep (64 KiB), so only the variants whose
    work-group shares each row are valid; one of them (its let-bound row recomputed, read as float4s)
    builds and matches the numpy reference."""
    entry, params = parse_spec(name)
    sizes_ = {"M": 4, "N": 32768}
    program = entry.program(sizes_, params)
    profile = resolve_profile(None)
    variants = explore(program)
    valid = [v for v in variants if solve(variant_space(v, sizes_, profile)).size.valid]
    assert valid and all(features(v) & COOPERATIVE for v in valid)
    v = next(v for v in valid if {"letInline", "dealRowsVector"} <= features(v))
    x = np.random.default_rng(0).standard_normal((4, 32768)).astype(np.float32)
    got = _run(v, sizes_, {"L0": 1024, "v0": 4}, [x]).reshape(4, 32768)
    want = getattr(rows, f"{name}_reference")(x)
    assert np.allclose(got, want, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("name", ["softmax_rows", "layernorm_rows"])
def test_every_kind_of_shared_row_matches_the_interpreter(name):
    """Shares kept in registers, in local memory, or recomputed; one element or a vector at a time; the
    row's own shares copied into registers first (read from global memory once)."""
    entry, params = parse_spec(name)
    sizes_ = {"M": 3, "N": 512}
    program = entry.program(sizes_, params)
    x = np.random.default_rng(1).standard_normal((3, 512)).astype(np.float32)
    kinds = [("groupLetPrivate", "dealRows"), ("groupLetLocal", "dealRowsVector"), ("letInline", "dealRows"),
             ("letInline", "letShares", "groupLetPrivate", "dealRowsVector")]
    for kind in kinds:
        v = _cooperative(explore(program), *kind)[0]
        check = check_variant(v, program, [sizes_], lambda s: [x], count=1, profile=resolve_profile(None), rtol=1e-3, atol=1e-5)
        assert check.ok, (kind, check.summary(), [c.message for c in check.checks])


@pytest.mark.parametrize("build,shape", [(linalg.gemv, {"M": 8, "N": 1024}), (linalg.fully_connected, {"B": 2, "M": 8, "N": 512})])
def test_matrix_vector_rows_validate_on_pocl(build, shape):
    """Each row's dot product (plus bias, then ReLU, for the layer) by a work-group: plainly dealt, dealt
    as vectors, over float4 dot products (``vectorizeReduce``), and each row split over work-groups whose
    partial results a second kernel adds up (``splitRows``, the bias and the ReLU there)."""
    program = build()
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal([int(d.subs({sympy.Symbol(k, integer=True, positive=True): v for k, v in shape.items()}))
                                   for d in t.dims]).astype(np.float32) for t in program.param_types]
    variants = explore(program)
    for kind in ("dealRows", "dealRowsVector", "vectorizeReduce", "splitRows"):
        v = next(v for v in _cooperative(variants, kind) if "unrollInItem" in features(v))
        check = check_variant(v, program, [shape], lambda s: inputs, count=1, profile=resolve_profile(None), rtol=1e-3, atol=1e-4)
        assert check.ok, (kind, check.summary(), [c.message for c in check.checks])


@pytest.mark.parametrize("spelling", ["atax_let", "atax_nested", "axpby_zip_rows", "axpby_two_products"])
def test_matrix_vector_spellings_share_rows_and_validate(spelling):
    """The users' spellings of ``benchmarks/spellings.py``: A^T (A x) with ``A x`` bound by let or written
    inside the map over the columns (``letInvariant`` binds it once), alpha A x + beta B x over zip(A, B)
    or as two products zipped (``zipMapFusion``): each has variants whose work-groups share A's rows (a
    kernel of its own for ``A x``), and every kind of them matches the interpreter on PoCL."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import spellings as S

    program = getattr(S, spelling)()
    shape = {"M": 16, "N": 256}
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal([int(d.subs({sympy.Symbol(k, integer=True, positive=True): v for k, v in shape.items()}))
                                   for d in t.dims]).astype(np.float32) for t in program.param_types]
    shared = _cooperative(explore(program))
    assert shared, f"{spelling}: no variant shares its rows"
    kinds = {frozenset(features(v) & (COOPERATIVE | {"vectorizeReduce", "splitRows", "letGlobal", "zipMapFusion", "splitColumns"})): v for v in shared}
    for kind, v in kinds.items():
        check = check_variant(v, program, [shape], lambda s: inputs, count=1, profile=resolve_profile(None), rtol=1e-3,
                              atol=1e-3)
        assert check.ok, (spelling, sorted(kind), check.summary(), [c.message for c in check.checks])


def test_column_reductions_are_split_over_blocks_of_rows():
    """A global average pool over [H][W][C] reduces columns: one work-item per channel is all the
    parallelism it had (``splitColumns``: blocks of rows in one kernel, their results in the next); on a
    GPU-like device every block size that divides the rows is valid, and the variants match the
    interpreter on PoCL."""
    entry, params = parse_spec("global_avgpool")
    shape = {"H": 8, "W": 16, "C": 64}
    program = entry.program(shape, params)
    split = [v for v in explore(program) if "splitColumns" in features(v)]
    assert split
    assert any(solve(variant_space(v, {"H": 256, "W": 256, "C": 1024}, GPU)).size.valid for v in split)
    x = np.random.default_rng(4).standard_normal((8, 16, 64)).astype(np.float32)
    for v in split[:: max(1, len(split) // 4)]:
        check = check_variant(v, program, [shape], lambda s: [x], count=2, profile=resolve_profile(None), rtol=1e-3, atol=1e-4)
        assert check.ok, (check.summary(), [c.message for c in check.checks])


def _indices(source: str, buffer: str) -> list[sympy.Expr]:
    """The index expressions of every read of ``buffer`` (``A[...]``, or ``(global const float4*)(A + ...)``)."""
    scalar = re.findall(rf"\b{buffer}\[([^\]]+)\]", source)
    vector = re.findall(rf"\(global const float(\d)\*\)\({buffer} \+ ([^)]+)\)", source)
    return [sympy.sympify(s) for s in scalar] + [sympy.sympify(s) for _, s in vector]


@pytest.mark.parametrize("kind,config,step", [("dealRows", {"L0": 64}, 1), ("dealRowsVector", {"L0": 64, "v0": 4}, 4)])
def test_each_row_is_read_with_the_local_id_fastest(kind, config, step):
    """Neighbouring work-items read neighbouring elements (or float4s, one load each) of the row: in every
    read of the matrix the local id's coefficient is the element (vector) width and every other term of
    the index a multiple of L0 times it, so a warp's reads of one step are one contiguous segment."""
    shape = {"M": 8, "N": 1024}
    v = _cooperative(explore(linalg.gemv()), kind)[0]
    source = generate_pipeline(v.program, {**shape, **config})[0][0].source
    reads = _indices(source, "A")
    assert reads
    for index in reads:
        local = [s for s in index.free_symbols if s.name.startswith("l_")]
        assert len(local) == 1, index
        assert index.coeff(local[0]) == step, index
        rest = sympy.expand(index - step * local[0])
        assert all(sympy.Mod(c, config["L0"] * step) == 0 for c in sympy.Poly(rest, *rest.free_symbols).coeffs()), index


@pytest.mark.parametrize("name", ["softmax_rows", "layernorm_rows", "gemv", "fully_connected:relu=0"])
def test_rows_have_valid_shared_variants_on_a_gpu(name):
    """At the sizes the roofline benchmark measures (the H200's limits: 1,024 items per group, 48 KiB of
    local memory, 16 KiB of private memory per item), the shared rows are valid; for softmax and layer norm
    they are the only valid variants (a whole row of 8,192 floats is 32 KiB)."""
    entry, params = parse_spec(name)
    sizes_ = {"B": 1, "M": 4096, "N": 25088} if name.startswith("fully") else {"M": 8192, "N": 8192}
    variants = explore(entry.program(sizes_, params))
    valid = [v for v in variants if solve(variant_space(v, sizes_, GPU)).size.valid]
    shared = [v for v in valid if features(v) & COOPERATIVE]
    assert len(shared) >= 4
    if name.endswith("_rows"):
        assert len(shared) == len(valid)


@pytest.mark.parametrize("op,init", [(add, 0.0), (fmax, float("-inf"))])
def test_row_sums_and_maxima_of_a_users_program(op, init):
    """A user's ``map(r -> reduce(op, init, r), x)`` gets shared-row variants without asking."""
    M, N = sizes("M N")
    program = make_program("rowwise", [("x", Array(Float, M, N))], lambda x: map(lambda r: reduce(op, init, r), x))
    x = np.random.default_rng(3).standard_normal((5, 768)).astype(np.float32)
    shared = _cooperative(explore(program))
    assert len(shared) >= 2
    for v in shared[:2]:
        check = check_variant(v, program, [{"M": 5, "N": 768}], lambda s: [x], count=1, profile=resolve_profile(None),
                              rtol=1e-4, atol=1e-4)
        assert check.ok, (check.summary(), [c.message for c in check.checks])


def test_few_long_rows_are_split_over_work_groups_on_a_gpu():
    """A fully-connected layer of 64 outputs at batch 1 has 64 rows, 64 work-groups for 132 compute units when
    each row has one; split into chunks of ``ks0``, the rows' chunks get work-groups of their own, and a
    second kernel adds each row's partial results to its bias (one work-item per output)."""
    entry, params = parse_spec("fully_connected:relu=1")
    sizes_ = {"B": 1, "M": 64, "N": 25088}
    variants = _cooperative(explore(entry.program(sizes_, params)), "splitRows")
    assert variants
    v = variants[0]
    config = sample(solve(variant_space(v, sizes_, GPU)), 1, seed=0)[0]
    first, second = generate_pipeline(v.program, {**sizes_, **config}, GPU.limits())
    groups = int(np.prod(first[0].launch.global_size)) // int(np.prod(first[0].launch.local_size))
    assert groups == 64 * 25088 // config["ks0"] and groups > 64
    assert second[0].launch.local_size is None  # the sums: one work-item per output


def test_global_softmax_rows_launch_groups_whose_private_memory_fits():
    """One work-item per row keeps its row (1 KiB here) in private memory; PoCL's largest group (4,096 items)
    would keep 4 MiB, more than its stack: the launch picks a smaller group, where it left the group to
    the driver, and the variants are valid (47 of the 63 variants of 2026-11 were not)."""
    entry, params = parse_spec("softmax_rows")
    sizes_ = {"M": 256, "N": 256}
    program = entry.program(sizes_, params)
    profile = resolve_profile(None)
    variants = explore(program)
    valid = [v for v in variants if solve(variant_space(v, sizes_, profile)).size.valid]
    assert len(valid) >= len(variants) - 8
    v = next(v for v in valid if [s.rule for s in v.trace][:1] == ["mapGlb0"] and "letPrivate" in features(v))
    config = sample(solve(variant_space(v, sizes_, profile)), 1, seed=0)[0]
    launch = generate_pipeline(v.program, {**sizes_, **config}, profile.limits())[0][0].launch
    assert launch.local_size is not None and 1032 * int(np.prod(launch.local_size)) <= profile.private_group_limit_bytes
    x = np.random.default_rng(4).standard_normal((256, 256)).astype(np.float32)
    assert np.allclose(_run(v, sizes_, config, [x]).reshape(256, 256), rows.softmax_rows_reference(x), rtol=1e-3, atol=1e-6)


def test_unroll_limits_survive_sympys_fractions():
    """sympy 1.14 decides ``1024/(L0*v0) <= 64`` False; the unroll limit multiplies the denominator out."""
    from liftpy.rewrite.lowering import at_most

    n, l0, v0 = sympy.symbols("N L0 v0", integer=True, positive=True)
    bound = at_most(n / (l0 * v0), 64).xreplace({n: 1024})
    assert bound not in (sympy.true, sympy.false)
    assert bound.xreplace({l0: 4, v0: 4}) == sympy.true and bound.xreplace({l0: 2, v0: 4}) == sympy.false


def test_rows_whose_elements_are_not_neighbours_are_not_shared():
    """Dealing a row is worth it for coalesced reads: a matrix product's columns (``transpose(B)``), a
    matrix's column sums and a convolution's windows are read at a stride, so they are left to the other
    mappings (and their explorations keep their variants: 124 for the matrix product)."""
    M, N = sizes("M N")
    columns = make_program("columns", [("x", Array(Float, M, N))], lambda x: map(lambda c: reduce(add, 0.0, c), L.transpose(x)))
    assert not _cooperative(explore(columns))
    assert not _cooperative(explore(linalg.matmul()))
    entry, params = parse_spec("conv2d")
    assert not _cooperative(explore(entry.program({}, params)))


@pytest.mark.parametrize("precision,load", [("fp16-storage", "load_half8_word(A + "), ("fp32", "*((global const float4*)(A + ")])
def test_a_rows_vectors_of_eight_load_whole_in_the_compilers_groups(precision, load):
    """A matrix-vector product's row dealt as vectors of eight (``dealRowsVector``, ``v0 = 8``) whose steps
    the unrolling leaves to the compiler in groups: each group copies a whole vector's eight steps, so the
    vector is loaded at once (two float4, or from half storage one sixteen-byte word).  Groups of four steps left the
    lane to be chosen at run time, a chain of conditions over eight scalar reads per step; the kernel still
    computes the product on the CPU's device."""
    from liftpy.explore.operator import library_operator
    from liftpy.ir.compare import compare
    from liftpy.ir.precision import FP16_STORAGE, half_arrays, tolerance

    shape = {"M": 16, "N": 512}
    op = library_operator("gemv", shape, precision)
    v = next(v for v in explore(op.program(), op.explore_options())
             if {"dealRowsVector", "unrollInItem"} <= features(v) and "vectorizeReduce" not in features(v))
    config = {"L0": 16, "v0": 8}
    (ks, _), = generate_pipeline(v.program, {**shape, **config}, placements=v.placement_map)
    body = ks.source[ks.source.index("kernel void"):]
    assert "#pragma unroll" in body and " % 2)" not in body and " ? " not in body, body
    assert load in body, body
    inputs = op.inputs(0)
    reference = op.expected([np.asarray(x, dtype=np.float64) for x in inputs])
    out = _run(v, shape, config, inputs)
    tol = 1e-4 if precision == "fp32" else tolerance(FP16_STORAGE, half_arrays(v.placements))
    verdict = compare(out, reference, tol)
    assert verdict.ok, verdict.message
