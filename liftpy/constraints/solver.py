"""Counting, uniform sampling and enumeration of valid configurations.

**Counting** is ATF's chain of trees without building the trees.  Per independent group, the number of
valid completions below a partial assignment is

    count(i, key) = sum over candidates v of parameter i of count(i + 1, key')

where ``key`` holds only the bound parameters that constraints at level ``i`` or later still mention
(``plan.Level.key``).  Memoising on the key instead of the whole prefix shares every sub-tree that the
remaining constraints cannot tell apart; the tiling pair (padding, tile size) of a convolution, for
example, is forgotten as soon as both are checked.  The valid size is the product of the groups' counts.

**Sampling** draws ``n`` distinct indices uniformly from ``range(valid size)`` and decodes each: a
mixed-radix digit per group, then, per level, the candidate whose cumulative completion count covers the
remaining index.  Each valid configuration has exactly one index, so samples are uniform over the valid
space and distinct, however unbalanced the tree is (choosing uniformly among children at each level, as
a plain backtracking sampler does, favours configurations in sparse sub-trees).

**Large spaces.** When memoised counting of a group would create more than ``max_nodes`` nodes, its
size is estimated with Knuth's estimator (mean over random root-to-leaf probes of the product of the
candidate counts met, an unbiased estimate of the number of leaves) and the size is marked inexact; such
a group is sampled by random backtracking (GPGPU'20's sampler), which is *not* uniform, and
``CountedSpace.uniform`` says so.
"""

from __future__ import annotations

import itertools
import math
import random
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Callable, Iterator, Mapping, Sequence

import sympy

from ..errors import ConstraintError
from .compile import compile_predicate
from .plan import Plan, PlannedGroup, plan_space
from .space import Constraint, Space

DEFAULT_MAX_NODES = 1_000_000
ESTIMATE_PROBES = 2000


@dataclass(frozen=True)
class SpaceSize:
    valid: int | float
    raw: int
    exact: bool
    method: str
    rel_stderr: float | None = None  # of the estimate, when not exact

    def __str__(self) -> str:
        if self.exact:
            return f"{self.valid} valid of {self.raw} raw"
        return f"about {self.valid:.3g} valid (±{100 * (self.rel_stderr or 0):.0f}%) of {self.raw} raw"


class _Node:
    """A memo entry: the candidates with at least one valid completion, and how many each has.
    Immutable by convention (a plain slotted class: counting creates one per memo key, and a frozen
    dataclass costs twice as much to build)."""

    __slots__ = ("values", "cum", "unit", "total")

    def __init__(self, values: Sequence[int], cum: list[int] | None, unit: int, total: int):
        self.values = values
        self.cum = cum  # cumulative completion counts; None when every value has ``unit`` of them
        self.unit = unit
        self.total = total


@dataclass(frozen=True)
class CountedSpace:
    plan: Plan
    tables: tuple  # per group: a tuple of per-level dicts key -> _Node, or None when only estimated
    group_sizes: tuple  # per group: exact int, or float estimate
    size: SpaceSize

    @property
    def uniform(self) -> bool:
        """Whether ``sample`` draws uniformly (every group was counted exactly)."""
        return self.size.exact


class _BudgetExceeded(Exception):
    pass


def _projector(index: tuple[int, ...]):
    if not index:
        return lambda slots: ()
    if len(index) == 1:
        j = index[0]
        return lambda slots: (slots[j],)
    return itemgetter(*index)


def count_space(plan: Plan, max_nodes: int = DEFAULT_MAX_NODES, seed: int = 0) -> CountedSpace:
    """Count the valid configurations of ``plan`` (exactly, or estimated per group past ``max_nodes``)."""
    tables, sizes = [], []
    exact = True
    rel_var = 0.0
    for group in plan.groups:
        try:
            memo, total = _count_group(group, max_nodes)
            tables.append(memo)
            sizes.append(total)
        except _BudgetExceeded:
            mean, rse = _estimate_group(group, random.Random(seed))
            tables.append(None)
            sizes.append(mean)
            exact = False
            rel_var += rse**2
    if plan.false_constraints:
        sizes = [0 for _ in sizes]
    valid = math.prod(sizes) if sizes else (0 if plan.false_constraints else 1)
    if exact:
        size = SpaceSize(int(valid), plan.raw_size, True, "exact count (memoised chain of trees)")
    else:
        size = SpaceSize(
            float(valid),
            plan.raw_size,
            False,
            f"estimated: exact counting needs more than {max_nodes} memo nodes; Knuth's tree-size estimator "
            f"(mean over {ESTIMATE_PROBES} random probes of the product of candidate counts) for the groups "
            "past the limit",
            math.sqrt(rel_var),
        )
    return CountedSpace(plan, tuple(tables), tuple(sizes), size)


