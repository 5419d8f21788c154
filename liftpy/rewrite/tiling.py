"""Two-level tiling of a map of maps over a dot product (the shape of a matrix product, and of a
convolution read as one).

    map(a -> map(b -> reduce(acc + a_k * b_k, 0, zip(a, b)), Bs), As)
      => untile2D(map(at -> map(bt -> tile(at, bt), split(n, Bs)), split(m, As)))

    tile(at, bt) = untile2D(map(map(map(map(id))),                          -- write the accumulators out
                     join(reduce(step, map(map(map(map(id))), 0),          -- [m/r1][n/r2][r1][r2] zeros
                                 zip(chunks(at), chunks(bt))))))           -- k-chunks: ([m][k], [n][k])
    step(acc, (ac, bc)) = map((accRow, ab) -> map((accBlock, bb) ->
                              join(reduce(update, accBlock, zip(transpose(ab), transpose(bb)))),
                            zip(accRow, split(r2, bc))), zip(acc, split(r1, ac)))

This is the tiling of Lift's matrix-multiplication derivations (Remmelg et al., GPGPU'16; Steuwer et al.,
CASES'16): the m x n tile of results a work-group computes is accumulated over chunks of k elements of
the reduction, so that the chunks of ``As`` and ``Bs`` a step reads can be staged in local memory once for
the whole group (``stageTiles``), and each work-item keeps an r1 x r2 block of accumulators in registers
(the register blocking of ``registerBlock2D``, one level down).  The accumulator is laid out block by
block, ``[m/r1][n/r2][r1][r2]``, so the maps over its two outer dimensions are exactly the work-items of
a group (lowering maps them with ``mapLcl``), in the initialisation, in every step and in the write-out.

The reduction is exact: each accumulator sums its own products in the original order of k, only grouped
in chunks.  The copies (``map(id)``) are identities; they are there so that lowering can give the
initialisation and the write-out to the same work-items as the steps.

Every rule here also takes a product with an epilogue (``epilogue.py``: ``alpha * (A B) + beta * C``,
the normal form ``normal.py`` brings such programs to): the write-out applies it to each result, reading
the other arrays' tiles dealt to the work-items as the accumulators are; split-K applies it in its sum
kernel; padK leaves it where it is.
"""

from __future__ import annotations

import dataclasses

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.primitives import divisible
from ..ir.expr import Call, Expr, Literal, Var, substitute
from ..ir.types import Array, ArrayType, Float
from .algorithmic import untile2D
from .blocking import ADD, MULT_AND_SUM_UP
from .epilogue import blocks_of, match_product, scalar_results, zip_map4
from .rule import rule


def _copy4(x, f=None):
    """A copy of a 4-dimensional array, with ``f`` applied to every element on the way when given."""
    return dsl.map(lambda p: dsl.map(lambda q: dsl.map(lambda r: dsl.map(f or dsl.id, r), q), p), x)


def _biased_write_out(acc, inits, others: list, then):
    """``then(acc + init[, c1, ..])`` for every element of the ``[m/r1][n/r2][r1][r2]`` accumulators, with
    ``inits`` the ``[n/r2][r2]`` initial values of the block columns and ``others`` arrays dealt as ``acc``
    (an epilogue's other arrays: a convolution's shortcut).  One nest, as the write-out is one loop over a
    work-item's block: a second map over the sums would need them stored first."""
    k = len(others)

    def zipped(first, rest):  # (no zip without other arrays: the plain bias's nest, as it always was)
        return dsl.zip(first, *rest) if k else first

    def own(t):  # the accumulators' part of a level zipped with the other arrays
        return dsl.get(t, 0) if k else t

    def others_of(t, first: int):
        return [dsl.get(t, first + i) for i in range(k)]

    def element(q):  # (sum, init, other arrays' elements ..)
        x = ADD(dsl.get(q, 0), dsl.get(q, 1))
        return then(x, others_of(q, 2)) if k else then(x)

    def block(p):  # (the accumulators' block [r1][r2], the inits of its columns [r2], other blocks [r1][r2] ..)
        return dsl.map(lambda row: dsl.map(element, dsl.zip(own(row), dsl.get(p, 1), *others_of(row, 1))),
                       zipped(dsl.get(p, 0), others_of(p, 2)))

    return dsl.map(lambda ar: dsl.map(block, dsl.zip(own(ar), inits, *others_of(ar, 1))), zipped(acc, others))


