"""Conditions on positions: a ``select`` over a mask or over an element index compiled to a comparison.

A user keeps a stencil's border with ``select(mask[i][j], new, old)`` over a mask of ones padded with zeros
(``pad2D(1, 1, 1, 1, 0.0, lit(1.0, [[float]N-2]M-2))``), or with ``select(lt(i, N - 1), x, y)`` over the
indices ``iota``/``mapIdx`` give.  The views already read such a mask without memory: element ``(i, j)`` is
``inside_rows ? (inside_cols ? 1.0f : 0.0f) : 0.0f`` (``PadView`` over a ``ConstView``), and an index is the
index expression itself (``IndexView``).  Printed as a call, ``select_float(<that>, new, old)``, the kernel
still builds a float, compares it with zero, and computes ``new`` and ``old`` both.

Here the built-in comparisons, logical operators, ``select`` and the int/float conversions are folded at code generation when their
operands' values are decided by positions and constants alone: the result is a conditional read on the
index condition (``rows && cols ? new : old``), which the passes simplify with the loop ranges like any
padding condition (decided, it disappears) and C evaluates lazily (only the branch taken is computed).
The value is the one the function computes: ``select(c, x, y)`` is ``x`` where ``c != 0``, comparisons give
1 or 0, ``and``/``or``/``not`` work on non-zero as "yes" (``liftpy.ir.userfun``).  Scalars only: on
vectors these functions work lane by lane, which one condition cannot say.
"""

from __future__ import annotations

from typing import Sequence

from fractions import Fraction

import numpy as np

from .. import arith as A
from .view import CondRead, ConstRead, IndexRead, Read

# The built-ins folded here (``liftpy.ir.userfun.BUILTINS``), by name.
_RELATIONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
FOLDED = frozenset(_RELATIONS) | {"and", "or", "not", "select", "toFloat", "toInt"}


def negate(c):
    """``not c`` for the conditions views build (comparisons, conjunctions, disjunctions, truth values), as
    a condition of the same kinds (De Morgan): C printing has no negation.  None for anything else."""
    return A.negate(c) if isinstance(c, A.Cond) else None


def conjunction(parts: Sequence):
    return A.conj(parts)


def disjunction(parts: Sequence):
    return A.disj(parts)


def choose(c, then, other):
    """``c ? then : other`` for conditions: a condition again, with no branch left that a constant decides
    (None where ``c`` has no negation this module can write)."""
    if then is other or then == other:
        return then
    if c is A.TRUE or c is A.FALSE:
        return then if c is A.TRUE else other
    if then is A.TRUE:
        return disjunction([c, other])
    if other is A.FALSE:
        return conjunction([c, then])
    not_c = negate(c)
    if not_c is None:
        return None
    if then is A.FALSE:
        return conjunction([not_c, other])
    if other is A.TRUE:
        return disjunction([not_c, then])
    return disjunction([conjunction([c, then]), conjunction([not_c, other])])


def truth(r: Read):
    """The condition under which the scalar value ``r`` is non-zero, when positions and constants alone
    decide it (a constant, an index, a padded constant, a folded comparison); None otherwise (a value
    read from memory or computed)."""
    if isinstance(r, ConstRead):
        if r.width != 1 or isinstance(r.value, (tuple, list)):
            return None
        return A.TRUE if r.value != 0 else A.FALSE  # (NaN is non-zero: C's c != 0 is true for it)
    if isinstance(r, IndexRead):
        return A.rel("!=", r.index, 0)
    if isinstance(r, CondRead):
        then = truth(r.then)
        if then is None:
            return None
        other = truth(r.other)
        return None if other is None else choose(r.cond, then, other)
    return None


def _number(r: Read):
    """The value of ``r`` as an exact number or integer index expression, or None: an element index,
    or a scalar constant (a float compared with a float constant is compared exactly as the kernel does,
    both being the same float)."""
    if isinstance(r, IndexRead):
        return A.as_expr(r.index)
    if isinstance(r, ConstRead) and r.width == 1 and isinstance(r.value, (int, float)) and not isinstance(r.value, bool):
        v = r.value
        if isinstance(v, float) and not v == v:  # NaN: every comparison but != is false, which exact numbers cannot say
            return None
        if isinstance(v, float) and r.scalar.name == "float":
            v = float(np.float32(v))  # the kernel compares the float the literal rounds to
        return A.const(int(v) if isinstance(v, int) or float(v).is_integer() else Fraction(v))
    return None


def _indicator(cond, scalar) -> Read:
    """1 where ``cond`` holds and 0 elsewhere, of type ``scalar`` (a comparison's result)."""
    one, zero = (ConstRead(1, scalar), ConstRead(0, scalar)) if scalar.name == "int" else (ConstRead(1.0, scalar), ConstRead(0.0, scalar))
    if cond is A.TRUE or cond is A.FALSE:
        return one if cond is A.TRUE else zero
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
        return None if then is None or other is None else r.with_children((then, other))
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
        if cond is A.TRUE or cond is A.FALSE:
            return x if cond is A.TRUE else y
        return CondRead(cond, x, y)
    if name in ("toFloat", "toInt"):  # (a comparison's 1 or 0 made a float to choose floats with)
        return _converted(args[0], scalar)
    if name in _RELATIONS:
        a, b = (_number(r) for r in args)
        if a is None or b is None:
            return None
        return _indicator(A.rel(_RELATIONS[name], a, b), scalar)
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
