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
from ..ir import primitives as P
from ..ir.expr import Call, Literal, Var
from ..ir.types import Array, ArrayType, Float
from ..ir.userfun import BUILTINS
from .algorithmic import untile2D
from .patterns import is_call
from .rule import rule

MULT_AND_SUM_UP = BUILTINS["multAndSumUp"]


def _dot_reduce(e, a: Var, b: Var):
    """``reduce(fun(acc, p) => multAndSumUp(acc, p._i, p._j), z, zip(a, b))`` with z a literal: its z."""
    if not (isinstance(e, Call) and type(e.fn) is P.Reduce):
        return None
    init, xs = e.args
    if not isinstance(init, Literal) or init.type != Float:
        return None
    if not (is_call(xs, P.Zip) and xs.args in ((a, b), (b, a))):
        return None
    acc, p = e.fn.f.params
    body = e.fn.f.body
    if not (isinstance(body, Call) and body.fn == MULT_AND_SUM_UP and body.args[0] == acc):
        return None
    idx = sorted(g.fn.index for g in body.args[1:] if is_call(g, P.Get) and g.args == (p,))
    return init if idx == [0, 1] else None


@rule("registerBlock2D", "map(a -> map(b -> dot(a, b), Bs), As) => untile2D(map(ac -> map(bc -> block(ac, bc), split(r2, Bs)), split(r1, As)))")
def register_block2D(e, site, ctx):
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
    z = _dot_reduce(inner.fn.f.body, a, b)
    if z is None:
        return None
    a_t, b_t = site.type_of(e.args[0]), site.type_of(bs)
    if not (isinstance(a_t, ArrayType) and isinstance(b_t, ArrayType)):
        return None
    r1, r2 = ctx.fresh("r"), ctx.fresh("r")

    def update(acc, kp):
        return dsl.map(
            lambda pr: dsl.map(lambda pc: MULT_AND_SUM_UP(dsl.get(pc, 0), dsl.get(pr, 1), dsl.get(pc, 1)),
                               dsl.zip(dsl.get(pr, 0), dsl.get(kp, 1))),
            dsl.zip(acc, dsl.get(kp, 0)),
        )

    def block(ac, bc):
        zeros = Literal(z.value, Array(Float, r1, r2))
        sums = dsl.reduce(update, zeros, dsl.zip(dsl.transpose(ac), dsl.transpose(bc)))
        return dsl.map(lambda row: dsl.split(1, row), dsl.join(sums))

    return untile2D(dsl.map(lambda ac: dsl.map(lambda bc: block(ac, bc), dsl.split(r2, bs)), dsl.split(r1, e.args[0])))
