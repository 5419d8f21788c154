"""Cooperative row reductions: a work-group per row, the row's elements dealt to its work-items.

A map over rows whose function reduces its row (a matrix-vector product, a fully-connected layer, a row's
sum or maximum) or reduces it and then maps it (softmax, layer normalisation: the reductions' results
bound by ``let``, then used by an elementwise map over the row) is, as written, run by one work-item per
row: each item walks a whole row, and where the row is ``let``-bound (softmax's ``exp(x - max)``) it keeps
the whole row in its private memory, which no GPU has room for at N = 8192.  Here the work-items of a
group share each row instead:

- ``dealRows`` (algorithmic) deals the row's elements to ``L`` work-items: item ``l`` takes elements
  ``l, l + L, l + 2L, ...`` (``transpose(split(L, row))``), so neighbouring items read neighbouring
  addresses; with ``dealRowsVector`` it takes vectors of ``v`` neighbouring elements the same way
  (``v`` floats at ``(k L + l) v``: one wide load each).  Every reduction of a row-long array becomes the
  combination of the items' partial results over their shares; every elementwise map of a row-long array
  maps each item's share, and a ``let``-bound row-long array is bound to the shares.  The row is written
  back through the inverse layout (``join(transpose(...))``), which is a view.  Only rows whose elements
  are neighbours in memory are dealt (rows of the inputs, chunks of them): a matrix product's columns or
  a convolution's windows would not coalesce, and are left to the other mappings;
- ``reduceLclShared`` (lowering) combines the items' partial results as a tree in local memory
  (``reduceLcl``) whose result every item takes into its accumulator, where the group reads it (softmax's
  maximum, then its sum); where it is stored, the existing ``reduceLcl`` rule has one item write it;
- ``groupLetPrivate`` / ``groupLetLocal`` (memory) keep a ``let``-bound row-long array in the private
  memory of the items (each its own share: the privatization pass shrinks the group's array to it) or in
  local memory;
- ``letInline``, ``reduceMapFusion`` (algorithmic) recompute a ``let``-bound elementwise map where it is
  used instead of keeping it, fused into the reduction or the map that reads it (rows too long for any
  memory of the group);
- ``letShares`` (memory) copies the items' shares of a row that is read several times (softmax's maximum,
  then its exponentials) into their memory once, so that the row is read from global memory once.

The strategy that combines them is ``liftpy.rewrite.rows_strategy.cooperative_rows``; ``splitRows``
(``liftpy.rewrite.rows_split``) splits few long rows over several work-groups.

Each rule has a property test against the interpreter (tests/test_rules_rows.py).  The reductions are regrouped,
so a float sum may differ by rounding; a maximum is exact.
"""

from __future__ import annotations

import sympy

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import (Call, Expr, Lambda, Var, apply_lambda, fresh_name, primitive_functions, rename_bound,
                       replace_functions, substitute, subterms)
from ..ir.typecheck import type_of
from ..ir.types import ArrayType, ScalarType, TupleType, sizes_equal
from ..ir.userfun import UserFun
from .lowering import reduce_lcl
from .normal import component_uses, replace_components
from .patterns import is_call, sum_form
from .positions import _child, loop_positions
from .rule import rule

VECTOR_WIDTHS = (2, 4, 8)  # a work-item's wide loads: 8, 16 or 32 bytes


class _Refuse(Exception):
    """The row's function holds something the dealing does not know how to share."""


