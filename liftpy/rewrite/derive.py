"""Deriving the variants of a program with one result: the default strategy (the normal form, then the
general stages or a known shape, then placement) or one given, its lowered variants kept where code
generation accepts them and dropped, with the reason, where no size makes them a kernel."""

from __future__ import annotations

from dataclasses import dataclass

from ..codegen.allocation import refusals
from ..ir.expr import Program
from ..ir.kernels import split_kernels
from .accumulators import accumulator_refusals
from .normal import dot_fusion, normal_form
from .options import ExploreOptions
from .pipeline import let_global
from .placement import placement_stage
from .rows_strategy import cooperative_rows
from .shapes import tiled_all_pairs, tiled_dot, tree_reduction
from .stages import algorithmic_stage, memory_stage
from .strategy import Strategy, choice, normalize, seq
from .variant import Variant
from .work_mapping import lower_all


def default_strategy(program: Program, options: ExploreOptions = ExploreOptions()) -> Strategy:
    """The strategy ``explore`` uses when given options: the normal form (``normal.py``), then the general
    stages (algorithmic macros, work mapping, memory), or the tiled dot-product shape, then placement."""
    boundaries = normalize(let_global) if options.let_global else (lambda v: [v])
    # The general stages want one nest per kernel: what the normal form took out of a dot product's map
    # goes back into it (dotFusion) before they start.
    fused = normalize(dot_fusion) if options.normal_form else (lambda v: [v])
    general = seq(fused, algorithmic_stage(options), boundaries, lower_all, memory_stage(options))
    if options.tile_reduce and not options.pipeline:
        general = choice(general, tiled_dot(options))
    if options.all_pairs and not options.pipeline:
        general = choice(general, tiled_all_pairs(options))
    if options.tree_reduce and options.partial and options.reduce_kernels and not options.pipeline:
        general = choice(general, tree_reduction(options))
    if options.rows and not options.pipeline:
        general = choice(general, cooperative_rows(options))
    if options.normal_form and not options.pipeline:
        general = seq(normal_form(), general)
    return seq(general, placement_stage(program, options))


@dataclass(frozen=True)
class Dropped:
    """A lowered variant that no size can make into a kernel, with the reason."""

    variant: Variant
    reason: str


def refused(v: Variant) -> str | None:
    """Why code generation would refuse ``v`` at every size (a computed map read where nothing can hold
    it, a computation stored through a layout that does not invert: ``codegen.allocation.refusals``), or
    why its kernels would compute wrong results at every size (a reduction's accumulator initialised by
    other work-items than those that read it: ``accumulators.accumulator_refusals``), or None."""
    wrong = accumulator_refusals(v.program)
    if wrong:
        return wrong[0]
    for stage in split_kernels(v.program):
        reasons = refusals(stage.program)
        if reasons:
            return reasons[0]
    return None


def explore_one(program: Program, options: "ExploreOptions | Strategy" = ExploreOptions()) -> tuple[list[Variant], list[Dropped]]:
    """``explore_all`` for a program with one result: its variants, and the lowered variants dropped
    because no size makes them a kernel."""
    start = Variant(program)
    if callable(options) and not isinstance(options, ExploreOptions):
        strategy, options = options, ExploreOptions()
    else:
        strategy = default_strategy(program, options)
    variants, dropped = [], []
    for v in strategy(start):
        if not v.lowered:
            continue
        reason = refused(v)
        if reason is None:
            variants.append(v)
        else:
            dropped.append(Dropped(v, reason))
    if options.max_variants is not None and len(variants) > options.max_variants:
        # Keep a spread over the whole list rather than its head, so every stage's choices stay represented.
        step = len(variants) / options.max_variants
        variants = [variants[int(i * step)] for i in range(options.max_variants)]
    return variants, dropped
