"""Expression nodes of the liftpy IR.

Four kinds of node, as in Lift: variables, literals, calls and lambdas.  A call applies a *callee* (a
primitive instance such as ``Split(4)`` or ``MapGlb(0, f)``, a user function, or a lambda) to data
arguments.  Functions passed to primitives (the ``f`` of a map) are lambdas stored in the primitive.

Nodes are immutable.  Equality and hashing are structural and alpha-equivalent: two lambdas that differ
only in the names of their parameters are equal, which is what de-duplication of rewritten variants and
kernel caching need.  The structural key uses relative binder indices, so the key of a closed
sub-expression does not depend on where it occurs and can be cached on the node.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Iterator

from ..errors import LiftTypeError
from .types import Type, literal_value

_fresh_counter = itertools.count()

# How deeply expressions may nest.  Every pass walks programs recursively; at the default recursion limit
# they all handle about 200 levels, and real programs nest under 40 (the convolution's deepest variant: 37).
# A deeper program is refused where it is built, with a message, instead of a RecursionError in some pass.
MAX_NESTING = 128

# The traces the embedded DSL has open (``liftpy.ir.share``): a program's, then one per function it traces.
# Every call made while one is open is noted in the innermost, so that the tracer knows which function's
# Python code made it.  Empty (and one test per call) outside the tracing of a program.
TRACING: list = []


def fresh_name(prefix: str = "x") -> str:
    """A variable name unique within this process (printing renames variables canonically)."""
    return f"{prefix}_{next(_fresh_counter)}"


class Node:
    """Shared machinery: structural key, free variables, alpha-equivalent equality."""

    def __getstate__(self):
        # The cached key holds every callee's fields (a user function's numpy implementation among them);
        # it is recomputed after unpickling rather than carried.
        state = dict(self.__dict__)
        state.pop("key", None)
        state.pop("free_vars", None)
        state.pop("sorted_free_vars", None)
        state.pop("_hash", None)  # string hashes differ between processes
        state.pop("_keys", None)
        return state

    @cached_property
    def key(self) -> tuple:
        return _key(self, {}, 0)

    @cached_property
    def free_vars(self) -> frozenset[str]:
        return _free_vars(self)

    @cached_property
    def sorted_free_vars(self) -> tuple[str, ...]:
        """``free_vars`` in order (the key of a subexpression's type in ``typecheck.type_in``)."""
        return tuple(sorted(self.free_vars))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node) or type(self) is not type(other):
            return NotImplemented if not isinstance(other, Node) else False
        return self.key == other.key

    def __hash__(self) -> int:
        # Computed once: the key is a cached tuple, but a tuple's hash is not, and hashing the key of a
        # program's body walks all of it (the emitter and the type checker key their memos by
        # expressions, tens of thousands of times per kernel).
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash(self.key)
        return h

class Expr(Node):
    """A value-producing expression."""

    # Its Python operators, ``[]`` and its text (``str``) are the embedded DSL's and the printer's:
    # installed by ``liftpy.ir.sugar``, above the modules that give them meaning.

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


def _not_in_the_dsl(what: str, instead: str):
    def refuse(self, *args):
        raise LiftTypeError("expression", f"{what} of a DSL value is not part of the DSL: {instead}")

    return refuse


# Python asks for a truth value in ``if``, ``and``, ``or``, ``not``, ``max()`` and ``min()``: while the program is
# built, not when it runs, so each would silently pick one branch for every element.  Refused, with what to write.
Expr.__bool__ = _not_in_the_dsl("the truth value (in if, and, or, not, max(), min(), a < b < c)",
                                "use select(c, a, b), fmax/fmin, the comparisons <, <=, >, >=, eq, ne (1 or 0), "
                                "and (a < b) & (c < d), |, ~ (or and_, or_, not_) to combine them")
for _dunder, _instead in (("pow", "write x * x"), ("rpow", "write x * x"), ("mod", "write it as a user function"),
                          ("rmod", "write it as a user function"), ("floordiv", "write it as a user function"),
                          ("rfloordiv", "write it as a user function"), ("abs", "use fabs(x)"),
                          ("float", "it has no value while the program is built"),
                          ("int", "it has no value while the program is built")):
    setattr(Expr, f"__{_dunder}__", _not_in_the_dsl(f"Python's {_dunder}", _instead))


@dataclass(frozen=True, eq=False, repr=False)
class Var(Expr):
    name: str


@dataclass(frozen=True, eq=False, repr=False)
class Literal(Expr):
    """A constant.  With an array type, every element has the value (``value(0.0f, [float]4)``)."""

    value: Any
    type: Type

    def __post_init__(self):
        # The value takes the type's scalar kind, so lit(0, Float) and 0.0f are the same literal.
        try:
            object.__setattr__(self, "value", literal_value(self.value, self.type))
        except ValueError as e:
            raise LiftTypeError("value", str(e)) from None


