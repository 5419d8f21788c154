"""Tables of results of the passes' pure functions, for one generation.

Code generation asks the same questions of the same statements and indices many times (every unrolled
copy, every pass); a pass keeps the answers in a ``Memo``, and ``clear_memos`` empties every table when a
program's kernels are generated: what a kernel's passes ask is mostly about its own indices, and tables
that kept every configuration's entries made each lookup slower and each collection longer."""

from __future__ import annotations


class Memo:
    """A table emptied when it grows past ``limit`` entries (a long search meets millions of indices)."""

    instances: list = []  # every memo made, for ``clear_memos``

    def __init__(self, limit: int = 200_000):
        self.table: dict = {}
        self.limit = limit
        Memo.instances.append(self)

    def get(self, key, compute):
        hit = self.table.get(key)
        if hit is None:
            if len(self.table) > self.limit:
                self.table.clear()
            hit = self.table[key] = compute()
        return hit


def clear_memos() -> None:
    for m in Memo.instances:
        m.table.clear()
