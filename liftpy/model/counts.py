"""What a lowered program does, counted symbolically: the inputs of the analytical cost model.

One walk over the IR (no code generation) gives, as sympy expressions over the program's sizes and
tuning parameters:

- ``flops``: user-function applications (lanes counted for vector functions, a ``dot`` of two float4 is
  four), over the whole NDRange;
- ``global_reads`` / ``local_reads``: bytes read from global or local memory by user functions and by
  copies (reads of an input placed in an image are global reads), counted the way a compiler executes
  them: a read is repeated by every loop whose variable it depends on and by every work-item, but not by
  loops it does not depend on when those are unrolled (the copies of the body share it) or lie inside the
  innermost loop it depends on (it is hoisted).  A sequential map over a private array counts as
  unrolled whether or not liftpy unrolls it: a register block stays in registers only where the OpenCL
  compiler unrolls the loops over it, and it does.  Counted as loops, the operands of SGEMM's register
  blocks were read once per multiply-add where each row's and column's are read once per step (up to 8x
  the bytes of a 16 x 16 block), and the formula put the blocks that measured fastest on the H100 up to
  19x slower than they ran; counted unrolled, it ranks SGEMM 1024's 1,000 uniform H100 points at Kendall
  tau 0.724 instead of 0.683 (VGG-16 layers 5 and 24, whose register blocks liftpy unrolls, unchanged);
- ``global_loads``: the loads those global reads take (a float4 one, a float one), counted alike: the
  bytes each load asks for decide how many a GPU keeps in flight (``liftpy.model.analytical``);
- ``image_reads``: the part of ``global_reads`` read through images (``read_imagef``): a GPU's texture
  units serve them as its caches serve the rest, a CPU emulates each in software
  (``liftpy.model.analytical``);
- ``copy_bytes``: bytes staged into local memory (read from global, written to local);
- ``unrolled_body``: the most copies of one user-function application that unrolled loops put in a
  straight stretch of code (the unrolled loops around it, up to the first loop that is not): a CPU
  driver vectorizes a group's work-items over short stretches only (``liftpy.model.analytical``);
- ``written``: bytes of the kernel's output;
- every count is multiplied by the work-items that repeat it: code outside a parallel map of a dimension
  the kernel launches (a row's maximum bound above the ``mapGlb(0)`` over its elements, inside the
  ``mapGlb(1)`` over rows) is run by every work-item of that dimension, not once.  Counted once, a softmax
  variant recomputing each row's maximum and sum in all 256 items of its row looked as cheap as the one
  computing them once, and 14 of 16 points the model picked took 250-510 ms against 0.6 ms for the best;
- ``items`` / ``groups`` / ``local_bytes`` / ``private_bytes`` come from ``constraints.resources``.

Where a value lives is tracked through the program: program inputs are global (image, where the variant
placed them in one), ``toLocal`` values local, accumulators and ``toPrivate`` values private; layout
primitives keep the origin of what they rearrange, and a ``zip`` keeps one origin per component.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Literal, Program, Var, primitive_functions
from ..ir.kernels import split_kernels
from ..ir.levels import Level, Part
from ..ir.typecheck import type_in, type_of
from ..ir.types import ArrayType, TupleType, Type, VectorType, innermost, memory_bytes


GLOBAL = ("global", "image", "half")  # the spaces of global memory ("half": an array stored as half)


@dataclass(frozen=True)
class Origin:
    """Where the elements of a value come from, and the loops their position depends on."""

    space: str  # 'global', 'image' (a global input read through an image), 'local', 'private', 'const' or 'computed'
    deps: frozenset = frozenset()  # indices into the loop stack


@dataclass(frozen=True)
class TupleOrigin:
    elems: tuple


@dataclass(frozen=True)
class LoopInfo:
    length: sympy.Expr
    parallel: bool
    unrolled: bool


_OPERATIONS = {"multAndSumUp": 2, "dot": 2}  # per lane; every other user-function application counts one


@dataclass
class Counts:
    flops: sympy.Expr = sympy.Integer(0)
    global_reads: sympy.Expr = sympy.Integer(0)
    global_loads: sympy.Expr = sympy.Integer(0)
    applications: sympy.Expr = sympy.Integer(0)  # user-function applications, vector ones once (``flops``: their lanes)
    local_reads: sympy.Expr = sympy.Integer(0)
    image_reads: sympy.Expr = sympy.Integer(0)
    copy_bytes: sympy.Expr = sympy.Integer(0)
    written: sympy.Expr = sympy.Integer(0)
    unrolled_body: sympy.Expr = sympy.Integer(1)
    # Floating-point operations as usually counted (a multiply-add is two), for GFLOP/s; the model uses
    # ``flops``, the applications, which it was fitted on.
    operations: sympy.Expr = sympy.Integer(0)
    kernels: int = 1
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"flops": self.flops, "global_reads": self.global_reads, "global_loads": self.global_loads,
                "applications": self.applications, "local_reads": self.local_reads,
                "image_reads": self.image_reads, "copy_bytes": self.copy_bytes, "written": self.written,
                "unrolled_body": self.unrolled_body}


def _loads(t: Type):
    """The loads a work-item issues to read a value of type ``t``: one per scalar or vector in it."""
    if isinstance(t, TupleType):
        return sum((_loads(x) for x in t.elems), sympy.Integer(0))
    if isinstance(t, ArrayType):
        return t.size * _loads(t.elem)
    return sympy.Integer(1)


def _merge(origins) -> Origin:
    spaces = [o.space for o in origins if isinstance(o, Origin)]
    deps = frozenset().union(*[o.deps for o in origins if isinstance(o, Origin)]) if origins else frozenset()
    for s in ("global", "half", "image", "local", "private", "computed", "const"):
        if s in spaces:
            return Origin(s, deps)
    return Origin("const", deps)


def _private(o) -> bool:
    """Whether a value's elements, or those of any component of a zipped value, are private."""
    if isinstance(o, TupleOrigin):
        return any(_private(x) for x in o.elems)
    return o.space == "private"


