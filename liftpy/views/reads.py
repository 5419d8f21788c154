"""What reading an element through views resolves to: ``Read`` nodes (a buffer at a flat index, a
constant, a computed scalar, a condition choosing between two reads, vectors, lanes and tuple fields) that
the emitter prints.  Index expressions are integer expressions over loop variables (``liftpy.arith``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import arith as A


def cached_hash(cls):
    """A frozen dataclass whose hash is computed once per object.  The generated ``__hash__`` hashes
    every field, recursively: a read's buffer, whose type is a tree of dataclasses, its children, and
    so on, each time a pass keys a table by a read or a buffer.  The cached value is left out of
    pickles (string hashes differ between processes)."""
    compute = cls.__hash__

    def __hash__(self):
        h = self.__dict__.get("_hash")
        if h is None:
            h = compute(self)
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    cls.__hash__ = __hash__
    cls.__getstate__ = __getstate__
    return cls


@dataclass(frozen=True)
class Field:
    """A tuple-component step in an access path."""

    index: int


# --------------------------------------------------------------------------------------------------
# What an access resolves to


class Read:
    """Base class of resolved accesses.  A read is a small tree: ``children`` are the reads it is made of
    and ``exprs`` the index expressions, coordinates and conditions of its own, so passes over reads
    (``transform``) need no case per kind of read."""

    def children(self) -> tuple["Read", ...]:
        return ()

    def with_children(self, kids: tuple["Read", ...]) -> "Read":
        return self

    def map_exprs(self, fn: Callable[[A.Expr], A.Expr]) -> "Read":
        """This read with ``fn`` applied to its own expressions (not its children's)."""
        return self


def transform(r: Read, fn: Callable[[Read], Read]) -> Read:
    """Rebuild ``r`` bottom-up, replacing every read ``x`` in it (``r`` included) by ``fn(x)``."""
    kids = r.children()
    if kids:
        new = tuple([transform(k, fn) for k in kids])
        for a, b in zip(new, kids):
            if a is not b:  # an unchanged tree is kept, not copied
                r = r.with_children(new)
                break
    return fn(r)


def walk_reads(r: Read):
    """``r`` and every read inside it, outermost first."""
    yield r
    for k in r.children():
        yield from walk_reads(k)


@cached_hash
@dataclass(frozen=True)
class MemRead(Read):
    buffer: Any  # codegen.memory.Buffer
    index: A.Expr  # in scalar elements of the buffer
    width: int  # 1 for a scalar, n for an n-vector starting at index
    aligned: bool = False  # a vector read whose address is a multiple of its size (set by vectorization)

    def map_exprs(self, fn):
        index = fn(self.index)
        return self if index is self.index else MemRead(self.buffer, index, self.width, self.aligned)


@cached_hash
@dataclass(frozen=True)
class IndexRead(Read):
    """An element index as an int value (an element of ``iota``): the index expression itself, computed where
    it is used, simplified and unrolled as every other index."""

    index: A.Expr

    def map_exprs(self, fn):
        index = fn(self.index)
        return self if index is self.index else IndexRead(index)


@cached_hash
@dataclass(frozen=True)
class ConstRead(Read):
    value: Any
    scalar: Any  # ScalarType
    width: int = 1


@cached_hash
@dataclass(frozen=True)
class CondRead(Read):
    cond: A.Cond
    then: Read
    other: Read
    # Both branches read the same value, ``other`` with its boundary functions (a clamp's min and max) and
    # ``then`` without them, which ``cond`` allows (``codegen.passes.guards``): ``other`` is then right
    # wherever the read is, and a pass may take it whatever ``cond`` says (``codegen.passes.runs``).
    same: bool = False

    def children(self):
        return (self.then, self.other)

    def with_children(self, kids):
        return CondRead(self.cond, *kids, self.same)

    def map_exprs(self, fn):
        cond = fn(self.cond)
        return self if cond is self.cond else CondRead(cond, self.then, self.other, self.same)


@cached_hash
@dataclass(frozen=True)
class FunCall(Read):
    """A call of a user function (its C name) on the values of its arguments."""

    name: str
    args: tuple[Read, ...]

    def children(self):
        return self.args

    def with_children(self, kids):
        return FunCall(self.name, kids)


@cached_hash
@dataclass(frozen=True)
class VecRead(Read):
    """A vector assembled lane by lane, when its lanes are not contiguous in memory."""

    lanes: tuple[Read, ...]
    scalar: Any

    def children(self):
        return self.lanes

    def with_children(self, kids):
        return VecRead(kids, self.scalar)


@cached_hash
@dataclass(frozen=True)
class LaneRead(Read):
    """One lane of a computed vector value (``v.s2``, or chosen by comparisons for a variable lane)."""

    vector: Read
    lane: A.Expr

    def children(self):
        return (self.vector,)

    def with_children(self, kids):
        return LaneRead(kids[0], self.lane)

    def map_exprs(self, fn):
        lane = fn(self.lane)
        return self if lane is self.lane else LaneRead(self.vector, lane)


@cached_hash
@dataclass(frozen=True)
class FieldRead(Read):
    """Component ``index`` of a tuple value (a struct in memory, or returned by a user function)."""

    value: Read
    index: int

    def children(self):
        return (self.value,)

    def with_children(self, kids):
        return FieldRead(kids[0], self.index)


@cached_hash
@dataclass(frozen=True)
class TupleRead(Read):
    """A tuple value assembled from its components (a zip's element passed whole to a user function)."""

    parts: tuple[Read, ...]
    type: Any  # ir.types.TupleType

    def children(self):
        return self.parts

    def with_children(self, kids):
        return TupleRead(kids, self.type)


def tuple_read(parts: tuple[Read, ...], t) -> Read:
    """The tuple of ``parts``; when they are the components of one tuple value in order, that value."""
    bases = {p.value for p in parts if isinstance(p, FieldRead)}
    if len(bases) == 1 and all(isinstance(p, FieldRead) and p.index == i for i, p in enumerate(parts)):
        return parts[0].value
    return TupleRead(tuple(parts), t)


def field_of(r: Read, index: int) -> Read:
    if isinstance(r, TupleRead):
        return r.parts[index]
    if isinstance(r, CondRead):
        return r.with_children((field_of(r.then, index), field_of(r.other, index)))
    return FieldRead(r, index)


@cached_hash
@dataclass(frozen=True)
class ImageRead(Read):
    """One float4 texel of an OpenCL image, or one lane of it."""

    image: Any  # codegen.memory.Buffer with space 'image'
    x: A.Expr
    y: A.Expr
    lane: A.Expr | None  # None: the whole texel

    def map_exprs(self, fn):
        x, y, lane = fn(self.x), fn(self.y), None if self.lane is None else fn(self.lane)
        if x is self.x and y is self.y and lane is self.lane:
            return self  # an unchanged read is kept, so the statement holding it is too
        return ImageRead(self.image, x, y, lane)
