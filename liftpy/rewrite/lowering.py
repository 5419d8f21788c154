"""Lowering rules: from algorithmic primitives to OpenCL-level ones, and where values live.

- work mapping: ``map`` becomes ``mapGlb(d)``, ``mapWrg(d)``, ``mapLcl(d)`` or ``mapSeq``, respecting
  OpenCL's nesting (a ``mapLcl`` inside a ``mapWrg``, no dimension used twice on one path, no parallel map
  inside a sequential one); ``reduce`` becomes ``reduceSeq``;
- unrolling of sequential loops;
- memory: the accumulator of a reduction in private memory; ``let`` that fetches a value used by every
  iteration of a map into private memory once; staging of a work-group's data in local memory, copied by
  all its work-items together.

A map whose function only rearranges data is a view and is never lowered.
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Lambda, Var, fresh_name, substitute
from ..ir.types import ArrayType, ScalarType, VectorType, contains_tuple, innermost
from .rule import Rule, rule

_PARALLEL = (P.MapGlb, P.MapWrg, P.MapLcl)


def _plain_map(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Map and not is_view(e.fn.f.body)


def _dims_used(site, cls) -> set[int]:
    return {p.dim for p in site.enclosing if isinstance(p, cls)}


def map_to(kind: str, dim: int | None = None) -> Rule:
    """The rule lowering a computing ``map`` to ``kind`` (``mapGlb``, ``mapWrg``, ``mapLcl``, ``mapSeq``)."""
    name = kind if dim is None else f"{kind}{dim}"
    target = {"mapGlb": P.MapGlb, "mapWrg": P.MapWrg, "mapLcl": P.MapLcl, "mapSeq": P.MapSeq}[kind]

    def fn(e, site, ctx):
        if not _plain_map(e):
            return None
        seq_around = site.inside(P.MapSeq, P.ReduceLike, P.Map)
        if kind != "mapSeq" and not site.write_position:
            return None
        if kind == "mapGlb" and (seq_around or site.inside(P.MapWrg, P.MapLcl) or dim in _dims_used(site, P.MapGlb)):
            return None
        if kind == "mapWrg" and (seq_around or site.inside(P.MapGlb, P.MapLcl) or dim in _dims_used(site, P.MapWrg)):
            return None
        if kind == "mapLcl" and (
            seq_around or not site.inside(P.MapWrg) or site.inside(P.MapGlb) or dim in _dims_used(site, P.MapLcl)
        ):
            return None
        new = target(e.fn.f) if kind == "mapSeq" else target(dim, e.fn.f)
        return Call(new, e.args)

    eq = f"map(f, x) => {kind}({'' if dim is None else f'{dim}, '}f, x)"
    return Rule(name, eq, "lowering", fn)


MAP_GLB = [map_to("mapGlb", d) for d in range(3)]
MAP_WRG = [map_to("mapWrg", d) for d in range(3)]
MAP_LCL = [map_to("mapLcl", d) for d in range(3)]
MAP_SEQ = map_to("mapSeq")


@rule("reduceSeq", "reduce(f, init, x) => reduceSeq(f, init, x)", "lowering")
def reduce_seq(e, site, ctx):
    if isinstance(e, Call) and type(e.fn) is P.Reduce:
        return Call(P.ReduceSeq(e.fn.f), e.args)
    return None


UNROLL_LIMIT = 64  # longer unrolled loops make kernels that compilers take minutes on, or reject


def _limit_unroll(ctx, xs_type) -> None:
    import sympy

    n = xs_type.size
    ctx.require(sympy.Le(n, UNROLL_LIMIT), f"an unrolled loop has at most {UNROLL_LIMIT} iterations (this one: {n})")


@rule("unrollMapSeq", "mapSeq(f, x) => mapSeqUnroll(f, x)", "lowering")
def unroll_map(e, site, ctx):
    if isinstance(e, Call) and type(e.fn) is P.MapSeq and not e.fn.unroll:
        _limit_unroll(ctx, site.type_of(e.args[0]))
        return Call(P.MapSeq(e.fn.f, True), e.args)
    return None


@rule("unrollReduceSeq", "reduceSeq(f, init, x) => reduceSeqUnroll(f, init, x)", "lowering")
def unroll_reduce(e, site, ctx):
    if isinstance(e, Call) and type(e.fn) is P.ReduceSeq and not e.fn.unroll:
        _limit_unroll(ctx, site.type_of(e.args[1]))
        return Call(P.ReduceSeq(e.fn.f, True), e.args)
    return None


def copy_of(x, t, parallel_dim: int | None = None):
    """An expression copying ``x`` of type ``t`` element by element (``id`` at the leaves); with
    ``parallel_dim`` the elements of the flattened array are shared among a work-group's work-items."""
    if isinstance(t, (ScalarType, VectorType)):
        return dsl.id(x)
    if parallel_dim is None:
        return dsl.mapSeq(lambda y: copy_of(y, t.elem), x)
    dims = []
    tt = t
    while isinstance(tt, ArrayType):
        dims.append(tt.size)
        tt = tt.elem
    flat = x
    for _ in dims[1:]:
        flat = dsl.join(flat)
    out = dsl.mapLcl(parallel_dim, lambda y: dsl.id(y), flat)
    for d in reversed(dims[1:]):
        out = dsl.split(d, out)
    return out


