"""Lowering rules: from algorithmic primitives to OpenCL-level ones, and where values live.

- work mapping: ``map`` becomes ``mapGlb(d)``, ``mapWrg(d)``, ``mapLcl(d)`` or ``mapSeq``, respecting
  OpenCL's nesting (a ``mapLcl`` inside a ``mapWrg``, no dimension used twice on one path, no parallel map
  inside a sequential one, a reduction's initial value spread over work-items only as its step spreads
  the accumulator: ``accumulators.spread_mismatch``); ``reduce`` becomes ``reduceSeq``;
- unrolling of sequential loops;
- memory: the accumulator of a reduction in private memory; ``let`` that fetches a value used by every
  iteration of a map into private memory once; staging of a work-group's data in local memory, copied by
  all its work-items together, and the tiles staged at every step of a loop double-buffered.

A map whose function only rearranges data is a view and is never lowered.
"""

from __future__ import annotations

import dataclasses

import sympy

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Lambda, Var, fresh_name, primitive_functions, replace_functions, subterms, substitute
from ..ir.levels import PARALLEL_LEVELS, Level
from ..ir.typecheck import type_of
from ..ir.types import ArrayType, ScalarType, TupleType, VectorType, memory_element
from .accumulators import init_spread_ok
from .patterns import sum_form
from .rule import Requirement, Rule, rule


