"""The inputs of a program at given sizes: their numpy shapes, and deterministic random data.

One place for what every consumer needs (the exploration engine's operators, ``liftpy run``, the
networks, the tests): an input of type ``[[T]W]H`` is an array of shape ``(H, W)`` plus ``T``'s vector
lanes, and an array of tuples is a tuple of arrays, one per component, as the interpreter keeps it.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import InputError
from .expr import Program
from .typecheck import typecheck
from .types import ArrayType, TupleType, Type, VectorType, free_size_symbols, innermost, scalar_of, subs_type, with_leaf

INPUT_BYTES_LIMIT = 64 * 2**30  # beyond what any machine this runs on holds: refuse before numpy tries


def _shape(name: str, program: Program, t: Type, bind: Mapping[str, int]) -> tuple[int, ...]:
    tt = subs_type(t, {s: bind[str(s)] for s in free_size_symbols(t) if str(s) in bind})
    shape = []
    while isinstance(tt, ArrayType):
        if not tt.size.is_Integer:
            raise InputError(f"input {name} of {program.name}: no value for the size {tt.size}; give it with -s")
        shape.append(int(tt.size))
        tt = tt.elem
    if isinstance(tt, VectorType):
        shape.append(int(tt.width))
    if any(n < 1 for n in shape):
        raise InputError(f"input {name} of {program.name} would have shape {tuple(shape)}; every length must be positive")
    return tuple(shape)


def input_shapes(program: Program, sizes: Mapping[str, int]) -> list[tuple[int, ...]]:
    """The numpy shape of each input of a program at given sizes (a vector element adds its lanes; for an
    array of tuples, the shape of the array)."""
    bind = {k: int(v) for k, v in sizes.items()}
    return [_shape(p.name, program, t, bind) for p, t in zip(program.params, program.param_types)]


def random_inputs(program: Program, sizes: Mapping[str, int], seed: int = 0) -> list:
    """Deterministic standard-normal inputs of a program's types; int arrays get integers from 0 up to 5 and
    below the shortest outer length of any input, so that they are valid indices of a gather into any of
    them.  An array of tuples gets a tuple of such arrays."""
    rng = np.random.default_rng(seed)
    bind = {k: int(v) for k, v in sizes.items()}
    shapes = input_shapes(program, sizes)
    lengths = [shape[0] for shape, t in zip(shapes, program.param_types) if isinstance(t, ArrayType)]
    top = max(0, min([5] + [n - 1 for n in lengths]))

    def make(name: str, t: Type):
        leaf = innermost(t)
        if isinstance(leaf, TupleType):
            return tuple(make(f"{name}._{k}", with_leaf(t, e)) for k, e in enumerate(leaf.elems))
        shape = _shape(name, program, t, bind)
        nbytes = np.prod(shape, dtype=float) * 4
        if nbytes > INPUT_BYTES_LIMIT:
            raise InputError(f"input {name} of {program.name} would have shape {shape} "
                             f"({nbytes / 2**30:.3g} GiB); choose smaller sizes")
        s = scalar_of(t)
        try:
            if s is not None and s.name == "int":
                return rng.integers(0, top + 1, size=shape).astype(np.int32)
            return rng.standard_normal(shape).astype(np.float32)
        except MemoryError:
            raise InputError(f"input {name} of {program.name} of shape {shape} ({nbytes / 2**30:.3g} GiB) does not fit in "
                             "this machine's memory; choose smaller sizes") from None

    return [make(p.name, t) for p, t in zip(program.params, program.param_types)]


def least_traffic(program: Program, sizes: Mapping[str, int]) -> int:
    """The bytes an implementation must move at the least: every input read once and the output written once
    (the "minimal traffic" GB/s and a roofline fraction are computed from)."""
    bind = {k: int(v) for k, v in sizes.items()}

    def nbytes(t: Type) -> int:
        tt = subs_type(t, {s: bind[str(s)] for s in free_size_symbols(t) if str(s) in bind})
        count = 1
        while isinstance(tt, ArrayType):
            count *= int(tt.size)
            tt = tt.elem
        leaves = tt.elems if isinstance(tt, TupleType) else (tt,)
        return count * sum(np.dtype(scalar_of(e).dtype).itemsize * (int(e.width) if isinstance(e, VectorType) else 1)
                           for e in leaves)

    output = typecheck(program, bindings=bind).type
    return sum(nbytes(t) for t in program.param_types) + nbytes(output)
