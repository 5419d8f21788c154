"""Index expressions and conditions as OpenCL C, and as readable text.

The text is the one the sympy-based printer wrote, byte for byte: a sum with a constant is printed as
its other terms, then the constant (so the copies of an unrolled index share the text of the rest); a
sum without one in sympy's ``default_sort_key`` order of its terms; a term as its factors in
canonical order, then the magnitude of its coefficient (``wg * 8``); C's ``/`` and ``%`` for the
quotients and remainders the simplifier proved non-negative, helpers for the floor division and
modulus of a dividend of unknown sign.  The text of a node is computed once (kept in the node: nodes are
hash-consed, so equal nodes share it).
"""

from __future__ import annotations

from functools import reduce

from . import expr as E
from .order import sort_key

C_HELPERS = (
    "int floordiv_(int a, int d) { return (a >= 0 ? a : a - d + 1) / d; }\n"
    "int floormod_(int a, int d) { int r = a % d; return r < 0 ? r + d : r; }\n"
)

def to_c(e) -> str:
    """``e`` as OpenCL C.  Raises ``ArithError`` for what C integers cannot say (a rational)."""
    e = E.as_expr(e)
    hit = e._text
    if hit is None:
        hit = e._text = _to_c(e)
    return hit


def _to_c(e: E.Expr) -> str:
    if isinstance(e, E.Truth):
        return "true" if e.value else "false"
    if e.is_const:
        if not e.is_int:
            raise E.ArithError(f"cannot print the rational {e.value} as integer C")
        return str(e.value)
    if e.is_var:
        return e.name
    if e.is_add:
        rest, c = E.without_constant(e)
        if c and isinstance(c, int):
            return (to_c(rest) if rest.is_add else _term(rest, True)) + _term(E.const(c), False)
        terms = sorted(e.args, key=lambda t: (t.is_const and t.is_int, sort_key(t)))
        return _term(terms[0], True) + "".join(_term(t, False) for t in terms[1:])
    if e.is_mul:
        return _term(e, True)
    if e.is_pow:  # C has no power operator
        return " * ".join([_factor(e.args[0])] * e.args[1].value)
    if isinstance(e, E.CDiv):
        return f"{_operand(e.args[0])} / {e.args[1].value}"
    if isinstance(e, E.CMod):
        return f"{_operand(e.args[0])} % {e.args[1].value}"
    if isinstance(e, E.CLoad):
        return f"{e.args[0].name}[{to_c(e.args[1])}]"
    if isinstance(e, E.FloorDiv):
        return f"floordiv_({to_c(e.args[0])}, {e.args[1].value})"
    if isinstance(e, E.Mod):
        return f"floormod_({to_c(e.args[0])}, {e.args[1].value})"
    if isinstance(e, (E.Max, E.Min)):
        f = "max" if isinstance(e, E.Max) else "min"
        return reduce(lambda a, b: f"{f}({a}, {b})", [to_c(a) for a in e.args])
    if isinstance(e, E.Rel):
        return f"{to_c(e.lhs)} {e.op} {to_c(e.rhs)}"
    if isinstance(e, E.And):
        return " && ".join(f"({to_c(a)})" for a in e.args)
    if isinstance(e, E.Or):
        return " || ".join(f"({to_c(a)})" for a in e.args)
    raise E.ArithError(f"cannot print {type(e).__name__} as C")


def _operand(e: E.Expr) -> str:
    """An operand of ``/`` or ``%``: parenthesized unless it is a name or a non-negative number."""
    s = to_c(e)
    return s if e.is_var or (e.is_const and e.value >= 0) else f"({s})"


def _term(t: E.Expr, first: bool) -> str:
    c, rest = E.coeff_and_rest(t)
    if t.is_const:
        v = int(t)  # (a rational raises)
        return str(v) if first else (f" + {v}" if v >= 0 else f" - {-v}")
    if not isinstance(c, int):
        raise E.ArithError(f"cannot print the rational coefficient {c} as integer C")
    body = " * ".join(_factor(f) for f in E.factors_of(rest))
    text = body if abs(c) == 1 else f"{body} * {abs(c)}"
    if first:
        return text if c > 0 else f"-{text}"
    return f" + {text}" if c > 0 else f" - {text}"


def _factor(f: E.Expr) -> str:
    s = to_c(f)
    if f.is_add or f.is_pow or isinstance(f, (E.FloorDiv, E.Mod, E.CDiv, E.CMod)):
        return f"({s})"
    return s


def show(e: E.Expr) -> str:
    """Readable text of an expression (``repr``): its C form where it has one."""
    try:
        return to_c(e)
    except E.ArithError:
        if e.is_const:
            return str(e.value)
        return f"{type(e).__name__}({', '.join(map(show, e.args))})"
