"""The emitter: a lowered program becomes statement IR (``liftpy.codegen.stmt``) and its buffers.

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
Which way the walk takes through an expression, and whether it allocates there, is decided by
``liftpy.codegen.allocation`` (``store_form``, ``read_form``, ``needs_temporary``), which the constraint
inference reads too: the memory a space is bounded by is the memory the kernels allocate.

Barriers: after a ``mapLcl`` nest that wrote local memory (which other work-items of the group read), and
at the end of a sequential loop or reduction at work-group level whose body writes local memory (so the
next iteration does not overwrite what others still read).  Never inside a ``mapLcl`` loop, where not
every work-item of the group would reach it.

The emitter only decides *what* is computed where; indices are left as the views produce them.
Unrolling, simplification, vectorization, address arithmetic and printing are passes over the statement
IR that follow (``liftpy.codegen.passes``, ``liftpy.codegen.render``).
"""

from __future__ import annotations

from contextlib import contextmanager
from fractions import Fraction
from dataclasses import dataclass, replace
from typing import Mapping

import sympy

from .. import arith as A
from ..errors import CodegenError
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Var
from ..ir.typecheck import evaluated, type_in
from ..ir.types import (
    ArrayType,
    Elements,
    ScalarType,
    TupleType,
    Type,
    VectorType,
    flat_count,
    innermost,
    memory_element,
    scalar_of,
    substitute_sizes,
)
from ..ir.userfun import BUILTINS, UserFun, vectorize
from ..ir.values import literal_number
from ..ir.levels import Level
from ..views import view as V
from ..views.conditions import FOLDED, fold_builtin
from ..views.write import WIndex, WMapped, WMem, WView
from .allocation import (Position, Temporary, buffer_prefix, is_staged_view, needs_temporary, not_invertible_body, not_inverted,
                         read_form, store_form)
from .execution import execution_of
from .memory import Buffer, struct_definition
from .render import literal_c
from .stmt import Barrier, Block, CoopCopy, Declare, Loop, Store
from ..ir.printer import show


REGISTER_COPY_LIMIT = 256  # elements of a private array copied with constant indices


@dataclass(frozen=True)
class Ctx:
    """Where the code being emitted runs."""

    level: str = "kernel"  # 'kernel', 'group' (inside mapWrg) or 'item' (inside mapGlb/mapLcl)
    used: tuple = ()  # (Level, dim) of the parallel maps around

    def dims(self, level: Level) -> set[int]:
        return {d for l, d in self.used if l is level}

    def at(self, dest: WView | None = None) -> Position:
        """The position, for ``liftpy.codegen.allocation``, of an expression stored through ``dest`` here
        (read as an input when None)."""
        return Position(self.level, None if dest is None else dest.root.space)


def _concrete(size, bindings: Mapping):
    """The value of a size with ``bindings`` for its symbols: an int where Python's exact arithmetic
    computes it (``typecheck.evaluated``: some microseconds), else the size with the values substituted
    (sympy's ``xreplace``, which evaluates the expression again: some 30 microseconds per size, and a point
    asks for some 25 distinct sizes)."""
    value = evaluated(size, bindings)
    if isinstance(value, Fraction) and value.denominator == 1:
        value = value.numerator
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return substitute_sizes(size, bindings)