def _count_group(group: PlannedGroup, max_nodes: int):
    levels = group.levels
    m = len(levels)
    memos = tuple({} for _ in levels)
    projs = [_projector(lv.next_index) for lv in levels]
    value_needed = [len(lv.key) in lv.next_index for lv in levels]
    created = 0

    def node(i: int, kv: tuple) -> _Node:
        nonlocal created
        memo = memos[i]
        n = memo.get(kv)
        if n is not None:
            return n
        cands = levels[i].candidates(kv)
        if i == m - 1:
            n = _Node(cands, None, 1, len(cands))
        elif not value_needed[i]:
            # The value is forgotten below this level: every candidate has the same completions.
            unit = node(i + 1, projs[i](kv + (0,))).total if len(cands) else 0
            n = _Node(cands if unit else (), None, unit, unit * len(cands))
        else:
            proj = projs[i]
            vals, cum, t = [], [], 0
            for v in cands:
                c = node(i + 1, proj(kv + (v,))).total
                if c:
                    t += c
                    vals.append(v)
                    cum.append(t)
            n = _Node(vals, cum, 0, t)
        memo[kv] = n
        created += 1
        if created > max_nodes:
            raise _BudgetExceeded
        return n

    root = node(0, ())
    return memos, root.total


def _estimate_group(group: PlannedGroup, rng: random.Random):
    levels = group.levels
    projs = [_projector(lv.next_index) for lv in levels]
    ests = []
    # A fixed number of probes (not a time budget) keeps the estimate reproducible from the seed.
    while len(ests) < ESTIMATE_PROBES:
        kv, w = (), 1
        for lv, proj in zip(levels, projs):
            c = lv.candidates(kv)
            if not len(c):
                w = 0
                break
            w *= len(c)
            kv = proj(kv + (c[rng.randrange(len(c))],))
        ests.append(w)
    n = len(ests)
    mean = sum(ests) / n
    var = sum((e - mean) ** 2 for e in ests) / max(1, n - 1)
    rse = math.sqrt(var / n) / mean if mean else 0.0
    return mean, rse


def _rng(seed) -> random.Random:
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def sample(counted: CountedSpace, n: int, seed: int | random.Random | None = 0) -> list[dict[str, int]]:
    """``min(n, valid size)`` distinct valid configurations, drawn uniformly when the space was counted
    exactly (``CountedSpace.uniform``).  Otherwise they come from random backtracking, which is biased
    and may return fewer than ``n`` when distinct configurations are hard to find.  The same seed gives
    the same samples."""
    rng = _rng(seed)
    n = int(n)
    if n <= 0 or counted.size.valid == 0:
        return []
    if counted.uniform:
        total = int(counted.size.valid)
        return [decode(counted, i) for i in rng.sample(range(total), min(n, total))]
    return _sample_backtracking(counted, n, rng)


def decode(counted: CountedSpace, index: int) -> dict[str, int]:
    """The valid configuration with the given index (0 <= index < valid size) in the plan's order."""
    if not counted.uniform:
        raise ConstraintError("configurations can be indexed only when the space was counted exactly")
    if not 0 <= index < counted.size.valid:
        raise ConstraintError(f"index {index} is outside the valid space (0 <= index < {counted.size.valid})")
    out: dict[str, int] = {}
    rest = index
    for group, memo, size in zip(counted.plan.groups, counted.tables, counted.group_sizes):
        rest, r = divmod(rest, size)
        _descend(group, memo, r, out)
    return {name: out[name] for name in counted.plan.space.names}


def _descend(group: PlannedGroup, memo, r: int, out: dict) -> None:
    kv: tuple = ()
    for lv, table in zip(group.levels, memo):
        node = table[kv]
        if node.cum is None:
            j, r = divmod(r, node.unit)
        else:
            j = bisect_right(node.cum, r)
            if j:
                r -= node.cum[j - 1]
        v = node.values[j]
        out[lv.param] = v
        slots = kv + (v,)
        kv = tuple(slots[k] for k in lv.next_index)


def _sample_backtracking(counted: CountedSpace, n: int, rng: random.Random) -> list[dict[str, int]]:
    seen, out = set(), []
    attempts = 0
    while len(out) < n and attempts < 20 * n + 100:
        attempts += 1
        cfg: dict[str, int] = {}
        ok = True
        for group, memo, size in zip(counted.plan.groups, counted.tables, counted.group_sizes):
            if memo is not None:
                _descend(group, memo, rng.randrange(size), cfg)
            elif not _random_walk(group, rng, cfg):
                ok = False
                break
        if not ok:
            continue
        key = tuple(cfg[name] for name in counted.plan.space.names)
        if key not in seen:
            seen.add(key)
            out.append({name: cfg[name] for name in counted.plan.space.names})
    return out


def _random_walk(group: PlannedGroup, rng: random.Random, out: dict) -> bool:
    levels = group.levels

    def walk(i: int, kv: tuple) -> bool:
        if i == len(levels):
            return True
        lv = levels[i]
        cands = list(lv.candidates(kv))
        rng.shuffle(cands)
        for v in cands:
            out[lv.param] = v
            slots = kv + (v,)
            if walk(i + 1, tuple(slots[k] for k in lv.next_index)):
                return True
        return False

    return walk(0, ())


