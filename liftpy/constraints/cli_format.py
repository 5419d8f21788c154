"""The text ``liftpy space PROGRAM`` prints: parameters and their candidates, constraints and their
origins, the dependency order, and the raw and valid sizes (with the conflict when there is none)."""

from __future__ import annotations

from .conflict import Explanation
from .plan import Plan, plan_space
from .solver import CountedSpace
from .space import Space


def format_space(
    space: Space,
    counted: CountedSpace | None = None,
    *,
    plan: Plan | None = None,
    explanation: Explanation | None = None,
    width: int = 100,
) -> str:
    """A report of ``space``.  ``counted`` (from ``count_space``) supplies the plan and the valid size;
    without it only the plan is shown (and computed when ``plan`` is not given).  ``explanation`` is
    printed when the valid size is zero."""
    if counted is not None:
        plan = counted.plan
    elif plan is None:
        plan = plan_space(space)
    out: list[str] = []

    out.append(f"Parameters ({len(space.parameters)})")
    nw = max((len(p.name) for p in space.parameters), default=4)
    for p in space.parameters:
        dom = plan.domains[p.name]
        search = plan.search_domains[p.name]
        text = dom.describe()
        if len(search) < len(dom):
            text += f"; searched: {len(search)} values ({search.rule.split(', ')[-1]})"
        doc = f"  -- {p.doc}" if p.doc else ""
        out.append(f"  {p.name:<{nw}}  {text}{doc}")

    out.append("")
    out.append(f"Constraints ({len(space.constraints)})")
    for i, c in enumerate(space.constraints, 1):
        names = ", ".join(sorted(c.names, key=space.names.index)) or "no parameters"
        out.append(f"  {i:>2}. [{c.kind}] {c.primitive}: {c.origin}")
        out.append(f"      {_clip(str(c.predicate), width - 6)}   ({names})")

    out.append("")
    out.append("Dependency order (independent groups in random order; within a group, a topological order)")
    index = {id(c): i for i, c in enumerate(space.constraints, 1)}
    for gi, g in enumerate(plan.groups, 1):
        out.append(f"  group {gi}: {' -> '.join(g.params)}")
        for lv in g.levels:
            checks = ", ".join(f"#{index.get(id(plan.constraints[ci]), '?')}" for ci in lv.checks)
            key = f"; remembers {', '.join(lv.key)}" if lv.key else ""
            out.append(f"    {lv.param:<{nw}}  {lv.generator}{' (' + checks + ')' if checks else ''}{key}")
        if g.order.edges:
            deps = ", ".join(f"{a} -> {b}" for a, b in g.order.edges)
            out.append(f"    depends: {deps}")
        for cyc in g.order.cycles:
            out.append(f"    cycle: {' <-> '.join(cyc)} (condensed: any order inside, constraints checked when bound)")

    out.append("")
    out.append("Space size")
    raw = plan.raw_size
    out.append(f"  raw (cross product of candidate sets): {raw} ({raw:.3g})")
    if counted is not None:
        size = counted.size
        if size.exact:
            frac = f" = {size.valid / raw:.3g} of raw" if raw else ""
            out.append(f"  valid: {size.valid}{frac}  [{size.method}]")
        else:
            out.append(f"  valid: about {size.valid:.3g} (relative standard error {100 * (size.rel_stderr or 0):.1f}%)")
            out.append(f"         [{size.method}]")
        if size.valid == 0 and explanation is not None:
            out.append("")
            out.append(explanation.text)
    return "\n".join(out)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
