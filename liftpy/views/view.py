"""Views: layout primitives as index transformations, with no memory of their own.

A view describes where the elements of a (possibly nested, possibly tuple-typed) array live.  Reading an
element means walking the view chain with an *access path*: the array indices and tuple components the
consumer applies, outermost first (Lift's two stacks, kept as one path of ``int``-like index expressions
and ``Field`` steps).  Each view rewrites the front of the path and passes it to the view below, until
memory (a buffer and a flat index), a constant (padding) or a computed scalar is reached.  The result is a
small tree of ``Read`` nodes (``liftpy.views.reads``) that the emitter prints; index expressions are
integer expressions over loop variables (``liftpy.arith``), simplified afterwards with the loop ranges.

Views work on concrete integer sizes: the emitter builds them after the program's size variables and
tuning parameters have values.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Callable

from .. import arith as A
from ..arith import affine, in_bounds, row_major
from ..errors import CodegenError
from .reads import (  # noqa: F401 - the reads are part of the views' vocabulary (``V.MemRead``)
    CondRead,
    ConstRead,
    Field,
    FieldRead,
    FunCall,
    ImageRead,
    IndexRead,
    LaneRead,
    MemRead,
    Read,
    TupleRead,
    VecRead,
    cached_hash,
    field_of,
    transform,
    tuple_read,
    walk_reads,
)


# --------------------------------------------------------------------------------------------------
# Views


class View(abc.ABC):
    @abc.abstractmethod
    def access(self, path: tuple) -> Read:
        """What the element at ``path`` resolves to."""

    def describe(self) -> str:
        return type(self).__name__


def _need(path: tuple, n: int, who: str) -> None:
    if len(path) < n or any(isinstance(p, Field) for p in path[:n]):
        raise CodegenError(f"internal: view {who} accessed with path {path!r}")


@dataclass(frozen=True)
class MemView(View):
    """Row-major memory: ``dims`` are the array lengths outermost first, ``width`` the leaf vector width."""

    buffer: Any
    dims: tuple[int, ...]
    width: int = 1

    def access(self, path: tuple) -> Read:
        n = len(self.dims)
        if len(path) < n or any(isinstance(p, Field) for p in path[:n]) or not all(isinstance(p, Field) for p in path[n:]):
            raise CodegenError(
                f"access to buffer {self.buffer.name} with {len(path)} indices, expected {len(self.dims)}"
            )
        return _fields(MemRead(self.buffer, row_major(path[:n], self.dims, self.width), self.width), path[n:])


def _fields(r: Read, fields: tuple) -> Read:
    """Tuple components selected below a value (fields of a struct)."""
    for f in fields:
        r = field_of(r, f.index)
    return r


@dataclass(frozen=True)
class ConstView(View):
    """A constant: every element of an array literal is ``value``.  For a tuple, ``leaf`` describes its
    components (``(tuple type, [component leaves])``, or ``(scalar, width)`` for a scalar or vector),
    ``value`` is a tuple and the path's components select from it."""

    value: Any
    scalar: Any
    width: int = 1
    leaf: Any = None

    def access(self, path: tuple) -> Read:
        fields = [p.index for p in path if isinstance(p, Field)]
        if self.leaf is not None:
            return _const(self.value, self.leaf, fields)
        return _const_vector(self.value, self.scalar, self.width)


def _const_vector(value, scalar, width: int) -> Read:
    # A vector with a value per lane is assembled from its lanes.
    if isinstance(value, tuple):
        return VecRead(tuple(ConstRead(v, scalar, 1) for v in value), scalar)
    return ConstRead(value, scalar, width)


def _const(value, leaf, fields) -> Read:
    for k in fields:
        value, leaf = value[k], leaf[1][k]
    if isinstance(leaf[1], list):
        return TupleRead(tuple(_const(v, e, []) for v, e in zip(value, leaf[1])), leaf[0])
    scalar, width = leaf
    return _const_vector(value, scalar, width)


@dataclass(frozen=True)
class IotaView(View):
    """``iota(n)``: element ``i`` is the value ``i``; no memory, as a constant has none."""

    def access(self, path: tuple) -> Read:
        if len(path) != 1 or isinstance(path[0], Field):
            raise CodegenError(f"internal: iota accessed with path {path!r}")
        return IndexRead(path[0])


