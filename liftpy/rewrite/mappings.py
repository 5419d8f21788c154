"""Work mappings: which levels the computing maps of a kernel run at, as named strategies over levels.

A mapping lists, outermost first, a level and the dimensions its maps take (``GLOBAL_3``: the three outer
maps over global work-items, the outermost in dimension 2; ``group_mapping(1, 2)``: one map over
work-groups, the next two over their work-items).  The exploration applies each level's lowering rule
(``lowering.MAP_TO``) in that order, each to the outermost map left; the mappings it tries for a kernel
of a given depth are ``mapping_policies``.  A new level enters a mapping by its rules, with no table here
to extend.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.levels import Level
from .lowering import MAP_TO
from .rule import Rule


@dataclass(frozen=True)
class Mapping:
    """``nests``: (level, dimensions of its maps, outermost first), outermost level first.  With
    ``every_nest`` the last level takes every nest of maps inside the ones before (each work-item then
    the same block in the initialisation, the steps and the write-out of a tiled product), not just the
    first."""

    nests: tuple[tuple[Level, tuple[int, ...]], ...]
    every_nest: bool = False

    @property
    def maps(self) -> int:
        return sum(len(dims) for _, dims in self.nests)

    def rules(self, depth: int) -> list[Rule]:
        """The rules, in order, for a kernel of ``depth`` computing maps: a kernel with too few maps for
        the mapping gets a global mapping over the maps it has."""
        if self.maps > depth:
            return widest_global(depth).rules(depth)
        return [MAP_TO[level][d] for level, dims in self.nests for d in dims]


def global_mapping(maps: int, order: tuple[int, ...] | None = None) -> Mapping:
    """The ``maps`` outer maps over global work-items, the innermost fastest (dimension 0) unless
    ``order`` gives the dimensions, outermost first."""
    return Mapping(((Level.GLB, tuple(reversed(range(maps))) if order is None else order),))


def widest_global(depth: int) -> Mapping:
    """The global mapping over as many of a kernel's ``depth`` maps as OpenCL has dimensions."""
    return global_mapping(min(depth, 3))


def group_mapping(groups: int, items: int, every_nest: bool = False) -> Mapping:
    """The ``groups`` outer maps over work-groups, the next ``items`` over each group's work-items."""
    return Mapping(((Level.WRG, tuple(reversed(range(groups)))), (Level.LCL, tuple(reversed(range(items))))), every_nest)


def mapping_policies(depth: int) -> list[Mapping]:
    """One global mapping over as many dimensions as possible, the same with the middle of three maps
    fastest, one over the outermost map only (each work-item then runs a whole row sequentially), and
    the work-group mappings that put a 1D or 2D block of work under each group."""
    out = [widest_global(depth)] if depth >= 1 else []
    if depth >= 3:
        out.append(global_mapping(3, order=(1, 0, 2)))
    if depth >= 2:
        out.append(global_mapping(1))
        out.append(group_mapping(1, 1))
    if depth >= 4:
        out.append(group_mapping(2, 2))
    elif depth == 3:
        out.append(group_mapping(1, 2))
    return out
