"""Matrix products and what follows their dot products: one recogniser for every rule that tiles, blocks,
splits or pads a product.

A *product* is the vendor-class shape

    map(a -> map(b -> [map(g,] dot(a, b)[)], Bs), As)                         (g closed: a ReLU)

and an *epilogue* is an elementwise function of its results and of arrays of the same shape read at the
same (i, j), the normal form ``normal.py`` brings programs to (``alpha * (A B) + beta * C``):

    map(q -> map(r -> E(at(0, r._0), r._1, .., r._k), zip(q._0, .., q._k)), zip(P, C1, .., Ck))
    map(q -> map(r -> E(at(0, r)), q), P)                                       (k = 0)

with ``P`` a product (in any component of the zips, which may be permuted alike), and ``E`` reading the
product's one-element result by ``at(0, ...)`` or mapping over it (``map(v -> E(v, r._1), r._0)``: the
results stay one-element arrays, as the product's own).  ``match_product``
reads either shape as one ``Product``: the tilings and ``registerBlock2D`` then write ``E`` out as they
store each result (``tiling.py``, ``blocking.py``), and split-K applies it in its sum kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Literal, Var, fresh_name, primitive_functions, replace_functions, substitute
from ..ir.types import ArrayType, Float, ScalarType
from ..ir.userfun import BUILTINS
from .patterns import is_call


MULT_AND_SUM_UP = BUILTINS["multAndSumUp"]


@dataclass(frozen=True)
class DotForm:
    """``reduce(acc + x_k * y_k, init, zip(xa, xb))`` with ``xa`` a layout of ``a`` only and ``xb`` a
    layout of ``b`` only (the flattened window and weights of a convolution, or ``a`` and ``b`` as they
    are for a matrix product); ``init`` a literal, or a value of ``b`` alone (a convolution's bias)."""

    init: Expr
    xa: Expr
    xb: Expr


def _layout_of(e: Expr, v: Var) -> bool:
    """Whether ``e`` is ``v`` under layout primitives only (a view, no computation)."""
    return e.free_vars == frozenset({v.name}) and is_view(e)


def _dot_reduce(e, a: Var, b: Var) -> DotForm | None:
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce):
        return None
    init, xs = e.args
    if isinstance(init, Literal):
        if init.type != Float:
            return None
    elif not init.free_vars <= {b.name}:
        return None
    if not (is_call(xs, P.Zip) and len(xs.args) == 2):
        return None
    x0, x1 = xs.args
    if _layout_of(x0, a) and _layout_of(x1, b):
        xa, xb = x0, x1
    elif _layout_of(x0, b) and _layout_of(x1, a):
        xa, xb = x1, x0
    else:
        return None
    acc, p = e.fn.f.params
    body = e.fn.f.body
    if not (isinstance(body, Call) and body.fn == MULT_AND_SUM_UP and body.args[0] == acc):
        return None
    idx = [g.fn.index for g in body.args[1:] if is_call(g, P.Get) and g.args == (p,)]
    # multAndSumUp is a commutative product, so either order of the zipped pair is the same dot product.
    if sorted(idx) != [0, 1]:
        return None
    return DotForm(init, xa, xb)


@dataclass(frozen=True)
class Epilogue:
    """``body`` of the dot product's value ``x`` (a scalar: the product's one-element result read by
    ``at(0, ...)``, or mapped over when ``wrapped``) and of the elements ``cs`` of ``extras`` (arrays
    shaped as the product's result, read at the same (i, j))."""

    x: Var
    cs: tuple[Var, ...]
    body: Expr
    extras: tuple[Expr, ...] = ()
    wrapped: bool = False  # each result a one-element array, as the product's own: map(v -> E(v, c), r._0)

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
        body, wrapped = _scalar_body(E, r.name, None, x, {})
        if body is None:
            return None
        return _with_epilogue(core, x, (), body, (), lambda new: Call(e.fn, (new,)), wrapped)
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
    body, wrapped = _scalar_body(E, r.name, i0, x, {i: c for i, c in zip(rest, cs)})
    if body is None:
        return None
    extras = tuple(X.args[order[i]] for i in rest)

    def rebuild(new, e=e, j=j):
        args = list(X.args)
        args[j] = new
        return Call(e.fn, (dsl.zip(*args),))

    return _with_epilogue(core, x, cs, body, extras, rebuild, wrapped)


def _with_epilogue(core: Product, x: Var, cs, body, extras, rebuild, wrapped=False) -> Product:
    if core.post is not None:  # the core's own function first: E(g(x))
        g = core.post.f
        body = substitute(body, {x.name: substitute(g.body, {g.params[0].name: x})})
    return dataclasses.replace(core, epilogue=Epilogue(x, tuple(cs), body, tuple(extras), wrapped), rebuild=rebuild)


def _scalar_body(E, r: str, i0, x: Var, comps):
    """``(body, wrapped)``: ``E`` as a function of the dot product's value ``x`` and the other components,
    where ``E`` reads the product's one-element result by ``at(0, ...)`` (``wrapped`` False) or maps a
    function over it (``map(v -> G(v, r._1), r._0)``: ``wrapped``, each result a one-element array as the
    product's own); (None, False) otherwise."""
    target = Var(r) if i0 is None else dsl.get(Var(r), i0)
    if isinstance(E, Call) and type(E.fn) is P.Map and E.args[0] == target:
        f = E.fn.f
        inner = substitute(f.body, {f.params[0].name: x})
        return _replace_scalar(inner, r, i0, x, comps), True
    return _replace_scalar(E, r, i0, x, comps), False


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


def scalar_results(t, epi: Epilogue) -> bool:
    """``[M][N]T`` with ``T`` a scalar (``[T]1`` when the epilogue is ``wrapped``): results the tilings can
    write out one by one from their accumulators."""
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)):
        return False
    elem = t.elem.elem
    if epi.wrapped:
        if not (isinstance(elem, ArrayType) and elem.size == 1):
            return False
        elem = elem.elem
    return isinstance(elem, ScalarType)


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
