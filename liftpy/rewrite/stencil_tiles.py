"""Stencils as users write them, tiled: a 2D map over a zip of a stencil's windows and other arrays.

``tile2D`` (``algorithmic.py``) tiles ``map2D(f, slide2D(n, s, x))``, the shape the library's stencils
have.  A stencil that reads more than its windows (a Jacobi step keeping its border reads a mask and the
old value beside the windows) is written as a 2D map over a zip of rows,

    map(t -> map(p -> f(p), zip(V0(t._0), .., Vm(t._m))), zip(X0, .., Xm))

with each ``Vi`` a view (``transpose`` where the normal form's ``zipViewFusion`` moved slide2D's
``map(transpose)`` into the reader, nothing otherwise).  ``tileZip2D`` tiles it as ``tile2D`` tiles a
stencil (Lift CGO'18, overlapped tiling): the windows' input is cut into tiles that overlap by the
windows' overlap, every other operand into the aligned tiles of the output (``w x w``, no overlap), the
tiles are zipped, each tile computes its block of the output with the original function, and the blocks
are put back by views (``untile2D``).  Any number of operands, any function: nothing here knows Jacobi.

The tile parameter is the output tile's side ``w`` (the work-group's block under ``mapWrg``/``mapLcl``),
not the input tile's ``(w - 1) s + n``: several window operands of different sizes share it.

``localStageZipped`` stages, per work-group, the component of the zipped tile that the group reads
through overlapping windows (the tile with its halo) in local memory, as ``localStage`` does for a tile
that is not zipped; the aligned operands each item reads once stay where they are.

``localStageRows`` is ``localStage`` for ``tile2D``'s tiles over a 2D work-group, with the copy spread over
both dimensions of the group (``_group_copy``), an additional choice.

``tile_sweeps`` is the exploration's macro: every sweep of a program tiled (a time step of two sweeps is
two stencils; tiling one of them only would leave the other's kernel as it was).
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Lambda, Var, fresh_name, rename_bound, substitute
from ..ir.types import ArrayType, TupleType
from .algorithmic import untile2D
from .lowering import _data_type, copy_of
from .normal import component_uses, replace_components
from .patterns import is_call, match_slide2D
from .positions import positions
from .rule import rule, try_rule
from .strategy import extend


def _is_map(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Map


def _operands(e):
    """``[(A_i, slide_i)]`` for ``map(t -> map(p -> f, zip(V_i(t._j_i))), zip(X_j))``: the 2D array each
    component of the inner zip is (``map(x -> V_i(x), X_j)``), with its slide2D match or None; and the
    inner map's function.  None when ``e`` is not that shape."""
    if not (_is_map(e) and is_call(e.args[0], P.Zip)):
        return None
    (t,) = e.fn.f.params
    inner = e.fn.f.body
    if not (_is_map(inner) and is_call(inner.args[0], P.Zip) and len(inner.args[0].args) >= 2):
        return None
    if t.name in inner.fn.f.free_vars:
        return None  # the row read by each element beside its own components: not an elementwise 2D map
    xs = e.args[0].args
    out = []
    for c in inner.args[0].args:
        uses = component_uses(c, t.name)
        if uses is None or len(uses) != 1 or not is_view(c):
            return None
        (use,) = uses
        if len(use) != 1:
            return None
        j = use[0]
        x = Var(fresh_name("x"))
        v = replace_components(c, t.name, {(j,): x})
        a = xs[j] if isinstance(v, Var) and v.name == x.name else Call(P.Map(Lambda((x,), v)), (xs[j],))
        out.append((a, match_slide2D(a)))
    return out, inner.fn.f


@rule(
    "tileZip2D",
    "map2D(f, zip2D(slide2D(n, s, x), y..)) => untile2D(map2D(q -> map2D(f, zip2D(slideStrict2D(n, s, q._0), q._1..)), "
    "zip2D(slideStrict2D((w - 1) s + n, w s, x), slideStrict2D(w, w, y)..)))",
)
def tile_zip2D(e, site, ctx):
    """A 2D map over a zip of rows, one or more of them a stencil's windows (``slide2D``) and the others
    arrays of the output's shape, in tiles of ``w x w`` outputs: the windows' input in tiles overlapping by
    ``n - s`` (each holds whole windows), the other arrays in the aligned ``w x w`` tiles, zipped tile by
    tile; ``untile2D`` puts the blocks back.  Each output is computed once, from the same operands."""
    m = _operands(e)
    if m is None:
        return None
    ops, f = m
    slides = [sl for _, sl in ops if sl is not None]
    if not slides:
        return None  # an elementwise map: nothing overlaps, nothing to tile for
    square = all(sl.size1 == sl.size2 and sl.step1 == sl.step2 for sl in slides)
    w1 = ctx.fresh("t")
    w2 = w1 if square else ctx.fresh("t")
    tiles = []
    for a, sl in ops:
        if sl is None:
            tiles.append(dsl.slide2D((w1, w2), (w1, w2), a, strict=True))
        else:
            size = ((w1 - 1) * sl.step1 + sl.size1, (w2 - 1) * sl.step2 + sl.size2)
            tiles.append(dsl.slide2D(size, (w1 * sl.step1, w2 * sl.step2), sl.xs, strict=True))
    k = len(ops)

    def per_tile(q):
        parts = [dsl.slide2D((sl.size1, sl.size2), (sl.step1, sl.step2), dsl.get(q, i), strict=True) if sl is not None
                 else dsl.get(q, i) for i, (_, sl) in enumerate(ops)]
        g = rename_bound(f)
        return dsl.map(lambda r: Call(P.Map(g), (dsl.zip(*[dsl.get(r, i) for i in range(k)]),)), dsl.zip(*parts))

    grid = dsl.map(lambda tr: dsl.map(per_tile, dsl.zip(*[dsl.get(tr, i) for i in range(k)])), dsl.zip(*tiles))
    return untile2D(grid)


