"""How code generation executes each computing primitive, one entry per primitive class.

A computing primitive (a map, a reduction) is declared in ``liftpy.ir.prims``: its type rule, semantics,
text forms and execution level.  What the kernel does to compute it needs statements, views and memory,
which the IR does not know, so that part is declared here, once per class, as an ``Execution``:

- ``temporary(e, at)``: the memory the emitter gives ``e`` itself in position ``at`` (an accumulator, a
  temporary for a computed array read as an input), or None;
- ``store(em, e, dest, env, ctx)``: the code computing ``e`` into the write view ``dest``;
- ``read(em, e, env, ctx)``: a read view of ``e``'s value (by default: computed into its temporary);
- ``walk_store(walk, e, at, env)`` / ``walk_read(walk, e, level, env)``: the same ways over symbolic
  types, for the allocation analysis (``liftpy.codegen.allocation``), which must find the buffers the
  emitter allocates, in its order.

``em`` is the emitter (``liftpy.codegen.emit.Emitter``) and ``walk`` the analysis (``allocation._Walk``);
both are passed in, so this module imports neither.  ``executes(cls, ...)`` registers an entry; the emitter
and the analysis find it by the class of the primitive (``execution_of``), through its bases, so a new
computing primitive is executed by adding one entry here.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from ..errors import CodegenError
from ..ir import primitives as P
from ..ir.expr import Call, Expr
from ..ir.levels import Level
from ..views import view as V
from ..views.write import WIndex, WMem
from .stmt import Barrier, Block, Loop, stores_to


@dataclass(frozen=True)
class Position:
    """Where the emitter meets an expression: stored into a destination in memory space ``dest``, or read
    as an input (``dest`` None); ``level`` is who runs the code: 'kernel', 'group' (inside ``mapWrg``,
    outside ``mapLcl``) or 'item'."""

    level: str
    dest: str | None = None

    @property
    def reads(self) -> bool:
        return self.dest is None


@dataclass(frozen=True)
class Temporary:
    """Memory the emitter gives an expression of its own: its space and its role in the memory plan."""

    space: str  # 'local' or 'private' ('global' only to be refused: kernels write global memory once)
    role: str  # 'accumulator' or 'temporary'
    copies: int = 1  # 2 for a double-buffered tile (``toLocalDouble``): two halves, used alternately


def accumulator_init(init: Expr) -> tuple[str, Expr]:
    """The space of a reduction's accumulator and the value that initializes it: a ``toMem`` marker on the
    initial value names the space, private memory otherwise."""
    if isinstance(init, Call) and isinstance(init.fn, P.ToMem):
        return init.fn.space, init.args[0]
    return "private", init


def inner_level(level: str, fn) -> str:
    """Who runs the body of the map ``fn`` entered at ``level``."""
    return level if fn.level is Level.SEQ else fn.level.inner_context


class Execution(abc.ABC):
    """The defaults: a computed array read as an input gets a temporary, filled as if stored."""

    def temporary(self, e: Call, at) -> Temporary | None:
        return None

    @abc.abstractmethod
    def store(self, em, e: Call, dest, env, ctx) -> None:
        """The code computing ``e`` into the write view ``dest``."""

    def read(self, em, e: Call, env, ctx) -> V.View:
        tmp = self.temporary(e, ctx.at())
        t = em.type_of(e, env)
        buf = em.alloc(tmp, t, ctx)
        em.emit_to(e, em.mem_dest(buf, t), env, ctx)
        return em.mem_view(buf, t)

    @abc.abstractmethod
    def walk_store(self, walk, e: Call, at, env) -> None:
        """``store``'s buffers, found over symbolic types for the allocation analysis."""

    def walk_read(self, walk, e: Call, level: str, env) -> None:
        try:
            tmp = self.temporary(e, Position(level))
        except CodegenError as err:
            walk.refused.append(str(err))
            return  # the emitter refuses the program here: there is no kernel to describe below
        walk.allocate(tmp, e, walk.type_of(e, env), level)
        walk.store(e, Position(level, tmp.space), env)


_EXECUTIONS: dict[type, Execution] = {}


def executes(*classes: type):
    """Register an ``Execution`` (a class, instantiated once) for primitives of ``classes``."""

    def register(cls):
        for c in classes:
            _EXECUTIONS[c] = cls()
        return cls

    return register


def execution_of(fn) -> Execution | None:
    """The execution of the primitive ``fn`` (of its nearest registered class), None for a primitive that
    computes nothing (a layout, a memory marker) or for what is no primitive."""
    for c in type(fn).__mro__:
        found = _EXECUTIONS.get(c)
        if found is not None:
            return found
    return None


def short(e) -> str:
    """An expression's text, on one line, for messages."""
    from ..ir.printer import show  # here, not at the top: the printer imports the IR this module is under

    text = " ".join(show(e).split())
    return text if len(text) <= 120 else text[:117] + "..."


