"""A space compiled for search: candidate sets, groups, binding order, and one compiled level per parameter.

Level ``i`` of a group binds its ``i``-th parameter.  It checks exactly the constraints whose last
parameter (in binding order) is that one, so a constraint of arity k is checked as soon as its k
parameters are bound and never again (constraints on one parameter are already enforced by its
candidate set).  Its candidates come from one generated function (``compile.compile_candidates``):
relations linear in ``p`` cut the sorted candidate set to a slice, a divisor generator (``p + c``
divides a bound expression ``E``) replaces the slice by the shifted divisors of ``E``, and the level's
checks filter what is left, the generating constraints included: generation only saves work, it never
decides validity.

``key`` is the part of the assignment the rest of the group can still see: the bound parameters that
occur in a constraint checked at this level or later.  Two partial assignments with the same key have the
same valid completions, which is what makes memoised counting possible (see ``solver``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import networkx as nx

from .compile import compile_candidates, compile_predicate
from .domains import Domain, derive_domains, narrow_by_divisibility
from .forms import divisor_form, linear_form
from .graph import GroupOrder, dependency_graph, plan_groups
from .space import Constraint, Space


@dataclass(frozen=True)
class Level:
    param: str
    key: tuple[str, ...]  # bound parameters the sub-tree below depends on (memo key), in binding order
    checks: tuple[int, ...]  # indices into Plan.constraints checked when ``param`` is bound
    generator: str  # how candidates are produced, for printing
    next_index: tuple[int, ...]  # positions in key + (value,) that form the next level's key
    candidates: Callable[[tuple], list] = field(repr=False, compare=False)


@dataclass(frozen=True)
class PlannedGroup:
    order: GroupOrder
    levels: tuple[Level, ...]

    @property
    def params(self) -> tuple[str, ...]:
        return self.order.params


@dataclass(frozen=True)
class Plan:
    space: Space
    constraints: tuple[Constraint, ...]  # the constraints searched under (all of the space's by default)
    domains: Mapping[str, Domain]  # from declarations and constraints on one parameter: the raw space
    search_domains: Mapping[str, Domain]  # after narrowing by divisibility: what the search iterates
    groups: tuple[PlannedGroup, ...]
    false_constraints: tuple[Constraint, ...]  # constraints without parameters that do not hold

    @property
    def raw_size(self) -> int:
        """Size of the cross product of the parameters' candidate sets."""
        out = 1
        for d in self.domains.values():
            out *= len(d)
        return out

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(p for g in self.groups for p in g.params)


def plan_space(space: Space, constraints: Sequence[Constraint] | None = None, seed: int = 0) -> Plan:
    """Compile ``space`` (optionally under a subset of its constraints) for counting and sampling.
    Raises ``ConstraintError`` when a parameter's candidates cannot be made finite."""
    cons = tuple(space.constraints if constraints is None else constraints)
    domains = derive_domains(space, cons)
    names = space.names
    false_cons = tuple(c for c in cons if not c.names and not compile_predicate(c.predicate, [])())
    if false_cons:  # nothing is valid: no candidates to narrow or order (sizes of 10^8 took minutes to narrow)
        return Plan(space, cons, domains, domains, (), false_cons)
    shared = [c for c in cons if len(c.names) > 1]
    search = narrow_by_divisibility(domains, shared, _dependency_order(names, shared))
    # Group orders index into ``shared``; levels keep indices into ``cons`` for reporting.
    pos_in_cons = {id(c): i for i, c in enumerate(cons)}
    groups = []
    for go in plan_groups(names, shared, {n: search[n].values for n in names}, seed):
        go = GroupOrder(go.params, tuple(pos_in_cons[id(shared[i])] for i in go.constraints), go.cycles, go.edges, go.estimated_work)
        groups.append(PlannedGroup(go, _levels(go, cons, search)))
    return Plan(space, cons, domains, search, tuple(groups), false_cons)


def _dependency_order(names: Sequence[str], shared: Sequence[Constraint]) -> list[str]:
    dg = dependency_graph(names, shared)
    cond = nx.condensation(dg)
    out = []
    for node in nx.lexicographical_topological_sort(cond, key=lambda n: min(names.index(m) for m in cond.nodes[n]["members"])):
        out.extend(sorted(cond.nodes[node]["members"], key=names.index))
    return out


def _levels(go: GroupOrder, cons: Sequence[Constraint], domains: Mapping[str, Domain]) -> tuple[Level, ...]:
    params = go.params
    pos = {p: i for i, p in enumerate(params)}
    last = {ci: max(pos[n] for n in cons[ci].names) for ci in go.constraints}
    keys = []
    for i in range(len(params) + 1):
        live = set()
        for ci, l in last.items():
            if l >= i:
                live |= {n for n in cons[ci].names if pos[n] < i}
        keys.append(tuple(sorted(live, key=pos.get)))
    levels = []
    for i, p in enumerate(params):
        checks = tuple(ci for ci in go.constraints if last[ci] == i)
        key = keys[i]
        slots = key + (p,)
        next_index = tuple(slots.index(n) for n in keys[i + 1])
        cands, how = _candidate_function(p, key, [cons[ci] for ci in checks], domains[p])
        levels.append(Level(p, key, checks, how, next_index, cands))
    return tuple(levels)


def _candidate_function(p: str, key: tuple[str, ...], checks: Sequence[Constraint], dom: Domain):
    values = dom.values
    if not checks:
        # Nothing to check here: the candidate set itself (a range stays a range, however large).
        return (lambda kv: values), "all candidates"
    used = sorted(set().union(*(c.names for c in checks)) - {p}, key=key.index)
    positive = len(values) > 0 and values[0] > 0
    div = None
    lins = []
    for c in checks:
        d = divisor_form(c.predicate, p)
        if d is not None and div is None:
            div = d
            continue
        lf = linear_form(c.predicate, p, positive)
        if lf is not None:
            lins.append(lf)
    compute = compile_candidates(p, used, [c.predicate for c in checks], values, div, lins)

    how = []
    if div is not None:
        shift = f"{'+' if div.offset > 0 else '-'}{abs(div.offset)}" if div.offset else ""
        how.append(f"{p}{shift} divides {div.dividend}")
    if lins:
        how.append(f"{len(lins)} linear bound{'s' if len(lins) > 1 else ''}")
    how.append(f"{len(checks)} check{'s' if len(checks) > 1 else ''}")

    if len(used) == len(key):
        # The level's constraints see the whole memo key: the memo already avoids repeated work.
        return (lambda kv: compute(*kv)), ", ".join(how)

    # Otherwise the key holds parameters only later levels need; cache on the smaller tuple.
    used_index = tuple(key.index(n) for n in used)
    cache: dict[tuple, list] = {}

    def candidates(kv: tuple) -> list:
        uv = tuple([kv[j] for j in used_index])
        got = cache.get(uv)
        if got is None:
            got = cache[uv] = compute(*uv)
        return got

    return candidates, ", ".join(how)
