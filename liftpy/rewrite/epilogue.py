"""Matrix products and what follows their dot products: one recogniser for every rule that tiles, blocks,
splits or pads a product, and the rule that fuses an epilogue back into the product's nest.

A *product* is the vendor-class shape

    map(a -> map(b -> [map(g,] dot(a, b)[)], Bs), As)                         (g closed: a ReLU)

and an *epilogue* is an elementwise function of its results and of arrays of the same shape read at the
same (i, j), the normal form ``normal.py`` brings programs to (``alpha * (A B) + beta * C``):

    map(q -> map(r -> E(at(0, r._0), r._1, .., r._k), zip(q._0, .., q._k)), zip(P, C1, .., Ck))
    map(q -> map(r -> E(at(0, r)), q), P)                                       (k = 0)

with ``P`` a product (in any component of the zips, which may be permuted alike).  ``match_product``
reads either shape as one ``Product``: the tilings then write ``E`` out as they store each result
(``tiling.py``), split-K applies it in its sum kernel, and ``fuseEpilogue`` puts it back inside the
product's nest for the rules that want one nest (the general work mappings).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ..ir import dsl
from ..ir import primitives as P
from ..ir.expr import Call, Expr, Lambda, Var, fresh_name, primitive_functions, replace_functions, substitute
from .blocking import DotForm, _dot_reduce
from .patterns import is_call
from .rule import rule


@dataclass(frozen=True)
class Epilogue:
    """``body`` of the dot product's value ``x`` (a scalar: the product's one-element result read by
    ``at(0, ...)``) and of the elements ``cs`` of ``extras`` (arrays shaped as the product's result, read
    at the same (i, j))."""

    x: Var
    cs: tuple[Var, ...]
    body: Expr
    extras: tuple[Expr, ...] = ()

    def apply(self, x: Expr, cs=()) -> Expr:
        return substitute(self.body, {self.x.name: x, **{c.name: v for c, v in zip(self.cs, cs)}})


@dataclass(frozen=True)
class Product:
    """A product ``core`` = ``map(a -> map(b -> [map(g,] dot[)], Bs), As)`` found in ``e``; ``rebuild``
    puts a new core back in ``e`` (around it: nothing, or an epilogue), ``post`` is the closed function
    in the core, ``epilogue`` the elementwise function after it when ``e`` is an epilogue (it then
    includes ``post``)."""

    core: Call
    a: Var
    b: Var
    As: Expr
    Bs: Expr
    form: DotForm
    post: object  # the core's map(g) primitive, or None
    epilogue: Epilogue | None
    rebuild: Callable[[Expr], Expr]


def dot_then(body, a: Var, b: Var):
    """``(DotForm, post)`` for a dot product (``post`` None) or a function of its result applied after it,
    ``map(g, dot(a, b))`` with ``g`` closed (a convolution's ReLU)."""
    form = _dot_reduce(body, a, b)
    if form is not None:
        return form, None
    if isinstance(body, Call) and type(body.fn) is P.Map and not body.fn.f.free_vars:
        form = _dot_reduce(body.args[0], a, b)
        if form is not None:
            return form, body.fn
    return None, None


def product_core(e) -> Product | None:
    """``e`` itself a product (no epilogue)."""
    if not (isinstance(e, Call) and type(e.fn) is P.Map):
        return None
    (a,) = e.fn.f.params
    inner = e.fn.f.body
    if not (isinstance(inner, Call) and type(inner.fn) is P.Map):
        return None
    (b,) = inner.fn.f.params
    bs = inner.args[0]
    if a.name in bs.free_vars:
        return None
    form, post = dot_then(inner.fn.f.body, a, b)
    if form is None:
        return None
    return Product(e, a, b, e.args[0], bs, form, post, None, lambda core: core)


def match_product(e) -> Product | None:
    """A product, or an epilogue over a product (see the module's docstring), else None."""
    found = product_core(e)
    if found is not None:
        return found
    return _epilogue(e)


def _epilogue(e) -> Product | None:
    if not (isinstance(e, Call) and type(e.fn) is P.Map):
        return None
    (q,) = e.fn.f.params
    inner = e.fn.f.body
    if not (isinstance(inner, Call) and type(inner.fn) is P.Map):
        return None
    (r,) = inner.fn.f.params
    E = inner.fn.f.body
    X, Y = e.args[0], inner.args[0]
    if q.name in E.free_vars:
        return None
    if isinstance(Y, Var) and Y.name == q.name:  # k = 0: map(q -> map(r -> E(r), q), P)
        core = product_core(X)
        if core is None:
            return None
        x = Var(fresh_name("x"))
        body = _replace_scalar(E, r.name, None, x)
        if body is None:
            return None
        return _with_epilogue(core, x, (), body, (), lambda new: Call(e.fn, (new,)))
    if not (is_call(X, P.Zip) and is_call(Y, P.Zip) and len(X.args) == len(Y.args)):
        return None
    order = []  # component i of r is component order[i] of q
    for y in Y.args:
        if not (is_call(y, P.Get) and isinstance(y.args[0], Var) and y.args[0].name == q.name):
            return None
        order.append(y.fn.index)
    if sorted(order) != list(range(len(X.args))):
        return None
    cores = [(j, product_core(xj)) for j, xj in enumerate(X.args)]
    cores = [(j, c) for j, c in cores if c is not None]
    if len(cores) != 1:
        return None
    j, core = cores[0]
    i0 = order.index(j)
    rest = [i for i in range(len(order)) if i != i0]
    x = Var(fresh_name("x"))
    cs = tuple(Var(fresh_name("c")) for _ in rest)
    body = _replace_scalar(E, r.name, i0, x, {i: c for i, c in zip(rest, cs)})
    if body is None:
        return None
    extras = tuple(X.args[order[i]] for i in rest)

    def rebuild(new, e=e, j=j):
        args = list(X.args)
        args[j] = new
        return Call(e.fn, (dsl.zip(*args),))

    return _with_epilogue(core, x, cs, body, extras, rebuild)


def _with_epilogue(core: Product, x: Var, cs, body, extras, rebuild) -> Product:
    if core.post is not None:  # the core's own function first: E(g(x))
        g = core.post.f
        body = substitute(body, {x.name: substitute(g.body, {g.params[0].name: x})})
    return dataclasses.replace(core, epilogue=Epilogue(x, tuple(cs), body, tuple(extras)), rebuild=rebuild)


def _replace_scalar(node, r: str, i0, x: Var, comps=None):
    """``node`` with ``at(0, r)`` (``i0`` None) or ``at(0, get(r, i0))`` replaced by ``x`` and ``get(r, i)``
    by ``comps[i]``; None where ``r`` is used any other way (the product's one-element result whole)."""
    comps = comps or {}

    def dot_value(n) -> bool:
        if not (is_call(n, P.At) and n.fn.index == 0):
            return False
        inner = n.args[0]
        if i0 is None:
            return isinstance(inner, Var) and inner.name == r
        return is_call(inner, P.Get) and inner.fn.index == i0 and isinstance(inner.args[0], Var) and inner.args[0].name == r

    def walk(n):
        if r not in n.free_vars:
            return n
        if isinstance(n, Var):
            return None
        if isinstance(n, Lambda):
            if r in {p.name for p in n.params}:
                return n
            body = walk(n.body)
            return None if body is None else Lambda(n.params, body)
        if dot_value(n):
            return x
        if is_call(n, P.Get) and isinstance(n.args[0], Var) and n.args[0].name == r:
            return comps.get(n.fn.index)
        if isinstance(n.fn, Lambda):
            fn = walk(n.fn)
        elif isinstance(n.fn, P.Primitive):
            lams = {}
            for name, lam in primitive_functions(n.fn):
                new = walk(lam)
                if new is None:
                    return None
                lams[name] = new
            fn = replace_functions(n.fn, lams)
        else:
            fn = n.fn
        args = [walk(a) for a in n.args]
        if fn is None or any(a is None for a in args):
            return None
        return Call(fn, tuple(args))

    return walk(node)


@rule(
    "fuseEpilogue",
    "map(q -> map(r -> E(at(0, r._0), r._1..), zip(q._0, q._1..)), zip(map(a -> map(b -> dot(a, b), Bs), As), C..)) => "
    "map(p -> map(s -> E(at(0, dot(p._0, s._0)), s._1..), zip(Bs, p._1..)), zip(As, C..))",
)
def fuse_epilogue(e, site, ctx):
    """An epilogue over a product fused back into the product's nest (map fusion through the zips), so
    that one work-item computes a dot product and applies the function to it with the other arrays'
    elements: the shape the general work mappings lower to one kernel.  The inverse of the fission the
    normal form performs, for the strategies that want one nest rather than a product to tile."""
    found = _epilogue(e)
    if found is None:
        return None
    epi, a, b = found.epilogue, found.a, found.b
    inner = found.core.fn.f.body.fn.f.body  # dot(a, b), or map(g, dot(a, b)) (g is part of the epilogue)
    dot = inner.args[0] if found.post is not None else inner
    k = len(epi.extras)
    if k == 0:
        return dsl.map(Lambda((a,), dsl.map(Lambda((b,), epi.apply(dsl.at(0, dot))), found.Bs)), found.As)
    p, s = Var(fresh_name("p")), Var(fresh_name("s"))
    body = epi.apply(dsl.at(0, substitute(dot, {a.name: dsl.get(p, 0), b.name: dsl.get(s, 0)})),
                     [dsl.get(s, i) for i in range(1, k + 1)])
    inner_map = dsl.map(Lambda((s,), body), dsl.zip(found.Bs, *[dsl.get(p, i) for i in range(1, k + 1)]))
    return dsl.map(Lambda((p,), inner_map), dsl.zip(found.As, *epi.extras))


def tiles_of(c: Expr, m, n) -> Expr:
    """``[M][N] -> [M/m][N/n][m][n]``: the m x n tiles of an array shaped as a product's result (a view)."""
    return dsl.map(lambda rows: dsl.transpose(dsl.map(lambda row: dsl.split(n, row), rows)), dsl.split(m, c))


def blocks_of(tile: Expr, r1, columns: Callable[[Expr], Expr]) -> Expr:
    """``[m][n] -> [m/r1][n/r2][r1][r2]``: a tile dealt to work-items as the accumulators are (rows in
    blocks of r1, each row's columns as ``columns`` deals them), so that it zips with them."""
    return dsl.map(lambda rows: dsl.transpose(dsl.map(columns, rows)), dsl.split(r1, tile))


def zip_map4(f: Callable, acc: Expr, others: list[Expr]) -> Expr:
    """``f(x, c1, ..)`` for every element of the 4-dimensional ``acc`` and the same element of each of
    ``others``."""
    if not others:
        return dsl.map(lambda p: dsl.map(lambda q: dsl.map(lambda r: dsl.map(f, r), q), p), acc)
    k = len(others)

    def level(xs, depth):
        if depth == 4:
            return f(dsl.get(xs, 0), *[dsl.get(xs, i) for i in range(1, k + 1)])
        return dsl.map(lambda t: level(t, depth + 1), dsl.zip(*[dsl.get(xs, i) for i in range(k + 1)]))

    return dsl.map(lambda t: level(t, 1), dsl.zip(acc, *others))
