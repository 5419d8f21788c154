"""The primitives of liftpy, each declared once: its type rule, its numpy semantics and its view.

This module is the table of primitives.  A primitive is a frozen dataclass whose fields are its static
arguments (sizes, dimensions, the function of a map); it is applied to data arguments by a ``Call`` node.
Each class defines

- ``typecheck(arg_types, tc)``: the type rule.  Size conditions the rule needs (``n % m == 0`` for a
  split) are handed to ``tc.require`` together with a description, which is the one place divisibility is
  recorded; the constraint inference reads them from there.
- ``evaluate(args, ev)``: the reference semantics on batched numpy values (``liftpy.ir.values``).
- ``view(arg_views, arg_types, conc)``: for layout primitives, the view that replaces memory traffic.

The OpenCL-level primitives (``mapGlb``, ``reduceSeq``, ``toPrivate`` ...) have exactly the semantics of
their high-level counterparts; they differ only in how the emitter treats them (``kind``).
"""

from __future__ import annotations

import abc

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import sympy

from ..errors import EvaluationError, LiftError, LiftTypeError
from ..views import view as V
from .expr import Lambda
from .levels import Level
from .types import (
    INT_INDEX_MAX,
    ArrayType,
    ScalarType,
    Size,
    TupleType,
    Type,
    VectorType,
    as_size,
    contains_tuple,
    innermost,
    is_integer_size,
    scalar_of,
    size_str,
    types_equal,
)
from .values import BV, at_axis, first_leaf, lift, tmap

# --------------------------------------------------------------------------------------------------
# Index functions for reorder


@dataclass(frozen=True)
class Stride:
    """``stride(s)``: element i of the result is element ``i / n + s * (i % n)`` of the input, where
    ``n = length / s``.  After ``split(n)``, chunk c holds elements ``c, c + s, c + 2s, ...``: neighbouring
    work-items reading neighbouring chunks touch neighbouring addresses (coalescing)."""

    s: Size

    def apply(self, i, n):
        m = sympy.Integer(n) / self.s if not isinstance(n, int) else n // int(self.s)
        if isinstance(m, int) and not isinstance(i, sympy.Basic):  # an index of code generation (liftpy.arith)
            return i // m + int(self.s) * (i % m)
        return sympy.floor(i / m) + self.s * sympy.Mod(i, m)

    def indices(self, n: int, s: int) -> np.ndarray:
        m = n // s
        i = np.arange(n)
        return i // m + s * (i % m)

    def requirements(self, n: Size) -> list[tuple[Any, str]]:
        return [(divisible(n, self.s), lambda: f"the length {size_str(n)} must be divisible by the stride {size_str(self.s)}")]

    def text(self) -> str:
        return f"stride({size_str(self.s)})"

    def subs(self, b):
        return Stride(sympy.sympify(self.s).subs(b))


@dataclass(frozen=True)
class Reverse:
    """``reverse``: element i of the result is element ``n - 1 - i`` of the input."""

    def apply(self, i, n):
        return n - 1 - i

    def indices(self, n: int, s: int = 0) -> np.ndarray:
        return np.arange(n)[::-1].copy()

    def requirements(self, n: Size) -> list:
        return []

    def text(self) -> str:
        return "reverse"

    @property
    def s(self):
        return sympy.Integer(0)

    def subs(self, b):
        return self


IndexFun = Stride | Reverse

VECTOR_WIDTHS = (2, 3, 4, 8, 16)


def divisible(n, m) -> sympy.Basic:
    """The condition ``n % m == 0``.  sympy's Mod can recurse without end on some symbolic arguments
    (``Mod(N - 2, S + 1)`` with positive symbols); then the condition is kept unevaluated, and it is
    decided once the sizes have values."""
    if is_integer_size(n) and is_integer_size(m) and int(m) != 0:  # sizes with values (code generation): Python decides
        return sympy.true if int(n) % int(m) == 0 else sympy.false
    return _divisible(n, m)


# Memoised across programs: type-checking a search's variants asks the same divisibility of the same
# sizes and parameters in every variant (``n0/4`` by ``n0/r1`` in each tiled convolution), and sympy's
# Mod of symbols takes a millisecond to decide nothing.  The answer is a pure function of the two
# (immutable) sizes; ``typed`` keeps ``4`` and ``Integer(4)`` apart, as they are built differently.
@lru_cache(maxsize=4096, typed=True)
def _divisible(n, m) -> sympy.Basic:
    try:
        return sympy.Eq(sympy.Mod(n, m), 0)
    except RecursionError:
        return sympy.Eq(sympy.Mod(n, m, evaluate=False), 0, evaluate=False)


