"""Write views: where the elements a computation produces are stored.

The emitter passes a destination down the expression that computes a value (destination-passing style,
as Shine's acceptors do).  Layout primitives *above* a computation become write views: the result of
``join(e)`` is written by ``e`` through a view that maps e's two indices to one, so ``join``, ``split``,
``transpose`` and the vector casts cost nothing on the write side either.  A write view resolves an
access path to a location: a buffer and a flat index in scalars.
"""

from __future__ import annotations

import abc

from dataclasses import dataclass
from typing import Any


from ..errors import CodegenError
from .. import arith as A
from ..arith import affine, row_major


@dataclass(frozen=True)
class Loc:
    buffer: Any
    index: A.Expr  # in scalars


class WView(abc.ABC):
    @abc.abstractmethod
    def locate(self, path: tuple) -> Loc:
        """Where the element at ``path`` is stored."""

    @property
    def root(self):
        v = self
        while not isinstance(v, WMem):
            v = v.inner
        return v.buffer


@dataclass(frozen=True)
class WMem(WView):
    buffer: Any
    dims: tuple[int, ...]
    width: int = 1

    def locate(self, path: tuple) -> Loc:
        if len(path) != len(self.dims):
            raise CodegenError(
                f"internal: write to {self.buffer.name} with {len(path)} indices, expected {len(self.dims)}"
            )
        return Loc(self.buffer, row_major(path, self.dims, self.width))


@dataclass(frozen=True)
class WIndex(WView):
    """Element ``index`` of the destination: where one iteration of a map writes."""

    index: Any
    inner: WView

    def locate(self, path: tuple) -> Loc:
        return self.inner.locate((self.index,) + path)


@dataclass(frozen=True)
class WJoin(WView):
    """Destination of ``e`` when the value stored is ``join(e)``; ``n`` is the inner length."""

    n: int
    inner: WView

    def locate(self, path: tuple) -> Loc:
        return self.inner.locate((affine(path[0], self.n, path[1]),) + path[2:])


@dataclass(frozen=True)
class WSplit(WView):
    """Destination of ``e`` when the value stored is ``split(n, e)``."""

    n: int
    inner: WView

    def locate(self, path: tuple) -> Loc:
        i = path[0]
        return self.inner.locate((A.floordiv(i, self.n), A.mod(i, self.n)) + path[1:])


@dataclass(frozen=True)
class WTranspose(WView):
    inner: WView

    def locate(self, path: tuple) -> Loc:
        return self.inner.locate((path[1], path[0]) + path[2:])


@dataclass(frozen=True)
class WAsScalar(WView):
    """Destination of vectors ``e`` when the value stored is ``asScalar(e)``: vector i starts at scalar
    ``i * n``."""

    n: int
    inner: WView

    def locate(self, path: tuple) -> Loc:
        return self.inner.locate((path[0] * self.n,) + path[1:])


@dataclass(frozen=True)
class WAsVector(WView):
    """Destination of scalars ``e`` when the value stored is ``asVector(n, e)``."""

    n: int
    inner: WView

    def locate(self, path: tuple) -> Loc:
        i = path[0]
        loc = self.inner.locate((A.floordiv(i, self.n),) + path[1:])
        return Loc(loc.buffer, loc.index + A.mod(i, self.n))


@dataclass(frozen=True)
class WOnly(WView):
    """Destination of a one-element array ``e`` when the value stored is ``at(0, e)`` (a reduction's
    result as its value, ``fold``): its only element is the destination itself."""

    inner: WView

    def locate(self, path: tuple) -> Loc:
        return self.inner.locate(path[1:])


@dataclass(frozen=True)
class WMapped(WView):
    """Destination of ``e`` when the value stored is ``map(g, e)`` for a layout function g: element i of
    e is written through the inverse of g into element i of the destination."""

    element: Any  # index -> WView
    inner: WView  # the destination of the whole map (for root())

    def locate(self, path: tuple) -> Loc:
        return self.element(path[0]).locate(path[1:])
