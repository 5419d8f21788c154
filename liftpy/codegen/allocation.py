"""Where a lowered program allocates memory, written once for the emitter and the constraint inference.

The emitter (``liftpy.codegen.emit``) allocates while it generates code, for concrete sizes; the constraint
inference (``liftpy.constraints.resources``) needs the same allocations as expressions over the tuning
parameters, before any code exists, to bound a space by the device's local and private memory.  Two
separate walks drifted apart (the private temporary of a ``mapSeq`` read as an input was missing from the
estimate), so both now rest on this module:

- ``store_form`` and ``read_form`` say which way the emitter takes through an expression it stores into a
  destination or reads as an input; the emitter dispatches on them, and ``allocations`` follows the same
  ways over symbolic types;
- ``needs_temporary(e, position)`` decides whether an expression in a position gets memory of its own (a
  reduction's accumulator, a ``toLocal``/``toPrivate`` value whose destination is elsewhere, a sequential
  ``mapSeq`` read inside a work-item), in which space and with which role; the emitter allocates exactly
  where it answers, under the name ``buffer_prefix`` gives;
- ``item_share`` is the part of a private value one work-item keeps: a value computed by a ``mapLcl`` nest
  at work-group level is declared for the whole group, and the privatization pass
  (``liftpy.codegen.passes.privatize``) shrinks it to the block each work-item's local ids select.  The
  analysis assumes that the pass succeeds, as it does when every ``mapLcl`` around the value spans the
  work-group in its dimension; where one does not (a shorter ``mapLcl`` beside a longer one in the same
  dimension), each work-item keeps the whole value, the estimate is short by the rest, and code
  generation's check of the plan is what refuses the point if it does not fit.

Pass temporaries are left out, on purpose.  The passes after the emitter add private registers of their
own: the lanes of a transposing cooperative copy (``cp<k>``, one vector), the prefetched tiles of a
software-pipelined loop (``pf<k>``, at most ``MAX_PREFETCH`` floats per loop) and the vector loads that
replace four scalar loads of an unrolled block (``v<k>``, four floats each, over a hundred of them in a
fully unrolled register block).  Their number depends on the unrolled, simplified statements of one
concrete kernel, which a symbolic walk does not have, so no allowance per kernel bounds them short of a
worst case; and they hold, for a few statements, values the kernel loads anyway, which a compiler keeps
in the registers it would have used for the scalar loads.  Counting that worst case would take valid,
fast points out of every space.  The memory plan of a generated kernel lists them, and code generation
checks that plan, pass temporaries included, against the device (``codegen.kernel._check_memory``), so an
estimate short by them makes a point invalid, never a crashed driver.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import CodegenError
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, Expr, Lambda, Literal, Program, Var
from ..ir.typecheck import type_of
from ..ir.types import ArrayType, Type, memory_bytes
from ..ir.userfun import UserFun
from .execution import Position, Temporary, execution_of  # noqa: F401 - Position, Temporary: found here by callers
from ..ir.printer import show


@dataclass(frozen=True)
class Allocation:
    """One buffer the emitter allocates, over the program's size variables and tuning parameters."""

    name: str  # the emitter's name for it (acc_0, priv_1, loc_0)
    space: str
    role: str
    type: Type  # the value it holds, as declared
    share: Type  # the part of it one work-item keeps (the whole value, but for spread private values)
    level: str  # 'kernel', 'group' or 'item': who computes it
    copies: int = 1  # halves of a double-buffered tile

    @property
    def bytes(self) -> sympy.Expr:
        return self.copies * memory_bytes(self.type)

    @property
    def item_bytes(self) -> sympy.Expr:
        """Private memory per work-item, after privatization; for local memory the group's bytes."""
        return self.copies * memory_bytes(self.share)

    def describe(self) -> str:
        if self.copies > 1:
            return f"{self.role} {self.name} of {self.copies} x {self.type} (double-buffered)"
        if self.share == self.type:
            return f"{self.role} {self.name} of {self.type}"
        return f"{self.role} {self.name} of {self.share} (a work-item's part of {self.type})"


def buffer_prefix(space: str, role: str) -> str:
    return {"private": "acc" if role == "accumulator" else "priv", "local": "loc"}.get(space, space)


