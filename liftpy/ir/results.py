"""Programs with several results: ``tuple(a, b, ...)``, a primitive of the table in ``liftpy.ir.primitives``
(kept here: that module is long enough).

A program may return several arrays, of different lengths and element types: a reduction's result and an
elementwise map, say.  Its body (under the ``let``s that bind what the results share) is then
``tuple(a, b)``, of type ``([float]1, [float]N)``; the interpreter returns a Python tuple of numpy arrays,
``ir.kernels.split_kernels`` makes one kernel per result (each writing a buffer of its own, ``out0``,
``out1``, ...) after the kernels of the shared intermediates, and a pipeline run returns the tuple of the
buffers read back.  In the embedded DSL a program returns a Python tuple: ``return (total, scaled)``.

A tuple of arrays has no memory layout (an array of tuples has: an array of structs), so ``tuple`` is only
a program's result: the type checker refuses it anywhere else (inside a map, as a primitive's argument),
saying what to write instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .expr import Call, Expr, Lambda, Var
from .prims.base import Primitive
from .prims.memory import Let, ToGlobal
from .types import TupleType
from .values import BV

WHERE = ("tuple(...) makes a program's several results, so it may only be what the program returns (its body, "
         "under the lets that bind what the results share)")


@dataclass(frozen=True, eq=True)
class Results(Primitive):
    """``tuple(a, b, ...)``: ``A, B, ... -> (A, B, ...)``, the several results of a program."""

    name: ClassVar[str] = "tuple"
    kind: ClassVar[str] = "result"
    nargs: ClassVar[int] = -1

    def typecheck(self, args, tc):
        if not tc.at_result:
            tc.fail(f"{WHERE}; inside a function return one value (a tuple of scalars comes from a user function "
                    "returning Tuple(...), an array of tuples from zip)")
        if len(args) < 2:
            tc.fail(f"a program returns two or more results, got {len(args)}")
        for i, t in enumerate(args):
            if isinstance(t, TupleType):
                tc.fail(f"result {i} is itself a tuple ({t}): list every result in one tuple(...)")
        return TupleType(tuple(args))

    def evaluate(self, args, ev):
        return BV(tuple(a.data for a in args), args[0].batch)


def is_results(e) -> bool:
    return isinstance(e, Call) and isinstance(e.fn, Results)


def result_parts(body: Expr) -> tuple[list[tuple[Var, Expr]], tuple[Expr, ...]] | None:
    """The ``let``s above a program's ``tuple`` of results, outermost first, each as (variable, value) with
    the value's ``toGlobal`` (a kernel boundary) taken off, and the results; None for a program with one
    result."""
    lets = []
    while isinstance(body, Call) and isinstance(body.fn, Let):
        value = body.args[0]
        if isinstance(value, Call) and isinstance(value.fn, ToGlobal):
            value = value.args[0]
        lets.append((body.fn.f.params[0], value))
        body = body.fn.f.body
    if not is_results(body):
        return None
    return lets, body.args


def with_lets(lets: list[tuple[Var, Expr]], e: Expr) -> Expr:
    """``e`` under those of ``lets`` (outermost first) it needs, directly or through another one it needs."""
    for v, value in reversed(lets):
        if v.name in e.free_vars:
            e = Call(Let(Lambda((v,), e)), (value,))
    return e
