"""Normal forms before optimisation (Elevate: a normal form is a strategy too).

The vendor-class rules (``tile2DReduce``, ``stageTiles``, register blocking, split-K) match one shape of
a matrix product, ``map(a -> map(b -> dot(a, b), Bs), As)``, with at most a closed function after the dot
product.  Programs that compute the same thing are often written otherwise: the accumulator spelt
``acc + a * b`` or ``add(mult(b, a), acc)``; the product's result read by ``at(0, ...)`` in an epilogue
(``alpha * dot(row, col)[0] + beta * c``); the rows zipped with the rows of another array the epilogue
reads (``map(p -> .., zip(C, A))``); one product's result the operand of another.  The rules here bring
such programs to the shape the rules expect, and each is a small general rule, checked like every other
against the interpreter (tests/test_rules_normal.py):

- ``dotAccumulator``: ``add(acc, mult(x, y))`` and ``add(mult(x, y), acc)`` as a reduction's step are
  ``multAndSumUp(acc, x, y)`` (numpy and OpenCL both compute ``acc + x * y``);
- ``zipFlatten``: a map over ``zip(.., zip(Y0, .., Ym), ..)`` whose function reads the inner tuple only
  by its components maps over the flat zip;
- ``zipPrune``: the components of a zip a map's function never reads are left out of it;
- ``zipViewFusion``: a zip's component that is a map of a layout (``map(join, P)``) is read through the
  layout where the map's function reads it, so the zip pairs ``P`` itself;
- ``joinSingletons``: a map over ``join`` of one-element arrays (a row of dot products' results, joined)
  maps over the arrays and reads each by ``at(0, ...)``;
- ``dotFission``: a map whose function computes a dot product (or a row of them) and something around it
  becomes a map over the dot products zipped with the original elements (map fission through zip): at
  the inner level the dot product leaves the epilogue, at the outer level the row of dot products does,
  and what remains is ``epilogue(product, C)`` with ``product`` in the vendor-class shape;
- ``letOperand``: a computed array (another product's result) that a dot product reads is bound by a
  ``let`` at the top of the program, so that ``letGlobal`` makes it a kernel of its own and the product
  reading it is a product over an input;
- ``zip2DFusion``: a map over a 2D zip written as a map of zips (``map(r -> zip(r._0, r._1), zip(A, B))``)
  maps over the zip of rows and zips each row where it reads it (a stencil zipped with other arrays, in
  the shape ``tileZip2D`` tiles);
- ``letInvariant``: a computed array inside a loop's function that reads only the program's inputs is
  bound once by a ``let`` at the top (loop-invariant code motion: ``A^T (A x)`` with ``A x`` written
  inside the map over the columns);
- ``letView``: a view bound by ``let`` (a padded mask bound once for two sweeps) is read where it is used;
- ``letEpilogue``: a product bound by ``let`` and read once, by its epilogue, is inlined there (so the
  epilogue is written out by the product's tiles rather than by a second kernel);
- ``transposeTwice`` (``algorithmic.py``).

``normal_form`` applies them until none applies; ``explore``'s default strategy starts from its result
(a program already in the shape is left as it is, so its variants are the same).  The tilings apply an
epilogue as they write the tiles out (``epilogue.py``); the general work mappings, which want one nest per
kernel, start by fusing back what the fission took apart (``dotFusion``, the inverse of ``dotFission``).
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Var, fresh_name, primitive_functions, replace_functions, substitute
from ..ir.types import ArrayType
from ..ir.userfun import BUILTINS
from .algorithmic import transpose_twice
from .epilogue import match_product, product_core
from .patterns import is_call
from .positions import loop_positions, positions
from .rule import rule, try_rule
from .strategy import extend

ADD, MULT, MULT_AND_SUM_UP = BUILTINS["add"], BUILTINS["mult"], BUILTINS["multAndSumUp"]


def _is_map(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Map


def _builtin_call(e, f) -> bool:
    return isinstance(e, Call) and e.fn == f


# ------------------------------------------------------------------------------------- accumulators


@rule("dotAccumulator", "reduce((acc, p) -> add(acc, mult(p._i, p._j)) | add(mult(p._i, p._j), acc), init, zip(x, y)) => "
                        "reduce((acc, p) -> multAndSumUp(acc, p._i, p._j), init, zip(x, y))")
def dot_accumulator(e, site, ctx):
    """One spelling of a dot product's multiply-accumulate, the one the dot-product rules read
    (``_dot_reduce``, ``vectorizeReduce``): the same function, so the same results, exactly.  Only dot
    products (the two components of a zip of two arrays multiplied): other sums of products (an average's
    ``acc + v * 0.25``) keep their spelling, and their kernels."""
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce and is_call(e.args[1], P.Zip) and len(e.args[1].args) == 2):
        return None
    acc, p = e.fn.f.params
    body = e.fn.f.body
    if not _builtin_call(body, ADD):
        return None
    u, v = body.args
    if isinstance(u, Var) and u.name == acc.name and _builtin_call(v, MULT):
        prod = v
    elif isinstance(v, Var) and v.name == acc.name and _builtin_call(u, MULT):
        prod = u
    else:
        return None
    if sorted(g.fn.index for g in prod.args if _get_of(g, p.name)) != [0, 1]:
        return None
    return Call(P.Reduce(Lambda((acc, p), MULT_AND_SUM_UP(acc, *prod.args))), e.args)


# ------------------------------------------------------------------------------------- zips


def component_uses(node, name: str) -> set[tuple] | None:
    """How ``node`` reads the tuple ``name``: ``(i,)`` for ``get(name, i)``, ``(i, j)`` for
    ``get(get(name, i), j)``; None when it uses ``name`` whole."""
    out: set[tuple] = set()

    def walk(n) -> bool:
        if name not in n.free_vars:
            return True
        if isinstance(n, Var):
            return False
        if isinstance(n, Lambda):
            return name in {p.name for p in n.params} or walk(n.body)
        if _get_of(n, name):
            out.add((n.fn.index,))
            return True
        if is_call(n, P.Get) and _get_of(n.args[0], name):
            out.add((n.args[0].fn.index, n.fn.index))
            return True
        lams = [n.fn] if isinstance(n.fn, Lambda) else [lam for _, lam in primitive_functions(n.fn)] if isinstance(n.fn, P.Primitive) else []
        return all(walk(x) for x in lams + list(n.args))

    return out if walk(node) else None


def _get_of(n, name: str) -> bool:
    return is_call(n, P.Get) and isinstance(n.args[0], Var) and n.args[0].name == name


def replace_components(node, name: str, parts: dict):
    """``node`` with ``get(get(name, i), j)`` replaced by ``parts[(i, j)]`` and ``get(name, i)`` by
    ``parts[(i,)]`` (the longer chain first); the caller knows from ``component_uses`` that nothing else
    reads ``name``.  The replacements' variables are fresh, so nothing captures them."""

    def walk(n):
        if name not in n.free_vars:
            return n
        if isinstance(n, Lambda):
            if name in {p.name for p in n.params}:
                return n
            return Lambda(n.params, walk(n.body))
        if isinstance(n, Call):
            if is_call(n, P.Get) and _get_of(n.args[0], name) and (n.args[0].fn.index, n.fn.index) in parts:
                return parts[(n.args[0].fn.index, n.fn.index)]
            if _get_of(n, name) and (n.fn.index,) in parts:
                return parts[(n.fn.index,)]
            return _rebuilt(n, walk)
        return n

    return walk(node)


