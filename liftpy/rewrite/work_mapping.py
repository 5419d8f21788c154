"""Work mapping: every kernel's nest of computing maps gets OpenCL mappings by a policy (``mappings.py``),
every other map becomes ``mapSeq``, every reduction ``reduceSeq`` with a private accumulator."""

from __future__ import annotations

from .lowering import MAP_SEQ, MAP_TO, private_accumulator, reduce_seq
from .mappings import Mapping, mapping_policies, widest_global
from .regions import kernel_depth, kernel_regions, over_reduction, within
from .strategy import Strategy, dedup, normalize, once
from .variant import Variant


def apply_mapping(mapping: Mapping) -> Strategy:
    """Map every kernel of a program by the mapping (``mappings.py``); the remaining maps and every
    reduction become sequential."""

    def go(v: Variant) -> list[Variant]:
        for prefix in kernel_regions(v.program):
            depth = kernel_depth(v.program, prefix)
            if depth == 0:
                continue
            region = within(prefix, kernel_regions(v.program))

            def inside(path, e, region=region) -> bool:
                return region(path, e) and not over_reduction(e)

            if mapping.every_nest:
                mapped = _every_nest(v, mapping, inside)
                if mapped is None:
                    # A kernel with no nest for the work-items (the sum of split-K's partials): global mapping.
                    for rule in widest_global(depth).rules(depth):
                        nxt = once(rule, where=inside)(v)
                        if not nxt:
                            return []
                        v = nxt[0]
                    continue
                v = mapped
                continue
            for rule in mapping.rules(depth):
                nxt = once(rule, where=inside)(v)
                if not nxt:
                    return []
                v = nxt[0]
        v = normalize(MAP_SEQ)(v)[0]
        v = normalize(reduce_seq)(v)[0]
        return [v]

    return go


def _every_nest(v: Variant, mapping: Mapping, inside) -> Variant | None:
    """The maps of every level but the last as the mapping says, then *every* nest of maps inside over the
    last level: the outer map of each nest in the level's first dimension, the next in its second and so
    on.  This is the mapping of a tiled matrix product, where the initialisation of the accumulators, each
    step of the k loop and the write-out are separate nests that must give each work-item the same block.
    None when no nest is left for the last level."""
    *outer, (last, dims) = mapping.nests
    for level, outer_dims in outer:
        for d in outer_dims:
            nxt = once(MAP_TO[level][d], where=inside)(v)
            if not nxt:
                return None
            v = nxt[0]
    mapped_any = False
    for d in dims:
        step = once(MAP_TO[last][d], where=inside)
        for _ in range(64):
            nxt = step(v)
            if not nxt:
                break
            v = nxt[0]
            mapped_any = True
    return v if mapped_any else None


def lower_all(v: Variant) -> list[Variant]:
    depth = max((kernel_depth(v.program, p) for p in kernel_regions(v.program)), default=0)
    out = []
    for mapping in mapping_policies(depth) or [widest_global(0)]:
        out.extend(apply_mapping(mapping)(v))
    return dedup(out)


def private_accumulators(v: Variant) -> list[Variant]:
    return normalize(private_accumulator)(v)