class _Dealer:
    """The translation of one row function's body: ``n`` the length of the row's arrays, ``items`` the
    work-items (``L``) they are dealt to, ``width`` the vector width of a dealt element (1: single
    elements)."""

    def __init__(self, n, items, width: int | sympy.Basic, env: dict, row: str, layout: "_Layout"):
        self.n, self.items, self.width, self.layout = n, items, width, layout
        self.env = dict(env)  # name -> type of every variable in scope (of the original body)
        self.dealt: dict[str, Var] = {}  # a let-bound row-long array -> the variable bound to its shares
        self.row = row
        self.row_dependent = {row}  # names whose value depends on the row (the row itself, let-bound values)
        self.reductions = 0

    # ------------------------------------------------------------------------------ helpers
    def type_of(self, e: Expr):
        return type_of(e, {k: v for k, v in self.env.items() if k in e.free_vars})

    def row_long(self, t) -> bool:
        return isinstance(t, ArrayType) and sizes_equal(t.size, self.n) is True

    def depends(self, node) -> bool:
        return bool(node.free_vars & self.row_dependent)

    def uses_dealt(self, node) -> bool:
        return bool(node.free_vars & set(self.dealt))

    def elementwise(self, f) -> bool:
        """Whether a function applied to each element reads nothing of the row but single values computed
        from it (a maximum, a sum: ``[T]1`` or scalars), which every item holds, never the row itself or
        another row-long array."""
        for name in f.free_vars & self.row_dependent:
            if name == self.row:
                return False
            t = self.env.get(name)
            if not _small(t):
                return False
        return True

    def vector(self) -> bool:
        return not (isinstance(self.width, int) and self.width == 1)

    # ------------------------------------------------------------------------------ layouts
    def deal_view(self, e: Expr, t: ArrayType) -> Expr:
        """``[T]n`` -> ``[L][T]n/L``, item l's share: elements l, l + L, ... (vectors of ``width`` elements).
        Only for a row whose elements are neighbours in memory: what makes the items' reads coalesce (a
        column of a matrix, a window of an image, would be read element by element at a stride)."""
        if not self.layout.contiguous(e):
            raise _Refuse("the row's elements are not neighbours in memory")
        return self._deal_view(e, t)

    def _deal_view(self, e: Expr, t: ArrayType) -> Expr:
        if not self.vector():
            return dsl.transpose(dsl.split(self.items, e))
        if is_call(e, P.Zip) or isinstance(t.elem, TupleType):
            # Each component read as vectors of its own (a chunk of a zip: its components, as views).
            if is_call(e, P.Zip):
                comps = list(e.args)
            else:
                comps = [dsl.map(lambda p, i=i: dsl.get(p, i), e) for i in range(len(t.elem.elems))]
            parts = [self._deal_view(a, self.type_of(a)) for a in comps]
            return dsl.map(lambda p: dsl.zip(*[dsl.get(p, i) for i in range(len(parts))]), dsl.zip(*parts))
        if not isinstance(t.elem, ScalarType):
            raise _Refuse(f"cannot read elements of {t.elem} as vectors")
        return dsl.map(lambda c: dsl.asScalar(c), dsl.transpose(dsl.split(self.items, dsl.asVector(self.width, e))))

    def undeal(self, shares: Expr, elem) -> Expr:
        """The inverse of ``deal_view``: the row from its items' shares (a view, and a write view)."""
        if not self.vector():
            return dsl.join(dsl.transpose(shares))
        if not isinstance(elem, ScalarType):
            raise _Refuse(f"cannot write elements of {elem} as vectors")
        return dsl.asScalar(dsl.join(dsl.transpose(dsl.map(lambda c: dsl.asVector(self.width, c), shares))))

    # ------------------------------------------------------------------------------ the translation
    def shares(self, e: Expr) -> Expr:
        """The items' shares ``[L][T]n/L`` of a row-long array ``e``."""
        if isinstance(e, Var) and e.name in self.dealt:
            return self.dealt[e.name]
        t = self.type_of(e)
        if is_view(e) and not self.uses_dealt(e):
            return self.deal_view(e, t)
        if isinstance(e, Call) and type(e.fn) is P.Map:
            f = e.fn.f
            if not self.elementwise(f):
                raise _Refuse("an elementwise function that reads the row's other values")
            inner = self.shares(e.args[0])
            return dsl.map(lambda c: Call(P.Map(rename_bound(f)), (c,)), inner)
        if is_call(e, P.Zip) and all(self.row_long(self.type_of(a)) for a in e.args):
            parts = [self.shares(a) for a in e.args]
            return dsl.map(lambda p: dsl.zip(*[dsl.get(p, i) for i in range(len(parts))]), dsl.zip(*parts))
        raise _Refuse(f"a row-long {type(getattr(e, 'fn', e)).__name__} that is neither a view nor a map")

    def body(self, e: Expr) -> Expr:
        """``e`` with its row-long reductions and maps shared by the items (same type, same value)."""
        if isinstance(e, Var):
            if e.name in self.dealt:
                return self.undeal(self.dealt[e.name], self.type_of(e).elem)
            return e
        if not isinstance(e, Call):
            return e
        fn = e.fn
        if isinstance(fn, P.Let):
            return self.let(e)
        if type(fn) is P.Reduce and self.row_long(self.type_of(e.args[1])):
            return self.reduction(e)
        if self.row_long(self.type_of(e)) and not (is_view(e) and not self.uses_dealt(e)):
            return self.undeal(self.shares(e), self.type_of(e).elem)
        if isinstance(fn, UserFun) or (isinstance(fn, P.Primitive) and fn.kind == "layout"):
            return Call(fn, tuple(self.body(a) for a in e.args))
        if isinstance(fn, (P.Map, P.Reduce)) and self.elementwise(fn.f):
            # A function of a reduction's result (a ReLU after a dot product): runs on that one value, which
            # every item holds.  Over anything longer that depends on the row, it would need a dealing of its own.
            if any(self.depends(a) and not _small(self.type_of(a)) for a in e.args):
                raise _Refuse("a map or reduction over a row-dependent array that is not row-long")
            return Call(fn, tuple(self.body(a) for a in e.args))
        if not self.depends(e):
            return e  # a value the row does not change (a constant of the program)
        raise _Refuse(f"{getattr(fn, 'text_name', type(fn).__name__)} over the row")

    def let(self, e: Call) -> Expr:
        lam = e.fn.f
        (x,) = lam.params
        value = e.args[0]
        t = self.type_of(value)
        self.env[x.name] = t
        if self.depends(value):
            self.row_dependent.add(x.name)
        if self.row_long(t) and not is_view(value):
            shared = self.shares(value)
            xs = Var(fresh_name(x.name.split("_")[0] + "s"))
            self.dealt[x.name] = xs
            return Call(P.Let(Lambda((xs,), self.body(lam.body))), (shared,))
        return Call(P.Let(Lambda((x,), self.body(lam.body))), (self.body(value),))

    def reduction(self, e: Call) -> Expr:
        f = e.fn.f
        init, xs = e.args
        form = sum_form(f)
        t = self.type_of(init)
        if form is None or not isinstance(t, ScalarType) or not self.elementwise(f):
            raise _Refuse("a reduction of the row that is not a sum, maximum or minimum of its elements")
        shares = self.shares(xs)
        self.reductions += 1
        partial = dsl.join(dsl.map(lambda c: Call(P.Reduce(rename_bound(f)), (form.identity(t), c)), shares))
        return Call(P.Reduce(dsl.as_lambda(lambda acc, s: form.op(acc, s), 2, "acc")), (self.body(init), partial))


