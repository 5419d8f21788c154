"""Integer index expressions: immutable, hash-consed nodes in a canonical form.

An index is a sum of products of loop variables, constants, floor divisions and moduli by positive
constants, C quotients and remainders the simplifier proved non-negative, minima, maxima and loads of
an index array; a condition is a comparison of two indices, a conjunction, a disjunction, or a truth
value.  Every constructor returns the one node of its kind and arguments alive (``_intern``), so equal
expressions are the same object: equality is identity and hashing is ``id``, which is what lets the
passes keep tables keyed by indices without hashing trees again (the sympy base needed eight memo
tables and private constructors to get there).

The canonical form follows sympy's, term for term (a constant first in a sum and a coefficient first in
a product, the rest in the order of sympy's ``Basic.compare``, repeated factors as powers, a floor
division by the greatest common divisor of its dividend's coefficients reduced): generated kernels
are compared byte for byte with those of the sympy implementation, and the order of a sum's terms is
the order in which the passes meet and name its parts.
"""

from __future__ import annotations

import weakref
from fractions import Fraction
from math import gcd
from typing import Iterable

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


class Expr:
    """A node.  ``args``: its operands as sympy would hold them (numbers as ``Const``)."""

    # Besides the arguments, what the algebra computes of a node once: its variables, sympy's node count
    # and sort key, its rank in canonical order, its divisions, its split into coefficient and rest, its C
    # text, and its simplified forms and bounds by the ranges of its variables (``simplify._scoped``).
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

    # Arithmetic: the operators build canonical sums and products (``add``, ``mul``).
    def __add__(self, other):
        return add((self, as_expr(other)))

    __radd__ = __add__

    def __sub__(self, other):
        other = as_expr(other)
        a, ca = without_constant(self)
        b, cb = without_constant(other)
        if a is b:  # two addresses of a run, or lanes: the terms cancel (one object for equal terms)
            return const(ca - cb)
        return add((self, scale(other, -1)))

    def __rsub__(self, other):
        return add((as_expr(other), scale(self, -1)))

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return scale(self, other)
        return mul((self, as_expr(other)))

    __rmul__ = __mul__

    def __neg__(self):
        return scale(self, -1)

    def __floordiv__(self, d: int):
        return floordiv(self, d)

    def __mod__(self, d: int):
        return mod(self, d)


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
    the one alive, or a new one.  Children are interned, so the key compares them by identity."""
    key = (cls, extra, *map(id, args))
    ref = _INTERNED.get(key)
    node = None if ref is None else ref()
    if node is None:
        if cls is Const or cls is Var or cls is Truth:
            node = cls(extra)
        elif cls is Rel:
            node = Rel(args, extra)
        else:
            node = cls(args)
        _INTERNED[key] = weakref.KeyedRef(node, _drop, key)
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


# --------------------------------------------------------------------------------------------------
# The order of sympy's ``Basic.compare`` (``liftpy.arith.order`` says why sympy's): here, because
# building a sum sorts its terms by it, and the rank of a floor division is that of its dividend scaled.

# The classes of sympy's ``ordering_of_classes`` that index expressions meet, in its order (only the
# order between them matters); names not in it are ordered after all of them, by name.
_CLASS_ORDER = {name: k for k, name in enumerate((
    "Zero", "One", "Half", "NegativeOne", "Integer", "Rational", "Symbol", "Pow", "Mul", "Add", "Equality",
    "Unequality", "StrictGreaterThan", "StrictLessThan", "GreaterThan", "LessThan"))}
_UNKNOWN = len(_CLASS_ORDER) + 1

_REL_CLASS = {"<": "StrictLessThan", "<=": "LessThan", ">": "StrictGreaterThan", ">=": "GreaterThan",
              "==": "Equality", "!=": "Unequality"}
_NAMES = {Var: "Symbol", Add: "Add", Mul: "Mul", Pow: "Pow", FloorDiv: "floor", Mod: "Mod", CDiv: "CDiv",
          CMod: "CMod", CLoad: "CLoad", Min: "Min", Max: "Max", And: "And", Or: "Or"}


def class_name(e: Expr) -> str:
    """The name of the sympy class of ``e``."""
    if e.is_const:
        v = e.value
        if isinstance(v, int):
            return {0: "Zero", 1: "One", -1: "NegativeOne"}.get(v, "Integer")
        return "Half" if v == Fraction(1, 2) else "Rational"
    if isinstance(e, Rel):
        return _REL_CLASS[e.op]
    if isinstance(e, Truth):
        return "BooleanTrue" if e.value else "BooleanFalse"
    return _NAMES[type(e)]


def sympy_args(e: Expr) -> tuple:
    """``e``'s arguments as sympy holds them: a floor division's is the rational sum ``num / d``."""
    if isinstance(e, FloorDiv):
        return (scale(e.args[0], Fraction(1, e.args[1].value)),)
    return e.args


def _hashable_content(e: Expr) -> tuple:
    """sympy's ``_hashable_content``."""
    if e.is_const:
        v = Fraction(e.value)
        return (v.numerator, v.denominator)
    if e.is_var:
        return (e.name, ("commutative", True))  # the assumptions of a plain Symbol
    return sympy_args(e)


