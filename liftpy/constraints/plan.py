"""A space compiled for search: candidate sets, groups, binding order, and one compiled level per parameter.

Level ``i`` of a group binds its ``i``-th parameter.  It checks exactly the constraints whose last
parameter (in binding order) is that one, so a constraint of arity k is checked as soon as its k
parameters are bound and never again.  Its candidates are produced, in order of preference, by

* a divisor generator: ``p + c`` divides ``E`` (``E`` bound) gives the divisors of ``E``, shifted;
* linear bounds: relations linear in ``p`` cut the sorted candidate set to a slice;
* the candidate set itself,

and then filtered by the level's compiled conjunction (which re-checks the generating constraints too:
generation only saves work, it never decides validity).

``key`` is the part of the assignment the rest of the group can still see: the bound parameters that
occur in a constraint checked at this level or later.  Two partial assignments with the same key have the
same valid completions, which is what makes memoised counting possible (see ``solver``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from math import isqrt
from typing import Callable, Mapping, Sequence

import networkx as nx
from .compile import (
    compile_expression,
    compile_filter,
    compile_predicate,
    divisor_form,
    divisors,
    linear_bounds,
    linear_form,
)
from .domains import Domain, derive_domains, narrow_by_divisibility
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
    members = values if isinstance(values, range) else frozenset(values)
    filt = compile_filter([c.predicate for c in checks], key, p)

    div = None
    lins = []
    for c in checks:
        d = divisor_form(c.predicate, p)
        if d is not None and div is None:
            div = (compile_expression(d.dividend, key), d.offset, d.dividend)
            continue
        lf = linear_form(c.predicate, p, len(values) > 0 and values[0] > 0)
        if lf is not None:
            lins.append((compile_expression(lf.coeff, key), compile_expression(lf.rest, key), lf.op))

    how = []
    if div is not None:
        how.append(f"{p}{'+' if div[1] >= 0 else '-'}{abs(div[1])} divides {div[2]}" if div[1] else f"{p} divides {div[2]}")
    if lins:
        how.append(f"{len(lins)} linear bound{'s' if len(lins) > 1 else ''}")
    if checks:
        how.append(f"{len(checks)} check{'s' if len(checks) > 1 else ''}")
    description = ", ".join(how) if how else "all candidates"

    if not checks:
        # Nothing to check here: the candidate set itself (a range stays a range, however large).
        return (lambda kv: values), "all candidates"

    def candidates(kv: tuple) -> list:
        lo = hi = None
        for fa, fb, op in lins:
            try:
                a, b = fa(*kv), fb(*kv)
            except ZeroDivisionError:
                continue
            if not (isinstance(a, int) and isinstance(b, int)):
                continue
            bounds = linear_bounds(op, a, b)
            if bounds is None:
                return []
            if bounds[0] is not None:
                lo = bounds[0] if lo is None else max(lo, bounds[0])
            if bounds[1] is not None:
                hi = bounds[1] if hi is None else min(hi, bounds[1])
        i = 0 if lo is None else bisect_left(values, lo)
        j = len(values) if hi is None else bisect_right(values, hi)
        if i >= j:
            return []
        base = values[i:j]
        if div is not None:
            try:
                e = div[0](*kv)
            except ZeroDivisionError:
                e = 0
            if isinstance(e, int) and e != 0 and isqrt(abs(e)) <= 4 * (j - i) + 64:
                off = div[1]
                ds = divisors(e)
                gen = [x - off for x in ds]
                if values[i] + off < 0:  # p + off may be negative: its negative divisors count too
                    gen = [-x - off for x in reversed(ds)] + gen
                lo_v, hi_v = values[i], values[j - 1]
                base = [v for v in gen if lo_v <= v <= hi_v and v in members]
        return filt(*kv, base)

    return candidates, description
