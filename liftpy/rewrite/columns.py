"""Column reductions: the reduction of each column of a row-major array, split over blocks of rows.

``map(c -> reduce(f, z, c), transpose(X))`` for ``X : [R][C]`` (a global average pool over ``[H][W][C]``,
``A^T y`` of ``A^T (A x)``) gives one work-item a column: ``C`` items, each reading ``R`` elements one row
apart.  Neighbouring items read neighbouring elements, so the reads are coalesced, but a GPU wants far more
items than ``C`` (1,024 channels keep 8 of an H200's 132 compute units busy).  ``splitColumns`` cuts the
rows into blocks of ``r``: a first kernel reduces each block's columns (``R / r * C`` items, neighbours
still on neighbouring columns), a second reduces the ``R / r`` partial results of each column.  Exact for
the reductions whose step is ``acc (+) h(x)`` with an associative and commutative ``(+)``
(``patterns.sum_form``): the partial results start from its identity, the second kernel from ``z``.
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.expr import Call, Lambda, Var, fresh_name, substitute
from .patterns import is_call, sum_form
from .positions import get_at
from .rule import rule


def _column_map(e):
    """``e`` as (wrappers, the map over transpose(X)), where the wrappers are the one-argument layout
    primitives around it (a ``join`` of the one-element results), outermost first; or None."""
    wrappers = []
    while isinstance(e, Call) and isinstance(e.fn, P.Primitive) and e.fn.kind == "layout" and len(e.args) == 1 \
            and not is_call(e, P.Transpose):
        wrappers.append(e.fn)
        e = e.args[0]
    if isinstance(e, Call) and type(e.fn) is P.Map and is_call(e.args[0], P.Transpose):
        return wrappers, e
    return None


def _reduction(body, inputs_free):
    """The column's reduction in the map's function ``body`` and the closed function after it (or None):
    ``reduce(..)`` or ``map(g, reduce(..))`` with ``g`` reading nothing but its element and ``inputs_free``."""
    if is_call(body, P.Reduce):
        return body, None
    if isinstance(body, Call) and type(body.fn) is P.Map and is_call(body.args[0], P.Reduce):
        post = body.fn.f
        if post.free_vars <= inputs_free:
            return body.args[0], post
    return None


@rule("splitColumns", "W(map(c -> G(reduce(f, z, zip(c, Y..))), transpose(X))) => let(p -> W(map(c -> G(reduce((+), z, c)), "
                      "transpose(map(join, p)))), map(b -> map(c -> reduce(f, id, zip(c, b._1..)), transpose(b._0)), "
                      "zip(split(r, X), split(r, Y)..)))", "algorithmic")
def split_columns(e, site, ctx):
    found = _column_map(e)
    if found is None:
        return None
    if site.path and _column_map(get_at(site.program.body, site.path[:-1])) is not None:
        return None  # the wrapper's position rewrites it, so that the let is where letGlobal finds it
    if any(isinstance(p, P.Primitive) and not isinstance(p, P.Let) for p in site.enclosing):
        return None  # inside a loop (a column map per row of A B): its partial results would need memory per row
    wrappers, m = found
    (c,) = m.fn.f.params
    x = m.args[0].args[0]
    inputs = frozenset(p.name for p in site.program.params)
    red = _reduction(m.fn.f.body, inputs)
    if red is None:
        return None
    red, post = red
    form = sum_form(red.fn.f)
    z, xs = red.args
    if form is None or c.name in z.free_vars:
        return None
    if isinstance(xs, Var) and xs.name == c.name:
        others, at = [], 0
    elif is_call(xs, P.Zip):
        at = [i for i, a in enumerate(xs.args) if isinstance(a, Var) and a.name == c.name]
        if len(at) != 1 or any(c.name in a.free_vars for i, a in enumerate(xs.args) if i != at[0]):
            return None
        at = at[0]
        others = [a for i, a in enumerate(xs.args) if i != at]
    else:
        return None
    if c.name in red.fn.f.free_vars:
        return None
    r = ctx.fresh("r")
    identity = form.identity(site.type_of(z))
    blk, col = Var(fresh_name("rows")), Var(fresh_name("col"))
    if others:
        blocks = dsl.zip(dsl.split(r, x), *[dsl.split(r, y) for y in others])
        rows = dsl.get(blk, 0)
        parts_in = [dsl.get(blk, j + 1) for j in range(len(others))]
        column = dsl.zip(*(parts_in[:at] + [col] + parts_in[at:]))
    else:
        blocks, rows, column = dsl.split(r, x), blk, col
    partial = dsl.map(Lambda((blk,), dsl.map(Lambda((col,), Call(red.fn, (identity, column))), dsl.transpose(rows))), blocks)
    parts, whole = Var(fresh_name("parts")), Var(fresh_name("col"))
    total = Call(P.Reduce(dsl.as_lambda(lambda a, s: form.op(a, s), 2, "acc")), (z, whole))
    if post is not None:
        total = Call(P.Map(post), (total,))
    result = dsl.map(Lambda((whole,), total), dsl.transpose(dsl.map(dsl.join, parts)))
    for w in reversed(wrappers):
        result = Call(w, (result,))
    return dsl.let(Lambda((parts,), result), partial)


COLUMN_RULES = [split_columns]
