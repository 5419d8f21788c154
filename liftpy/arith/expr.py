"""Integer index expressions in a canonical form: the constructors of sums, products, divisions and
moduli over the nodes of ``nodes`` (re-exported here: the package's modules read both from here).

The canonical form follows sympy's, term for term (a constant first in a sum and a coefficient first in
a product, the rest in the order of sympy's ``Basic.compare``, repeated factors as powers, a floor
division by the greatest common divisor of its dividend's coefficients reduced): generated kernels
are compared byte for byte with those of the sympy implementation, and the order of a sum's terms is
the order in which the passes meet and name its parts.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import Iterable

from .nodes import (FALSE, MINUS_ONE, ONE, TRUE, ZERO, Add, And, ArithError, CDiv, CLoad, CMod, Cond, Const, Expr,  # noqa: F401
                    FloorDiv, Max, Min, Mod, Mul, Number, Or, Pow, Rel, Truth, Var, _intern, as_expr, const, truth, var)


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
        if isinstance(e, FloorDiv):
            inner = _quotient_rank(e.args[0], e.args[1].value)
            if inner is not None:
                k = e._rank = (_FLOOR_CLASS, 1, (inner,))
                return k
        name = class_name(e)
        i = _CLASS_ORDER.get(name, _UNKNOWN)
        content = _hashable_content(e)
        k = e._rank = ((i, name if i == _UNKNOWN else ""), len(content),
                       tuple([_rank(x) if isinstance(x, Expr) else x for x in content]))
    return k


_FLOOR_CLASS = (_UNKNOWN, "floor")
_ADD_CLASS, _MUL_CLASS = (_CLASS_ORDER["Add"], ""), (_CLASS_ORDER["Mul"], "")


def _quotient_rank(num: Expr, d: int):
    """``_rank(scale(num, Fraction(1, d)))``, a floor division's content, without building that sum; None
    for a dividend with a power (built then).  The rank of every new floor division asked for it, which
    built the rational sum only to rank it and drop it: a fifth of the cost of ordering a new sum."""
    r = Fraction(1, d)
    total: Number = 0
    ranks = []
    for t in terms_of(num):
        if t.is_const:
            total += t.value * r
            continue
        if t.is_pow or (t.is_mul and any(f.is_pow for f in t.args)):
            return None
        c, rest = coeff_and_rest(t)
        q = c * r
        if q == 1:  # (``_scaled``: the rest itself)
            ranks.append(_rank(rest))
        else:
            fs = factors_of(rest)
            ranks.append((_MUL_CLASS, 1 + len(fs), (_number_rank(q),) + tuple([_rank(f) for f in fs])))
    if not num.is_add:
        return ranks[0] if ranks else _number_rank(total)
    ranks.sort()  # (``add``'s order of the terms, the constant first)
    if total:
        ranks.insert(0, _number_rank(total))
    return (_ADD_CLASS, len(ranks), tuple(ranks))


def _number_rank(v: Number) -> tuple:
    """``_rank(const(v))``."""
    v = Fraction(v)
    if v.denominator == 1:
        name = {0: "Zero", 1: "One", -1: "NegativeOne"}.get(v.numerator, "Integer")
    else:
        name = "Half" if v == Fraction(1, 2) else "Rational"
    return ((_CLASS_ORDER[name], ""), 2, (v.numerator, v.denominator))


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
            split = _ITSELF
        t._split = split
    # (``(1, t)`` is not kept in ``t``: a node holding itself is a reference cycle, which only the cyclic
    # collector frees, with every memo the node holds; code generation's nodes were half its garbage)
    return (1, t) if split is _ITSELF else split


_ITSELF = (1, None)


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
    coeffs: dict = {}  # rest -> [coefficient, the term itself while it is the only one]
    total = _collect(terms, coeffs, 0)
    seq = [t if t is not None else _scaled(rest, c) for rest, (c, t) in coeffs.items() if c]
    return _sum_of(_sorted(seq), total)


def _collect(terms, coeffs: dict, total: Number) -> Number:
    """``add``'s walk: the terms (those of nested sums in their place) into ``coeffs``, in order; returns
    ``total`` plus their constants.  (A loop over the terms, not a stack: ``add`` builds every sum.)"""
    for t in terms:
        if not isinstance(t, Expr):
            t = as_expr(t)
        if t.is_const:
            total += t.value
        elif t.is_add:
            total = _collect(t.args, coeffs, total)
        else:
            split = t._split
            c, rest = split if split is not None and split is not _ITSELF else coeff_and_rest(t)
            hit = coeffs.get(rest)
            if hit is None:
                coeffs[rest] = [c, t]
            else:
                hit[0] += c
                hit[1] = None
    return total


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


# --------------------------------------------------------------------------------------------------
# The operators of every node (the nodes are defined before the constructors, which sort by the rank)


def _add(self, other):
    return add((self, as_expr(other)))


def _sub(self, other):
    other = as_expr(other)
    a, ca = without_constant(self)
    b, cb = without_constant(other)
    if a is b:  # two addresses of a run, or lanes: the terms cancel (one object for equal terms)
        return const(ca - cb)
    return add((self, scale(other, -1)))


def _rsub(self, other):
    return add((as_expr(other), scale(self, -1)))


def _mul(self, other):
    if isinstance(other, int) and not isinstance(other, bool):
        return scale(self, other)
    return mul((self, as_expr(other)))



def _neg(self):
    return scale(self, -1)


def _floordiv(self, d: int):
    return floordiv(self, d)


def _mod(self, d: int):
    return mod(self, d)


Expr.__add__ = Expr.__radd__ = _add
Expr.__sub__, Expr.__rsub__ = _sub, _rsub
Expr.__mul__ = Expr.__rmul__ = _mul
Expr.__neg__, Expr.__floordiv__, Expr.__mod__ = _neg, _floordiv, _mod
