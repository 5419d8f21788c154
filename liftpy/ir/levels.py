"""Where a map runs: the execution levels of OpenCL, each declared once.

Every map primitive names its level (``MapGlb.level is Level.GLB``).  A level's declaration below is all
that the rest of the compiler knows of it:

- code generation: the OpenCL id and size functions, the loop-variable prefix, who executes the body
  (one work-item or a whole work-group);
- nesting: the *scheme* it belongs to (a kernel forms its NDRange either globally, the driver choosing
  the groups, or by groups it fixes itself; the schemes do not mix) and its rank in that scheme (a
  ``mapLcl`` needs an enclosing ``mapWrg``, never the reverse); no dimension twice on one path;
- the launch: which *part* of the NDRange its loops' lengths decide (the global size, the number of
  groups or the items per group), so ``decide_launch`` and the resource limits read the part, not a name;
- the constraints: how its extents are described and bounded;
- the cost model: what its id is across the lanes of a warp (``Ids``).

The emitter (``Emitter.enter``), the lowering rules (``map_to``), the launch decision, the resource
analysis, the constraint inference, the analytical model and the variant tags ask the level.  A new
level that fits the schemes, parts and execution contexts here is one member, its map class
(``liftpy/ir/prims/maps.py``), its DSL builder and export, and a ``Mapping`` in ``rewrite/mappings.py``
for the exploration to try it; a new part of the NDRange (sub-groups) would also teach ``decide_launch``
its size.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum


class Scheme(Enum):
    """How a kernel's NDRange is formed.  Its levels nest in the order they are declared in."""

    GLOBAL = "global"  # the driver forms the work-groups
    GROUP = "group"  # the kernel fixes its work-groups and their work-items

    @property
    def levels(self) -> tuple["Level", ...]:
        return tuple(level for level in Level if level.scheme is self)


class Part(Enum):
    """Which size of the NDRange the lengths of a level's loops decide (the longest, per dimension)."""

    GLOBAL = "global"  # work-items in all
    GROUPS = "groups"  # work-groups
    LOCAL = "local"  # work-items per group: bounded by the device per dimension and in product


class Ids(Enum):
    """What a level's id is across the work-items of one warp: the same for all (``UNIFORM``), the lane's
    position in its group (``LOCAL``), or that plus the group's offset (``GLOBAL``)."""

    UNIFORM = "uniform"
    LOCAL = "local"
    GLOBAL = "global"


@dataclass(frozen=True)
class _Decl:
    key: str  # the level's text: render-size keys ``(key, dim)``, the passes read them
    primitive_name: str
    prefix: str  # of its loop variables (``gl_0``, ``wg_0``, ``l_0``, ``i_0``)
    ids: Ids
    id_fn: str | None = None
    size_fn: str | None = None
    inner_context: str | None = None  # who executes a loop's body: one "item" or a whole "group"
    scheme: Scheme | None = None  # None: sequential, inside any scheme
    part: Part | None = None
    extent_text: str = ""  # the extent in dimension ``{d}``, as constraint messages describe it
    limit_tag: str = ""  # the device limit bounding the extent, as constraint reports group them
    variant_tag: str | None = None  # its name in a variant's tags, where it tells variants apart


class Level(Enum):
    GLB = _Decl("glb", "mapGlb", "gl", Ids.GLOBAL, id_fn="get_global_id", size_fn="get_global_size",
                inner_context="item", scheme=Scheme.GLOBAL, part=Part.GLOBAL,
                extent_text="work-items in global dimension {d}", limit_tag="device:global_size", variant_tag="glb")
    WRG = _Decl("wrg", "mapWrg", "wg", Ids.UNIFORM, id_fn="get_group_id", size_fn="get_num_groups",
                inner_context="group", scheme=Scheme.GROUP, part=Part.GROUPS,
                extent_text="work-groups in dimension {d}", limit_tag="device:work_groups", variant_tag="wrg")
    LCL = _Decl("lcl", "mapLcl", "l", Ids.LOCAL, id_fn="get_local_id", size_fn="get_local_size",
                inner_context="item", scheme=Scheme.GROUP, part=Part.LOCAL,
                extent_text="work-items per group in dimension {d}", limit_tag="device:max_work_item_sizes")
    SEQ = _Decl("seq", "mapSeq", "i", Ids.UNIFORM)

    def __new__(cls, decl: _Decl):
        # The value stays the key, so ``Level("lcl")`` reads a render-size key back; the declaration's
        # fields become the member's attributes (``Level.LCL.id_fn``), plain ones: the cost model reads
        # them in its inner loop.
        obj = object.__new__(cls)
        obj._value_ = decl.key
        for f in fields(decl):
            setattr(obj, f.name, getattr(decl, f.name))
        return obj

    @property
    def parallel(self) -> bool:
        return self.scheme is not None

    @property
    def rank(self) -> int:
        """How deep the level nests in its scheme (0: outermost)."""
        return self.scheme.levels.index(self)

    def size_key(self, dim: int) -> tuple[str, int]:
        """The key of the level's size in dimension ``dim`` among a kernel's render sizes."""
        return (self.value, dim)

    def describe_extent(self, dim: int, extent) -> str:
        return f"{self.extent_text.format(d=dim)} ({extent})"

    def nesting_error(self, dim: int, enclosing: dict["Level", set[int]]) -> str | None:
        """Why a map at this level and dimension may not appear inside maps at ``enclosing`` levels (a
        level -> set of dimensions already used on the path), or None when it may."""
        if not self.parallel:
            return None
        around = [level for level in PARALLEL_LEVELS if enclosing.get(level)]
        name = f"{self.primitive_name}({dim})"
        other = [level for level in around if level.scheme is not self.scheme]
        if other:
            return (f"{name} inside {'/'.join(l.primitive_name for l in other)}: a kernel uses either global "
                    "or work-group mapping")
        deeper = [level for level in around if level.scheme is self.scheme and level.rank > self.rank]
        if deeper:
            return f"{name} inside {'/'.join(l.primitive_name for l in deeper)}"
        for outer in self.scheme.levels[: self.rank]:
            if outer not in around:
                return f"{name} must be nested inside a {outer.primitive_name}"
        if dim in enclosing.get(self, ()):
            return f"{name} nested inside another {name}"
        return None


PARALLEL_LEVELS = tuple(level for level in Level if level.parallel)
