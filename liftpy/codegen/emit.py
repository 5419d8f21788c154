"""The emitter: a lowered program becomes a C syntax tree and a memory plan.

The walk is destination-passing.  ``emit_to(e, dest)`` generates code that computes ``e`` and stores it
through the write view ``dest``; ``view_of(e)`` returns a read view of ``e``'s value, materializing it
only when ``e`` computes something (a reduction's accumulator, a ``toPrivate``/``toLocal`` temporary).
Layout primitives never allocate: on the read side they are views (``liftpy.views.view``), on the write
side write views (``liftpy.views.write``).

Memory:
- inputs and the output are global buffers;
- ``toPrivate(e)`` / ``toLocal(e)`` put e's value in a fresh private array (per work-item, declared where
  it is computed) or local array (per work-group, declared at kernel scope);
- a ``reduceSeq`` accumulates in the memory its initial value is written to (private by default);
- a computation read without a marker inside a work-item is kept in private memory.

Barriers: after a ``mapLcl`` nest that wrote local memory (which other work-items of the group read), and
at the end of a sequential loop at work-group level whose body writes local memory (so the next iteration
does not overwrite what others still read).  Never inside a ``mapLcl`` loop, where not every work-item
of the group would reach it.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Mapping

import sympy

from ..errors import CodegenError, LiftTypeError
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Literal, Var
from ..ir.typecheck import type_of as _type_of
from ..ir.types import (
    ArrayType,
    ScalarType,
    TupleType,
    Type,
    VectorType,
    contains_tuple,
    flat_count,
    innermost,
    scalar_of,
)
from ..ir.userfun import UserFun
from ..views import view as V
from ..views.arith import simplify, simplify_condition, to_c
from ..views.write import WAsScalar, WAsVector, WIndex, WJoin, WMapped, WMem, WSplit, WTranspose, WView
from .cast import Barrier, Block, Comment, Loop, Stmt
from .memory import Buffer

_LOOP_PREFIX = {"glb": "gl", "wrg": "wg", "lcl": "l", "seq": "i"}
_KIND = {P.MapGlb: "glb", P.MapWrg: "wrg", P.MapLcl: "lcl", P.MapSeq: "seq"}


@dataclass(frozen=True)
class Ctx:
    """Where the code being emitted runs."""

    level: str = "kernel"  # 'kernel', 'group' (inside mapWrg) or 'item' (inside mapGlb/mapLcl)
    glb: frozenset = frozenset()
    wrg: frozenset = frozenset()
    lcl: frozenset = frozenset()


def _literal_c(value, scalar: ScalarType, width: int = 1) -> str:
    if scalar.name == "float":
        v = float(value)
        if v != v:
            text = "NAN"
        elif v in (float("inf"), float("-inf")):
            text = "INFINITY" if v > 0 else "-INFINITY"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            text += "f"
    elif scalar.name == "bool":
        text = "true" if value else "false"
    else:
        text = str(int(value))
    return text if width == 1 else f"(({scalar.name}{width})({text}))"


class Emitter:
    def __init__(self, bindings: Mapping):
        self.bindings = dict(bindings)
        self.buffers: list[Buffer] = []
        self.functions: dict[str, str] = {}
        self.ranges: dict[sympy.Symbol, tuple[int, int]] = {}
        self.counters: dict[str, int] = {}
        self.root = Block()
        self.block = self.root
        self.local_decls: list[str] = []
        self.local_writes = 0
        self.needs_sampler = False
        self.needs_lane_helper = False
        self._types: dict = {}

    # ------------------------------------------------------------------------------------ helpers
    def conc(self, size) -> int:
        v = sympy.sympify(size).subs(self.bindings)
        if not v.is_Integer:
            missing = ", ".join(sorted(str(s) for s in v.free_symbols))
            raise CodegenError(f"no value for {missing} (needed for the size {size}); pass it in sizes=")
        return int(v)

    def fresh(self, prefix: str) -> str:
        k = self.counters.get(prefix, 0)
        self.counters[prefix] = k + 1
        return f"{prefix}_{k}"

    def type_of(self, e: Expr, env) -> Type:
        key = (e, tuple(sorted((n, env[n][0]) for n in e.free_vars if n in env)))
        t = self._types.get(key)
        if t is None:
            t = _type_of(e, {n: env[n][0] for n in e.free_vars if n in env})
            self._types[key] = t
        return t

    @contextmanager
    def into(self, block: Block):
        saved = self.block
        self.block = block
        try:
            yield
        finally:
            self.block = saved

    def emit(self, text: str) -> None:
        self.block.add(Stmt(text))

    def dims_of(self, t: Type) -> tuple[tuple[int, ...], int]:
        dims = []
        while isinstance(t, ArrayType):
            dims.append(self.conc(t.size))
            t = t.elem
        width = self.conc(t.width) if isinstance(t, VectorType) else 1
        return tuple(dims), width

    def leaf_width(self, t: Type) -> int:
        return self.conc(t.width) if isinstance(t, VectorType) else 1

    # ---------------------------------------------------------------------------------- memory
    def alloc(self, space: str, t: Type, role: str, ctx: Ctx, hint: str = "") -> Buffer:
        if contains_tuple(t):
            raise CodegenError(f"cannot keep a value of tuple type {t} in memory; store its components separately")
        scalar = scalar_of(t)
        sym = flat_count(t)
        count = self.conc(sym)
        if space == "global":
            raise CodegenError(
                "toGlobal is only supported for the kernel's output; keep temporaries in private or local "
                "memory, or split the program into several kernels"
            )
        if space == "local" and ctx.level != "group":
            raise CodegenError(
                "toLocal must be computed at work-group level (inside mapWrg, outside mapLcl), where the "
                "work-items of the group fill it together"
            )
        prefix = hint or {"private": "acc" if role == "accumulator" else "priv", "local": "loc"}[space]
        name = self.fresh(prefix)
        buf = Buffer(name, space, scalar, count, sym, role, t)
        self.buffers.append(buf)
        if space == "private":
            self.emit(f"{scalar.name} {name};" if count == 1 else f"{scalar.name} {name}[{count}];")
        else:
            self.local_decls.append(f"local {scalar.name} {name}[{count}];")
        return buf

    def mem_view(self, buf: Buffer, t: Type) -> V.MemView:
        dims, width = self.dims_of(t)
        return V.MemView(buf, dims, width)

    def mem_dest(self, buf: Buffer, t: Type) -> WMem:
        dims, width = self.dims_of(t)
        return WMem(buf, dims, width)

    # ------------------------------------------------------------------------------ reading values
    def render_read(self, r: V.Read) -> str:
        if isinstance(r, V.MemRead):
            buf = r.buffer
            idx = simplify(r.index, self.ranges)
            if buf.is_scalar_variable:
                if idx != 0:
                    raise CodegenError(f"internal: scalar {buf.name} read at index {idx}")
                return buf.name
            if r.width == 1:
                return f"{buf.name}[{to_c(idx)}]"
            if buf.space == "private" and buf.count == r.width:
                return f"vload{r.width}(0, {buf.name})"
            return f"vload{r.width}(0, {buf.name} + {to_c(idx)})"
        if isinstance(r, V.ConstRead):
            return _literal_c(r.value, r.scalar, r.width)
        if isinstance(r, V.CondRead):
            c = simplify_condition(r.cond, self.ranges)
            if c is sympy.true:
                return self.render_read(r.then)
            if c is sympy.false:
                return self.render_read(r.other)
            return f"(({to_c(c)}) ? {self.render_read(r.then)} : {self.render_read(r.other)})"
        if isinstance(r, V.CodeRead):
            return r.code
        if isinstance(r, V.VecRead):
            merged = self.merge_lanes([self.simplified(l) for l in r.lanes])
            if merged is not None:
                return self.render_read(merged)
            return f"(({r.scalar.name}{len(r.lanes)})({', '.join(self.render_read(l) for l in r.lanes)}))"
        if isinstance(r, V.ImageRead):
            self.needs_sampler = True
            x, y = to_c(simplify(r.x, self.ranges)), to_c(simplify(r.y, self.ranges))
            texel = f"read_imagef({r.image.name}, sampler, (int2)({x}, {y}))"
            if r.lane is None:
                return texel
            lane = simplify(r.lane, self.ranges)
            if lane.is_Integer:
                return f"{texel}.s{int(lane)}"
            self.needs_lane_helper = True
            return f"lane4({texel}, {to_c(lane)})"
        raise CodegenError(f"internal: cannot read {r!r}")

    def simplified(self, r: V.Read) -> V.Read:
        """The same read with its indices and conditions simplified under the current loop ranges."""
        if isinstance(r, V.MemRead):
            return V.MemRead(r.buffer, simplify(r.index, self.ranges), r.width)
        if isinstance(r, V.CondRead):
            c = simplify_condition(r.cond, self.ranges)
            if c is sympy.true:
                return self.simplified(r.then)
            if c is sympy.false:
                return self.simplified(r.other)
            return V.CondRead(c, self.simplified(r.then), self.simplified(r.other))
        if isinstance(r, V.ImageRead):
            lane = None if r.lane is None else simplify(r.lane, self.ranges)
            return V.ImageRead(r.image, simplify(r.x, self.ranges), simplify(r.y, self.ranges), lane)
        return r

    def merge_lanes(self, lanes: list) -> V.Read | None:
        """One vector read for n scalar reads when they are contiguous memory, one texel, equal constants,
        or the same condition over mergeable branches; None otherwise."""
        n, first = len(lanes), lanes[0]
        if all(isinstance(l, V.MemRead) and l.width == 1 and l.buffer == first.buffer for l in lanes):
            if all(sympy.expand(l.index - first.index) == t for t, l in enumerate(lanes)):
                return V.MemRead(first.buffer, first.index, n)
            return None
        if all(isinstance(l, V.ConstRead) and l.width == 1 and l.value == first.value for l in lanes):
            return V.ConstRead(first.value, first.scalar, n)
        if all(isinstance(l, V.CondRead) and l.cond == first.cond for l in lanes):
            then = self.merge_lanes([l.then for l in lanes])
            other = self.merge_lanes([l.other for l in lanes])
            if then is not None and other is not None:
                return V.CondRead(first.cond, then, other)
            return None
        if n == 4 and all(
            isinstance(l, V.ImageRead) and l.image == first.image and l.x == first.x and l.y == first.y and l.lane == t
            for t, l in enumerate(lanes)
        ):
            return V.ImageRead(first.image, first.x, first.y, None)
        return None

    def read(self, view: V.View) -> str:
        return self.render_read(view.access(()))

    def store(self, dest: WView, value: str, t: Type) -> None:
        loc = dest.locate(())
        buf = loc.buffer
        idx = simplify(loc.index, self.ranges)
        width = self.leaf_width(t)
        if buf.space == "local":
            self.local_writes += 1
        if buf.is_scalar_variable:
            self.emit(f"{buf.name} = {value};")
        elif width == 1:
            self.emit(f"{buf.name}[{to_c(idx)}] = {value};")
        else:
            self.emit(f"vstore{width}({value}, 0, {buf.name} + {to_c(idx)});")

    def copy(self, view: V.View, dest: WView, t: Type, ctx: Ctx) -> None:
        """Store every element of ``view`` through ``dest`` (sequentially, in the current work-item)."""
        if isinstance(t, (ScalarType, VectorType)):
            self.store(dest, self.read(view), t)
            return
        if isinstance(t, ArrayType):
            n = self.conc(t.size)
            if n <= 4:
                for k in range(n):
                    i = sympy.Integer(k)
                    self.copy(V.IndexView(i, view), WIndex(i, dest), t.elem, ctx)
                return
            var = self.loop_var("seq", n)
            loop = Loop("seq", 0, var.name, n, Block(), "copy")
            with self.into(loop.body):
                self.copy(V.IndexView(var, view), WIndex(var, dest), t.elem, ctx)
            self.block.add(loop)
            return
        raise CodegenError(f"cannot store a value of type {t}: tuples have no memory layout")

    def loop_var(self, kind: str, n: int) -> sympy.Symbol:
        var = sympy.Symbol(self.fresh(_LOOP_PREFIX[kind]))
        self.ranges[var] = (0, n - 1)
        return var

    def is_view(self, e: Expr) -> bool:
        return is_view(e)

    # ------------------------------------------------------------------------------ the walk
    def bind(self, env, params, types, views):
        out = dict(env)
        for p, t, v in zip(params, types, views):
            out[p.name] = (t, v)
        return out

    def emit_to(self, e: Expr, dest: WView, env, ctx: Ctx) -> None:
        t = self.type_of(e, env)
        if isinstance(e, Call):
            fn = e.fn
            if type(fn) is P.Map and self.is_view(fn.f.body) and not self.is_view(e):
                arg, arg_dest = self.write_through(e, dest, env)
                return self.emit_to(arg, arg_dest, env, ctx)
            if isinstance(fn, P.MapLike) and not (type(fn) is P.Map and self.is_view(e)):
                return self.emit_map(e, dest, env, ctx)
            if isinstance(fn, P.ReduceLike):
                acc_view = self.emit_reduce(e, env, ctx)
                return self.copy(V.UnitView(acc_view), dest, t, ctx)
            if isinstance(fn, UserFun):
                return self.store(dest, self.call_userfun(e, env, ctx), t)
            if isinstance(fn, Lambda) or isinstance(fn, P.Let):
                lam = fn if isinstance(fn, Lambda) else fn.f
                types = [self.type_of(a, env) for a in e.args]
                views = [self.view_of(a, env, ctx) for a in e.args]
                return self.emit_to(lam.body, dest, self.bind(env, lam.params, types, views), ctx)
            if isinstance(fn, P.ToMem):
                space = fn.space
                if space == dest.root.space:
                    return self.emit_to(e.args[0], dest, env, ctx)
                tmp = self.alloc(space, t, "temporary", ctx)
                self.emit_to(e.args[0], self.mem_dest(tmp, t), env, ctx)
                return self.copy(self.mem_view(tmp, t), dest, t, ctx)
            if (isinstance(fn, P.Primitive) and fn.kind == "layout") or type(fn) is P.Map:
                if not self.is_view(e):
                    arg, arg_dest = self.write_through(e, dest, env)
                    return self.emit_to(arg, arg_dest, env, ctx)
        self.copy(self.view_of(e, env, ctx), dest, t, ctx)

    def write_through(self, e: Call, dest: WView, env) -> tuple[Expr, WView]:
        """For a layout primitive (or a map of a layout function) above a computation: the computation and
        the destination it writes to so that the stored value is ``e``."""
        fn = e.fn
        arg = e.args[0]
        if type(fn) is P.Map:
            if not self.is_view(fn.f.body):
                raise CodegenError(f"map must be lowered before code generation: use mapGlb, mapWrg/mapLcl or mapSeq (in {_short(e)})")
            (param,) = fn.f.params
            elem_t = self.type_of(arg, env).elem
            inner_env = dict(env)
            inner_env[param.name] = (elem_t, None)
            body = fn.f.body

            def element(i, body=body, param=param, inner_env=inner_env):
                return self.invert_layout(body, param.name, WIndex(i, dest), inner_env)

            return arg, WMapped(element, dest)
        return arg, self.layout_dest(fn, self.type_of(arg, env), dest)

    def invert_layout(self, body: Expr, param: str, dest: WView, env) -> WView:
        if isinstance(body, Var) and body.name == param:
            return dest
        if isinstance(body, Call) and len(body.args) == 1 and (
            (isinstance(body.fn, P.Primitive) and body.fn.kind == "layout") or type(body.fn) is P.Map
        ):
            arg, arg_dest = self.write_through(body, dest, env)
            return self.invert_layout(arg, param, arg_dest, env)
        raise CodegenError(f"cannot store a computed value through {_short(body)}; only join, split, transpose and the vector casts invert")

    def layout_dest(self, fn, arg_type: Type, dest: WView) -> WView:
        if isinstance(fn, P.Join):
            return WJoin(self.conc(arg_type.elem.size), dest)
        if isinstance(fn, P.Split):
            return WSplit(self.conc(fn.n), dest)
        if isinstance(fn, P.Transpose):
            return WTranspose(dest)
        if isinstance(fn, P.AsScalar):
            return WAsScalar(self.conc(arg_type.elem.width), dest)
        if isinstance(fn, P.AsVector):
            return WAsVector(self.conc(fn.n), dest)
        raise CodegenError(
            f"the result of a computation cannot be stored through {fn.text_name}; "
            f"apply {fn.text_name} to the inputs instead, or compute into memory first"
        )

    def emit_map(self, e: Call, dest: WView, env, ctx: Ctx) -> None:
        fn = e.fn
        if type(fn) is P.Map:
            raise CodegenError(
                "map must be lowered before code generation: use mapGlb, mapWrg/mapLcl or mapSeq "
                f"(in {_short(e)})"
            )
        kind = _KIND[type(fn)]
        dim = getattr(fn, "dim", 0)
        inner = self.enter(kind, dim, ctx, e)
        xs = e.args[0]
        xs_t = self.type_of(xs, env)
        n = self.conc(xs_t.size)
        xs_view = self.view_of(xs, env, ctx)
        (param,) = fn.f.params
        writes_before = self.local_writes

        def body_at(index):
            env2 = self.bind(env, [param], [xs_t.elem], [V.IndexView(index, xs_view)])
            self.emit_to(fn.f.body, WIndex(index, dest), env2, inner)

        if kind == "seq" and (fn.unroll or n == 1):
            for k in range(n):
                blk = Block()
                with self.into(blk):
                    body_at(sympy.Integer(k))
                self.block.add(blk)
        else:
            var = self.loop_var(kind, n)
            loop = Loop(kind, dim, var.name, n, Block(), fn.text_name + (f"({dim})" if kind != "seq" else ""))
            with self.into(loop.body):
                body_at(var)
                if kind == "seq" and ctx.level == "group" and self.local_writes > writes_before:
                    self.block.add(Barrier())
            self.block.add(loop)
        if kind == "lcl" and not ctx.lcl and self.local_writes > writes_before:
            self.block.add(Barrier())

    def enter(self, kind: str, dim: int, ctx: Ctx, e) -> Ctx:
        if kind == "seq":
            return ctx
        if kind == "glb":
            if ctx.wrg or ctx.lcl:
                raise CodegenError(f"mapGlb({dim}) inside mapWrg/mapLcl: a kernel uses either global or work-group mapping")
            if dim in ctx.glb:
                raise CodegenError(f"mapGlb({dim}) nested inside another mapGlb({dim})")
            return replace(ctx, level="item", glb=ctx.glb | {dim})
        if kind == "wrg":
            if ctx.glb or ctx.lcl:
                raise CodegenError(f"mapWrg({dim}) inside mapGlb or mapLcl")
            if dim in ctx.wrg:
                raise CodegenError(f"mapWrg({dim}) nested inside another mapWrg({dim})")
            return replace(ctx, level="group", wrg=ctx.wrg | {dim})
        if kind == "lcl":
            if not ctx.wrg:
                raise CodegenError(f"mapLcl({dim}) must be nested inside a mapWrg")
            if dim in ctx.lcl:
                raise CodegenError(f"mapLcl({dim}) nested inside another mapLcl({dim})")
            return replace(ctx, level="item", lcl=ctx.lcl | {dim})
        raise AssertionError(kind)

    def emit_reduce(self, e: Call, env, ctx: Ctx) -> V.View:
        """Emit a sequential reduction; returns a view of its accumulator (type T, not [T]1)."""
        fn = e.fn
        if not isinstance(fn, P.ReduceSeq):
            raise CodegenError(f"reduce must be lowered to reduceSeq before code generation (in {_short(e)})")
        init, xs = e.args
        acc_t = self.type_of(init, env)
        if isinstance(init, Call) and isinstance(init.fn, P.ToMem):
            space, src = init.fn.space, init.args[0]
        else:
            space, src = "private", init
        acc = self.alloc(space, acc_t, "accumulator", ctx)
        self.emit_to(src, self.mem_dest(acc, acc_t), env, ctx)
        acc_view = self.mem_view(acc, acc_t)
        acc_dest = self.mem_dest(acc, acc_t)
        xs_t = self.type_of(xs, env)
        n = self.conc(xs_t.size)
        xs_view = self.view_of(xs, env, ctx)
        p_acc, p_x = fn.f.params

        def step(index):
            env2 = self.bind(env, [p_acc, p_x], [acc_t, xs_t.elem], [acc_view, V.IndexView(index, xs_view)])
            self.emit_to(fn.f.body, acc_dest, env2, ctx)

        if fn.unroll or n == 1:
            for k in range(n):
                step(sympy.Integer(k))
        else:
            var = self.loop_var("seq", n)
            loop = Loop("seq", 0, var.name, n, Block(), fn.text_name)
            with self.into(loop.body):
                step(var)
            self.block.add(loop)
        return acc_view

    def call_userfun(self, e: Call, env, ctx: Ctx) -> str:
        fn: UserFun = e.fn
        arg_types = [self.type_of(a, env) for a in e.args]
        _, binding = fn.instantiate(arg_types)
        binding = {k: _concrete_type(v, self) for k, v in binding.items()}
        cname = fn.c_name(binding)
        if cname not in self.functions:
            self.functions[cname] = fn.c_definition(binding)
        args = [self.read(self.view_of(a, env, ctx)) for a in e.args]
        return f"{cname}({', '.join(args)})"

    def view_of(self, e: Expr, env, ctx: Ctx) -> V.View:
        if isinstance(e, Var):
            if e.name not in env:
                raise CodegenError(f"internal: unbound variable {e.name}")
            return env[e.name][1]
        if isinstance(e, Literal):
            leaf = innermost(e.type)
            return V.ConstView(e.value, scalar_of(e.type), self.leaf_width(leaf))
        if not isinstance(e, Call):
            raise CodegenError(f"internal: cannot view {e!r}")
        fn = e.fn
        if isinstance(fn, P.Primitive) and fn.kind == "layout":
            views = [self.view_of(a, env, ctx) for a in e.args]
            types = [self.type_of(a, env) for a in e.args]
            return fn.view(views, types, self.conc)
        if isinstance(fn, (P.Map, P.MapSeq)) and self.is_view(fn.f.body):
            xs = e.args[0]
            xs_t = self.type_of(xs, env)
            xs_view = self.view_of(xs, env, ctx)
            (param,) = fn.f.params

            def element(i, body=fn.f.body, param=param, elem_t=xs_t.elem, xs_view=xs_view):
                return self.view_of(body, self.bind(env, [param], [elem_t], [V.IndexView(i, xs_view)]), ctx)

            return V.MapView(element)
        if isinstance(fn, UserFun):
            return V.CodeView(self.call_userfun(e, env, ctx))
        if isinstance(fn, Lambda) or isinstance(fn, P.Let):
            lam = fn if isinstance(fn, Lambda) else fn.f
            types = [self.type_of(a, env) for a in e.args]
            views = [self.view_of(a, env, ctx) for a in e.args]
            return self.view_of(lam.body, self.bind(env, lam.params, types, views), ctx)
        if isinstance(fn, P.ToMem):
            t = self.type_of(e, env)
            tmp = self.alloc(fn.space, t, "temporary", ctx)
            self.emit_to(e.args[0], self.mem_dest(tmp, t), env, ctx)
            return self.mem_view(tmp, t)
        if isinstance(fn, P.ReduceLike):
            return V.UnitView(self.emit_reduce(e, env, ctx))
        if isinstance(fn, P.MapLike):
            if isinstance(fn, (P.MapGlb, P.MapWrg, P.MapLcl)) or ctx.level != "item":
                raise CodegenError(
                    f"the result of {fn.text_name} is used as an input here; say where it lives with "
                    f"toLocal(...) or toPrivate(...) (in {_short(e)})"
                )
            t = self.type_of(e, env)
            tmp = self.alloc("private", t, "temporary", ctx)
            self.emit_to(e, self.mem_dest(tmp, t), env, ctx)
            return self.mem_view(tmp, t)
        raise CodegenError(f"cannot generate code for {_short(e)}")


def _concrete_type(t: Type, em: Emitter) -> Type:
    if isinstance(t, VectorType):
        return VectorType(t.scalar, em.conc(t.width))
    return t


def _short(e) -> str:
    from ..ir.printer import show

    text = " ".join(show(e).split())
    return text if len(text) <= 120 else text[:117] + "..."
