"""A reduction's accumulator spread over work-items, and a reduction's value stored as a map's element.

- ``mapLcl(d)`` may lower a map in a reduction's initial value only where the reduction's step spreads the
  accumulator over the same work-items (``accumulators.spread_mismatch``): each work-item then updates and
  reads back exactly the part it initialised, as in the register-blocked matrix product.  A newcomer's
  batched product had ``mapLcl(0)`` on the initial value of a reduction that every work-item runs over the
  whole accumulator with ``mapSeq``: each item initialised its slice of its private accumulator and read
  the rest uninitialised (10 of 96 runs wrong on PoCL).  Derivation also drops, with the reason, any
  variant where the two disagree (``accumulator_refusals``).
- ``fold`` (``at(0, reduce(...))``) as a map's element is stored through ``at`` of the one-element result
  (a write view, ``WOnly``); every general variant of that product used to fail in code generation.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import liftpy as lp
from liftpy import Array, Float, Int, add, make_program, map, mapLcl, mapSeq, mapWrg, mult, reduceSeq, sizes, toPrivate, zip
from liftpy.ir import primitives as P
from liftpy.ir.expr import Call, subterms
from liftpy.rewrite import accumulators as A
from liftpy.rewrite import lowering as L
from liftpy.rewrite.checks import check_rule
from liftpy.rewrite.derive import refused
from liftpy.rewrite.explore import Variant, explore_all
from liftpy.rewrite.rule import applications

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
H, K, W, V = sizes("H K W V")


def _ints(rng, shape):
    return rng.integers(-5, 6, size=shape).astype(np.int32)


def _init_maps(rule, program) -> list:
    """The positions in a reduction's initial value where ``rule`` applies."""
    out = []
    from liftpy.rewrite.positions import _child

    for _, path, _ in applications(program, [rule]):
        e, inside = program.body, False
        for step in path:
            if isinstance(e, Call) and isinstance(e.fn, P.ReduceLike) and step == ("arg", 0):
                inside = True
            e = _child(e, step)
        if inside:
            out.append(path)
    return out


def _group_reduction(step_map, depth2: bool = False):
    """A work-group's reduction over the rows of ``p._0``, its accumulator initialised from ``p._1`` by a
    plain map (to be lowered), its step adding each row elementwise through ``step_map``."""
    if depth2:  # a 2D accumulator: the step's outer map ``step_map``, its inner one mapLcl(0)
        return make_program("p", [("x", Array(Int, H, K, V, W)), ("y", Array(Int, H, V, W))], lambda x, y: mapWrg(0, lambda p: reduceSeq(
            lambda acc, rows: step_map(lambda q: mapLcl(0, lambda r: add(r[0], r[1]), zip(q[0], q[1])), zip(acc, rows)),
            map(lambda yr: mapSeq(lambda v: mult(v, 2), yr), p[1]), p[0]), zip(x, y)))
    return make_program("p", [("x", Array(Int, H, K, W)), ("y", Array(Int, H, W))], lambda x, y: mapWrg(0, lambda p: reduceSeq(
        lambda acc, row: step_map(lambda q: add(q[0], q[1]), zip(acc, row)), map(lambda v: mult(v, 2), p[1]), p[0]), zip(x, y)))


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.integers(0, 10**6))
def test_an_initial_value_is_spread_like_the_step_and_keeps_the_result(h, k, w, seed):
    """Where the step spreads the accumulator by mapLcl(0), the initial value's map may be mapLcl(0) too
    (the interpreter's result is unchanged at every position the rule applies, the initial value one of
    them), and nowhere else (mapLcl(1) there would give items parts they never update)."""
    rng = np.random.default_rng(seed)
    prog = _group_reduction(lambda f, xs: mapLcl(0, f, xs))
    assert _init_maps(L.MAP_LCL[0], prog), "mapLcl(0) should apply to the initial value"
    assert not _init_maps(L.MAP_LCL[1], prog)
    results = check_rule(L.MAP_LCL[0], prog, [_ints(rng, (h, k, w)), _ints(rng, (h, w))])
    assert results and all(r.ok for r in results), results


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(0, 10**6))
def test_a_two_dimensional_accumulator_matches_depth_by_depth(h, k, v, w, seed):
    """A 2D accumulator whose step is mapLcl(1) over rows and mapLcl(0) within: the initial value's outer
    map may become mapLcl(1) only (not mapLcl(0)); the result is unchanged."""
    rng = np.random.default_rng(seed)
    prog = _group_reduction(lambda f, xs: mapLcl(1, f, xs), depth2=True)
    assert _init_maps(L.MAP_LCL[1], prog) and not _init_maps(L.MAP_LCL[0], prog)
    results = check_rule(L.MAP_LCL[1], prog, [_ints(rng, (h, k, v, w)), _ints(rng, (h, v, w))])
    assert results and all(r.ok for r in results), results
    # the step's outer map sequential: no mapLcl on the initial value at all
    seq = _group_reduction(lambda f, xs: mapSeq(f, xs), depth2=True)
    assert not _init_maps(L.MAP_LCL[0], seq) and not _init_maps(L.MAP_LCL[1], seq)


def test_an_initial_value_is_not_spread_where_the_step_is_sequential():
    """The newcomer's shape: a reduction each work-item runs on its own (inside mapLcl(1)), its step a
    mapSeq over the whole accumulator.  mapLcl(0) used to lower the initial value's map."""
    at_group = _group_reduction(lambda f, xs: mapSeq(f, xs))
    assert not _init_maps(L.MAP_LCL[0], at_group)
    in_item = make_program("p", [("x", Array(Int, H, K, W)), ("y", Array(Int, H, W))], lambda x, y: mapWrg(0, lambda p: mapLcl(1,
        lambda c: reduceSeq(lambda acc, row: map(lambda q: add(q[0], mult(q[1], c)), zip(acc, row)), map(lambda v: mult(v, 2), p[1]), p[0]),
        p[1]), zip(x, y)))
    assert not _init_maps(L.MAP_LCL[0], in_item)


