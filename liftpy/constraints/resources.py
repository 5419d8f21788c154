"""Symbolic resource use of a lowered program: NDRange extents, local and private memory.

The hardware constraints of a parametric program come from what it would launch and allocate, as
expressions over its tuning parameters: the work-items per group in each dimension (the longest
``mapLcl`` in that dimension), the number of groups, the local memory of its ``toLocal`` values and local
accumulators, the private memory a work-item keeps (accumulators, ``toPrivate`` values, the temporaries of
sequential maps read as inputs: an estimate of its registers).  The memory is not estimated here: it is
what ``liftpy.codegen.allocation`` says the emitter allocates, the description the emitter itself follows,
so the two cannot disagree.  The extents are read off the maps directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from ..codegen.allocation import allocations
from ..ir import primitives as P
from ..ir.expr import Call, Expr, Lambda, Program, primitive_functions
from ..ir.levels import Level
from ..ir.typecheck import type_of
from ..ir.types import Type


@dataclass
class Resources:
    extents: dict = field(default_factory=dict)  # (Level, dim) -> list of lengths
    local_bytes: list = field(default_factory=list)  # (bytes expr, description), of the work-group
    private_bytes: list = field(default_factory=list)  # (bytes expr, description), of one work-item

    def extent(self, level: Level, dim: int) -> sympy.Expr | None:
        lengths = self.extents.get((level, dim))
        if not lengths:
            return None
        return sympy.Max(*lengths) if len(lengths) > 1 else lengths[0]


def analyze(program: Program) -> Resources:
    res = Resources()
    env = {p.name: t for p, t in zip(program.params, program.param_types)}
    _extents(program.body, env, res)
    for a in allocations(program):
        if a.space == "local":
            res.local_bytes.append((a.bytes, a.describe()))
        else:
            res.private_bytes.append((a.item_bytes, a.describe()))
    return res


def _types(e: Expr, env) -> Type:
    return type_of(e, {n: env[n] for n in e.free_vars if n in env})


def _extents(e: Expr, env: dict, res: Resources) -> None:
    """The lengths of the parallel maps, by level and dimension, into ``res.extents``."""
    if not isinstance(e, Call):
        return
    fn = e.fn
    for a in e.args:
        _extents(a, env, res)
    if isinstance(fn, Lambda):
        inner = dict(env)
        for p, a in zip(fn.params, e.args):
            inner[p.name] = _types(a, env)
        _extents(fn.body, inner, res)
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
        _extents(lam.body, inner, res)
    if P.is_parallel_map(fn):
        length = _types(e.args[0], env).size
        lengths = res.extents.setdefault((fn.level, fn.dim), [])
        if length not in lengths:
            lengths.append(length)