@dataclass(frozen=True)
class ValueView(View):
    """A scalar or vector value computed in place, e.g. a user-function call."""

    value: Read

    def access(self, path: tuple) -> Read:
        if not all(isinstance(p, Field) for p in path):
            raise CodegenError(f"internal: indexing into the scalar value {self.value!r}")
        return _fields(self.value, path)


@dataclass(frozen=True)
class IndexView(View):
    """Element ``index`` of an array view: what a map's parameter is bound to."""

    index: Any
    inner: View

    def access(self, path: tuple) -> Read:
        return self.inner.access((self.index,) + path)


@dataclass(frozen=True)
class FieldView(View):
    index: int
    inner: View

    def access(self, path: tuple) -> Read:
        return self.inner.access((Field(self.index),) + path)


@dataclass(frozen=True)
class SplitView(View):
    n: int
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 2, "split")
        i, j, rest = path[0], path[1], path[2:]
        return self.inner.access((affine(i, self.n, j),) + rest)


@dataclass(frozen=True)
class JoinView(View):
    n: int  # length of the inner arrays being joined
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "join")
        i, rest = path[0], path[1:]
        return self.inner.access((A.floordiv(i, self.n), A.mod(i, self.n)) + rest)


@dataclass(frozen=True)
class SlideView(View):
    step: int
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 2, "slide")
        i, j, rest = path[0], path[1], path[2:]
        return self.inner.access((affine(i, self.step, j),) + rest)


def boundary_index(boundary: str, j, n):
    """The index read for position ``j`` (``-amount <= j < n + amount``) of an array of length ``n``
    padded with a boundary, as min/max arithmetic (no branch): clamp repeats the edges, mirror reflects
    (edge included; amounts at most ``n``), wrap repeats periodically (amounts at most ``n``)."""
    if boundary == "clamp":
        return A.minimum((A.maximum((j, 0)), n - 1))
    if boundary == "mirror":
        a = A.maximum((j, -1 - j))
        return A.minimum((a, 2 * n - 1 - a))
    if boundary == "wrap":
        return A.mod_of(j + n, n)
    raise CodegenError(f"internal: unknown boundary {boundary!r}")


@dataclass(frozen=True)
class PadView(View):
    left: int
    right: int
    length: int  # length of the array before padding
    value: Any
    scalar: Any
    width: int
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "pad")
        i, rest = path[0], path[1:]
        j = A.plus(i, -self.left)
        if isinstance(self.value, str):  # a boundary: an index function, every read is a read of the array
            return self.inner.access((boundary_index(self.value, j, self.length),) + rest)
        inside = self.inner.access((j,) + rest)
        if self.left <= 0 and self.right <= 0:  # pure cropping never reads outside the array
            return inside
        cond = in_bounds(j, self.length)
        return CondRead(cond, inside, ConstRead(self.value, self.scalar, self.width))


@dataclass(frozen=True)
class GatherView(View):
    """Element ``indices[i]`` of ``inner`` at position ``i``: the index is read from memory where the
    index array lies (an input in global memory, or any buffer the program wrote)."""

    indices: View
    length: Any  # of the gathered dimension of inner
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "gather")
        r = self.indices.access((path[0],))
        if not (isinstance(r, MemRead) and r.width == 1 and not r.buffer.is_scalar_variable):
            raise CodegenError(f"gather reads its indices from an array in memory; here they are {type(r).__name__} "
                               "(computed or padded): store them first (toGlobal or toPrivate)")
        return self.inner.access((A.cload(r.buffer.name, r.index, int(self.length)),) + path[1:])


@dataclass(frozen=True)
class AtView(View):
    """One element of an array: the paths below it continue into that element."""

    index: Any
    inner: View

    def access(self, path: tuple) -> Read:
        return self.inner.access((self.index,) + path)


@dataclass(frozen=True)
class TransposeView(View):
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 2, "transpose")
        return self.inner.access((path[1], path[0]) + path[2:])


@dataclass(frozen=True)
class ReorderView(View):
    fn: Any  # an IndexFun
    length: int
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "reorder")
        return self.inner.access((self.fn.apply(path[0], self.length),) + path[1:])


