"""The memory plan of a kernel: every buffer it reads or writes, with its address space and size.

Sizes are kept both symbolically (from the program's types, over size variables and tuning parameters)
and as numbers for the values the kernel is specialized for.  Layout primitives never appear here: they
are views.  A plan with only inputs, outputs and private accumulators is the proof that a kernel's data
rearrangement is free.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..ir.types import ScalarType, TupleType, Type
from ..views.view import cached_hash


@cached_hash
@dataclass(frozen=True)
class Buffer:
    name: str
    space: str  # 'global', 'local', 'private' or 'image'
    scalar: ScalarType | TupleType  # the element: a scalar, or the struct of a tuple
    count: int  # number of elements
    symbolic: sympy.Expr  # the same count over the program's size variables
    role: str  # 'input', 'output', 'accumulator' or 'temporary'
    type: Type  # the (symbolic) type of the value stored
    stored: str | None = None  # "half": floats kept as halves in memory (liftpy.codegen.half)

    @property
    def nbytes(self) -> int:
        return self.count * (2 if self.stored == "half" else self.scalar.nbytes)

    @property
    def is_scalar_variable(self) -> bool:
        """A private buffer of one scalar is emitted as a plain variable."""
        return self.space == "private" and self.count == 1


@dataclass(frozen=True)
class MemoryPlan:
    buffers: tuple[Buffer, ...]

    def of_space(self, space: str) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.space == space)

    def of_role(self, role: str) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.role == role)

    @property
    def device_bytes(self) -> int:
        """Bytes the host allocates on the device: global buffers and images."""
        return sum(b.nbytes for b in self.buffers if b.space in ("global", "image"))

    @property
    def local_bytes(self) -> int:
        return sum(b.nbytes for b in self.buffers if b.space == "local")

    @property
    def private_bytes(self) -> int:
        """Private memory per work-item (a lower bound on its register use)."""
        return sum(b.nbytes for b in self.buffers if b.space == "private")

    def table(self) -> str:
        rows = [f"{'buffer':<16}{'space':<9}{'role':<13}{'type':<28}{'scalars':>10}  symbolic"]
        for b in self.buffers:
            rows.append(f"{b.name:<16}{b.space:<9}{b.role:<13}{str(b.type):<28}{b.count:>10}  {b.symbolic}")
        return "\n".join(rows)


def struct_definition(t: TupleType) -> str:
    """The C struct of a tuple type (fields ``_0``, ``_1``, ...) and its constructor ``make_NAME``, which
    assembles a tuple from components that are not one struct in memory (a zip's element)."""
    name = t.c_name
    fields = " ".join(f"{e.c_name} _{i};" for i, e in enumerate(t.elems))
    params = ", ".join(f"{e.c_name} _{i}" for i, e in enumerate(t.elems))
    values = ", ".join(f"_{i}" for i in range(len(t.elems)))
    return (f"typedef struct {{ {fields} }} {name};\n"
            f"{name} make_{name}({params}) {{\n  {name} t = {{ {values} }};\n  return t;\n}}")