class _Layout:
    """Which arrays of a row map's function lie contiguously in memory, from where their names come: the
    program's inputs (row-major), and the elements of the maps around the position (``sources``: a map's
    parameter -> the array it maps over)."""

    def __init__(self, inputs: dict, sources: dict):
        self.inputs, self.sources = inputs, sources

    def contiguous(self, e) -> bool:
        """Whether the array ``e``'s elements are neighbours in memory (each component, for a zip)."""
        if isinstance(e, Var):
            t = self.inputs.get(e.name)
            if t is not None:
                return isinstance(t, ArrayType) and not isinstance(t.elem, ArrayType)
            return e.name in self.sources and self.rows(self.sources[e.name])
        if is_call(e, P.Zip):
            return all(self.contiguous(a) for a in e.args)
        if is_call(e, P.AsVector):
            return self.contiguous(e.args[0])
        if is_call(e, P.Get) and isinstance(e.args[0], Var) and is_call(self.sources.get(e.args[0].name), P.Zip):
            return self.rows(self.sources[e.args[0].name].args[e.fn.index])
        return False

    def rows(self, xs) -> bool:
        """Whether each element of ``xs`` that is an array is contiguous (the rows of a row-major input, the
        chunks of a contiguous array; the elements of a zip component by component, its scalars aside)."""
        if isinstance(xs, Var):
            if xs.name in self.inputs:
                return True  # row-major: every sub-array of an input is contiguous
            return xs.name in self.sources and self.rows(self.sources[xs.name])
        if is_call(xs, P.Zip):
            return all(self.rows(a) for a in xs.args)
        if is_call(xs, P.Split):
            return self.contiguous(xs.args[0])
        return False


