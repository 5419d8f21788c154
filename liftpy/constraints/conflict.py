"""Why a space has no valid configuration: a minimal set of conflicting constraints, in words.

Two kinds of conflict:

* **a parameter without candidates**: the constraints on that parameter alone exclude every value
  (``112 % s == 0`` and ``s in {3, 5}``); the conflict is sought among them;
* **an independent group without a valid assignment**: every parameter has candidates, but the
  constraints linking parameters cannot hold together.  The conflict is sought among those linking
  constraints, with each parameter ranging over its candidates (which its own constraints determine;
  the text lists the candidates and the constraints they come from).  Fixing the candidates keeps every
  question finite, so each has an exact answer.

The set reported is a *minimal unsatisfiable subset*, found with QuickXplain (Junker, AAAI 2004): it
cannot hold, and removing any one of its constraints leaves a satisfiable set.  QuickXplain mostly asks
about small subsets; each question is answered by checking the subset's constraints one at a time
(a single constraint that can never hold settles it at once) and then by the early-exit search of
``solver.is_satisfiable``.  A question that search cannot settle within ``MAX_SEARCH_NODES`` counts as
satisfiable, which keeps the reported set a proven conflict; its minimality is then not proven, and
the text says which constraints this concerns.

When several minimal sets exist, hardware constraints are preferred over algorithmic ones and those over
range ones: an impossible request is usually a device too small for the program, and that is what the
user should read first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import ConstraintError
from .domains import Domain
from .plan import plan_space
from .solver import is_satisfiable, unsatisfiable_groups
from .space import Constraint, Parameter, Space

MAX_SEARCH_NODES = 200_000
_PREFERENCE = {"range": 0, "algorithmic": 1, "hardware": 2}


@dataclass(frozen=True)
class Explanation:
    constraints: tuple[Constraint, ...]  # the minimal conflicting set
    parameters: tuple[str, ...]  # the parameters they mention
    text: str
    unproven_minimal: tuple[Constraint, ...] = ()  # kept because a question about them was undecided

    def __str__(self) -> str:
        return self.text


def explain(space: Space, seed: int = 0) -> Explanation | None:
    """``None`` when ``space`` has a valid configuration, else a minimal set of constraints that
    conflict, with a text naming their origins."""
    plan = plan_space(space, seed=seed)
    if is_satisfiable(plan):
        return None
    if plan.false_constraints:
        return _explanation(space, (plan.false_constraints[0],), (), plan.domains)
    for prm in space.parameters:
        declared = _declared_empty(prm)
        if declared:
            return Explanation((), (prm.name,), f"No valid configuration: parameter {prm.name} {declared}.")
    empty = [n for n in space.names if len(plan.domains[n]) == 0]
    if empty:
        sub = _subspace(space, [empty[0]])
        core, undecided = _minimal_conflict(sub, list(sub.constraints), seed)
        return _explanation(space, tuple(core), tuple(undecided), plan.domains)
    members = unsatisfiable_groups(plan)[0].params
    universe = Space(
        tuple(Parameter(n, domain=tuple(plan.domains[n].values), doc=space.parameter(n).doc) for n in members),
        tuple(c for c in space.constraints if len(c.names) > 1 and c.names <= set(members)),
    )
    core, undecided = _minimal_conflict(universe, list(universe.constraints), seed)
    return _explanation(space, tuple(core), tuple(undecided), plan.domains)


def _declared_empty(prm: Parameter) -> str | None:
    if prm.domain is not None and len(prm.domain) == 0:
        return "is declared with an empty domain"
    lo = prm.lo if prm.lo is not None else (None if prm.domain is not None else 1)
    if lo is not None and prm.hi is not None and lo > prm.hi:
        return f"is declared with lo = {lo} > hi = {prm.hi}"
    if prm.domain is not None and lo is not None and prm.hi is not None and not any(lo <= v <= prm.hi for v in prm.domain):
        return f"has no declared value between lo = {lo} and hi = {prm.hi}"
    return None


def _subspace(space: Space, names: Sequence[str], constraints: Sequence[Constraint] | None = None) -> Space:
    keep = set(names)
    cons = space.constraints if constraints is None else constraints
    return Space(
        tuple(p for p in space.parameters if p.name in keep),
        tuple(c for c in cons if c.names and c.names <= keep),
    )


def _minimal_conflict(space: Space, candidates: Sequence[Constraint], seed: int):
    """QuickXplain over ``candidates`` (which conflict as a whole): a minimal conflicting subset, and the
    constraints whose necessity rests on an undecided question."""
    names = list(space.names)
    ordered = sorted(candidates, key=lambda c: -_PREFERENCE.get(c.kind, 1))
    undecided: set[int] = set()
    memo: dict[frozenset, bool] = {}

    def satisfiable(cs: Sequence[Constraint]) -> bool | None:
        try:
            return is_satisfiable(plan_space(_subspace(space, names, cs), seed=seed), MAX_SEARCH_NODES)
        except ConstraintError:
            return None  # a parameter has no finite candidates without the other constraints

    def consistent(cs: Sequence[Constraint]) -> bool:
        key = frozenset(id(c) for c in cs)
        if key in memo:
            return memo[key]
        # A single constraint that can never hold settles a larger question at once, and cheaply.
        if len(cs) > 1 and any(not consistent([c]) for c in cs):
            result: bool | None = False
        else:
            result = satisfiable(cs)
        if result is None:
            # Undecided: treat as satisfiable, so only proven conflicts shrink the set.
            undecided.update(id(c) for c in ordered if all(c is not x for x in cs))
            result = True
        memo[key] = result
        return result

    def qx(background: list, delta: list, cs: list) -> list:
        if delta and not consistent(background):
            return []
        if len(cs) == 1:
            return list(cs)
        half = len(cs) // 2
        c1, c2 = cs[:half], cs[half:]
        d2 = qx(background + c1, c1, c2)
        d1 = qx(background + d2, d2, c1)
        return d1 + d2

    core = qx([], [], ordered) if ordered else []
    order = {id(c): i for i, c in enumerate(space.constraints)}
    core.sort(key=lambda c: order.get(id(c), len(order)))
    return core, [c for c in core if id(c) in undecided]


def _explanation(space: Space, core: tuple[Constraint, ...], undecided: tuple[Constraint, ...], domains: Mapping[str, Domain]) -> Explanation:
    names = tuple(n for n in space.names if any(n in c.names for c in core))
    lines = []
    if len(core) == 1:
        lines.append("No valid configuration: this constraint can never hold.")
    else:
        lines.append(
            f"No valid configuration: these {len(core)} constraints cannot hold together "
            "(removing any one of them leaves a satisfiable set):"
        )
    for i, c in enumerate(core, 1):
        lines.append(f"  {i}. [{c.kind}, {c.primitive}] {c.origin}")
        cond = "always false (decided when the sizes were substituted)" if not c.names else str(c.predicate)
        lines.append(f"       condition: {cond}")
    if names:
        multi = any(len(c.names) > 1 for c in core)
        lines.append("  for these candidate values:" if multi else "  parameter declared as:")
        for n in names:
            prm = space.parameter(n)
            doc = f"  ({prm.doc})" if prm.doc else ""
            lines.append(f"    {n} in {domains[n].describe() if multi else _declared(prm)}{doc}")
            if multi:
                own = [c for c in space.constraints if c.names == {n}]
                for c in own:
                    lines.append(f"        from: {c.origin}")
    if undecided:
        lines.append(
            "  note: minimality not proven for "
            + "; ".join(f"'{c.origin}'" for c in undecided)
            + " (a smaller subset was too large to decide by search)"
        )
    return Explanation(core, names, "\n".join(lines), undecided)


def _declared(prm: Parameter) -> str:
    if prm.domain is not None:
        return "{" + ", ".join(map(str, prm.domain[:12])) + (", ..." if len(prm.domain) > 12 else "") + "}"
    lo = prm.lo if prm.lo is not None else 1
    return f"{lo}..{prm.hi}" if prm.hi is not None else f"integers >= {lo}"
