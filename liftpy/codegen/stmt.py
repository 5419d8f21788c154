"""The statement IR: what the emitter produces and every low-level pass transforms.

A kernel is a tree of statements (loops with their level, dimension and extent; declarations of private
arrays; stores of a value at an index; barriers; integer definitions for address arithmetic) over
*values*, which are the ``Read`` trees the views resolve to (memory reads, constants, conditional reads,
lane-built vectors, image texels, user-function calls).  Indices and conditions are integer expressions over
loop variables (``liftpy.arith``), so a pass can ask their ranges, substitute, split or hoist them.

Nodes are frozen: a pass is a function ``Kernel -> Kernel`` (``liftpy.codegen.passes``), as TVM's TIR
passes are ``PrimFunc -> PrimFunc``; printing to OpenCL C is the last pass (``liftpy.codegen.render``).
The generic traversals here (``map_block``, ``map_exprs``, ``walk``) are what lets a pass touch only the
nodes it is about.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterator


from ..ir.levels import Level
from ..views import view as V
from .. import arith as A
from ..arith import bounds
from ..arith import substitute as _substitute_expr
from .memory import Buffer


class Stmt:
    """Base class of statements."""


@dataclass(frozen=True)
class Block(Stmt):
    """A sequence of statements.  A block nested in another block is a C scope (``{ ... }``)."""

    items: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Loop(Stmt):
    """``for var in [0, extent)`` at a level: sequential, or distributed over work-items/work-groups in
    NDRange dimension ``dim``.  ``unroll`` asks the unrolling pass to replace the loop by its copies;
    ``compiler_unroll`` leaves it a loop, printed with ``#pragma unroll`` for the OpenCL compiler to unroll."""

    var: A.Var
    extent: int
    level: Level
    dim: int
    body: Block
    unroll: bool = False
    note: str = ""
    compiler_unroll: bool = False


@dataclass(frozen=True)
class Declare(Stmt):
    """A private array (or a scalar variable, for one element) of one work-item, declared here."""

    buffer: Buffer


@dataclass(frozen=True)
class Store(Stmt):
    """``buffer[index .. index + width) = value``; ``aligned`` when the index is a multiple of the width."""

    buffer: Buffer
    index: A.Expr
    value: V.Read
    width: int = 1
    aligned: bool = False


@dataclass(frozen=True)
class IndexDef(Stmt):
    """``int var = value;``: address arithmetic computed once where it is invariant."""

    var: A.Var
    value: A.Expr


@dataclass(frozen=True)
class If(Stmt):
    """``if (cond) body``: the guard of a cooperative copy whose length is no multiple of the group."""

    cond: A.Cond
    body: Block


@dataclass(frozen=True)
class CoopCopy(Stmt):
    """All the work-items of a group copy the value of ``source`` (a view of an array with lengths
    ``dims`` and leaf vector width ``width``) into the local buffer ``dest``, row-major.  How they share it
    (the order, which work-item takes which element, vector loads) is decided once the work-group size is
    known, by ``passes.copies``."""

    source: V.View
    dest: Buffer
    dims: tuple[int, ...]
    width: int = 1


@dataclass(frozen=True)
class Barrier(Stmt):
    fence: str = "CLK_LOCAL_MEM_FENCE"


@dataclass(frozen=True)
class Comment(Stmt):
    text: str


@dataclass(frozen=True)
class LastGroup(Stmt):
    """After the statements before it, in every work-group: the group takes a ticket from the global
    counter ``ticket``, and the group that takes the last one runs ``body`` (on every item, or on its
    first item alone when ``body`` is one work-item's code), then sets the counter back to zero
    (``liftpy.codegen.last_group``).  ``flag``: the local word that tells the group's items."""

    ticket: Buffer
    flag: Buffer
    body: Block
    every_item: bool = False


