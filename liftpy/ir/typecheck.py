"""Type inference with symbolic sizes.

``typecheck(program)`` returns the program's type and its *requirements*: the conditions on size variables
and tuning parameters that the primitives' type rules need (``N % 4 == 0`` for a ``split(4)`` of an array
of length ``N``).  A requirement that is decidable from the sizes at hand is checked at once and raises
``LiftTypeError`` naming the primitive; the others are returned, each with the primitive and the
sub-expression it comes from, for the constraint inference.  With ``bindings`` the sizes are substituted
first, so every requirement is decided.  ``check_sizes`` (a configured point: code generation, the
interpreter) first tries the program's symbolic typing, remembered across points, with the values put into
its requirements and into the array lengths it could not decide, and type-checks with the values only when
that does not accept them.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Mapping

import sympy

from ..errors import LiftTypeError
from .expr import Call, Expr, Lambda, Literal, Program, Var, primitive_functions, replace_functions, subterms
from .primitives import Index, Indices, Let, Primitive, divisible
from .printer import show
from .types import ArrayType, Float, Int, TupleType, Type, VectorType, as_size, is_integer_size, size_value, size_str, sizes_equal, subs_type, substitute_sizes
from .userfun import BUILTINS, UserFun

SELECT = BUILTINS["select"]


def _at_least_one(n):
    if is_integer_size(n):  # a size with its value (code generation type-checks every point): Python decides
        return sympy.true if int(n) >= 1 else sympy.false
    return _at_least_one_symbolic(n)


# The comparisons of symbolic sizes a type rule requires, memoised: sympy evaluates each one through its
# assumption system, and type-checking a search's variants asks the same comparisons of the same sizes.
@lru_cache(maxsize=65536)
def _at_least_one_symbolic(n):
    return sympy.Ge(n, 1)


@lru_cache(maxsize=65536)
def _equal(a, b):  # (two sizes with values never get here: ``sizes_equal`` decides them)
    return sympy.Eq(a, b)


@dataclass(frozen=True)
class Requirement:
    predicate: sympy.Basic
    text: object  # the message, or a function making it (messages cost sympy printing; most are never read)
    primitive: str
    node: object  # the sub-expression that needs it

    @property
    def message(self) -> str:
        return _text(self.text)

    @property
    def where(self) -> str:
        return _short(self.node)

    def __str__(self) -> str:
        return f"{self.primitive}: {self.message}"


def _text(message) -> str:
    return message() if callable(message) else message


@dataclass(frozen=True)
class Typing:
    type: Type
    requirements: tuple[Requirement, ...]
    # The lengths of the arrays the program makes (its inputs' too) that are not numbers yet: each must be
    # at least one once the sizes have values (``_nonempty``).  Not requirements: the constraint
    # inference never needed them, and ``check_sizes`` decides them with the values.
    lengths: tuple = ()


def _short(node) -> str:
    text = " ".join(show(node).split())
    return text if len(text) <= 160 else text[:157] + "..."


_CACHE: dict = {}


class _Checker:
    def __init__(self, bindings: Mapping | None):
        # Values as sympy numbers once, not again in every substitution (``substitute_sizes``).
        self.bindings = {as_size(k) if isinstance(k, str) else k: size_value(v) for k, v in (bindings or {}).items()}
        self.requirements: list[Requirement] = []
        self._seen: set = set()
        self.lengths: dict = {}  # (an ordered set) undecided lengths, for ``Typing.lengths``
        self.indexed: dict | None = None  # id of an x[i] node -> the type of x, while resolving them
        # Whether the expression being typed is what the program returns (its body, or a let's body there):
        # the one place a tuple of results may be (``ir.results``).
        self.top = True

    # -- the context primitives' type rules talk to ------------------------------------------------
    def record(self, pred, message, prim: str, node) -> None:
        pred = substitute_sizes(pred, self.bindings)
        if pred is sympy.true or pred == True:  # noqa: E712 - sympy booleans
            return
        if pred is sympy.false or pred == False:  # noqa: E712
            raise LiftTypeError(prim, self._with_values(message), _short(node))
        key = (pred, prim)
        if key not in self._seen:
            self._seen.add(key)
            self.requirements.append(Requirement(pred, message, prim, node))

    def _with_values(self, message) -> str:
        message = _text(message)
        if not self.bindings:
            return message
        vals = ", ".join(f"{k} = {v}" for k, v in sorted(self.bindings.items(), key=lambda kv: str(kv[0])))
        return f"{message}; with {vals}"

    # -- inference --------------------------------------------------------------------------------
    def type_of(self, e: Expr, env: Mapping[str, Type]) -> Type:
        """Memoized for symbolic checking: rewriting re-types the same sub-expressions many times, and
        expressions and types are immutable, so (expression, types of its free variables) determines the
        type and the requirements of a sub-expression."""
        if self.bindings or self.indexed is not None or not isinstance(e, Call):
            return self._type_of(e, env)
        key = (e, tuple((n, env[n]) for n in sorted(e.free_vars) if n in env), self.top)
        hit = _CACHE.get(key)
        if hit is None:
            saved = self.requirements, self._seen, self.lengths
            self.requirements, self._seen, self.lengths = [], set(), {}
            try:
                t = self._type_of(e, env)
                hit = (t, tuple(self.requirements), tuple(self.lengths))
            finally:
                self.requirements, self._seen, self.lengths = saved
            if len(_CACHE) > 200_000:
                _CACHE.clear()
            _CACHE[key] = hit
        t, reqs, lengths = hit
        for r in reqs:
            k = (r.predicate, r.primitive)
            if k not in self._seen:
                self._seen.add(k)
                self.requirements.append(r)
        self.lengths.update(dict.fromkeys(lengths))
        return t

    def _type_of(self, e: Expr, env: Mapping[str, Type]) -> Type:
        if isinstance(e, Var):
            if e.name not in env:
                raise LiftTypeError("variable", f"'{e.name}' is not defined here (known: {', '.join(sorted(env)) or 'nothing'})")
            return env[e.name]
        if isinstance(e, Literal):
            return subs_type(e.type, self.bindings)
        if isinstance(e, Call):
            top, self.top = self.top, False  # (the arguments and functions of a call are not results)
            try:
                return self._type_of_call(e, env, top)
            finally:
                self.top = top
        raise LiftTypeError("expression", f"not an expression: {e!r}")

    def _type_of_call(self, e: Call, env: Mapping[str, Type], top: bool) -> Type:
        arg_types = [self.type_of(a, env) for a in e.args]
        fn = e.fn
        if isinstance(fn, Primitive):
            if fn.nargs >= 0 and len(e.args) != fn.nargs:
                raise LiftTypeError(fn.text_name, f"takes {fn.nargs} data argument(s), got {len(e.args)}", _short(e))
            t = _nonempty(fn.typecheck(arg_types, _PrimCtx(self, fn, e, env, top)), fn.text_name, e, self.lengths)
            if self.indexed is not None and isinstance(fn, (Index, Indices)):  # (one that types: see resolve_indexing)
                self.indexed[id(e)] = (e, arg_types[0])
            return t
        if isinstance(fn, UserFun):
            if self.indexed is not None and fn is SELECT:
                converted = _condition_conversion(arg_types)
                if converted is not None:
                    self.indexed[id(e)] = (e, converted)
                    arg_types = [arg_types[1]] * 3
            try:
                return fn.instantiate(arg_types)[0]
            except LiftTypeError as err:
                raise LiftTypeError(err.primitive, err.detail, _short(e)) from None
        if isinstance(fn, Lambda):
            return self.apply(fn, arg_types, env, "function application", e)
        raise LiftTypeError("call", f"cannot call {fn!r}", _short(e))

    def apply(self, lam: Lambda, arg_types: list[Type], env, who: str, node) -> Type:
        if not isinstance(lam, Lambda):
            raise LiftTypeError(who, f"expects a function, got {lam!r}", _short(node))
        if len(lam.params) != len(arg_types):
            raise LiftTypeError(
                who,
                f"expects a function of {len(arg_types)} parameter(s), got one of {len(lam.params)}",
                _short(node),
            )
        inner = dict(env)
        for p, t in zip(lam.params, arg_types):
            inner[p.name] = t
        return self.type_of(lam.body, inner)


class _PrimCtx:
    """What a primitive's type rule may do: fail, require a size condition, type its function."""

    def __init__(self, checker: _Checker, prim: Primitive, node: Call, env, at_result: bool = False):
        self.checker, self.prim, self.node, self.env = checker, prim, node, env
        self.at_result = at_result  # the call is what the program returns (``ir.results``)

    def fail(self, message):
        raise LiftTypeError(self.prim.text_name, self.checker._with_values(message), _short(self.node))

    def require(self, pred, message: str) -> None:
        self.checker.record(pred, message, self.prim.text_name, self.node)

    def _value(self, size):
        """A size with the checker's values substituted: a condition on sizes with values is then decided
        by Python's arithmetic (code generation type-checks every point with its values), where building
        it on the symbols first cost a round of sympy's assumption queries for each new variant."""
        return substitute_sizes(size, self.checker.bindings) if self.checker.bindings else size

    def require_positive(self, n, message: str) -> None:
        self.require(_at_least_one(self._value(n)), message)

    def require_divisible(self, n, m, message: str) -> None:
        self.require(divisible(self._value(n), self._value(m)), message)

    def require_equal(self, a, b, message: str) -> None:
        a, b = self._value(a), self._value(b)
        same = sizes_equal(a, b)
        if same is True:
            return
        if same is False:
            self.fail(message)
        self.require(_equal(a, b), message)

    def require_types_equal(self, a: Type, b: Type, what: str) -> None:
        if isinstance(a, ArrayType) and isinstance(b, ArrayType):
            self.require_equal(a.size, b.size, f"{what} must have the same length ({size_str(a.size)} vs {size_str(b.size)})")
            self.require_types_equal(a.elem, b.elem, what)
        elif isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
            for x, y in zip(a.elems, b.elems):
                self.require_types_equal(x, y, what)
        elif isinstance(a, VectorType) and isinstance(b, VectorType) and a.scalar == b.scalar:
            self.require_equal(a.width, b.width, f"{what} must have the same vector width")
        elif a != b:
            self.fail(f"{what} have different types: {a} and {b}")

    def apply(self, lam: Lambda, arg_types: list[Type]) -> Type:
        if self.at_result and isinstance(self.prim, Let):  # a let's body is what the let returns
            self.checker.top = True
            try:
                return self.checker.apply(lam, arg_types, self.env, self.prim.text_name, self.node)
            finally:
                self.checker.top = False
        return self.checker.apply(lam, arg_types, self.env, self.prim.text_name, self.node)


