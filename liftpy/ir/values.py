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
from typing import Any, Callable, Mapping

import numpy as np
import sympy

from ..errors import LiftTypeError
from .types import Elements, TupleType, Type, VectorType, _cast, innermost, scalar_of, size_str, substitute_sizes


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


def leaves(data) -> list[np.ndarray]:
    """The arrays of a value, in component order (one for an array, one per component for tuples)."""
    if isinstance(data, tuple):
        return [a for d in data for a in leaves(d)]
    return [np.asarray(data)]


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


# --------------------------------------------------------------------------------------------------
# Arrays of tuples: a tuple of arrays here, an array of structs on the device


def _field_lanes(e) -> int | None:
    return int(e.width) if isinstance(e, VectorType) else None


def to_structs(data, t, shape: tuple[int, ...]) -> np.ndarray:
    """The array of structs (``t.dtype``, the device's layout) holding an array of tuples given as a
    tuple of arrays (one per component, each of ``shape`` plus the component's vector lanes)."""
    out = np.zeros(shape, dtype=t.dtype)
    for k, e in enumerate(t.elems):
        name = f"_{k}"
        if isinstance(e, TupleType):
            out[name] = to_structs(data[k], e, shape)
        elif _field_lanes(e) is not None:
            out[name][..., : _field_lanes(e)] = np.asarray(data[k])
        else:
            out[name] = np.asarray(data[k])
    return out


def from_structs(arr: np.ndarray, t):
    """The tuple of arrays an array of structs holds (the inverse of ``to_structs``)."""
    parts = []
    for k, e in enumerate(t.elems):
        field = arr[f"_{k}"]
        if isinstance(e, TupleType):
            parts.append(from_structs(field, e))
        elif _field_lanes(e) is not None:
            parts.append(np.ascontiguousarray(field[..., : _field_lanes(e)]))
        else:
            parts.append(np.ascontiguousarray(field))
    return tuple(parts)


# --------------------------------------------------------------------------------------------------
# Literals whose values are sizes


def literal_number(value, t: Type, bindings: Mapping):
    """A literal's value (as ``Literal.value`` holds it, for type ``t``) with the sizes' values put into the
    values that are sizes: what the interpreter computes with and the kernel prints.  An int literal of a
    size that is not a whole number there (``lit(N / 2)`` with N = 7) is an error saying what to write."""
    if isinstance(value, Elements):
        return Elements(literal_number(v, t.elem, bindings) for v in value)
    if isinstance(value, tuple):
        leaf = innermost(t)
        if isinstance(leaf, TupleType):
            return tuple(literal_number(v, e, bindings) for v, e in zip(value, leaf.elems))
        return value  # a vector's lanes (numbers)
    if not isinstance(value, sympy.Basic):
        return value
    v = substitute_sizes(value, bindings)
    if not v.is_number:
        missing = ", ".join(sorted(str(s) for s in v.free_symbols))
        raise LiftTypeError("value", f"the literal {size_str(value)} needs a value for {missing}")
    scalar = scalar_of(t)
    if scalar.name == "int":
        if not v.is_Integer:
            raise LiftTypeError("value", f"the int literal {size_str(value)} is {v} with {_values_text(value, bindings)}, "
                                         f"not a whole number: write floor{_parenthesized(value)} or lit(..., Float)")
        try:
            return _cast(int, int(v), t)
        except ValueError as e:
            raise LiftTypeError("value", str(e)) from None
    return float(np.float32(float(v)))  # a float's value, so that the kernel's constant is the interpreter's


def _parenthesized(value) -> str:
    text = size_str(value)
    return text if text.startswith("(") else f"({text})"


def _values_text(value, bindings: Mapping) -> str:
    names = {str(s) for s in value.free_symbols}
    return ", ".join(f"{k} = {v}" for k, v in sorted(bindings.items(), key=lambda kv: str(kv[0])) if str(k) in names)
