"""Register blocking of a map of maps over a dot-product reduction (matrix multiplication's shape).

    map(a -> map(b -> reduce(acc + a_k * b_k, z, zip(a, b)), Bs), As)
      => untile2D(map(ac -> map(bc -> block(ac, bc), split(r2, Bs)), split(r1, As)))

where ``block`` computes an r1 x r2 block of results with the reduction outermost: one pass over k
updates all r1 * r2 accumulators from r1 values of A and r2 values of B, so each value read is reused r2
(or r1) times from registers.  The accumulator block is one private array; the interchange of the maps
and the reduction is exact because each accumulator still sums its own products in the same order.
"""

from __future__ import annotations

from ..ir import dsl
from ..ir.expr import Expr, Literal, Var, substitute
from ..ir.types import Array, ArrayType, Float
from ..ir.userfun import BUILTINS
from .algorithmic import untile2D
from .epilogue import MULT_AND_SUM_UP, match_product, scalar_results
from .rule import rule

ADD = BUILTINS["add"]


@rule("registerBlock2D", "map(a -> map(b -> dot(a, b), Bs), As) => untile2D(map(ac -> map(bc -> block(ac, bc), split(r2, Bs)), split(r1, As)))")
def register_block2D(e, site, ctx):
    """Also a product with an epilogue (``epilogue.py``): each block's sums go through it, with the same
    block of the other arrays it reads, as the block is stored."""
    found = match_product(e)
    if found is None or (found.post is not None and found.epilogue is None):
        return None
    a, b, As, bs, form, epi = found.a, found.b, found.As, found.Bs, found.form, found.epilogue
    extras = epi.extras if epi is not None else ()
    a_t, b_t = site.type_of(As), site.type_of(bs)
    if not (isinstance(a_t, ArrayType) and isinstance(b_t, ArrayType)):
        return None
    biased = not isinstance(form.init, Literal)
    if epi is not None and not scalar_results(site.type_of(e), epi):
        return None
    r1, r2 = ctx.fresh("r"), ctx.fresh("r")

    def update(acc, kp):
        return dsl.map(
            lambda pr: dsl.map(lambda pc: MULT_AND_SUM_UP(dsl.get(pc, 0), dsl.get(pr, 1), dsl.get(pc, 1)),
                               dsl.zip(dsl.get(pr, 0), dsl.get(kp, 1))),
            dsl.zip(acc, dsl.get(kp, 0)),
        )

    def of(v: Var, body: Expr, x):
        return substitute(body, {v.name: x})

    def block(ac, bc, cbs=()):
        zeros = Literal(0.0 if biased else form.init.value, Array(Float, r1, r2))
        xa = ac if form.xa == a else dsl.map(lambda x: of(a, form.xa, x), ac)
        xb = bc if form.xb == b else dsl.map(lambda x: of(b, form.xb, x), bc)
        sums = dsl.join(dsl.reduce(update, zeros, dsl.zip(dsl.transpose(xa), dsl.transpose(xb))))
        if biased:
            # The initial value joins after the products instead of before: equal up to rounding.
            inits = dsl.map(lambda x: of(b, form.init, x), bc)
            sums = dsl.map(lambda row: dsl.map(lambda si: ADD(dsl.get(si, 0), dsl.get(si, 1)), dsl.zip(row, inits)), sums)
        if epi is None:
            return dsl.map(lambda row: dsl.split(1, row), sums)
        if not cbs:
            out = dsl.map(lambda row: dsl.map(lambda x: epi.apply(x), row), sums)
        else:
            others = range(1, len(cbs) + 1)
            out = dsl.map(lambda rs: dsl.map(lambda t: epi.apply(dsl.get(t, 0), [dsl.get(t, i) for i in others]),
                                             dsl.zip(*[dsl.get(rs, i) for i in range(len(cbs) + 1)])),
                          dsl.zip(sums, *cbs))
        return dsl.map(lambda row: dsl.split(1, row), out) if epi.wrapped else out

    if extras:
        others = range(1, len(extras) + 1)

        def row_of_blocks(ta):
            cols = [dsl.transpose(dsl.map(lambda row: dsl.split(r2, row), dsl.get(ta, i))) for i in others]
            return dsl.map(lambda tb: block(dsl.get(ta, 0), dsl.get(tb, 0), [dsl.get(tb, i) for i in others]),
                           dsl.zip(dsl.split(r2, bs), *cols))

        return untile2D(dsl.map(row_of_blocks, dsl.zip(dsl.split(r1, As), *[dsl.split(r1, c) for c in extras])))
    return untile2D(dsl.map(lambda ac: dsl.map(lambda bc: block(ac, bc), dsl.split(r2, bs)), dsl.split(r1, As)))

