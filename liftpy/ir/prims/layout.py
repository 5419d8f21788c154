"""The layout primitives: views of their arguments, which move no data (``liftpy.views.view``); the
boundaries of ``pad`` are in ``liftpy.ir.prims.pad``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import sympy

from ...errors import LiftError, LiftTypeError
from ...views import view as V
from ...views import write as W
from ..sizes import Size, as_size, size_str
from ..types import ArrayType, ScalarType, TupleType, Type, VectorType
from ..values import BV, at_axis, first_leaf, tmap
from .base import VECTOR_WIDTHS, IndexFun, Primitive, Reverse, Stride, expect_array


def _split_axis(x, n: int):
    """The array axis of ``x`` (its values' axis, ``values.at_axis``) cut into rows of ``n``: what ``split``
    and ``asVector`` mean on values."""
    return at_axis(x, lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] // n, n) + a.shape[ax + 1 :]))


@dataclass(frozen=True, eq=True)
class Zip(Primitive):
    """``zip(a, b, ...)``: ``[T1]n, [T2]n, ... -> [(T1, T2, ...)]n``."""

    name: ClassVar[str] = "zip"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = -1

    def typecheck(self, args, tc):
        if len(args) < 2:
            tc.fail(f"needs at least two arrays, got {len(args)}")
        arrays = [expect_array(tc, a, f"arrays (argument {i + 1} is not)") for i, a in enumerate(args)]
        n = arrays[0].size
        for i, a in enumerate(arrays[1:], start=2):
            tc.require_equal(
                n, a.size, lambda i=i, a=a: f"all arrays must have the same length: argument 1 has length {size_str(n)}, argument {i} has length {size_str(a.size)}"
            )
        return ArrayType(TupleType(tuple(a.elem for a in arrays)), n)

    def evaluate(self, args, ev):
        return BV(tuple(a.data for a in args), args[0].batch)

    def view(self, views, types, conc):
        return V.ZipView(tuple(views))


@dataclass(frozen=True, eq=True)
class Get(Primitive):
    """``get(t, i)``: component i of a tuple."""

    index: int
    name: ClassVar[str] = "get"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        t = args[0]
        if isinstance(t, ArrayType):
            tc.fail(f"selects a component of a tuple, got the array {t}: for its element {self.index} write "
                    f"at({self.index}, xs)")
        if not isinstance(t, TupleType):
            tc.fail(f"expects a tuple, got {t}")
        if not 0 <= self.index < len(t.elems):
            tc.fail(f"component {self.index} of a {len(t.elems)}-tuple {t}")
        return t.elems[self.index]

    def evaluate(self, args, ev):
        return BV(args[0].data[self.index], args[0].batch)

    def view(self, views, types, conc):
        return V.FieldView(self.index, views[0])


@dataclass(frozen=True, eq=True)
class Gather(Primitive):
    """``gather(indices, xs)``: ``[int]m, [T]n -> [T]m``, element ``k`` is ``xs[indices[k]]`` (Lift's
    ``Filter``): neighbour lists, sparse rows.  A view whose index is read from memory; indices outside
    ``[0, n)`` are an error in the interpreter, and the generated kernel trusts them."""

    name: ClassVar[str] = "gather"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 2

    def typecheck(self, args, tc):
        idx = expect_array(tc, args[0], "an array of int indices")
        xs = expect_array(tc, args[1])
        if not (isinstance(idx.elem, ScalarType) and idx.elem.name == "int"):
            tc.fail(f"the indices must be an array of int, got {idx}")
        return ArrayType(xs.elem, idx.size)

    def evaluate(self, args, ev):
        idx, xs = args
        ax = xs.axis
        i = np.asarray(idx.data)
        n = first_leaf(xs.data).shape[ax]
        if i.size and (i.min() < 0 or i.max() >= n):
            bad = int(i.min()) if i.min() < 0 else int(i.max())
            raise LiftError(f"gather: index {bad} outside the {n} elements of the array it reads")

        def go(a):
            rest = a.ndim - ax - 1
            ii = np.broadcast_to(i.reshape(i.shape + (1,) * rest), i.shape + a.shape[ax + 1:])
            return np.take_along_axis(a, ii, axis=ax)

        return BV(tmap(go, xs.data), xs.batch)

    def view(self, views, types, conc):
        return V.GatherView(views[0], conc(types[1].size), views[1])


@dataclass(frozen=True, eq=True)
class At(Primitive):
    """``at(i, xs)``: element ``i`` of an array, ``[T]n -> T`` with ``0 <= i < n`` (a number or a size
    expression).  A view: the element is read where it lies, as Lift's ``at`` does; a stencil reads its
    neighbours this way instead of cropping them out of a window with negative pads."""

    index: Size
    name: ClassVar[str] = "at"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def __post_init__(self):
        object.__setattr__(self, "index", _index_size("at", self.index))

    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0])
        tc.require(sympy.Ge(self.index, 0), lambda: f"the index {size_str(self.index)} must not be negative")
        tc.require(sympy.Lt(self.index, xs.size),
                   lambda: f"the index {size_str(self.index)} must be below the length {size_str(xs.size)} of {xs}")
        return xs.elem

    def evaluate(self, args, ev):
        i = int(ev.concrete(self.index))
        return at_axis(args[0], lambda a, ax: np.take(a, i, axis=ax))

    def view(self, views, types, conc):
        return V.AtView(conc(self.index), views[0])

    def write_view(self, arg_type, dest, conc):
        # Of a one-element array only (fold: a reduction's result stored as its value); of a longer array
        # the other elements would have nowhere to go.
        if isinstance(arg_type, ArrayType) and sympy.sympify(conc(arg_type.size)) == 1:
            return W.WOnly(dest)
        return None


def _index_size(who: str, index) -> Size:
    """An element index given to ``at`` or ``[ ]``: a whole number or a size expression."""
    if isinstance(index, bool) or not isinstance(index, (int, sympy.Basic, str)):
        raise LiftTypeError(who, f"the index must be a whole number or a size expression, got {index!r}; "
                            "to read at positions held in an array use gather(indices, xs)")
    return sympy.Integer(index) if isinstance(index, int) else as_size(index)


@dataclass(frozen=True, eq=True)
class Index(Primitive):
    """``x[i]`` of the embedded DSL and the text form: component ``i`` of a tuple or element ``i`` of an
    array, whichever ``x`` is (the DSL traces functions before their arguments' types are known).  A
    program resolves it into ``get`` or ``at`` once it is built (``typecheck.resolve_indexing``); until
    then it behaves as the one it stands for."""

    index: Size
    name: ClassVar[str] = "index"
    text_forms: ClassVar[dict] = {}  # written xs[i] in the text form, not by name
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def __post_init__(self):
        object.__setattr__(self, "index", _index_size("[ ]", self.index))

    def resolved(self, t: Type) -> Primitive:
        """``get`` for a tuple ``t``, ``at`` for an array."""
        if isinstance(t, TupleType):
            if not self.index.is_Integer:
                raise LiftTypeError("[ ]", f"a tuple component is selected by a number, not {size_str(self.index)}")
            return Get(int(self.index))
        return At(self.index)

    def typecheck(self, args, tc):
        if not isinstance(args[0], (TupleType, ArrayType)):
            tc.fail(f"[{size_str(self.index)}] selects a component of a tuple or an element of an array, got {args[0]}")
        return self.resolved(args[0]).typecheck(args, tc)

    def evaluate(self, args, ev):
        return (Get(int(self.index)) if isinstance(args[0].data, tuple) else At(self.index)).evaluate(args, ev)

    def view(self, views, types, conc):
        return self.resolved(types[0]).view(views, types, conc)


@dataclass(frozen=True, eq=True)
class Split(Primitive):
    """``split(m, xs)``: ``[T]n -> [[T]m]n/m``, requires ``n % m == 0``."""

    n: Size
    name: ClassVar[str] = "split"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0])
        tc.require_positive(self.n, lambda: f"the chunk size {size_str(self.n)} must be positive")
        tc.require_divisible(
            xs.size, self.n,
            lambda: f"the length {size_str(xs.size)} of {xs} must be divisible by {size_str(self.n)} "
            f"({size_str(xs.size)} % {size_str(self.n)} == 0 is required)",
        )
        return ArrayType(ArrayType(xs.elem, self.n), xs.size / self.n)

    def evaluate(self, args, ev):
        return _split_axis(args[0], int(ev.concrete(self.n)))

    def view(self, views, types, conc):
        return V.SplitView(conc(self.n), views[0])

    writes_through = True

    def write_view(self, arg_type, dest, conc):
        return W.WSplit(conc(self.n), dest)


@dataclass(frozen=True, eq=True)
class Join(Primitive):
    """``join(xs)``: ``[[T]m]n -> [T]n*m``."""

    name: ClassVar[str] = "join"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        outer = expect_array(tc, args[0], "an array of arrays")
        inner = expect_array(tc, outer.elem, "an array of arrays")
        return ArrayType(inner.elem, outer.size * inner.size)

    def evaluate(self, args, ev):
        return at_axis(args[0], lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] * a.shape[ax + 1],) + a.shape[ax + 2 :]))

    def view(self, views, types, conc):
        return V.JoinView(conc(types[0].elem.size), views[0])

    writes_through = True

    def write_view(self, arg_type, dest, conc):
        return W.WJoin(conc(arg_type.elem.size), dest)


@dataclass(frozen=True, eq=True)
class Slide(Primitive):
    """``slide(size, step, xs)``: ``[T]n -> [[T]size](n - size)/step + 1``, the windows of ``size``
    elements starting every ``step`` elements.  The plain slide keeps the windows that fit (floor);
    ``slideStrict`` requires the windows to cover the input exactly, ``(n - size) % step == 0``, as the
    tiling rewrite needs."""

    size: Size
    step: Size
    strict: bool = False
    name: ClassVar[str] = "slide"
    text_forms: ClassVar[dict] = {"slide": {"strict": False}, "slideStrict": {"strict": True}}
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1


    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0])
        n = xs.size
        tc.require_positive(self.size, lambda: f"the window size {size_str(self.size)} must be positive")
        tc.require_positive(self.step, lambda: f"the step {size_str(self.step)} must be positive")
        tc.require(
            sympy.Ge(n, self.size),
            lambda: f"the window size {size_str(self.size)} must not exceed the length {size_str(n)} of {xs}",
        )
        if self.strict:
            tc.require_divisible(
                n - self.size, self.step,
                lambda: f"windows of {size_str(self.size)} every {size_str(self.step)} must cover the length "
                f"{size_str(n)} exactly (({size_str(n)} - {size_str(self.size)}) % {size_str(self.step)} == 0 is required)",
            )
            count = (n - self.size) / self.step + 1
        else:
            count = sympy.floor((n - self.size) / self.step) + 1
        return ArrayType(ArrayType(xs.elem, self.size), count)

    def evaluate(self, args, ev):
        size, step = int(ev.concrete(self.size)), int(ev.concrete(self.step))

        def go(a, ax):
            w = np.lib.stride_tricks.sliding_window_view(a, size, axis=ax)
            w = w[(slice(None),) * ax + (slice(None, None, step),)]
            return np.moveaxis(w, -1, ax + 1)

        return at_axis(args[0], go)

    def view(self, views, types, conc):
        return V.SlideView(conc(self.step), views[0])


@dataclass(frozen=True, eq=True)
class Transpose(Primitive):
    """``transpose(xs)``: ``[[T]n]m -> [[T]m]n``."""

    name: ClassVar[str] = "transpose"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        outer = expect_array(tc, args[0], "a two-dimensional array")
        inner = expect_array(tc, outer.elem, "a two-dimensional array")
        return ArrayType(ArrayType(inner.elem, outer.size), inner.size)

    def evaluate(self, args, ev):
        return at_axis(args[0], lambda a, ax: np.swapaxes(a, ax, ax + 1))

    def view(self, views, types, conc):
        return V.TransposeView(views[0])

    writes_through = True

    def write_view(self, arg_type, dest, conc):
        return W.WTranspose(dest)


@dataclass(frozen=True, eq=True)
class Reorder(Primitive):
    """``reorder(f, xs)``: element i of the result is element ``f(i)`` of xs; ``f`` is an index function
    such as ``stride(s)`` or ``reverse``."""

    fn: IndexFun
    name: ClassVar[str] = "reorder"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0])
        if isinstance(self.fn, Stride):
            tc.require_positive(self.fn.s, lambda: f"the stride {size_str(self.fn.s)} must be positive")
        for pred, msg in self.fn.requirements(xs.size):
            tc.require(pred, msg)
        return xs

    def evaluate(self, args, ev):
        s = int(ev.concrete(self.fn.s))
        return at_axis(args[0], lambda a, ax: np.take(a, self.fn.indices(a.shape[ax], s), axis=ax))

    def view(self, views, types, conc):
        fn = self.fn.subs({}) if isinstance(self.fn, Reverse) else Stride(conc(self.fn.s))
        return V.ReorderView(fn, conc(types[0].size), views[0])


@dataclass(frozen=True, eq=True)
class AsVector(Primitive):
    """``asVector(n, xs)``: ``[S]m -> [Sn]m/n`` for a scalar type S, requires ``m % n == 0``."""

    n: Size
    name: ClassVar[str] = "asVector"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0], "an array of scalars")
        if not isinstance(xs.elem, ScalarType):
            tc.fail(f"expects an array of scalars, got {xs}")
        tc.require(
            sympy.Contains(self.n, sympy.FiniteSet(*VECTOR_WIDTHS)),
            lambda: f"the vector width {size_str(self.n)} must be 2, 3, 4, 8 or 16",
        )
        tc.require_divisible(
            xs.size, self.n,
            lambda: f"the length {size_str(xs.size)} of {xs} must be divisible by the vector width {size_str(self.n)} "
            f"({size_str(xs.size)} % {size_str(self.n)} == 0 is required)",
        )
        return ArrayType(VectorType(xs.elem, self.n), xs.size / self.n)

    def evaluate(self, args, ev):
        return _split_axis(args[0], int(ev.concrete(self.n)))

    def view(self, views, types, conc):
        return V.AsVectorView(conc(self.n), types[0].elem, views[0])

    writes_through = True

    def write_view(self, arg_type, dest, conc):
        return W.WAsVector(conc(self.n), dest)


@dataclass(frozen=True, eq=True)
class AsScalar(Primitive):
    """``asScalar(xs)``: ``[Sn]m -> [S]m*n``."""

    name: ClassVar[str] = "asScalar"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        xs = expect_array(tc, args[0], "an array of vectors")
        if not isinstance(xs.elem, VectorType):
            tc.fail(f"expects an array of vectors, got {xs}")
        return ArrayType(xs.elem.scalar, xs.size * xs.elem.width)

    def evaluate(self, args, ev):
        return at_axis(args[0], lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] * a.shape[ax + 1],)))

    def view(self, views, types, conc):
        return V.AsScalarView(conc(types[0].elem.width), views[0])

    writes_through = True

    def write_view(self, arg_type, dest, conc):
        return W.WAsScalar(conc(arg_type.elem.width), dest)
