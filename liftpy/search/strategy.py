"""What the exploration loop asks of a search strategy.

A strategy is a class, passed to the loop as a value (``explore_operator(op, search=ModelSearch)``): the
loop makes one from the problem's ``Spaces`` and the seed, tells it what the store already holds and every
point measured since (``observe``), and asks it for points (``propose``).  What the loop does differently for
one strategy than for another is said here, by the class, not decided by its name:

* ``plans_ahead``: it proposes every point at once, and the loop keeps that plan on disk (drawing it solves
  the spaces of the variants it draws from) and measures it in one batch;
* ``saves_next_batch``: when the loop ends, the batch it would propose next is saved in the store, so that a
  resumed run measures it at once (``liftpy.explore.resume``);
* ``proposes_with_workers``: its proposals lower candidates and screen variants, worth worker processes
  beside a device whose kernels run on this host's CPUs (where no compile workers run);
* ``batch_size``, ``warm_up`` and ``phase``: points per proposal, what to start loading before the variants
  are derived, and what the progress line says meanwhile.

A strategy that learns from other problems of the same variants (``liftpy.explore.transfer``) also has
``hint``, ``learn_elsewhere`` and ``prefetch_elsewhere`` (``ModelSearch``).
"""

from __future__ import annotations

import abc
from typing import Sequence


class Strategy(abc.ABC):
    """The protocol of a search strategy, with the defaults of one that proposes points in batches."""

    name: str = "strategy"  # its name on the command line (``--search``) and in a saved batch's key
    phase: str = "drawing the points"  # what the progress line says while the first points are chosen
    plans_ahead: bool = False
    saves_next_batch: bool = False
    proposes_with_workers: bool = False

    def __init__(self, spaces, seed: int = 0):
        self.spaces = spaces

    @staticmethod
    def warm_up() -> None:
        """Started when an exploration starts, before its variants are derived: what the first proposal needs."""

    @staticmethod
    def batch_size(samples: int, jobs: int, width: int) -> int:
        """Points per proposal where the caller names none: ``samples`` asked for, ``jobs`` code-generation
        processes per device, ``width`` devices."""
        return samples

    @abc.abstractmethod
    def propose(self, n: int, taken: set) -> list[tuple[int, dict]]:
        """Up to ``n`` points (variant index, configuration) not in ``taken`` (variant, ``config_key``)."""

    def observe(self, i: int, config: dict, time_ms: float | None, kernel_ms: Sequence[float] | None = None) -> None:
        """Point (``i``, ``config``) was measured: ``time_ms``, or None where it failed; ``kernel_ms``: each of its
        kernels' times, where known."""

    def prepare(self, n: int) -> None:
        """The costly part of the next proposal (of ``n`` points) done now: a resumed run does it in a thread
        while the batch the run before saved is measured."""
