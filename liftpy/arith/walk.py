"""Walks over index expressions: substitution, evaluation at a point, and the questions the passes ask
of an index (its divisions, whether it is linear in a variable)."""

from __future__ import annotations

from typing import Mapping

from . import cond as C
from . import expr as E
from . import order as O
from .simplify import DIVMOD, Ranges, simplified_node, simplify


def rebuild(e: E.Expr, args) -> E.Expr:
    """A node of ``e``'s kind over new arguments, through the canonical constructors (numbers folded)."""
    args = list(args)
    for a, b in zip(args, e.args):
        if a is not b:
            break
    else:
        return e
    if e.is_add:
        return _sum_with_constants(e, args)
    if e.is_mul:
        if len(args) == 2 and args[0] is e.args[0] and args[0].is_const:
            y = args[1]  # (the coefficient of a term times another factor: what ``E.mul`` builds, unless that
            if not (y.is_const or y.is_add or y.is_mul):  # folds, distributes or merges products)
                return E._intern(E.Mul, (args[0], y))
        if all(a.is_const for a in args):  # (``E.mul`` of numbers: their product)
            value = 1
            for a in args:
                value *= a.value
            return E.const(value)
        return E.mul(args)
    if e.is_pow:
        return E.mul([args[0]] * args[1].value)
    if isinstance(e, E.Rel):
        return C.rel(e.op, *args)
    if isinstance(e, E.And):
        return _lattice_with_truths(e, args, E.FALSE, E.TRUE, C.conj)
    if isinstance(e, E.Or):
        return _lattice_with_truths(e, args, E.TRUE, E.FALSE, C.disj)
    if isinstance(e, E.Max):
        return O.maximum(args)
    if isinstance(e, E.Min):
        return O.minimum(args)
    if isinstance(e, E.CLoad):
        return E.cload(e.args[0].name, args[1], e.args[2].value)
    make = {E.FloorDiv: E.floordiv, E.Mod: E.mod, E.CDiv: E.cdiv, E.CMod: E.cmod}[type(e)]
    return make(args[0], e.args[1].value)


def _sum_with_constants(e: E.Expr, args: list) -> E.Expr:
    """``E.add(args)`` for the new arguments of the canonical sum ``e``.  When every argument that changed
    became a number (a counter given a copy's value), the others are terms of ``e``: already collected
    (no two with the same rest) and in canonical order, which the stable sort keeps; so the sum is they
    with the constants added up, what ``E.add`` builds, without collecting and sorting them again."""
    total = 0
    kept = []
    for a, b in zip(args, e.args):
        if a.is_const:
            total += a.value
        elif a is b:
            kept.append(a)
        else:
            return E.add(args)
    return E._sum_of(kept, total)


def _lattice_with_truths(e: E.Expr, args: list, zero, unit, make) -> E.Expr:
    """``make(args)`` (``C.conj`` or ``C.disj``) for the new parts of the canonical ``e``.  When every part
    that changed was decided (a copy's counter decides a bound), the result is ``zero`` if one is, else
    the parts kept: each once, without a part and its negation, in the order ``make`` sorts them into (a
    subsequence of a sorted list, which the stable sort keeps), so ``make`` would return them as they are."""
    kept = []
    for a, b in zip(args, e.args):
        if a is b:
            kept.append(a)
        elif a is zero:
            return zero
        elif a is not unit:
            return make(args)
    if not kept:
        return unit
    return kept[0] if len(kept) == 1 else E._intern(type(e), tuple(kept))


def substitute(e, mapping: Mapping, seen: dict | None = None) -> E.Expr:
    """``e`` with variables replaced (``{i: 3}`` when unrolling, ``{i: 4*q + r}`` when splitting a loop).
    ``seen``: results already computed for this mapping (the indices of one statement share terms)."""
    e = E.as_expr(e)
    if not mapping:
        return e
    return _subst(e, {k: E.as_expr(v) for k, v in mapping.items()}, {} if seen is None else seen)


def _subst(e: E.Expr, mapping: dict, seen: dict) -> E.Expr:
    if e.is_var:
        return mapping.get(e, e)
    if not e.args or e.free_vars.isdisjoint(mapping):
        return e
    hit = seen.get(e)
    if hit is None:
        hit = seen[e] = rebuild(e, [_subst(a, mapping, seen) for a in e.args])
    return hit


