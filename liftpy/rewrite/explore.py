"""The exploration driver: from one high-level program to many distinct, fully lowered variants.

Exploration runs in stages, each a *strategy*: a function from a variant to the list of variants it can
become (Elevate's combinators, with "all results" semantics so choices multiply):

0. the normal form (``normal.py``): equivalent spellings of a matrix product (an accumulator spelt
   ``acc + a * b``, an epilogue around the dot product, rows zipped with another array's, a product of a
   product) brought to the shape the tilings take; the general stages fuse an epilogue back into its
   product's nest first (``dotFusion``), the tilings write it out with their tiles;
1. algorithmic macros, each optional, in a fixed order: vectorize the reduction (``vectorizeReduce``),
   split it into partial reductions (``partialReduce``) with or without the coalescing reorder,
   register-block a map of maps over a reduction (``registerBlock2D``), tile a 2D stencil or convolution
   (``tile2D``), group the iterations of the outermost map (``splitJoin``);
2. work mapping: the nest of computing maps gets OpenCL mappings by a policy (``mapGlb`` over the outer
   one to three maps, or ``mapWrg`` then ``mapLcl``), every other map becomes ``mapSeq``, every reduction
   ``reduceSeq`` with a private accumulator;
3. memory and loop options: fetch values reused by a map into private memory (``letPrivate``), stage a
   work-group's data in local memory (``localStage``), unroll the innermost reduction;
4. placement: inputs ``[[[float]C]W]H`` with ``C % 4 == 0`` may be read through an OpenCL image.

Variants are de-duplicated structurally (alpha-equivalence) after every stage and carry the trace of the
rules that produced them, their tuning parameters and the requirements the rules added.

The stages live below this module, each in its own: the variant (``variant.py``), the strategy combinators
(``strategy.py``), the kernels' regions (``regions.py``), the work mapping (``work_mapping.py``), the
options (``options.py``), the algorithmic and memory stages (``stages.py``), the known shapes
(``shapes.py``), placement (``placement.py``), a program with one result (``derive.py``) and one with
several (``outputs.py``).
"""

from __future__ import annotations

from ..ir.expr import Program
from ..ir.results import result_parts
from .derive import Dropped, explore_one
from .options import ExploreOptions
from .outputs import explore_results
from .strategy import Strategy
from .variant import Variant

# The types of ``explore``'s arguments and results, importable from here as from where they are defined.
__all__ = ["Dropped", "ExploreOptions", "Variant", "diverse", "explore", "explore_all", "features"]


def explore(program: Program, options: "ExploreOptions | Strategy" = ExploreOptions()) -> list[Variant]:
    """Distinct fully lowered variants of a high-level program, each with its parameters and trace.

    ``options``: the knobs of the default strategy, or a strategy itself (Elevate style), composed by the
    caller from the combinators (``strategy.py``), the work mapping (``work_mapping.py``) and the rules, e.g.
    ``seq(once(tile2D_reduce), apply_mapping(group_mapping(2, 2, every_nest=True)), private_accumulators)``;
    only the lowered variants it produces are kept, and of those only the ones code generation accepts
    (``explore_all`` also returns the others, with the reason)."""
    return explore_all(program, options)[0]


def explore_all(program: Program, options: "ExploreOptions | Strategy" = ExploreOptions()) -> tuple[list[Variant], list[Dropped]]:
    """``explore``'s variants, and the lowered variants it dropped because no size makes them a kernel."""
    if result_parts(program.body) is not None:  # several results: made of the variants of each (outputs.py)
        return explore_results(program, options)
    return explore_one(program, options)


def features(v: Variant) -> frozenset[str]:
    """The rules a variant's derivation used (without positions): what makes two variants different in
    kind rather than in where a rule was applied."""
    out = set()
    for s in v.trace:
        name = s.rule.rstrip("0123456789")
        if name in ("mapSeq", "reduceSeq", "privateAccumulator"):
            continue  # every variant has these
        out.add(name)
    return frozenset(out)


def diverse(variants: list[Variant], n: int) -> list[Variant]:
    """At most ``n`` variants covering as many different rule combinations as possible: combinations are
    picked evenly over the whole list (one variant each), then further variants of them round-robin."""
    groups: dict[frozenset, list[Variant]] = {}
    for v in variants:
        groups.setdefault(features(v), []).append(v)
    glist = list(groups.values())
    if n <= len(glist):
        return [glist[int(i * len(glist) / n)][0] for i in range(n)]
    out: list[Variant] = []
    depth = 0
    while len(out) < n and any(len(g) > depth for g in glist):
        for g in glist:
            if len(g) > depth and len(out) < n:
                out.append(g[depth])
        depth += 1
    return out
