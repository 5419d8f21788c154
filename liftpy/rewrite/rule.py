"""Rules as data, and the engine that finds and applies them.

A rule has a name, the equation it implements (for traces and documentation), a kind (algorithmic,
lowering, memory, placement) and a function that, given the sub-expression at a position and its site,
returns the replacement or None when the rule does not apply there.  A rule may introduce fresh tuning
parameters (a split factor, a tile size, a vector width) through its context; the requirements those
parameters must meet come from the types of the primitives the rule builds (``split(n)`` needs
``len % n == 0``), plus any extra condition the rule states itself.

``applications(program, rules)`` lists every (rule, position) that applies; ``apply(program, rule,
path)`` performs one rewrite, re-checks the whole program's types, and checks that the rewritten
sub-expression has the type of the original (so a rewrite never changes what a program computes, only
how).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import sympy

from ..errors import LiftTypeError, RewriteError
from ..ir import primitives as P
from ..ir.analysis import size_symbols
from ..ir.expr import Call, Expr, Program, subterms
from ..ir.typecheck import typecheck
from ..ir.types import ArrayType, TupleType, Type, VectorType, size_var, types_equal
from .positions import Path, Site, get_at, path_text, positions, replace_at, site_at


@dataclass(frozen=True)
class Rule:
    name: str
    equation: str
    kind: str  # 'algorithmic', 'lowering', 'memory' or 'placement'
    fn: Callable = field(compare=False)

    def __repr__(self) -> str:
        return f"<Rule {self.name}: {self.equation}>"


@dataclass(frozen=True)
class TraceStep:
    rule: str
    where: str  # readable position
    params: tuple[str, ...] = ()

    def __str__(self) -> str:
        extra = f" (new parameters: {', '.join(self.params)})" if self.params else ""
        return f"{self.rule} at {self.where}{extra}"


@dataclass(frozen=True)
class Requirement:
    """A condition a rule adds on its parameters beyond what the types require."""

    predicate: sympy.Basic
    message: str
    rule: str


class RuleContext:
    """Handed to a rule when it builds its replacement: fresh parameters and extra requirements."""

    def __init__(self, program: Program, rule: Rule):
        self.rule = rule
        self.program = program
        self._taken: set[str] | None = None
        self.new_params: list[sympy.Symbol] = []
        self.requirements: list[Requirement] = []
        self.lower_bounds: dict[str, int] = {}

    @property
    def taken(self) -> set[str]:
        if self._taken is None:
            self._taken = program_symbols(self.program)
        return self._taken

    def fresh(self, hint: str, lo: int = 1) -> sympy.Symbol:
        """A new tuning parameter; ``lo`` is its smallest value (1 unless the rule allows 0)."""
        k = 0
        while f"{hint}{k}" in self.taken:
            k += 1
        name = f"{hint}{k}"
        self.taken.add(name)
        sym = size_var(name)
        self.new_params.append(sym)
        if lo != 1:
            self.lower_bounds[name] = lo
        return sym

    def require(self, predicate, message: str) -> None:
        self.requirements.append(Requirement(sympy.sympify(predicate), message, self.rule.name))


def program_symbols(program: Program) -> set[str]:
    """Names of every size variable and tuning parameter a program mentions."""
    return size_symbols(program)


@dataclass(frozen=True)
class Rewritten:
    program: Program
    step: TraceStep
    params: tuple[sympy.Symbol, ...]
    requirements: tuple[Requirement, ...]
    lower_bounds: tuple[tuple[str, int], ...] = ()


def try_rule(program: Program, rule: Rule, path: Path) -> Rewritten | None:
    """Apply ``rule`` at ``path`` if it applies and the result is well typed; otherwise None."""
    target = get_at(program.body, path)
    site = site_at(program, path)
    ctx = RuleContext(program, rule)
    replacement = rule.fn(target, site, ctx)
    if replacement is None or replacement == target:
        return None
    try:
        old_t = site.type_of(target)
        new_t = site.type_of(replacement)
        same = types_equal(old_t, new_t)
        if same is False:
            raise RewriteError(
                f"rule {rule.name} changed the type at {path_text(program, path)} from {old_t} to {new_t}"
            )
        if same is None:
            ctx.require(_type_equality(old_t, new_t), f"{rule.name} keeps the type {old_t}")
        new_program = program.with_body(replace_at(program.body, path, replacement))
        if same is not True:
            typecheck(new_program)
    except LiftTypeError:
        return None
    step = TraceStep(rule.name, path_text(program, path), tuple(str(p) for p in ctx.new_params))
    return Rewritten(new_program, step, tuple(ctx.new_params), tuple(ctx.requirements), tuple(ctx.lower_bounds.items()))


def _type_equality(a: Type, b: Type) -> sympy.Basic:
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return sympy.And(sympy.Eq(a.size, b.size), _type_equality(a.elem, b.elem))
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return sympy.And(*[_type_equality(x, y) for x, y in zip(a.elems, b.elems)])
    if isinstance(a, VectorType) and isinstance(b, VectorType):
        return sympy.Eq(a.width, b.width)
    return sympy.true


def applications(program: Program, rules: list[Rule], where: Callable[[Path, Expr], bool] | None = None) -> list[tuple[Rule, Path, Rewritten]]:
    """Every (rule, position) where a rule applies, with the result of applying it."""
    out = []
    for path, e in positions(program.body):
        if where is not None and not where(path, e):
            continue
        for rule in rules:
            r = try_rule(program, rule, path)
            if r is not None:
                out.append((rule, path, r))
    return out


def apply(program: Program, rule: Rule, path: Path) -> Rewritten:
    """Apply a rule at a position, raising RewriteError when it does not apply there."""
    r = try_rule(program, rule, path)
    if r is None:
        raise RewriteError(f"rule {rule.name} ({rule.equation}) does not apply at {path_text(program, path)}")
    return r


_RULE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def rule(name: str, equation: str, kind: str = "algorithmic"):
    """Decorator: ``@rule("mapFusion", "map(f, map(g, x)) => map(f . g, x)")`` over ``fn(e, site, ctx)``."""
    if not _RULE_NAME.fullmatch(name):
        raise ValueError(f"rule name {name!r} must be an identifier")

    def wrap(fn):
        return Rule(name, equation, kind, fn)

    return wrap
