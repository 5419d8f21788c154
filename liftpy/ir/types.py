"""Types of liftpy programs: scalars, OpenCL vectors, tuples and arrays with symbolic lengths.

Array lengths are sympy expressions over named size variables (``N``, ``W``) and tuning parameters
(a split factor ``s0``).  Types are immutable and compare structurally; sympy's canonical forms make
``N/4*4`` and ``N`` the same length.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Mapping

import numpy as np
import sympy

from ..errors import LiftTypeError

Size = sympy.Expr


# Words the text form (``liftpy.ir.printer``, ``liftpy.ir.parser``) reads as something other than a name:
# ``true``, ``inf`` and ``nan`` as literals, ``fun`` and ``value`` as the start of a lambda or a literal.  A
# size or an input of such a name would not read back (``size_var`` and ``liftpy.ir.dsl`` refuse them).
TEXT_KEYWORDS = frozenset({"fun", "value", "true", "false", "inf", "nan"})

# Array types nest at most this deep: the interpreter holds an array of n levels (and the maps around it) in
# one numpy array, which has at most 64 dimensions.  Real programs nest fewer than ten.
MAX_ARRAY_LEVELS = 32

# The largest element index (and work-group or work-item id) a kernel holds: kernels index with 32-bit ints.
INT_INDEX_MAX = 2**31 - 1


def readable_name(name) -> bool:
    """Whether ``name`` can name a size or an input in a program's text: an identifier, not a word of it."""
    return isinstance(name, str) and name.isidentifier() and name not in TEXT_KEYWORDS


def size_var(name: str) -> sympy.Symbol:
    """A named, positive integer size variable (array length or tuning parameter).  Its name is an
    identifier that is not a word of the text form (``true``, ``fun``...): a program's text names it, and
    ``size_var("2N")`` printed as ``2N``, which reads back as 2*N."""
    if not readable_name(name):
        raise LiftTypeError("size_var", f"a size's name must be an identifier other than {', '.join(sorted(TEXT_KEYWORDS))}; "
                                        f"got {name!r}")
    return sympy.Symbol(name, integer=True, positive=True)


def sizes(names: str) -> tuple[sympy.Symbol, ...]:
    """``H, W = sizes("H W")``: several size variables at once."""
    return tuple(size_var(n) for n in names.replace(",", " ").split())


def whole_number(value) -> int | None:
    """``value`` as an int where it is a whole number (an int, a numpy or sympy integer, a float such as 16.0);
    None for a fraction, a string or a bool: sizes are never truncated (``int(16.5)`` built a kernel for 16)."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return int(value) if isinstance(value, float) and value.is_integer() else None


def as_size(value) -> Size:
    """Turn an int, a name or a sympy expression into a size expression."""
    if isinstance(value, sympy.Basic):
        if value.is_Integer and abs(int(value)) > INT_INDEX_MAX:
            raise LiftTypeError("size", f"the size {int(value)} is beyond the 32-bit indices kernels use (at most 2^31 - 1)")
        if not value.is_Atom and value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise LiftTypeError("size", f"the size {value} is not finite (a division by zero?)")
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if abs(int(value)) > INT_INDEX_MAX:
            raise LiftTypeError("size", f"the size {int(value)} is beyond the 32-bit indices kernels use (at most 2^31 - 1)")
        return sympy.Integer(int(value))
    if isinstance(value, str):
        return _parse_size(value)
    raise LiftTypeError("size", f"a size must be an integer, a name or a sympy expression, not {value!r}")


def size_value(value) -> Size:
    """A size's value (a number, a sympy expression, or a size expression as text) as a sympy expression.
    Text goes through ``as_size``'s parser: ``sympy.sympify`` would evaluate a string, or each string of a
    list, as Python, and values reach here from configurations stored by other people."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str):
        return _parse_size(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return sympy.sympify(value)
    raise LiftTypeError("size", f"a size's value must be a number or a size expression, not {type(value).__name__} "
                                f"{str(value)[:60]!r}")


@lru_cache(maxsize=4096)  # pure; code generation parses the names of every point's sizes and parameters
def _parse_size(text: str) -> Size:
    """A size written as text (``"N"``, ``"2*N + 1"``), its names size variables.  Read by a small parser
    of the text form's size grammar, never by sympy's: ``sympify`` evaluates Python, and size names and
    configuration keys come from results stores that other people wrote."""
    if not isinstance(text, str) or len(text) > _SIZE_TEXT_MAX:
        raise LiftTypeError("size", f"a size expression of {len(text)} characters is too long (at most {_SIZE_TEXT_MAX})")
    return _SizeReader(text).read()


_SIZE_TEXT_MAX = 2000
_SIZE_DEPTH_MAX = 64
_SIZE_INT_MAX = INT_INDEX_MAX  # as ``as_size``: kernels index with 32-bit ints
_SIZE_FUNCTIONS = {"floor": (sympy.floor, 1), "ceiling": (sympy.ceiling, 1), "Mod": (sympy.Mod, 2),
                   "Max": (sympy.Max, None), "Min": (sympy.Min, None)}
_SIZE_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\S))")