def test_a_variant_whose_initial_value_is_spread_otherwise_than_its_step_is_dropped():
    """``accumulator_refusals`` finds the mismatch in a lowered program written by hand, and derivation
    (``refused``) drops such a variant with that reason; the matching program passes."""
    bad = make_program("p", [("x", Array(Float, H, K, W)), ("y", Array(Float, H, W))], lambda x, y: mapWrg(0, lambda p: reduceSeq(
        lambda acc, row: mapSeq(lambda q: add(q[0], q[1]), zip(acc, row)),
        toPrivate(mapLcl(0, lambda v: mult(v, 2.0), p[1])), p[0]), zip(x, y)))
    (why,) = A.accumulator_refusals(bad)
    assert "mapLcl(0) at depth 0" in why and "other work-items initialised" in why
    assert refused(Variant(bad)) == why
    good = make_program("p", [("x", Array(Float, H, K, W)), ("y", Array(Float, H, W))], lambda x, y: mapWrg(0, lambda p: reduceSeq(
        lambda acc, row: mapLcl(0, lambda q: add(q[0], q[1]), zip(acc, row)),
        toPrivate(mapLcl(0, lambda v: mult(v, 2.0), p[1])), p[0]), zip(x, y)))
    assert A.accumulator_refusals(good) == () and refused(Variant(good)) is None


# ------------------------------------------------------------------------------ the newcomer's product

B_, N_, K_, M_ = sizes("B N K M")


def _batched():
    """Many small matrix products at once, as a newcomer writes them: the inner product a ``fold`` over
    ``zip(row, col)`` with ``acc + p[0] * p[1]``, the columns ``transpose(y)``'s rows."""

    def product(pair):
        x, y = pair[0], pair[1]
        return lp.map(lambda row: lp.map(lambda col: lp.fold(lambda acc, p: acc + p[0] * p[1], 0.0, lp.zip(row, col)),
                                         lp.transpose(y)), x)

    return make_program("batched_matmul", [("a", Array(Float, B_, N_, K_)), ("b", Array(Float, B_, K_, M_))],
                        lambda a, b: lp.map(product, lp.zip(a, b)))


def _wrong_spreads(program) -> list:
    return [n for n in subterms(program.body) if isinstance(n, Call) and isinstance(n.fn, P.ReduceLike)
            and A.spread_mismatch(n.args[0], n.fn.f) is not None]


def test_the_batched_products_mapwrg_variants_match_numpy():
    """A sample of the batched product's work-group variants, and every tiled one (tile2DReduce, strided
    or not: those spread their accumulators), run on the default device (PoCL) and match numpy; no
    variant has an initial value spread otherwise than its step."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline

    program = _batched()
    kept, dropped = explore_all(program)
    assert kept and not dropped
    assert not any(_wrong_spreads(v.program) for v in kept)
    wrg = [v for v in kept if "mapWrg0" in {s.rule for s in v.trace}]
    tiled = [v for v in wrg if {s.rule for s in v.trace} & {"tile2DReduce", "tile2DReduceStrided"}]
    assert len(tiled) >= 8
    chosen = tiled + [v for v in wrg if v not in tiled][::40]
    sz = {"B": 2, "N": 8, "K": 8, "M": 8}
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 8, 8)).astype(np.float32), rng.standard_normal((2, 8, 8)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    device = get_device(None)
    ran = 0
    for k, v in enumerate(chosen):
        for config in sample(solve(variant_space(v, sz)), 1, seed=k):
            out = CompiledPipeline(v.program, {**sz, **config}, device, v.placement_map).run(a, b, repeat=1, warmup=0).output
            assert np.allclose(np.asarray(out).reshape(want.shape), want, atol=1e-3), (config, " -> ".join(s.rule for s in v.trace))
            ran += 1
    assert ran >= len(tiled)


@pytest.mark.parametrize("length,ok", [(1, True), (2, False)])
def test_at_of_a_computed_array_is_stored_through_only_when_it_has_one_element(length, ok):
    """``at(0, e)`` stored: ``e``'s only element goes to the destination (``fold`` as a map's element,
    compiled and run on the default device); of a longer ``e`` the other elements would have nowhere to
    go, and code generation refuses it, as ``refusals`` says before any code is generated."""
    from liftpy.codegen.allocation import refusals
    from liftpy.codegen.kernel import generate_pipeline
    from liftpy.errors import CodegenError
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.ir.dsl import at, mapGlb

    if length == 1:
        prog = make_program("p", [("x", Array(Float, H, W))], lambda x: mapGlb(0, lambda r: at(0, reduceSeq(
            lambda acc, v: add(acc, mult(v, v)), 0.0, r)), x))
    else:
        prog = make_program("p", [("x", Array(Float, H, 2))], lambda x: mapGlb(0, lambda r: at(0, mapSeq(
            lambda v: mult(v, 2.0), r)), x))
    sz = {"H": 5, "W": 6}
    if not ok:
        (why,) = refusals(prog)
        assert "cannot be stored through at" in why
        with pytest.raises(CodegenError, match="cannot be stored through at"):
            generate_pipeline(prog, sz)
        return
    assert refusals(prog) == ()
    x = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    out = CompiledPipeline(prog, sz, get_device(None), {}).run(x, repeat=1, warmup=0).output
    assert np.allclose(np.asarray(out).ravel(), (x.astype(np.float64) ** 2).sum(1), atol=1e-4)