def _rank(e: Expr) -> tuple:
    """A key in the order of sympy's ``Basic.compare`` (once per node): the class's place in sympy's
    ``ordering_of_classes`` (a name not listed after all listed ones, by name), then the length of the
    hashable content, then the content, nodes by their ranks."""
    k = e._rank
    if k is None:
        name = class_name(e)
        i = _CLASS_ORDER.get(name, _UNKNOWN)
        content = _hashable_content(e)
        k = e._rank = ((i, name if i == _UNKNOWN else ""), len(content),
                       tuple([_rank(x) if isinstance(x, Expr) else x for x in content]))
    return k


# --------------------------------------------------------------------------------------------------
# Sums and products


def coeff_and_rest(t: Expr) -> tuple[Number, Expr]:
    """``(c, rest)`` with ``t = c * rest``: the coefficient of a product, 1 for anything else (once per
    node: sums are taken apart into these on every change)."""
    split = t._split
    if split is None:
        if t.is_mul and t.args[0].is_const:
            rest = t.args[1:]
            split = (t.args[0].value, rest[0] if len(rest) == 1 else _intern(Mul, rest))
        else:
            split = (1, t)
        t._split = split
    return split


def terms_of(e: Expr) -> tuple:
    return e.args if e.is_add else (e,)


def factors_of(e: Expr) -> tuple:
    return e.args if e.is_mul else (e,)


def _sorted(items: list) -> list:
    if len(items) > 1:
        items.sort(key=_rank)
    return items


def add(terms: Iterable) -> Expr:
    """The canonical sum of ``terms`` (expressions or numbers): nested sums flattened, like terms
    collected, the constant first and the other terms in canonical order."""
    total: Number = 0
    coeffs: dict = {}  # rest -> [coefficient, the term itself while it is the only one]
    stack = [as_expr(t) for t in terms]
    stack.reverse()
    while stack:
        t = stack.pop()
        if t.is_const:
            total += t.value
        elif t.is_add:
            stack.extend(reversed(t.args))
        else:
            c, rest = coeff_and_rest(t)
            hit = coeffs.get(rest)
            if hit is None:
                coeffs[rest] = [c, t]
            else:
                hit[0] += c
                hit[1] = None
    seq = [t if t is not None else _scaled(rest, c) for rest, (c, t) in coeffs.items() if c]
    return _sum_of(_sorted(seq), total)


def _sum_of(seq: list, total: Number) -> Expr:
    if total:
        seq.insert(0, const(total))
    if not seq:
        return ZERO
    return seq[0] if len(seq) == 1 else _intern(Add, tuple(seq))


def _scaled(rest: Expr, c: Number) -> Expr:
    """``c * rest`` for a non-number ``rest`` that is not a product with a coefficient."""
    if c == 1:
        return rest
    return _intern(Mul, (const(c),) + factors_of(rest))


def mul(factors: Iterable) -> Expr:
    """The canonical product of ``factors``: numbers multiplied into one coefficient, distributed over a
    sum (so that an index stays a sum of products), equal factors gathered into powers."""
    coeff: Number = 1
    bases: dict = {}
    sums = []
    for f in factors:
        f = as_expr(f)
        if f.is_const:
            coeff *= f.value
        elif f.is_add:
            sums.append(f)
        else:
            for g in factors_of(f):
                if g.is_const:
                    coeff *= g.value
                elif g.is_pow:
                    bases[g.args[0]] = bases.get(g.args[0], 0) + g.args[1].value
                else:
                    bases[g] = bases.get(g, 0) + 1
    if coeff == 0:
        return ZERO
    if sums:  # distributed: (a + b) * c = a*c + b*c
        rest = _product(bases, coeff)
        out = add([mul((t, rest)) for t in terms_of(sums[0])])
        for s in sums[1:]:
            out = add([mul((a, b)) for a in terms_of(out) for b in terms_of(s)])
        return out
    return _product(bases, coeff)