class _SizeReader:
    """Recursive descent over ``sum := product (('+'|'-') product)*``, ``product := unary (('*'|'/') unary)*``,
    ``unary := '-' unary | INT | NAME | NAME '(' sum, ... ')' | '(' sum ')'``: the text form's sizes."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = [m.group(1, 2, 3) for m in _SIZE_TOKEN.finditer(text)]
        self.at = 0
        self.depth = 0

    def fail(self, why: str):
        raise LiftTypeError("size", f"{self.text[:80]!r} is not a size expression: {why} (sizes are whole numbers, "
                                    "names, + - * / and parentheses)")

    def peek(self) -> str | None:
        if self.at >= len(self.tokens):
            return None
        number, name, other = self.tokens[self.at]
        return number or name or other

    def take(self) -> tuple:
        if self.at >= len(self.tokens):
            self.fail("it ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def read(self) -> Size:
        if not self.tokens:
            self.fail("it is empty")
        e = self.sum()
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()!r}")
        return e

    def sum(self) -> Size:
        self.depth += 1
        if self.depth > _SIZE_DEPTH_MAX:
            self.fail(f"it is nested more than {_SIZE_DEPTH_MAX} levels deep")
        e = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()[2]
            rhs = self.product()
            e = e + rhs if op == "+" else e - rhs
        self.depth -= 1
        return e

    def product(self) -> Size:
        e = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()[2]
            rhs = self.unary()
            if op == "/" and rhs == 0:
                self.fail("it divides by zero")
            e = e * rhs if op == "*" else e / rhs
        return e

    def unary(self) -> Size:
        number, name, other = self.take()
        if other == "-":
            self.depth += 1
            if self.depth > _SIZE_DEPTH_MAX:
                self.fail(f"it is nested more than {_SIZE_DEPTH_MAX} levels deep")
            e = -self.unary()
            self.depth -= 1
            return e
        if other == "(":
            e = self.sum()
            if self.take()[2] != ")":
                self.fail("a parenthesis is not closed")
            return e
        if number is not None:
            if len(number) > 20 or int(number) > _SIZE_INT_MAX:
                self.fail(f"the number {number[:24]} is larger than {_SIZE_INT_MAX}")
            return sympy.Integer(int(number))
        if name is not None and self.peek() == "(":
            return self.call(name)
        if name is not None:
            if not readable_name(name):
                self.fail(f"{name!r} is a word of the text form, not a name")
            return size_var(name)
        self.fail(f"unexpected {other!r}")

    def call(self, name: str) -> Size:
        if name not in _SIZE_FUNCTIONS:
            self.fail(f"unknown size function {name}() (known: {', '.join(_SIZE_FUNCTIONS)})")
        fn, arity = _SIZE_FUNCTIONS[name]
        self.take()
        args = [self.sum()]
        while self.peek() == ",":
            self.take()
            args.append(self.sum())
        if self.take()[2] != ")":
            self.fail(f"{name}( is not closed")
        if arity is not None and len(args) != arity:
            self.fail(f"{name} takes {arity} argument(s), not {len(args)}")
        return fn(*args)


def size_str(s: Size) -> str:
    """Print a size the way the text syntax reads it back: atoms bare, compound sizes in parentheses."""
    s = sympy.sympify(s)
    if s.is_Symbol or s.is_Integer:
        return str(s)
    return f"({_SizePrinter().doprint(s)})"


class _SizePrinter(sympy.printing.str.StrPrinter):
    """sympy's printing, with powers written as products: the text syntax has no ``**``."""

    def _print_Pow(self, expr, rational=False):
        base, exp = expr.args
        if exp.is_Integer and int(exp) > 0:
            b = self._print(base)
            b = b if (base.is_Symbol or base.is_Integer) else f"({b})"
            return "*".join([b] * int(exp))
        if exp.is_Integer and int(exp) < 0:
            return f"1/({self._print_Pow(sympy.Pow(base, -exp, evaluate=False))})"
        return super()._print_Pow(expr, rational)