# ------------------------------------------------------------------------------------------------ maps
@executes(P.MapLike)
class MapExecution(Execution):
    """A loop at the map's level (parallel ones over work-items or work-groups), its body stored into the
    destination's element; a computed map read as an input lives in a private temporary of its work-item."""

    def temporary(self, e, at):
        fn = e.fn
        if not at.reads:
            return None
        if P.is_parallel_map(fn) or at.level != "item":
            raise CodegenError(
                f"the result of {fn.text_name} is used as an input here; say where it lives with "
                f"toLocal(...) or toPrivate(...) (in {short(e)})"
            )
        return Temporary("private", "temporary")

    def store(self, em, e, dest, env, ctx):
        fn = e.fn
        if fn.level is None:
            raise CodegenError(
                "map must be lowered before code generation: use mapGlb, mapWrg/mapLcl or mapSeq "
                f"(in {short(e)})"
            )
        level = fn.level
        dim = getattr(fn, "dim", 0)
        inner = em.enter(level, dim, ctx)
        xs = e.args[0]
        xs_t = em.type_of(xs, env)
        n = em.conc(xs_t.size)
        xs_view = em.view_of(xs, env, ctx)
        (param,) = fn.f.params
        var = em.loop_var(level)
        items: list = []
        with em.into(items):
            env2 = em.bind(env, [param], [xs_t.elem], [V.IndexView(var, xs_view)])
            em.emit_to(fn.f.body, WIndex(var, dest), env2, inner)
        body = Block(tuple(items))
        if level is Level.SEQ and ctx.level == "group" and stores_to(body, "local"):
            body = Block(body.items + (Barrier(),))
        note = fn.text_name + (f"({dim})" if level.parallel else "")
        loop = Loop(var, n, level, dim, body, unroll=level is Level.SEQ and fn.unroll, note=note)
        em.add(loop)
        if level is Level.LCL and not ctx.dims(Level.LCL) and stores_to(body, "local"):
            em.add(Barrier())

    def walk_store(self, walk, e, at, env):
        fn = e.fn
        if fn.level is None:
            return
        xs_t = walk.type_of(e.args[0], env)
        walk.read(e.args[0], at.level, env)
        (param,) = fn.f.params
        inner = Position(inner_level(at.level, fn), at.dest)
        walk.store(fn.f.body, inner, {**env, param.name: xs_t.elem})


# ------------------------------------------------------------------------------------------ reductions
@executes(P.ReduceLike)
class ReduceExecution(Execution):
    """A sequential loop over the array into an accumulator (private unless the initial value's marker says
    otherwise), then read as the one-element result."""

    def temporary(self, e, at):
        if type(e.fn) is P.Reduce:
            return None
        return Temporary(accumulator_init(e.args[0])[0], "accumulator")

    def store(self, em, e, dest, env, ctx):
        acc_view = self.accumulate(em, e, env, ctx, ctx.at(dest))
        private = dest.root.space == "private" or em.private_view(acc_view)
        em.copy(V.UnitView(acc_view), dest, em.type_of(e, env), ctx, registers=private)

    def read(self, em, e, env, ctx):
        return V.UnitView(self.accumulate(em, e, env, ctx, ctx.at()))

    def accumulate(self, em, e: Call, env, ctx, at) -> V.View:
        """Emit the reduction met at ``at``; returns a view of its accumulator (type T, not [T]1)."""
        fn = e.fn
        if type(fn) is P.Reduce:
            raise CodegenError(f"reduce must be lowered to reduceSeq or reduceLcl before code generation (in {short(e)})")
        init, xs = e.args
        acc_t = em.type_of(init, env)
        _, src = accumulator_init(init)
        acc = em.alloc(self.temporary(e, at), acc_t, ctx)
        em.emit_to(src, em.mem_dest(acc, acc_t), env, ctx)
        acc_view = em.mem_view(acc, acc_t)
        acc_dest = em.mem_dest(acc, acc_t)
        xs_t = em.type_of(xs, env)
        xs_view = em.view_of(xs, env, ctx)
        n = self.before_loop(em, e, xs_view, xs_t.elem, em.conc(xs_t.size), env, ctx)
        p_acc, p_x = fn.f.params

        var = em.loop_var(Level.SEQ)
        items: list = []
        with em.into(items):
            env2 = em.bind(env, [p_acc, p_x], [acc_t, xs_t.elem], [acc_view, V.IndexView(var, xs_view)])
            em.emit_to(fn.f.body, acc_dest, env2, ctx)
        body = Block(tuple(items))
        if ctx.level == "group" and stores_to(body, "local"):
            body = Block(body.items + (Barrier(),))
        em.add(Loop(var, n, Level.SEQ, 0, body, unroll=getattr(fn, "unroll", False), note=fn.text_name))
        return acc_view

    def before_loop(self, em, e, xs_view, elem_t, n: int, env, ctx) -> int:
        """Code before the accumulating loop; the number of elements that loop takes in."""
        return n

    def walk_store(self, walk, e, at, env):
        fn = e.fn
        tmp = self.temporary(e, at)
        if tmp is None:
            return
        init, xs = e.args
        acc_t = walk.type_of(init, env)
        space, src = accumulator_init(init)
        walk.allocate(tmp, src, acc_t, at.level)
        acc_at = Position(at.level, space)
        walk.store(src, acc_at, env)
        xs_t = walk.type_of(xs, env)
        walk.read(xs, at.level, env)
        p_acc, p_x = fn.f.params
        walk.store(fn.f.body, acc_at, {**env, p_acc.name: acc_t, p_x.name: xs_t.elem})

    def walk_read(self, walk, e, level, env):
        self.walk_store(walk, e, Position(level), env)


