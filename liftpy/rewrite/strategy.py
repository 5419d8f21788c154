"""Elevate-style strategy combinators: a *strategy* is a function from a variant to the list of variants it
can become ("all results" semantics, so choices multiply); rules are applied at positions of a variant's
program, and variants are de-duplicated structurally (alpha-equivalence) as they are combined."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable

from .positions import positions
from .rule import Rule, try_rule
from .variant import Variant

Strategy = Callable[[Variant], list[Variant]]


# ------------------------------------------------------------------------------------- combinators


def once(rule: Rule, where: Callable | None = None) -> Strategy:
    """Apply ``rule`` at the first position (pre-order) where it applies; no result if none."""

    def go(v: Variant) -> list[Variant]:
        for path, e in positions(v.program.body):
            if where is not None and not where(path, e):
                continue
            r = try_rule(v.program, rule, path)
            if r is not None:
                return [extend(v, r)]
        return []

    return go


def everywhere(rule: Rule) -> Strategy:
    """Apply ``rule`` at every position where it applies, one variant per position."""

    def go(v: Variant) -> list[Variant]:
        out = []
        for path, _ in positions(v.program.body):
            r = try_rule(v.program, rule, path)
            if r is not None:
                out.append(extend(v, r))
        return out

    return go


def normalize(rule: Rule, limit: int = 200) -> Strategy:
    """Apply ``rule`` until it no longer applies (deterministically, first position each time)."""
    step = once(rule)

    def go(v: Variant) -> list[Variant]:
        for _ in range(limit):
            nxt = step(v)
            if not nxt:
                return [v]
            v = nxt[0]
        raise RuntimeError(f"rule {rule.name} did not reach a normal form within {limit} steps")

    return go


def seq(*strategies: Strategy) -> Strategy:
    def go(v: Variant) -> list[Variant]:
        states = [v]
        for s in strategies:
            states = dedup(x for st in states for x in s(st))
        return states

    return go


def choice(*strategies: Strategy) -> Strategy:
    def go(v: Variant) -> list[Variant]:
        return dedup(x for s in strategies for x in s(v))

    return go


def optional(s: Strategy) -> Strategy:
    """The variant unchanged, or what ``s`` makes of it."""
    return choice(lambda v: [v], s)


def try_(s: Strategy) -> Strategy:
    """What ``s`` makes of the variant, or the variant unchanged when ``s`` does not apply."""

    def go(v: Variant) -> list[Variant]:
        return s(v) or [v]

    return go


def dedup(variants: Iterable[Variant]) -> list[Variant]:
    seen = set()
    out = []
    for v in variants:
        if v.key not in seen:
            seen.add(v.key)
            out.append(v)
    return out


def extend(v: Variant, r) -> Variant:
    return replace(
        v,
        program=r.program,
        params=v.params + r.params,
        requirements=v.requirements + r.requirements,
        trace=v.trace + (r.step,),
        lower_bounds=v.lower_bounds + r.lower_bounds,
    )