def _map_over_zip(e):
    if _is_map(e) and is_call(e.args[0], P.Zip):
        (p,) = e.fn.f.params
        return p, e.fn.f.body, e.args[0].args
    return None


@rule("zipFlatten", "map(p -> f(p._i._j, ..), zip(X.., zip(Y0, .., Ym), Z..)) => map(p -> f(p._(i+j), ..), zip(X.., Y0, .., Ym, Z..))")
def zip_flatten(e, site, ctx):
    """A zip nested in a zip, whose tuples the map's function only takes apart, is one flat zip."""
    m = _map_over_zip(e)
    if m is None:
        return None
    p, body, xs = m
    uses = component_uses(body, p.name)
    if uses is None:
        return None
    for i, x in enumerate(xs):
        if is_call(x, P.Zip) and (i,) not in uses and any(u[0] == i for u in uses):
            break
    else:
        return None
    k = len(x.args)
    q = Var(fresh_name(p.name.split("_")[0] or "p"))
    parts = {}
    for u in uses:
        if u[0] < i:
            parts[(u[0],)] = dsl.get(q, u[0])
        elif u[0] > i:
            parts[(u[0],)] = dsl.get(q, u[0] + k - 1)
        else:
            parts[u] = dsl.get(q, i + u[1])
    flat = xs[:i] + x.args + xs[i + 1:]
    return Call(P.Map(Lambda((q,), replace_components(body, p.name, parts))), (dsl.zip(*flat),))