def _flatten(o) -> Origin:
    if isinstance(o, TupleOrigin):
        return _merge([_flatten(x) for x in o.elems])
    return o


class _Counter:
    def __init__(self, program: Program):
        self.program = program
        self.counts = Counts()
        self.loops: list[LoopInfo] = []
        self.bodies: set = set()  # ``unrolled_copies`` of each user-function application
        # Parallel positions: the (level, dimension) of each parallel loop around the current position, and
        # the lengths each (level, dimension) takes anywhere in the kernel (``redundancy``).
        self.around: list[tuple] = []
        self.extents: dict[tuple, set] = {}
        self.pending: list[tuple[str, sympy.Expr, frozenset]] = []

    def add(self, name: str, amount, shared: bool = False) -> None:
        """``amount`` of the count ``name`` at the current position; multiplied by the work-items that
        repeat it once the whole kernel has been walked (``finish``).  ``shared``: work a group's items
        divide between them (a copy into local memory), repeated by no item of the group."""
        self.pending.append((name, amount, frozenset(self.around), shared))

    def finish(self) -> None:
        for name, amount, around, shared in self.pending:
            setattr(self.counts, name, getattr(self.counts, name) + amount * self.redundancy(around, shared))
        self.pending = []

    def redundancy(self, around: frozenset, shared: bool = False) -> sympy.Expr:
        """How many work-items run a position whose parallel loops are ``around``: the extent of every
        (level, dimension) the kernel launches that does not enclose it, but a group's own dimensions where
        its items share the work."""
        m = sympy.Integer(1)
        for key, lengths in self.extents.items():
            if key not in around and not (shared and key[0].part is Part.LOCAL):
                m *= sympy.Max(*lengths) if len(lengths) > 1 else next(iter(lengths))
        return m

    def enter(self, key, length) -> None:
        self.extents.setdefault(key, set()).add(length)
        self.around.append(key)

    # ---------------------------------------------------------------------------------- helpers
    def type_of(self, e: Expr, env) -> Type:
        return type_in(e, env)

    def multiplicity(self, deps: frozenset) -> sympy.Expr:
        """How often a read depending on the loops ``deps`` executes (module docstring)."""
        innermost_dep = max(deps) if deps else -1
        m = sympy.Integer(1)
        for k, lp in enumerate(self.loops):
            if lp.parallel or k in deps:
                m *= lp.length
            elif k < innermost_dep and not lp.unrolled:
                m *= lp.length
        return m

    def unrolled_copies(self) -> sympy.Expr:
        """How many copies of what is inside the loop stack the unrolled loops around it make in one
        straight stretch of code: the product of their lengths, up to the first loop that is not unrolled."""
        m = sympy.Integer(1)
        for lp in reversed(self.loops):
            if lp.parallel or not lp.unrolled:
                break
            m *= lp.length
        return m

    def all_iterations(self) -> sympy.Expr:
        m = sympy.Integer(1)
        for lp in self.loops:
            m *= lp.length
        return m

    def origin(self, e: Expr, env):
        """The origin of a view expression."""
        if isinstance(e, Var):
            return env[e.name][1] if e.name in env else Origin("computed")
        if isinstance(e, Literal):
            return Origin("const")
        if isinstance(e, Call):
            fn = e.fn
            if isinstance(fn, P.Zip):
                return TupleOrigin(tuple(self.origin(a, env) for a in e.args))
            if isinstance(fn, P.Get):
                o = self.origin(e.args[0], env)
                return o.elems[fn.index] if isinstance(o, TupleOrigin) else o
            if isinstance(fn, P.Primitive) and fn.kind == "layout":
                return self.origin(e.args[0], env) if len(e.args) == 1 else _merge([_flatten(self.origin(a, env)) for a in e.args])
            if isinstance(fn, (P.Map, P.MapSeq)) and is_view(fn.f.body):
                return self.origin(e.args[0], env)
            if isinstance(fn, P.ToMem):
                return Origin(fn.space, self._current_deps())
        return Origin("computed", self._current_deps())

    def _current_deps(self) -> frozenset:
        return frozenset(range(len(self.loops)))

    def bind(self, env, params, types, origins):
        out = dict(env)
        for p, t, o in zip(params, types, origins):
            out[p.name] = (t, o)
        return out

    def elem_origin(self, o, loop: int):
        if isinstance(o, TupleOrigin):
            return TupleOrigin(tuple(self.elem_origin(x, loop) for x in o.elems))
        return Origin(o.space, o.deps | {loop})

    def read_global(self, space: str, n, loads, shared: bool = False) -> None:
        """``n`` bytes read from global memory in ``loads`` loads of a work-item (a float4 is one, a pair of
        floats two), through an image where ``space`` says so; ``shared`` as ``add``'s."""
        self.add("global_reads", n, shared)
        self.add("global_loads", loads, shared)
        if space == "image":
            self.add("image_reads", n, shared)

    def read(self, o, t: Type) -> None:
        nbytes = _read_bytes(o, t)
        o = _flatten(o)
        if o.space in GLOBAL:
            times = self.multiplicity(o.deps)
            self.read_global(o.space, times * nbytes, times * _loads(t))
        elif o.space == "local":
            self.add("local_reads", self.multiplicity(o.deps) * nbytes)

    # ---------------------------------------------------------------------------------- the walk
    def walk(self, e: Expr, env) -> None:
        if not isinstance(e, Call):
            return
        fn = e.fn
        if isinstance(fn, Lambda) or isinstance(fn, P.Let):
            lam = fn if isinstance(fn, Lambda) else fn.f
            for a in e.args:
                self.walk(a, env)
            types = [self.type_of(a, env) for a in e.args]
            origins = [self.origin(a, env) for a in e.args]
            self.walk(lam.body, self.bind(env, lam.params, types, origins))
            return
        if hasattr(fn, "numpy"):  # a user function
            types = [self.type_of(a, env) for a in e.args] + [self.type_of(e, env)]
            lanes = max((innermost(t).width if isinstance(innermost(t), VectorType) else 1) for t in types)
            self.add("flops", self.all_iterations() * lanes)
            self.add("applications", self.all_iterations())
            self.add("operations", self.all_iterations() * lanes * _OPERATIONS.get(getattr(fn, "name", ""), 1))
            self.bodies.add(self.unrolled_copies())
            for a, t in zip(e.args, types):
                if is_view(a):
                    self.read(self.origin(a, env), t)
                else:
                    self.walk(a, env)
            return
        if isinstance(fn, P.ToMem):
            arg = e.args[0]
            if fn.space == "local" and is_view(arg):
                t = self.type_of(arg, env)
                # (the group's items divide the copy between them: staged outside their maps, it was counted
                # once per item, and a tiling staging both operands of VGG-16 layer 12 read 448 times its
                # tiles: predicted 16 ms, measured 0.44 on the H200, the fastest of its layer)
                n = memory_bytes(t) * self.all_iterations()
                self.add("copy_bytes", n, shared=True)
                space = _flatten(self.origin(arg, env)).space
                if space in GLOBAL:
                    self.read_global(space, stored_bytes(t, space) * self.all_iterations(), _loads(t) * self.all_iterations(),
                                     shared=True)
            self.walk(arg, env)
            return
        if isinstance(fn, P.MapLike) and not is_view(fn.f.body):
            xs = e.args[0]
            self.walk(xs, env)
            xs_t = self.type_of(xs, env)
            k = len(self.loops)
            level = fn.level
            parallel = level is not None and level.parallel
            # A sequential map over a private array (a register block's rows, zipped with its operands) is
            # unrolled by the OpenCL compiler even where liftpy leaves it a loop: registers are indexed by
            # constants only (module docstring).
            origin = self.origin(xs, env)
            over_private = not parallel and _private(origin)
            self.loops.append(LoopInfo(xs_t.size, parallel, bool(getattr(fn, "unroll", False)) or over_private))
            if parallel:
                self.enter((level, fn.dim), xs_t.size)
            o = self.elem_origin(origin, k)
            (param,) = fn.f.params
            self.walk(fn.f.body, self.bind(env, [param], [xs_t.elem], [o]))
            self.loops.pop()
            if parallel:
                self.around.pop()
            return
        if isinstance(fn, P.Fold):
            init, xs = e.args
            self.walk(init, env)
            self.walk(xs, env)
            xs_t = self.type_of(xs, env)
            acc_t = self.type_of(init, env)
            k = len(self.loops)
            cooperative = fn.level is not None and fn.level.parallel  # a tree over the group's items: their dimension
            self.loops.append(LoopInfo(xs_t.size, cooperative, bool(getattr(fn, "unroll", False))))
            if cooperative:
                self.enter((fn.level, fn.dim), xs_t.size)
            o = self.elem_origin(self.origin(xs, env), k)
            acc, x = fn.f.params
            self.walk(fn.f.body, self.bind(env, [acc, x], [acc_t, xs_t.elem], [Origin("private", frozenset({k})), o]))
            self.loops.pop()
            if cooperative:
                self.around.pop()
            return
        for a in e.args:
            self.walk(a, env)
        if isinstance(fn, P.Primitive):
            for _, lam in primitive_functions(fn):
                self.walk(lam.body, env)


