"""The knobs of the default exploration: which rules it may use, and how far it may go."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RewriteError
from .rule import Rule


@dataclass(frozen=True)
class ExploreOptions:
    """Which rules the exploration may use, and how far it may go.

    ``depth`` bounds how many algorithmic macros one variant combines; the memory stage picks at most one
    of its options per variant.  Both keep the number of variants in the tens, so each can be checked."""

    vectorize: bool = True
    partial: bool = True
    coalesce: bool = True
    register_block: bool = True
    tile: bool = True
    group: bool = True
    depth: int = 2
    let_private: bool = True
    local_stage: bool = True
    unroll: bool = True
    images: bool = True
    max_variants: int | None = None
    extra_rules: tuple = ()  # user rules (e.g. from text), each an optional algorithmic step
    pipeline: bool = False  # derive multi-kernel pipelines (padding, partial sums, crop kernels)
    tile_reduce: bool = True  # two-level tiling of maps of maps over dot products (tiled_dot)
    split_k: bool = True  # with it, the reduction split across work-groups and a summing kernel
    pad_k: bool = False  # with it, the dot products' operands padded with up to 7 zeros (for a K no tile divides)
    double_buffer: bool = True  # with it, tiles staged at every k step double-buffered too (doubleBuffer)
    reduce_kernels: bool = True  # a whole-array reduction as partial sums in one kernel, summed in the next
    let_global: bool = True  # a let-bound computed array becomes a kernel of its own (letGlobal)
    all_pairs: bool = True  # all-pairs interactions tiled, each tile staged in local memory (tiled_all_pairs)
    tree_reduce: bool = True  # a whole-array reduction per work-group as a tree in local memory (tree_reduction)
    normal_form: bool = True  # start from the normal form (normal.py): products in the shape the tilings take
    rows: bool = True  # each row a reduction reads shared by a work-group's items (rows_strategy.cooperative_rows)
    precision: str = "fp32"  # fp16-storage: float arrays stored as half (rewrite/half.py); fp32 leaves them float
    half_each: bool = False  # with fp16-storage, every subset of the arrays stored as half, not only all of them

    def __post_init__(self):
        # A rule given twice (one rules file read twice, the same rule in two files) is one macro: as two,
        # a variant could apply it twice as two macros, which added variants that only repeat the rule.  Two
        # different rules of one name could not be told apart in a variant's trace.
        kept: dict[str, Rule] = {}
        for r in self.extra_rules:
            seen = kept.get(r.name)
            if seen is not None and seen != r:
                raise RewriteError(f"two different rules have the name {r.name} ({seen.equation}; {r.equation}): "
                                   "rename one")
            kept.setdefault(r.name, r)
        object.__setattr__(self, "extra_rules", tuple(kept.values()))