# ------------------------------------------------------------------------------------ the decisions
def store_form(e: Expr) -> str:
    """How the emitter computes ``e`` into a destination: 'through' (a layout over a computation: the
    computation is stored through the inverted layout), 'compute' (a computing primitive, stored as its
    ``liftpy.codegen.execution`` entry says), 'userfun', 'bind' (a lambda or let: its arguments are read,
    its body stored), 'memory' (a ``toMem`` marker), or 'read' (a view of ``e`` is copied)."""
    if not isinstance(e, Call):
        return "read"
    fn = e.fn
    if type(fn) is P.Map and is_view(fn.f.body) and not is_view(e):
        return "through"
    if execution_of(fn) is not None and not (type(fn) is P.Map and is_view(e)):
        return "compute"
    if isinstance(fn, UserFun):
        return "userfun"
    if isinstance(fn, (Lambda, P.Let)):
        return "bind"
    if isinstance(fn, P.ToMem):
        return "memory"
    if ((isinstance(fn, P.Primitive) and fn.kind == "layout") or type(fn) is P.Map) and not is_view(e):
        return "through"
    return "read"


def inverts(fn, arg_type: Type) -> bool:
    """Whether a computation can be stored through the layout primitive ``fn`` above it: the emitter then
    writes it through the write view the primitive declares (``write_view``), asked here over symbols."""
    return fn.write_view is not None and fn.write_view(arg_type, None, _symbolic) is not None


def _symbolic(size):
    return size


def not_inverted(fn) -> str:
    """The emitter's refusal of a computation stored through a layout that ``inverts`` refuses."""
    return (f"the result of a computation cannot be stored through {fn.text_name}; "
            f"apply {fn.text_name} to the inputs instead, or compute into memory first")


def not_invertible_body(body: Expr) -> str:
    """The emitter's refusal of a computation stored through a map of a function that is no layout."""
    return (f"cannot store a computed value through {_short(body)}; only join, split, transpose, the vector casts "
            "and at(0, ...) of a one-element array invert")


def read_form(e: Expr) -> str:
    """How the emitter reads ``e`` as an input: 'var', 'literal', 'layout' (a view of its arguments'
    views), 'view-map' (a map of a view function, element by element), 'userfun', 'bind', 'memory',
    'compute' (a computing primitive, read as its ``liftpy.codegen.execution`` entry says) or 'unknown' (no
    code for it)."""
    if isinstance(e, Var):
        return "var"
    if isinstance(e, Literal):
        return "literal"
    if not isinstance(e, Call):
        return "unknown"
    fn = e.fn
    if isinstance(fn, P.Primitive) and fn.kind == "layout":
        return "layout"
    if isinstance(fn, (P.Map, P.MapSeq)) and is_view(fn.f.body):
        return "view-map"
    if isinstance(fn, UserFun):
        return "userfun"
    if isinstance(fn, (Lambda, P.Let)):
        return "bind"
    if isinstance(fn, P.ToMem):
        return "memory"
    if execution_of(fn) is not None:
        return "compute"
    return "unknown"


def needs_temporary(e: Expr, at: Position) -> Temporary | None:
    """The memory the emitter allocates for ``e`` itself (not for its sub-expressions) in position ``at``,
    or None.  A computed map read outside a work-item has nowhere to live: that is a ``CodegenError``."""
    if not isinstance(e, Call):
        return None
    fn = e.fn
    form = read_form(e) if at.reads else store_form(e)
    if form == "compute":
        return execution_of(fn).temporary(e, at)
    if form == "memory" and (at.reads or fn.space != at.dest):
        return Temporary(fn.space, "temporary", fn.copies)
    return None


def is_staged_view(e: Call, t: Type, level: str) -> bool:
    """A ``toLocal`` of a view at work-group level: the whole group copies it (a cooperative copy), rather
    than one work-item computing it."""
    return e.fn.space == "local" and level == "group" and is_view(e.args[0]) and isinstance(t, ArrayType)


def item_share(value: Expr, t: Type) -> Type:
    """The part of a private value computed at work-group level that one work-item keeps: each ``mapLcl``
    around the value spreads one dimension of it over the work-items."""
    e = value
    while isinstance(e, Call) and isinstance(e.fn, P.MapLcl) and isinstance(t, ArrayType):
        t = t.elem
        e = e.fn.f.body
    return t


# ------------------------------------------------------------------------------------ the analysis
def refusals(program: Program) -> tuple[str, ...]:
    """Why the emitter would refuse ``program`` (a computed map read where nothing can hold it), found
    without generating code: derivation drops such variants with these reasons."""
    walk = _Walk()
    env = {p.name: t for p, t in zip(program.params, program.param_types)}
    walk.store(program.body, Position("kernel", "global"), env)
    return tuple(walk.refused)


def allocations(program: Program) -> tuple[Allocation, ...]:
    """Every buffer the emitter allocates for ``program``, in the order it does, with symbolic sizes.
    Where the emitter would refuse the program, the walk passes over the refused part."""
    walk = _Walk()
    env = {p.name: t for p, t in zip(program.params, program.param_types)}
    walk.store(program.body, Position("kernel", "global"), env)
    return tuple(walk.found)


