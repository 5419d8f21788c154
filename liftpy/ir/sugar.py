"""The Python face of the IR: the syntax the embedded DSL and notebooks use on IR objects.

``a + b``, ``xs[i]``, ``f(a, b)`` for a user function, ``str(e)``, ``program.type()`` and
``program.evaluate(...)`` mean what the DSL, the printer, the type checker and the interpreter say.  Those
modules build on ``expr`` and ``userfun``, so the two modules of data cannot import them without a circle:
the meaning is installed on their classes here, above all of them, when ``liftpy.ir`` is imported (which
any import of one of its modules does first).  ``Program.compile`` is installed by ``liftpy`` itself, above
the back end, in the same way.
"""

from __future__ import annotations

from ..errors import LiftTypeError
from . import userfun as _userfun
from .dsl import as_argument, beside_value
from .expr import Call, Expr, Node, Program
from .interpreter import evaluate
from .parser import parse_type
from .primitives import Index
from .printer import show, show_program
from .typecheck import typecheck
from .userfun import BUILTINS, UserFun


def _arith(name: str, *args) -> Expr:
    # A call of a built-in user function; a Python number beside a DSL value is a float literal.
    return Call(BUILTINS[name], tuple(beside_value(a, name) for a in args))


def _operator(name: str, reflected: bool = False, unary: bool = False):
    if unary:
        return lambda self: _arith(name, self)
    if reflected:
        return lambda self, other: _arith(name, other, self)
    return lambda self, other: _arith(name, self, other)


# Arithmetic and comparisons build calls of the built-in user functions (add, sub, mult, div, neg, lt, le, gt,
# ge, and for & | ~ the logical and, or, not).  ``==`` stays structural equality of expressions
# (de-duplication and caches need it): eq(a, b) compares values.
for _dunder, _name, _reflected in (("add", "add", False), ("radd", "add", True), ("sub", "sub", False),
                                   ("rsub", "sub", True), ("mul", "mult", False), ("rmul", "mult", True),
                                   ("truediv", "div", False), ("rtruediv", "div", True), ("lt", "lt", False),
                                   ("le", "le", False), ("gt", "gt", False), ("ge", "ge", False),
                                   ("and", "and", False), ("rand", "and", True), ("or", "or", False),
                                   ("ror", "or", True)):
    setattr(Expr, f"__{_dunder}__", _operator(_name, _reflected))
Expr.__neg__ = _operator("neg", unary=True)
Expr.__invert__ = _operator("not", unary=True)  # ~c: the logical not of a condition (1 or 0), as numpy's masks


def _index(self, index) -> Expr:
    """``p[0]`` is ``get(p, 0)`` for a tuple and ``at(0, p)`` for an array (``xs[i]`` takes a size expression
    too), resolved when the program is built."""
    return Call(Index(index), (self,))


def _apply(self: UserFun, *args) -> Expr:
    """Applying a user function in the embedded DSL builds a call node."""
    if len(args) != self.arity:
        raise LiftTypeError(self.name, f"expects {self.arity} arguments, got {len(args)}")
    return Call(self, tuple(as_argument(a, self.text_name) for a in args))


Expr.__getitem__ = _index
UserFun.__call__ = _apply
Node.__str__ = lambda self: show(self)
Program.__str__ = lambda self: show_program(self)
Program.type = lambda self: typecheck(self).type
Program.evaluate = lambda self, *args, **kwargs: evaluate(self, *args, **kwargs)
_userfun.READ_TYPE = parse_type