def is_integer_size(x) -> bool:
    """Whether a size is a known integer (a Python int or a sympy Integer): then Python's arithmetic
    decides a condition on it, which sympy would decide through its assumption system."""
    return isinstance(x, int) or getattr(x, "is_Integer", False)


@lru_cache(maxsize=65536)  # pure; code generation type-checks every point's program, asking the same pairs
def sizes_equal(a: Size, b: Size) -> bool | None:
    """True if provably equal, False if provably different, None if it depends on the variables."""
    quick = _number_against_monomial(a, b)
    if quick is not _UNKNOWN:
        return quick
    return _sizes_equal_by_sympy(a, b)


_UNKNOWN = object()


def _is_monomial(e) -> bool:
    """Whether ``e`` is a product of a rational coefficient and integer powers of symbols, with at least one
    symbol (``n0/r1``, ``4*x``, ``x``): a rational function that is not a constant."""
    factors = e.args if e.is_Mul else (e,)
    bases = []
    for f in factors:
        if f.is_Symbol:
            bases.append(f)
        elif f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and f.exp != 0:
            bases.append(f.base)
        elif not (f.is_Rational and f != 0 and e.is_Mul):
            return False
    # (distinct bases: an unevaluated x*(1/x) is the constant 1)
    return bool(bases) and len(set(bases)) == len(bases)


def _number_against_monomial(a, b):
    """``sizes_equal`` without sympy for the commonest questions of type-checking a point: two integers
    (equal or not), and an integer against a monomial of parameters (``64`` against ``n0/r1``: a
    non-constant rational function minus a number is never zero nor a number, so undecided).
    ``_UNKNOWN`` for anything else.  Expanding and cancelling the difference took a few milliseconds
    each, and the integers differ from point to point, so the memo does not spare them."""
    a_int = isinstance(a, sympy.Integer) or (isinstance(a, int) and not isinstance(a, bool))
    b_int = isinstance(b, sympy.Integer) or (isinstance(b, int) and not isinstance(b, bool))
    if a_int and b_int:
        return int(a) == int(b)
    if (a_int and isinstance(b, sympy.Basic) and _is_monomial(b)) or (b_int and isinstance(a, sympy.Basic) and _is_monomial(a)):
        return None
    return _UNKNOWN


def _sizes_equal_by_sympy(a: Size, b: Size) -> bool | None:
    """``sizes_equal`` by expanding (and where needed cancelling) the difference."""
    diff = sympy.expand(a - b)
    if diff == 0:
        return True
    if diff.is_number:
        return False
    # Rational functions of parameters (tile counts times windows per tile) need cancellation.
    diff = sympy.cancel(sympy.together(diff))
    if diff == 0:
        return True
    if diff.is_number:
        return False
    return None


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