@dataclass(frozen=True)
class ZipView(View):
    inners: tuple[View, ...]

    def access(self, path: tuple) -> Read:
        if len(path) < 2 or not isinstance(path[1], Field) or isinstance(path[0], Field):
            raise CodegenError(f"internal: zip accessed with path {path!r}")
        return self.inners[path[1].index].access((path[0],) + path[2:])


@dataclass(frozen=True)
class TupleView(View):
    """A tuple of views (a tuple value that is not an element of a zip)."""

    elems: tuple[View, ...]

    def access(self, path: tuple) -> Read:
        if not path or not isinstance(path[0], Field):
            raise CodegenError(f"internal: tuple accessed with path {path!r}")
        return self.elems[path[0].index].access(path[1:])


@dataclass(frozen=True)
class AsVectorView(View):
    n: int
    scalar: Any
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "asVector")
        if len(path) != 1:
            raise CodegenError("internal: asVector accessed below its vector elements")
        i = path[0]
        # Lanes are merged into one vector load (or one texel read) by the emitter, which knows the loop
        # ranges needed to prove them contiguous.
        lanes = tuple(self.inner.access((affine(i, self.n, t),)) for t in range(self.n))
        return VecRead(lanes, self.scalar)


@dataclass(frozen=True)
class AsScalarView(View):
    n: int
    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "asScalar")
        i, rest = path[0], path[1:]
        if rest:
            raise CodegenError("internal: asScalar accessed below its scalar elements")
        whole = self.inner.access((A.floordiv(i, self.n),))
        lane = A.mod(i, self.n)
        return _lane_of(whole, lane, self.n)


def _lane_of(r: Read, lane, n: int) -> Read:
    if isinstance(r, MemRead):
        return MemRead(r.buffer, r.index + lane, 1)
    if isinstance(r, FunCall):
        return LaneRead(r, lane)
    if isinstance(r, ConstRead):
        return ConstRead(r.value, r.scalar, 1)
    if isinstance(r, CondRead):
        return r.with_children((_lane_of(r.then, lane, n), _lane_of(r.other, lane, n)))
    if isinstance(r, ImageRead) and r.lane is None:
        return ImageRead(r.image, r.x, r.y, lane)
    if isinstance(r, VecRead):
        if isinstance(lane, int) or (isinstance(lane, A.Expr) and lane.is_const):
            return r.lanes[int(lane)]
        # Choose the lane by comparisons; with the loop ranges known most of them fold away.
        out = r.lanes[-1]
        for t in range(len(r.lanes) - 2, -1, -1):
            out = CondRead(A.rel("==", lane, t), r.lanes[t], out)
        return out
    raise CodegenError(f"internal: cannot take lane {lane} of {r!r}")


@dataclass(frozen=True)
class MapView(View):
    """``map(f, xs)`` where ``f`` only rearranges data: element i is the view ``f(xs[i])``."""

    element: Callable[[Any], View]

    def access(self, path: tuple) -> Read:
        _need(path, 1, "map")
        return self.element(path[0]).access(path[1:])


@dataclass(frozen=True)
class ImageView(View):
    """An input array ``[[[float]C]W]H`` stored as an RGBA float image of width ``W * C/4`` and height
    ``H``: the channel dimension is packed four to a texel (TFLite's PHWC4 layout), so element
    ``[y][x][c]`` is lane ``c % 4`` of texel ``(x * C/4 + c / 4, y)``.  When the consumer reads float4
    vectors of channels (after ``asVector(4)``), whole texels are read."""

    image: Any
    channels: int

    def access(self, path: tuple) -> Read:
        if len(path) != 3 or any(isinstance(p, Field) for p in path):
            raise CodegenError(f"image {self.image.name} accessed with {len(path)} indices, expected 3")
        y, x, c = path
        groups = self.channels // 4
        return ImageRead(self.image, affine(x, groups, A.floordiv(c, 4)), y, A.mod(c, 4))


@dataclass(frozen=True)
class UnitView(View):
    """``[T]1`` over a value of type T (the result of a reduction, held in its accumulator)."""

    inner: View

    def access(self, path: tuple) -> Read:
        _need(path, 1, "reduction result")
        return self.inner.access(path[1:])
