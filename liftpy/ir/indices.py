"""Element indices as values: ``iota(n)`` and ``indices(xs)``, layout primitives of the table in
``liftpy.ir.primitives`` (kept here: that module is long enough).

A condition on where an element is (a triangle, a diagonal, a border kept as it is) needs the element's
index; without these it came from the host as an array of indices, or from a padded mask of ones.  ``iota``
is a view with no memory, as a repeated literal is: reading element ``i`` gives the index expression ``i``
itself (``views.view.IotaView``), which the kernel computes where the element is used.

    mapIdx(lambda i, x: select(le(i, lit(N - 1)), x, 0.0), xs)    # map over zip(iota(N), xs)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..views import view as V
from .prims.base import Primitive, expect_array
from .types import ArrayType, Int, Size, size_str
from .values import BV


@dataclass(frozen=True, eq=True)
class Iota(Primitive):
    """``iota(n)``: ``[int]n``, element ``i`` is ``i``.  No data argument; its length is a size."""

    n: Size
    name: ClassVar[str] = "iota"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 0

    def typecheck(self, args, tc):
        # (A length beyond the kernel's 32-bit indices is refused where sizes get values, as for any array.)
        tc.require_positive(self.n, lambda: f"the length {size_str(self.n)} must be positive")
        return ArrayType(Int, self.n)

    def evaluate(self, args, ev):
        # No batch of its own: whoever uses it broadcasts it into theirs (``values.lift``), as a literal.
        return BV(np.arange(int(ev.concrete(self.n)), dtype=np.int32), ())

    def view(self, views, types, conc):
        return V.IotaView()


@dataclass(frozen=True, eq=True)
class Indices(Primitive):
    """``indices(xs)``: ``[T]n -> [int]n``, the indices of ``xs`` (``iota`` of its length), which ``mapIdx``
    zips with ``xs`` where the length is not known yet.  A program replaces it by ``iota(n)`` once it is built
    (``typecheck.resolve_indexing``), so no pass meets an array it does not read; until then it behaves as
    that ``iota``."""

    name: ClassVar[str] = "indices"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def resolved(self, t: ArrayType) -> Iota:
        return Iota(t.size)

    def typecheck(self, args, tc):
        return ArrayType(Int, expect_array(tc, args[0], "an array (whose indices it gives)").size)

    def evaluate(self, args, ev):
        xs = args[0]
        n = xs.length()
        return BV(np.broadcast_to(np.arange(n, dtype=np.int32), xs.batch + (n,)), xs.batch)

    def view(self, views, types, conc):
        return V.IotaView()
