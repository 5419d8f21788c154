"""Values of the reference interpreter.

The interpreter is *batched*: a ``map`` does not loop in Python but evaluates its function once on the
whole array, with the mapped axis turned into a batch axis.  A value is therefore a tree of numpy arrays
(nested tuples mirror tuple types; an array of tuples is stored as a tuple of arrays) together with the
batch shape of the context it lives in.  Every leaf has that batch shape as the prefix of its shape, so
the array axis a primitive works on is always ``len(batch)``.  Broadcasting a value into a deeper context
uses ``np.broadcast_to``, which copies nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class BV:
    data: Any  # np.ndarray or tuple of data
    batch: tuple[int, ...]

    @property
    def axis(self) -> int:
        return len(self.batch)

    def length(self) -> int:
        """Length of the array this value holds (its first non-batch axis)."""
        leaf = first_leaf(self.data)
        if leaf.ndim <= self.axis:
            raise ValueError("value is not an array")
        return leaf.shape[self.axis]


def tmap(fn: Callable[[np.ndarray], np.ndarray], data):
    if isinstance(data, tuple):
        return tuple(tmap(fn, d) for d in data)
    return fn(data)


def first_leaf(data) -> np.ndarray:
    while isinstance(data, tuple):
        data = data[0]
    return data


def lift(v: BV, batch: tuple[int, ...]) -> BV:
    """Broadcast ``v`` into a context whose batch shape extends ``v.batch``."""
    if v.batch == batch:
        return v
    k = len(v.batch)
    if batch[:k] != v.batch:
        raise AssertionError(f"batch {v.batch} is not a prefix of {batch}")
    extra = len(batch) - k

    def go(a: np.ndarray) -> np.ndarray:
        a = a.reshape(a.shape[:k] + (1,) * extra + a.shape[k:])
        return np.broadcast_to(a, batch + a.shape[k + extra :])

    return BV(tmap(go, v.data), batch)


def fill_batch(v: BV) -> BV:
    """Make every leaf carry the full batch shape (a function may ignore its argument)."""

    def go(a: np.ndarray) -> np.ndarray:
        k = len(v.batch)
        if a.shape[:k] == v.batch:
            return a
        return np.broadcast_to(a, v.batch + a.shape[k:])

    return BV(tmap(go, v.data), v.batch)


def at_axis(v: BV, fn: Callable[[np.ndarray, int], np.ndarray]) -> BV:
    """Apply ``fn(leaf, axis)`` to every leaf, where axis is the value's array axis."""
    ax = v.axis
    return BV(tmap(lambda a: fn(a, ax), v.data), v.batch)
