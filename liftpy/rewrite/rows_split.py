"""Long rows split across work-groups (split-K for a matrix-vector product).

A map over few long rows, each reduced (a matrix-vector product of 1,000 rows of 25,088, a fully-connected
layer at batch 1, the sums of four rows of a million), gives a work-group per row too few groups to fill a
GPU.  ``splitRows`` cuts every row's reduction into chunks of ``ks`` elements and makes two kernels of the
program: the first computes each chunk's partial result into a buffer ``[..][M][n/ks]`` (a map over the
chunks nested in the maps over the rows: every chunk a row of its own, which ``dealRows`` then shares
among a work-group's items, the chunks one more dimension of work-groups), the second is the program as
written with each reduction reading its row's partial results instead of the row (the initial value, a
bias, and a function after the reduction, a ReLU, stay there, applied once).

    map(a -> [map(g,] reduce(f, z(a), A(a))[)], xs)
      => let(P -> map(q -> [map(g,] reduce(+, z(q._1), q._0)[)], zip(P, xs)),
             toGlobal(map(a -> join(map(c -> reduce(f, id, c), split(ks, A(a)))), xs)))

The sum is regrouped (each row's chunks summed apart, then together): exact for a maximum, equal up to
rounding for a sum.  ``lower_other_kernels`` maps the kernels that are not the rows' (the second) over
global work-items.
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Lambda, Var, fresh_name, rename_bound, substitute
from ..ir.kernels import is_boundary
from ..ir.typecheck import type_of
from ..ir.types import ArrayType, ScalarType
from .lowering import MAP_GLB
from .patterns import sum_form
from .regions import kernel_depth, kernel_regions, over_reduction, within
from .rule import rule
from .strategy import once

MAX_LEVELS = 2  # maps over rows (a batch, the rows): with the chunks, OpenCL's three dimensions of groups


def _layout(e) -> bool:
    return isinstance(e, Call) and len(e.args) == 1 and (
        (isinstance(e.fn, P.Primitive) and e.fn.kind == "layout") or (type(e.fn) is P.Map and is_view(e.fn.f.body)))


def _post(e) -> bool:
    """``map(g, reduce(...))`` with ``g`` closed: a function of a reduction's one result (a ReLU)."""
    return (isinstance(e, Call) and type(e.fn) is P.Map and not e.fn.f.free_vars and isinstance(e.args[0], Call)
            and type(e.args[0].fn) is P.Reduce)


def _level(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Map and not is_view(e.fn.f.body) and not _post(e)


def _spine(e):
    """(the maps over rows from the outside in, the reduction) of a program whose result is a nest of maps
    (layouts between them allowed) around one reduction per element, or None."""
    levels = []
    while True:
        if _layout(e):
            e = e.args[0]
        elif _level(e):
            levels.append(e)
            e = e.fn.f.body
        else:
            break
    if _post(e):
        e = e.args[0]
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce and sum_form(e.fn.f) is not None):
        return None
    return levels, e


def _partials(levels, red, ks, t):
    """The first kernel: the maps over rows, without their layouts, around each row's chunks' results
    (each chunk's reduction starts from the identity of the combining operation, for the scalar type ``t``)."""
    f = red.fn.f
    init, xs = red.args

    def nest(i):
        if i == len(levels):
            form = sum_form(f)
            return dsl.join(dsl.map(lambda c: Call(P.Reduce(rename_bound(f)), (form.identity(t), c)), dsl.split(ks, xs)))
        m = levels[i]
        return Call(P.Map(Lambda(m.fn.f.params, nest(i + 1))), m.args)

    return nest(0)


def _reading(e, parts):
    """The program as written, each map over rows zipped with its level of the partial results and the
    reduction reading its row's partials."""
    if _layout(e):
        return Call(e.fn, (_reading(e.args[0], parts),))
    if _level(e):
        (a,) = e.fn.f.params
        q = Var(fresh_name("q"))
        body = substitute(e.fn.f.body, {a.name: dsl.get(q, 1)})
        return dsl.map(Lambda((q,), _reading(body, dsl.get(q, 0))), dsl.zip(parts, e.args[0]))
    if _post(e):
        return Call(e.fn, (_reading(e.args[0], parts),))
    form = sum_form(e.fn.f)
    return Call(P.Reduce(dsl.as_lambda(lambda acc, s: form.op(acc, s), 2, "acc")), (e.args[0], parts))


@rule(
    "splitRows",
    "map(a -> [map(g,] reduce(f, z(a), A(a))[)], xs) => let(P -> map(q -> [map(g,] reduce(+, z(q._1), q._0)[)], "
    "zip(P, xs)), toGlobal(map(a -> join(map(c -> reduce(f, id, c), split(ks, A(a)))), xs)))",
    "memory",
)
def split_rows(e, site, ctx):
    """See the module's docstring.  Applies to a whole program (one kernel) only."""
    if site.path or is_boundary(e):
        return None
    found = _spine(e)
    if found is None:
        return None
    levels, red = found
    if not 1 <= len(levels) <= MAX_LEVELS:
        return None
    env = dict(site.env)
    for m in levels:  # the reduction is typed where it is, inside the maps
        (a,) = m.fn.f.params
        xt = type_of(m.args[0], {k: v for k, v in env.items() if k in m.args[0].free_vars})
        if not isinstance(xt, ArrayType):
            return None
        env[a.name] = xt.elem
    t = type_of(red.args[0], {k: v for k, v in env.items() if k in red.args[0].free_vars})
    if not isinstance(t, ScalarType):
        return None
    ks = ctx.fresh("ks")
    first = _partials(levels, red, ks, t)
    parts = Var(fresh_name("parts"))
    return Call(P.Let(Lambda((parts,), _reading(e, parts))), (dsl.toGlobal(first),))


def lower_other_kernels(v, rows_path):
    """``v`` with the computing maps of every kernel but the one holding ``rows_path`` over global
    work-items (the outer three, as the global mapping policy does; a function of a reduction's result
    stays sequential), or None when one cannot be; the rest is made sequential with the rows' kernel."""
    regions = kernel_regions(v.program)
    if len(regions) == 1:
        return v
    for prefix in regions:
        region = within(prefix, regions)
        if region(rows_path, None):
            continue
        for d in reversed(range(min(kernel_depth(v.program, prefix), 3))):
            nxt = once(MAP_GLB[d], where=lambda p, e, region=region: region(p, e) and not over_reduction(e))(v)
            if not nxt:
                return None
            v = nxt[0]
    return v
