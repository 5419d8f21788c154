"""The general stages of the exploration: the algorithmic macros (each optional, in a fixed order, at most
``depth`` of them per variant; or the Lift paper's convolution pipeline) and the memory and loop options
(``letPrivate``, ``localStage``, unrolling the innermost reduction) after the work mapping."""

from __future__ import annotations

import itertools

from ..ir import primitives as P
from ..ir.expr import Call, Var
from .algorithmic import (coalesce, partial_reduce, split_join, split_strided, tile2D, vectorize_map, vectorize_reduce,
                          vectorize_reduction)
from .blocking import register_block2D
from .columns import split_columns
from .lowering import let_private, local_stage, unroll_reduce
from .normal import dot_fusion, normal_form
from .options import ExploreOptions
from .pipeline import crop_kernel, materialize_input, pad_opt, reduce_kernels, split_partial_kernels
from .positions import positions
from .runs import stencil_rows
from .stencil_tiles import local_stage_rows, local_stage_zipped, tile_sweeps
from .strategy import Strategy, choice, dedup, normalize, once, optional, seq, try_
from .variant import Variant
from .work_mapping import private_accumulators


def _macros(opts: ExploreOptions) -> list[tuple[str, Strategy]]:
    """The optional algorithmic macros, in the order they are applied when combined."""
    out: list[tuple[str, Strategy]] = []
    if opts.vectorize:
        # (a dot product's, or a plain sum's, maximum's or minimum's four or eight elements at a time)
        out.append(("vectorize", vectorize_reduction()))
        # An elementwise map over floats on vectors (float4 loads and stores); with ``group`` after it, each
        # work-item takes several vectors.
        out.append(("vectorizeMap", once(vectorize_map)))
    if opts.partial:
        partial = once(partial_reduce)
        out.append(("partial", choice(partial, seq(partial, once(coalesce))) if opts.coalesce else partial))
    if opts.partial and opts.let_global:
        # Each column of a row-major array reduced by blocks of rows in one kernel, the blocks' results in
        # the next: more work-items than columns, neighbours still on neighbouring columns.
        out.append(("columns", once(split_columns)))
    if opts.partial and opts.reduce_kernels:
        # A whole-array reduction in parallel: partial sums (coalesced or not) in one kernel, their sum in
        # the next (applies only where the program's result is one reduction).
        chunks = seq(once(partial_reduce), optional(once(coalesce))) if opts.coalesce else once(partial_reduce)
        out.append(("reduceKernels", seq(chunks, once(reduce_kernels))))
    if opts.register_block:
        # The general stages start from one nest (dotFusion): a product with an epilogue is taken apart
        # again for the blocking, which writes the epilogue out with each block, and what is left fused.
        block = once(register_block2D)
        if opts.normal_form:
            block = seq(normal_form(), block, normalize(dot_fusion))
        out.append(("block", block))
    if opts.tile:
        # (tile2D for a map over windows alone, tileZip2D for windows zipped with other arrays: every sweep)
        out.append(("tile", choice(once(tile2D), tile_sweeps())))
    if opts.group:
        out.append(("group", once(split_join, where=lambda path, e: not any(s[0] in ("fn", "callee") for s in path))))
        out.append(("groupZip", once(split_join, where=_over_input_zip)))
        # several elements of an elementwise map per work-item, neighbouring items on neighbouring elements
        out.append(("groupStrided", once(split_strided, where=_elementwise)))
        # a run of a stencil's row per work-item, its copies unrolled: the run's reads as vectors
        out.append(("runs", stencil_rows))
    for r in opts.extra_rules:
        out.append((r.name, once(r)))
    return out


def pipeline_stage(opts: ExploreOptions) -> Strategy:
    """The direct convolution of the Lift paper (section 4.2) as one macro with optional parts:
    optimisational padding (ρ), a padding kernel, vectorization (υ), partial reductions with or without
    coalescing (ω) summed in a kernel of their own, tiling (θ); a crop kernel when the padding needs one."""
    partial = seq(once(partial_reduce), optional(once(coalesce)) if opts.coalesce else (lambda v: [v]), once(split_partial_kernels))
    steps = [optional(once(pad_opt)), optional(once(materialize_input))]
    if opts.vectorize:
        steps.append(optional(once(vectorize_reduce)))
    if opts.partial:
        steps.append(optional(partial))
    if opts.tile:
        steps.append(optional(once(tile2D)))
    if opts.group:
        steps.append(optional(once(split_join, where=_over_input_zip)))
    steps.append(try_(once(crop_kernel)))
    return seq(*steps)


def _elementwise(path, e) -> bool:
    """A map at the top of a kernel's nest whose function maps no array and reduces none: an elementwise
    map (its work per element a few operations, its time the memory's)."""
    if any(s[0] in ("fn", "callee") for s in path) or not (isinstance(e, Call) and type(e.fn) is P.Map):
        return False
    return not any(isinstance(n, Call) and isinstance(n.fn, (P.MapLike, P.ReduceLike)) for _, n in positions(e.fn.f.body))


def _over_input_zip(path, e) -> bool:
    """A map over a zip of program inputs (the kernels of a convolution: grouping them is κ)."""
    return (
        isinstance(e, Call)
        and type(e.fn) is P.Map
        and isinstance(e.args[0], Call)
        and isinstance(e.args[0].fn, P.Zip)
        and all(isinstance(a, Var) for a in e.args[0].args)
    )


def algorithmic_stage(opts: ExploreOptions) -> Strategy:
    """Every combination of at most ``depth`` macros, applied in their fixed order."""
    if opts.pipeline:
        return pipeline_stage(opts)
    macros = _macros(opts)

    def go(v: Variant) -> list[Variant]:
        out = [v]
        for k in range(1, opts.depth + 1):
            for combo in itertools.combinations(macros, k):
                out.extend(seq(*[s for _, s in combo])(v))
        return dedup(out)

    return go


def memory_stage(opts: ExploreOptions) -> Strategy:
    options: list[Strategy] = [lambda v: [v]]
    if opts.let_private:
        options.append(once(let_private))
    if opts.local_stage:
        options.append(once(local_stage))
        options.append(seq(once(local_stage_zipped), normalize(local_stage_zipped)))  # every zipped tile staged
        options.append(once(local_stage_rows))  # a stencil's tile copied by a 2D group's rows
    if opts.unroll:
        options.append(once(unroll_reduce, where=_innermost_reduce))
    return seq(private_accumulators, choice(*options))


def _innermost_reduce(path, e) -> bool:
    if not (isinstance(e, Call) and isinstance(e.fn, P.ReduceSeq)):
        return False
    return not any(isinstance(n, Call) and isinstance(n.fn, P.ReduceLike) for _, n in list(positions(e))[1:])

