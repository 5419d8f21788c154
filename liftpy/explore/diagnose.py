"""What went wrong in an exploration, said where the user looks: the command's own output.

Two questions: why no variant of a program has a valid configuration at its sizes on a device (asked before
any point runs: the exploration is refused with the reasons, grouped), and why explored points failed (their
statuses and errors grouped, each group with its count, its first message and one example point).  The
errors are in the results store too, but a user should never have to open SQLite to read them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..constraints.infer import variant_space
from ..constraints.why import format_reasons, reasons
from ..errors import TuningError
from ..rewrite.explore import diverse

EXPLAINED = 40  # variants explained when none has a valid configuration (each explanation is a search)


def no_configuration(op, variants: Sequence, ids, profile, device_name: str) -> TuningError:
    """The error for an operator none of whose ``variants`` has a valid configuration at its sizes, with the
    grouped reasons of a diverse subset of them (``liftpy.constraints.why``)."""
    sizes = op.sizes()
    where = ", ".join(f"{k} = {v}" for k, v in sorted(sizes.items()))
    if not variants:
        return TuningError(f"the rewrite rules derive no lowered variant of {op.name}: nothing can run; "
                           "liftpy variants FILE --dropped lists the variants code generation refused, with why")
    index = {id(v): i for i, v in enumerate(variants)}
    chosen = diverse(list(variants), EXPLAINED)
    found, looked = reasons(((ids[index[id(v)]], variant_space(v, sizes, profile)) for v in chosen), limit=EXPLAINED)
    text = format_reasons(found, looked, len(variants)) if found else "no reason found (the spaces are satisfiable now)"
    return TuningError(f"none of the {len(variants)} variants of {op.name} has a valid configuration at {where} on "
                       f"{device_name}; nothing was run. {text}\n(liftpy space FILE -s ... explains one lowered variant "
                       "in full; other sizes, or a device with larger limits, may admit some)")


@dataclass(frozen=True)
class FailureGroup:
    status: str
    reason: str  # the first line of the first error of the group
    count: int
    example: str  # one point: its variant and configuration


def first_line(error: str | None) -> str:
    line = (error or "").strip().splitlines()[0] if (error or "").strip() else "(no message)"
    return line if len(line) <= 240 else line[:237] + "..."


def failure_groups(records: Iterable) -> list[FailureGroup]:
    """The failed points of ``records`` grouped by status and by their first error line (numbers blanked, so the
    same failure at other parameter values is one group), most common first."""
    groups: dict = {}
    for r in records:
        if r.is_reference or not r.status.failed:
            continue
        line = first_line(r.error)
        key = (r.status.value, re.sub(r"\d+", "#", line))
        config = ",".join(f"{k}={v}" for k, v in sorted(r.config.items())) or "no parameters"
        if key in groups:
            groups[key][2] += 1
        else:
            groups[key] = [r.status.value, line, 1, f"{r.variant} {config}"]
    ranked = sorted(groups.values(), key=lambda g: (-g[2], g[0]))
    return [FailureGroup(*g) for g in ranked]


def format_failures(groups: Sequence[FailureGroup], lines: int = 8) -> str:
    """The groups in a few lines: count, status, first message, one example point."""
    if not groups:
        return ""
    total = sum(g.count for g in groups)
    out = [f"{total} failed point{'s' if total != 1 else ''}, by reason:"]
    for g in groups[:lines]:
        out.append(f"  {g.count} {g.status}: {g.reason}")
        out.append(f"      e.g. {g.example}")
    if len(groups) > lines:
        out.append(f"  and {len(groups) - lines} more reasons ({sum(g.count for g in groups[lines:])} points): "
                   "liftpy failures --db ... lists them all")
    return "\n".join(out)