def _sources(program, path) -> dict:
    """The array each map on the way to ``path`` maps over, by the name of the map's parameter."""
    out, node = {}, program.body
    for step in path:
        if step[0] == "fn" and isinstance(node, Call) and isinstance(node.fn, P.MapLike):
            out[node.fn.f.params[0].name] = node.args[0]
        node = _child(node, step)
    return out


def _small(t) -> bool:
    """A value every work-item may hold: a scalar, a vector, a tuple of them, or an array of one such."""
    if isinstance(t, ArrayType):
        return sizes_equal(t.size, 1) is True and _small(t.elem)
    if isinstance(t, TupleType):
        return all(_small(x) for x in t.elems)
    return t is not None


def _deal(e, site, ctx, vector: bool):
    if not (isinstance(e, Call) and type(e.fn) is P.Map) or is_view(e.fn.f.body):
        return None
    lam = e.fn.f
    (row,) = lam.params
    xs_t = site.type_of(e.args[0])
    if not isinstance(xs_t, ArrayType):
        return None
    env = {**site.env, row.name: xs_t.elem}
    n = _first_row_reduction(lam.body, row.name, env)
    if n is None:
        return None
    items = ctx.fresh("L")
    width = ctx.fresh("v") if vector else 1
    if vector:
        ctx.require(sympy.Contains(width, sympy.FiniteSet(*VECTOR_WIDTHS)),
                    f"a work-item reads {width} neighbouring elements at once: {width} is 2, 4 or 8")
    inputs = dict(zip((p.name for p in site.program.params), site.program.param_types))
    layout = _Layout(inputs, {**_sources(site.program, site.path), row.name: e.args[0]})
    dealer = _Dealer(n, items, width, env, row.name, layout)
    try:
        body = dealer.body(lam.body)
    except _Refuse:
        return None
    if dealer.reductions == 0:
        return None  # elementwise rows: one work-item per element serves them better
    return Call(P.Map(Lambda((row,), body)), e.args)


def _first_row_reduction(body: Expr, row: str, env: dict):
    """The length of the first array (pre-order) that the row's function reduces and that depends on the
    row, typed in the scope of the reduction (``let``-bound names included)."""

    def walk(e, env, dep):
        if not isinstance(e, Call):
            return None
        fn = e.fn
        if type(fn) is P.Reduce:
            xs = e.args[1]
            if xs.free_vars & dep:
                t = type_of(xs, {k: v for k, v in env.items() if k in xs.free_vars})
                if isinstance(t, ArrayType):
                    return t.size
        if isinstance(fn, P.Let):
            found = walk(e.args[0], env, dep)
            if found is not None:
                return found
            (x,) = fn.f.params
            value = e.args[0]
            inner = {**env, x.name: type_of(value, {k: v for k, v in env.items() if k in value.free_vars})}
            return walk(fn.f.body, inner, dep | ({x.name} if value.free_vars & dep else set()))
        for a in e.args:
            found = walk(a, env, dep)
            if found is not None:
                return found
        return None

    return walk(body, env, {row})


deal_rows = rule(
    "dealRows",
    "map(r -> B(r), xs) => map(r -> B'(r), xs): every reduce(f, z, a) of a row-long a in B becomes "
    "reduce(+, z, join(map(c -> reduce(f, id, c), transpose(split(L, a))))), every row-long map(g, a) "
    "join(transpose(map(c -> map(g, c), transpose(split(L, a)))))",
)(lambda e, site, ctx: _deal(e, site, ctx, vector=False))

deal_rows_vector = rule(
    "dealRowsVector",
    "dealRows with vectors of v neighbouring elements dealt: transpose(split(L, asVector(v, a)))",
)(lambda e, site, ctx: _deal(e, site, ctx, vector=True))


# ------------------------------------------------------------------------------------ lowering, memory


