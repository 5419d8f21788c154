"""Symbolic resource use of a lowered program: NDRange extents, local and private memory.

The hardware constraints of a parametric program come from what it would launch and allocate, as
expressions over its tuning parameters: the work-items per group in each dimension (the longest
``mapLcl`` in that dimension), the number of groups, the local memory of its ``toLocal`` values, the
private memory a work-item keeps (accumulators, ``toPrivate`` values: an estimate of its registers).
This mirrors where the emitter allocates (``liftpy.codegen.emit``) without generating code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Program, Var, primitive_functions
from ..ir.typecheck import type_of
from ..ir.types import ArrayType, Type, contains_tuple, flat_count, scalar_of


@dataclass
class Resources:
    extents: dict = field(default_factory=dict)  # (kind, dim) -> list of lengths
    local_bytes: list = field(default_factory=list)  # (bytes expr, description)
    private_bytes: list = field(default_factory=list)

    def extent(self, kind: str, dim: int) -> sympy.Expr | None:
        lengths = self.extents.get((kind, dim))
        if not lengths:
            return None
        return sympy.Max(*lengths) if len(lengths) > 1 else lengths[0]


def _bytes(t: Type) -> sympy.Expr:
    if contains_tuple(t):
        return sympy.Integer(0)
    return flat_count(t) * scalar_of(t).nbytes


def _per_item(value: Expr, t: Type) -> Type:
    """The part of a private value one work-item keeps: a value computed by a ``mapLcl`` nest at
    work-group level (the accumulators of a tiled reduction) is spread over the work-items, each holding
    the elements its local ids select (the emitter's privatization pass shrinks it so)."""
    e = value
    while isinstance(e, Call) and isinstance(e.fn, P.MapLcl) and isinstance(t, ArrayType):
        t = t.elem
        e = e.fn.f.body
    return t


def analyze(program: Program) -> Resources:
    res = Resources()
    env = {p.name: t for p, t in zip(program.params, program.param_types)}
    _walk(program.body, env, res)
    return res


def _types(e: Expr, env) -> Type:
    return type_of(e, {n: env[n] for n in e.free_vars if n in env})


def _walk(e: Expr, env: dict, res: Resources) -> None:
    if not isinstance(e, Call):
        return
    fn = e.fn
    for a in e.args:
        _walk(a, env, res)
    if isinstance(fn, Lambda):
        inner = dict(env)
        for p, a in zip(fn.params, e.args):
            inner[p.name] = _types(a, env)
        _walk(fn.body, inner, res)
        return
    if not isinstance(fn, P.Primitive):
        return
    arg_types = None
    for name, lam in primitive_functions(fn):
        if arg_types is None:
            arg_types = [_types(a, env) for a in e.args]
        inner = dict(env)
        for p, t in zip(lam.params, fn.fun_param_types(name, arg_types)):
            inner[p.name] = t
        _walk(lam.body, inner, res)
    if isinstance(fn, (P.MapGlb, P.MapWrg, P.MapLcl)):
        kind = {P.MapGlb: "glb", P.MapWrg: "wrg", P.MapLcl: "lcl"}[type(fn)]
        length = _types(e.args[0], env).size
        res.extents.setdefault((kind, fn.dim), [])
        if length not in res.extents[(kind, fn.dim)]:
            res.extents[(kind, fn.dim)].append(length)
    elif isinstance(fn, P.ToMem) and fn.space in ("local", "private"):
        t = _types(e, env)
        target = res.local_bytes if fn.space == "local" else res.private_bytes
        if fn.space == "private":
            t = _per_item(e.args[0], t)
        target.append((_bytes(t), f"{fn.text_name} of {t}"))
    elif isinstance(fn, P.ReduceSeq):
        init = e.args[0]
        if not (isinstance(init, Call) and isinstance(init.fn, P.ToMem)):
            t = _types(init, env)
            res.private_bytes.append((_bytes(t), f"accumulator of type {t}"))