@rule("zipPrune", "map(p -> f(p._i, p._j), zip(X0, .., Xk)) => map(p -> f(p._0, p._1), zip(Xi, Xj))")
def zip_prune(e, site, ctx):
    """The arrays of a zip that the map's function never reads are left out (a zip of one is that array):
    the rows of ``A`` zipped with the rows of ``C`` for an epilogue, once the product no longer reads
    ``C``.  The zip's equal lengths are the program's types', so nothing else changes."""
    m = _map_over_zip(e)
    if m is None:
        return None
    p, body, xs = m
    uses = component_uses(body, p.name)
    if uses is None:
        return None
    used = sorted({u[0] for u in uses})
    if not used or len(used) == len(xs):
        return None
    q = Var(fresh_name(p.name.split("_")[0] or "p"))
    if len(used) == 1:
        parts = {(used[0],): q}
        arg = xs[used[0]]
    else:
        parts = {(j,): dsl.get(q, n) for n, j in enumerate(used)}
        arg = dsl.zip(*[xs[j] for j in used])
    return Call(P.Map(Lambda((q,), replace_components(body, p.name, parts))), (arg,))


def _ones(site, x) -> bool:
    """``x`` an array of one-element arrays (a row of dot products' results)."""
    t = site.type_of(x)
    return isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and t.elem.size == 1


@rule("joinSingletons", "map(y -> f(y), join(X)) => map(x -> f(at(0, x)), X);  map(q -> f(q._i), zip(.., join(X), ..)) => "
                        "map(q -> f(at(0, q._i)), zip(.., X, ..)), X's elements one-element arrays")
def join_singletons(e, site, ctx):
    """The one-element results of a row of reductions joined into a row of values are the same values
    read by ``at(0, ...)``: ``join(map(b -> dot(a, b), Bs))`` read elementwise is the row of dot products
    itself, which ``dotFission`` can then take out of the map."""
    if not _is_map(e):
        return None
    (y,) = e.fn.f.params
    body, xs = e.fn.f.body, e.args[0]
    if is_call(xs, P.Join) and _ones(site, xs.args[0]):
        x = Var(fresh_name(y.name.split("_")[0] or "x"))
        return dsl.map(Lambda((x,), substitute(body, {y.name: dsl.at(0, x)})), xs.args[0])
    if not is_call(xs, P.Zip):
        return None
    i = next((i for i, a in enumerate(xs.args) if is_call(a, P.Join) and _ones(site, a.args[0])), None)
    if i is None or component_uses(body, y.name) is None:
        return None
    q = Var(fresh_name(y.name.split("_")[0] or "q"))
    parts = {(j,): dsl.get(q, j) for j in range(len(xs.args))}
    parts[(i,)] = dsl.at(0, dsl.get(q, i))
    args = list(xs.args)
    args[i] = xs.args[i].args[0]
    return dsl.map(Lambda((q,), replace_components(body, y.name, parts)), dsl.zip(*args))


@rule("zipViewFusion", "map(q -> f(q._i), zip(.., map(x -> v(x), X), ..)) => map(q -> f(v(q._i)), zip(.., X, ..)), "
                       "v a layout (a view: nothing computed twice)")
def zip_view_fusion(e, site, ctx):
    """A component of a zip that is a map of a layout function (``map(join, P)``: a product's rows of
    one-element results, joined) is read through that layout where the map's function reads it: the zip
    then pairs the product itself, and ``joinSingletons`` reads its one-element results by ``at(0, ...)``
    there.  Only a layout moves (a view costs nothing to apply again), so no computation is duplicated."""
    m = _map_over_zip(e)
    if m is None:
        return None
    p, body, xs = m
    i = next((i for i, x in enumerate(xs) if _is_map(x) and len(x.fn.f.params) == 1 and is_view(x.fn.f.body)
              and x.fn.f.body.free_vars <= {x.fn.f.params[0].name}), None)
    if i is None or component_uses(body, p.name) is None:
        return None
    (v,) = xs[i].fn.f.params
    q = Var(fresh_name(p.name.split("_")[0] or "q"))
    parts = {(j,): dsl.get(q, j) for j in range(len(xs))}
    parts[(i,)] = substitute(xs[i].fn.f.body, {v.name: dsl.get(q, i)})
    args = list(xs)
    args[i] = xs[i].args[0]
    return Call(P.Map(Lambda((q,), replace_components(body, p.name, parts))), (dsl.zip(*args),))


