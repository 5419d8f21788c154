"""Turning sympy predicates into fast, integer-exact Python callables, and reading their shape.

sympy is far too slow for the inner loop of counting (millions of checks), and ``lambdify`` prints
``a/b`` as float division and ``floor(a/b)`` through floats, which is wrong for large integers.  This
module prints predicates as Python source itself:

* a relation ``lhs op rhs`` becomes ``N op 0`` where ``N/D = (lhs - rhs).as_numer_denom()``; when ``D`` is not a
  constant its sign is only known at run time, so the printed test is ``D != 0 and N*D op 0`` (the sign
  of ``N*D`` is the sign of ``N/D``), which stays in exact integer arithmetic;
* ``floor(n/d)`` is ``n // d`` and ``ceiling(n/d)`` is ``-(-n // d)``; ``Mod`` is Python's ``%``, which
  has sympy's sign convention (the sign of the divisor);
* a division left inside an arithmetic context is done with ``fractions.Fraction`` (exact, slow, rare).

Division by zero anywhere (or a ``Piecewise`` with no branch that applies) makes a predicate *false*:
an undefined condition is not a satisfied one.

The shape readers find the two forms the solver can turn into candidate generators instead of filters:
``Mod(E, p + c) == 0`` (``p + c`` divides ``E``) and relations linear in ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Sequence

import sympy
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from ..errors import ConstraintError

_REL_OPS = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.Lt: "<",
    sympy.Le: "<=",
    sympy.Gt: ">",
    sympy.Ge: ">=",
}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def symbol_named(expr: sympy.Basic, name: str) -> sympy.Symbol:
    """The free symbol of ``expr`` called ``name`` (parameters are matched by name, whatever
    assumptions their symbols were created with), or a fresh integer symbol when there is none."""
    for s in expr.free_symbols:
        if s.name == name:
            return s
    return sympy.Symbol(name, integer=True)


def _div(n, d):
    # Exact division for the rare division left in an arithmetic context.
    if isinstance(n, int) and isinstance(d, int) and n % d == 0:
        return n // d
    return Fraction(n, d)


def _is_pow2(x) -> bool:
    return isinstance(x, int) and x > 0 and x & (x - 1) == 0


def pow2_imageset(s) -> bool:
    """True for ``ImageSet(Lambda(k, 2**k), Naturals0)`` (the set ``power_of_two`` builds)."""
    if not isinstance(s, sympy.ImageSet) or len(s.base_sets) != 1 or s.base_sets[0] != sympy.S.Naturals0:
        return False
    lam = s.lamda
    if len(lam.variables) != 1:
        return False
    k = lam.variables[0]
    return sympy.simplify(lam.expr - 2**k) == 0


class _Printer:
    """Python source for integer arithmetic and booleans over named parameters."""

    def __init__(self, idents: dict[str, str]):
        self.idents = idents
        self.consts: dict[str, object] = {}

    def const(self, value) -> str:
        name = f"_c{len(self.consts)}"
        self.consts[name] = value
        return name

    # -- arithmetic ------------------------------------------------------------------------------
    def expr(self, e) -> str:
        e = sympy.sympify(e)
        if e.is_Integer:
            return f"({int(e)})"
        if e.is_Rational:
            return f"_F({int(e.p)}, {int(e.q)})"
        if e.is_Symbol:
            try:
                return self.idents[str(e)]
            except KeyError:
                raise ConstraintError(f"symbol {e} is not a parameter of this predicate") from None
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self.expr(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            n, d = sympy.fraction(e)
            if d != 1:
                return f"_div({self.expr(n)}, {self.expr(d)})"
            return "(" + "*".join(self.expr(a) for a in e.args) + ")"
        if isinstance(e, sympy.Pow):
            base, ex = e.args
            if ex.is_Integer and int(ex) >= 0:
                return f"({self.expr(base)}**{int(ex)})"
            if ex.is_Integer:
                return f"_div(1, {self.expr(base)}**{-int(ex)})"
            raise ConstraintError(f"cannot evaluate {e} exactly: only integer powers are supported")
        if isinstance(e, sympy.Mod):
            return f"({self.expr(e.args[0])} % {self.expr(e.args[1])})"
        if isinstance(e, sympy.floor):
            n, d = (e.args[0]).as_numer_denom()
            return f"({self.expr(n)} // {self.expr(d)})"
        if isinstance(e, sympy.ceiling):
            n, d = (e.args[0]).as_numer_denom()
            return f"(-((-{self.expr(n)}) // {self.expr(d)}))"
        if isinstance(e, sympy.Min):
            return "min(" + ", ".join(self.expr(a) for a in e.args) + ")"
        if isinstance(e, sympy.Max):
            return "max(" + ", ".join(self.expr(a) for a in e.args) + ")"
        if isinstance(e, sympy.Abs):
            return f"abs({self.expr(e.args[0])})"
        if isinstance(e, sympy.Piecewise):
            out = "None"
            for val, cond in reversed(e.args):
                out = f"({self.expr(val)} if {self.pred(cond)} else {out})"
            return out
        raise ConstraintError(f"cannot compile {e} ({type(e).__name__}) into an integer expression")

    # -- booleans --------------------------------------------------------------------------------
    def pred(self, b) -> str:
        if isinstance(b, BooleanTrue) or b is True:
            return "True"
        if isinstance(b, BooleanFalse) or b is False:
            return "False"
        if isinstance(b, sympy.And):
            return "(" + " and ".join(self.pred(a) for a in b.args) + ")"
        if isinstance(b, sympy.Or):
            return "(" + " or ".join(self.pred(a) for a in b.args) + ")"
        if isinstance(b, sympy.Not):
            return f"(not {self.pred(b.args[0])})"
        if isinstance(b, sympy.Xor):
            return "(" + " != ".join(f"bool({self.pred(a)})" for a in b.args) + ")"
        if isinstance(b, sympy.Implies):
            return f"((not {self.pred(b.args[0])}) or {self.pred(b.args[1])})"
        if isinstance(b, sympy.Equivalent):
            return "(" + " == ".join(f"bool({self.pred(a)})" for a in b.args) + ")"
        if isinstance(b, sympy.Contains):
            return self.contains(b.args[0], b.args[1])
        for cls, op in _REL_OPS.items():
            if isinstance(b, cls):
                return self.relation(b.lhs, b.rhs, op)
        raise ConstraintError(f"cannot compile the condition {b} ({type(b).__name__})")

    def relation(self, lhs, rhs, op: str) -> str:
        n, d = (lhs - rhs).as_numer_denom()
        if d.is_Integer:
            if int(d) < 0:
                n, op = -n, _FLIP[op]
            return f"({self.expr(n)} {op} 0)"
        ds = self.expr(d)
        if op in ("==", "!="):
            return f"({ds} != 0 and {self.expr(n)} {op} 0)"
        return f"({ds} != 0 and {self.expr(n)}*{ds} {op} 0)"

    def contains(self, x, s) -> str:
        xs = self.expr(x)
        if isinstance(s, sympy.FiniteSet):
            return f"({xs} in {self.const(frozenset(int(v) for v in s))})"
        if isinstance(s, sympy.Range):
            if s.size.is_finite:
                return f"({xs} in {self.const(range(int(s.start), int(s.stop), int(s.step)))})"
            parts = []
            if s.inf.is_finite:
                parts.append(f"{xs} >= {int(s.inf)}")
            if s.sup.is_finite:
                parts.append(f"{xs} <= {int(s.sup)}")
            parts.append(f"({xs} - {int(s.start if s.start.is_finite else s.stop)}) % {int(s.step)} == 0")
            return "(" + " and ".join(parts) + ")"
        if isinstance(s, sympy.Interval):
            parts = []
            if s.start.is_finite:
                parts.append(f"{xs} {'>' if s.left_open else '>='} {self.expr(s.start)}")
            if s.end.is_finite:
                parts.append(f"{xs} {'<' if s.right_open else '<='} {self.expr(s.end)}")
            return "(" + (" and ".join(parts) or "True") + ")"
        if s == sympy.S.Naturals:
            return f"({xs} >= 1)"
        if s == sympy.S.Naturals0:
            return f"({xs} >= 0)"
        if s == sympy.S.Integers:
            return "True"
        if pow2_imageset(s):
            return f"_is_pow2({xs})"
        if isinstance(s, sympy.Union):
            return "(" + " or ".join(self.contains(x, a) for a in s.args) + ")"
        if isinstance(s, sympy.Intersection):
            return "(" + " and ".join(self.contains(x, a) for a in s.args) + ")"
        if isinstance(s, sympy.Complement):
            return f"({self.contains(x, s.args[0])} and not {self.contains(x, s.args[1])})"
        raise ConstraintError(f"cannot compile membership in {s}")


_HELPERS = {"_F": Fraction, "_div": _div, "_is_pow2": _is_pow2}


def _idents(names: Sequence[str]) -> dict[str, str]:
    # Parameter names are identifiers (Parameter checks it); the prefix keeps them clear of helpers
    # and Python keywords.
    return {n: f"p_{n}" for n in names}


def _build(src: str, consts: dict, fname: str):
    ns = dict(_HELPERS)
    ns.update(consts)
    exec(compile(src, f"<liftpy constraint {fname}>", "exec"), ns)
    return ns[fname]


def predicate_source(pred: sympy.Basic, names: Sequence[str]) -> tuple[str, dict]:
    """Python source of ``pred`` over the identifiers ``p_<name>``, and the constants it refers to."""
    pr = _Printer(_idents(names))
    return pr.pred(pred), pr.consts


def compile_predicate(pred: sympy.Basic, names: Sequence[str]) -> Callable[..., bool]:
    """A function of the parameters ``names`` (positional, in that order) that returns the predicate's
    truth value; undefined values (division by zero, no Piecewise branch) count as false."""
    body, consts = predicate_source(pred, names)
    args = ", ".join(_idents(names).values())
    src = (
        f"def _pred({args}):\n"
        f"    try:\n"
        f"        return bool({body})\n"
        f"    except (ZeroDivisionError, TypeError):\n"
        f"        return False\n"
    )
    return _build(src, consts, "_pred")


def compile_expression(expr: sympy.Basic, names: Sequence[str]) -> Callable[..., object]:
    """A function of ``names`` computing ``expr`` exactly (int or Fraction); raises ZeroDivisionError."""
    pr = _Printer(_idents(names))
    body = pr.expr(sympy.sympify(expr))
    args = ", ".join(_idents(names).values())
    return _build(f"def _expr({args}):\n    return {body}\n", pr.consts, "_expr")


def compile_filter(preds: Sequence[sympy.Basic], key_names: Sequence[str], var: str) -> Callable:
    """``f(*key_values, candidates) -> list``: the candidates for ``var`` that satisfy every predicate,
    given the values of ``key_names``.  The conjunction is inlined into one list comprehension so that a
    candidate costs no Python call; a division by zero falls back to checking values one at a time."""
    names = list(key_names) + [var]
    ids = _idents(names)
    pr = _Printer(ids)
    body = " and ".join(pr.pred(p) for p in preds) or "True"
    safe = compile_predicate(sympy.And(*preds) if preds else sympy.true, names)
    consts = dict(pr.consts)
    consts["_safe"] = safe
    kargs = ", ".join(ids[n] for n in key_names)
    lead = kargs + ", " if kargs else ""
    v = ids[var]
    src = (
        f"def _filter({lead}_cands):\n"
        f"    try:\n"
        f"        return [{v} for {v} in _cands if {body}]\n"
        f"    except (ZeroDivisionError, TypeError):\n"
        f"        return [{v} for {v} in _cands if _safe({lead}{v})]\n"
    )
    return _build(src, consts, "_filter")


# -- shapes the solver turns into generators --------------------------------------------------------


@dataclass(frozen=True)
class DivisorForm:
    """``p + offset`` must divide ``dividend`` (which does not mention ``p``)."""

    param: str
    offset: int
    dividend: sympy.Basic


@dataclass(frozen=True)
class LinearForm:
    """``coeff*p + rest op 0`` with ``coeff`` and ``rest`` free of ``p`` (op one of == <= < >= >)."""

    param: str
    op: str
    coeff: sympy.Basic
    rest: sympy.Basic


@lru_cache(maxsize=8192)
def divisor_form(pred: sympy.Basic, param: str) -> DivisorForm | None:
    """Recognise ``Eq(Mod(E, p + c), 0)`` with a constant integer ``c``.  ``E`` may mention ``p`` when it
    is a polynomial in ``p``: modulo ``p + c`` it equals ``E`` at ``p = -c`` (the tiling condition
    ``(n + rho - theta) % (theta - 2) == 0`` becomes ``theta - 2`` divides ``n + rho - 2``)."""
    if not isinstance(pred, sympy.Eq):
        return None
    lhs, rhs = pred.lhs, pred.rhs
    if rhs != 0 and lhs == 0:
        lhs, rhs = rhs, lhs
    if rhs != 0 or not isinstance(lhs, sympy.Mod):
        return None
    p = symbol_named(pred, param)
    dividend, modulus = lhs.args
    offset = modulus - p
    if not offset.is_Integer:
        return None
    if p in dividend.free_symbols:
        if not dividend.is_polynomial(p):
            return None
        dividend = sympy.expand(dividend.subs(p, -offset))
    return DivisorForm(param, int(offset), dividend)


@lru_cache(maxsize=8192)
def linear_form(pred: sympy.Basic, param: str, positive: bool = False) -> LinearForm | None:
    """Recognise a relation that is linear in ``p`` once its denominator is cleared.

    ``lhs - rhs = N/D``.  For an inequality, ``N/D op 0`` holds exactly when ``D != 0`` and
    ``N*D op 0``, so ``coeff`` and ``rest`` carry the factor ``D`` (its sign may depend on other
    parameters and is known at run time).  When ``positive`` says every candidate of ``p`` is positive,
    powers of ``p`` in ``D`` do not change its sign and are dropped first, so ``(t-2)**2/p <= 384``
    reads as ``p >= (t-2)**2/384`` (and ``E/p <= 0``, where ``p`` drops out, as "all or none").
    Callers still check the relation itself: the form only narrows candidates."""
    op = None
    for cls, o in _REL_OPS.items():
        if isinstance(pred, cls):
            op = o
    if op is None or op == "!=":
        return None
    p = symbol_named(pred, param)
    n, d = (pred.lhs - pred.rhs).as_numer_denom()
    in_denominator = p in d.free_symbols
    if in_denominator:
        if not positive or op == "==":
            return None
        rest_d, dep = d.as_independent(p, as_Add=False)
        if not (dep == p or (isinstance(dep, sympy.Pow) and dep.base == p and dep.exp.is_Integer and dep.exp > 0)):
            return None
        d = rest_d
    n = sympy.expand(n)
    a, b = n.coeff(p, 1), n.coeff(p, 0)
    # A term non-linear in p (p**2, Mod(.., p)) either lands in b or is dropped by coeff; both show here.
    if p in a.free_symbols or p in b.free_symbols or sympy.expand(a * p + b - n) != 0:
        return None
    if a == 0 and not in_denominator:
        return None
    if op == "==":
        return LinearForm(param, op, a, b)
    return LinearForm(param, op, sympy.expand(a * d), sympy.expand(b * d))


def linear_bounds(op: str, coeff: int, rest: int) -> tuple[int | None, int | None] | None:
    """Integer bounds ``(lo, hi)`` on ``p`` from ``coeff*p + rest op 0`` (``None`` = unbounded side), or
    ``None`` when no integer satisfies it."""
    if coeff == 0:
        ok = {"==": rest == 0, "<=": rest <= 0, "<": rest < 0, ">=": rest >= 0, ">": rest > 0}[op]
        return (None, None) if ok else None
    if coeff < 0:
        coeff, rest, op = -coeff, -rest, _FLIP[op]
    if op == "==":
        if rest % coeff:
            return None
        return (-rest // coeff, -rest // coeff)
    if op == "<=":
        return (None, (-rest) // coeff)
    if op == "<":
        return (None, (-rest - 1) // coeff)
    if op == ">=":
        return (-(rest // coeff), None)
    return (-((rest - 1) // coeff), None)  # op == ">"


def divisors(n: int) -> list[int]:
    """Positive divisors of ``|n|`` in increasing order (``n != 0``)."""
    return list(_divisors(abs(int(n))))


@lru_cache(maxsize=1 << 16)
def _divisors(n: int) -> tuple[int, ...]:
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i * i != n:
                large.append(n // i)
        i += 1
    return tuple(small + large[::-1])