def private_bytes(allocs) -> sympy.Expr:
    """Private memory per work-item of the emitter's buffers (pass temporaries left out, see above)."""
    return sympy.Add(*[a.item_bytes for a in allocs if a.space == "private"])


class _Walk:
    """The emitter's walk (``emit_to``, ``view_of`` and the executions of ``liftpy.codegen.execution``) over types instead of views: the same
    forms, visited in the same order, so buffers are found in the order, and with the names, the emitter
    gives them."""

    def __init__(self):
        self.found: list[Allocation] = []
        self.counters: dict[str, int] = {}
        self.refused: list[str] = []  # why the emitter would refuse the program, where it would

    def type_of(self, e: Expr, env) -> Type:
        return type_of(e, {n: env[n] for n in e.free_vars if n in env})

    def allocate(self, tmp: Temporary, value: Expr, t: Type, level: str) -> None:
        if tmp.space not in ("local", "private"):
            return
        prefix = buffer_prefix(tmp.space, tmp.role)
        k = self.counters.get(prefix, 0)
        self.counters[prefix] = k + 1
        share = item_share(value, t) if tmp.space == "private" and level == "group" else t
        self.found.append(Allocation(f"{prefix}_{k}", tmp.space, tmp.role, t, share, level, tmp.copies))

    def store(self, e: Expr, at: Position, env) -> None:
        form = store_form(e)
        if form == "through":
            why = self.through_refusal(e, env)
            if why is not None:
                self.refused.append(why)
                return  # the emitter refuses the program here
            return self.store(e.args[0], at, env)
        if form == "compute":
            return execution_of(e.fn).walk_store(self, e, at, env)
        if form == "userfun":
            return self.read_all(e.args, at.level, env)
        if form == "bind":
            return self.store(self.body_of(e), at, self.bind(e, at.level, env))
        if form == "memory":
            tmp = needs_temporary(e, at)
            if tmp is None:
                return self.store(e.args[0], at, env)
            self.allocate(tmp, e.args[0], self.type_of(e, env), at.level)
            return self.store(e.args[0], Position(at.level, tmp.space), env)
        self.read(e, at.level, env)

    def through_refusal(self, e: Call, env) -> str | None:
        """Why the emitter cannot store a computation through the layout ``e`` puts above it (its
        ``write_through``, ``invert_layout``), or None."""
        fn = e.fn
        if type(fn) is P.Map and not is_view(fn.f.body):
            return f"map must be lowered before code generation: use mapGlb, mapWrg/mapLcl or mapSeq (in {_short(e)})"
        if type(fn) is P.Map:  # a layout function applied to every element: its body inverted
            (param,) = fn.f.params
            elem_t = self.type_of(e.args[0], env).elem
            body, inner = fn.f.body, {**env, param.name: elem_t}
            while not (isinstance(body, Var) and body.name == param.name):
                if not (isinstance(body, Call) and len(body.args) == 1
                        and ((isinstance(body.fn, P.Primitive) and body.fn.kind == "layout") or type(body.fn) is P.Map)):
                    return not_invertible_body(body)
                why = self.through_refusal(body, inner)
                if why is not None:
                    return why
                body = body.args[0]
            return None
        return None if inverts(fn, self.type_of(e.args[0], env)) else not_inverted(fn)

    def read(self, e: Expr, level: str, env) -> None:
        form = read_form(e)
        if form in ("layout", "userfun"):
            self.read_all(e.args, level, env)
        elif form == "view-map":
            self.read(e.args[0], level, env)
        elif form == "bind":
            self.read(self.body_of(e), level, self.bind(e, level, env))
        elif form == "memory":
            t = self.type_of(e, env)
            tmp = needs_temporary(e, Position(level))
            self.allocate(tmp, e.args[0], t, level)
            if is_staged_view(e, t, level):
                self.read(e.args[0], level, env)
            else:
                self.store(e.args[0], Position(level, tmp.space), env)
        elif form == "compute":
            execution_of(e.fn).walk_read(self, e, level, env)

    def read_all(self, args, level: str, env) -> None:
        for a in args:
            self.read(a, level, env)

    @staticmethod
    def body_of(e: Call) -> Expr:
        return (e.fn if isinstance(e.fn, Lambda) else e.fn.f).body

    def bind(self, e: Call, level: str, env) -> dict:
        lam = e.fn if isinstance(e.fn, Lambda) else e.fn.f
        types = [self.type_of(a, env) for a in e.args]
        self.read_all(e.args, level, env)
        return {**env, **{p.name: t for p, t in zip(lam.params, types)}}


def _short(e) -> str:
    text = " ".join(show(e).split())
    return text if len(text) <= 120 else text[:117] + "..."
