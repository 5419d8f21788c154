"""Algorithmic rewrite rules: they change how a result is computed, never what.

Each rule is a small function over the sub-expression at one position (see ``liftpy.rewrite.rule``).  The
equation in each decorator is the rule in Lift notation; ``f . g`` is composition, ``n`` a fresh tuning
parameter.  Every rule has a property test (tests/test_rules.py) comparing the interpreter's results
before and after on random programs, sizes, parameter values and inputs.
"""

from __future__ import annotations

import sympy

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Lambda, Literal, Var, apply_lambda, fresh_name, primitive_functions, rename_bound, replace_functions
from ..ir.types import ArrayType, Float, ScalarType, VectorType
from ..ir.userfun import BUILTINS, T, UserFun, vectorize
from .patterns import ADD, DOT, eta_userfun, is_call, match_map2D, match_slide2D, sum_form
from .rule import rule
from .strategy import Strategy, choice, once


def _is_map(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Map


def _is_reduce(e) -> bool:
    return isinstance(e, Call) and type(e.fn) is P.Reduce


@rule("mapFusion", "map(f, map(g, x)) => map(f . g, x)")
def map_fusion(e, site, ctx):
    if isinstance(e, Call) and isinstance(e.fn, (P.Map, P.MapSeq)) and isinstance(e.args[0], Call):
        inner = e.args[0]
        if type(inner.fn) is type(e.fn) and getattr(inner.fn, "unroll", False) == getattr(e.fn, "unroll", False):
            y = Var(fresh_name("y"))
            body = apply_lambda(e.fn.f, [apply_lambda(inner.fn.f, [y])])
            return Call(P.Map(Lambda((y,), body)) if type(e.fn) is P.Map else P.MapSeq(Lambda((y,), body), e.fn.unroll), inner.args)
    return None


@rule("mapFission", "map(y -> f(g(y), .., g(y)), x) => map(z -> f(z, .., z), map(g, x))")
def map_fission(e, site, ctx):
    if not _is_map(e):
        return None
    (y,) = e.fn.f.params
    b = e.fn.f.body
    if not isinstance(b, Call) or isinstance(b.fn, Lambda):
        return None
    fn_free = set()
    if isinstance(b.fn, P.Primitive):
        for _, lam in primitive_functions(b.fn):
            fn_free |= lam.free_vars
    # The arguments that depend on y must all be the same expression g(y); it is computed by the first map.
    dep = [i for i, a in enumerate(b.args) if y.name in a.free_vars]
    if not dep or y.name in fn_free or any(b.args[i] != b.args[dep[0]] for i in dep):
        return None
    inner = b.args[dep[0]]
    if isinstance(inner, Var):
        return None
    z = Var(fresh_name("z"))
    args = [z if i in dep else a for i, a in enumerate(b.args)]
    return Call(P.Map(Lambda((z,), Call(b.fn, tuple(args)))), (Call(P.Map(Lambda((y,), inner)), e.args),))


@rule("splitJoin", "map(f, x) => join(map(map(f), split(n, x)))")
def split_join(e, site, ctx):
    if not _is_map(e) or is_view(e.fn.f.body):
        return None
    n = ctx.fresh("s")
    f = e.fn.f
    return dsl.join(dsl.map(lambda chunk: Call(P.Map(rename_bound(f)), (chunk,)), dsl.split(n, e.args[0])))


@rule("splitStrided", "map(f, x) => join(transpose(map(mapSeq(f), transpose(split(n, x)))))")
def split_strided(e, site, ctx):
    """Several elements per work-item, as ``splitJoin``, but strided: iteration ``k`` of the outer map, one
    work-item's, takes elements ``k, k + n, k + 2n, ...`` in turn (``mapSeq``: the point of the rule), so
    neighbouring work-items read and write neighbouring elements at every step (coalesced on a GPU, where
    ``splitJoin``'s contiguous chunks put them a chunk apart)."""
    if not _is_map(e) or is_view(e.fn.f.body):
        return None
    n = ctx.fresh("s")
    f = e.fn.f
    return dsl.join(dsl.transpose(dsl.map(lambda col: Call(P.MapSeq(rename_bound(f)), (col,)),
                                          dsl.transpose(dsl.split(n, e.args[0])))))


@rule("partialReduce", "reduce(acc (+) h(x), init, xs) => reduce((+), init, join(map(reduce(acc (+) h(x), id), split(n, xs))))")
def partial_reduce(e, site, ctx):
    """Partial results of chunks, combined: for sums, maxima and minima ((+) is add, max or min; ``id`` its
    identity, 0 or the lowest or highest value)."""
    form = sum_form(e.fn.f) if _is_reduce(e) else None
    if form is None:
        return None
    init, xs = e.args
    t = site.type_of(init)
    if not isinstance(t, ScalarType):
        return None
    if is_call(xs, P.Join) and _is_map(xs.args[0]) and is_call(xs.args[0].args[0], P.Split):
        return None  # already split into partial reductions
    n = ctx.fresh("w")
    f = e.fn.f
    partial = dsl.join(dsl.map(lambda chunk: Call(P.Reduce(rename_bound(f)), (form.identity(t), chunk)), dsl.split(n, xs)))
    return Call(P.Reduce(dsl.as_lambda(lambda acc, s: form.op(acc, s), 2, "acc")), (init, partial))


@rule(
    "coalesce",
    "reduce(add, init, join(map(reduce(f, 0), split(n, xs)))) => "
    "reduce(add, init, join(map(reduce(f, 0), split(n, reorder(stride(len/n), xs)))))",
)
def coalesce(e, site, ctx):
    """Neighbouring work-items processing neighbouring chunks read neighbouring elements.  Valid because
    the chunks are only combined by a commutative operation (a sum, up to rounding; a maximum or minimum)."""
    if not _is_reduce(e) or sum_form(e.fn.f) is None:
        return None
    init, joined = e.args
    if not (is_call(joined, P.Join) and isinstance(joined.args[0], Call) and isinstance(joined.args[0].fn, P.MapLike)):
        return None
    mapped = joined.args[0]
    chunks = mapped.args[0]
    body = mapped.fn.f.body
    if not (is_call(chunks, P.Split) and isinstance(body, Call) and isinstance(body.fn, P.ReduceLike)):
        return None
    if sum_form(body.fn.f) is None or body.args[1] != mapped.fn.f.params[0]:
        return None
    xs = chunks.args[0]
    if is_call(xs, P.Reorder):
        return None
    length = site.type_of(xs).size
    reordered = dsl.reorder(P.Stride(length / chunks.fn.n), xs)
    return Call(e.fn, (init, dsl.join(Call(mapped.fn, (dsl.split(chunks.fn.n, reordered),)))))


@rule(
    "tile2D",
    "map2D(f, slide2D(n, s, x)) => untile2D(map2D(tile -> map2D(f, slide2D(n, s, tile)), slideStrict2D(u, u - (n - s), x)))",
)
def tile2D(e, site, ctx):
    """Tiling of a 2D stencil or convolution (Lift paper section 3.4.1): tiles of u x u overlap by the
    windows' overlap n - s, so each tile holds whole windows and the tiles together hold all of them."""
    m = match_map2D(e)
    if m is None:
        return None
    sl = match_slide2D(m.xs)
    if sl is None:
        return None
    if sl.size1 == sl.size2 and sl.step1 == sl.step2:
        u1 = u2 = ctx.fresh("t")
    else:
        u1, u2 = ctx.fresh("t"), ctx.fresh("t")
    tiles = dsl.slide2D((u1, u2), (u1 - sl.size1 + sl.step1, u2 - sl.size2 + sl.step2), sl.xs, strict=True)
    f = m.f
    per_tile = dsl.map2D(
        lambda tile: dsl.map2D(rename_bound(f), dsl.slide2D((sl.size1, sl.size2), (sl.step1, sl.step2), tile, strict=True)),
        tiles,
    )
    return untile2D(per_tile)


def untile2D(t):
    """[ty][tx][wy][wx] -> [ty*wy][tx*wx]."""
    return dsl.map(dsl.join, dsl.join(dsl.map(dsl.transpose, t)))


@rule("flattenMap2D", "map(r -> map(f, r), xs) => split(n, map(f, join(xs)))")
def flatten_map2D(e, site, ctx):
    """A map over the rows of a two-dimensional array, each mapping f over its row, is one map over the
    joined array, split back into rows: the windows of a convolution's output become the rows of a matrix
    product (the im2col view), without moving any data."""
    m = match_map2D(e)
    if m is None or is_view(m.f.body):
        return None
    xs_t = site.type_of(m.xs)
    if not (isinstance(xs_t, ArrayType) and isinstance(xs_t.elem, ArrayType)):
        return None
    return dsl.split(xs_t.elem.size, Call(P.Map(rename_bound(m.f)), (dsl.join(m.xs),)))


def _replace_gets(node, name: str, parts: dict):
    """``node`` with every ``get(name, j)`` replaced by ``parts[j]``; None where ``name`` is used any other way
    (passed whole, or ``j`` not in ``parts``).  Lambdas that bind ``name`` again are left alone."""
    if name not in node.free_vars:
        return node
    if isinstance(node, Var):
        return None
    if isinstance(node, Lambda):
        if any(p.name == name for p in node.params):
            return node
        body = _replace_gets(node.body, name, parts)
        return None if body is None else Lambda(node.params, body)
    if isinstance(node, Call):
        if isinstance(node.fn, P.Get) and isinstance(node.args[0], Var) and node.args[0].name == name:
            return parts.get(node.fn.index)
        if isinstance(node.fn, Lambda):
            fn = _replace_gets(node.fn, name, parts)
        else:
            new = {}
            for n, lam in primitive_functions(node.fn):
                new[n] = _replace_gets(lam, name, parts)
                if new[n] is None:
                    return None
            fn = replace_functions(node.fn, new)
        args = tuple(_replace_gets(a, name, parts) for a in node.args)
        if fn is None or any(a is None for a in args):
            return None
        return Call(fn, args)
    return node


@rule("groupsOut",
      "map(a -> join(map(g -> f(g._0, g._1, ..), zip(v(a), ys..))), as) => "
      "map(join, transpose(map(gz -> map(x -> f(x, gz._1, ..), gz._0), zip(transpose(map(v, as)), ys..))))")
def groups_out(e, site, ctx):
    """A grouped convolution's groups, moved outside its windows: for each window ``a`` and each group, the
    group's kernels (``ys``, free of ``a``) against the group's part of the window (``v(a)``, a view of it)
    become, for each group, the group's kernels against that part of every window, a matrix product per
    group that ``tile2DReduce`` tiles; the results are put back in window-major order by views
    (``transpose``, ``join``), not copied.  The body may use the group only through its components."""
    if not _is_map(e):
        return None
    (a,) = e.fn.f.params
    body = e.fn.f.body
    if not (is_call(body, P.Join) and _is_map(body.args[0])):
        return None
    inner = body.args[0]
    zipped = inner.args[0]
    if not (is_call(zipped, P.Zip) and len(zipped.args) >= 2):
        return None
    v, ys = zipped.args[0], zipped.args[1:]
    if a.name not in v.free_vars or any(a.name in y.free_vars for y in ys):
        return None
    (g,) = inner.fn.f.params
    gz, x = Var(fresh_name("gz")), Var(fresh_name("x"))
    per_group = _replace_gets(inner.fn.f.body, g.name, {0: x, **{j: dsl.get(gz, j) for j in range(1, len(zipped.args))}})
    if per_group is None or g.name in per_group.free_vars or a.name in per_group.free_vars:
        return None  # the group used whole, or the window itself beside its group's part
    parts = dsl.transpose(Call(P.Map(Lambda((a,), v)), e.args))
    grouped = Call(P.Map(Lambda((gz,), Call(P.Map(Lambda((x,), per_group)), (dsl.get(gz, 0),)))), (dsl.zip(parts, *ys),))
    return dsl.map(dsl.join, dsl.transpose(grouped))


@rule("splitZip", "split(n, zip(a, b)) => map(p -> zip(p._0, p._1), zip(split(n, a), split(n, b)))")
def split_zip(e, site, ctx):
    if not (is_call(e, P.Split) and is_call(e.args[0], P.Zip)):
        return None
    parts = e.args[0].args
    k = len(parts)
    return dsl.map(lambda p: dsl.zip(*[dsl.get(p, i) for i in range(k)]), dsl.zip(*[dsl.split(e.fn.n, a) for a in parts]))


@rule("joinZip", "join(map(p -> zip(p._0, p._1), zip(a, b))) => zip(join(a), join(b))")
def join_zip(e, site, ctx):
    if not (is_call(e, P.Join) and _is_map(e.args[0]) and is_call(e.args[0].args[0], P.Zip)):
        return None
    lam = e.args[0].fn.f
    zipped = e.args[0].args[0]
    b = lam.body
    (p,) = lam.params
    k = len(zipped.args)
    if not (is_call(b, P.Zip) and len(b.args) == k):
        return None
    for i, a in enumerate(b.args):
        if not (is_call(a, P.Get) and a.fn.index == i and a.args == (p,)):
            return None
    return dsl.zip(*[dsl.join(a) for a in zipped.args])


@rule("transposeTwice", "transpose(transpose(x)) => x")
def transpose_twice(e, site, ctx):
    if is_call(e, P.Transpose) and is_call(e.args[0], P.Transpose):
        return e.args[0].args[0]
    return None


@rule("joinSplit", "join(split(n, x)) => x")
def join_split(e, site, ctx):
    if is_call(e, P.Join) and is_call(e.args[0], P.Split):
        return e.args[0].args[0]
    return None


@rule("splitOfJoin", "split(n, join(x)) => x   when the rows of x have length n")
def split_of_join(e, site, ctx):
    if is_call(e, P.Split) and is_call(e.args[0], P.Join):
        x = e.args[0].args[0]
        inner = site.type_of(x).elem
        if isinstance(inner, ArrayType) and sympy.expand(inner.size - e.fn.n) == 0:
            return x
    return None


@rule("mapIdentity", "map(x -> x, xs) => xs")
def map_identity(e, site, ctx):
    if isinstance(e, Call) and isinstance(e.fn, P.MapLike):
        lam = e.fn.f
        uf = eta_userfun(lam)
        if (isinstance(lam.body, Var) and lam.body.name == lam.params[0].name) or (uf is not None and uf.name == "id" and uf.base is None):
            return e.args[0]
    return None


@rule("vectorizeMap", "map(f, xs) => asScalar(map(vectorize(v, f), asVector(v, xs)))")
def vectorize_map(e, site, ctx):
    if not _is_map(e):
        return None
    lam = e.fn.f
    uf = eta_userfun(lam)
    zipped = False
    if uf is None:
        # map(p -> f(p._0, p._1), zip(a, b))
        b = lam.body
        (p,) = lam.params
        if isinstance(b, Call) and hasattr(b.fn, "numpy") and is_call(e.args[0], P.Zip) and len(b.args) == len(e.args[0].args):
            if all(is_call(a, P.Get) and a.fn.index == i and a.args == (p,) for i, a in enumerate(b.args)):
                uf, zipped = b.fn, True
    if uf is None or uf.base is not None or uf.name in ("dot",):
        return None
    if uf.tree is None and BUILTINS.get(uf.name) is not uf:
        return None  # an OpenCL body the user wrote for scalars (an if, a scalar literal in ?:) may not build for vectors
    if not all(t == T or t == Float for t in list(uf.param_types) + [uf.result_type]):
        return None
    arrays = e.args[0].args if zipped else (e.args[0],)
    for a in arrays:
        at = site.type_of(a)
        if not (isinstance(at, ArrayType) and at.elem == Float):
            return None
    v = ctx.fresh("v")
    vuf = vectorize(v, uf)
    if zipped:
        vs = dsl.zip(*[dsl.asVector(v, a) for a in arrays])
        return dsl.asScalar(dsl.map(lambda q: vuf(*[dsl.get(q, i) for i in range(len(arrays))]), vs))
    return dsl.asScalar(dsl.map(vuf, dsl.asVector(v, arrays[0])))


@rule("vectorizeReduce", "reduce(acc + x.0 * x.1, init, zip(a, b)) => reduce(acc + dot(x.0, x.1), init, zip(asVector(v, a), asVector(v, b)))")
def vectorize_reduce(e, site, ctx):
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce):
        return None
    init, xs = e.args
    lam = e.fn.f
    acc, p = lam.params
    b = lam.body
    if not (isinstance(b, Call) and getattr(b.fn, "name", None) == "multAndSumUp" and getattr(b.fn, "base", 1) is None):
        return None
    if not (isinstance(b.args[0], Var) and b.args[0].name == acc.name):
        return None
    idx = []
    for a in b.args[1:]:
        if not (is_call(a, P.Get) and a.args == (p,)):
            return None
        idx.append(a.fn.index)
    if sorted(idx) != [0, 1] or not (is_call(xs, P.Zip) and len(xs.args) == 2):
        return None
    for a in xs.args:
        at = site.type_of(a)
        if not (isinstance(at, ArrayType) and at.elem == Float):
            return None
        if getattr(at.size, "is_Integer", False) and int(at.size) % 2:
            return None  # a known odd length (a 3x3 window's 9): neither float2 nor float4 divides it, no size can help
    if site.type_of(init) != Float:
        return None
    v = ctx.fresh("v")
    ctx.require(sympy.Contains(v, sympy.FiniteSet(2, 4)), f"OpenCL's dot takes float2 or float4, so {v} is 2 or 4")
    vs = dsl.zip(*[dsl.asVector(v, a) for a in xs.args])
    return Call(P.Reduce(dsl.as_lambda(lambda a, q: ADD(a, DOT(dsl.get(q, 0), dsl.get(q, 1))), 2, "acc")), (init, vs))


