"""Tiling of all-pairs interactions: every element of one array folds over all elements of another.

    map(p -> reduce(f(p), init, Qs), Ps)                      -- Qs does not depend on p
      => join(map(pc -> split(1, map(id, join(
                   reduce(fun(accs, qt) => join(map(ap -> reduce(f(ap._1), ap._0, qt), zip(accs, pc))),
                          map(x -> id(init), pc),             -- one accumulator per p of the chunk
                          split(t, Qs))))),
                 split(m, Ps)))

This is the N-body shape of the Lift papers (and of the classic CUDA N-body): a work-group takes a chunk
of m elements of ``Ps`` and walks over ``Qs`` a tile of t elements at a time; in each step every
work-item advances the fold of its own element over the whole tile.  The tile is the same for all of
them, so the memory rule ``localStage`` stages it in local memory once per step for the whole group (a
program input shared by a work-group), with the barriers the emitter places around a group-level loop
that writes local memory.  Each fold still visits ``Qs`` in its original order, only grouped in tiles,
so the result is exactly the original's, for any ``f`` (no associativity needed).
"""

from __future__ import annotations

from ..ir import dsl
from ..ir import primitives as P
from ..ir.expr import Call, substitute
from ..ir.types import ArrayType
from .rule import rule


@rule(
    "tileAllPairs",
    "map(p -> reduce(f(p), init, Qs), Ps) => join(map(pc -> split(1, map(id, join(reduce((accs, qt) -> "
    "join(map(ap -> reduce(f(ap._1), ap._0, qt), zip(accs, pc))), map(x -> id(init), pc), split(t, Qs))))), split(m, Ps)))",
)
def tile_all_pairs(e, site, ctx):
    if not (isinstance(e, Call) and type(e.fn) is P.Map):
        return None
    (p,) = e.fn.f.params
    body = e.fn.f.body
    if not (isinstance(body, Call) and type(body.fn) is P.Reduce):
        return None
    init, qs = body.args
    if p.name in qs.free_vars or p.name in init.free_vars or p.name not in body.fn.f.free_vars:
        return None  # not all-pairs: the folded array or the initial value depends on p, or f does not
    if not (isinstance(site.type_of(qs), ArrayType) and isinstance(site.type_of(e.args[0]), ArrayType)):
        return None
    m, t = ctx.fresh("m"), ctx.fresh("t")
    f = body.fn.f

    def tile(pc):
        def step(accs, qt):
            return dsl.join(dsl.map(
                lambda ap: Call(P.Reduce(substitute(f, {p.name: dsl.get(ap, 1)})), (dsl.get(ap, 0), qt)),
                dsl.zip(accs, pc)))

        inits = dsl.map(lambda x: dsl.id(init), pc)
        folded = dsl.join(dsl.reduce(step, inits, dsl.split(t, qs)))
        return dsl.split(1, dsl.map(dsl.id, folded))

    return dsl.join(dsl.map(tile, dsl.split(m, e.args[0])))
