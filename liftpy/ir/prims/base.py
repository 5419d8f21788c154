"""The primitive protocol: what every primitive of liftpy declares, in its own class.

A primitive is a frozen dataclass whose fields are its static arguments (sizes, dimensions, the function of
a map); it is applied to data arguments by a ``Call`` node.  Its class is the one place it is declared:

- ``typecheck(arg_types, tc)``: the type rule.  Size conditions the rule needs (``n % m == 0`` for a
  split) are handed to ``tc.require`` together with a description, which is the one place divisibility is
  recorded; the constraint inference reads them from there.
- ``evaluate(args, ev)``: the reference semantics on batched numpy values (``liftpy.ir.values``).
- ``view(arg_views, arg_types, conc)``: for layout primitives, the view that replaces memory traffic, and
  ``write_view``, for the layouts a computed value can be stored through (its presence is invertibility).
- ``text_forms``: its names in the text form, each with the flag fields the name fixes (``mapSeqUnroll``
  is ``MapSeq(unroll=True)``); the printer and the parser read them through ``TABLE``, which a class joins
  by being defined.  ``fun_arity`` is the number of parameters of its function argument ``f``.
- ``level``: who executes a computing primitive (``liftpy.ir.levels``); how code generation executes it
  lives beside the emitter, one entry per class (``liftpy.codegen.execution``), since the IR does not
  know statements.

The OpenCL-level primitives (``mapGlb``, ``reduceSeq``, ``toPrivate`` ...) have exactly the semantics of
their high-level counterparts; they differ only in how they are executed.  The families live in the
modules beside this one; ``liftpy.ir.primitives`` gathers them.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import sympy

from ...errors import LiftError
from ...views import view as V
from ..levels import Level
from ..sizes import Size, as_size, is_integer_size, size_str
from ..types import ArrayType, Type

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


# A text name -> (class, the flag fields the name fixes); filled as primitive classes are defined.
TABLE: dict[str, tuple[type, dict[str, Any]]] = {}


# The printed fields of each primitive class, in order (``Primitive.static_args``): printing a program asked
# ``dataclasses.fields`` for them at every call node.
_STATIC_FIELDS: dict = {}


@lru_cache(maxsize=None)
def _size_fields(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.type in ("Size", Size))


class Primitive(abc.ABC):
    name: ClassVar[str]
    kind: ClassVar[str]  # 'map', 'reduce', 'scan', 'layout', 'memory', 'let', 'result'
    nargs: ClassVar[int]  # number of data arguments; -1 means two or more
    text_forms: ClassVar[dict[str, dict[str, Any]]]  # its text names; by default its name alone
    flags: ClassVar[tuple[str, ...]] = ()  # the fields ``text_forms`` fix: named, not printed as arguments
    fun_arity: ClassVar[int] = 0  # parameters of its function argument ``f``, if it has one
    level: ClassVar[Level | None] = None  # who executes it, for computing primitives (None: not lowered yet)

    def __post_init__(self):
        # A field declared ``Size`` holds a size whatever the caller gave (an int, a name, an expression);
        # written once here for every primitive (``at`` and ``[]`` read their index their own way).
        for name in _size_fields(type(self)):
            object.__setattr__(self, name, as_size(getattr(self, name)))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forms = cls.__dict__.get("text_forms")
        if forms is None:
            if "name" not in cls.__dict__:
                return  # a shared base (``MapLike``): its subclasses are the primitives
            forms = cls.text_forms = {cls.name: {}}
        cls.flags = tuple(dict.fromkeys(k for fixed in forms.values() for k in fixed)) or cls.flags
        for text, fixed in forms.items():
            if text in TABLE and TABLE[text][0].__qualname__ != cls.__qualname__:
                raise LiftError(f"two primitives are named {text}: {TABLE[text][0].__name__} and {cls.__name__}")
            TABLE[text] = (cls, dict(fixed))

    @property
    def text_name(self) -> str:
        # (remembered in the instance, outside its fields: the printer asks at every node it tries)
        found = self.__dict__.get("_text_name")
        if found is None:
            found = next((text for text, fixed in self.text_forms.items()
                          if all(getattr(self, k) == v for k, v in fixed.items())), self.name)
            object.__setattr__(self, "_text_name", found)
        return found

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
    def evaluate(self, args: list, ev):
        """The numpy semantics on batched values (``liftpy.ir.values.BV``)."""

    def view(self, views: list, types: list[Type], conc) -> "V.View":
        raise TypeError(f"{self.name} is not a layout primitive")

    write_view = None
    """For a layout a computed value can be stored through: ``write_view(arg_type, dest, conc)``, the write
    view (``liftpy.views.write``) that stores the argument so that the result is stored through ``dest``,
    or None where this argument type does not invert (asked over symbols with ``conc`` the identity)."""
    writes_through: ClassVar[bool] = False  # ``write_view`` inverts every argument type: no type needed to know

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


def check_dim(tc, dim) -> None:
    if dim not in (0, 1, 2):
        tc.fail(f"OpenCL has NDRange dimensions 0, 1 and 2, not {dim}")


def expect_array(tc, t: Type, what: str = "an array") -> ArrayType:
    if not isinstance(t, ArrayType):
        tc.fail(f"expects {what}, got {t}")
    return t
