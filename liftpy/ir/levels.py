"""Where a map runs: the execution levels of OpenCL, written once.

Every map primitive names its level (``MapGlb.level is Level.GLB``).  What a level means for code
generation (the OpenCL id and size functions, the loop-variable prefix), for nesting (a ``mapLcl`` needs an
enclosing ``mapWrg``; global and work-group mappings do not mix; no dimension twice on one path) and for the
launch (which table of the NDRange a loop's length feeds) lives here, so the emitter, the resource analysis,
the lowering rules and the launch decision ask the level instead of spelling class lists of their own.
"""

from __future__ import annotations

from enum import Enum


class Level(Enum):
    GLB = "glb"
    WRG = "wrg"
    LCL = "lcl"
    SEQ = "seq"

    @property
    def parallel(self) -> bool:
        return self is not Level.SEQ

    @property
    def id_fn(self) -> str:
        return {"glb": "get_global_id", "wrg": "get_group_id", "lcl": "get_local_id"}[self.value]

    @property
    def size_fn(self) -> str:
        return {"glb": "get_global_size", "wrg": "get_num_groups", "lcl": "get_local_size"}[self.value]

    @property
    def prefix(self) -> str:
        """The prefix of loop variables at this level (``gl_0``, ``wg_0``, ``l_0``, ``i_0``)."""
        return {"glb": "gl", "wrg": "wg", "lcl": "l", "seq": "i"}[self.value]

    @property
    def inner_context(self) -> str | None:
        """What the body of a loop at this level is executed by: one work-item or a whole work-group."""
        return {"glb": "item", "wrg": "group", "lcl": "item", "seq": None}[self.value]

    @property
    def primitive_name(self) -> str:
        return {"glb": "mapGlb", "wrg": "mapWrg", "lcl": "mapLcl", "seq": "mapSeq"}[self.value]

    def nesting_error(self, dim: int, enclosing: dict["Level", set[int]]) -> str | None:
        """Why a map at this level and dimension may not appear inside maps at ``enclosing`` levels (a
        level -> set of dimensions already used on the path), or None when it may."""
        glb, wrg, lcl = (enclosing.get(l, set()) for l in (Level.GLB, Level.WRG, Level.LCL))
        name = f"{self.primitive_name}({dim})"
        if self is Level.GLB:
            if wrg or lcl:
                return f"{name} inside mapWrg/mapLcl: a kernel uses either global or work-group mapping"
            if dim in glb:
                return f"{name} nested inside another mapGlb({dim})"
        elif self is Level.WRG:
            if glb or lcl:
                return f"{name} inside mapGlb or mapLcl"
            if dim in wrg:
                return f"{name} nested inside another mapWrg({dim})"
        elif self is Level.LCL:
            if not wrg:
                return f"{name} must be nested inside a mapWrg"
            if dim in lcl:
                return f"{name} nested inside another mapLcl({dim})"
        return None


PARALLEL_LEVELS = (Level.GLB, Level.WRG, Level.LCL)