@dataclass(frozen=True)
class Kernel:
    """A whole kernel: parameters (inputs, then the output), work-group-shared buffers, the body, and the
    C definitions of the user functions it calls."""

    name: str
    params: tuple[Buffer, ...]
    locals: tuple[Buffer, ...]
    body: Block
    functions: tuple[tuple[str, str], ...] = ()  # (C name, definition)
    notes: dict = field(default_factory=dict, compare=False)  # what passes did, for the header and tests

    def replace(self, **changes) -> "Kernel":
        return dataclasses.replace(self, **changes)


# --------------------------------------------------------------------------------------------------
# Traversals

CONTAINERS = (Loop, If, LastGroup)  # statements with a body; everything else is a leaf


def descend(s: Stmt, fn: Callable[[Block], Block]) -> Stmt:
    """A container statement with ``fn`` applied to its body; any other statement unchanged."""
    if isinstance(s, Loop):
        return with_body(s, fn(s.body))
    if isinstance(s, If):
        body = fn(s.body)
        return s if body is s.body else If(s.cond, body)
    if isinstance(s, LastGroup):
        body = fn(s.body)
        return s if body is s.body else LastGroup(s.ticket, s.flag, body, s.every_item)
    return s


# The rebuilding helpers below call the constructors directly: ``dataclasses.replace`` inspects the
# fields on every call, and the passes rebuild a hundred thousand statements and reads per kernel.

def with_body(loop: Loop, body: Block) -> Loop:
    """``loop`` with another body (``loop`` itself for the same one: a pass that changes nothing in a
    loop keeps it, as ``store_with`` keeps a store)."""
    if body is loop.body:
        return loop
    return Loop(loop.var, loop.extent, loop.level, loop.dim, body, loop.unroll, loop.note, loop.compiler_unroll)


def store_with(s: Store, index, value) -> Store:
    """``s`` storing ``value`` at ``index``; ``s`` itself when both are the same objects."""
    if index is s.index and value is s.value:
        return s
    return Store(s.buffer, index, value, s.width, s.aligned)


def bind_index(scope: dict, x: Stmt) -> None:
    """Put the range of an index definition into the scope of the statements after it (anything else
    binds nothing)."""
    if isinstance(x, IndexDef):
        b = bounds(x.value, scope)
        if b is not None:
            scope[x.var] = b


def body_ranges(s: Stmt, ranges: dict) -> dict:
    """The ranges in scope inside a container statement's body."""
    if isinstance(s, Loop):
        inner = dict(ranges)
        inner[s.var] = (0, s.extent - 1)
        return inner
    return ranges


def map_read(r: V.Read, fn: Callable[[A.Expr], A.Expr]) -> V.Read:
    """The value ``r`` with ``fn`` applied to every index, coordinate and condition in it."""
    return V.transform(r, lambda x: x.map_exprs(fn))


def map_exprs(s: Stmt, fn: Callable[[A.Expr], A.Expr]) -> Stmt:
    """The statement ``s`` with ``fn`` applied to every index expression and condition in it."""
    # Unchanged statements are kept, containers included (an unrolled copy rewrites only what uses its
    # counter): nothing is rebuilt for nothing, and the passes' memos by identity keep their entries.
    if isinstance(s, Block):
        items = tuple([map_exprs(x, fn) for x in s.items])
        for a, b in zip(items, s.items):
            if a is not b:
                return Block(items)
        return s
    if isinstance(s, If):
        cond, body = fn(s.cond), map_exprs(s.body, fn)
        return s if cond is s.cond and body is s.body else If(cond, body)
    if isinstance(s, Loop):
        body = map_exprs(s.body, fn)
        return s if body is s.body else with_body(s, body)
    if isinstance(s, Store):
        return store_with(s, fn(s.index), map_read(s.value, fn))
    if isinstance(s, IndexDef):
        value = fn(s.value)
        return s if value is s.value else IndexDef(s.var, value)
    return s


def substitute(s: Stmt, mapping: dict, seen: dict | None = None) -> Stmt:
    """``s`` with loop variables replaced (``{i: 3}`` when unrolling, ``{i: 4*a + b}`` when splitting).
    ``seen``: the substitutions already made with this mapping, shared by the caller between statements
    (``arith.substitute``)."""
    if not mapping:
        return s
    if seen is None:
        seen = {}  # the statements share most of their terms
    return map_exprs(s, lambda e: _substitute_expr(e, mapping, seen))