@dataclass(frozen=True, eq=False, repr=False)
class Lambda(Node):
    params: tuple[Var, ...]
    body: Expr

    def __post_init__(self):
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"lambda parameters must have distinct names: {names}")
        _set_depth(self, self.body.__dict__.get("_depth", 1) + 1, "fun")

    @property
    def arity(self) -> int:
        return len(self.params)

    def __repr__(self) -> str:
        return f"<Lambda {self}>"


@dataclass(frozen=True, eq=False, repr=False)
class Call(Expr):
    fn: Any  # Primitive | UserFun | Lambda
    args: tuple[Expr, ...]

    def __post_init__(self):
        depth = 0
        for a in self.args:
            if not isinstance(a, Expr):
                raise TypeError(f"argument of {getattr(self.fn, 'name', self.fn)} is not an expression: {a!r}")
            depth = max(depth, a.__dict__.get("_depth", 1))
        fn = self.fn
        if isinstance(fn, Lambda):
            depth = max(depth, fn.__dict__["_depth"])
        else:
            for name in field_names(fn):
                v = getattr(fn, name)
                if isinstance(v, Lambda):
                    depth = max(depth, v.__dict__["_depth"])
        _set_depth(self, depth + 1, getattr(fn, "name", None) or type(fn).__name__)
        if TRACING:  # the embedded DSL is tracing a program: note in which function's trace the call was made
            TRACING[-1].created.append(self)


def _set_depth(node: Node, depth: int, what: str) -> None:
    """Keep how deeply ``node`` nests (Var and Literal: 1), refusing programs deeper than ``MAX_NESTING``."""
    if depth > MAX_NESTING:
        raise LiftTypeError(str(what), f"the expression nests more than {MAX_NESTING} levels deep, which liftpy does not "
                                       "handle (real programs nest under 40): bind parts with let, or sum many terms with "
                                       "reduce over an array")
    node.__dict__["_depth"] = depth


@dataclass(frozen=True, eq=False)
class Program:
    """A named top-level function with typed inputs: the unit that is type-checked and compiled."""

    name: str
    params: tuple[Var, ...]
    param_types: tuple[Type, ...]
    body: Expr

    def __post_init__(self):
        if len(self.params) != len(self.param_types):
            raise ValueError("every program parameter needs a type")

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("key", None)
        state.pop("_hash", None)
        return state

    @cached_property
    def key(self) -> tuple:
        # Inputs are named by the user and fed by name, so they are compared by name.
        return (self.name, tuple(p.name for p in self.params), self.param_types, self.body.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Program) and self.key == other.key

    def __hash__(self) -> int:  # computed once, as a node's
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash(self.key)
        return h

    def __repr__(self) -> str:
        return f"<Program {self.name}>"

    @property
    def inputs(self) -> dict[str, Type]:
        return {p.name: t for p, t in zip(self.params, self.param_types)}

    def with_body(self, body: Expr) -> "Program":
        return dataclasses.replace(self, body=body)

    # Notebook conveniences (``type()``, ``evaluate()``, ``compile()``) and the text (``str``) are installed
    # by ``liftpy.ir.sugar`` and ``liftpy``: thin wrappers over the modules that do the work.

    def text(self) -> str:
        return str(self)

    # ``Program.compile(sizes)`` is installed by the ``liftpy`` package (``liftpy.compile``): compiling needs
    # the code generator and a device, which live above the IR, and the IR imports neither.


# --------------------------------------------------------------------------------------------------
# Function-valued fields of primitives


def field_names(obj) -> tuple[str, ...]:
    """The field names of a dataclass or its instance (``()`` for anything else), kept per class: keys and
    rules ask for a primitive's fields at every node they visit, and ``dataclasses.fields`` builds them
    anew (an eighth of deriving the convolution's variants)."""
    return _class_field_names(obj if isinstance(obj, type) else type(obj))


@lru_cache(maxsize=None)
def _class_field_names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else ()


def primitive_functions(prim) -> list[tuple[str, Lambda]]:
    """The lambdas stored in a primitive's fields, with their field names."""
    out = []
    for name in field_names(prim):
        v = getattr(prim, name)
        if isinstance(v, Lambda):
            out.append((name, v))
    return out


def replace_functions(prim, new: dict[str, Lambda]):
    return dataclasses.replace(prim, **new) if new else prim


# --------------------------------------------------------------------------------------------------
# Structural keys


def _callee_key(fn, env: dict, depth: int):
    if isinstance(fn, Lambda):
        return _key(fn, env, depth)
    if dataclasses.is_dataclass(fn):
        parts = []
        for name in field_names(fn):
            v = getattr(fn, name)
            parts.append(_key(v, env, depth) if isinstance(v, Node) else _value_key(v))
        return (type(fn).__name__, tuple(parts))
    return ("callee", fn)


def _value_key(v):
    # 1 and 1.0 must not collide when they are literal values of different types; keep the class.
    if isinstance(v, float):
        return ("f", v)
    return v


