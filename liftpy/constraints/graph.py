"""The dependency graph of parameters: independent groups, cycles, and the order values are chosen in.

Two graphs, both networkx:

* the *constraint graph* (undirected) links parameters that share a constraint.  Its connected
  components are the independent groups: the valid space is their product, so each is counted and
  sampled on its own (pyATF's chain of trees).
* the *dependency graph* (directed) has an edge ``q -> p`` when ``p``'s candidates are generated from
  ``q``'s value: ``p + c`` must divide an expression of ``q`` (``split``/``asVector`` of a length that
  depends on ``q``, and the tiling condition).  This is GPGPU'20's "if A depends on B, B is evaluated
  first".

**Cycles** (``a`` divides ``b`` and ``b`` divides ``a``, or longer rings) are condensed: each strongly
connected component becomes one node of an acyclic graph and the order is a topological order of that
graph; inside a component any order is allowed.  Nothing is lost by this rule, because a divisor
generator is only used when its dividend's parameters are already bound and every constraint is
checked as soon as its last parameter is bound; a cycle only means that one of its members is found by
filtering instead of generation.  Cycles are reported in the plan (``Group.cycles``).

**Order within a group.** Among the topological orders, the one chosen minimises an estimate of the
counting work, the sum over levels of (memo keys at the level) x (candidates tried per key).  Each
constraint's *selectivity* (the fraction of 256 random points of its parameters' candidates that satisfy
it) stands for its pruning power: the keys at a level are estimated as the valid joint values of the
key's parameters (product of candidate counts times the selectivities of the constraints among them,
capped by the same estimate for everything bound so far), and a parameter that a constraint generates or
bounds (a divisor, a linear bound) costs its candidate count times that constraint's selectivity.  Groups
of up to 10 parameters are ordered exactly (dynamic programming over subsets of bound parameters);
larger groups greedily.

**Order among groups** is a seeded random permutation, as the paper does; it changes neither counts
nor the distribution of samples.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping, Sequence

import networkx as nx

from .compile import compile_predicate
from .forms import divisor_form, linear_form
from .space import Constraint

EXACT_ORDER_MAX = 10
SELECTIVITY_PROBES = 256


@dataclass(frozen=True)
class GroupOrder:
    params: tuple[str, ...]  # binding order
    constraints: tuple[int, ...]  # indices (into the constraint list) of the group's constraints
    cycles: tuple[tuple[str, ...], ...]  # strongly connected components of the dependency graph
    edges: tuple[tuple[str, str], ...]  # dependency edges q -> p inside the group
    estimated_work: float


def constraint_graph(names: Sequence[str], constraints: Sequence[Constraint]) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(names)
    for i, c in enumerate(constraints):
        ns = sorted(c.names)
        for a in ns:
            for b in ns:
                if a < b:
                    if g.has_edge(a, b):
                        g[a][b]["constraints"].append(i)
                    else:
                        g.add_edge(a, b, constraints=[i])
    return g


def dependency_graph(names: Sequence[str], constraints: Sequence[Constraint]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for i, c in enumerate(constraints):
        if len(c.names) < 2:
            continue
        for p in sorted(c.names):
            d = divisor_form(c.predicate, p)
            if d is None:
                continue
            for q in sorted(str(s) for s in d.dividend.free_symbols):
                if q != p:
                    g.add_edge(q, p, constraint=i)
    return g


def plan_groups(
    names: Sequence[str],
    constraints: Sequence[Constraint],
    domains: Mapping[str, Sequence[int]],
    seed: int = 0,
) -> tuple[GroupOrder, ...]:
    """Independent groups in a seeded random order, each with its binding order."""
    cg = constraint_graph(names, constraints)
    dg = dependency_graph(names, constraints)
    comps = [sorted(c, key=list(names).index) for c in nx.connected_components(cg)]
    comps.sort(key=lambda c: list(names).index(c[0]))
    rng = random.Random(seed)
    rng.shuffle(comps)
    out = []
    for comp in comps:
        members = set(comp)
        cons = tuple(i for i, c in enumerate(constraints) if c.names and c.names <= members)
        sub = dg.subgraph(comp).copy()
        sccs = [tuple(sorted(s, key=comp.index)) for s in nx.strongly_connected_components(sub)]
        cycles = tuple(s for s in sccs if len(s) > 1)
        params, work = _best_order(comp, [constraints[i] for i in cons], sub, domains, rng)
        out.append(GroupOrder(tuple(params), cons, cycles, tuple(sub.edges()), work))
    return tuple(out)


def _preds_outside_scc(dg: nx.DiGraph) -> dict[str, frozenset[str]]:
    cond = nx.condensation(dg)
    member = cond.graph["mapping"]
    return {
        p: frozenset(q for q in dg.predecessors(p) if member[q] != member[p])
        for p in dg.nodes
    }


def _selectivities(cons: list[Constraint], domains: Mapping[str, Sequence[int]], rng: random.Random) -> list[float]:
    """Fraction of random points (uniform over the constraint's parameters' candidates) that satisfy each
    constraint: the pruning power the order estimate credits it with."""
    out = []
    for c in cons:
        names = sorted(c.names)
        if any(len(domains[n]) == 0 for n in names):
            out.append(1.0 / SELECTIVITY_PROBES)
            continue
        check = compile_predicate(c.predicate, names)
        hits = sum(
            1 for _ in range(SELECTIVITY_PROBES)
            if check(*(domains[n][rng.randrange(len(domains[n]))] for n in names))
        )
        out.append(max(hits, 0.5) / SELECTIVITY_PROBES)
    return out


def _positive(values: Sequence[int]) -> bool:
    return len(values) > 0 and values[0] > 0


def _best_order(comp: list[str], cons: list[Constraint], dg: nx.DiGraph, domains: Mapping[str, Sequence[int]], rng: random.Random):
    n = len(comp)
    sizes = {p: max(1, len(domains[p])) for p in comp}
    if n == 1:
        return comp, float(sizes[comp[0]])
    idx = {p: i for i, p in enumerate(comp)}
    cmasks = [sum(1 << idx[x] for x in c.names) for c in cons]
    sel = _selectivities(cons, domains, rng)
    preds = _preds_outside_scc(dg)
    pmask = [sum(1 << idx[q] for q in preds[p]) for p in comp]
    # For each parameter: (mask of the other parameters a generator needs, selectivity it realises).
    gens = [[] for _ in comp]
    for k, c in enumerate(cons):
        for p in c.names:
            d = divisor_form(c.predicate, p)
            if (d is not None and d.dividend.free_symbols) or linear_form(c.predicate, p, _positive(domains[p])) is not None:
                gens[idx[p]].append((cmasks[k] & ~(1 << idx[p]), sel[k]))

    def joint(mask: int) -> float:
        # Estimated number of valid assignments of the parameters in ``mask``, assuming independence.
        out = 1.0
        for j in range(n):
            if mask >> j & 1:
                out *= sizes[comp[j]]
        for m, s in zip(cmasks, sel):
            if m & ~mask == 0:
                out *= s
        return max(out, 1.0)

    def level_cost(bound: int, i: int) -> float:
        key = 0
        for m in cmasks:
            if m & ~bound and m & bound:
                key |= m & bound
        nodes = min(joint(key), joint(bound))
        cand = float(sizes[comp[i]])
        for m, s in gens[i]:
            if m & ~bound == 0:
                cand *= s
        return nodes * (cand + 1.0)

    if n <= EXACT_ORDER_MAX:
        best = {0: (0.0, ())}
        for bound in range(1 << n):
            if bound not in best:
                continue
            cost, order = best[bound]
            for i in range(n):
                if bound >> i & 1 or pmask[i] & ~bound:
                    continue
                nb = bound | (1 << i)
                c2 = cost + level_cost(bound, i)
                if nb not in best or c2 < best[nb][0]:
                    best[nb] = (c2, order + (i,))
        cost, order = best[(1 << n) - 1]
        return [comp[i] for i in order], cost
    bound, order, cost = 0, [], 0.0
    for _ in range(n):
        ready = [i for i in range(n) if not bound >> i & 1 and not pmask[i] & ~bound]
        i = min(ready, key=lambda j: (level_cost(bound, j), j))
        cost += level_cost(bound, i)
        bound |= 1 << i
        order.append(comp[i])
    return order, cost


