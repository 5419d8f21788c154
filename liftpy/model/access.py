"""How a warp's memory requests are served: the cache lines its global reads touch, and the bank conflicts
of its local-memory reads, each per byte asked for.

The symbolic counts (``liftpy.model.counts``) say how many bytes each work-item reads from global and local
memory, not how the reads of neighbouring work-items fall together.  On a GPU that decides the cost:

- a warp's global request is served line by line (128 bytes), so 32 work-items reading 32 consecutive
  floats cost one line; reading one float each from 32 rows apart cost 32 lines for the same bytes.  Two
  SGEMM variants that differ only in whether their column map is dimension 0 or 2 measure 0.39 and 4.3 ms
  on the H100, and a model without this ranks the two alike;
- local memory is 32 banks of 4-byte words; a request takes as many passes as the most distinct words
  any one bank is asked for (one word asked by every work-item is a broadcast, one pass), and a request
  of wider words is served a part of the warp at a time.  A tile staged row-major and read down a column
  with a row of 32 floats puts the whole warp on one bank: 32 passes.  The two staged layouts of the same
  tiling (``stageTiles`` and ``stageTilesT``) differ in exactly this, and without it the formula put the
  first 1.1-1.7x ahead of the second, against the measurements, on every H100 store.

The answer is read off the statement IR (``liftpy.codegen.stmt``), where every global read is a
``MemRead`` with an index over loop variables: TMModel's reasoning from the access analysis, with the
emitter's own index functions instead of a second derivation of the views.  For a work-group's first warp
(the first 32 work-items, dimension 0 fastest) at a few sampled iterations of the loops around it, each
read is one request, and the factors of a kernel are

    coalescing = lines touched * 128 bytes / bytes the work-items asked for   (global reads)
    banks      = passes / the passes of a conflict-free request of the same width   (local reads)

over its requests, each weighted by how often it executes: 1 for coalesced reads and for a float every
work-item shares, up to 32 for scattered floats; 1 for conflict-free local reads, up to 32.  (Counting 32-byte sectors instead, or letting the copies
of an unrolled body share lines, made the formula alone rank the H100 stores' uniform points worse: with
sectors, mean Kendall tau 0.52 against 0.56 over four workloads.)  A factor belongs to one configuration:
the same tiled variant of VGG-16 layer 5 reads with a factor of 2 at one and 31 at another, as its tile
shape and register block decide which work-items share a row.  A search on a GPU ranks its thousands of
candidates with the factor of one configuration per variant (``Spaces.model``), then measures the factor
of the leaders at their own configuration (``Spaces.predict``): with the factor of each point, the
formula alone ranked the H100 stores' uniform points with mean Kendall tau 0.66 instead of 0.60, and
with bank conflicts counted too, 0.68 (SGEMM 0.62 -> 0.68, VGG-16 layer 12 0.67 -> 0.69).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
import random
from typing import Mapping, NamedTuple

import numpy as np

from ..codegen import stmt as S
from ..codegen.half import element_bytes  # (a half-stored buffer moves 2 bytes an element)
from ..codegen.passes import DEFAULT_PASSES, eliminate_divmod, privatize, vectorize
from ..codegen.passes.runs import with_borders
from ..ir.levels import Ids, Level
from ..views import view as V
from .. import arith as A
from ..arith import without_constant
from ..codegen.kernel import lower_pipeline

LINE = 128  # bytes: the unit in which a warp's request is served from the L1 cache
WARP = 32
BANKS = 32  # local memory banks, each 4 bytes wide
SAMPLES = 3  # sampled iterations of the loops around each group of reads
# The passes up to vectorization: they decide which work-item reads what (the copies into local memory get
# their order and share of each work-item) and how wide each read is (a float4 load per work-item is one
# request; four scalar loads 16 bytes apart are four).  Privatization and the address arithmetic (the
# division pass before unrolling, hoisting after vectorization) do not change a global read, and
# skipping them (and the printing) makes the factor cost half of a point's code generation, so a search
# can afford it for every candidate it is about to measure.  (The division pass also splits loops, which
# would change which iterations the factors sample.  Stopping before unrolling as well costs a quarter of
# that, but counts SGEMM's vector loads as strided scalars: the factors differed at 31 of 60 points.)
PASSES = tuple(p for p in DEFAULT_PASSES[: DEFAULT_PASSES.index(vectorize) + 1] if p not in (privatize, eliminate_divmod))

def _lanes(dims: tuple[int, int, int]) -> list[tuple[int, ...]]:
    """The local ids of a work-group's first warp, dimension 0 fastest."""
    out = []
    for linear in range(min(WARP, dims[0] * dims[1] * dims[2])):
        out.append((linear % dims[0], (linear // dims[0]) % dims[1], linear // (dims[0] * dims[1])))
    return out


def _index_fn(expr):
    """``expr`` as a function of its variables, sorted by name, and whether it takes arrays (one value
    per work-item) as well as numbers: compiled from its Python form, with numpy for the integer
    divisions and moduli (a kernel's reads have hundreds of distinct indices).  An index Python cannot
    say (a gather's load) gets a function that raises ``TypeError``: its reads are not counted."""
    syms = sorted(expr.free_vars, key=lambda x: x.name)
    names = [x.name for x in syms]
    if all(n.isidentifier() and n not in _VECTOR for n in names):
        try:
            return syms, eval(f"lambda {', '.join(names)}: {_source(expr)}", dict(_VECTOR)), True  # noqa: S307 - our own printed index
        except (SyntaxError, ValueError):
            pass
    return syms, _unknown, False


def _unknown(*args):
    raise TypeError("an index without a Python form")


_CALLS = {A.FloorDiv: "FloorDiv", A.Mod: "Mod", A.CDiv: "CDiv", A.CMod: "CMod", A.Min: "Min", A.Max: "Max"}


def _source(e) -> str:
    """An index expression as Python source.  A rational coefficient multiplies first and divides last,
    so that a division that is exact stays exact in floating point."""
    if e.is_var:
        return e.name
    if e.is_const:
        v = e.value
        return str(v) if isinstance(v, int) else f"({v.numerator}/{v.denominator})"
    if e.is_add:
        return "(" + " + ".join(_source(a) for a in e.args) + ")"
    if e.is_mul:
        coeff, rest = A.coeff_and_rest(e)
        coeff = Fraction(coeff)
        factors = [_source(a) for a in A.factors_of(rest)]
        text = "*".join(([str(coeff.numerator)] if coeff.numerator != 1 else []) + factors)
        return f"({text})" if coeff.denominator == 1 else f"(({text})/{coeff.denominator})"
    if e.is_pow:
        return f"({_source(e.args[0])}**{e.args[1].value})"
    name = _CALLS.get(type(e))
    if name is not None:
        return f"{name}(" + ", ".join(_source(a) for a in e.args) + ")"
    raise ValueError(f"no Python form for {type(e).__name__}")


def _whole(a):
    """``int(a)`` of a number or of each element of an array (truncated, as C and the emitter divide
    non-negative indices)."""
    if isinstance(a, np.ndarray):
        return a if a.dtype.kind in "iu" else np.trunc(a).astype(np.int64)
    return int(a)


_VECTOR = {"CDiv": lambda a, d: _whole(a) // d, "CMod": lambda a, d: _whole(a) % d,
           "FloorDiv": lambda a, d: np.floor(a / d), "Min": lambda *a: functools.reduce(np.minimum, a),
           "Max": lambda *a: functools.reduce(np.maximum, a), "Mod": lambda a, d: a % d}


class AccessFactors(NamedTuple):
    """How one kernel's requests are served (module docstring): 1.0 each when ideally."""

    coalescing: float = 1.0  # global reads: bytes of the lines touched per byte asked for
    banks: float = 1.0  # local reads: passes per pass of a conflict-free request


class _Tally:
    def __init__(self, local_size: tuple[int, ...], rng: random.Random):
        self.local = tuple(local_size) + (1,) * (3 - len(local_size))
        self.lanes = _lanes(self.local)
        self.ids = [np.asarray([lane[d] for lane in self.lanes], dtype=np.int64) for d in range(3)]  # per dimension
        self.top = [int(x.max()) for x in self.ids]  # the warp's largest local id in each dimension
        self.rng = rng
        self.moved = 0.0  # bytes of the lines the warps' global requests touch, weighted by executions
        self.asked = 0.0  # bytes the work-items asked for, weighted the same
        self.passes = 0.0  # passes the warps' local requests take, weighted the same
        self.ideal = 0.0  # passes they would take without conflicts
        self._fns: dict = {}  # by index: its function of the rest, and its constant
        self._shared: dict = {}  # by index without its constant: the compiled function (``_index_fn``)

    def fn(self, expr):
        """``expr``'s function (``_index_fn``) and the constant it adds: the copies of an unrolled body read
        at indices that differ in the constant only, and share one compiled function of the rest."""
        f = self._fns.get(expr)
        if f is None:
            rest, c = without_constant(expr)
            g = self._shared.get(rest)
            if g is None:
                g = self._shared[rest] = _index_fn(rest)
            f = self._fns[expr] = g + (c,)
        return f

    def reads(self, loops: list[S.Loop], reads: list[V.MemRead]) -> None:
        """The global and local reads of one statement inside ``loops``, each a request of the whole warp."""
        weight = 1.0
        for lp in loops:
            if lp.level is Level.SEQ:
                weight *= lp.extent
        # Every warp of the kernel runs the same requests: the number of warps cancels in the ratio.
        randrange, ids, top, local = self.rng.randrange, self.ids, self.top, self.local
        for _ in range(SAMPLES):
            # (The draws are made for a statement without reads too: they decide the next statement's.)
            env: dict = {}
            keep = None  # which work-items of the warp are inside every loop's extent (None: all)
            for lp in loops:
                kind = lp.level.ids
                if kind is Ids.UNIFORM:
                    env[lp.var] = randrange(max(1, lp.extent))
                elif kind is Ids.GLOBAL:
                    # a work-group of the NDRange, the same for all the warp's work-items
                    d = lp.dim
                    first = local[d] * randrange(max(1, lp.extent // local[d]))
                    env[lp.var] = ids[d] + first
                    if top[d] + first >= lp.extent:
                        inside = env[lp.var] < lp.extent
                        keep = inside if keep is None else keep & inside
                elif kind is Ids.LOCAL:
                    env[lp.var] = ids[lp.dim]
                    if top[lp.dim] >= lp.extent:
                        inside = ids[lp.dim] < lp.extent
                        keep = inside if keep is None else keep & inside
            if not reads:
                continue
            if keep is None:
                n = len(self.lanes)
            else:
                n = int(keep.sum())
                if not n:
                    continue
                env = {k: (v[keep] if isinstance(v, np.ndarray) else v) for k, v in env.items()}
            for r in reads:
                starts = self._starts(r, env, n)
                if starts is None:
                    continue
                nbytes = element_bytes(r.buffer) * r.width
                if r.buffer.space == "global":
                    if nbytes <= LINE:  # a request then spans one line or two
                        lines = len(set((starts // LINE).tolist()).union(((starts + nbytes - 1) // LINE).tolist()))
                    else:
                        lines = len({line for st in starts.tolist() for line in range(st // LINE, (st + nbytes - 1) // LINE + 1)})
                    self.moved += weight * lines * LINE / SAMPLES
                    self.asked += weight * len(starts) * nbytes / SAMPLES
                else:
                    passes, ideal = _bank_passes(starts.tolist(), nbytes)
                    self.passes += weight * passes / SAMPLES
                    self.ideal += weight * ideal / SAMPLES

    def _starts(self, r: V.MemRead, env: dict, n: int):
        """The byte offset each of the ``n`` work-items of ``env`` reads at, evaluated for all at once (the
        tally's time was the index functions called work-item by work-item)."""
        syms, fn, vector, c = self.fn(r.index)
        args = [env.get(x, 0) for x in syms]
        if vector:
            with np.errstate(all="ignore"):
                try:
                    idx = np.broadcast_to(np.asarray(fn(*args) + c), (n,))
                except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                    idx = None
            if idx is not None and (idx.dtype.kind in "iu" or np.isfinite(idx).all()):
                return np.trunc(idx).astype(np.int64) * element_bytes(r.buffer)
        # One work-item at a time: any index the array form could not evaluate.
        out = []
        for k in range(n):
            try:
                out.append(int(fn(*[a[k] if isinstance(a, np.ndarray) else a for a in args]) + c) * element_bytes(r.buffer))
            except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                continue
        return np.asarray(out, dtype=np.int64) if out else None

    @property
    def factors(self) -> AccessFactors:
        return AccessFactors(self.moved / self.asked if self.asked else 1.0,
                             self.passes / self.ideal if self.ideal else 1.0)


def _bank_passes(starts: list[int], nbytes: int) -> tuple[int, int]:
    """The passes a local request of ``nbytes`` per work-item at byte offsets ``starts`` takes, and the
    passes it would take without conflicts: a request of w words per work-item is served 32 / w work-items
    at a time, each part taking as many passes as the most distinct words one bank is asked for."""
    words = max(1, nbytes // 4)
    per_part = max(1, BANKS // words)
    passes = 0
    for p in range(0, len(starts), per_part):
        banks: dict = {}
        for start in starts[p:p + per_part]:
            for w in range(start // 4, start // 4 + words):
                banks.setdefault(w % BANKS, set()).add(w)
        passes += max(len(v) for v in banks.values())
    return passes, math.ceil(len(starts) / per_part)


def kernel_factors(kernel: S.Kernel, local_size: tuple[int, ...] | None, seed: int = 0) -> AccessFactors:
    """How one kernel's global and local reads are served (module docstring).  ``local_size``: the
    launch's work-group; None (the driver's choice, for ``mapGlb`` kernels) counts 32 work-items along
    dimension 0."""
    if local_size is None:
        extents = {}
        for lp in S.parallel_loops(kernel.body):
            extents[lp.dim] = max(extents.get(lp.dim, 1), lp.extent)
        local_size = (min(WARP, extents.get(0, 1)), 1, 1)
    tally = _Tally(tuple(local_size), random.Random(seed))

    def visit(block: S.Block, loops: list[S.Loop]) -> None:
        for s, border in with_borders(block.items):
            if border:
                continue
            if isinstance(s, S.Loop):
                visit(s.body, loops + [s])
            elif isinstance(s, (S.If, S.Block)):
                visit(s.body if isinstance(s, S.If) else s, loops)
            elif isinstance(s, S.Store):
                tally.reads(loops, [r for r in S.reads(s.value) if isinstance(r, V.MemRead)
                                    and r.buffer.space in ("global", "local")])

    visit(kernel.body, [])
    return tally.factors


def access_factors(program, bindings: Mapping, placements: Mapping[str, str] | None = None) -> tuple[AccessFactors, ...]:
    """How the reads of each kernel of a lowered program are served, at concrete sizes and parameter values,
    with the variant's ``placements``: an array kept as half moves two bytes an element, so a run of eight
    of its elements is one sixteen-byte word a work-item, where read as floats it was two requests of
    sixteen bytes 32 apart (a coalescing factor of 2, which put every half kernel reading words of eight
    behind those reading four)."""
    lowered = lower_pipeline(program, bindings, placements=placements, passes=PASSES)
    return tuple(kernel_factors(k.ir, k.launch.local_size) for k in lowered)
