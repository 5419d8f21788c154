"""Positions in an expression and the typing context at each of them.

A position is a path of steps from the root: ``("arg", i)`` enters the i-th data argument of a call,
``("fn", field)`` enters the body of the lambda stored in a primitive's field (``"f"`` for maps and
reductions), ``("callee",)`` the body of a lambda that is called directly.  Rules see the sub-expression at
a position together with its *site*: the types of the variables in scope there and the primitives that
enclose it (lowering rules use these to respect nesting: no ``mapLcl`` outside a ``mapWrg``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator

from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Program, primitive_functions, replace_functions
from ..ir.typecheck import type_of
from ..ir.types import Type

Step = tuple
Path = tuple


def children(e: Expr) -> Iterator[tuple[Step, Expr]]:
    if isinstance(e, Call):
        if isinstance(e.fn, Lambda):
            yield ("callee",), e.fn.body
        elif isinstance(e.fn, P.Primitive):
            for name, lam in primitive_functions(e.fn):
                yield ("fn", name), lam.body
        for i, a in enumerate(e.args):
            yield ("arg", i), a


def positions(e: Expr, path: Path = ()) -> Iterator[tuple[Path, Expr]]:
    """Every sub-expression with its path, parents before children."""
    yield path, e
    for step, child in children(e):
        yield from positions(child, path + (step,))


def loop_positions(e: Expr, name: str | None = None) -> Iterator[tuple[Expr, bool]]:
    """Every sub-expression, parents first, with whether it lies inside a loop's function (the function of any
    primitive but a ``let``: what is computed there is computed at every iteration); with ``name``, nothing
    below a lambda that binds ``name`` again."""
    stack = [(e, False)]
    while stack:
        node, loop = stack.pop()
        yield node, loop
        if not isinstance(node, Call):
            continue
        if isinstance(node.fn, Lambda):
            bodies = [(node.fn, loop)]
        elif isinstance(node.fn, P.Primitive):
            bodies = [(lam, loop or not isinstance(node.fn, P.Let)) for _, lam in primitive_functions(node.fn)]
        else:
            bodies = []
        kids = [(lam.body, inner) for lam, inner in bodies if name is None or name not in {q.name for q in lam.params}]
        stack.extend(reversed(kids + [(a, loop) for a in node.args]))


def get_at(e: Expr, path: Path) -> Expr:
    for step in path:
        e = _child(e, step)
    return e


def _child(e: Expr, step: Step) -> Expr:
    if not isinstance(e, Call):
        raise KeyError(f"no position {step} below a {type(e).__name__}")
    if step[0] == "arg":
        return e.args[step[1]]
    if step[0] == "fn":
        return getattr(e.fn, step[1]).body
    if step[0] == "callee":
        return e.fn.body
    raise KeyError(step)


def replace_at(e: Expr, path: Path, new: Expr) -> Expr:
    if not path:
        return new
    step, rest = path[0], path[1:]
    child = _child(e, step)
    replaced = replace_at(child, rest, new)
    if step[0] == "arg":
        args = list(e.args)
        args[step[1]] = replaced
        return Call(e.fn, tuple(args))
    if step[0] == "fn":
        lam = getattr(e.fn, step[1])
        return Call(replace_functions(e.fn, {step[1]: Lambda(lam.params, replaced)}), e.args)
    if step[0] == "callee":
        return Call(Lambda(e.fn.params, replaced), e.args)
    raise KeyError(step)


class Site:
    """What a rule may know about where it is applied: computed on first use, because most rules reject
    most positions by their shape alone and typing the path costs sympy work."""

    def __init__(self, program: Program, path: Path):
        self.program = program
        self.path = path
        self._done = False

    def _compute(self) -> None:
        if self._done:
            return
        program = self.program
        env = {p.name: t for p, t in zip(program.params, program.param_types)}
        enclosing = []
        bound: list[str] = []
        e = program.body
        for step in self.path:
            if step[0] in ("fn", "callee"):
                arg_types = [type_of(a, {n: env[n] for n in a.free_vars if n in env}) for a in e.args]
                if step[0] == "fn":
                    lam = getattr(e.fn, step[1])
                    types = e.fn.fun_param_types(step[1], arg_types)
                else:
                    lam, types = e.fn, arg_types
                enclosing.append(e.fn)
                env = dict(env)
                for p, t in zip(lam.params, types):
                    env[p.name] = t
                    bound.append(p.name)
            e = _child(e, step)
        self._env, self._enclosing, self._bound = env, tuple(enclosing), tuple(bound)
        self._done = True

    @property
    def env(self) -> dict:
        """Variable name -> type, for the variables in scope."""
        self._compute()
        return self._env

    @property
    def enclosing(self) -> tuple:
        """The primitives (or lambdas) whose functions contain the position, outermost first."""
        if not self._done:
            # Cheap: no typing needed to know the enclosing primitives.
            out, e = [], self.program.body
            for step in self.path:
                if step[0] in ("fn", "callee"):
                    out.append(e.fn)
                e = _child(e, step)
            return tuple(out)
        return self._enclosing

    @property
    def bound(self) -> tuple:
        """Names bound by lambdas around the position (program inputs excluded), outermost first."""
        self._compute()
        return self._bound

    @property
    def write_position(self) -> bool:
        """True if the value computed here is stored directly (into the output or a marked memory),
        rather than read by an enclosing computation: only such values may be computed by parallel
        maps, whose results are spread over work-items.  A reduction's initial value and step are
        stored into its accumulator, whatever reads the reduction's result."""
        e = self.program.body
        ok = True
        for step in self.path:
            fn = e.fn if isinstance(e, Call) else None
            if isinstance(fn, P.Fold) and (step[0] == "fn" or step == ("arg", 0)):
                ok = True  # the accumulator is the memory written
            elif step[0] == "fn" and isinstance(fn, (P.MapLike, P.Let)):
                pass
            elif step[0] == "arg" and isinstance(fn, P.Let) and isinstance(e.args[0], Call) and isinstance(e.args[0].fn, P.ToGlobal):
                pass  # the value of a kernel boundary is written by a kernel of its own
            elif step[0] == "callee":
                pass
            elif step[0] == "arg" and isinstance(fn, P.ToMem):
                ok = True  # stored into the memory the marker names, whatever reads it then
            elif step[0] == "arg" and isinstance(fn, P.Primitive) and fn.writes_through:
                pass
            elif step[0] == "arg" and type(fn) is P.Map and _is_layout_lambda(fn.f):
                pass
            else:
                ok = False
            e = _child(e, step)
        return ok

    def type_of(self, e: Expr) -> Type:
        env = self.env
        return type_of(e, {n: env[n] for n in e.free_vars if n in env})

    def inside(self, *classes) -> bool:
        return any(isinstance(p, classes) for p in self.enclosing)


def _is_layout_lambda(lam) -> bool:
    return is_view(lam.body)


def site_at(program: Program, path: Path) -> Site:
    return Site(program, path)


def path_text(program: Program, path: Path) -> str:
    """A readable description of a position: the primitives on the way down."""
    parts = []
    e = program.body
    for step in path:
        if isinstance(e, Call):
            name = e.fn.text_name if isinstance(e.fn, P.Primitive) else getattr(e.fn, "text_name", "fun")
            parts.append(f"{name}.{step[1] if step[0] in ('fn', 'arg') else 'body'}")
        e = _child(e, step)
    here = e.fn.text_name if isinstance(e, Call) and hasattr(e.fn, "text_name") else type(e).__name__.lower()
    return "/".join(parts + [here]) if parts else here