def typecheck(target: Program | Expr, env: Mapping[str, Type] | None = None, bindings: Mapping | None = None) -> Typing:
    """Infer the type of a program (or an expression in ``env``) and collect its size requirements."""
    checker = _Checker(bindings)
    if isinstance(target, Program):
        env = {p.name: _nonempty(subs_type(t, checker.bindings), f"input {p.name}", None, checker.lengths)
               for p, t in zip(target.params, target.param_types)}
        body = target.body
    else:
        env = {k: subs_type(t, checker.bindings) for k, t in (env or {}).items()}
        body = target
    t = checker.type_of(body, env)
    return Typing(t, tuple(checker.requirements), tuple(checker.lengths))


def resolve_indexing(program: Program) -> Program:
    """The program with the DSL's (and the text form's) notations that depend on types replaced by what they
    stand for, so that its text, the rules and the emitter see plain primitives: every ``x[i]`` by ``get`` (x
    a tuple) or ``at`` (x an array), every ``indices(xs)`` (of ``mapIdx``) by ``iota(n)``, and the condition
    of a ``select`` of floats that is an int (``le(i, j)`` of indices) converted to the values' type
    (``toFloat``; an int selected by a float condition: ``toInt`` of the 1 or 0).  Programs without one are
    returned as they are; in an ill-typed one, those typed before the error are resolved (the error comes where
    it is used, and names the primitive that fails, not a select or an index before it)."""
    if not any(isinstance(n, Call) and (isinstance(n.fn, (Index, Indices)) or n.fn is SELECT)
               for n in subterms(program.body)):
        return program
    checker = _Checker(None)
    checker.indexed = {}
    env = {p.name: t for p, t in zip(program.params, program.param_types)}
    try:
        checker.type_of(program.body, env)
    except LiftTypeError:
        pass  # what was typed before the error is resolved, so that the error is met where it is, not earlier
    if not checker.indexed:
        return program
    return Program(program.name, program.params, program.param_types, _resolve(program.body, checker.indexed, {}))