def _plain_map(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Map and not is_view(e.fn.f.body)


def _levels_around(site) -> dict:
    """The dimensions each parallel level already uses on the path to the position."""
    out: dict = {}
    for p in site.enclosing:
        if P.is_parallel_map(p):
            out.setdefault(p.level, set()).add(p.dim)
    return out


def _sequential_in_item(site) -> bool:
    """A sequential loop run by one work-item encloses the position (a ``mapSeq`` or reduction inside a
    ``mapLcl``).  Sequential loops at work-group level (the k loop of a tiled matrix product, run by all
    the items of the group in step) may hold ``mapLcl`` nests."""
    in_item = False
    for p in site.enclosing:
        if P.is_parallel_map(p):
            in_item = p.level.inner_context == "item"
        elif in_item and isinstance(p, (P.MapSeq, P.ReduceLike)):
            return True
    return False


def map_to(level: Level, dim: int | None = None) -> Rule:
    """The rule lowering a computing ``map`` to the map of ``level`` (in dimension ``dim`` if parallel).
    Where a parallel map may go is the level's ``nesting_error``; the rest is what lowering adds: a
    parallel map computes a value that is written out, not one read inside a sequential computation,
    except that a level inside a work-group (``mapLcl``) may sit in sequential loops the whole group runs,
    and in a reduction's initial value only as the reduction's step spreads the accumulator."""
    kind = level.primitive_name
    name = kind if dim is None else f"{kind}{dim}"
    target = P.map_class(level)
    outermost = level.parallel and level.rank == 0

    def fn(e, site, ctx):
        if not _plain_map(e):
            return None
        if not level.parallel:
            return Call(target(e.fn.f), e.args)
        # the cheap tests on the enclosing primitives first, the typing of write_position last
        if level.nesting_error(dim, _levels_around(site)) is not None:
            return None
        if outermost and site.inside(P.MapSeq, P.ReduceLike, P.Map):
            return None
        if not outermost and (_sequential_in_item(site) or site.inside(P.Map) or not init_spread_ok(site, dim)):
            return None
        return Call(target(dim, e.fn.f), e.args) if site.write_position else None

    eq = f"map(f, x) => {kind}({'' if dim is None else f'{dim}, '}f, x)"
    return Rule(name, eq, "lowering", fn)


# The lowering rules of every level, one per dimension for the parallel ones.
MAP_TO = {level: [map_to(level, d) for d in range(3)] if level.parallel else map_to(level) for level in Level}
MAP_GLB, MAP_WRG, MAP_LCL, MAP_SEQ = MAP_TO[Level.GLB], MAP_TO[Level.WRG], MAP_TO[Level.LCL], MAP_TO[Level.SEQ]


@rule("reduceSeq", "reduce(f, init, x) => reduceSeq(f, init, x)", "lowering")
def reduce_seq(e, site, ctx):
    if isinstance(e, Call) and type(e.fn) is P.Reduce:
        return Call(P.ReduceSeq(e.fn.f), e.args)
    return None


UNROLL_LIMIT = 64  # longer unrolled loops make kernels that compilers take minutes on, or reject


def at_most(n, limit: int):
    """``n <= limit``, with ``n``'s denominator multiplied out where it is a product of parameters: sympy
    1.14 decides ``1024/(L0*v0) <= 64`` False outright (a number over a product of two positive symbols,
    once the sizes are substituted), which emptied the space of every variant whose unrolled loop runs
    over a length divided by two parameters.  Other forms are left as they were (same spaces, same
    samples)."""
    n = sympy.sympify(n)
    num, den = sympy.fraction(sympy.together(n))
    return sympy.Le(num, limit * den) if len(den.free_symbols) > 1 else sympy.Le(n, limit)


def _limit_unroll(ctx, xs_type) -> None:
    n = xs_type.size
    ctx.require(at_most(n, UNROLL_LIMIT), f"an unrolled loop has at most {UNROLL_LIMIT} iterations (this one: {n})")


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
    if isinstance(t, (ScalarType, VectorType, TupleType)):
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
    if memory_element(t) is None:
        return None
    if not is_view(init):
        # A computed initial value (distributed over work-items by mapLcl, say, as the step distributes the
        # accumulator: map_to's _init_spread_ok) is written into the accumulator directly; copying it
        # again would need it in memory first.
        return Call(e.fn, (dsl.toPrivate(init), e.args[1]))
    return Call(e.fn, (dsl.toPrivate(copy_of(init, t)), e.args[1]))


@rule(
    "reduceLcl",
    "reduce((+), init, xs) at work-group level, xs computed by the work-items => mapLcl(d, id, reduceLcl(d, (+), init, toLocal(xs)))",
    "lowering",
)
def reduce_lcl(e, site, ctx):
    """A reduction a work-group computes over values its work-items produced (the partial results of a
    chunk each) is done by the items together, as a tree in local memory, rather than by every item
    alone; one item then writes the result.  The last step of Lift's parallel reduction; valid for an
    associative and commutative ``(+)`` (a sum, up to rounding; a maximum or minimum exactly)."""
    if not (isinstance(e, Call) and type(e.fn) in (P.Reduce, P.ReduceSeq)) or getattr(e.fn, "unroll", False):
        return None
    if not site.inside(P.MapWrg) or site.inside(P.MapLcl, P.MapGlb, P.MapSeq, P.ReduceLike):
        return None
    lam = e.fn.f
    init, xs = e.args
    body = lam.body
    if sum_form(lam) is None or len(body.args) != 2 or body.args[1] != lam.params[1]:
        return None  # not a plain acc (+) x: the elements could not be combined with each other
    if isinstance(init, Call) and isinstance(init.fn, P.ToMem):
        return None
    maps = [n.fn for n in subterms(xs) if isinstance(n, Call) and (isinstance(n.fn, P.MapLcl) or _plain_map(n))]
    if not maps:
        return None  # computed by every item alone: nothing to share
    t = site.type_of(init)
    if not isinstance(t, (ScalarType, VectorType, TupleType)) or site.type_of(xs).elem != t:
        return None
    d = getattr(maps[0], "dim", 0)  # a map not lowered yet becomes mapLcl(0) (see tree_reduction)
    tree = Call(P.ReduceLcl(d, lam), (init, dsl.toLocal(xs)))
    return dsl.mapLcl(d, lambda v: dsl.id(v), tree)


def _data_type(t) -> bool:
    """Values memory rules may copy: arrays of scalars, vectors or tuples of them (structs)."""
    return memory_element(t) is not None


@rule("letPrivate", "map(y -> f(x, y), ys) => let(xp -> map(y -> f(xp, y), ys), toPrivate(copy(x)))", "memory")
def let_private(e, site, ctx):
    """A value bound outside a map and read by every iteration is fetched into private memory once."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.MapLike) and not P.is_parallel_map(e.fn)):
        return None
    if is_view(e.fn.f.body):
        return None
    for name in site.bound:
        if name not in e.fn.f.free_vars:
            continue
        t = site.env[name]
        if not _data_type(t) or isinstance(t, (ScalarType, VectorType, TupleType)):
            continue
        v = Var(fresh_name(name.split("_")[0] + "p"))
        lam = e.fn.f
        new_map = Call(type(e.fn)(**{**_fields(e.fn), "f": Lambda(lam.params, substitute(lam.body, {name: v}))}), e.args)
        return Call(P.Let(Lambda((v,), new_map)), (dsl.toPrivate(copy_of(Var(name), t)),))
    return None


@rule("localStage", "mapLcl(d, f, x) [uses t] => let(lt -> mapLcl(d, f, x)[t := lt], toLocal(copyLcl(t)))", "memory")
def local_stage(e, site, ctx):
    """Data a work-group's items all read is copied to local memory by the items together (then a
    barrier), so that each item then reads it from local memory: data the mapped function reads (a tile
    every item folds over), or a view the map deals out whose elements overlap (a stencil's windows).
    Not an array the map merely deals out (``mapLcl(f, xs)``, or over ``zip(xs, ...)``), nor one read
    in a computation before the map: each item reads its own elements of that, and a copy gains nothing."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.MapLcl)):
        return None
    if not site.inside(P.MapWrg) or site.inside(P.MapLcl):
        return None
    for name in site.bound:
        if not _shared(e, name):
            continue
        t = site.env[name]
        if not isinstance(t, ArrayType) or not _data_type(t):
            continue
        lv = Var(fresh_name("loc"))
        body = substitute(e, {name: lv})
        return Call(P.Let(Lambda((lv,), body)), (dsl.toLocal(copy_of(Var(name), t, parallel_dim=0)),))
    return None


def _shared(e: Call, name: str) -> bool:
    if name in e.fn.f.free_vars:
        return True
    xs = e.args[0]
    if name not in xs.free_vars or not is_view(xs):
        return False
    parts = xs.args if isinstance(xs, Call) and isinstance(xs.fn, P.Zip) else (xs,)
    return any(name in a.free_vars and not (isinstance(a, Var) and a.name == name) for a in parts)


def _replace_components(node, name: str, uses: dict):
    """``node`` with every ``get(name, i)`` for ``i`` in ``uses`` replaced by ``uses[i]``; None when
    ``name`` is used otherwise (whole, or a component not in ``uses``)."""
    if name not in node.free_vars:
        return node
    if isinstance(node, Var):
        return None
    if isinstance(node, Lambda):
        if name in {p.name for p in node.params}:
            return node
        body = _replace_components(node.body, name, uses)
        return None if body is None else Lambda(node.params, body)
    if isinstance(node, Call):
        if isinstance(node.fn, P.Get) and node.args == (Var(name),):
            return uses.get(node.fn.index)
        if isinstance(node.fn, Lambda):
            fn = _replace_components(node.fn, name, uses)
        elif isinstance(node.fn, P.Primitive):
            lams = {}
            for field, lam in primitive_functions(node.fn):
                new = _replace_components(lam, name, uses)
                if new is None:
                    return None
                lams[field] = new
            fn = replace_functions(node.fn, lams) if lams else node.fn
        else:
            fn = node.fn
        if fn is None:
            return None
        args = []
        for a in node.args:
            new = _replace_components(a, name, uses)
            if new is None:
                return None
            args.append(new)
        return Call(fn, tuple(args))
    return node


def _stage_tiles(transposed: bool):
    def fn(e, site, ctx):
        """The arrays a work-group reads in each step of a reduction it computes together (the k-chunks
        of the tiles of a matrix product) are copied to local memory at the start of the step, by all
        its work-items; with ``transposed`` two-dimensional chunks are stored transposed (k-major), so
        that a work-item's block of rows for one k is contiguous."""
        if not (isinstance(e, Call) and isinstance(e.fn, P.ReduceSeq)):
            return None
        if not site.inside(P.MapWrg) or site.inside(P.MapLcl, P.MapGlb, P.MapSeq):
            return None
        lam = e.fn.f
        body = lam.body
        if not any(isinstance(n, Call) and isinstance(n.fn, P.MapLcl) for n in subterms(body)):
            return None
        if any(isinstance(n, Call) and isinstance(n.fn, P.ToLocal) for n in subterms(body)):
            return None  # staged already
        _, x = lam.params
        xt = site.type_of(e.args[1]).elem
        if not isinstance(xt, TupleType):
            return None
        uses, staged = {}, []
        for i, ct in enumerate(xt.elems):
            if not isinstance(ct, ArrayType) or not _data_type(ct):
                continue
            lv = Var(fresh_name("tile"))
            two_d = isinstance(ct.elem, ArrayType)
            if transposed and two_d:
                uses[i] = dsl.transpose(lv)
                staged.append((lv, dsl.toLocal(dsl.transpose(dsl.get(x, i)))))
            else:
                uses[i] = lv
                staged.append((lv, dsl.toLocal(dsl.get(x, i))))
        if not staged or (transposed and not any(isinstance(ct, ArrayType) and isinstance(ct.elem, ArrayType) for ct in xt.elems)):
            return None
        new_body = _replace_components(body, x.name, uses)
        if new_body is None:
            return None
        for lv, value in reversed(staged):
            new_body = Call(P.Let(Lambda((lv,), new_body)), (value,))
        return Call(P.ReduceSeq(Lambda(lam.params, new_body), e.fn.unroll), e.args)

    return fn


stage_tiles = rule(
    "stageTiles",
    "reduceSeq((acc, x) -> f(acc, x._0, x._1), init, xs) => reduceSeq((acc, x) -> let(a -> let(b -> f(acc, a, b), toLocal(x._1)), toLocal(x._0)), init, xs)",
    "memory",
)(_stage_tiles(False))
stage_tiles_t = rule(
    "stageTilesT",
    "reduceSeq((acc, x) -> f(acc, x._0, x._1), init, xs) => reduceSeq((acc, x) -> let(a -> let(b -> f(acc, transpose(a), transpose(b)), toLocal(transpose(x._1))), toLocal(transpose(x._0))), init, xs)",
    "memory",
)(_stage_tiles(True))


@rule("doubleBuffer", "reduceSeq((acc, x) -> let(a -> f, toLocal(t)), init, xs) => reduceSeq((acc, x) -> let(a -> f, toLocalDouble(t)), init, xs)", "memory")
def double_buffer(e, site, ctx):
    """The tiles a work-group stages at every step of a sequential reduction get two halves in local
    memory, used alternately (``toLocalDouble``): the next step's copy may then start while slow
    work-items still read this step's tiles, and the loop needs one barrier per step instead of two, for
    twice the local memory (which the constraint inference sees through the allocation)."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.ReduceSeq)):
        return None
    lam = e.fn.f

    def doubled(body):
        if not (isinstance(body, Call) and isinstance(body.fn, P.Let) and len(body.args) == 1):
            return None
        (value,) = body.args
        if not (isinstance(value, Call) and type(value.fn) is P.ToLocal and not value.fn.double):
            return None
        inner = doubled(body.fn.f.body)
        f = body.fn.f if inner is None else Lambda(body.fn.f.params, inner)
        return Call(P.Let(f), (Call(P.ToLocal(True), value.args),))

    new = doubled(lam.body)
    if new is None:
        return None
    return Call(P.ReduceSeq(Lambda(lam.params, new), e.fn.unroll), e.args)


def _in_item(site) -> bool:
    """The position is executed by single work-items (inside a map whose level runs its body per item)."""
    return any(P.is_parallel_map(p) and p.level.inner_context == "item" for p in site.enclosing)


@rule("unrollInItem", "mapSeq(f, x) | reduceSeq(f, init, x) inside a work-item => the unrolled loop", "lowering")
def unroll_in_item(e, site, ctx):
    """Loops a work-item runs over its register block (and the k steps of a chunk) are unrolled, so that
    the block's private arrays are indexed by constants and live in registers."""
    if not _in_item(site) or not isinstance(e, Call):
        return None
    if isinstance(e.fn, P.MapSeq) and not e.fn.unroll:
        _limit_unroll(ctx, site.type_of(e.args[0]))
        return Call(P.MapSeq(e.fn.f, True), e.args)
    if isinstance(e.fn, P.ReduceSeq) and not e.fn.unroll:
        _limit_unroll(ctx, site.type_of(e.args[1]))
        return Call(P.ReduceSeq(e.fn.f, True), e.args)
    return None


UNROLLED_BODY_LIMIT = 2048  # statements an unrolled nest may expand to: beyond, compile times explode


def unrolled_nests(program) -> list:
    """(product of the lengths of nested unrolled loops, description) for every unrolled nest of a
    program: what ``unrollInItem`` must bound beyond each loop's own length."""
    out = []
    env0 = {p.name: t for p, t in zip(program.params, program.param_types)}

    def walk(e, env, product):
        if not isinstance(e, Call):
            return
        fn = e.fn
        for a in e.args:
            walk(a, env, product)
        if isinstance(fn, Lambda):
            inner = dict(env)
            for p, a in zip(fn.params, e.args):
                inner[p.name] = type_of(a, {n: env[n] for n in a.free_vars if n in env})
            walk(fn.body, inner, product)
            return
        if not isinstance(fn, P.Primitive):
            return
        arg_types = [type_of(a, {n: env[n] for n in a.free_vars if n in env}) for a in e.args]
        here = product
        if getattr(fn, "unroll", False):
            xs = arg_types[1] if isinstance(fn, P.ReduceLike) else arg_types[0]
            here = product * xs.size
            out.append((here, f"{fn.text_name} nest"))
        for name, lam in primitive_functions(fn):
            inner = dict(env)
            for p, t in zip(lam.params, fn.fun_param_types(name, arg_types)):
                inner[p.name] = t
            walk(lam.body, inner, here)

    walk(program.body, env0, sympy.Integer(1))
    return out


def limit_unrolled_nests(v):
    """The requirement that every unrolled nest of ``v`` expands to at most ``UNROLLED_BODY_LIMIT``
    copies of its body (a 64 x 64 x 64 register block would be a quarter of a million statements)."""
    reqs = []
    seen = set()
    for product, what in unrolled_nests(v.program):
        if product.is_Integer and int(product) <= UNROLLED_BODY_LIMIT or product in seen:
            continue
        seen.add(product)
        reqs.append(Requirement(at_most(product, UNROLLED_BODY_LIMIT), f"an unrolled {what} expands to at most {UNROLLED_BODY_LIMIT} bodies (this one: {product})", "unrollInItem"))
    return [dataclasses.replace(v, requirements=v.requirements + tuple(reqs))] if reqs else [v]


def _fields(prim) -> dict:
    return {f.name: getattr(prim, f.name) for f in dataclasses.fields(prim)}


LOWERING_RULES = [r for level in PARALLEL_LEVELS for r in MAP_TO[level]] + [MAP_SEQ, reduce_seq, reduce_lcl, unroll_map, unroll_reduce, unroll_in_item]
MEMORY_RULES = [private_accumulator, let_private, local_stage, stage_tiles, stage_tiles_t, double_buffer]
