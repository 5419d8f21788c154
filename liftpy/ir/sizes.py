"""Sizes: the symbolic lengths of array types, their names, their text form and their equality.

A size is a sympy expression over named size variables (``N``, ``W``) and tuning parameters (a split
factor ``s0``).  Types (``liftpy.ir.types``) are built over sizes; this module knows nothing of types.
"""

from __future__ import annotations

import operator
import re
from functools import lru_cache

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


@lru_cache(maxsize=8192)  # (a program's text prints the same few sizes at many nodes, through sympy's printer)
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