@rule("zip2DFusion", "map(s -> F(s), map(r -> zip(V0(r), .., Vk(r)), zip(X0, .., Xk))) => "
                     "map(r -> F(zip(V0(r), .., Vk(r))), zip(X0, .., Xk)), each Vi a view of r")
def zip2D_fusion(e, site, ctx):
    """A 2D zip written as a map of zips (``zip2D(a, b)`` as ``map(r -> zip(r._0, r._1), zip(a, b))``)
    mapped over is a map over the zip of rows, each row zipping its components where it is read: the
    shape of a stencil zipped with other arrays that ``tileZip2D`` tiles.  Only a view of the row moves
    (nothing computed is duplicated, however often ``F`` reads it)."""
    if not (_is_map(e) and _is_map(e.args[0]) and is_call(e.args[0].args[0], P.Zip)):
        return None
    inner = e.args[0]
    (r,) = inner.fn.f.params
    b = inner.fn.f.body
    if not (is_call(b, P.Zip) and is_view(b) and b.free_vars <= {r.name}):
        return None
    (s,) = e.fn.f.params
    q = Var(fresh_name(r.name.split("_")[0] or "r"))
    return Call(P.Map(Lambda((q,), substitute(e.fn.f.body, {s.name: substitute(b, {r.name: q})}))), inner.args)


# ------------------------------------------------------------------------------------- fission


def is_dot(e) -> bool:
    """A dot product: ``reduce((acc, p) -> multAndSumUp(acc, p._i, p._j), init, zip(x, y))`` ({i, j} = {0, 1}).
    Not a reduction of chunks already zipped (``partialReduce``'s ``reduce(.., chunk)``): a product's row
    is a row of dot products of two arrays each."""
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce and is_call(e.args[1], P.Zip) and len(e.args[1].args) == 2):
        return False
    acc, p = e.fn.f.params
    b = e.fn.f.body
    return (_builtin_call(b, MULT_AND_SUM_UP) and isinstance(b.args[0], Var) and b.args[0].name == acc.name
            and sorted(g.fn.index for g in b.args[1:] if _get_of(g, p.name)) == [0, 1])


def _dot_or_closed_post(e) -> bool:
    return is_dot(e) or (_is_map(e) and not e.fn.f.free_vars and is_dot(e.args[0]))


def _is_row_of_dots(e) -> bool:
    """``map(b -> dot, ys)`` (a closed function after each dot product allowed): a product's row."""
    return _is_map(e) and _dot_or_closed_post(e.fn.f.body)


def _fission_candidate(body, x: str):
    """The first (pre-order) dot product or row of dot products in ``body`` that depends on ``x`` and on
    no variable bound inside ``body``."""

    def walk(n, bound):
        if isinstance(n, Lambda):
            return walk(n.body, bound | {p.name for p in n.params})
        if not isinstance(n, Call):
            return None
        if (is_dot(n) or _is_row_of_dots(n)) and x in n.free_vars and not (n.free_vars & bound):
            return n
        lams = [n.fn] if isinstance(n.fn, Lambda) else [lam for _, lam in primitive_functions(n.fn)] if isinstance(n.fn, P.Primitive) else []
        for c in lams + list(n.args):
            found = walk(c, bound)
            if found is not None:
                return found
        return None

    return walk(body, frozenset())


def _rebuilt(n: Call, walk) -> Call:
    """``n`` with ``walk`` applied to its function (a lambda, or a primitive's functions) and its arguments."""
    if isinstance(n.fn, Lambda):
        fn = walk(n.fn)
    elif isinstance(n.fn, P.Primitive):
        fn = replace_functions(n.fn, {k: walk(lam) for k, lam in primitive_functions(n.fn)})
    else:
        fn = n.fn
    return Call(fn, tuple(walk(a) for a in n.args))


def replace_term(node, target: Expr, new: Expr):
    """``node`` with every occurrence of ``target`` whose free variables are bound where ``target``'s
    are (none of them rebound on the way) replaced by ``new``."""
    names = target.free_vars

    def walk(n):
        if not (names <= n.free_vars):
            return n
        if n == target:
            return new
        if isinstance(n, Lambda):
            if names & {p.name for p in n.params}:
                return n
            return Lambda(n.params, walk(n.body))
        if isinstance(n, Call):
            return _rebuilt(n, walk)
        return n

    return walk(node)