def _condition_conversion(arg_types: list[Type]):
    """The conversion that lets ``select``'s condition of one scalar type choose between values of the other
    (int and float), or None where the types agree or no conversion makes sense (vectors, tuples)."""
    if len(arg_types) == 3 and arg_types[1] == arg_types[2] and {arg_types[0], arg_types[1]} == {Int, Float}:
        return BUILTINS["toFloat"] if arg_types[1] == Float else BUILTINS["toInt"]
    return None


def _resolve(node, found: dict, memo: dict):
    """``node`` with the notations ``found`` (by node identity: what the typing saw) replaced; a node reached
    twice (the tracer shares values) is rebuilt once."""
    key = id(node)
    if key in memo:
        return memo[key]
    out = node
    if isinstance(node, Lambda):
        out = Lambda(node.params, _resolve(node.body, found, memo))
    elif isinstance(node, Call):
        fn = node.fn
        args = tuple(_resolve(a, found, memo) for a in node.args)
        hit = found.get(key)
        if isinstance(fn, Lambda):
            fn = _resolve(fn, found, memo)
        elif hit is not None and isinstance(fn, Indices):
            out = Call(fn.resolved(hit[1]), ())
        elif hit is not None and isinstance(fn, Index):
            fn = fn.resolved(hit[1])
        elif hit is not None and fn is SELECT:
            args = (Call(hit[1], (args[0],)),) + args[1:]
        else:
            fn = replace_functions(fn, {n: _resolve(l, found, memo) for n, l in primitive_functions(fn)})
        if out is node:
            out = Call(fn, args)
    memo[key] = out
    return out


