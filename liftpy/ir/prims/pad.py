"""``pad``: an array with elements added before and after, by a constant or a boundary rule; a view, as the
other layout primitives (``liftpy.ir.prims.layout``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import sympy

from ...errors import EvaluationError
from ...views import view as V
from ..sizes import INT_INDEX_MAX, Size, size_str
from ..types import ArrayType, VectorType, contains_tuple, innermost, scalar_of
from ..values import at_axis
from .base import Primitive, expect_array


BOUNDARIES = ("clamp", "mirror", "wrap")
_NUMPY_MODE = {"clamp": "edge", "mirror": "symmetric", "wrap": "wrap"}



def _refuse_huge_pad(a, ax: int, left: int, right: int) -> None:
    """Padding is the one layout primitive whose result the interpreter allocates from the program's own
    constants (pad(1, 2^31 - 1, ...) of four elements): refused past what a kernel could index."""
    length = a.shape[ax] + max(left, 0) + max(right, 0)
    elements = (a.size // a.shape[ax] if a.shape[ax] else 1) * length
    if elements > INT_INDEX_MAX:
        raise EvaluationError(f"pad: padding {a.shape[ax]} elements by {left} and {right} makes {elements} elements, "
                              f"beyond the {INT_INDEX_MAX} a kernel can index; pad by less")

@dataclass(frozen=True, eq=True)
class Pad(Primitive):
    """``pad(l, r, value, xs)``: ``[T]n -> [T]l+n+r`` with ``l`` elements before and ``r`` after.

    ``value`` is the boundary: a number (the constant boundary: copies of it; negative amounts crop
    instead), or ``clamp`` (the edge element repeated), ``mirror`` (the array reflected, edge included:
    ``x1 x0 | x0 x1 ... xn-1 | xn-1 xn-2``) or ``wrap`` (the array repeated periodically).  Lift's pad
    takes the boundary as a reindexing function; here too it is an index function of the view, so a
    padded array is never copied.  Mirror and wrap read each element at most once per side: their
    amounts are at most the length."""

    left: Size
    right: Size
    value: Any = 0.0
    name: ClassVar[str] = "pad"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    @property
    def boundary(self) -> str:
        """``constant``, ``clamp``, ``mirror`` or ``wrap``."""
        return self.value if isinstance(self.value, str) else "constant"

    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0])
        s = scalar_of(xs.elem)
        if s is None or contains_tuple(xs.elem):
            tc.fail(f"pads arrays of scalars or vectors (or arrays of them), got {xs}")
        if isinstance(self.value, str):
            return self._typecheck_boundary(xs, tc)
        if not isinstance(self.value, (int, float, bool, np.number)):
            tc.fail(f"the padding value must be a number or a boundary ({', '.join(BOUNDARIES)}), got {self.value!r}")
        if s.name == "int" and (float(self.value) != int(self.value) or not -(2**31) <= int(self.value) < 2**31):
            tc.fail(f"the padding value {self.value!r} is not a 32-bit integer, as the elements of {xs} are")
        for side, amount in (("left", self.left), ("right", self.right)):
            num, den = sympy.fraction(sympy.together(amount))
            if den != 1:
                tc.require_divisible(
                    num, den,
                    lambda side=side, amount=amount: f"the {side} padding/cropping amount {size_str(amount)} must be a whole number",
                )
        n = xs.size + self.left + self.right
        tc.require(sympy.Ge(n, 1), lambda: f"padding by ({size_str(self.left)}, {size_str(self.right)}) leaves no element of {xs}")
        tc.require(sympy.Ge(xs.size + self.left, 0), lambda: f"cropping {size_str(-self.left)} elements from the left of {xs}")
        tc.require(sympy.Ge(xs.size + self.right, 0), lambda: f"cropping {size_str(-self.right)} elements from the right of {xs}")
        return ArrayType(xs.elem, n)

    def _typecheck_boundary(self, xs, tc):
        b = self.value
        if b not in BOUNDARIES:
            tc.fail(f"unknown boundary {b!r}: pad takes a number (the constant boundary) or one of {', '.join(BOUNDARIES)}")
        for side, amount in (("left", self.left), ("right", self.right)):
            tc.require(sympy.Ge(amount, 0), lambda side=side, amount=amount:
                       f"a {b} boundary pads and cannot crop: the {side} amount {size_str(amount)} must be at least 0")
            if b in ("mirror", "wrap"):
                tc.require(sympy.Le(amount, xs.size), lambda side=side, amount=amount:
                           f"{b} padding by {size_str(amount)} on the {side} must not exceed the length "
                           f"{size_str(xs.size)} of {xs} (each element is reflected or repeated at most once per side)")
        return ArrayType(xs.elem, xs.size + self.left + self.right)

    def evaluate(self, args, ev):
        l, r = int(ev.concrete(self.left)), int(ev.concrete(self.right))
        if isinstance(self.value, str):
            mode = _NUMPY_MODE[self.value]

            def pad_boundary(a, ax):
                _refuse_huge_pad(a, ax, l, r)
                widths = [(0, 0)] * a.ndim
                widths[ax] = (l, r)
                return np.pad(a, widths, mode=mode)

            return at_axis(args[0], pad_boundary)

        def go(a, ax):
            _refuse_huge_pad(a, ax, l, r)
            n = a.shape[ax]
            a = a[(slice(None),) * ax + (slice(max(-l, 0), n - max(-r, 0)),)]
            widths = [(0, 0)] * a.ndim
            widths[ax] = (max(l, 0), max(r, 0))
            return np.pad(a, widths, constant_values=np.asarray(self.value).astype(a.dtype))

        return at_axis(args[0], go)

    def view(self, views, types, conc):
        xs = types[0]
        leaf = innermost(xs)
        width = conc(leaf.width) if isinstance(leaf, VectorType) else 1
        return V.PadView(conc(self.left), conc(self.right), conc(xs.size), self.value, scalar_of(xs), width, views[0])