@rule("dotFission", "map(x -> F(R(x), x), X) => map(q -> F(q._0, q._1), zip(map(x -> R(x), X), X)), "
                    "R a dot product or a row of them, F not R itself or a closed function of it")
def dot_fission(e, site, ctx):
    """Map fission through zip: the dot product (or the row of dot products) a map's function computes
    leaves what is done around it, which reads it from a zip beside the original element.  Applied at
    the inner map of ``alpha * dot(row, col)[0] + beta * c`` and then at the outer map, it leaves the
    product in the vendor-class shape and the epilogue a map over its result zipped with ``C``.  The
    map's input is read twice, so it must be a view (``letOperand`` binds a computed one first)."""
    if not _is_map(e) or not is_view(e.args[0]):
        return None
    (x,) = e.fn.f.params
    body = e.fn.f.body
    if _dot_or_closed_post(body) or _is_row_of_dots(body):
        return None  # the vendor-class shape already
    r = _fission_candidate(body, x.name)
    if r is None:
        return None
    q = Var(fresh_name("q"))
    rest = substitute(replace_term(body, r, dsl.get(q, 0)), {x.name: dsl.get(q, 1)})
    return dsl.map(Lambda((q,), rest), dsl.zip(Call(P.Map(Lambda((x,), r)), e.args), e.args[0]))


def _dot_map(z) -> bool:
    """``map(x -> R, X)`` with ``R`` a dot product or a row of them: what ``dotFission`` takes out."""
    return _is_map(z) and (_dot_or_closed_post(z.fn.f.body) or _is_row_of_dots(z.fn.f.body))


@rule("dotFusion", "map(q -> F(q._0, q._1), zip(map(x -> R(x), X), Y)) => map(p -> F(R(p._0), p._1), zip(X, Y)); "
                   "map(q -> F(q), map(x -> R(x), X)) => map(x -> F(R(x)), X)")
def dot_fusion(e, site, ctx):
    """The inverse of ``dotFission`` (map fusion through zip): a map over dot products (or rows of them),
    alone or zipped with other arrays, computes each where its consumer reads it.  The general work
    mappings want one nest per kernel, so their stages start by fusing back what the normal form took
    apart; twice, at the outer and the inner map, it puts an epilogue back around its dot product."""
    if not _is_map(e):
        return None
    (q,) = e.fn.f.params
    body, z = e.fn.f.body, e.args[0]
    if _dot_map(z):
        (x,) = z.fn.f.params
        y = Var(fresh_name(x.name.split("_")[0] or "x"))
        return dsl.map(Lambda((y,), substitute(body, {q.name: substitute(z.fn.f.body, {x.name: y})})), z.args[0])
    if not is_call(z, P.Zip):
        return None
    j = next((i for i, zi in enumerate(z.args) if _dot_map(zi)), None)
    if j is None or component_uses(body, q.name) is None:
        return None
    p = Var(fresh_name("p"))
    (x,) = z.args[j].fn.f.params
    parts = {(i,): dsl.get(p, i) for i in range(len(z.args))}
    parts[(j,)] = substitute(z.args[j].fn.f.body, {x.name: dsl.get(p, j)})
    args = list(z.args)
    args[j] = z.args[j].args[0]
    return dsl.map(Lambda((p,), replace_components(body, q.name, parts)), dsl.zip(*args))


# ------------------------------------------------------------------------------------- operands


def _computed_part(x: Expr):
    """The first computed (not a view) array under the layout primitives of a map's input, or None."""
    if is_view(x):
        return None
    if isinstance(x, Call) and ((isinstance(x.fn, P.Primitive) and x.fn.kind == "layout") or (_is_map(x) and is_view(x.fn.f.body))):
        for a in x.args:
            c = _computed_part(a)
            if c is not None:
                return c
    return x


def _reads_dot(body, x: str) -> bool:
    return any(is_dot(n) and x in n.free_vars for _, n in positions(body))


@rule("letOperand", "P[map(x -> F(dot(x, ..)), V(c))] => let(v -> P[map(x -> F(dot(x, ..)), V(v))], c), c computed", "memory")
def let_operand(e, site, ctx):
    """A computed array that a map over dot products reads (another product's result: ``(A B) C``) is
    bound at the top of the program, where ``letGlobal`` makes it a kernel of its own: every work-group
    of the product reading it reads tiles of any of its rows, which no work-item of the same kernel could
    have computed.  Only arrays of the program's inputs (no variable bound inside the program) move."""
    if site.path:
        return None
    inputs = {p.name for p in site.program.params}
    for _, sub in positions(e):
        if not _is_map(sub):
            continue
        (x,) = sub.fn.f.params
        c = _computed_part(sub.args[0])
        if c is None or not c.free_vars <= inputs or not _reads_dot(sub.fn.f.body, x.name):
            continue
        v = Var(fresh_name("operand"))
        return dsl.let(Lambda((v,), replace_term(e, c, v)), c)
    return None