def _key(node: Node, env: dict, depth: int) -> tuple:
    if not env:
        return _key_in(node, env, depth)
    bound = node.free_vars & env.keys()
    if not bound:
        return node.key
    # The key of a node under binders depends only on how far up each of its bound variables is bound,
    # so it is kept per node by those distances: a rewrite builds new ancestors over shared subtrees, and
    # each new ancestor's key walked every shared subtree that uses an outer variable again (two fifths
    # of deriving the convolution's variants).
    sig = tuple(sorted((v, depth - env[v][0], env[v][1]) for v in bound))
    memo = node.__dict__.get("_keys")
    if memo is None:
        memo = node.__dict__["_keys"] = {}
    hit = memo.get(sig)
    if hit is None:
        hit = memo[sig] = _key_in(node, env, depth)
    return hit


def _key_in(node: Node, env: dict, depth: int) -> tuple:
    if isinstance(node, Var):
        if node.name in env:
            bdepth, idx = env[node.name]
            return ("b", depth - bdepth, idx)
        return ("v", node.name)
    if isinstance(node, Literal):
        return ("lit", node.type, _value_key(node.value))
    if isinstance(node, Lambda):
        inner = dict(env)
        for i, p in enumerate(node.params):
            inner[p.name] = (depth + 1, i)
        return ("lam", len(node.params), _key(node.body, inner, depth + 1))
    if isinstance(node, Call):
        return ("call", _callee_key(node.fn, env, depth), tuple(_key(a, env, depth) for a in node.args))
    raise TypeError(f"not an IR node: {node!r}")


def _free_vars(node: Node) -> frozenset[str]:
    if isinstance(node, Var):
        return frozenset([node.name])
    if isinstance(node, Literal):
        return frozenset()
    if isinstance(node, Lambda):
        return node.body.free_vars - {p.name for p in node.params}
    if isinstance(node, Call):
        out = set()
        if isinstance(node.fn, Lambda):
            out |= node.fn.free_vars
        else:
            for _, lam in primitive_functions(node.fn):
                out |= lam.free_vars
        for a in node.args:
            out |= a.free_vars
        return frozenset(out)
    raise TypeError(f"not an IR node: {node!r}")


# --------------------------------------------------------------------------------------------------
# Substitution


def substitute(node: Node, mapping: dict[str, Expr]) -> Any:
    """Capture-avoiding substitution of free variables (by name) with expressions."""
    if not mapping:
        return node
    relevant = {k: v for k, v in mapping.items() if k in node.free_vars}
    if not relevant:
        return node
    if isinstance(node, Var):
        return relevant[node.name]
    if isinstance(node, Lambda):
        incoming = set()
        for v in relevant.values():
            incoming |= v.free_vars
        params = list(node.params)
        renames: dict[str, Expr] = {}
        for i, p in enumerate(params):
            if p.name in incoming:
                q = Var(fresh_name(p.name.split("_")[0] or "x"))
                renames[p.name] = q
                params[i] = q
        body = substitute(node.body, renames) if renames else node.body
        inner = {k: v for k, v in relevant.items() if k not in {p.name for p in node.params}}
        return Lambda(tuple(params), substitute(body, inner))
    if isinstance(node, Call):
        if isinstance(node.fn, Lambda):
            fn = substitute(node.fn, relevant)
        else:
            fn = replace_functions(node.fn, {n: substitute(l, relevant) for n, l in primitive_functions(node.fn)})
        return Call(fn, tuple(substitute(a, relevant) for a in node.args))
    return node


def apply_lambda(lam: Lambda, args: tuple[Expr, ...] | list[Expr]) -> Expr:
    """Beta reduction: the lambda's body with its parameters replaced by ``args``."""
    if len(args) != len(lam.params):
        raise ValueError(f"lambda of {len(lam.params)} parameters applied to {len(args)} arguments")
    return substitute(lam.body, {p.name: a for p, a in zip(lam.params, args)})


def rename_bound(lam: Lambda) -> Lambda:
    """A copy of ``lam`` with fresh parameter names (used when a rule duplicates a function)."""
    new = tuple(Var(fresh_name(p.name.split("_")[0] or "x")) for p in lam.params)
    return Lambda(new, substitute(lam.body, {p.name: q for p, q in zip(lam.params, new)}))


# --------------------------------------------------------------------------------------------------
# Traversal


def subterms(node: Node) -> Iterator[Node]:
    """All nodes below and including ``node``, parents before children (with a stack of the nodes to
    visit, not a generator per level: each node passed up through one per enclosing node)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Lambda):
            stack.append(node.body)
        elif isinstance(node, Call):
            stack.extend(reversed(node.args))
            if isinstance(node.fn, Lambda):
                stack.append(node.fn)
            else:
                stack.extend(reversed([lam for _, lam in primitive_functions(node.fn)]))