@rule(
    "reduceLclShared",
    "reduce((+), init, xs) at work-group level, its result read by the group, xs computed by the work-items "
    "=> reduceLcl(d, (+), init, toLocal(xs))",
    "lowering",
)
def reduce_lcl_shared(e, site, ctx):
    """The group's items combine their partial results as a tree in local memory (``reduceLcl``), and each
    takes the tree's result into its own accumulator: a row's maximum or sum that every item then reads
    (softmax's ``exp(x - max)``), shared without a further copy.  Where the result is stored instead,
    ``reduceLcl`` has one item write it."""
    if site.write_position:
        return None
    tree = reduce_lcl.fn(e, site, ctx)
    return None if tree is None else tree.args[0]  # reduceLcl builds mapLcl(d, id, tree): the tree alone


def _group_let(e, site, to_mem):
    if not (isinstance(e, Call) and isinstance(e.fn, P.Let)):
        return None
    if not site.inside(P.MapWrg) or site.inside(P.MapLcl, P.MapGlb, P.MapSeq, P.ReduceLike, P.Map):
        return None
    value = e.args[0]
    if not (isinstance(value, Call) and isinstance(value.fn, (P.Map, P.MapLcl)) and not is_view(value)):
        return None
    if not isinstance(site.type_of(value), ArrayType):
        return None
    return Call(e.fn, (to_mem(value),))


@rule("groupLetPrivate", "let(x -> b, map(f, xs)) at work-group level => let(x -> b, toPrivate(map(f, xs)))", "memory")
def group_let_private(e, site, ctx):
    """An array a work-group computes with its items and binds with ``let`` (the shares of a row,
    ``[L][n/L]``) is kept in the items' private memory: the group's array is declared once, and the
    privatization pass shrinks it to the share each item computes and reads (in registers when the
    item's loops over it are unrolled)."""
    return _group_let(e, site, dsl.toPrivate)


@rule("groupLetLocal", "let(x -> b, map(f, xs)) at work-group level => let(x -> b, toLocal(map(f, xs)))", "memory")
def group_let_local(e, site, ctx):
    """The same array kept in local memory: each item writes its share, any item may read any element
    after the barrier (a row of up to some thousands of floats, without the registers)."""
    return _group_let(e, site, dsl.toLocal)


@rule("letInline", "let(x -> b, map(f, xs)) => b[x := map(f, xs)]")
def let_inline(e, site, ctx):
    """An array bound by ``let`` and computed elementwise is recomputed where it is used rather than kept:
    a row too long for any memory of its work-group (softmax's ``exp(x - max)`` over a row of a million) is
    then never held, at the price of computing each element once per use."""
    if not (isinstance(e, Call) and isinstance(e.fn, P.Let)):
        return None
    value = e.args[0]
    if not (isinstance(value, Call) and type(value.fn) is P.Map and not is_view(value.fn.f.body)):
        return None
    (x,) = e.fn.f.params
    if any(_reads(e.fn.f.body, lambda n: isinstance(n, Var) and n.name == x.name, x.name)):
        return None  # read inside a loop's function: inlined, it would be computed at every iteration
    return substitute(e.fn.f.body, {x.name: value})


@rule("reduceMapFusion", "reduce(f, z, map(g, xs)) => reduce((acc, y) -> f(acc, g(y)), z, xs)")
def reduce_map_fusion(e, site, ctx):
    """The mapped values are reduced as they are computed, never stored."""
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce):
        return None
    init, xs = e.args
    if not (isinstance(xs, Call) and type(xs.fn) is P.Map and not is_view(xs.fn.f.body)):
        return None
    f, g = e.fn.f, xs.fn.f
    acc, y = Var(fresh_name("acc")), Var(fresh_name("y"))
    body = apply_lambda(f, [acc, apply_lambda(g, [y])])
    return Call(P.Reduce(Lambda((acc, y), body)), (init, xs.args[0]))


def _reads(node, is_read, name: str) -> list[bool]:
    """For each read of the variable ``name`` that ``is_read`` picks (the variable, or one component of it) in
    ``node``: whether it is inside a loop's function, where a value computed in its place would be computed
    again at every iteration."""
    return [loop for n, loop in loop_positions(node, name) if is_read(n)]


def _component_reads(node, name: str, index: int) -> list[bool]:
    return _reads(node, lambda n: is_call(n, P.Get) and n.fn.index == index and isinstance(n.args[0], Var)
                  and n.args[0].name == name, name)


