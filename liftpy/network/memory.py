"""Where a network's intermediate tensors live: one arena, offsets reused (TFLite GPU's memory manager,
``shared/papers``: Lee et al., section 5; the offset form of its greedy-by-size strategy).

Each tensor lives from the step that writes it to the last step that reads it.  Tensors are placed largest
first, each at the lowest offset where it overlaps no placed tensor whose lifetime overlaps its own; the
arena is the highest end.  ``naive`` gives every tensor its own buffer.  Both are pure functions of the
tensors, so the plan can be checked (``check``) and compared (``lower_bound``: the most bytes alive at once,
which no plan can beat)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tensor:
    name: str
    bytes: int
    first: int  # the step that writes it
    last: int  # the last step that reads it (>= first)

    def overlaps_in_time(self, other: "Tensor") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass(frozen=True)
class Plan:
    offsets: tuple[tuple[str, int], ...]  # tensor name -> offset in the arena, in placement order
    arena_bytes: int

    def offset(self, name: str) -> int:
        return dict(self.offsets)[name]


def greedy_by_size(tensors: list[Tensor]) -> Plan:
    placed: list[tuple[Tensor, int]] = []
    for t in sorted(tensors, key=lambda t: (-t.bytes, t.first, t.name)):
        busy = sorted((off, off + p.bytes) for p, off in placed if p.overlaps_in_time(t))
        offset = 0
        for lo, hi in busy:  # the first gap large enough, scanning upward
            if offset + t.bytes <= lo:
                break
            offset = max(offset, hi)
        placed.append((t, offset))
    arena = max((off + t.bytes for t, off in placed), default=0)
    return Plan(tuple((t.name, off) for t, off in placed), arena)


def naive(tensors: list[Tensor]) -> int:
    return sum(t.bytes for t in tensors)


def lower_bound(tensors: list[Tensor]) -> int:
    """The most bytes alive at one step."""
    steps = {s for t in tensors for s in (t.first, t.last)}
    return max((sum(t.bytes for t in tensors if t.first <= s <= t.last) for s in steps), default=0)


def check(tensors: list[Tensor], plan: Plan) -> None:
    """Raises AssertionError if two tensors alive at the same time share bytes, or one leaves the arena."""
    by = {t.name: t for t in tensors}
    offsets = dict(plan.offsets)
    assert set(offsets) == set(by), "every tensor is placed once"
    items = list(by.values())
    for i, a in enumerate(items):
        assert 0 <= offsets[a.name] and offsets[a.name] + a.bytes <= plan.arena_bytes, f"{a.name} leaves the arena"
        for b in items[i + 1:]:
            if a.overlaps_in_time(b):
                oa, ob = offsets[a.name], offsets[b.name]
                assert oa + a.bytes <= ob or ob + b.bytes <= oa, f"{a.name} and {b.name} overlap while both alive"