# --------------------------------------------------------------------------------------------------


# The printed fields of each primitive class, in order (``Primitive.static_args``): printing a program asked
# ``dataclasses.fields`` for them at every call node.
_STATIC_FIELDS: dict = {}


class Primitive(abc.ABC):
    name: ClassVar[str]
    kind: ClassVar[str]  # 'map', 'reduce', 'layout', 'memory', 'let'
    nargs: ClassVar[int]  # number of data arguments; -1 means two or more
    flags: ClassVar[tuple[str, ...]] = ()  # boolean fields that change the printed name

    @property
    def text_name(self) -> str:
        return self.name

    def static_args(self) -> list[tuple[str, Any]]:
        """Fields printed before the data arguments, in order, with flags left out."""
        names = _STATIC_FIELDS.get(type(self))
        if names is None:
            names = _STATIC_FIELDS[type(self)] = tuple(f.name for f in dataclasses.fields(self) if f.name not in self.flags)
        return [(n, getattr(self, n)) for n in names]

    @abc.abstractmethod
    def typecheck(self, args: list[Type], tc) -> Type:
        """The type rule: the result type for these argument types (``tc`` records requirements)."""

    @abc.abstractmethod
    def evaluate(self, args: list[BV], ev) -> BV:
        """The numpy semantics on batched values."""

    def view(self, views: list, types: list[Type], conc) -> "V.View":
        raise TypeError(f"{self.name} is not a layout primitive")

    def fun_param_types(self, field: str, arg_types: list[Type]) -> list[Type]:
        """Types of the parameters of the function stored in ``field``, given the data argument types."""
        raise TypeError(f"{self.name} has no function argument")

    def subs(self, bindings: dict) -> "Primitive":
        """Substitute size variables in the static arguments."""
        changes = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, sympy.Basic):
                changes[f.name] = v.subs(bindings)
            elif isinstance(v, (Stride, Reverse)):
                changes[f.name] = v.subs(bindings)
        return dataclasses.replace(self, **changes) if changes else self


def _check_dim(tc, dim) -> None:
    if dim not in (0, 1, 2):
        tc.fail(f"OpenCL has NDRange dimensions 0, 1 and 2, not {dim}")


def _array(tc, t: Type, what: str = "an array") -> ArrayType:
    if not isinstance(t, ArrayType):
        tc.fail(f"expects {what}, got {t}")
    return t


# ---------------------------------------------------------------------------------------------- maps


class MapLike(Primitive):
    """Shared type rule and semantics of every map; subclasses differ in how they are executed."""

    kind: ClassVar[str] = "map"
    nargs: ClassVar[int] = 1
    f: Lambda

    def fun_param_types(self, field, arg_types):
        return [arg_types[0].elem]

    def typecheck(self, args, tc):
        _check_dim(tc, getattr(self, "dim", 0))
        xs = _array(tc, args[0])
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
    level: ClassVar[Level | None] = None  # not lowered yet


@dataclass(frozen=True, eq=True)
class MapSeq(MapLike):
    """A map executed sequentially by one work-item (unrolled by the emitter when ``unroll``)."""

    f: Lambda
    unroll: bool = False
    name: ClassVar[str] = "mapSeq"
    level: ClassVar[Level] = Level.SEQ
    flags: ClassVar[tuple[str, ...]] = ("unroll",)

    @property
    def text_name(self):
        return "mapSeqUnroll" if self.unroll else "mapSeq"


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


PARALLEL_MAPS = (MapGlb, MapWrg, MapLcl)
MAP_OF_LEVEL = {Level.GLB: MapGlb, Level.WRG: MapWrg, Level.LCL: MapLcl, Level.SEQ: MapSeq}


def is_parallel_map(fn) -> bool:
    """A map distributed over work-items or work-groups."""
    level = getattr(fn, "level", None)
    return isinstance(fn, MapLike) and level is not None and level.parallel


# ------------------------------------------------------------------------------------------- reduce