@rule("zipMapFusion", "map(q -> F(.., q._i, ..), zip(.., map(g, X), ..)) => map(p -> F(.., g(p._i), ..), zip(.., X, ..))")
def zip_map_fusion(e, site, ctx):
    """A map over a zip of computed arrays computes each element where its function reads it (once, outside
    any loop of the function, so nothing is computed twice): ``alpha A x + beta B x`` written as two
    products zipped is one map over the rows of A and B, whose rows a work-group can share (``dealRows``),
    as the spelling over ``zip(A, B)`` is.  The inverse of the fission the normal form does
    (``dotFission``), so it belongs to the strategies that want one nest per kernel."""
    if not (isinstance(e, Call) and type(e.fn) is P.Map and is_call(e.args[0], P.Zip)):
        return None
    (q,) = e.fn.f.params
    body, parts_in = e.fn.f.body, e.args[0].args
    uses = component_uses(body, q.name)
    if uses is None:
        return None
    fused = [i for i, a in enumerate(parts_in)
             if isinstance(a, Call) and type(a.fn) is P.Map and not is_view(a.fn.f.body)
             and _component_reads(body, q.name, i) == [False] and all(u == (i,) for u in uses if u[0] == i)]
    if not fused:
        return None
    p = Var(fresh_name("q"))
    parts = {(i,): apply_lambda(parts_in[i].fn.f, [dsl.get(p, i)]) if i in fused else dsl.get(p, i)
             for i in range(len(parts_in))}
    args = [a.args[0] if i in fused else a for i, a in enumerate(parts_in)]
    return Call(P.Map(Lambda((p,), replace_components(body, q.name, parts))), (dsl.zip(*args),))


@rule("letShares", "map(r -> B(D(r), D(r)), xs) => map(r -> let(s -> B(s, s), map(c -> map(id, c), D(r))), xs)",
      "memory")
def let_shares(e, site, ctx):
    """A view of the row that its function reads in several places (the items' shares of a softmax row: its
    maximum, then its exponentials) is copied once into each item's memory (registers, once lowered with
    ``groupLetPrivate`` and unrolled) and read there: the row comes from global memory once."""
    if not (isinstance(e, Call) and type(e.fn) is P.Map) or is_view(e.fn.f.body):
        return None
    (r,) = e.fn.f.params
    body = e.fn.f.body
    seen: dict = {}
    for node in subterms(body):
        if isinstance(node, Call) and node.free_vars == {r.name} and is_view(node):
            seen[node] = seen.get(node, 0) + 1
    env = {**site.env, r.name: site.type_of(e.args[0]).elem}
    repeated = [n for n, k in seen.items() if k > 1 and _shares_type(type_of(n, {r.name: env[r.name]}))]
    if not repeated:
        return None
    target = max(repeated, key=lambda n: sum(1 for _ in subterms(n)))  # the whole view, not a part of it
    s = Var(fresh_name("rs"))
    copy = dsl.map(lambda c: dsl.map(dsl.id, c), target)
    return Call(P.Map(Lambda((r,), Call(P.Let(Lambda((s,), _replace(body, target, s))), (copy,)))), e.args)


def _shares_type(t) -> bool:
    """``[[T]k]L`` of scalars or tuples of them: what items' shares of a row are."""
    return (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)
            and isinstance(t.elem.elem, (ScalarType, TupleType)) and _small(t.elem.elem))


def _replace(node, target, new):
    """``node`` with every occurrence of the expression ``target`` replaced by ``new``."""
    if node == target:
        return new
    if isinstance(node, Lambda):
        return Lambda(node.params, _replace(node.body, target, new))
    if isinstance(node, Call):
        if isinstance(node.fn, Lambda):
            fn = _replace(node.fn, target, new)
        elif isinstance(node.fn, P.Primitive):
            fn = replace_functions(node.fn, {k: _replace(lam, target, new) for k, lam in primitive_functions(node.fn)})
        else:
            fn = node.fn
        return Call(fn, tuple(_replace(a, target, new) for a in node.args))
    return node


ROW_RULES = [deal_rows, deal_rows_vector, reduce_lcl_shared, group_let_private, group_let_local, let_inline,
             reduce_map_fusion, let_shares, zip_map_fusion]