# The counts a pipeline's kernels add up (``written`` is each kernel's output; ``unrolled_body`` their largest).
_SUMMED = ("flops", "operations", "global_reads", "global_loads", "applications", "local_reads", "image_reads",
           "copy_bytes")


def stored_bytes(t: Type, space: str):
    """Bytes a value of type ``t`` takes where it is stored: half of its floats' where the array is kept as
    half (``liftpy.codegen.half``; the elements of an array stored so are floats)."""
    return memory_bytes(t) / 2 if space == "half" else memory_bytes(t)


def _read_bytes(o, t: Type):
    """Bytes a read of a value of type ``t`` from origin ``o`` moves: a zipped value holding a half array has
    its components each as stored (a half array's two bytes beside a float array's four), counted with the
    zip's merged origin; any other value as the struct it is (its padding included)."""
    if (isinstance(o, TupleOrigin) and isinstance(t, TupleType) and len(o.elems) == len(t.elems)
            and any(_flatten(x).space == "half" for x in o.elems)):
        return sum((_read_bytes(x, u) for x, u in zip(o.elems, t.elems)), sympy.Integer(0))
    return stored_bytes(t, _flatten(o).space)


def count(program: Program, images: frozenset = frozenset(), halves: frozenset = frozenset()) -> Counts:
    """The symbolic counts of a lowered program (summed over its kernels); ``images``: the names of the
    inputs the variant placed in images; ``halves``: the names of the arrays it keeps as half (inputs, and
    stages' outputs: ``"out"`` the program's), whose global reads and writes move two bytes an element."""
    total = Counts()
    stages = split_kernels(program)
    total.kernels = len(stages)
    bodies: set = set()
    for st in stages:
        c = _Counter(st.program)
        env = {p.name: (t, Origin("image" if p.name in images else "half" if p.name in halves else "global"))
               for p, t in zip(st.program.params, st.program.param_types)}
        c.walk(st.program.body, env)
        c.finish()
        out_t = type_of(st.program.body, {p.name: t for p, t in zip(st.program.params, st.program.param_types)})
        for name in _SUMMED:
            setattr(total, name, getattr(total, name) + getattr(c.counts, name))
        total.written += stored_bytes(out_t, "half" if st.output in halves else "global")
        bodies |= c.bodies
    # Unevaluated: which copy count is largest depends on the tuning parameters (printed as ``max``).
    total.unrolled_body = sympy.Max(*bodies, evaluate=False) if len(bodies) > 1 else next(iter(bodies), sympy.Integer(1))
    return total