class ReduceLike(Primitive):
    """Shared type rule and semantics of reductions."""

    kind: ClassVar[str] = "reduce"
    nargs: ClassVar[int] = 2
    f: Lambda

    def fun_param_types(self, field, arg_types):
        return [arg_types[0], arg_types[1].elem]

    def typecheck(self, args, tc):
        init, xs = args[0], _array(tc, args[1], "an array to reduce")
        out = tc.apply(self.f, [init, xs.elem])
        same = types_equal(out, init)
        if same is False:
            tc.fail(f"the function returns {out} but the accumulator (init) has type {init}")
        if same is None:
            tc.require_types_equal(out, init, "the function's result and the accumulator")
        return ArrayType(init, sympy.Integer(1))

    def evaluate(self, args, ev):
        acc, xs = args
        n = xs.length()
        ax = xs.axis
        for i in range(n):
            x = at_axis(xs, lambda a, _ax, i=i: a[(slice(None),) * _ax + (i,)])
            acc = lift(ev.call(self.f, [acc, x], xs.batch), xs.batch)
        return at_axis(acc, lambda a, _ax: np.expand_dims(a, _ax))


@dataclass(frozen=True, eq=True)
class Reduce(ReduceLike):
    """``reduce(f, init, xs)``: fold f over xs from the left, starting at init.  ``[T]n -> [U]1`` for
    ``f: (U, T) -> U``."""

    f: Lambda
    name: ClassVar[str] = "reduce"


@dataclass(frozen=True, eq=True)
class ReduceSeq(ReduceLike):
    """A reduction performed sequentially by one work-item, in its accumulator's memory."""

    f: Lambda
    unroll: bool = False
    name: ClassVar[str] = "reduceSeq"
    flags: ClassVar[tuple[str, ...]] = ("unroll",)

    @property
    def text_name(self):
        return "reduceSeqUnroll" if self.unroll else "reduceSeq"


@dataclass(frozen=True, eq=True)
class ReduceLcl(ReduceLike):
    """A reduction performed by the work-items of a group together, as a tree in local memory (Lift's
    parallel reduction): the array, already in local memory, is halved in place, each step adding its
    second half onto its first with the work-items spread over dimension ``dim`` and a barrier between
    steps, until one value is left, which is combined with ``init``.  The function must be associative
    and commutative, ``(T, T) -> T`` (a sum, a maximum); the tree is the order the interpreter follows
    too, so it computes what the kernel does, rounding included."""

    dim: int
    f: Lambda
    name: ClassVar[str] = "reduceLcl"

    def typecheck(self, args, tc):
        _check_dim(tc, self.dim)
        out = super().typecheck(args, tc)  # args[1] is an array from here on
        if types_equal(args[1].elem, args[0]) is False:
            tc.fail(f"a tree reduction combines elements with each other: their type {args[1].elem} must be the "
                    f"accumulator's {args[0]}")
        return out

    def evaluate(self, args, ev):
        acc, xs = args
        items = [at_axis(xs, lambda a, _ax, i=i: a[(slice(None),) * _ax + (i,)]) for i in range(xs.length())]
        while len(items) > 1:
            half = (len(items) + 1) // 2
            items = [lift(ev.call(self.f, [items[i], items[i + half]], xs.batch), xs.batch) if i + half < len(items)
                     else items[i] for i in range(half)]
        if items:
            acc = lift(ev.call(self.f, [acc, items[0]], xs.batch), xs.batch)
        return at_axis(acc, lambda a, _ax: np.expand_dims(a, _ax))


# ------------------------------------------------------------------------------------------- layout


@dataclass(frozen=True, eq=True)
class Zip(Primitive):
    """``zip(a, b, ...)``: ``[T1]n, [T2]n, ... -> [(T1, T2, ...)]n``."""

    name: ClassVar[str] = "zip"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = -1

    def typecheck(self, args, tc):
        if len(args) < 2:
            tc.fail(f"needs at least two arrays, got {len(args)}")
        arrays = [_array(tc, a, f"arrays (argument {i + 1} is not)") for i, a in enumerate(args)]
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
        idx = _array(tc, args[0], "an array of int indices")
        xs = _array(tc, args[1])
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
        xs = _array(tc, args[0])
        tc.require(sympy.Ge(self.index, 0), lambda: f"the index {size_str(self.index)} must not be negative")
        tc.require(sympy.Lt(self.index, xs.size),
                   lambda: f"the index {size_str(self.index)} must be below the length {size_str(xs.size)} of {xs}")
        return xs.elem

    def evaluate(self, args, ev):
        i = int(ev.concrete(self.index))
        return at_axis(args[0], lambda a, ax: np.take(a, i, axis=ax))

    def view(self, views, types, conc):
        return V.AtView(conc(self.index), views[0])


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

    def __post_init__(self):
        object.__setattr__(self, "n", as_size(self.n))

    def typecheck(self, args, tc):
        xs = _array(tc, args[0])
        tc.require_positive(self.n, lambda: f"the chunk size {size_str(self.n)} must be positive")
        tc.require_divisible(
            xs.size, self.n,
            lambda: f"the length {size_str(xs.size)} of {xs} must be divisible by {size_str(self.n)} "
            f"({size_str(xs.size)} % {size_str(self.n)} == 0 is required)",
        )
        return ArrayType(ArrayType(xs.elem, self.n), xs.size / self.n)

    def evaluate(self, args, ev):
        n = int(ev.concrete(self.n))
        return at_axis(args[0], lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] // n, n) + a.shape[ax + 1 :]))

    def view(self, views, types, conc):
        return V.SplitView(conc(self.n), views[0])


