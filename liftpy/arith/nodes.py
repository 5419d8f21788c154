"""The nodes of index expressions: immutable and hash-consed.

An index is a sum of products of loop variables, constants, floor divisions and moduli by positive
constants, C quotients and remainders the simplifier proved non-negative, minima, maxima and loads of
an index array; a condition is a comparison of two indices, a conjunction, a disjunction, or a truth
value.  Every node is made through ``_intern``, which returns the one node of its kind and arguments
alive, so equal expressions are the same object: equality is identity and hashing is ``id``, which is
what lets the passes keep tables keyed by indices without hashing trees again (the sympy base needed
eight memo tables and private constructors to get there).  The canonical form the constructors give
them is ``expr``'s.
"""

from __future__ import annotations

import weakref
from fractions import Fraction

from ..errors import LiftError

Number = int | Fraction


class ArithError(LiftError):
    """An expression outside the index algebra (a division by a non-constant, a rational in C)."""


# The nodes alive, by kind and arguments: weak references, dropped when their node dies (what
# ``WeakValueDictionary`` does, looked up here without its method calls: every constructor asks).
_INTERNED: dict = {}


def _drop(ref) -> None:
    if _INTERNED.get(ref.key) is ref:
        del _INTERNED[ref.key]


class _Ref(weakref.ref):
    """``weakref.KeyedRef`` without its constructor written in Python: every new node makes one, and
    KeyedRef's two Python calls took 0.34 microseconds against 0.08 for this one."""

    __slots__ = ("key",)


class Expr:
    """A node.  ``args``: its operands as sympy would hold them (numbers as ``Const``)."""

    # Besides the arguments, what the algebra computes of a node once: its variables, sympy's node count
    # and sort key, its rank in canonical order, its divisions, its split into coefficient and rest, its C
    # text, and its simplified forms and bounds by the ranges of its variables (``simplify.simplify`` and
    # ``simplify.bounds``).
    __slots__ = ("args", "_syms", "_count", "_key", "_rank", "_divmods", "_split", "_text", "_simplified",
                 "_bounds", "__weakref__")
    kind = "?"
    is_const = is_var = is_add = is_mul = is_pow = is_cond = False

    def __init__(self, args: tuple):
        self.args = args
        self._syms = None
        self._count = None
        self._key = None
        self._rank = None
        self._divmods = None
        self._split = None
        self._text = None
        self._simplified = None
        self._bounds = None

    # Equality is identity (hash-consed); ``__hash__`` is object's.  A constant also equals its number
    # (``index - first == 2``), which does not make the two one dictionary key.
    def __eq__(self, other):
        if isinstance(other, (int, Fraction)) and not isinstance(other, bool):
            return self.is_const and self.value == other
        return self is other

    __hash__ = object.__hash__

    def __reduce__(self):
        # Unpickled (a task's result from a worker process) or copied through the constructor's table:
        # a copy that is not the node alive for its arguments would be equal to nothing.
        return (_reinterned, (type(self), self.args, _extra(self)))

    # ``repr`` is the C-like text of ``arith.printer``, installed by the package (the printer builds on
    # this module).

    @property
    def free_vars(self) -> frozenset:
        """The variables of the expression (computed once per node)."""
        s = self._syms
        if s is None:
            s = frozenset().union(*(a.free_vars for a in self.args)) if self.args else frozenset()
            self._syms = s
        return s

    # The arithmetic operators (``+``, ``-``, ``*``, ``//``, ``%``) build canonical sums and products: they are
    # installed by ``expr``, whose constructors sort by the canonical rank.


class Const(Expr):
    __slots__ = ("value",)
    kind = "const"
    is_const = True

    def __init__(self, value: Number):
        super().__init__(())
        self.value = value

    def __int__(self) -> int:
        if not isinstance(self.value, int):
            raise ArithError(f"{self.value} is not an integer")
        return self.value

    @property
    def is_int(self) -> bool:
        return isinstance(self.value, int)


class Var(Expr):
    """A loop variable (or a name the passes introduce); its range is the simplifier's to know."""

    __slots__ = ("name",)
    kind = "var"
    is_var = True

    def __init__(self, name: str):
        super().__init__(())
        self.name = name
        self._syms = frozenset((self,))


class Add(Expr):
    __slots__ = ()
    kind = "add"
    is_add = True


class Mul(Expr):
    __slots__ = ()
    kind = "mul"
    is_mul = True