class Emitter:
    def __init__(self, bindings: Mapping):
        self.bindings = dict(bindings)
        self._concrete: dict = {}  # size -> its value: the same sizes are asked for again and again
        self.buffers: list[Buffer] = []
        self.functions: dict[str, str] = {}
        self.counters: dict[str, int] = {}
        self.root: list = []
        self.block = self.root
        self.local_buffers: list[Buffer] = []

    # ------------------------------------------------------------------------------------ helpers
    def conc(self, size) -> int:
        size = sympy.sympify(size)
        if size.is_Integer:
            return int(size)
        v = self._concrete.get(size)
        if v is None:
            v = self._concrete[size] = _concrete(size, self.bindings)
        if isinstance(v, int):
            return v
        if not v.is_Integer:
            missing = ", ".join(sorted(str(s) for s in v.free_symbols))
            raise CodegenError(f"no value for {missing} (needed for the size {size}); pass it in sizes=")
        return int(v)

    def fresh(self, prefix: str) -> str:
        k = self.counters.get(prefix, 0)
        self.counters[prefix] = k + 1
        return f"{prefix}_{k}"

    def type_of(self, e: Expr, env) -> Type:
        return type_in(e, env)

    @contextmanager
    def into(self, items: list):
        saved = self.block
        self.block = items
        try:
            yield
        finally:
            self.block = saved

    def add(self, stmt) -> None:
        self.block.append(stmt)

    def body(self) -> Block:
        return Block(tuple(self.root))

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
    def alloc(self, tmp: Temporary, t: Type, ctx: Ctx) -> Buffer:
        """A buffer for what ``allocation.needs_temporary`` decided, the only place memory is allocated."""
        space, role = tmp.space, tmp.role
        scalar = self.element(t)
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
        name = self.fresh(buffer_prefix(space, role))
        # A double-buffered tile's second half is addressed by the loop that alternates them
        # (passes.pipeline); views of the value read the first.
        buf = Buffer(name, space, scalar, count * tmp.copies, sym * tmp.copies, role, t)
        self.buffers.append(buf)
        if space == "private":
            self.add(Declare(buf))
        else:
            self.local_buffers.append(buf)
        return buf

    def element(self, t: Type):
        """The element type of a buffer holding a ``t`` (a scalar, or a struct for tuples, whose C
        definition the kernel then carries)."""
        elem = memory_element(t)
        if elem is None:
            raise CodegenError(f"cannot keep a value of type {t} in memory: tuple components must be scalars, "
                               "vectors or tuples of them, not arrays; keep the arrays apart (zip them when read)")
        if isinstance(elem, TupleType):
            self.struct(elem)
        return elem

    def struct(self, t: TupleType) -> None:
        for e in t.elems:
            if isinstance(e, TupleType):
                self.struct(e)
        if t.c_name not in self.functions:
            self.functions[t.c_name] = struct_definition(t)

    def constant_array(self, e) -> V.MemView:
        """An array literal given element by element lives in the program's constant memory."""
        t = e.type
        scalar = scalar_of(t)
        values = self.flat_values(literal_number(e.value, t, self.bindings), t)
        name = self.fresh("const")
        buf = Buffer(name, "constant", scalar, len(values), flat_count(t), "constant", t)
        text = ", ".join(literal_c(v, scalar) for v in values)
        self.functions[name] = f"constant {scalar.c_name} {name}[{len(values)}] = {{{text}}};"
        return self.mem_view(buf, t)

    def const_leaf(self, t: Type):
        """What ``views.ConstView`` needs to know of a tuple constant's type (views do not read types)."""
        if isinstance(t, TupleType):
            self.struct(t)
            return (t, [self.const_leaf(e) for e in t.elems])
        return (scalar_of(t), self.leaf_width(t))

    def flat_values(self, value, t: Type) -> list:
        if isinstance(t, ArrayType):
            n = self.conc(t.size)
            if isinstance(value, Elements):
                return [x for v in value for x in self.flat_values(v, t.elem)]
            return self.flat_values(value, t.elem) * n
        if isinstance(t, VectorType):
            return list(value) if isinstance(value, tuple) else [value] * self.conc(t.width)
        return [value]

    def mem_view(self, buf: Buffer, t: Type) -> V.MemView:
        dims, width = self.dims_of(t)
        return V.MemView(buf, dims, width)

    def mem_dest(self, buf: Buffer, t: Type) -> WMem:
        dims, width = self.dims_of(t)
        return WMem(buf, dims, width)

    # ------------------------------------------------------------------------------ reading values
    def read(self, view: V.View, t: Type) -> V.Read:
        """The value of ``view`` (of type ``t``); a tuple is read component by component (a zip's element
        has no memory of its own), which gives back the struct itself where it is one."""
        if isinstance(t, TupleType):
            self.struct(t)
            return V.tuple_read(tuple(self.read(V.FieldView(k, view), e) for k, e in enumerate(t.elems)), t)
        return view.access(())

    def store(self, dest: WView, value: V.Read, t: Type) -> None:
        loc = dest.locate(())
        self.add(Store(loc.buffer, A.as_expr(loc.index), value, self.leaf_width(t)))

    def copy(self, view: V.View, dest: WView, t: Type, ctx: Ctx, registers: bool = False) -> None:
        """Store every element of ``view`` through ``dest`` (sequentially, in the current work-item).
        ``registers``: the copy reads or writes a private array, which stays in registers only if every
        index is a constant, so its loops are unrolled (up to ``REGISTER_COPY_LIMIT`` elements)."""
        if isinstance(t, (ScalarType, VectorType, TupleType)):
            self.store(dest, self.read(view, t), t)
            return
        if isinstance(t, ArrayType):
            n = self.conc(t.size)
            unroll = n <= 4 or (registers and self.conc(flat_count(t)) <= REGISTER_COPY_LIMIT)
            var = self.loop_var(Level.SEQ)
            items: list = []
            with self.into(items):
                self.copy(V.IndexView(var, view), WIndex(var, dest), t.elem, ctx, registers)
            self.add(Loop(var, n, Level.SEQ, 0, Block(tuple(items)), unroll=unroll, note="copy"))
            return
        raise CodegenError(f"internal: cannot store a value of type {t}")

    @staticmethod
    def private_view(view: V.View) -> bool:
        return isinstance(view, V.MemView) and view.buffer.space == "private"

    def loop_var(self, level: Level) -> A.Var:
        return A.var(self.fresh(level.prefix))

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
        form = store_form(e)
        if form == "through":
            arg, arg_dest = self.write_through(e, dest, env)
            return self.emit_to(arg, arg_dest, env, ctx)
        if form == "compute":
            return execution_of(e.fn).store(self, e, dest, env, ctx)
        if form == "userfun":
            return self.store(dest, self.call_userfun(e, env, ctx), t)
        if form == "bind":
            lam = e.fn if isinstance(e.fn, Lambda) else e.fn.f
            types = [self.type_of(a, env) for a in e.args]
            views = [self.view_of(a, env, ctx) for a in e.args]
            return self.emit_to(lam.body, dest, self.bind(env, lam.params, types, views), ctx)
        if form == "memory":
            tmp = needs_temporary(e, ctx.at(dest))
            if tmp is None:
                return self.emit_to(e.args[0], dest, env, ctx)
            buf = self.alloc(tmp, t, ctx)
            self.emit_to(e.args[0], self.mem_dest(buf, t), env, ctx)
            return self.copy(self.mem_view(buf, t), dest, t, ctx, registers=tmp.space == "private")
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
        raise CodegenError(not_invertible_body(body))

    def layout_dest(self, fn, arg_type: Type, dest: WView) -> WView:
        view = fn.write_view(arg_type, dest, self.conc) if fn.write_view is not None else None
        if view is None:
            raise CodegenError(not_inverted(fn))
        return view

    def enter(self, level: Level, dim: int, ctx: Ctx) -> Ctx:
        if level is Level.SEQ:
            return ctx
        enclosing = {l: ctx.dims(l) for l in Level}
        problem = level.nesting_error(dim, enclosing)
        if problem is not None:
            raise CodegenError(problem)
        return replace(ctx, level=level.inner_context, used=ctx.used + ((level, dim),))

    def call_userfun(self, e: Call, env, ctx: Ctx) -> V.Read:
        fn: UserFun = e.fn
        arg_types = [self.type_of(a, env) for a in e.args]
        result, binding = fn.instantiate(arg_types)
        if fn.base is not None and not fn.is_generic and fn.vector_width is not None:
            # A user's scalar function vectorized by a rule has the tuning parameter as its width (float<v0>);
            # the kernel defines and calls the one of the width this point gives it.
            fn = vectorize(self.conc(fn.vector_width), fn.base)
        binding = {k: _concrete_type(v, self) for k, v in binding.items()}
        cname = fn.c_name(binding)
        args = None
        if fn.name in FOLDED and BUILTINS.get(fn.name) is fn and isinstance(result, ScalarType):
            # A select over a mask or an index, a comparison of indices: a condition on positions, no call.
            args = tuple(self.read(self.view_of(a, env, ctx), t) for a, t in zip(e.args, arg_types))
            folded = fold_builtin(fn.name, args, result)
            if folded is not None:
                return folded
        if cname not in self.functions:
            for t in (*arg_types, result):
                if isinstance(t, TupleType):
                    self.element(t)
            self.functions[cname] = fn.c_definition(binding)
        if args is None:
            args = tuple(self.read(self.view_of(a, env, ctx), t) for a, t in zip(e.args, arg_types))
        return V.FunCall(cname, args)

    def view_of(self, e: Expr, env, ctx: Ctx) -> V.View:
        form = read_form(e)
        if form == "var":
            if e.name not in env:
                raise CodegenError(f"internal: unbound variable {e.name}")
            return env[e.name][1]
        if form == "literal":
            if isinstance(e.value, Elements):
                return self.constant_array(e)
            # A literal whose value is a size's (lit(N)) has the number in the kernel.
            value = literal_number(e.value, e.type, self.bindings)
            leaf = innermost(e.type)
            if isinstance(leaf, TupleType):
                return V.ConstView(value, None, 1, leaf=self.const_leaf(leaf))
            return V.ConstView(value, scalar_of(e.type), self.leaf_width(leaf))
        if not isinstance(e, Call):
            raise CodegenError(f"internal: cannot view {e!r}")
        fn = e.fn
        if form == "layout":
            views = [self.view_of(a, env, ctx) for a in e.args]
            types = [self.type_of(a, env) for a in e.args]
            return fn.view(views, types, self.conc)
        if form == "view-map":
            xs = e.args[0]
            xs_t = self.type_of(xs, env)
            xs_view = self.view_of(xs, env, ctx)
            (param,) = fn.f.params

            def element(i, body=fn.f.body, param=param, elem_t=xs_t.elem, xs_view=xs_view):
                return self.view_of(body, self.bind(env, [param], [elem_t], [V.IndexView(i, xs_view)]), ctx)

            return V.MapView(element)
        if form == "userfun":
            return V.ValueView(self.call_userfun(e, env, ctx))
        if form == "bind":
            lam = fn if isinstance(fn, Lambda) else fn.f
            types = [self.type_of(a, env) for a in e.args]
            views = [self.view_of(a, env, ctx) for a in e.args]
            return self.view_of(lam.body, self.bind(env, lam.params, types, views), ctx)
        if form == "memory":
            t = self.type_of(e, env)
            buf = self.alloc(needs_temporary(e, ctx.at()), t, ctx)
            if is_staged_view(e, t, ctx.level):
                # The whole group copies the view (passes.copies decides how).
                dims, width = self.dims_of(t)
                self.add(CoopCopy(self.view_of(e.args[0], env, ctx), buf, dims, width))
                self.add(Barrier())
            else:
                self.emit_to(e.args[0], self.mem_dest(buf, t), env, ctx)
            return self.mem_view(buf, t)
        if form == "compute":
            return execution_of(fn).read(self, e, env, ctx)
        raise CodegenError(f"cannot generate code for {_short(e)}")


def _concrete_type(t: Type, em: Emitter) -> Type:
    if isinstance(t, VectorType):
        return VectorType(t.scalar, em.conc(t.width))
    return t


def _short(e) -> str:
    text = " ".join(show(e).split())
    return text if len(text) <= 120 else text[:117] + "..."