def _windowed(e: Call, name: str) -> set[int]:
    """The components of the tuple ``name`` that the work-group map ``e`` deals out through a slide (its
    items' windows overlap, so each element is read by several items)."""
    xs = e.args[0]
    if name not in xs.free_vars or not is_view(xs):
        return set()
    out: set[int] = set()
    for a in (xs.args if is_call(xs, P.Zip) else (xs,)):
        nodes = [n for _, n in positions(a)]
        if any(is_call(n, P.Slide) for n in nodes):
            out |= {n.fn.index for n in nodes if is_call(n, P.Get) and isinstance(n.args[0], Var) and n.args[0].name == name}
    return out


def _group_copy(x, t: ArrayType, dim: int):
    """A copy of ``x`` by a work-group whose items the map at ``dim`` and those inside it deal out: a 2D
    tile over a 2D group is copied row by row over ``mapLcl(1)`` and along each row over ``mapLcl(0)``, so
    each item copies about one element (the flat copy over ``mapLcl(0)`` alone has every row of items
    copy the whole tile, and sizes dimension 0 of the group by the tile's area, not its width)."""
    if dim >= 1 and isinstance(t.elem, ArrayType) and not isinstance(t.elem.elem, ArrayType):
        return dsl.mapLcl(1, lambda r: dsl.mapLcl(0, lambda y: dsl.id(y), r), x)
    return copy_of(x, t, parallel_dim=0)


@rule("localStageZipped", "mapLcl(d, f, zip(W(q._i), q._j..)) => let(l -> mapLcl(d, f, zip(W(l), q._j..)), toLocal(copyLcl(q._i)))",
      "memory")
def local_stage_zipped(e, site, ctx):
    """``localStage`` for a tile zipped with others (``tileZip2D``): the group's component read through
    overlapping windows is copied to local memory by the items together, once, and the windows read from
    there; the components each item reads once are left in global memory (a copy would only add one)."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.MapLcl)):
        return None
    if not site.inside(P.MapWrg) or site.inside(P.MapLcl):
        return None
    for name in site.bound:
        t = site.env[name]
        if not isinstance(t, TupleType):
            continue
        if component_uses(e, name) is None:
            continue  # the tuple passed whole: no component to replace
        for i in sorted(_windowed(e, name)):
            ct = t.elems[i]
            if not isinstance(ct, ArrayType) or not _data_type(ct):
                continue
            lv = Var(fresh_name("loc"))
            body = replace_components(e, name, {(i,): lv})
            return Call(P.Let(Lambda((lv,), body)), (dsl.toLocal(_group_copy(dsl.get(Var(name), i), ct, e.fn.dim)),))
    return None


def _through_slide(xs, name: str) -> bool:
    """``name`` read, in the view ``xs`` a map deals out, from under a slide (overlapping windows)."""
    return is_view(xs) and any(is_call(n, P.Slide) and name in n.free_vars for _, n in positions(xs))


@rule("localStageRows", "mapLcl(1, f, W(tile)) => let(l -> mapLcl(1, f, W(l)), toLocal(mapLcl(1, r -> mapLcl(0, id, r), tile)))",
      "memory")
def local_stage_rows(e, site, ctx):
    """``localStage`` of a stencil's 2D tile (``tile2D``'s) for a 2D work-group: the same staging, the
    tile copied row by row by the group's rows of items (``_group_copy``) rather than by each row of items
    whole.  An additional choice beside ``localStage``, whose variants stay as they were."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.MapLcl) and e.fn.dim >= 1):
        return None
    if not site.inside(P.MapWrg) or site.inside(P.MapLcl):
        return None
    for name in site.bound:
        t = site.env[name]
        if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and _data_type(t)):
            continue
        if isinstance(t.elem.elem, ArrayType) or not _through_slide(e.args[0], name):
            continue
        lv = Var(fresh_name("loc"))
        return Call(P.Let(Lambda((lv,), substitute(e, {name: lv}))), (dsl.toLocal(_group_copy(Var(name), t, e.fn.dim)),))
    return None


def tile_sweeps(rule_=tile_zip2D):
    """Every position where ``rule_`` applies in the program as it is, tiled (one variant; none when it
    applies nowhere).  The positions are rewritten last first: a rewrite changes only the positions below
    its own, so the earlier ones (an enclosing sweep, a sweep before it) are still where they were."""
    def go(v):
        found = []
        for path, e in positions(v.program.body):
            if rule_ is tile_zip2D and _operands(e) is None:
                continue  # (the shape first: a site costs a type inference)
            if try_rule(v.program, rule_, path) is not None:
                found.append(path)
        if not found:
            return []
        for path in reversed(found):
            r = try_rule(v.program, rule_, path)
            if r is not None:
                v = extend(v, r)
        return [v]

    return go


STENCIL_RULES = [tile_zip2D, local_stage_zipped, local_stage_rows]