class Pow(Expr):
    """``base ** k`` for an integer ``k >= 2``: a product with a repeated factor (two equal moduli)."""

    __slots__ = ()
    kind = "pow"
    is_pow = True


class FloorDiv(Expr):
    """``floor(num / d)`` for an integer-coefficient ``num`` and a constant ``d > 1``, right for negative
    dividends too (printed with a helper: no bound on the dividend was known)."""

    __slots__ = ()
    kind = "floordiv"


class Mod(Expr):
    """``num mod d`` with the sign of ``d > 1`` (floor modulo; printed with a helper)."""

    __slots__ = ()
    kind = "mod"


class CDiv(Expr):
    """``num / d`` in C for a dividend the simplifier proved non-negative (so truncation is floor)."""

    __slots__ = ()
    kind = "cdiv"


class CMod(Expr):
    """``num % d`` in C for a dividend the simplifier proved non-negative."""

    __slots__ = ()
    kind = "cmod"


class CLoad(Expr):
    """``buffer[index]``: an index read from a gather's index array, whose values lie in
    ``[0, length)``.  ``args``: (the buffer's name as a Var, the index, the length as a Const)."""

    __slots__ = ()
    kind = "cload"


class Min(Expr):
    __slots__ = ()
    kind = "min"


class Max(Expr):
    __slots__ = ()
    kind = "max"


class Cond(Expr):
    __slots__ = ()
    is_cond = True


class Truth(Cond):
    __slots__ = ("value",)
    kind = "truth"

    def __init__(self, value: bool):
        super().__init__(())
        self.value = value


class Rel(Cond):
    """``lhs op rhs`` for op one of ``< <= > >= == !=``."""

    __slots__ = ("op",)
    kind = "rel"

    def __init__(self, args: tuple, op: str):
        super().__init__(args)
        self.op = op

    @property
    def lhs(self) -> Expr:
        return self.args[0]

    @property
    def rhs(self) -> Expr:
        return self.args[1]


class And(Cond):
    __slots__ = ()
    kind = "and"


class Or(Cond):
    __slots__ = ()
    kind = "or"


# --------------------------------------------------------------------------------------------------
# Interning


def _intern(cls, args: tuple, extra=None) -> Expr:
    """The node of ``cls`` over ``args`` (and ``extra``: a constant's value, a name, an operator):
    the one alive, or a new one.  Children are interned, so the key compares them by identity (a tuple
    compares its items by identity first; a node hashes by identity): the key holds them, not their ids,
    which took three times as long to build.  It keeps them no longer than their parent, which holds them
    too, and whose death drops the key."""
    key = (cls, extra, args)
    ref = _INTERNED.get(key)
    node = None if ref is None else ref()
    if node is None:
        if cls is Const or cls is Var or cls is Truth:
            node = cls(extra)
        elif cls is Rel:
            node = Rel(args, extra)
        else:
            node = cls(args)
        ref = _INTERNED[key] = _Ref(node, _drop)
        ref.key = key
    return node


_INTS: dict = {}  # the integer constants, kept: indices meet the same few again and again


def _extra(e: Expr):
    return e.value if isinstance(e, (Const, Truth)) else e.name if isinstance(e, Var) else getattr(e, "op", None)


def _reinterned(cls, args: tuple, extra) -> Expr:
    return const(extra) if cls is Const else _intern(cls, tuple(args), extra)


def const(v: Number) -> Const:
    if type(v) is int:
        hit = _INTS.get(v)
        if hit is None:
            hit = _intern(Const, (), v)
            if len(_INTS) < 1 << 16:
                _INTS[v] = hit
        return hit
    if isinstance(v, Fraction):
        if v.denominator == 1:
            v = v.numerator
    elif not isinstance(v, int) or isinstance(v, bool):
        raise ArithError(f"{v!r} is not an integer or a fraction")
    return _intern(Const, (), v)


def var(name: str) -> Var:
    return _intern(Var, (), name)


def as_expr(x) -> Expr:
    """An expression from an expression, an int or a Fraction."""
    if isinstance(x, Expr):
        return x
    return const(x)


ZERO, ONE, MINUS_ONE = const(0), const(1), const(-1)
TRUE, FALSE = _intern(Truth, (), True), _intern(Truth, (), False)


def truth(b: bool) -> Truth:
    return TRUE if b else FALSE