def substitute_simplified(e, mapping: Mapping, ranges: Ranges, seen: dict | None = None) -> E.Expr:
    """``simplify(substitute(e, mapping), ranges)`` in one walk, for a ``mapping`` of variables to
    expressions (``{i: 3}`` for a copy of an unrolled loop, ``{i: 4*q + r}`` for a split one).  Each node
    with a substituted variable is simplified from its operands' results (``simplify.simplified_node``), as
    ``simplify`` does bottom-up, without first building it substituted and unsimplified (a division of
    ``l + 7*s``, its product, its sum: built only to be taken apart again).  The parts without one are
    ``simplify``'s.  For an ``e`` simplified already with the substituted variables' ranges (what the passes
    give it) the result is the two walks' node for node; for any other, the same values in another form
    at times (the simplifier is not idempotent: see the property test).  ``seen``: this mapping's results so
    far, by node and the ranges of its variables, shared by callers whose mapping's own variables keep
    their ranges (the statements of a copy, of a split loop's body)."""
    return _substituted_simplified(E.as_expr(e), mapping, ranges, {} if seen is None else seen)


def _substituted_simplified(e: E.Expr, mapping: Mapping, ranges: Ranges, seen: dict) -> E.Expr:
    if e.free_vars.isdisjoint(mapping):
        return simplify(e, ranges)
    if e.is_var:
        return simplify(mapping[e], ranges)
    key = (e, *[ranges.get(s) for s in e.free_vars])
    hit = seen.get(key)
    if hit is not None:
        return hit
    if e.is_pow or isinstance(e, E.CLoad):  # (``simplify`` leaves their operands as they are)
        out = simplify(substitute(e, mapping), ranges)
    else:
        args = [_substituted_simplified(a, mapping, ranges, seen) for a in e.args]
        out = simplified_node(e, args, ranges)
    seen[key] = out
    return out


def divmod_nodes(e) -> tuple:
    """The divisions and moduli in ``e``, outermost first (pre-order)."""
    e = E.as_expr(e)
    inner = e._divmods  # (the node itself left out: a node holding itself would be a reference cycle)
    if inner is None:
        inner = e._divmods = tuple(n for a in e.args for n in divmod_nodes(a)) if e.args else ()
    return ((e,) + inner) if isinstance(e, DIVMOD) else inner


def linear_in(e, x: E.Var):
    """``(rest, c)`` with ``e = rest + c*x`` for an integer ``c`` and a ``rest`` without ``x``, when ``x``
    appears in ``e`` only as a term ``c*x`` (not under a division or in a product with another
    variable); None otherwise.  Such an index needs no simplification when ``x`` becomes a constant."""
    c, rest = 0, []
    for t in E.terms_of(E.as_expr(e)):
        k, r = E.coeff_and_rest(t)
        if r is x and isinstance(k, int):
            c += k
        elif x in t.free_vars:
            return None
        else:
            rest.append(t)
    return E.add(rest), c


def evaluate(e, env: Mapping, loads: Mapping | None = None):
    """The value of ``e`` at the point ``env`` (variables to ints) in exact arithmetic: floor semantics
    for ``FloorDiv`` and ``Mod``, C's truncating semantics for ``CDiv`` and ``CMod`` (which agree with
    floor on the non-negative dividends the simplifier proves); a condition's value is a bool.
    ``loads``: the index arrays of ``CLoad`` nodes, by name."""
    e = E.as_expr(e)
    if e.is_const or isinstance(e, E.Truth):
        return e.value
    if e.is_var:
        return env[e]
    v = [evaluate(a, env, loads) for a in e.args]
    if e.is_add:
        return sum(v)
    if e.is_mul:
        out = 1
        for x in v:
            out *= x
        return out
    if e.is_pow:
        return v[0] ** v[1]
    if isinstance(e, E.FloorDiv):
        return v[0] // v[1]
    if isinstance(e, E.Mod):
        return v[0] % v[1]
    if isinstance(e, E.CDiv):
        q = abs(v[0]) // v[1]
        return q if v[0] >= 0 else -q
    if isinstance(e, E.CMod):
        r = abs(v[0]) % v[1]
        return r if v[0] >= 0 else -r
    if isinstance(e, E.CLoad):
        return loads[e.args[0].name][v[1]]
    if isinstance(e, E.Max):
        return max(v)
    if isinstance(e, E.Min):
        return min(v)
    if isinstance(e, E.Rel):
        return C.DECIDE[e.op](*v)
    if isinstance(e, E.And):
        return all(v)
    return any(v)
