"""Half storage as a choice of the exploration (issue 57): which arrays of a variant live as half in memory.

The program stays the user's float program; a variant whose placements put an array ``in half``
(``Variant.placements``, as ``placeInImage`` puts an input in an image) keeps that array's elements as half in
global memory, read with ``vload_half`` and written with ``vstore_half_rte`` (``liftpy.codegen.half``), and
computes in float.  The arrays that may be so stored are the program's float inputs, the buffers between the
kernels of a pipeline (``letGlobal``'s intermediates, by the name ``split_kernels`` gives them) and the
result (``out``, or a program's several results ``out0``, ``out1``...).

``storeHalf(name)`` is the rule, a strategy of one result like ``place_in_image``: what it changes is not
the expression but where an array's values are rounded.  Its meaning is ``evaluate_stored``: the program
evaluated kernel by kernel, each half-stored array rounded to half where it is written (an input where the
host uploads it).  A kernel of the variant computes that within float rounding; the float program's result
is within ``precision.tolerance(fp16-storage, k)`` of it (``tests/test_half_storage.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np

from ..codegen.half import half_storable
from ..errors import RewriteError
from ..ir.expr import Call, Lambda, Literal, Program
from ..ir.interpreter import evaluate, prepare_inputs
from ..ir.kernels import split_kernels
from ..ir.precision import FP16, FP16_STORAGE, HALF_PLACEMENT, check_precision, half_arrays, variant_precision  # noqa: F401
from ..ir.typecheck import typecheck
from ..ir.types import ArrayType, Float, Half, TupleType, VectorType
from ..ir.userfun import UserFun
from .rule import TraceStep


def half_candidates(program: Program) -> list[str]:
    """The arrays of a (lowered) program that half storage may keep as half: float inputs, and the buffers
    its kernels write (intermediates and results) that hold floats, in order."""
    out = [p.name for p, t in zip(program.params, program.param_types) if half_storable(t)]
    for st in split_kernels(program):
        if half_storable(typecheck(st.program).type):
            out.append(st.output)
    return out


def store_half(name: str):
    """The strategy that keeps array ``name`` as half (none where it is placed already: in an image, or half)."""

    def go(v):
        if name in dict(v.placements):
            return []
        step = TraceStep("storeHalf", f"array {name}")
        return [replace(v, placements=tuple(sorted(v.placements + ((name, HALF_PLACEMENT),))), trace=v.trace + (step,))]

    return go


def half_storage_stage(each: bool = False):
    """The placement choices of precision fp16-storage: every float array of each variant stored as half (one
    variant for each), or with ``each``, every non-empty subset of them (2^k - 1 variants of a variant with k
    such arrays: which arrays to halve is then the search's to find)."""

    def go(v):
        names = [n for n in half_candidates(v.program) if n not in dict(v.placements)]
        out = [v]
        for n in names:
            step = store_half(n)
            out = [w for u in out for w in ([u] + step(u) if each else step(u))]
        return [w for w in out if w is not v] if names else [v]

    return go


def _round(value):
    if isinstance(value, tuple):
        return tuple(_round(v) for v in value)
    arr = np.asarray(value)
    return arr.astype(np.float16).astype(np.float32) if arr.dtype.kind == "f" else arr


def evaluate_stored(program: Program, placements, *args, sizes=None, **kwargs):
    """The meaning of a variant's half storage: ``program`` evaluated kernel by kernel (``split_kernels``),
    every array its ``placements`` keep as half rounded to half, the inputs before the first kernel reads them
    and each kernel's output as it is written.  With no half placement this is ``evaluate``."""
    placements = dict(placements or {})
    arrays, bindings = prepare_inputs(program, args, kwargs, sizes)
    env = {name: (_round(a) if placements.get(name) == HALF_PLACEMENT else a) for name, a in arrays.items()}
    size_values = {str(k): int(v) for k, v in bindings.items()}
    results = {}
    stages = split_kernels(program)
    for st in stages:
        inputs = {p.name: env[p.name] for p in st.program.params}
        value = evaluate(st.program, sizes=size_values, **inputs)
        if placements.get(st.output) == HALF_PLACEMENT:
            value = _round(value)
        env[st.output] = value
        if st.result is not None:
            results[st.result] = value
    if results:
        return tuple(results[k] for k in sorted(results))
    return env[stages[-1].output]


def precision_placements(precision: str) -> bool:
    """Whether variants of ``precision`` store arrays as half (fp16-storage and fp16 do)."""
    return check_precision(precision) in (FP16_STORAGE, FP16)


# ------------------------------------------------------------------------------------ half arithmetic


def _half_type(t):
    if t == Float:
        return Half
    if isinstance(t, VectorType) and t.scalar == Float:
        return VectorType(Half, t.width)
    if isinstance(t, ArrayType):
        return ArrayType(_half_type(t.elem), t.size)
    if isinstance(t, TupleType):
        return TupleType(tuple(_half_type(e) for e in t.elems))
    return t


def _to_half(e):
    if isinstance(e, Literal):
        return Literal(e.value, _half_type(e.type))
    if isinstance(e, Lambda):
        return Lambda(e.params, _to_half(e.body))
    if isinstance(e, Call):
        fn = e.fn
        if isinstance(fn, UserFun) and any(not isinstance(t, str) and _half_type(t) != t
                                           for t in (*fn.param_types, fn.result_type)):
            raise RewriteError(f"half arithmetic: the user function {fn.name} is declared on float "
                               f"({', '.join(map(str, fn.param_types))} -> {fn.result_type}); write it on the type "
                               "variable T (as add, mult) or keep the operator in fp16-storage")
        if isinstance(fn, Lambda):
            fn = _to_half(fn)
        elif dataclasses.is_dataclass(fn) and not isinstance(fn, UserFun):  # a primitive: its functions too
            fn = dataclasses.replace(fn, **{f.name: _to_half(getattr(fn, f.name)) for f in dataclasses.fields(fn)
                                            if isinstance(getattr(fn, f.name), (Lambda, Call, Literal))})
        return Call(fn, tuple(_to_half(a) for a in e.args))
    return e


def half_arithmetic(program: Program) -> Program:
    """``program`` computing in half: its float inputs, literals and (generic) user functions' values half
    (precision fp16).  A user function declared on float is refused (its C body computes in float)."""
    return Program(program.name, program.params, tuple(_half_type(t) for t in program.param_types),
                   _to_half(program.body))