def _invariant_part(e, inputs: frozenset):
    """The first (outermost) computed array under a loop's function in ``e`` that reads nothing but the
    program's inputs, or None."""
    return next((n for n, loop in loop_positions(e) if loop and (_is_map(n) or is_call(n, P.Reduce)) and n.free_vars
                 and n.free_vars <= inputs and not is_view(n)), None)


@rule("letInvariant", "P[map(x -> F[c], X)] => let(v -> P[map(x -> F[v], X)], c), c computed from inputs only", "memory")
def let_invariant(e, site, ctx):
    """A computed array inside a loop's function that reads only the program's inputs (``A^T (A x)`` written
    with ``A x`` inside the map over A's columns) is the same array at every iteration: it is bound once at
    the top of the program, where ``letGlobal`` makes it a kernel of its own, instead of being recomputed
    by every work-item (loop-invariant code motion; the spelling with ``let`` is the same program)."""
    if site.path:
        return None
    c = _invariant_part(e, frozenset(p.name for p in site.program.params))
    if c is None:
        return None
    v = Var(fresh_name("invariant"))
    return dsl.let(Lambda((v,), replace_term(e, c, v)), c)


def _occurrences(node, name: str) -> int:
    """How many times the variable ``name`` is read in ``node`` (not counting where a lambda rebinds it)."""
    if name not in node.free_vars:
        return 0
    if isinstance(node, Var):
        return 1
    if isinstance(node, Lambda):
        return _occurrences(node.body, name)
    lams = [node.fn] if isinstance(node.fn, Lambda) else [lam for _, lam in primitive_functions(node.fn)] if isinstance(node.fn, P.Primitive) else []
    return sum(_occurrences(x, name) for x in lams + list(node.args))


@rule("letEpilogue", "let(P -> epilogue(P, C..), product) => epilogue(product, C..)")
def let_epilogue(e, site, ctx):
    """A product bound by ``let`` and read once, by an epilogue over it (``epilogue.py``), is that epilogue
    over the product itself: the tilings then write the epilogue out from their accumulators instead of
    writing the product to memory for a second kernel to read back."""
    if not (is_call(e, P.Let) and product_core(e.args[0]) is not None):
        return None
    (v,) = e.fn.f.params
    body, value = e.fn.f.body, e.args[0]
    if _occurrences(body, v.name) != 1:
        return None
    inlined = substitute(body, {v.name: value})
    found = match_product(inlined)
    if found is None or found.epilogue is None or found.core != value:
        return None
    return inlined


@rule("letView", "let(v -> body, V) => body[v := V], V a view")
def let_view(e, site, ctx):
    """A view bound by ``let`` (a mask of ones padded with zeros, a transposed input) is read where the
    body reads it: a view costs no memory and no code, so nothing is computed twice, and the body's
    computed arrays are bound by the first ``let`` left, where ``letGlobal`` looks (a mask bound around
    two sweeps kept the first sweep's ``let`` from becoming a kernel of its own: no variant compiled)."""
    if not (is_call(e, P.Let) and is_view(e.args[0])):
        return None
    (v,) = e.fn.f.params
    return substitute(e.fn.f.body, {v.name: e.args[0]})


NORMAL_RULES = [let_view, let_operand, let_invariant, dot_accumulator, transpose_twice, zip_flatten, zip_prune, zip_view_fusion, join_singletons,
                let_epilogue, dot_fission, zip2D_fusion]


def normal_form(rules=None, limit: int = 500):
    """The strategy that applies ``rules`` (``NORMAL_RULES``) until none applies: at each step the first
    rule that applies at the first position (pre-order), as Elevate's ``normalize``."""
    rules = NORMAL_RULES if rules is None else rules

    def step(v):
        for path, _ in positions(v.program.body):
            for r in rules:
                rw = try_rule(v.program, r, path)
                if rw is not None:
                    return extend(v, rw)
        return None

    def go(v):
        for _ in range(limit):
            nxt = step(v)
            if nxt is None:
                return [v]
            v = nxt
        raise RuntimeError(f"the normal form was not reached within {limit} steps")

    return go