def _tile2D(e, site, ctx, strided: bool):
    found = match_product(e)
    if found is None:
        return None
    a, b, As, bs, form, post, epi = found.a, found.b, found.As, found.Bs, found.form, found.post, found.epilogue
    if isinstance(form.init, Literal) and form.init.value != 0:
        return None
    biased = not isinstance(form.init, Literal)  # the initial value of b (a convolution's bias)
    extras = epi.extras if epi is not None else ()
    if epi is not None and not scalar_results(site.type_of(e), epi):
        return None
    a_t, b_t = site.type_of(As), site.type_of(bs)
    if not (isinstance(a_t, ArrayType) and isinstance(b_t, ArrayType)):
        return None
    m, n, k = ctx.fresh("m"), ctx.fresh("n"), ctx.fresh("k")
    r1, r2 = ctx.fresh("r"), ctx.fresh("r")
    # The accumulator's type [m/r1][n/r2][r1][r2] needs whole blocks; the strided dealing, whole vectors.
    ctx.require(divisible(m, r1), f"a tile of {m} rows holds whole register blocks of {r1} rows ({m} % {r1} == 0)")
    ctx.require(divisible(n, r2), f"a tile of {n} columns holds whole register blocks of {r2} columns ({n} % {r2} == 0)")
    if strided:
        ctx.require(divisible(r2, 4), f"a register block of {r2} columns is dealt four at a time ({r2} % 4 == 0)")

    def of(v: Var, body: Expr, x):
        return substitute(body, {v.name: x})

    def chunks(v: Var, layout: Expr, t):
        rows = t if layout == v else dsl.map(lambda x: of(v, layout, x), t)
        return dsl.transpose(dsl.map(lambda row: dsl.split(k, row), rows))

    def update(acc, kp):
        return dsl.map(
            lambda pr: dsl.map(lambda pc: MULT_AND_SUM_UP(dsl.get(pc, 0), dsl.get(pr, 1), dsl.get(pc, 1)),
                               dsl.zip(dsl.get(pr, 0), dsl.get(kp, 1))),
            dsl.zip(acc, dsl.get(kp, 0)),
        )

    def columns(cols):
        if strided:  # item j: columns j*4 + c*4*(n/r2) + t, so neighbours read neighbouring float4s
            return dsl.map(dsl.join, dsl.transpose(dsl.split(n / r2, dsl.split(4, cols))))
        return dsl.split(r2, cols)

    def step(acc, kc):
        return dsl.map(
            lambda ra: dsl.map(
                lambda rb: dsl.join(dsl.reduce(update, dsl.get(rb, 0),
                                               dsl.zip(dsl.transpose(dsl.get(ra, 1)), dsl.transpose(dsl.get(rb, 1))))),
                dsl.zip(dsl.get(ra, 0), columns(dsl.get(kc, 1)))),
            dsl.zip(acc, dsl.split(r1, dsl.get(kc, 0))),
        )

    def untile(blocks):
        """[m/r1][n/r2][r1][r2] -> [m][n], undoing the dealing of rows and columns to work-items."""
        rows = dsl.join(dsl.map(dsl.transpose, blocks))  # [m][n/r2][r2]
        if strided:
            return dsl.map(lambda row: dsl.join(dsl.join(dsl.transpose(dsl.map(lambda blk: dsl.split(4, blk), row)))), rows)
        return dsl.map(dsl.join, rows)

    def tile(at, bt, cts=()):
        zeros = _copy4(Literal(0.0, Array(Float, m / r1, n / r2, r1, r2)))
        acc = dsl.join(dsl.reduce(step, zeros, dsl.zip(chunks(a, form.xa, at), chunks(b, form.xb, bt))))
        cts = [blocks_of(ct, r1, columns) for ct in cts]  # other arrays' tiles, dealt as the accumulators are
        if biased:
            # The initial values join after the products, in the write-out (equal up to rounding): each
            # work-item adds the values of its columns as it stores its block, then applies an epilogue.
            out = _biased_write_out(acc, columns(dsl.map(lambda x: of(b, form.init, x), bt)), cts, then)
        elif extras:
            # An epilogue reading other arrays at the same (i, j): each work-item applies it to its block,
            # with the same elements of the others, as it stores it.
            out = zip_map4(lambda x, *cs: then(x, cs), acc, cts)
        else:
            out = _copy4(acc, None if post is None and epi is None else then)
        return stored(untile(out))

    def stored(rows):
        """The reduction's result is [float]1 per element: one-element rows, as the original had (an
        epilogue's results are scalars, unless it maps over that one-element array)."""
        if epi is not None and not epi.wrapped:
            return rows
        return dsl.map(lambda row: dsl.split(1, row), rows)

    def then(x, cs=()):
        """A function after the dot product (a ReLU, an epilogue) applied to a result as the tile writes it out."""
        if epi is not None:
            return epi.apply(x, cs)
        return x if post is None else substitute(post.f.body, {post.f.params[0].name: x})

    if extras:
        others = range(1, len(extras) + 1)  # (not k: the closures above read the chunk size k)

        def row_of_tiles(ta):
            cols = [dsl.transpose(dsl.map(lambda row: dsl.split(n, row), dsl.get(ta, i))) for i in others]
            return dsl.map(lambda tb: tile(dsl.get(ta, 0), dsl.get(tb, 0), [dsl.get(tb, i) for i in others]),
                           dsl.zip(dsl.split(n, bs), *cols))

        return untile2D(dsl.map(row_of_tiles, dsl.zip(dsl.split(m, As), *[dsl.split(m, c) for c in extras])))
    return untile2D(dsl.map(lambda at: dsl.map(lambda bt: tile(at, bt), dsl.split(n, bs)), dsl.split(m, As)))


