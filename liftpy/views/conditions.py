"""Conditions on positions: a ``select`` over a mask or over an element index compiled to a comparison.

A user keeps a stencil's border with ``select(mask[i][j], new, old)`` over a mask of ones padded with zeros
(``pad2D(1, 1, 1, 1, 0.0, lit(1.0, [[float]N-2]M-2))``), or with ``select(lt(i, N - 1), x, y)`` over the
indices ``iota``/``mapIdx`` give.  The views already read such a mask without memory: element ``(i, j)`` is
``inside_rows ? (inside_cols ? 1.0f : 0.0f) : 0.0f`` (``PadView`` over a ``ConstView``), and an index is the
index expression itself (``IndexView``).  Printed as a call, ``select_float(<that>, new, old)``, the kernel
still builds a float, compares it with zero, and computes ``new`` and ``old`` both.

Here the built-in comparisons, logical operators, ``select`` and the int/float conversions are folded at code generation when their
operands' values are decided by positions and constants alone: the result is a conditional read on the
sympy condition (``rows && cols ? new : old``), which the passes simplify with the loop ranges like any
padding condition (decided, it disappears) and C evaluates lazily (only the branch taken is computed).
The value is the one the function computes: ``select(c, x, y)`` is ``x`` where ``c != 0``, comparisons give
1 or 0, ``and``/``or``/``not`` work on non-zero as "yes" (``liftpy.ir.userfun``).  Scalars only: on
vectors these functions work lane by lane, which one condition cannot say.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import sympy

from .arith import make_and, relation
from .view import CondRead, ConstRead, IndexRead, Read

# The built-ins folded here (``liftpy.ir.userfun.BUILTINS``), by name.
_RELATIONS = {"lt": sympy.StrictLessThan, "le": sympy.LessThan, "gt": sympy.StrictGreaterThan,
              "ge": sympy.GreaterThan, "eq": sympy.Eq, "ne": sympy.Ne}
_NEGATED = {sympy.StrictLessThan: sympy.GreaterThan, sympy.LessThan: sympy.StrictGreaterThan,
            sympy.StrictGreaterThan: sympy.LessThan, sympy.GreaterThan: sympy.StrictLessThan,
            sympy.Eq: sympy.Ne, sympy.Ne: sympy.Eq}
FOLDED = frozenset(_RELATIONS) | {"and", "or", "not", "select", "toFloat", "toInt"}


def negate(c):
    """``not c`` for the conditions views build (comparisons, ``And``, ``Or``, true, false), as a condition
    of the same kinds (De Morgan): ``arith.to_c`` prints no ``Not``.  None for any other condition."""
    if c is sympy.true:
        return sympy.false
    if c is sympy.false:
        return sympy.true
    if isinstance(c, (sympy.And, sympy.Or)):
        parts = [negate(a) for a in c.args]
        if any(p is None for p in parts):
            return None
        return disjunction(parts) if isinstance(c, sympy.And) else conjunction(parts)
    if getattr(c, "is_Relational", False) and type(c) in _NEGATED:
        return relation(_NEGATED[type(c)], c.lhs, c.rhs)
    return None


def conjunction(parts: Sequence):
    if any(p is sympy.false for p in parts):
        return sympy.false
    parts = [p for p in parts if p is not sympy.true]
    return make_and(parts) if len(parts) > 1 else (parts[0] if parts else sympy.true)


def disjunction(parts: Sequence):
    if any(p is sympy.true for p in parts):
        return sympy.true
    parts = [p for p in parts if p is not sympy.false]
    return sympy.Or(*parts) if len(parts) > 1 else (parts[0] if parts else sympy.false)


def choose(c, then, other):
    """``c ? then : other`` for conditions: a condition again, with no branch left that a constant decides
    (None where ``c`` has no negation this module can write)."""
    if then is other or then == other:
        return then
    if c is sympy.true or c is sympy.false:
        return then if c is sympy.true else other
    if then is sympy.true:
        return disjunction([c, other])
    if other is sympy.false:
        return conjunction([c, then])
    not_c = negate(c)
    if not_c is None:
        return None
    if then is sympy.false:
        return conjunction([not_c, other])
    if other is sympy.true:
        return disjunction([not_c, then])
    return disjunction([conjunction([c, then]), conjunction([not_c, other])])


def truth(r: Read):
    """The condition under which the scalar value ``r`` is non-zero, when positions and constants alone
    decide it (a constant, an index, a padded constant, a folded comparison); None otherwise (a value
    read from memory or computed)."""
    if isinstance(r, ConstRead):
        if r.width != 1 or isinstance(r.value, (tuple, list)):
            return None
        return sympy.true if r.value != 0 else sympy.false  # (NaN is non-zero: C's c != 0 is true for it)
    if isinstance(r, IndexRead):
        return relation(sympy.Ne, r.index, 0)
    if isinstance(r, CondRead):
        then = truth(r.then)
        if then is None:
            return None
        other = truth(r.other)
        return None if other is None else choose(r.cond, then, other)
    return None


def _number(r: Read):
    """The value of ``r`` as an exact sympy number or integer index expression, or None: an element index,
    or a scalar constant (a float compared with a float constant is compared exactly as the kernel does,
    both being the same float)."""
    if isinstance(r, IndexRead):
        return sympy.sympify(r.index)
    if isinstance(r, ConstRead) and r.width == 1 and isinstance(r.value, (int, float)) and not isinstance(r.value, bool):
        v = r.value
        if isinstance(v, float) and not v == v:  # NaN: every comparison but != is false, which sympy cannot say
            return None
        if isinstance(v, float) and r.scalar.name == "float":
            v = float(np.float32(v))  # the kernel compares the float the literal rounds to
        return sympy.Integer(v) if isinstance(v, int) or float(v).is_integer() else sympy.Rational(v)
    return None


def _indicator(cond, scalar) -> Read:
    """1 where ``cond`` holds and 0 elsewhere, of type ``scalar`` (a comparison's result)."""
    one, zero = (ConstRead(1, scalar), ConstRead(0, scalar)) if scalar.name == "int" else (ConstRead(1.0, scalar), ConstRead(0.0, scalar))
    if cond is sympy.true or cond is sympy.false:
        return one if cond is sympy.true else zero
    return CondRead(cond, one, zero)


def _converted(r: Read, scalar) -> Read | None:
    """The constants of ``r`` (a constant, or a conditional read of constants) converted to ``scalar`` as C's
    cast does (truncation toward zero for an int); None where ``r`` holds anything else, or a value the
    cast leaves undefined (NaN, out of int's range)."""
    if isinstance(r, ConstRead):
        if r.width != 1 or isinstance(r.value, (tuple, list)):
            return None
        if scalar.name != "int":
            return ConstRead(float(np.float32(r.value)), scalar)
        v = float(r.value)
        if not (v == v and -(2.0**31) <= v < 2.0**31):
            return None
        return ConstRead(int(v), scalar)  # (int() truncates toward zero, as C)
    if isinstance(r, CondRead):
        then, other = _converted(r.then, scalar), _converted(r.other, scalar)
        return None if then is None or other is None else CondRead(r.cond, then, other)
    return None


def fold_builtin(name: str, args: tuple[Read, ...], scalar) -> Read | None:
    """The built-in user function ``name`` on the scalar reads ``args`` as a conditional read or a constant,
    when positions and constants decide its condition; None to call the function as it is.  ``scalar``:
    the result's scalar type (None: not a scalar, nothing is folded)."""
    if scalar is None or name not in FOLDED:
        return None
    if name == "select":
        c, x, y = args
        cond = truth(c)
        if cond is None:
            return None
        if cond is sympy.true or cond is sympy.false:
            return x if cond is sympy.true else y
        return CondRead(cond, x, y)
    if name in ("toFloat", "toInt"):  # (a comparison's 1 or 0 made a float to choose floats with)
        return _converted(args[0], scalar)
    if name in _RELATIONS:
        a, b = (_number(r) for r in args)
        if a is None or b is None:
            return None
        return _indicator(relation(_RELATIONS[name], a, b), scalar)
    conds = [truth(r) for r in args]
    if any(c is None for c in conds):
        return None
    if name == "not":
        cond = negate(conds[0])
        if cond is None:
            return None
    elif name == "and":
        cond = conjunction(conds)
    else:
        cond = disjunction(conds)
    return _indicator(cond, scalar)
