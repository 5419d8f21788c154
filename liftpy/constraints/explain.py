"""Why a space has no valid configuration: a minimal set of conflicting constraints, in words.

The set is a *minimal unsatisfiable subset* found by deletion: start from the constraints of the
unsatisfiable part (a parameter with no candidates, or an independent group with no valid assignment)
and try to drop each constraint in turn; a constraint stays only if the others are satisfiable without
it.  The result cannot hold together, and removing any one of its constraints leaves a satisfiable set.
Each satisfiability test is an early-exit depth-first search (``solver.is_satisfiable``).

Constraints are tried for removal in the order range, algorithmic, hardware, so when several minimal
sets exist the one reported tends to keep the device limits: an impossible request is usually a device
that is too small for the program, and that is what the user should read first.

**Universe.** Deleting a constraint must not leave a parameter without a finite set of candidates,
or satisfiability could not be decided by search.  So the conflict of an independent group is sought
with each of its parameters ranging over a fixed interval: its declared values or bounds when they are
finite, else the hull (smallest to largest candidate) that the whole space derives for it.  The text
lists these ranges: "cannot hold together" means "for no values in these ranges".  Only a conflict among
the constraints of a single parameter that has no declared bounds is sought without a universe; there,
a constraint whose removal unbounds the parameter is kept, and the text says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import ConstraintError
from .plan import plan_space
from .solver import is_satisfiable, unsatisfiable_groups
from .space import Constraint, Parameter, Space

_REMOVAL_ORDER = {"range": 0, "algorithmic": 1, "hardware": 2}


@dataclass(frozen=True)
class Explanation:
    constraints: tuple[Constraint, ...]  # the minimal conflicting set
    parameters: tuple[str, ...]  # the parameters they mention
    text: str
    kept_for_finiteness: tuple[Constraint, ...] = ()  # kept only because dropping them unbounds a parameter

    def __str__(self) -> str:
        return self.text


def explain(space: Space, seed: int = 0) -> Explanation | None:
    """``None`` when ``space`` has a valid configuration, else the smallest set of constraints (by
    deletion) that conflict, with a text naming their origins."""
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
        # A parameter whose own constraints exclude every value: the conflict is among them.
        name = empty[0]
        sub = _subspace(space, [name])
        core, kept = _deletion_mus(sub, list(sub.constraints), seed)
        return _explanation(space, tuple(core), tuple(kept), plan.domains)
    members = set(unsatisfiable_groups(plan)[0].params)
    universe = _universe(space, plan, members)
    core, kept = _deletion_mus(universe, [c for c in universe.constraints], seed)
    return _explanation(space, tuple(core), tuple(kept), plan_space(universe, seed=seed).domains)


def _universe(space: Space, plan, members: set[str]) -> Space:
    """The unsatisfiable group as a space of its own in which every parameter ranges over a fixed finite
    interval: its declared values or bounds when they are finite, else the hull of the candidates the
    whole space derives for it.  Deleting a constraint then never makes a parameter unbounded, so every
    satisfiability question has an exact answer."""
    params = []
    for prm in space.parameters:
        if prm.name not in members:
            continue
        lo = prm.lo if prm.lo is not None else (None if prm.domain is not None else 1)
        if prm.domain is not None or (lo is not None and prm.hi is not None):
            params.append(prm)
            continue
        vals = plan.domains[prm.name].values
        params.append(Parameter(prm.name, lo=min(vals), hi=max(vals), doc=prm.doc))
    return Space(tuple(params), tuple(c for c in space.constraints if c.names and c.names <= members))


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


def _deletion_mus(space: Space, candidates: Sequence[Constraint], seed: int):
    names = list(space.names)
    core = sorted(candidates, key=lambda c: _REMOVAL_ORDER.get(c.kind, 1))
    kept_for_finiteness = []
    for c in list(core):
        trial = [x for x in core if x is not c]
        try:
            sat = is_satisfiable(plan_space(_subspace(space, names, trial), seed=seed))
        except ConstraintError:
            kept_for_finiteness.append(c)
            continue
        if not sat:
            core = trial
    kept = [c for c in kept_for_finiteness if any(c is x for x in core)]
    order = {id(c): i for i, c in enumerate(space.constraints)}
    core.sort(key=lambda c: order.get(id(c), len(order)))
    return core, kept


def _explanation(space: Space, core: tuple[Constraint, ...], kept: tuple[Constraint, ...], domains) -> Explanation:
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
        lines.append("  over the candidate values of the parameters involved:")
        for n in names:
            prm = space.parameter(n)
            doc = f"  ({prm.doc})" if prm.doc else ""
            lines.append(f"    {n} in {domains[n].describe()}{doc}")
    if kept:
        lines.append(
            "  note: " + "; ".join(f"'{c.origin}'" for c in kept)
            + " kept because without it some parameter has no finite set of candidates, so the rest could not be decided"
        )
    return Explanation(core, names, "\n".join(lines), kept)