@rule(
    "tile2DReduce",
    "map(a -> map(b -> dot(a, b), Bs), As) => untile2D(map(at -> map(bt -> reduce over k-chunks of "
    "[m/r1][n/r2][r1][r2] register blocks, split(n, Bs)), split(m, As)))",
)
def tile2D_reduce(e, site, ctx):
    return _tile2D(e, site, ctx, strided=False)


@rule(
    "tile2DReduceStrided",
    "map(a -> map(b -> dot(a, b), Bs), As) => tile2DReduce with the n columns of a tile dealt to the "
    "work-items four at a time (item j: j*4 + c*4*(n/r2) + t)",
)
def tile2D_reduce_strided(e, site, ctx):
    """As ``tile2DReduce``, but a work-item's r2 columns are not contiguous: neighbouring work-items read
    neighbouring float4s of a k-row of the B tile in local memory, free of bank conflicts (the register
    blocking of vendor SGEMM kernels, ``shared/research/h100-anchors.md``)."""
    return _tile2D(e, site, ctx, strided=True)


def _after(post, x: Expr) -> Expr:
    """``post`` (the ``map`` of the function after a dot product) applied to a dot product's result ``x``."""
    return x if post is None else Call(post, (x,))


def _top_dot_products(e):
    """``(rebuild, product)`` where ``e`` is a product or an epilogue over one (``epilogue.match_product``)
    under layout primitives (``rebuild`` puts them back around a new expression), else None: what split-K
    and padK rewrite."""
    rebuild, core = _peel_layouts(e)
    found = match_product(core)
    return None if found is None else (rebuild, found)


def _peel_layouts(e):
    """``C[x]`` for a chain of one-argument layout primitives (and maps of layout functions) C above x:
    (a function rebuilding C around a new x, x)."""
    if isinstance(e, Call) and len(e.args) == 1 and (
        (isinstance(e.fn, P.Primitive) and e.fn.kind == "layout") or (type(e.fn) is P.Map and is_view(e.fn.f.body))
    ):
        rebuild, inner = _peel_layouts(e.args[0])
        return (lambda x, fn=e.fn, rebuild=rebuild: Call(fn, (rebuild(x),))), inner
    return (lambda x: x), e