@dataclass(frozen=True, eq=True)
class Join(Primitive):
    """``join(xs)``: ``[[T]m]n -> [T]n*m``."""

    name: ClassVar[str] = "join"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        outer = _array(tc, args[0], "an array of arrays")
        inner = _array(tc, outer.elem, "an array of arrays")
        return ArrayType(inner.elem, outer.size * inner.size)

    def evaluate(self, args, ev):
        return at_axis(args[0], lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] * a.shape[ax + 1],) + a.shape[ax + 2 :]))

    def view(self, views, types, conc):
        return V.JoinView(conc(types[0].elem.size), views[0])


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
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1
    flags: ClassVar[tuple[str, ...]] = ("strict",)

    def __post_init__(self):
        object.__setattr__(self, "size", as_size(self.size))
        object.__setattr__(self, "step", as_size(self.step))

    @property
    def text_name(self):
        return "slideStrict" if self.strict else "slide"

    def typecheck(self, args, tc):
        xs = _array(tc, args[0])
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

    def __post_init__(self):
        object.__setattr__(self, "left", as_size(self.left))
        object.__setattr__(self, "right", as_size(self.right))

    @property
    def boundary(self) -> str:
        """``constant``, ``clamp``, ``mirror`` or ``wrap``."""
        return self.value if isinstance(self.value, str) else "constant"

    def typecheck(self, args, tc):
        xs = _array(tc, args[0])
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


@dataclass(frozen=True, eq=True)
class Transpose(Primitive):
    """``transpose(xs)``: ``[[T]n]m -> [[T]m]n``."""

    name: ClassVar[str] = "transpose"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        outer = _array(tc, args[0], "a two-dimensional array")
        inner = _array(tc, outer.elem, "a two-dimensional array")
        return ArrayType(ArrayType(inner.elem, outer.size), inner.size)

    def evaluate(self, args, ev):
        return at_axis(args[0], lambda a, ax: np.swapaxes(a, ax, ax + 1))

    def view(self, views, types, conc):
        return V.TransposeView(views[0])


@dataclass(frozen=True, eq=True)
class Reorder(Primitive):
    """``reorder(f, xs)``: element i of the result is element ``f(i)`` of xs; ``f`` is an index function
    such as ``stride(s)`` or ``reverse``."""

    fn: IndexFun
    name: ClassVar[str] = "reorder"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        xs = _array(tc, args[0])
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

    def __post_init__(self):
        object.__setattr__(self, "n", as_size(self.n))

    def typecheck(self, args, tc):
        xs = _array(tc, args[0], "an array of scalars")
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
        n = int(ev.concrete(self.n))
        return at_axis(args[0], lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] // n, n) + a.shape[ax + 1 :]))

    def view(self, views, types, conc):
        return V.AsVectorView(conc(self.n), types[0].elem, views[0])


@dataclass(frozen=True, eq=True)
class AsScalar(Primitive):
    """``asScalar(xs)``: ``[Sn]m -> [S]m*n``."""

    name: ClassVar[str] = "asScalar"
    kind: ClassVar[str] = "layout"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        xs = _array(tc, args[0], "an array of vectors")
        if not isinstance(xs.elem, VectorType):
            tc.fail(f"expects an array of vectors, got {xs}")
        return ArrayType(xs.elem.scalar, xs.size * xs.elem.width)

    def evaluate(self, args, ev):
        return at_axis(args[0], lambda a, ax: a.reshape(a.shape[:ax] + (a.shape[ax] * a.shape[ax + 1],)))

    def view(self, views, types, conc):
        return V.AsScalarView(conc(types[0].elem.width), views[0])