@executes(P.ReduceLcl)
class TreeExecution(ReduceExecution):
    """The halving steps of a ``reduceLcl`` over the local array it reduces in place: while m > 1 values
    are left, the first m // 2 take in those ceil(m / 2) further on, a barrier after each step; the tree
    leaves one value in the first element, which the accumulator then takes in.  The sizes are known
    here, so the steps are unrolled: log2(n) loops over the work-items."""

    def before_loop(self, em, e, xs_view, elem_t, n, env, ctx):
        fn = e.fn
        if ctx.level != "group":
            raise CodegenError(f"reduceLcl runs at work-group level, inside mapWrg and outside mapLcl (in {short(e)})")
        if not (isinstance(e.args[1], Call) and isinstance(e.args[1].fn, P.ToLocal) and isinstance(xs_view, V.MemView)):
            raise CodegenError(f"reduceLcl reduces its array in place in local memory: its argument must be "
                               f"toLocal(...) (in {short(e)})")
        dest = WMem(xs_view.buffer, xs_view.dims, xs_view.width)
        p_acc, p_x = fn.f.params
        inner = em.enter(Level.LCL, fn.dim, ctx)
        m = n
        while m > 1:
            half = (m + 1) // 2
            var = em.loop_var(Level.LCL)
            items: list = []
            with em.into(items):
                env2 = em.bind(env, [p_acc, p_x], [elem_t, elem_t],
                               [V.IndexView(var, xs_view), V.IndexView(var + half, xs_view)])
                em.emit_to(fn.f.body, WIndex(var, dest), env2, inner)
            em.add(Loop(var, m // 2, Level.LCL, fn.dim, Block(tuple(items)), note=f"{fn.text_name}({fn.dim}): {m} -> {half}"))
            em.add(Barrier())
            m = half
        return 1


# ------------------------------------------------------------------------------------------------ scans
@executes(P.ScanSeq)
class ScanExecution(Execution):
    """A sequential loop: a private accumulator, initialized by ``init``, takes in element i and is then
    stored as element i of the result.  Read as an input, the result lives in a private temporary of its
    work-item, as a computed sequential map's does."""

    def temporary(self, e, at):
        if not at.reads:
            return None
        if at.level != "item":
            raise CodegenError(f"the result of {e.fn.text_name} is used as an input here; say where it lives with "
                               f"toLocal(...) or toPrivate(...) (in {short(e)})")
        return Temporary("private", "temporary")

    def store(self, em, e, dest, env, ctx):
        fn = e.fn
        init, xs = e.args
        acc_t = em.type_of(init, env)
        acc = em.alloc(Temporary("private", "accumulator"), acc_t, ctx)
        acc_view, acc_dest = em.mem_view(acc, acc_t), em.mem_dest(acc, acc_t)
        em.emit_to(init, acc_dest, env, ctx)
        xs_t = em.type_of(xs, env)
        xs_view = em.view_of(xs, env, ctx)
        p_acc, p_x = fn.f.params
        var = em.loop_var(Level.SEQ)
        items: list = []
        with em.into(items):
            env2 = em.bind(env, [p_acc, p_x], [acc_t, xs_t.elem], [acc_view, V.IndexView(var, xs_view)])
            em.emit_to(fn.f.body, acc_dest, env2, ctx)
            em.copy(acc_view, WIndex(var, dest), acc_t, ctx, registers=True)
        body = Block(tuple(items))
        if ctx.level == "group" and stores_to(body, "local"):
            body = Block(body.items + (Barrier(),))
        em.add(Loop(var, em.conc(xs_t.size), Level.SEQ, 0, body, note=fn.text_name))

    def walk_store(self, walk, e, at, env):
        fn = e.fn
        init, xs = e.args
        acc_t = walk.type_of(init, env)
        acc_at = Position(at.level, "private")
        walk.allocate(Temporary("private", "accumulator"), init, acc_t, at.level)
        walk.store(init, acc_at, env)
        xs_t = walk.type_of(xs, env)
        walk.read(xs, at.level, env)
        p_acc, p_x = fn.f.params
        walk.store(fn.f.body, acc_at, {**env, p_acc.name: acc_t, p_x.name: xs_t.elem})