def _vectorize_sum(width: int, name: str):
    @rule(name, f"reduce(acc (+) h(x), init, xs) => reduce(acc (+) lanes(+)(h(q)), init, asVector({width}, xs))")
    def vectorize_sum(e, site, ctx):
        """A sum, maximum or minimum of floats, or of a function ``h`` of each (``_lanewise``), read ``width``
        at a time: float4 or float8 loads; from half storage half4 loads, or eight halves as one sixteen-byte
        word, NVIDIA's fastest ways of reading halves (``benchmarks/results/h200-halfconv.json``).  Each step
        computes ``h`` on the vector, combines the lanes pairwise, then the accumulator: the same values
        combined by the same operation in another order (exact for maxima and minima of an ``h`` of ``+ - *``,
        ``neg``, ``fabs``, ``max`` and ``min``; a device's vector ``sqrt``, ``exp`` or ``/`` may differ from
        its scalar one in the last bit; a sum up to rounding as ``partialReduce``'s).  (Eight lanes are
        ``vectorizeSumWide``: a rule name ending in a digit would read as a level's, ``features``.)"""
        if not (isinstance(e, Call) and type(e.fn) is P.Reduce):
            return None
        lam = e.fn.f
        form = sum_form(lam)
        if form is None or len(lam.body.args) != 2:  # (not multAndSumUp)
            return None
        item = _lanewise(lam.body.args[1], lam.params[1].name, width)  # x itself, or h(x) lane by lane
        if item is None:
            return None
        init, xs = e.args
        xt = site.type_of(xs)
        if site.type_of(init) != Float or not (isinstance(xt, ArrayType) and xt.elem == Float):
            return None
        if getattr(xt.size, "is_Integer", False) and int(xt.size) % width:
            return None  # a known length the width does not divide (a 3x3 window's 9)
        op, combine = form.op, BUILTINS[f"lane{_LANES[form.op.name]}{width}"]
        return Call(P.Reduce(dsl.as_lambda(lambda a, q: op(a, combine(item(q))), 2, "acc")), (init, dsl.asVector(width, xs)))

    return vectorize_sum


