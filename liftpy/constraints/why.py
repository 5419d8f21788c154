"""Why variants have no valid configuration, in a few lines a user can act on.

Every variant without a valid configuration has a minimal set of conflicting constraints (``explain``); many
variants share one reason (a 4,096-item work-group beyond the device's private memory, a split factor no size
divides), so the reasons are grouped by the constraints that conflict, with their counts and one example each.
Explaining is a search of its own, so at most ``limit`` variants are explained, spread over the rules they
were derived with; the counts say how many were looked at."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from .conflict import explain
from .space import Space


@dataclass(frozen=True)
class Reason:
    summary: str  # one line: the conflicting constraints' origins, with their kind and primitive
    count: int  # variants explained by this reason
    example: str  # one of them (its name, or its rules)
    detail: str  # that variant's full explanation


def _shape(text: str) -> str:
    """A constraint's origin with its numbers blanked: the same reason at other values is one group."""
    return re.sub(r"\d+", "#", text)


def reasons(spaces: Iterable[tuple[str, Space]], limit: int = 40, seed: int = 0) -> tuple[list[Reason], int]:
    """The reasons of ``spaces`` (pairs of a variant's name and its space, each without a valid configuration),
    most common first, and how many spaces were explained (at most ``limit``)."""
    groups: dict = {}
    looked = 0
    for name, space in spaces:
        if looked >= limit:
            break
        looked += 1
        why = explain(space, seed=seed)
        if why is None:  # (a space found valid after all: no reason to give)
            continue
        if why.constraints:
            # A device limit is one reason whatever it lists (the private arrays differ from variant to variant).
            key = tuple(sorted({(c.kind, c.primitive) if c.kind == "hardware" else (c.kind, c.primitive, _shape(c.origin))
                                for c in why.constraints}))
            summary = "; ".join(f"{c.origin} [{c.kind}, {c.primitive}]" for c in why.constraints)
        else:
            key, summary = (("declared", _shape(why.text)),), why.text.replace("No valid configuration: ", "")
        entry = groups.get(key)
        if entry is None:
            groups[key] = [summary, 1, name, why.text]
        else:
            entry[1] += 1
    ranked = sorted(groups.values(), key=lambda e: -e[1])
    return [Reason(s, n, example, detail) for s, n, example, detail in ranked], looked


def format_reasons(found: Sequence[Reason], looked: int, total: int, lines: int = 6) -> str:
    """The reasons as a short list: the most common first, each in one line, capped at ``lines``."""
    head = (f"the reasons, from {looked} of the {total} variants explained:" if looked < total
            else f"the reasons{' of all of them' if total > 1 else ''}:")
    out = [head]
    for r in found[:lines]:
        summary = r.summary if len(r.summary) <= 300 else r.summary[:297] + "..."
        out.append(f"  {r.count} x {summary}  (e.g. {r.example})")
    if len(found) > lines:
        out.append(f"  and {len(found) - lines} more reasons ({sum(r.count for r in found[lines:])} variants)")
    return "\n".join(out)