def _product(bases: dict, coeff: Number) -> Expr:
    seq = [b if k == 1 else _intern(Pow, (b, const(k))) for b, k in bases.items()]
    _sorted(seq)
    if coeff != 1 and seq:
        seq.insert(0, const(coeff))
    if not seq:
        return const(coeff)
    return seq[0] if len(seq) == 1 else _intern(Mul, tuple(seq))


def scale(e: Expr, r: Number) -> Expr:
    """``e * r`` for a number ``r`` (the commonest product: a stride, a negation, a divisor)."""
    if r == 1:
        return e
    if not r:
        return ZERO
    if e.is_const:
        return const(e.value * r)
    if e.is_add:
        return add([scale(t, r) for t in e.args])
    if e.is_pow or (e.is_mul and any(f.is_pow for f in e.args)):
        return mul((e, const(r)))
    c, rest = coeff_and_rest(e)
    return _scaled(rest, c * r)


def without_constant(e: Expr) -> tuple[Expr, Number]:
    """``(rest, c)`` with ``e = rest + c`` and ``c`` the constant term of a sum (0 for other nodes)."""
    if e.is_add and e.args[0].is_const:
        rest = e.args[1:]
        return (rest[0] if len(rest) == 1 else _intern(Add, rest)), e.args[0].value
    if e.is_const:
        return ZERO, e.value
    return e, 0


def plus(e: Expr, k: Number) -> Expr:
    """``e + k`` for a number ``k``."""
    e = as_expr(e)
    if not k:
        return e
    rest, c = without_constant(e)
    if rest is ZERO:
        return const(c + k)
    return _sum_of(list(terms_of(rest)), c + k)


# --------------------------------------------------------------------------------------------------
# Divisions, moduli, extrema, loads


def _content(num: Expr) -> int:
    """The greatest common divisor of the integer coefficients (and constant) of ``num``; 0 if one is
    not an integer."""
    g = 0
    for t in terms_of(num):
        c = t.value if t.is_const else coeff_and_rest(t)[0]
        if not isinstance(c, int):
            return 0
        g = gcd(g, c)
    return g


def _denominator(num: Expr) -> int:
    """The least common multiple of the denominators of ``num``'s coefficients and constant."""
    den = 1
    for t in terms_of(num):
        c = Fraction(t.value if t.is_const else coeff_and_rest(t)[0])
        den = den * c.denominator // gcd(den, c.denominator)
    return den


def _divisor(d) -> int:
    if isinstance(d, Const):
        d = d.value
    if not isinstance(d, int) or d <= 0:
        raise ArithError(f"division by {d}: only positive integer divisors are index arithmetic")
    return d


def floordiv(num, d) -> Expr:
    """``floor(num / d)``, numbers folded, the divisor reduced by the dividend's common factor and a
    multiple of it in the constant taken out, as sympy's ``floor`` keeps them; nothing else decided
    (the simplifier does, with the ranges)."""
    num, d = as_expr(num), _divisor(d)
    if num.is_const:
        v = Fraction(num.value)
        return const(v.numerator // (v.denominator * d))
    den = _denominator(num)
    if den > 1:  # floor(x/2 / 3) = floor(x / 6)
        num, d = scale(num, den), d * den
    g = gcd(_content(num), d)
    if g > 1:
        num, d = scale(num, Fraction(1, g)), d // g
    if d == 1:
        return num
    rest, c = without_constant(num)
    if c and c % d == 0:
        return plus(_intern(FloorDiv, (rest, const(d))), c // d)
    return _intern(FloorDiv, (num, const(d)))


def mod(num, d) -> Expr:
    """``num mod d`` (floor modulo), numbers folded."""
    num, d = as_expr(num), _divisor(d)
    if num.is_const:
        return const(num.value % d)
    if _denominator(num) > 1:
        raise ArithError(f"{num!r} mod {d}: the dividend is not an integer")
    if d == 1:
        return ZERO
    return _intern(Mod, (num, const(d)))


def cdiv(num, d) -> Expr:
    num, d = as_expr(num), _divisor(d)
    return const(num.value // d) if num.is_const else _intern(CDiv, (num, const(d)))


def cmod(num, d) -> Expr:
    num, d = as_expr(num), _divisor(d)
    return const(num.value % d) if num.is_const else _intern(CMod, (num, const(d)))


def cload(buffer: str, index, length: int) -> Expr:
    return _intern(CLoad, (var(buffer), as_expr(index), const(length)))
