"""``let`` and the memory markers ``toGlobal``, ``toLocal``, ``toPrivate``: where a value is computed once,
and into which memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..expr import Lambda
from .base import Primitive


@dataclass(frozen=True, eq=True)
class Let(Primitive):
    """``let(f, x)``: ``f(x)``, with x computed once (into the memory its ``toPrivate`` names) and reused."""

    f: Lambda
    name: ClassVar[str] = "let"
    kind: ClassVar[str] = "let"
    nargs: ClassVar[int] = 1
    fun_arity: ClassVar[int] = 1

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
    text_forms: ClassVar[dict] = {}  # a base: written by the name of its memory space
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
    """``last`` (``toGlobalLast``), at a kernel boundary: the kernel writing the value does not end there;
    its last work-group to finish goes on with the next kernel's work (``liftpy.codegen.last_group``),
    which saves that kernel's launch.  The same value either way."""

    last: bool = False
    name: ClassVar[str] = "toGlobal"
    text_forms: ClassVar[dict] = {"toGlobal": {"last": False}, "toGlobalLast": {"last": True}}
    space: ClassVar[str] = "global"


@dataclass(frozen=True, eq=True)
class ToLocal(ToMem):
    """``double``: the value is double-buffered (``toLocalDouble``): a tile a loop stages at every step
    gets two halves, used alternately, so the next step's copy never waits for this step's readers."""

    double: bool = False
    name: ClassVar[str] = "toLocal"
    text_forms: ClassVar[dict] = {"toLocal": {"double": False}, "toLocalDouble": {"double": True}}
    space: ClassVar[str] = "local"


    @property
    def copies(self) -> int:
        return 2 if self.double else 1


@dataclass(frozen=True, eq=True)
class ToPrivate(ToMem):
    name: ClassVar[str] = "toPrivate"
    space: ClassVar[str] = "private"
