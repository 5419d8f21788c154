"""Low-level passes over the statement IR (``liftpy.codegen.stmt``), each a pure ``Kernel -> Kernel``.

They run in this order, each with one job (as TVM's ``tir.transform`` passes do):

0. ``merge_barriers`` drops the barriers that separate only writes to local memory;
   ``pipeline_copies`` issues the global loads of the next step's tiles before the current step computes,
   and alternates the halves of double-buffered tiles (``toLocalDouble``), one barrier per step;
   ``lower_copies`` gives cooperative copies into local memory their order, vector width and share of
   each work-item, now that the work-group size is known;
1. ``simplify``: indices and conditions simplified with the ranges of the loop variables in scope;
   ``guards``: inside a conditional read's branch, what its condition proves (a stencil's clamps inside
   the border it keeps) simplified away;
2. ``eliminate_divmod``: a sequential loop whose counter is divided or reduced modulo a constant is split
   into nested loops, so the division and the modulus disappear (Romou's address-calculation
   elimination).  It runs on the loop nest before unrolling, as Romou's algorithm does: each trial split
   simplifies the statements of the loop body again, and before unrolling that body holds each
   statement once, not once per copy (after unrolling, the trials were a fifth of code generation);
3. ``privatize``: private arrays of a work-group's items shrink to the part each item touches.  It too
   runs on the loop nest: an access's part is its index without the local ids, and unrolling turns that
   part into the same constants it turns the whole index into (after unrolling, the pass read every
   access of every copy, and rebuilt every statement);
4. ``unroll``: loops marked for unrolling (and loops of one iteration) become copies of their body, each
   simplified again for the constant its counter became, in the same walk (substituting into the views'
   raw indices instead, every copy rebuilt through sympy's assumptions, took half of code generation's
   time); those its policy leaves to the OpenCL compiler (a register block's reduction steps, moves
   between registers) stay loops marked ``#pragma unroll``;
   ``guard_runs``: a run of stores each guarded (a stencil's run of a row) under one guard, so that the
   interior's reads are plain and load as vectors;
5. ``vectorize``: lane-built vectors over contiguous memory become vector loads, runs of scalar stores
   to consecutive addresses become vector stores, and accesses proven aligned are marked so;
6. ``hoist``: divisions, moduli and the loop-invariant part of each address are computed once, before the
   outermost loop they do not depend on.

Printing to OpenCL C (``liftpy.codegen.render``) comes after them.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..stmt import Kernel
from .barriers import merge_barriers
from .copies import lower_copies
from .divmod import eliminate_divmod
from .guards import guards
from .hoist import hoist
from .pipeline import pipeline_copies
from .privatize import privatize
from .runs import guard_runs
from .simplify import simplify
from .unroll import POLICIES as UNROLL_POLICIES
from .unroll import policy as unroll_policy
from .unroll import unroll
from .unroll import use_policy as use_unroll_policy
from .vectorize import vectorize

Pass = Callable[[Kernel], Kernel]

DEFAULT_PASSES: tuple[Pass, ...] = (merge_barriers, pipeline_copies, lower_copies, simplify, guards, eliminate_divmod, privatize, unroll, guard_runs, vectorize, hoist)


def run_passes(kernel: Kernel, passes: Sequence[Pass] = DEFAULT_PASSES) -> Kernel:
    for p in passes:
        kernel = p(kernel)
    return kernel


__all__ = ["DEFAULT_PASSES", "Pass", "run_passes", "merge_barriers", "pipeline_copies", "lower_copies", "unroll", "privatize", "simplify", "guards", "guard_runs", "vectorize", "eliminate_divmod", "hoist",
           "UNROLL_POLICIES", "unroll_policy", "use_unroll_policy"]
