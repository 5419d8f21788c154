"""Placement, the last stage of the exploration: inputs ``[[[float]C]W]H`` with ``C % 4 == 0`` may be read
through an OpenCL image; with half storage, the arrays left in buffers may be stored as half."""

from __future__ import annotations

from dataclasses import replace

import sympy

from ..ir.expr import Program
from ..ir.types import ArrayType, Float, innermost
from .half import half_storage_stage
from .options import ExploreOptions
from .rule import Requirement, TraceStep
from .strategy import Strategy, optional, seq
from .variant import Variant


def image_candidates(program: Program) -> list[str]:
    out = []
    for p, t in zip(program.params, program.param_types):
        if isinstance(t, ArrayType) and len(t.dims) == 3 and innermost(t) == Float:
            c = t.dims[2]
            if c.is_Integer and int(c) % 4 == 0 or not c.is_Integer:
                out.append(p.name)
    return out


def place_in_image(name: str) -> Strategy:
    def go(v: Variant) -> list[Variant]:
        if name in dict(v.placements):
            return []
        step = TraceStep("placeInImage", f"input {name}")
        reqs = ()
        t = v.program.inputs[name]
        c = t.dims[2]
        if not c.is_Integer:
            reqs = (Requirement(sympy.Eq(sympy.Mod(c, 4), 0), f"image input {name} packs {c} channels by four", "placeInImage"),)
        return [replace(v, placements=tuple(sorted(v.placements + ((name, "image"),))), trace=v.trace + (step,), requirements=v.requirements + reqs)]

    return go


def placement_stage(program: Program, opts: ExploreOptions) -> Strategy:
    if opts.precision == "fp16-storage":  # (half storage: after the images, of the arrays left in buffers)
        return seq(placement_stage(program, replace(opts, precision="fp32")), half_storage_stage(opts.half_each))
    if not opts.images:
        return lambda v: [v]
    return seq(*[optional(place_in_image(name)) for name in image_candidates(program)])

