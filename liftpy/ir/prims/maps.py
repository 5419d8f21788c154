"""The maps: ``map`` and its lowered forms, one per execution level (``liftpy.ir.levels``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..expr import Lambda
from ..levels import Level
from ..types import ArrayType
from ..values import BV, lift
from .base import Primitive, check_dim, expect_array


class MapLike(Primitive):
    """Shared type rule and semantics of every map; subclasses differ in how they are executed."""

    kind: ClassVar[str] = "map"
    nargs: ClassVar[int] = 1
    fun_arity: ClassVar[int] = 1
    f: Lambda

    def fun_param_types(self, field, arg_types):
        return [arg_types[0].elem]

    def typecheck(self, args, tc):
        check_dim(tc, getattr(self, "dim", 0))
        xs = expect_array(tc, args[0])
        return ArrayType(tc.apply(self.f, [xs.elem]), xs.size)

    def evaluate(self, args, ev):
        xs = args[0]
        n = xs.length()
        inner = BV(xs.data, xs.batch + (n,))
        out = ev.call(self.f, [inner], inner.batch)
        return BV(lift(out, inner.batch).data, xs.batch)


@dataclass(frozen=True, eq=True)
class Map(MapLike):
    """``map(f, xs)``: apply f to every element.  ``[T]n -> [U]n`` for ``f: T -> U``."""

    f: Lambda
    name: ClassVar[str] = "map"


@dataclass(frozen=True, eq=True)
class MapSeq(MapLike):
    """A map executed sequentially by one work-item (unrolled by the emitter when ``unroll``)."""

    f: Lambda
    unroll: bool = False
    name: ClassVar[str] = "mapSeq"
    text_forms: ClassVar[dict] = {"mapSeq": {"unroll": False}, "mapSeqUnroll": {"unroll": True}}
    level: ClassVar[Level] = Level.SEQ



@dataclass(frozen=True, eq=True)
class MapGlb(MapLike):
    """A map over global work-items in NDRange dimension ``dim``."""

    dim: int
    f: Lambda
    name: ClassVar[str] = "mapGlb"
    level: ClassVar[Level] = Level.GLB


@dataclass(frozen=True, eq=True)
class MapWrg(MapLike):
    """A map over work-groups in dimension ``dim``."""

    dim: int
    f: Lambda
    name: ClassVar[str] = "mapWrg"
    level: ClassVar[Level] = Level.WRG


@dataclass(frozen=True, eq=True)
class MapLcl(MapLike):
    """A map over the work-items of a work-group in dimension ``dim``."""

    dim: int
    f: Lambda
    name: ClassVar[str] = "mapLcl"
    level: ClassVar[Level] = Level.LCL


def is_parallel_map(fn) -> bool:
    """A map distributed over work-items or work-groups."""
    level = getattr(fn, "level", None)
    return isinstance(fn, MapLike) and level is not None and level.parallel


def map_class(level: Level) -> type:
    """The map primitive that runs at ``level``: the class declaring it, found rather than listed, so a
    new level's class is all the lowering rules need."""
    found = [cls for cls in MapLike.__subclasses__() if cls.__dict__.get("level") is level]
    if len(found) != 1:
        raise ValueError(f"{len(found)} map classes declare the level {level}")
    return found[0]