_LANES = {"add": "sum", "max": "max", "min": "min"}
# Element functions that OpenCL computes lane by lane on float vectors, as on floats.
_LANEWISE = ("add", "sub", "mult", "div", "neg", "max", "min", "fabs", "sqrt", "exp")


def _lanewise(item, x: str, width: int):
    """For the element ``item`` a reduction combines, an expression of the element ``x`` (``x`` itself,
    an average's ``x * 0.25f``, a sum of squares' ``x * x``): a function building the same expression of a
    vector ``q`` of ``width`` elements, float literals made vectors of that value; None where ``item``
    holds anything else (a user function the OpenCL compiler may not take on vectors, another variable)."""
    if isinstance(item, Var):
        return (lambda q: q) if item.name == x else None
    if isinstance(item, Literal):
        if item.type != Float:
            return None
        vector = Literal(item.value, VectorType(Float, width))
        return lambda q: vector
    if not (isinstance(item, Call) and isinstance(item.fn, UserFun)):
        return None
    fn = item.fn
    if fn.name not in _LANEWISE or BUILTINS.get(fn.name) is not fn:
        return None
    parts = [_lanewise(a, x, width) for a in item.args]
    if any(p is None for p in parts):
        return None
    return lambda q: Call(fn, tuple(p(q) for p in parts))


vectorize_sum = _vectorize_sum(4, "vectorizeSum")
vectorize_sum_wide = _vectorize_sum(8, "vectorizeSumWide")


def vectorize_reduction() -> Strategy:
    """A reduction read as vectors: a dot product's (``vectorizeReduce``), or a sum's, maximum's or minimum's
    four or eight lanes a step (``vectorizeSum``, ``vectorizeSumWide``)."""
    return choice(once(vectorize_reduce), once(vectorize_sum), once(vectorize_sum_wide))


ALGORITHMIC_RULES = [
    map_fusion,
    map_fission,
    split_join,
    flatten_map2D,
    groups_out,
    partial_reduce,
    coalesce,
    tile2D,
    split_zip,
    join_zip,
    transpose_twice,
    join_split,
    split_of_join,
    map_identity,
    split_strided,
    vectorize_map,
    vectorize_reduce,
    vectorize_sum,
    vectorize_sum_wide,
]
