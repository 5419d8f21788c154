"""Conversion between index expressions and sympy, at the boundary where sympy earns its place: the
constraint solver and the type checker reason about symbolic sizes with it, and the property tests use
it as the oracle.  The C quotient, remainder and load are opaque sympy functions here (``CDiv``,
``CMod``, ``CLoad``): sympy would otherwise renormalize a dividend into something C's truncating
division gets wrong."""

from __future__ import annotations

from fractions import Fraction

import sympy

from . import cond as C
from . import expr as E
from . import order as O

_RELS = {sympy.StrictLessThan: "<", sympy.LessThan: "<=", sympy.StrictGreaterThan: ">",
         sympy.GreaterThan: ">=", sympy.Eq: "==", sympy.Ne: "!="}
_SYMPY_RELS = {op: cls for cls, op in _RELS.items()}


class CDiv(sympy.Function):
    nargs = 2
    is_integer = True


class CMod(sympy.Function):
    nargs = 2
    is_integer = True


class CLoad(sympy.Function):
    nargs = 3  # (the buffer's name as a Symbol, the index, the length of the indexed dimension)
    is_integer = True


def _opaque():
    return CDiv, CMod, CLoad


def from_sympy(s) -> E.Expr:
    """The index expression of a sympy integer expression or condition (``ArithError`` for anything
    outside the algebra: a symbolic divisor, a float, a power with a symbolic exponent)."""
    if isinstance(s, (bool, int)):
        s = sympy.sympify(s)  # (a Python number: never text, which sympify would evaluate)
    elif not isinstance(s, sympy.Basic):
        raise E.ArithError(f"not an index expression: {type(s).__name__} {str(s)[:60]!r}")
    cdiv, cmod, cload = _opaque()
    if s is sympy.true or s is sympy.false:
        return E.truth(bool(s))
    if s.is_Rational:
        return E.const(int(s.p) if s.q == 1 else Fraction(int(s.p), int(s.q)))
    if s.is_Symbol:
        return E.var(s.name)
    if s.is_Add:
        return E.add(from_sympy(a) for a in s.args)
    if s.is_Mul:
        return E.mul(from_sympy(a) for a in s.args)
    if s.is_Pow and s.exp.is_Integer and int(s.exp) >= 1:
        return E.mul([from_sympy(s.base)] * int(s.exp))
    if isinstance(s, sympy.floor):
        num, den = sympy.fraction(sympy.together(s.args[0]))
        return E.floordiv(from_sympy(sympy.expand(num)), _int(den))
    if isinstance(s, sympy.Mod):
        return E.mod(from_sympy(s.args[0]), _int(s.args[1]))
    if isinstance(s, cdiv):
        return E.cdiv(from_sympy(s.args[0]), _int(s.args[1]))
    if isinstance(s, cmod):
        return E.cmod(from_sympy(s.args[0]), _int(s.args[1]))
    if isinstance(s, cload):
        return E.cload(s.args[0].name, from_sympy(s.args[1]), _int(s.args[2]))
    if isinstance(s, (sympy.Max, sympy.Min)):
        make = O.maximum if isinstance(s, sympy.Max) else O.minimum
        return make(from_sympy(a) for a in s.args)
    if type(s) in _RELS:
        return C.rel(_RELS[type(s)], from_sympy(s.lhs), from_sympy(s.rhs))
    if isinstance(s, sympy.And):
        return C.conj(from_sympy(a) for a in s.args)
    if isinstance(s, sympy.Or):
        return C.disj(from_sympy(a) for a in s.args)
    raise E.ArithError(f"{s} ({type(s).__name__}) is not an index expression")


def _int(s) -> int:
    if not getattr(s, "is_Integer", False):
        raise E.ArithError(f"{s} is not an integer constant")
    return int(s)


def to_sympy(e: E.Expr):
    """The sympy expression of an index expression, built unevaluated where sympy would evaluate what
    the index algebra keeps (a floor, a modulus, a comparison)."""
    cdiv, cmod, cload = _opaque()
    if isinstance(e, E.Truth):
        return sympy.true if e.value else sympy.false
    if e.is_const:
        return sympy.Rational(e.value.numerator, e.value.denominator) if isinstance(e.value, Fraction) else sympy.Integer(e.value)
    if e.is_var:
        return sympy.Symbol(e.name)
    args = [to_sympy(a) for a in e.args]
    if e.is_add:
        return sympy.Add(*args)
    if e.is_mul:
        return sympy.Mul(*args)
    if e.is_pow:
        return sympy.Pow(*args)
    if isinstance(e, E.FloorDiv):
        return sympy.floor(args[0] / args[1], evaluate=False)
    if isinstance(e, E.Mod):
        return sympy.Mod(*args, evaluate=False)
    if isinstance(e, E.CDiv):
        return cdiv(*args)
    if isinstance(e, E.CMod):
        return cmod(*args)
    if isinstance(e, E.CLoad):
        return cload(*args)
    if isinstance(e, E.Max):
        return sympy.Max(*args, evaluate=False)
    if isinstance(e, E.Min):
        return sympy.Min(*args, evaluate=False)
    if isinstance(e, E.Rel):
        return _SYMPY_RELS[e.op](*args, evaluate=False)
    if isinstance(e, E.And):
        return sympy.And(*args)
    if isinstance(e, E.Or):
        return sympy.Or(*args)
    raise E.ArithError(f"no sympy form for {type(e).__name__}")