def _nonempty(t: Type, where: str, node=None, undecided: dict | None = None) -> Type:
    """Arrays have at least one element: a length that is a number below one (a window larger than its
    array, a split of nothing) is refused here, where the primitive that made it is known.  Lengths that
    are not numbers yet are added to ``undecided`` (a dict used as an ordered set)."""
    u = t
    while True:
        while isinstance(u, TupleType):
            for c in u.elems[1:]:
                _nonempty(c, where, node, undecided)
            u = u.elems[0] if u.elems else None
        if not isinstance(u, ArrayType):
            return t
        n = sympy.sympify(u.size)
        if n.is_Integer and n.p >= 1:  # (the commonest case, decided without a sympy comparison)
            u = u.elem
            continue
        if n.is_number:
            if n < 1:
                raise LiftTypeError(where, f"produces an array of length {n} in {t}; arrays need at least one element",
                                    _short(node) if node is not None else None)
        elif undecided is not None:
            undecided[n] = None
        u = u.elem


def type_of(e: Expr, env: Mapping[str, Type], bindings: Mapping | None = None) -> Type:
    return typecheck(e, env, bindings).type


def type_in(e: Expr, env: Mapping[str, tuple]) -> Type:
    """The type of ``e`` where ``env`` maps names to tuples whose first item is a type (the emitter's and the
    analytical counter's environments: a type and a view, a type and an origin), remembered: walking a
    program, the emitter and the counter ask for the type of every subexpression, and typing each
    subtree again made the counter's walk quadratic (the analytical expressions of VGG-16 layer 24's 40
    tiled variants: 1.14 s, 0.57 s with this memo).  The types are symbolic, the same at every
    configuration of a program, so they are kept across the points a search generates.

    Asked first by identity (the same node with the same type objects for its variables, which the entry
    keeps alive, so their ids are not reused): the emitter asks again of the nodes it walks, and the
    memo by equality hashed the types (trees of dataclasses) and compared equal programs' keys at every
    question."""
    names = e.sorted_free_vars
    types = tuple([env[n][0] if n in env else None for n in names])
    key = (id(e), *map(id, types))
    hit = _BY_IDENTITY.get(key)
    if hit is not None and hit[0] is e and all(a is b for a, b in zip(hit[1], types)):
        return hit[2]
    t = _typed(e, tuple([(n, x) for n, x in zip(names, types) if x is not None]))
    if len(_BY_IDENTITY) >= 16384:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[key] = (e, types, t)
    return t


_BY_IDENTITY: dict = {}  # (id of a node, ids of its variables' types) -> (node, types, its type)


@lru_cache(maxsize=16384)
def _typed(e: Expr, env: tuple) -> Type:
    return type_of(e, dict(env))


def check_sizes(program: Program, bindings: Mapping) -> Typing:
    """Type-check with every size and parameter given a value; raise if any requirement fails or
    remains undecided (a size without a value)."""
    typing = _decided_by_symbolic_typing(program, bindings)
    if typing is not None:
        return typing
    typing = typecheck(program, bindings=bindings)
    if typing.requirements:
        free = set()
        for r in typing.requirements:
            free |= {str(s) for s in r.predicate.free_symbols}
        raise LiftTypeError(
            typing.requirements[0].primitive,
            f"sizes or parameters without a value: {', '.join(sorted(free))} "
            f"(needed to decide: {typing.requirements[0].message})",
            typing.requirements[0].where,
        )
    return typing


