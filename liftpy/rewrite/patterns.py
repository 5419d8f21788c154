"""Recognizers for the shapes rules match: the 2D helpers (which are macros over 1D primitives, so they
appear expanded in programs) and reductions whose function is a sum."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import primitives as P
from ..ir.expr import Call, Expr, Lambda, Literal, Var
from ..ir.types import Int, Type
from ..ir.userfun import BUILTINS, UserFun


def is_call(e, cls) -> bool:
    return isinstance(e, Call) and isinstance(e.fn, cls)


def eta_userfun(lam: Lambda) -> UserFun | None:
    """The user function a lambda only forwards its parameters to, if any."""
    b = lam.body
    if isinstance(b, Call) and isinstance(b.fn, UserFun) and len(b.args) == len(lam.params):
        if all(isinstance(a, Var) and a.name == p.name for a, p in zip(b.args, lam.params)):
            return b.fn
    return None


def eta_primitive(lam: Lambda, cls) -> bool:
    b = lam.body
    return (
        len(lam.params) == 1
        and isinstance(b, Call)
        and isinstance(b.fn, cls)
        and len(b.args) == 1
        and isinstance(b.args[0], Var)
        and b.args[0].name == lam.params[0].name
    )


@dataclass(frozen=True)
class Map2D:
    f: Lambda
    xs: Expr


def match_map2D(e: Expr) -> Map2D | None:
    """``map(fun(r) => map(f, r), xs)``."""
    if not (isinstance(e, Call) and type(e.fn) is P.Map):
        return None
    (r,) = e.fn.f.params
    body = e.fn.f.body
    if isinstance(body, Call) and type(body.fn) is P.Map and body.args == (r,) and r.name not in body.fn.f.free_vars:
        return Map2D(body.fn.f, e.args[0])
    return None


@dataclass(frozen=True)
class Slide2D:
    size1: object
    size2: object
    step1: object
    step2: object
    strict: bool
    xs: Expr


def match_slide2D(e: Expr) -> Slide2D | None:
    """``map(transpose, slide(n1, s1, map(fun(row) => slide(n2, s2, row), xs)))``."""
    if not (isinstance(e, Call) and type(e.fn) is P.Map and eta_primitive(e.fn.f, P.Transpose)):
        return None
    outer = e.args[0]
    if not is_call(outer, P.Slide):
        return None
    inner = outer.args[0]
    if not (isinstance(inner, Call) and type(inner.fn) is P.Map):
        return None
    lam = inner.fn.f
    b = lam.body
    if not (is_call(b, P.Slide) and b.args == (lam.params[0],) and b.fn.strict == outer.fn.strict):
        return None
    return Slide2D(outer.fn.size, b.fn.size, outer.fn.step, b.fn.step, outer.fn.strict, inner.args[0])


@dataclass(frozen=True)
class SumForm:
    """A reduction function ``fun(acc, x) => acc (+) h(x)`` for an associative and commutative ``(+)`` with
    an identity (``add``, ``max``, ``min``): partial results may be computed separately, in any grouping
    and order, and combined with ``op``."""

    op: UserFun

    def identity(self, t: Type) -> Literal:
        """The value that changes nothing: 0 for a sum, the lowest value for a maximum."""
        if self.op.name == "add":
            return Literal(0 if t == Int else 0.0, t)
        lowest, highest = (-(2**31), 2**31 - 1) if t == Int else (float("-inf"), float("inf"))
        return Literal(lowest if self.op.name == "max" else highest, t)


# the user function a reduction's step applies, with the operation that combines its partial results
_COMBINES = {"add": ("add", 2), "multAndSumUp": ("add", 3), "max": ("max", 2), "min": ("min", 2)}


def sum_form(lam: Lambda) -> SumForm | None:
    if len(lam.params) != 2:
        return None
    acc, _ = lam.params
    b = lam.body
    if not (isinstance(b, Call) and isinstance(b.fn, UserFun)) or b.fn.base is not None:
        return None
    combine = _COMBINES.get(b.fn.name)
    if combine is None or len(b.args) != combine[1]:
        return None
    first, rest = b.args[0], b.args[1:]
    if not (isinstance(first, Var) and first.name == acc.name):
        return None
    if any(acc.name in a.free_vars for a in rest):
        return None
    return SumForm(BUILTINS[combine[0]])


ADD = BUILTINS["add"]
ID = BUILTINS["id"]
DOT = BUILTINS["dot"]
