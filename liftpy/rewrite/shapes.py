"""The derivations of known kernel shapes, each one strategy from the high-level program to lowered
variants: the tiled matrix product (``tiled_dot``), the tiled all-pairs interaction
(``tiled_all_pairs``) and the tree reduction of a whole array (``tree_reduction``)."""

from __future__ import annotations

from .algorithmic import coalesce, flatten_map2D, groups_out, partial_reduce, vectorize_reduction
from .allpairs import tile_all_pairs
from .epilogue import match_product
from .lowering import (MAP_LCL, MAP_SEQ, MAP_WRG, double_buffer, limit_unrolled_nests, local_stage, reduce_lcl, reduce_seq,
                       stage_tiles, stage_tiles_t, unroll_in_item)
from .mappings import group_mapping
from .options import ExploreOptions
from .pipeline import fuse_last_group, let_global, reduce_group, reduce_kernels
from .strategy import Strategy, choice, dedup, normalize, once, optional, seq, try_
from .tiling import pad_k, split_k, split_k_groups, tile2D_reduce, tile2D_reduce_strided
from .variant import Variant
from .work_mapping import apply_mapping, private_accumulators


def tiled_dot(opts: ExploreOptions) -> Strategy:
    """The vendor-class shape of a matrix product (or any map of maps over a dot product): work-group
    tiles accumulated over k-chunks (``tile2DReduce``; a grouped convolution's groups moved out first,
    ``groupsOut``, one product per group on a third dimension of work-groups), every nest of the group over its work-items
    (``every_nest``), with ``pad_k`` the reduction padded with zeros first (``padK``), the chunks staged in local
    memory as they are or transposed (``stageTiles``,
    ``stageTilesT``) or read from global memory, staged tiles double-buffered or not (``doubleBuffer``),
    and the loops over each work-item's register block unrolled (``unrollInItem``)."""
    # Every tiled kernel's tiles staged (two chained products are two), each doubled or none.
    doubled = optional(normalize(double_buffer)) if opts.double_buffer else (lambda v: [v])
    staging = choice(seq(once(stage_tiles), normalize(stage_tiles), doubled),
                     seq(once(stage_tiles_t), normalize(stage_tiles_t), doubled), lambda v: [v])
    boundaries = normalize(let_global) if opts.let_global else (lambda v: [v])

    def mapping(v: Variant) -> list[Variant]:
        # split-K adds the chunks of the reduction as a third dimension of work-groups, a grouped
        # convolution its groups, and both (``splitKGroups``) its groups' chunks as one; OpenCL has three.
        groups = 2 + sum(1 for s in v.trace if s.rule in ("splitK", "groupsOut"))
        return apply_mapping(group_mapping(groups, 2, every_nest=True))(v) if groups <= 3 else []

    return seq(
        # (an epilogue over a product is a map of maps too, but one to write out, not to flatten)
        try_(once(flatten_map2D, where=lambda path, e: match_product(e) is None)),
        try_(once(groups_out)),
        optional(once(pad_k)) if opts.pad_k else (lambda v: [v]),
        # a grouped product's split flattens the groups and the chunks into one dimension of work-groups
        optional(choice(once(split_k), once(split_k_groups))) if opts.split_k else (lambda v: [v]),
        _every_product(choice(once(tile2D_reduce), once(tile2D_reduce_strided))),
        boundaries,  # a product's computed operand (letOperand) a kernel of its own
        mapping,
        private_accumulators,
        staging,
        normalize(unroll_in_item),
        limit_unrolled_nests,
    )


def _every_product(tile: Strategy) -> Strategy:
    """``tile`` applied to one product, then to every other product left (two chained products), each
    application giving its choices; no result when no product is there."""

    def go(v: Variant) -> list[Variant]:
        out = []
        for w in tile(v):
            out.extend(go(w) or [w])
        return dedup(out)

    return go


def tiled_all_pairs(opts: ExploreOptions) -> Strategy:
    """The N-body shape of an all-pairs interaction: a work-group folds a chunk of the elements over the
    other array a tile at a time (``tileAllPairs``), every nest of the group over its work-items, each
    tile staged in local memory by the whole group (``localStage``) or read from global memory."""
    staging = choice(once(local_stage), lambda v: [v]) if opts.local_stage else (lambda v: [v])
    return seq(once(tile_all_pairs), apply_mapping(group_mapping(1, 1, every_nest=True)), private_accumulators, staging)


def tree_reduction(opts: ExploreOptions) -> Strategy:
    """Lift's parallel reduction of a whole array (a dot product, a sum, a maximum): the array in chunks
    of ``w0``, one per work-group, each split again into ``w0 / w1`` runs of ``w1`` that the group's
    work-items reduce sequentially (neighbouring items reading neighbouring elements, with the
    coalescing reorder, or each its own run); the group then combines its items' results as a tree in
    local memory (``reduceLcl``) and writes one value; a second kernel adds the groups' values with the
    initial one (``reduceKernels``), on one work-item or as one work-group's tree (``reduceGroup``), in a
    launch of its own or in the first kernel's last work-group (``fuseLastGroup``)."""
    vectorize = optional(vectorize_reduction()) if opts.vectorize else (lambda v: [v])
    coalesced = optional(once(coalesce)) if opts.coalesce else (lambda v: [v])
    return seq(vectorize, once(partial_reduce), once(partial_reduce), coalesced, once(reduce_kernels),
               once(MAP_WRG[0]), optional(once(reduce_group)), normalize(reduce_lcl), normalize(MAP_LCL[0]),
               normalize(MAP_SEQ), normalize(reduce_seq), private_accumulators, optional(once(fuse_last_group)))
