"""Types of liftpy programs: scalars, OpenCL vectors, tuples and arrays with symbolic lengths.

Array lengths are sympy expressions over named size variables (``N``, ``W``) and tuning parameters
(a split factor ``s0``).  Types are immutable and compare structurally; sympy's canonical forms make
``N/4*4`` and ``N`` the same length.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

import numpy as np
import sympy

from ..errors import LiftTypeError

# The sizes live in their own module; they are re-exported here, where the program's types are built from them.
from .sizes import (  # noqa: F401
    INT_INDEX_MAX,
    MAX_ARRAY_LEVELS,
    TEXT_KEYWORDS,
    Size,
    as_size,
    is_integer_size,
    readable_name,
    size_str,
    size_value,
    size_var,
    sizes,
    sizes_equal,
    whole_number,
)


class Type:
    """Base class of liftpy types."""

    def __str__(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<type {self}>"


@dataclass(frozen=True, repr=False)
class ScalarType(Type):
    name: str  # 'float', 'half', 'int' or 'bool'

    def __str__(self) -> str:
        return self.name

    @property
    def c_name(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        return {"float": np.dtype(np.float32), "half": np.dtype(np.float16), "int": np.dtype(np.int32),
                "bool": np.dtype(np.bool_)}[self.name]

    @property
    def nbytes(self) -> int:
        return {"float": 4, "half": 2, "int": 4, "bool": 1}[self.name]


@dataclass(frozen=True, repr=False)
class VectorType(Type):
    scalar: ScalarType
    width: Size  # an integer, or a tuning parameter until it gets a value

    def __post_init__(self):
        w = as_size(self.width)
        object.__setattr__(self, "width", w)
        if w.is_Integer and int(w) not in (2, 3, 4, 8, 16):
            raise ValueError(f"OpenCL vectors have width 2, 3, 4, 8 or 16, not {w}")

    def __str__(self) -> str:
        if self.width.is_Integer:
            return f"{self.scalar.name}{self.width}"
        return f"{self.scalar.name}<{size_str(self.width)}>"

    @property
    def c_name(self) -> str:
        if not self.width.is_Integer:
            raise ValueError(f"vector type {self} has no OpenCL name until its width is known")
        return str(self)

    @property
    def nbytes(self) -> int:
        return self.scalar.nbytes * int(self.width)


@dataclass(frozen=True, repr=False)
class TupleType(Type):
    """A tuple.  In memory it is a C struct with fields ``_0``, ``_1``, ... (array of structs, as Lift
    stores tuples), laid out by OpenCL's alignment rules, which ``dtype`` reproduces for the host."""

    elems: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"

    @property
    def c_name(self) -> str:
        return f"Tuple{len(self.elems)}_" + "_".join(_c_name(e) for e in self.elems)

    name = c_name  # buffers print their element type by name, a scalar's or a struct's alike

    @property
    def dtype(self) -> np.dtype:
        offsets, offset, align = [], 0, 1
        for e in self.elems:
            a = _alignment(e)
            offset = -(-offset // a) * a
            offsets.append(offset)
            offset += _storage_bytes(e)
            align = max(align, a)
        return np.dtype({"names": [f"_{i}" for i in range(len(self.elems))],
                         "formats": [_field_format(e) for e in self.elems],
                         "offsets": offsets, "itemsize": -(-offset // align) * align})

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize


def _c_name(t: Type) -> str:
    if isinstance(t, (ScalarType, VectorType, TupleType)):
        return t.c_name
    raise TypeError(f"a tuple component of type {t} cannot be stored in memory (only scalars, vectors and tuples)")


def _storage_bytes(t: Type) -> int:
    # OpenCL stores a 3-vector in the space of a 4-vector.
    if isinstance(t, VectorType):
        return t.scalar.nbytes * (4 if int(t.width) == 3 else int(t.width))
    return t.nbytes


def _alignment(t: Type) -> int:
    if isinstance(t, TupleType):
        return max(_alignment(e) for e in t.elems)
    return _storage_bytes(t)


def _field_format(t: Type):
    if isinstance(t, VectorType):
        return (t.scalar.dtype, (4 if int(t.width) == 3 else int(t.width),))
    if isinstance(t, (ScalarType, TupleType)):
        return t.dtype
    raise TypeError(f"a tuple component of type {t} cannot be stored in memory (only scalars, vectors and tuples)")


@dataclass(frozen=True, repr=False)
class ArrayType(Type):
    elem: Type
    size: Size

    def __post_init__(self):
        if isinstance(self.elem, ArrayType) and len(self.elem.dims) >= MAX_ARRAY_LEVELS:
            raise LiftTypeError("type", f"an array type nests more than {MAX_ARRAY_LEVELS} levels of arrays, which the "
                                        "interpreter cannot hold (numpy arrays have at most 64 dimensions); flatten it with join")

    def __str__(self) -> str:
        return f"[{self.elem}]{size_str(self.size)}"

    @cached_property
    def dims(self) -> tuple[Size, ...]:
        """Lengths from the outermost dimension inwards, down to the first non-array element."""
        out = [self.size]
        t = self.elem
        while isinstance(t, ArrayType):
            out.append(t.size)
            t = t.elem
        return tuple(out)


Float = ScalarType("float")
Int = ScalarType("int")
Bool = ScalarType("bool")
Float2, Float3, Float4, Float8, Float16 = (VectorType(Float, n) for n in (2, 3, 4, 8, 16))
Int2, Int4 = VectorType(Int, 2), VectorType(Int, 4)
# Half precision (liftpy.ir.precision): stored as numpy float16, computed in float32 by the interpreter.
Half = ScalarType("half")
Half2, Half3, Half4, Half8, Half16 = (VectorType(Half, n) for n in (2, 3, 4, 8, 16))

SCALARS = {"float": Float, "half": Half, "int": Int, "bool": Bool}


def Array(elem: Type, *dims) -> ArrayType:
    """``Array(Float, H, W)`` is ``[[float]W]H``: the first length is the outermost dimension."""
    if not dims:
        raise ValueError("Array needs at least one length")
    t = elem
    for d in reversed(dims):
        t = ArrayType(t, as_size(d))
    return t


def Tuple(*elems: Type) -> TupleType:
    return TupleType(tuple(elems))


def Vector(scalar: ScalarType, width: int) -> VectorType:
    return VectorType(scalar, int(width))


def innermost(t: Type) -> Type:
    """The element type below all array dimensions."""
    while isinstance(t, ArrayType):
        t = t.elem
    return t


class Elements(tuple):
    """The values of an array literal given element by element (``lit([1, 2, 1], Array(Float, 3))``),
    told apart from a tuple's or a vector's values, which are plain tuples."""

    def __repr__(self) -> str:
        return f"Elements({list(self)!r})"


def literal_value(value, t: Type):
    """``value`` as a literal of type ``t`` holds it: one value repeated over the arrays of ``t`` (a
    number, or for tuples a Python tuple of component values), or a list (or numpy array) of values
    per element of an array of known length; ValueError says what does not fit."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, Elements)):
        if not isinstance(t, ArrayType):
            raise ValueError(f"a list of values {list(value)!r} is a literal for an array, not for {t}")
        n = sympy.sympify(t.size)
        if not n.is_Integer:
            raise ValueError(f"an array literal given element by element needs a known length, not {size_str(n)} (in {t})")
        if len(value) != int(n):
            raise ValueError(f"an array literal of type {t} needs {int(n)} values, got {len(value)}")
        if isinstance(innermost(t), TupleType):
            raise ValueError(f"array literals of tuples are not given element by element ({t}); zip literal arrays instead")
        return Elements(literal_value(v, t.elem) for v in value)
    leaf = innermost(t)
    if isinstance(leaf, TupleType):
        if not (isinstance(value, tuple) and len(value) == len(leaf.elems)):
            raise ValueError(f"a literal of type {t} needs a tuple of {len(leaf.elems)} values, got {value!r}")
        return tuple(literal_value(v, e) for v, e in zip(value, leaf.elems))
    cast = {"float": float, "half": float, "int": int, "bool": bool}[scalar_of(leaf).name]
    if isinstance(value, sympy.Expr):
        return _size_value_literal(value, cast, t)
    if isinstance(leaf, VectorType) and isinstance(value, tuple) and leaf.width.is_Integer:
        if len(value) != int(leaf.width) or not all(isinstance(v, (bool, int, float)) for v in value):
            raise ValueError(f"a literal of type {t} takes one number, or one per lane ({leaf.width}), got {value!r}")
        return tuple(_cast(cast, v, t) for v in value)
    if not isinstance(value, (bool, int, float)):
        raise ValueError(f"a literal of type {t} is one number repeated over it (or, for a vector, one number "
                         f"per lane), got {value!r}")
    return _cast(cast, value, t)


def _size_value_literal(value: sympy.Basic, cast, t: Type):
    """A literal whose value is a size's (``lit(N)``, ``lit(N - 1, Float)``): kept as the size expression, a
    number once the sizes have values (``literal_number``); a number given as sympy's is the number."""
    if value.is_number:
        if not (value.is_Rational or value.is_Float):
            raise ValueError(f"a literal of type {t} takes a number or a size, got {value}")
        return _cast(cast, int(value) if value.is_Integer else float(value), t)
    if cast is bool:
        raise ValueError(f"a literal of type {t} takes true or false, not the size {size_str(value)}")
    if not all(isinstance(s, sympy.Symbol) for s in value.free_symbols):  # pragma: no cover - sympy internals
        raise ValueError(f"{value} is not a size expression")
    return value


def _cast(cast, value, t: Type):
    """``value`` as the literal's scalar kind; an int literal takes whole numbers only (int() made 1.5 a 1)."""
    if cast is int and isinstance(value, float) and not value.is_integer():
        raise ValueError(f"a literal of type {t} takes whole numbers, got {value!r}")
    if cast is int and not -2**31 <= value <= INT_INDEX_MAX:
        raise ValueError(f"a literal of type {t} holds 32-bit integers (-2^31 to 2^31 - 1), as the device does; got {value!r}")
    return cast(value)


def with_leaf(t: Type, leaf: Type) -> Type:
    """``t`` with its element type below all array dimensions replaced by ``leaf``."""
    if isinstance(t, ArrayType):
        return ArrayType(with_leaf(t.elem, leaf), t.size)
    return leaf


def scalar_of(t: Type) -> ScalarType | None:
    """The scalar type at the leaves of ``t`` if there is exactly one, else None."""
    t = innermost(t)
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, VectorType):
        return t.scalar
    return None


def is_data_leaf(t: Type) -> bool:
    """Scalars and vectors: the values a user function reads and writes."""
    return isinstance(t, (ScalarType, VectorType))


def contains_tuple(t: Type) -> bool:
    if isinstance(t, TupleType):
        return True
    if isinstance(t, ArrayType):
        return contains_tuple(t.elem)
    return False


def free_size_symbols(t: Type) -> set[sympy.Symbol]:
    if isinstance(t, ArrayType):
        return set(t.size.free_symbols) | free_size_symbols(t.elem)
    if isinstance(t, TupleType):
        out: set[sympy.Symbol] = set()
        for e in t.elems:
            out |= free_size_symbols(e)
        return out
    if isinstance(t, VectorType):
        return set(t.width.free_symbols)
    return set()


def substitute_sizes(expr, bindings: Mapping):
    """``expr`` with size symbols given values.  When every key is a symbol this is exact replacement
    (``xreplace``), which is what ``subs`` would do without its algebraic search: that search was most of
    the time of type-checking and generating a configured program."""
    expr = expr if isinstance(expr, sympy.Basic) else sympy.sympify(expr)
    if not bindings or not expr.free_symbols:
        return expr
    if all(isinstance(k, sympy.Symbol) for k in bindings):
        if not all(isinstance(v, sympy.Basic) for v in bindings.values()):
            bindings = {k: sympy.sympify(v) for k, v in bindings.items()}
        return expr.xreplace(bindings)
    return expr.subs(bindings)


def subs_type(t: Type, bindings: dict) -> Type:
    """Substitute size variables in a type."""
    if not bindings:
        return t
    if isinstance(t, ArrayType):
        return ArrayType(subs_type(t.elem, bindings), substitute_sizes(t.size, bindings))
    if isinstance(t, TupleType):
        return TupleType(tuple(subs_type(e, bindings) for e in t.elems))
    if isinstance(t, VectorType):
        return VectorType(t.scalar, substitute_sizes(t.width, bindings))
    return t


def types_equal(a: Type, b: Type) -> bool | None:
    """Structural equality with symbolic lengths: True, False, or None when it depends on sizes."""
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        inner = types_equal(a.elem, b.elem)
        if inner is False:
            return False
        same = sizes_equal(a.size, b.size)
        if same is False:
            return False
        if inner is None or same is None:
            return None
        return True
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        if len(a.elems) != len(b.elems):
            return False
        results = [types_equal(x, y) for x, y in zip(a.elems, b.elems)]
        if False in results:
            return False
        return None if None in results else True
    if isinstance(a, VectorType) and isinstance(b, VectorType):
        if a.scalar != b.scalar:
            return False
        return sizes_equal(a.width, b.width)
    return a == b


def memory_element(t: Type) -> "ScalarType | TupleType | None":
    """What one element of a buffer holding a ``t`` is: its scalar type (vectors are stored as their
    scalars), or the struct of its tuples; None for tuples that hold arrays, which have no memory layout."""
    t = innermost(t)
    if isinstance(t, VectorType):
        return t.scalar
    if isinstance(t, TupleType) and not storable_tuple(t):
        return None
    return t


def storable_tuple(t: TupleType) -> bool:
    return all(isinstance(e, (ScalarType, VectorType)) or (isinstance(e, TupleType) and storable_tuple(e))
               for e in t.elems) and all(not isinstance(e, VectorType) or e.width.is_Integer for e in t.elems)


def memory_bytes(t: Type) -> Size:
    """Bytes a value of type ``t`` takes in a buffer (0 for tuples with array components, which the
    emitter refuses to store)."""
    elem = memory_element(t)
    return flat_count(t) * elem.nbytes if elem is not None else sympy.Integer(0)


def flat_count(t: Type) -> Size:
    """Number of buffer elements in a value of type ``t``: scalars, or structs for tuples."""
    if isinstance(t, (ScalarType, TupleType)):
        return sympy.Integer(1)
    if isinstance(t, VectorType):
        return t.width
    if isinstance(t, ArrayType):
        return t.size * flat_count(t.elem)
    raise TypeError(f"a value of type {t} has no flat memory layout")