def enumerate_valid(counted: CountedSpace, limit: int = 1_000_000) -> Iterator[dict[str, int]]:
    """Every valid configuration (in index order), when there are at most ``limit`` of them."""
    if not counted.uniform:
        raise ConstraintError("the space was too large to count exactly; it cannot be enumerated")
    if counted.size.valid > limit:
        raise ConstraintError(f"the space has {counted.size.valid} valid configurations, more than the limit of {limit}")
    if counted.size.valid == 0:
        return
    per_group = [list(_group_configs(g, memo)) for g, memo in zip(counted.plan.groups, counted.tables)]
    names = counted.plan.space.names
    for parts in itertools.product(*reversed(per_group)):
        cfg: dict[str, int] = {}
        for p in parts:
            cfg.update(p)
        yield {name: cfg[name] for name in names}


def _group_configs(group: PlannedGroup, memo) -> Iterator[dict[str, int]]:
    levels = group.levels

    def walk(i: int, kv: tuple, partial: tuple):
        if i == len(levels):
            yield partial
            return
        lv = levels[i]
        node = memo[i][kv]
        for v in node.values:
            slots = kv + (v,)
            yield from walk(i + 1, tuple(slots[k] for k in lv.next_index), partial + ((lv.param, v),))

    for items in walk(0, (), ()):
        yield dict(items)


def is_satisfiable(plan: Plan, max_nodes: int | None = None) -> bool | None:
    """Whether at least one valid configuration exists: depth-first, stopping at the first complete
    assignment, with a memo of keys already shown to have no completion, so it is much cheaper than
    counting when the answer is yes.  Proving no is as hard as counting; with ``max_nodes`` the search
    gives up past that many visited keys and candidates and returns ``None`` (undecided)."""
    if plan.false_constraints:
        return False
    for g in plan.groups:
        ok = _group_satisfiable(g, max_nodes)
        if ok is not True:
            return ok
    return True


def unsatisfiable_groups(plan: Plan) -> tuple[PlannedGroup, ...]:
    """The independent groups that have no valid assignment."""
    return tuple(g for g in plan.groups if not _group_satisfiable(g, None))


def _group_satisfiable(group: PlannedGroup, max_nodes: int | None) -> bool | None:
    levels = group.levels
    m = len(levels)
    dead = [set() for _ in levels]
    visited = 0

    def ok(i: int, kv: tuple) -> bool:
        nonlocal visited
        if kv in dead[i]:
            return False
        lv = levels[i]
        cands = lv.candidates(kv)
        visited += 1 + len(cands)
        if max_nodes is not None and visited > max_nodes:
            raise _BudgetExceeded
        for v in cands:
            if i == m - 1:
                return True
            slots = kv + (v,)
            if ok(i + 1, tuple(slots[k] for k in lv.next_index)):
                return True
        dead[i].add(kv)
        return False

    try:
        return ok(0, ())
    except _BudgetExceeded:
        return None


def solve(space: Space, seed: int = 0, max_nodes: int = DEFAULT_MAX_NODES) -> CountedSpace:
    """Plan and count ``space`` in one call."""
    return count_space(plan_space(space, seed=seed), max_nodes=max_nodes, seed=seed)


def violated(space: Space, assignment: Mapping[str, int]) -> tuple[Constraint, ...]:
    """The constraints (and declared domains) that ``assignment`` breaks; empty when it is valid."""
    return checker(space)(assignment)


def checker(space: Space) -> Callable[[Mapping[str, int]], tuple[Constraint, ...]]:
    """``violated`` for one space, its predicates compiled once: a search that checks thousands of
    configurations of a variant keeps this instead of looking each predicate up again (the lookup compares
    sympy expressions, which took most of a resumed search's expanding of its best points)."""
    ranges = []
    for prm in space.parameters:
        lo = prm.lo if prm.lo is not None else (None if prm.domain is not None else 1)
        ranges.append((prm.name, prm.domain, lo, prm.hi))
    compiled = []
    for c in space.constraints:
        names = tuple(sorted(c.names))
        compiled.append((c, names, _compiled(c.predicate, names)))
    wanted = space.names

    def check(assignment: Mapping[str, int]) -> tuple[Constraint, ...]:
        missing = [n for n in wanted if n not in assignment]
        if missing:
            raise ConstraintError(f"assignment lacks values for {', '.join(missing)}")
        out = []
        for name, domain, lo, hi in ranges:
            v = assignment[name]
            if (domain is not None and v not in domain) or (lo is not None and v < lo) or (hi is not None and v > hi):
                out.append(Constraint(sympy.false, f"{name} = {v} is outside its declared values", "declaration", "range"))
        for c, names, fn in compiled:
            if not fn(*(assignment[n] for n in names)):
                out.append(c)
        return tuple(out)

    return check


@lru_cache(maxsize=4096)
def _compiled(pred: sympy.Basic, names: tuple[str, ...]):
    return compile_predicate(pred, names)
