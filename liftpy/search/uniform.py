"""Uniform search: a variant drawn uniformly, then a configuration drawn uniformly from the variant's valid
space (constraint inference and the solver, ``Spaces``); the baseline of the model search, deterministic for
a seed.  The exploration proposes all of its points at once (``plans_ahead``) and keeps that plan on disk.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

from ..results.store import config_key
from .spaces import Spaces
from .strategy import Strategy
from .variants import variant_id


@dataclass(frozen=True)
class Point:
    variant_id: str
    variant_index: int
    config: dict


class UniformSearch(Strategy):
    """Uniform sampling over (variant, configuration), as ``choose_points`` always did: every point proposed
    at once (module docstring)."""

    name = "uniform"
    plans_ahead = True

    def __init__(self, spaces: Spaces, seed: int = 0):
        self.spaces = spaces
        self.rng = random.Random(seed)
        self.order = list(range(len(spaces.variants)))
        self.rng.shuffle(self.order)
        self.cursor = 0
        self.pools: dict[int, list] = {}
        self.taken: dict[int, set] = {}
        self.dead: set[int] = set()

    def propose(self, n: int, taken: set) -> list[tuple[int, dict]]:
        out: list[tuple[int, dict]] = []
        order = self.order
        while len(out) < n and len(self.dead) < len(order):
            i = order[self.cursor % len(order)]
            self.cursor += 1
            if i in self.dead:
                continue
            counted = self.spaces.counted(i)
            if counted is None:
                self.dead.add(i)
                continue
            mine = self.taken.setdefault(i, set())
            if not self.pools.get(i):
                # A variant's first draw is small so that the points spread over the variants; when few
                # variants are valid, their pools are drawn again, larger, without the points already taken.
                valid = counted.size.valid
                if len(mine) >= valid:
                    self.dead.add(i)
                    continue
                want = min(valid, max(4, n // 8, 2 * len(mine)))
                fresh = [c for c in self.spaces.sample(i, want, self.rng.randrange(2**31)) if config_key(c) not in mine]
                self.rng.shuffle(fresh)
                self.pools[i] = fresh
                if not fresh:
                    self.dead.add(i)
                    continue
            config = self.pools[i].pop()
            mine.add(config_key(config))
            if (i, config_key(config)) in taken:
                continue
            out.append((i, config))
        return out

    def observe(self, i: int, config: dict, time_ms: float | None, kernel_ms: Sequence[float] | None = None) -> None:
        pass  # what was measured changes nothing of a uniform draw



def choose_points(variants: Sequence, sizes, samples: int, profile, seed: int) -> list[Point]:
    """``samples`` distinct points drawn uniformly (``UniformSearch``): deterministic for a seed.
    ``sizes``: the problem's sizes (an operator's ``sizes()``)."""
    strategy = UniformSearch(Spaces(variants, dict(sizes), profile, seed), seed)
    return [Point(variant_id(variants[i]), i, c) for i, c in strategy.propose(samples, set())]