@rule("privateAccumulator", "reduceSeq(f, init, x) => reduceSeq(f, toPrivate(id(init)), x)", "memory")
def private_accumulator(e, site, ctx):
    if not (isinstance(e, Call) and isinstance(e.fn, P.ReduceSeq)):
        return None
    init = e.args[0]
    if isinstance(init, Call) and isinstance(init.fn, P.ToMem):
        return None
    t = site.type_of(init)
    if contains_tuple(t):
        return None
    return Call(e.fn, (dsl.toPrivate(copy_of(init, t)), e.args[1]))


def _data_type(t) -> bool:
    return not contains_tuple(t) and isinstance(innermost(t), (ScalarType, VectorType))


@rule("letPrivate", "map(y -> f(x, y), ys) => let(xp -> map(y -> f(xp, y), ys), toPrivate(copy(x)))", "memory")
def let_private(e, site, ctx):
    """A value bound outside a map and read by every iteration is fetched into private memory once."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.MapLike) and not isinstance(e.fn, (P.MapGlb, P.MapWrg, P.MapLcl))):
        return None
    if is_view(e.fn.f.body):
        return None
    for name in site.bound:
        if name not in e.fn.f.free_vars:
            continue
        t = site.env[name]
        if not _data_type(t) or isinstance(t, (ScalarType, VectorType)):
            continue
        v = Var(fresh_name(name.split("_")[0] + "p"))
        lam = e.fn.f
        new_map = Call(type(e.fn)(**{**_fields(e.fn), "f": Lambda(lam.params, substitute(lam.body, {name: v}))}), e.args)
        return Call(P.Let(Lambda((v,), new_map)), (dsl.toPrivate(copy_of(Var(name), t)),))
    return None


@rule("localStage", "mapLcl(d, f, x) [uses t] => let(lt -> mapLcl(d, f, x)[t := lt], toLocal(copyLcl(t)))", "memory")
def local_stage(e, site, ctx):
    """Data a work-group's items all read is copied to local memory by the items together (then a
    barrier), so that each item then reads it from local memory."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.MapLcl)):
        return None
    if not site.inside(P.MapWrg) or site.inside(P.MapLcl):
        return None
    for name in site.bound:
        if name not in e.free_vars:
            continue
        t = site.env[name]
        if not isinstance(t, ArrayType) or not _data_type(t):
            continue
        lv = Var(fresh_name("loc"))
        body = substitute(e, {name: lv})
        return Call(P.Let(Lambda((lv,), body)), (dsl.toLocal(copy_of(Var(name), t, parallel_dim=0)),))
    return None


def _fields(prim) -> dict:
    import dataclasses

    return {f.name: getattr(prim, f.name) for f in dataclasses.fields(prim)}


LOWERING_RULES = MAP_GLB + MAP_WRG + MAP_LCL + [MAP_SEQ, reduce_seq, unroll_map, unroll_reduce]
MEMORY_RULES = [private_accumulator, let_private, local_stage]