def _decided_by_symbolic_typing(program: Program, bindings: Mapping) -> Typing | None:
    """``check_sizes``' answer from the program's symbolic typing, which is remembered across calls:
    when the values make every requirement and every undecided length hold, type-checking with the values
    would pass too.  None when they do not, or when this cannot tell: the caller then type-checks with the
    values, which names the primitive that fails.  Code generation and the interpreter check every point
    of a search this way; type-checking each point with its values took a twentieth of code generation.

    Sound because the checks with values are the symbolic ones with the values put in: each type rule
    either records a requirement, or decides it on the symbols, or leaves a length undecided.  A rule
    decides on the symbols only from what their assumptions say (sizes are positive integers), so the
    values must say the same: a value below one (or a number that is not an integer) is left to the
    check with values."""
    numbers = {}
    for k, v in bindings.items():
        sym = as_size(k) if isinstance(k, str) else k
        value = size_value(v)
        if not isinstance(sym, sympy.Symbol) or not value.is_Integer or (sym.is_positive and value < 1) \
                or (sym.is_nonnegative and value < 0):
            return None
        numbers[sym] = int(value)
    symbolic = symbolic_typing(program)
    if symbolic is None:
        return None
    for r in symbolic.requirements:
        if _evaluated_at(r.predicate, numbers) is not True:
            return None
    for n in symbolic.lengths:
        v = _evaluated_at(n, numbers)
        if v is None or isinstance(v, bool) or v < 1 or v != int(v):
            return None
    return Typing(subs_type(symbolic.type, {k: sympy.Integer(v) for k, v in numbers.items()}), (), ())


def _evaluated_at(e, numbers: Mapping):
    """``evaluated(e, numbers)``, remembered by ``e`` and the numbers of its own symbols: the points of a
    search give the same values to most of a requirement's symbols (the sizes, the parameters it names)."""
    syms = _symbols_of(e)
    return _evaluated(e, syms, tuple([numbers.get(s) for s in syms]))


@lru_cache(maxsize=16384)
def _symbols_of(e) -> tuple:
    return tuple(sorted(e.free_symbols, key=lambda s: s.name))


@lru_cache(maxsize=65536)
def _evaluated(e, syms: tuple, values: tuple):
    return evaluated(e, dict(zip(syms, values)))


def symbolic_typing(program: Program) -> Typing | None:
    """``typecheck(program)`` without values, None where it fails; remembered by the program (which the
    entry keeps alive; its hash is kept in it): code generation
    checks the same stage programs at every configuration of a variant, and each check typed the whole
    program again (a twentieth of code generation); splitting a program types each stage with this, so
    the check of the stage finds it typed.  A program equal to one typed before (another variant's
    identical stage: vgg16:12's 40 tiled variants have 60 stages, 21 of them distinct) takes that one's
    typing: the type and the requirements' predicates are the same, which is all the callers read (the
    requirements' messages name the first one's bound variables)."""
    typing = _SYMBOLIC.get(program, _UNTYPED)
    if typing is _UNTYPED:
        if len(_SYMBOLIC) >= 1024:
            _SYMBOLIC.clear()
        try:
            typing = typecheck(program)
        except LiftTypeError:
            typing = None
        _SYMBOLIC[program] = typing
    return typing


_SYMBOLIC: dict = {}  # program (by equality) -> its typing, or None where it fails
_UNTYPED = object()


def forget_typings() -> None:
    """Empty the memos of programs' and subexpressions' symbolic types (``symbolic_typing``, ``type_in``)."""
    _SYMBOLIC.clear()
    _BY_IDENTITY.clear()
    _typed.cache_clear()


_COMPARISONS = {sympy.Eq: operator.eq, sympy.Ne: operator.ne, sympy.Ge: operator.ge, sympy.Gt: operator.gt,
                sympy.Le: operator.le, sympy.Lt: operator.lt}


def evaluated(e, numbers: Mapping):
    """The value of a size or of a condition on sizes with ``numbers`` for its symbols, in exact rational
    arithmetic (sympy's ``Mod`` is ``a - b*floor(a/b)``, Python's ``%`` on Fractions); None for anything
    else, and for a symbol without a number (``substitute_sizes`` builds a sympy expression for each
    one: 40 microseconds, against a few here)."""
    if e.is_Integer:
        return int(e)
    if e.is_Symbol:
        return numbers.get(e)
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e is sympy.true or e is sympy.false:
        return bool(e)
    args = [evaluated(a, numbers) for a in e.args]
    if any(a is None for a in args):
        return None
    if e.is_Add:
        return sum(args[1:], args[0])
    if e.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if e.is_Pow:
        base, exp = args
        if isinstance(exp, int) and not isinstance(exp, bool) and (exp >= 0 or base != 0):
            return Fraction(base) ** exp
        return None
    if isinstance(e, sympy.Mod):
        return args[0] % args[1] if args[1] != 0 else None
    if isinstance(e, sympy.floor):
        return math.floor(args[0])
    compare = _COMPARISONS.get(type(e))
    if compare is not None:
        return compare(*args)
    if isinstance(e, sympy.And):
        return all(args) if all(isinstance(a, bool) for a in args) else None
    return None
