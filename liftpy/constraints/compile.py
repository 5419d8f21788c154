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

``compile_candidates`` generates, per level of the search, one function that produces a parameter's
candidates from the values it depends on (divisor generation, linear bounds, then the checks), so the
counting loop makes one Python call per memo node.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from fractions import Fraction
from math import isqrt
from typing import Callable, Sequence

import sympy
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from ..errors import ConstraintError
from .forms import FLIP, REL_OPS, DivisorForm, LinearForm, divisors



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
        for cls, op in REL_OPS.items():
            if isinstance(b, cls):
                return self.relation(b.lhs, b.rhs, op)
        raise ConstraintError(f"cannot compile the condition {b} ({type(b).__name__})")

    def relation(self, lhs, rhs, op: str) -> str:
        n, d = (lhs - rhs).as_numer_denom()
        if d.is_Integer:
            if int(d) < 0:
                n, op = -n, FLIP[op]
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


def compile_candidates(
    var: str,
    used: Sequence[str],
    checks: Sequence[sympy.Basic],
    values: Sequence[int],
    divisor: DivisorForm | None,
    linear: Sequence[LinearForm],
) -> Callable[..., list]:
    """``f(*used_values) -> list``: the candidates of ``var`` (from the sorted ``values``) that satisfy
    every predicate in ``checks``, given the values of ``used``.

    Generated as one Python function: linear forms cut ``values`` to a slice (exact integer bounds,
    skipped when a coefficient is not an integer), a divisor form replaces the slice by the shifted
    divisors of the dividend when that is cheaper than scanning it, and the checks filter what is left
    (all of them, including the generating ones: generation only narrows).  Undefined values (division
    by zero) make a bound or generator inapplicable and a check false."""
    ids = _idents(list(used) + [var])
    pr = _Printer(ids)
    args = ", ".join(ids[n] for n in used)
    v = ids[var]
    lines = [f"def _candidates({args}):", "    vlo = vhi = None"]
    for k, lf in enumerate(linear):
        lines += [
            "    try:",
            f"        a, b = {pr.expr(lf.coeff)}, {pr.expr(lf.rest)}",
            "    except ZeroDivisionError:",
            "        a = b = None",
            "    if a.__class__ is int and b.__class__ is int:",
            "        if a > 0:",
            *_bound_lines(lf.op, "            "),
            "        elif a < 0:",
            "            a, b = -a, -b",
            *_bound_lines(FLIP[lf.op], "            "),
            f"        elif not (b {lf.op} 0):",
            "            return []",
        ]
    lines += [
        "    i = 0 if vlo is None else _bisect_left(_values, vlo)",
        "    j = _n if vhi is None else _bisect_right(_values, vhi)",
        "    if i >= j:",
        "        return []",
        "    base = _values[i:j]",
    ]
    if divisor is not None:
        off = divisor.offset
        lines += [
            "    try:",
            f"        e = {pr.expr(divisor.dividend)}",
            "    except ZeroDivisionError:",
            "        e = 0",
            "    if e.__class__ is int and e != 0 and _isqrt(abs(e)) <= 4 * (j - i) + 64:",
            "        ds = _divisors(e)",
            "        lo_v, hi_v = _values[i], _values[j - 1]",
            f"        gen = [x - ({off}) for x in ds]",
            f"        if lo_v + ({off}) < 0:  # p + off may be negative: negative divisors count too",
            f"            gen = [-x - ({off}) for x in reversed(ds)] + gen",
            "        base = [x for x in gen if lo_v <= x <= hi_v and x in _members]",
        ]
    body = " and ".join(pr.pred(c) for c in checks) or "True"
    lead = args + ", " if args else ""
    lines += [
        "    try:",
        f"        return [{v} for {v} in base if {body}]",
        "    except (ZeroDivisionError, TypeError):",
        f"        return [{v} for {v} in base if _safe({lead}{v})]",
    ]
    consts = dict(pr.consts)
    consts.update(
        _values=values,
        _n=len(values),
        _members=values if isinstance(values, range) else frozenset(values),
        _bisect_left=bisect_left,
        _bisect_right=bisect_right,
        _isqrt=isqrt,
        _divisors=divisors,
        _safe=compile_predicate(sympy.And(*checks) if checks else sympy.true, list(used) + [var]),
    )
    return _build("\n".join(lines) + "\n", consts, "_candidates")


def _bound_lines(op: str, indent: str) -> list[str]:
    """Code narrowing ``vlo``/``vhi`` from ``a*p + b op 0`` with ``a > 0`` (integers)."""
    lower = "if vlo is None or t > vlo: vlo = t"
    upper = "if vhi is None or t < vhi: vhi = t"
    code = {
        "<=": ["t = (-b) // a", upper],
        "<": ["t = (-b - 1) // a", upper],
        ">=": ["t = -(b // a)", lower],
        ">": ["t = -((b - 1) // a)", lower],
        "==": ["if b % a: return []", "t = -b // a", lower, upper],
    }[op]
    return [indent + line for line in code]