@rule(
    "splitK",
    "map(a -> map(b -> dot(a, b), Bs), As) => let(P -> map2D(sum over s, P), toGlobal(map(s -> map(a -> map(b -> "
    "dot(a_s, b_s), Bs_s), As_s), chunks of ks)))",
)
def split_k(e, site, ctx):
    """Split reduction across work-groups (split-K): the reduction of each dot product is cut into chunks of
    ``ks`` elements; a first kernel computes the partial products of every chunk (each chunk's matrix
    product is a map of maps over dot products again, so the tiling rules apply to it, and the chunks are
    one more dimension of work-groups), writing [K/ks][M][N] partial results to global memory; a second
    kernel sums them, adding the initial value (a convolution's bias) once.  It pays the memory of the
    partials for parallelism when M x N has too few tiles to fill the device (the deep layers of VGG-16,
    a matrix product with a long K).  Applies at the top of a program, under layout primitives only."""
    if site.path:
        return None
    found = _top_dot_products(e)
    if found is None:
        return None
    rebuild, prod = found
    form, post, epi = prod.form, prod.post, prod.epilogue
    if isinstance(form.init, Literal) and form.init.value != 0:
        return None
    a, b, As, Bs = prod.a, prod.b, prod.As, prod.Bs
    ks = ctx.fresh("ks")
    partials = dsl.map(
        lambda sp: dsl.map(lambda ra: dsl.map(lambda rb: _dot(ra, rb), dsl.get(sp, 1)), dsl.get(sp, 0)),
        dsl.zip(_chunks(a, form.xa, As, ks), _chunks(b, form.xb, Bs, ks)),
    )  # [K/ks][M][N][1]
    # The bound name's hint is part of the variant's id (stores key points by it): it stays P_, whose
    # buffer the kernels call P.  A function after the dot product (ReLU, an epilogue) is applied in the sum kernel.
    return dsl.let(lambda P_: rebuild(_summed(P_, Bs, b, form, post, epi)), dsl.toGlobal(partials))


@rule(
    "splitKGroups",
    "map(g -> map(a -> map(b -> dot(a, b), Bs(g)), As(g)), Gs) => let(P -> map(g -> sum over s, zip(split(S, P), Gs)), "
    "toGlobal(map(p -> map(a -> map(b -> dot(a, b), p._1), p._0), join(map(g -> zip(chunks of As(g), chunks of Bs(g)), Gs)))))",
)
def split_k_groups(e, site, ctx):
    """Split-K of a grouped product (a grouped convolution after ``groupsOut``: one matrix product per group):
    every group's reduction cut into chunks of ``ks`` as ``splitK`` cuts one product's, and the chunks of all
    groups one array of [G * K/ks] pairs of chunks (a view, ``join``), so that the first kernel has the
    chunks of every group as one dimension of work-groups beside the two of the tiles (OpenCL has three,
    and the groups and the chunks would be two); the second kernel sums each group's chunks
    (``split`` of the partials back into groups) and adds the bias once.  Applies at the top of a program,
    under layout primitives only."""
    if site.path:
        return None
    rebuild, outer = _peel_layouts(e)
    if not (isinstance(outer, Call) and type(outer.fn) is P.Map and len(outer.args) == 1):
        return None
    (g,) = outer.fn.f.params
    body = outer.fn.f.body
    found = _top_dot_products(body)
    if found is None or found[1].core is not body:
        return None  # layouts between the groups and their products, or an epilogue
    prod = found[1]
    form, post = prod.form, prod.post
    if isinstance(form.init, Literal) and form.init.value != 0:
        return None
    a, b, As, Bs, Gs = prod.a, prod.b, prod.As, prod.Bs, outer.args[0]
    ks = ctx.fresh("ks")

    def of(v: Var, x: Expr, value):
        return substitute(x, {v.name: value})

    pairs = dsl.join(dsl.map(lambda gv: dsl.zip(_chunks(a, form.xa, of(g, As, gv), ks), _chunks(b, form.xb, of(g, Bs, gv), ks)), Gs))
    partials = dsl.map(
        lambda sp: dsl.map(lambda ra: dsl.map(lambda rb: _dot(ra, rb), dsl.get(sp, 1)), dsl.get(sp, 0)), pairs,
    )  # [G * K/ks][M][N][1]
    chunks = site.type_of(pairs).size / site.type_of(Gs).size  # K/ks of one group

    def total(P_):
        return dsl.map(lambda pg: _summed(dsl.get(pg, 0), of(g, Bs, dsl.get(pg, 1)), b, form, post),
                       dsl.zip(dsl.split(chunks, P_), Gs))

    return dsl.let(lambda P_: rebuild(total(P_)), dsl.toGlobal(partials))


