"""A variant: one program the exploration derived, with what its derivation added (tuning parameters,
requirements on the sizes, placements of inputs, the trace of the rules)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..ir.analysis import is_lowered
from ..ir.expr import Program
from ..ir.printer import show_program
from .rule import Requirement, TraceStep


@dataclass(frozen=True)
class Variant:
    program: Program
    params: tuple[sympy.Symbol, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    placements: tuple[tuple[str, str], ...] = ()
    trace: tuple[TraceStep, ...] = ()
    lower_bounds: tuple[tuple[str, int], ...] = ()  # parameters whose smallest value is not 1

    @property
    def key(self):
        return (self.program, self.placements)

    @property
    def placement_map(self) -> dict[str, str]:
        return dict(self.placements)

    @property
    def lowered(self) -> bool:
        return is_lowered(self.program)

    def text(self) -> str:
        lines = [show_program(self.program)]
        lines.append(f"// parameters: {', '.join(map(str, self.params)) or 'none'}")
        if self.placements:
            lines.append("// placement: " + ", ".join(f"{k} in {v}" for k, v in self.placements))
        for r in self.requirements:
            lines.append(f"// requires: {r.message}")
        lines.append("// rules: " + ("; ".join(str(s) for s in self.trace) or "none"))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

