"""How well a kernel's global reads coalesce: the cache lines a warp's requests touch per byte asked for.

The symbolic counts (``liftpy.model.counts``) say how many bytes each work-item reads from global memory,
not how the reads of neighbouring work-items fall together.  On a GPU that decides the cost: a warp's
request is served line by line (128 bytes), so 32 work-items reading 32 consecutive floats cost one line;
reading one float each from 32 rows apart cost 32 lines for the same bytes.  Two SGEMM variants that
differ only in whether their column map is dimension 0 or 2 measure 0.39 and 4.3 ms on the H100, and a
model without this ranks the two alike.

The answer is read off the statement IR (``liftpy.codegen.stmt``), where every global read is a
``MemRead`` with an index over loop variables: TMModel's reasoning from the access analysis, with the
emitter's own index functions instead of a second derivation of the views.  For a work-group's first warp
(the first 32 work-items, dimension 0 fastest) at a few sampled iterations of the loops around it, each
read is one request, and the factor of a kernel is

    lines touched * 128 bytes / bytes the work-items asked for

over its requests, each weighted by how often it executes: 1 for coalesced reads and for a float every
work-item shares, up to 32 for scattered floats.  (Counting 32-byte sectors instead, or letting the copies
of an unrolled body share lines, made the formula alone rank the H100 stores' uniform points worse: with
sectors, mean Kendall tau 0.52 against 0.56 over four workloads.)  A factor belongs to one configuration;
the search computes it, on a GPU, at one configuration per variant (``Spaces.model``), so it tells
variants apart (which loop is dimension 0, which layout a tile is read from), not the configurations of
one variant (a register block's stride), which the learned correction sees in the measurements.
"""

from __future__ import annotations

import math
import random
from typing import Mapping

import sympy

from ..codegen import stmt as S
from ..ir.levels import Level
from ..views import view as V

LINE = 128  # bytes: the unit in which a warp's request is served from the L1 cache
WARP = 32
SAMPLES = 3  # sampled iterations of the loops around each group of reads

_NUMERIC = {"CDiv": lambda a, d: int(a) // int(d), "CMod": lambda a, d: int(a) % int(d),
            "floor": math.floor, "Min": min, "Max": max, "Mod": lambda a, d: a % d}


def _lanes(dims: tuple[int, int, int]) -> list[tuple[int, ...]]:
    """The local ids of a work-group's first warp, dimension 0 fastest."""
    out = []
    for linear in range(min(WARP, dims[0] * dims[1] * dims[2])):
        out.append((linear % dims[0], (linear // dims[0]) % dims[1], linear // (dims[0] * dims[1])))
    return out


def _index_fn(expr: sympy.Expr):
    syms = sorted(expr.free_symbols, key=str)
    fn = sympy.lambdify(syms, expr, modules=[_NUMERIC, "math"])
    return syms, fn


class _Tally:
    def __init__(self, local_size: tuple[int, ...], rng: random.Random):
        self.local = tuple(local_size) + (1,) * (3 - len(local_size))
        self.lanes = _lanes(self.local)
        self.rng = rng
        self.moved = 0.0  # bytes of the lines the warps' requests touch, weighted by executions
        self.asked = 0.0  # bytes the work-items asked for, weighted the same
        self._fns: dict = {}

    def fn(self, expr):
        f = self._fns.get(expr)
        if f is None:
            f = self._fns[expr] = _index_fn(expr)
        return f

    def reads(self, loops: list[S.Loop], reads: list[V.MemRead]) -> None:
        """The global reads of one statement inside ``loops``, each a request of the whole warp."""
        weight = 1.0
        for lp in loops:
            if lp.level is Level.SEQ:
                weight *= lp.extent
        # Every warp of the kernel runs the same requests: the number of warps cancels in the ratio.
        for _ in range(SAMPLES):
            env = {}
            offset = {}  # a work-group of the NDRange, the same for all the warp's work-items
            for lp in loops:
                if lp.level in (Level.SEQ, Level.WRG):
                    env[lp.var] = self.rng.randrange(max(1, lp.extent))
                elif lp.level is Level.GLB:
                    d = lp.dim
                    offset[lp.var] = self.local[d] * self.rng.randrange(max(1, lp.extent // self.local[d]))
            lanes = []
            for lane in self.lanes:
                e = dict(env)
                for lp in loops:
                    if lp.level in (Level.LCL, Level.GLB):
                        e[lp.var] = lane[lp.dim] + offset.get(lp.var, 0)
                        if e[lp.var] >= lp.extent:
                            break
                else:
                    lanes.append(e)
            for r in reads:
                syms, fn = self.fn(r.index)
                nbytes = r.buffer.scalar.nbytes * r.width
                lines: set = set()
                asked = 0
                for e in lanes:
                    try:
                        start = int(fn(*[e.get(x, 0) for x in syms])) * r.buffer.scalar.nbytes
                    except (TypeError, ValueError, ZeroDivisionError):
                        continue
                    lines.update(range(start // LINE, (start + nbytes - 1) // LINE + 1))
                    asked += nbytes
                if asked:
                    self.moved += weight * len(lines) * LINE / SAMPLES
                    self.asked += weight * asked / SAMPLES

    @property
    def factor(self) -> float:
        return self.moved / self.asked if self.asked else 1.0


def kernel_factor(kernel: S.Kernel, local_size: tuple[int, ...] | None, seed: int = 0) -> float:
    """The coalescing factor of one kernel's global reads (module docstring).  ``local_size``: the
    launch's work-group; None (the driver's choice, for ``mapGlb`` kernels) counts 32 work-items along
    dimension 0."""
    if local_size is None:
        extents = {}
        for lp in S.parallel_loops(kernel.body):
            extents[lp.dim] = max(extents.get(lp.dim, 1), lp.extent)
        local_size = (min(WARP, extents.get(0, 1)), 1, 1)
    tally = _Tally(tuple(local_size), random.Random(seed))

    def visit(block: S.Block, loops: list[S.Loop]) -> None:
        for s in block.items:
            if isinstance(s, S.Loop):
                visit(s.body, loops + [s])
            elif isinstance(s, (S.If, S.Block)):
                visit(s.body if isinstance(s, S.If) else s, loops)
            elif isinstance(s, S.Store):
                tally.reads(loops, [r for r in S.reads(s.value) if isinstance(r, V.MemRead) and r.buffer.space == "global"])

    visit(kernel.body, [])
    return tally.factor


def coalescing_factors(program, bindings: Mapping) -> tuple[float, ...]:
    """The coalescing factor of each kernel of a lowered program at concrete sizes and parameter values."""
    from ..codegen.kernel import generate_pipeline
    from ..codegen.passes import DEFAULT_PASSES, eliminate_divmod, hoist

    # Before the address-arithmetic passes: indices are then plain expressions over loop variables.
    passes = tuple(p for p in DEFAULT_PASSES if p not in (eliminate_divmod, hoist))
    out = []
    for ks, _ in generate_pipeline(program, bindings, passes=passes):
        out.append(kernel_factor(ks.ir, ks.launch.local_size))
    return tuple(out)
