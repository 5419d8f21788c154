"""Each parameter's finite set of candidate values.

A parameter's candidates come from its declaration (``domain``, or ``lo``..``hi`` with ``lo`` = 1 unless
stated) narrowed by the constraints that mention it alone:

* ``Contains(p, {1, 2, 4})``, ``Contains(p, Range(...))``, ``Contains(p, Interval(...))`` and the
  powers-of-two set of ``space.power_of_two``;
* ``Eq(Mod(c, p), 0)`` with a constant ``c`` (also ``Mod(c, p + k)``): the divisors of ``c``;
* relations linear in ``p`` give exact bounds; other polynomial relations give bounds from the real
  roots of the polynomial and are then applied as filters.

When that leaves a side unbounded, bounds implied by constraints shared with *bounded* parameters are
used (``theta <= n + rho`` with ``rho <= 8``; ``p`` divides ``E`` so ``|p| <= max |E|``), one pass per
parameter at most as often as there are parameters.  A parameter that is still unbounded is an error
that names it and says what would bound it.

``narrow_by_divisibility`` is a further, solver-side narrowing: a parameter that must divide an
expression of other parameters with few joint values can only take divisors of those values.  It keeps
the search small; the raw cross-product size reported to users is taken before it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import sympy

from ..errors import ConstraintError
from .compile import compile_expression, compile_predicate, pow2_imageset
from .forms import divisor_form, divisors, linear_bounds, linear_form, symbol_named
from .space import Constraint, Parameter, Space

# A derived set larger than this is kept as a ``range`` and never filtered value by value; a unary
# filter on such a set would cost seconds and hides a missing bound, so it is reported instead.
MAX_FILTERED_VALUES = 2_000_000
# Joint values of a dividend's parameters enumerated to narrow a divisor (see narrow_by_divisibility).
MAX_DIVIDEND_POINTS = 50_000


@dataclass(frozen=True)
class Domain:
    """Sorted candidate values of one parameter (a ``range`` when contiguous and unfiltered)."""

    name: str
    values: tuple[int, ...] | range
    rule: str  # how the set was obtained, for printing

    def __len__(self) -> int:
        return len(self.values)

    def describe(self, limit: int = 12) -> str:
        v = self.values
        if len(v) == 0:
            return "{} (empty)"
        if len(v) > 2 and v[-1] - v[0] + 1 == len(v):
            return f"{v[0]}..{v[-1]} ({len(v)} values)"
        if len(v) <= limit:
            return "{" + ", ".join(map(str, v)) + "}"
        head = ", ".join(map(str, v[: limit - 2]))
        return "{" + f"{head}, ..., {v[-1]}" + "}" + f" ({len(v)} values)"


@dataclass(frozen=True)
class _Effect:
    """What one unary constraint says about its parameter."""

    lo: int | None = None
    hi: int | None = None
    values: frozenset[int] | None = None
    pow2: bool = False
    exact: bool = False  # True when lo/hi/values/pow2 capture the constraint completely
    empty: bool = False


def _meet(a: _Effect, b: _Effect) -> _Effect:
    lo = b.lo if a.lo is None else a.lo if b.lo is None else max(a.lo, b.lo)
    hi = b.hi if a.hi is None else a.hi if b.hi is None else min(a.hi, b.hi)
    values = b.values if a.values is None else a.values if b.values is None else a.values & b.values
    return _Effect(lo, hi, values, a.pow2 or b.pow2, a.exact and b.exact, a.empty or b.empty)


def _join(a: _Effect, b: _Effect) -> _Effect:
    lo = None if a.lo is None or b.lo is None else min(a.lo, b.lo)
    hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
    values = None if a.values is None or b.values is None else a.values | b.values
    if a.empty:
        return b
    if b.empty:
        return a
    return _Effect(lo, hi, values, a.pow2 and b.pow2, False, False)


@lru_cache(maxsize=4096)
def unary_effect(pred: sympy.Basic, name: str) -> _Effect:
    """The candidate rule a predicate over ``name`` alone implies (cached: explanations re-derive
    domains for many subsets of the same constraints)."""
    return _effect(pred, symbol_named(pred, name), name)


def _effect(b, p: sympy.Symbol, name: str) -> _Effect:
    if b is sympy.true:
        return _Effect(exact=True)
    if b is sympy.false:
        return _Effect(exact=True, empty=True)
    if isinstance(b, sympy.And):
        out = _Effect(exact=True)
        for a in b.args:
            out = _meet(out, _effect(a, p, name))
        return out
    if isinstance(b, sympy.Or):
        effects = [_effect(a, p, name) for a in b.args]
        out = effects[0]
        for e in effects[1:]:
            out = _join(out, e)
        return _Effect(out.lo, out.hi, out.values, out.pow2, False, out.empty)
    if isinstance(b, sympy.Contains) and b.args[0] == p:
        return _contains_effect(b.args[1])
    d = divisor_form(b, name)
    if d is not None and d.dividend.is_Integer and int(d.dividend) != 0:
        ds = divisors(int(d.dividend))
        vals = frozenset(x - d.offset for x in ds) | frozenset(-x - d.offset for x in ds)
        return _Effect(values=vals, exact=True)
    lin = linear_form(b, name)
    if lin is not None and lin.coeff.is_Integer and lin.rest.is_Integer:
        bounds = linear_bounds(lin.op, int(lin.coeff), int(lin.rest))
        if bounds is None:
            return _Effect(exact=True, empty=True)
        # A non-constant denominator was folded into coeff/rest; with none left this is exact.
        return _Effect(bounds[0], bounds[1], exact=True)
    if isinstance(b, sympy.core.relational.Relational) and not isinstance(b, sympy.Ne):
        return _solved_effect(b, p)
    return _Effect()


def _contains_effect(s) -> _Effect:
    if isinstance(s, sympy.FiniteSet):
        return _Effect(values=frozenset(int(v) for v in s if v.is_Integer), exact=all(v.is_Integer for v in s))
    if isinstance(s, sympy.Range):
        if s.size.is_finite:
            return _Effect(values=frozenset(int(v) for v in s), exact=True)
        lo = int(s.inf) if s.inf.is_finite else None
        hi = int(s.sup) if s.sup.is_finite else None
        return _Effect(lo, hi, exact=s.step == 1)
    if isinstance(s, sympy.Interval):
        lo = None if not s.start.is_finite else int(math.floor(s.start) + 1 if s.left_open and s.start.is_Integer else math.ceil(s.start))
        hi = None if not s.end.is_finite else int(math.ceil(s.end) - 1 if s.right_open and s.end.is_Integer else math.floor(s.end))
        return _Effect(lo, hi, exact=True)
    if s == sympy.S.Naturals:
        return _Effect(lo=1, exact=True)
    if s == sympy.S.Naturals0:
        return _Effect(lo=0, exact=True)
    if s == sympy.S.Integers:
        return _Effect(exact=True)
    if pow2_imageset(s):
        return _Effect(lo=1, pow2=True, exact=True)
    return _Effect()


def _solved_effect(rel, p) -> _Effect:
    """Bounds of a polynomial relation ``f(p) op 0`` from the real roots of ``f`` (exact isolating
    intervals): beyond the outermost roots ``f`` has the sign of its ends, so a side whose end does not
    satisfy the relation is bounded by the outermost root.  The relation itself is still applied as a
    filter, since the set between the roots may have holes."""
    n, d = (rel.lhs - rel.rhs).as_numer_denom()
    if not d.is_Integer or int(d) == 0:
        return _Effect()
    op = _REL_OP_NAMES.get(type(rel))
    if op is None:
        return _Effect()
    if int(d) < 0:
        n, op = -n, _FLIP_OP[op]
    try:
        poly = sympy.Poly(n, p)
        if poly.degree() < 1 or any(not c.is_Rational for c in poly.all_coeffs()):
            return _Effect()
        roots = poly.intervals()
    except (sympy.PolynomialError, NotImplementedError, ValueError):
        return _Effect()
    lc = poly.LC()
    sign_hi = 1 if lc > 0 else -1
    sign_lo = sign_hi * (-1) ** poly.degree()

    def holds(sign: int) -> bool:
        return {"<=": sign < 0, "<": sign < 0, ">=": sign > 0, ">": sign > 0, "==": False}[op]

    if not roots:
        ok = holds(sign_hi)
        return _Effect(exact=not ok, empty=not ok)
    lo = None if holds(sign_lo) else int(math.ceil(min(a for (a, _b), _m in roots)))
    hi = None if holds(sign_hi) else int(math.floor(max(b for (_a, b), _m in roots)))
    return _Effect(lo, hi)


_REL_OP_NAMES = {sympy.Eq: "==", sympy.Le: "<=", sympy.Lt: "<", sympy.Ge: ">=", sympy.Gt: ">"}
_FLIP_OP = {"==": "==", "<=": ">=", "<": ">", ">=": "<=", ">": "<"}


def derive_domains(space: Space, constraints: Sequence[Constraint] | None = None) -> dict[str, Domain]:
    """Finite candidate values of every parameter of ``space`` under ``constraints`` (by default all of
    the space's).  Raises ``ConstraintError`` naming a parameter whose values cannot be bounded."""
    cons = space.constraints if constraints is None else tuple(constraints)
    unary: dict[str, list[Constraint]] = {p.name: [] for p in space.parameters}
    shared: list[Constraint] = []
    for c in cons:
        if len(c.names) == 1:
            unary[next(iter(c.names))].append(c)
        elif len(c.names) > 1:
            shared.append(c)

    effects: dict[str, _Effect] = {}
    for prm in space.parameters:
        eff = _declared_effect(prm)
        for c in unary[prm.name]:
            eff = _meet(eff, unary_effect(c.predicate, prm.name))
        effects[prm.name] = eff

    effects = _propagate_bounds(space, effects, shared)

    out: dict[str, Domain] = {}
    for prm in space.parameters:
        out[prm.name] = _materialize(prm, effects[prm.name], unary[prm.name])
    return out


def _declared_effect(prm: Parameter) -> _Effect:
    values = frozenset(prm.domain) if prm.domain is not None else None
    lo = prm.lo if prm.lo is not None else (None if prm.domain is not None else 1)
    return _Effect(lo, prm.hi, values, exact=True)


def _finite(e: _Effect) -> bool:
    return e.empty or e.values is not None or e.hi is not None and (e.lo is not None or e.pow2)


def _propagate_bounds(space: Space, effects: dict[str, _Effect], shared: Sequence[Constraint]) -> dict[str, _Effect]:
    effects = dict(effects)
    for _ in range(len(space.parameters)):
        changed = False
        for c in shared:
            for name in sorted(c.names):
                if _finite(effects[name]):
                    continue
                bound = _implied_bound(c, name, effects)
                if bound is not None:
                    new = _meet(effects[name], _Effect(bound[0], bound[1], exact=True))
                    if (new.lo, new.hi) != (effects[name].lo, effects[name].hi):
                        effects[name] = new
                        changed = True
        if not changed:
            break
    return effects


def _hull(e: _Effect) -> tuple[int, int] | None:
    if e.empty:
        return None
    if e.values is not None:
        vals = [v for v in e.values if (e.lo is None or v >= e.lo) and (e.hi is None or v <= e.hi)]
        return (min(vals), max(vals)) if vals else None
    if e.lo is None or e.hi is None:
        return None
    return (e.lo, e.hi)


def _implied_bound(c: Constraint, name: str, effects: Mapping[str, _Effect]) -> tuple[int | None, int | None] | None:
    hulls = {n: _hull(effects[n]) for n in c.names if n != name}
    if any(h is None for h in hulls.values()):
        return None
    d = divisor_form(c.predicate, name)
    if d is not None:
        iv = interval(d.dividend, hulls)
        if iv is None or iv[0] <= 0 <= iv[1]:
            return None
        m = max(abs(iv[0]), abs(iv[1]))
        return (-m - d.offset, m - d.offset)
    lin = linear_form(c.predicate, name)
    if lin is not None and lin.coeff.is_Integer and int(lin.coeff) != 0:
        iv = interval(lin.rest, hulls)
        if iv is None:
            return None
        a = int(lin.coeff)
        # The loosest bound over the other parameters' box is the one every assignment obeys.
        lo_b = linear_bounds(lin.op, a, iv[1] if a > 0 else iv[0])
        hi_b = linear_bounds(lin.op, a, iv[0] if a > 0 else iv[1])
        lo = lo_b[0] if lo_b is not None else None
        hi = hi_b[1] if hi_b is not None else None
        return (lo, hi)
    return None


def interval(expr, hulls: Mapping[str, tuple[int, int]]) -> tuple[int, int] | None:
    """Integer interval containing every value of ``expr`` when each parameter lies in its hull, or
    None when the expression's form is not handled (sound: never narrower than the truth).  Parameters
    are matched by name, so the symbols' assumptions do not matter."""
    e = sympy.sympify(expr)
    return _bounds(e, {s: hulls[s.name] for s in e.free_symbols if s.name in hulls})


def _bounds(e, ranges: Mapping) -> tuple[int, int] | None:
    """Inclusive integer bounds of a sympy expression over parameters with the ``ranges`` (sums,
    products, integer powers, floors and moduli, extrema), or None.  Constraints are sympy's: a
    modulus by a parameter (``Mod(N, p)``) is bounded by the parameter's range."""
    if e.is_Integer:
        return (int(e), int(e))
    if e.is_Symbol:
        return ranges.get(e)
    if e.is_Add or e.is_Mul:
        acc = (0, 0) if e.is_Add else (1, 1)
        for a in e.args:
            if a.is_Rational and not a.is_Integer:
                return None
            b = _bounds(a, ranges)
            if b is None:
                return None
            if e.is_Add:
                acc = (acc[0] + b[0], acc[1] + b[1])
            else:
                p = (acc[0] * b[0], acc[0] * b[1], acc[1] * b[0], acc[1] * b[1])
                acc = (min(p), max(p))
        return acc
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        b = _bounds(sympy.expand(num), ranges) if den.is_Integer and int(den) > 0 else None
        return None if b is None else (b[0] // int(den), b[1] // int(den))
    if isinstance(e, sympy.Mod):
        m = _bounds(e.args[1], ranges)  # the sign of the divisor; a divisor whose range holds 0 bounds nothing
        if m is None or m[0] <= 0 <= m[1]:
            return None
        if m[0] < 0:
            return (m[0] + 1, 0)
        b = _bounds(e.args[0], ranges)
        if b is not None and 0 <= b[0] and b[1] < m[0]:
            return b
        return (0, m[1] - 1)
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) >= 0:
        b = _bounds(e.base, ranges)
        if b is None:
            return None
        k = int(e.exp)
        ends = (b[0] ** k, b[1] ** k)
        return (0, max(ends)) if k % 2 == 0 and b[0] <= 0 <= b[1] else (min(ends), max(ends))
    if isinstance(e, (sympy.Max, sympy.Min)):
        bs = [_bounds(a, ranges) for a in e.args]
        if None in bs:
            return None
        f = max if isinstance(e, sympy.Max) else min
        return (f(b[0] for b in bs), f(b[1] for b in bs))
    return None


def _materialize(prm: Parameter, e: _Effect, unary: Sequence[Constraint]) -> Domain:
    name = prm.name
    if e.empty:
        return Domain(name, (), "no value satisfies the constraints on it alone")
    if not _finite(e):
        raise ConstraintError(
            f"parameter {name} has no finite set of candidate values: nothing bounds it "
            f"{'from above' if e.hi is None else 'from below'}. Give it a domain or bounds "
            f"(Parameter(..., lo=..., hi=...)), or a constraint on it such as {name} <= N, N % {name} == 0 "
            f"or membership in a finite set."
        )
    lo = e.lo if e.lo is not None else -(10**18)
    hi = e.hi if e.hi is not None else 10**18
    if e.values is not None:
        vals: tuple[int, ...] | range = tuple(sorted(v for v in e.values if lo <= v <= hi and (not e.pow2 or v > 0 and v & (v - 1) == 0)))
        rule = "declared values" if prm.domain is not None and e.values == frozenset(prm.domain) else "values its own constraints allow"
    elif e.pow2:
        vals = tuple(1 << k for k in range(max(lo, 1).bit_length() - 1, hi.bit_length() + 1) if max(lo, 1) <= 1 << k <= hi)
        rule = "powers of two"
    else:
        vals = range(lo, hi + 1) if hi >= lo else range(0)
        rule = "integer range"
    filters = [c for c in unary if not unary_effect(c.predicate, name).exact]
    if filters and len(vals):
        if len(vals) > MAX_FILTERED_VALUES:
            raise ConstraintError(
                f"parameter {name} has {len(vals)} candidate values before the condition "
                f"'{filters[0].origin}' is applied; give it tighter bounds"
            )
        check = compile_predicate(sympy.And(*[c.predicate for c in filters]), [name])
        vals = tuple(v for v in vals if check(v))
        rule += " filtered by its own constraints"
    return Domain(name, vals, rule)


def narrow_by_divisibility(
    domains: Mapping[str, Domain], constraints: Sequence[Constraint], order: Sequence[str]
) -> dict[str, Domain]:
    """Narrow each parameter that must divide an expression of other parameters (``Mod(E, p + c) == 0``)
    to the divisors of the values ``E`` can take, when those values are few.  Parameters are visited in
    ``order`` (dividends before divisors where the dependency graph allows), so a narrowed divisor can
    narrow the next one; each constraint is used once."""
    out = dict(domains)
    forms: dict[str, list] = {}
    for c in constraints:
        if len(c.names) < 2:
            continue
        for name in c.names:
            d = divisor_form(c.predicate, name)
            if d is not None:
                forms.setdefault(name, []).append(d)
    for name in order:
        for d in forms.get(name, ()):
            others = sorted(str(s) for s in d.dividend.free_symbols)
            if not others or any(n == name for n in others):
                continue
            points = 1
            for n in others:
                points *= len(out[n])
            if points > MAX_DIVIDEND_POINTS or points == 0:
                continue
            f = compile_expression(d.dividend, others)
            allowed: set[int] = set()
            unbounded = False
            for env in itertools.product(*(out[n].values for n in others)):
                try:
                    v = f(*env)
                except ZeroDivisionError:
                    continue
                if v != int(v):
                    continue
                v = int(v)
                if v == 0:
                    unbounded = True
                    break
                for x in divisors(v):
                    allowed.add(x - d.offset)
                    allowed.add(-x - d.offset)
            if unbounded:
                continue
            cur = out[name]
            if isinstance(cur.values, range):  # (the divisors are few; a range may hold a size's billion values)
                narrowed = tuple(sorted(v for v in allowed if v in cur.values))
            else:
                narrowed = tuple(v for v in cur.values if v in allowed)
            if len(narrowed) < len(cur):
                out[name] = Domain(name, narrowed, cur.rule + f", divisors of {d.dividend}")
    return out