def _chunks(v: Var, layout: Expr, xs: Expr, ks) -> Expr:
    """The rows ``layout(x)`` of ``xs`` cut into chunks of ``ks``, chunk-major: [K/ks][len][ks] (a view)."""
    rows = xs if layout == v else dsl.map(lambda x: substitute(layout, {v.name: x}), xs)
    return dsl.transpose(dsl.map(lambda row: dsl.split(ks, row), rows))


def _dot(x: Expr, y: Expr) -> Expr:
    return dsl.reduce(lambda acc, p: MULT_AND_SUM_UP(acc, dsl.get(p, 0), dsl.get(p, 1)), Literal(0.0, Float), dsl.zip(x, y))


def _summed(P_: Expr, Bs: Expr, b: Var, form, post, epi=None) -> Expr:
    """The partial products [K/ks][M][N][1] of one product summed over the chunks, the reduction's initial
    value (a bias, a function of ``b``'s element of ``Bs``) added once and ``post`` (a ReLU) applied: [M][N][1];
    or with an epilogue, the epilogue of each sum and the other arrays' elements: [M][N]."""
    by_element = dsl.map(dsl.transpose, dsl.transpose(dsl.map(lambda plane: dsl.map(dsl.join, plane), P_)))  # [M][N][K/ks]

    def summed(col, bv):
        init = Literal(0.0, Float) if isinstance(form.init, Literal) else substitute(form.init, {b.name: bv})
        return dsl.reduce(lambda acc, x: ADD(acc, x), init, col)

    if epi is not None:
        k = len(epi.extras)

        def element(q):
            total, cs = summed(dsl.get(q, 0), dsl.get(q, 1)), [dsl.get(q, i) for i in range(2, k + 2)]
            if epi.wrapped:
                return dsl.map(lambda x: epi.apply(x, cs), total)
            return epi.apply(dsl.at(0, total), cs)

        if not k:
            return dsl.map(lambda row: dsl.map(element, dsl.zip(row, Bs)), by_element)
        return dsl.map(lambda rq: dsl.map(element, dsl.zip(dsl.get(rq, 0), Bs, *[dsl.get(rq, i) for i in range(1, k + 1)])),
                       dsl.zip(by_element, *epi.extras))
    return dsl.map(lambda row: dsl.map(lambda q: _after(post, summed(dsl.get(q, 0), dsl.get(q, 1))), dsl.zip(row, Bs)),
                   by_element)


PAD_K_MAX = 7  # at most this many zeros: enough to reach a multiple of 8 (a k step, two float4s)


@rule(
    "padK",
    "map(a -> map(b -> reduce(+*, init, zip(xa, xb)), Bs), As) => the same over zip(pad(0, kp, 0, xa), "
    "pad(0, kp, 0, xb)), 0 <= kp <= 7",
)
def pad_k(e, site, ctx):
    """Both operands of every dot product padded with ``kp`` zeros, as views (nothing is copied; a read
    past the end is the constant): a reduction of K = C*KH*KW terms that no tile or vector width divides
    (K = 27 for a first convolution layer) becomes one of K + kp terms that k steps of 4 or 8 divide,
    instead of leaving only the tiles that divide 27.  The added products are 0 * 0, so the sums are
    unchanged, in the same order.  Applies under layout primitives only, like the tilings after it (and
    keeps a function after the dot product, a ReLU, where it was)."""
    found = _top_dot_products(e)
    if found is None:
        return None
    rebuild, prod = found
    core, post = prod.core, prod.post
    inner = core.fn.f.body
    red = inner.fn.f.body if post is None else inner.fn.f.body.args[0]
    kp = ctx.fresh("kp", lo=0)
    ctx.require(kp <= PAD_K_MAX, f"at most {PAD_K_MAX} zeros pad the reduction ({kp} <= {PAD_K_MAX})")
    init, xs = red.args
    padded = Call(red.fn, (init, dsl.zip(*[dsl.pad(0, kp, 0.0, x) for x in xs.args])))
    return rebuild(prod.rebuild(_with_body(core, _with_body(inner, _after(post, padded)))))


def _with_body(call: Call, body: Expr) -> Call:
    """``map(f, xs)`` with ``f``'s body replaced."""
    return Call(dataclasses.replace(call.fn, f=dataclasses.replace(call.fn.f, body=body)), call.args)


TILING_RULES = [tile2D_reduce, tile2D_reduce_strided, split_k, split_k_groups, pad_k]
