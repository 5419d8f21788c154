"""The kernels of a program and the nests of maps inside them: where each kernel's body lies (its path
prefix), which positions belong to it, and how deep its nest of computing maps is (what the work
mappings distribute)."""

from __future__ import annotations

from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Program, primitive_functions
from ..ir.kernels import is_boundary
from .positions import get_at


def over_reduction(e) -> bool:
    """A map over the one-element result of a reduction (a function applied to a sum): it stays sequential,
    never a dimension of work-items of its own (which would launch one work-item per group)."""
    return (isinstance(e, Call) and type(e.fn) is P.Map and isinstance(e.args[0], Call)
            and isinstance(e.args[0].fn, P.ReduceLike))


def computing_maps(program: Program) -> int:
    """Depth of the nest of computing high-level maps (the 'spine' the mapping policies distribute)."""
    depth = 0
    best = 0

    def walk(e, d):
        nonlocal best
        if isinstance(e, Call):
            here = type(e.fn) is P.Map and not is_view(e.fn.f.body) and not over_reduction(e)
            nd = d + 1 if here else d
            best = max(best, nd)
            if isinstance(e.fn, P.Primitive) and not isinstance(e.fn, P.ReduceLike):
                for _, lam in primitive_functions(e.fn):
                    walk(lam.body, nd)
            elif hasattr(e.fn, "body"):
                walk(e.fn.body, nd)
            for a in e.args:
                walk(a, d)

    walk(program.body, depth)
    return best


def kernel_regions(program: Program) -> list[tuple]:
    """Path prefixes of the kernels of a program: each ``toGlobal`` value of a kernel boundary, and the
    final body."""
    out, path, e = [], (), program.body
    while is_boundary(e):
        out.append(path + (("arg", 0), ("arg", 0)))
        path += (("fn", "f"),)
        e = e.fn.f.body
    out.append(path)
    return out


def within(prefix: tuple, regions: list[tuple]):
    """Positions inside the kernel at ``prefix`` (and not inside a later kernel nested below it)."""
    others = [r for r in regions if r != prefix and r[: len(prefix)] == prefix]

    def where(path, e) -> bool:
        return path[: len(prefix)] == prefix and not any(path[: len(o)] == o for o in others)

    return where


def kernel_depth(program: Program, prefix: tuple) -> int:
    e = get_at(program.body, prefix)
    if is_boundary(e):
        return 0
    return computing_maps(Program(program.name, program.params, program.param_types, e))