# ------------------------------------------------------------------------------------- let, memory


@dataclass(frozen=True, eq=True)
class Let(Primitive):
    """``let(f, x)``: ``f(x)``, with x computed once (into the memory its ``toPrivate`` names) and reused."""

    f: Lambda
    name: ClassVar[str] = "let"
    kind: ClassVar[str] = "let"
    nargs: ClassVar[int] = 1

    def typecheck(self, args, tc):
        return tc.apply(self.f, [args[0]])

    def fun_param_types(self, field, arg_types):
        return [arg_types[0]]

    def evaluate(self, args, ev):
        return ev.call(self.f, [args[0]], args[0].batch)


@dataclass(frozen=True, eq=True)
class ToMem(Primitive):
    """Marks where the value of its argument is written: ``toGlobal``, ``toLocal`` or ``toPrivate``."""

    name: ClassVar[str] = "toMem"
    kind: ClassVar[str] = "memory"
    nargs: ClassVar[int] = 1
    space: ClassVar[str] = ""

    def typecheck(self, args, tc):
        return args[0]

    def evaluate(self, args, ev):
        return args[0]

    @property
    def copies(self) -> int:
        """How many times over the value is allocated (two halves for a double-buffered tile)."""
        return 1


@dataclass(frozen=True, eq=True)
class ToGlobal(ToMem):
    name: ClassVar[str] = "toGlobal"
    space: ClassVar[str] = "global"


@dataclass(frozen=True, eq=True)
class ToLocal(ToMem):
    """``double``: the value is double-buffered (``toLocalDouble``): a tile a loop stages at every step
    gets two halves, used alternately, so the next step's copy never waits for this step's readers."""

    double: bool = False
    name: ClassVar[str] = "toLocal"
    space: ClassVar[str] = "local"
    flags: ClassVar[tuple[str, ...]] = ("double",)

    @property
    def text_name(self):
        return "toLocalDouble" if self.double else "toLocal"

    @property
    def copies(self) -> int:
        return 2 if self.double else 1


@dataclass(frozen=True, eq=True)
class ToPrivate(ToMem):
    name: ClassVar[str] = "toPrivate"
    space: ClassVar[str] = "private"


# --------------------------------------------------------------------------------------------------
# The table: text name -> (class, fixed keyword arguments).  The printer and the parser both use it.

PRIMITIVES: dict[str, tuple[type, dict]] = {
    "map": (Map, {}),
    "mapSeq": (MapSeq, {"unroll": False}),
    "mapSeqUnroll": (MapSeq, {"unroll": True}),
    "mapGlb": (MapGlb, {}),
    "mapWrg": (MapWrg, {}),
    "mapLcl": (MapLcl, {}),
    "reduce": (Reduce, {}),
    "reduceSeq": (ReduceSeq, {"unroll": False}),
    "reduceSeqUnroll": (ReduceSeq, {"unroll": True}),
    "reduceLcl": (ReduceLcl, {}),
    "zip": (Zip, {}),
    "get": (Get, {}),
    "split": (Split, {}),
    "join": (Join, {}),
    "slide": (Slide, {"strict": False}),
    "slideStrict": (Slide, {"strict": True}),
    "pad": (Pad, {}),
    "at": (At, {}),
    "gather": (Gather, {}),
    "transpose": (Transpose, {}),
    "reorder": (Reorder, {}),
    "asVector": (AsVector, {}),
    "asScalar": (AsScalar, {}),
    "let": (Let, {}),
    "toGlobal": (ToGlobal, {}),
    "toLocal": (ToLocal, {"double": False}),
    "toLocalDouble": (ToLocal, {"double": True}),
    "toPrivate": (ToPrivate, {}),
}


# Element indices as values (``iota``, ``indices``) are declared in a module of their own, this one being long.
from .indices import Indices, Iota  # noqa: E402 - after the base classes it builds on

PRIMITIVES.update({"iota": (Iota, {}), "indices": (Indices, {})})

# A program's several results, ``tuple(a, b)``, likewise in a module of its own.
from .results import Results  # noqa: E402

PRIMITIVES["tuple"] = (Results, {})


def is_layout(prim) -> bool:
    return isinstance(prim, Primitive) and prim.kind == "layout"
