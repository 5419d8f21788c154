"""What a CPU executes for a point: operations counted on the statement IR the emitter hands to the driver.

On a GPU the analytical formula's terms are rates (flops, bytes through each level of memory), and what
the symbolic counts (``liftpy.model.counts``) miss is how a warp's requests are served
(``liftpy.model.access``).  On a CPU (PoCL) the rates explain little: the reduced VGG-16 layer 7's uniform
store of 993 points, every one of them reading inputs of 10 KiB that stay in the first-level cache, ranks
at Kendall tau 0.52 under that formula, and its rates refitted to the store reach 0.56.  What the time
follows there is instructions: the private values the code reads (a register block whose elements the
privatization pass left in an array is read from memory), the address arithmetic the passes left in the
loops, the padding checks of a conditional read, and the copies into local memory, which PoCL runs as a
loop over the work-items of a group each storing its share: with one or two work-items a copy is a
straight loop of stores, with 256 it is a loop over work-items around each one's few strided elements,
and the measured cost of an element grew with the logarithm of the group's size.

So the counts are read off the final statement IR (all of ``DEFAULT_PASSES``: what privatization,
unrolling, vectorization and hoisting left), each statement weighted by the extents of the loops around
it, over the whole NDRange:

- ``private_reads``: reads of private memory (scalars and arrays);
- ``address_ops``: the arithmetic of the indices of every read and store, of the conditions, and of the
  integer definitions the hoisting pass made (a sum or product of n terms n - 1, a minimum, maximum,
  selection, division, remainder or comparison one);
- ``conditional_reads``: reads guarded by a condition (padding, partial tiles);
- ``local_writes``: stores into local memory (a vector store is one);
- ``image_calls``: calls of ``read_imagef``, which PoCL emulates in software: the symbolic counts take the
  copies of an unrolled body to share a read, as a compiler shares a load, but a call is made in each copy
  (on that store, 1 to 8 times as many reads as the symbolic count's elements, 1.1 at the median).

``liftpy.model.analytical`` weighs them, with the launches, into a CPU's time.  On that store the weighted
counts rank the points at 0.699 with their weights fitted to it, at 0.688 with the weights fitted to half
of its kinds of variant and ranking the other half, and a store of another layer that the fit never saw
at 0.653 (module docstring of ``liftpy.model.analytical``).  Like the access factors, the counts belong to
one configuration: a search ranks its candidates with those of one configuration per variant, as shares of
the variant's symbolic counts (``model_code``), and counts them again at each point it is about to
measure.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

from .. import arith as A
from ..arith.expr import sympy_args
from ..codegen import stmt as S
from ..codegen.kernel import lower_pipeline
from ..codegen.passes.runs import with_borders
from ..views import view as V


class OperationCounts(NamedTuple):
    """One kernel's operations over its whole NDRange (module docstring)."""

    private_reads: float = 0.0
    address_ops: float = 0.0
    conditional_reads: float = 0.0
    local_writes: float = 0.0
    image_calls: float = 0.0


_SELECTS = (A.Min, A.Max, A.FloorDiv, A.Mod, A.CDiv, A.CMod, A.Rel)


def _arithmetic(e) -> int:
    """The operations an index or condition computes: a sum or product of n terms is n - 1, a minimum,
    maximum, division, remainder or comparison one.  Counted on the nodes as sympy held them (a floor
    division over its rational sum), as the model was fitted."""
    if not isinstance(e, A.Expr) or not e.args:
        return 0
    n = 0
    stack = [e]
    while stack:
        x = stack.pop()
        if x.is_add or x.is_mul:
            n += len(x.args) - 1
        elif isinstance(x, _SELECTS):
            n += 1
        stack.extend(sympy_args(x))
    return n


class _Tally:
    def __init__(self):
        self.private = self.address = self.conditional = self.local = self.image = 0

    def value(self, r: V.Read, times: int) -> None:
        for x in V.walk_reads(r):
            if isinstance(x, V.MemRead):
                self.address += _arithmetic(x.index) * times
                if x.buffer.space == "private":
                    self.private += times
            elif isinstance(x, V.ImageRead):
                self.image += times
                self.address += (_arithmetic(x.x) + _arithmetic(x.y)) * times
            elif isinstance(x, V.CondRead):
                self.conditional += times
                self.address += _arithmetic(x.cond) * times

    def block(self, block: S.Block, times: int) -> None:
        for s, border in with_borders(block.items):
            if isinstance(s, S.Loop):
                self.block(s.body, times * s.extent)
            elif isinstance(s, S.If):
                self.address += _arithmetic(s.cond) * times
                if not border:  # (a run's border: every item decides it, few take it)
                    self.block(s.body, times)
            elif isinstance(s, S.Block):
                self.block(s, times)
            elif isinstance(s, S.Store):
                self.address += _arithmetic(s.index) * times
                if s.buffer.space == "local":
                    self.local += times
                self.value(s.value, times)
            elif isinstance(s, S.IndexDef):
                self.address += _arithmetic(s.value) * times


def kernel_operations(kernel: S.Kernel) -> OperationCounts:
    """The operations of one kernel's statement IR (module docstring)."""
    tally = _Tally()
    tally.block(kernel.body, 1)
    return OperationCounts(float(tally.private), float(tally.address), float(tally.conditional), float(tally.local), float(tally.image))


def operation_counts(program, bindings: Mapping, placements: Mapping[str, str] | None = None) -> tuple[OperationCounts, ...]:
    """The operations of each kernel of a lowered program, at concrete sizes and parameter values, as the
    emitter generates its code (``placements``: the variant's)."""
    return tuple(kernel_operations(k.ir) for k in lower_pipeline(program, bindings, placements=placements))