def walk(s: Stmt) -> Iterator[Stmt]:
    """Every statement of ``s``, parents before children (with a stack, not a generator per enclosing
    statement: an unrolled body's statements passed up through one per block and loop around them)."""
    stack = [s]
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, Block):
            stack.extend(reversed(s.items))
        elif isinstance(s, CONTAINERS):
            stack.append(s.body)


def reads(r: V.Read) -> Iterator[V.Read]:
    """Every node of a value tree."""
    return V.walk_reads(r)


def stores_to(s: Stmt, space: str) -> bool:
    """Whether ``s`` writes a buffer in ``space`` (``'local'``: other work-items may read it)."""
    return any((isinstance(x, Store) and x.buffer.space == space) or (isinstance(x, CoopCopy) and x.dest.space == space) for x in walk(s))


def parallel_loops(s: Stmt) -> Iterator[Loop]:
    """Every work-distributing loop, for deciding the NDRange."""
    for x in walk(s):
        if isinstance(x, Loop) and x.level.parallel:
            yield x


def map_block(s: Stmt, fn: Callable[[Block, dict], Block], ranges: dict | None = None) -> Stmt:
    """Rebuild ``s`` bottom-up, letting ``fn`` replace every block; ``fn`` also receives the ranges of
    the loop variables and index definitions in scope."""
    ranges = dict(ranges or {})
    if isinstance(s, CONTAINERS):
        return descend(s, lambda b: map_block(b, fn, body_ranges(s, ranges)))
    if isinstance(s, Block):
        items = []
        scope = dict(ranges)
        for x in s.items:
            items.append(map_block(x, fn, scope))
            bind_index(scope, x)
        return fn(Block(tuple(items)), ranges)
    return s


def map_stmts(s: Stmt, fn: Callable[[Stmt, dict], object], ranges: dict | None = None) -> Stmt:
    """Rebuild ``s``, letting ``fn(stmt, ranges)`` replace every statement that is not a block or a loop
    (by one statement, or a tuple of them; an ``If`` after its body); ``ranges`` holds the bounds of the
    loop variables and index definitions in scope at that statement."""
    return _map_stmts(s, dict(ranges or {}), fn)


# A module-level function, not a closure that calls itself: such a closure is a reference cycle that
# keeps ``fn``, and whatever ``fn`` holds (a loop split on trial, its body), alive until the cyclic
# collector finds it.
def _map_stmts(x: Stmt, scope: dict, fn) -> Stmt:
    if isinstance(x, If):  # a container whose header holds an expression: fn sees it too
        return fn(descend(x, lambda b: _map_stmts(b, scope, fn)), scope)
    if isinstance(x, CONTAINERS):
        return descend(x, lambda b: _map_stmts(b, body_ranges(x, scope), fn))
    if isinstance(x, Block):
        local = dict(scope)
        items: list[Stmt] = []
        same = True  # (a block whose statements all come back as they were is kept, and so are the loops around it)
        for y in x.items:
            out = _map_stmts(y, local, fn)
            if isinstance(out, tuple):
                items.extend(out)
                same = False
                for z in out:
                    bind_index(local, z)
            else:
                items.append(out)
                same = same and out is y
                bind_index(local, out)
        return x if same else Block(tuple(items))
    return fn(x, scope)


def flatten(items) -> tuple[Stmt, ...]:
    """Statements with nested blocks that declare nothing spliced into their parent (they need no scope)."""
    out: list[Stmt] = []
    for x in items:
        if isinstance(x, Block) and not any(isinstance(y, Declare) for y in x.items):
            out.extend(flatten(x.items))
        else:
            out.append(x)
    return tuple(out)


def buffers_used(s: Stmt) -> set:
    out = set()
    for x in walk(s):
        if isinstance(x, Store):
            out.add(x.buffer)
            for r in reads(x.value):
                if isinstance(r, V.MemRead):
                    out.add(r.buffer)
    return out

