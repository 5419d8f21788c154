"""User functions: the scalar (or vector) computations at the leaves of a program.

A user function has a name, typed parameters, an OpenCL C body and numpy semantics for the reference
interpreter.  Parameter types may be the type variable ``T`` (any scalar or vector type, the same for
every ``T`` of one call), so ``add`` works on ``float``, ``int`` and ``float4`` alike; the emitter then
defines one C function per instantiation (``add_float4``).  ``vectorize(4, f)`` turns a scalar function
into its ``float4`` version with the same body, as Lift's ``vectorize`` does.

Two kinds of body.  One written as an expression (``userfun_from_expression``, or ``userfun f(a: float): float
= "a * a"`` in the text form) is data: it is read by a grammar of its own (``userfun_expr``), and its C and its
numpy semantics are both made from what was read, so no text of it reaches a kernel as written.  A body given
as OpenCL C (``userfun(name, params, result, body, numpy_fn)`` in Python, ``= opencl "..."`` in the text form)
is code, pasted into the kernel as it stands: a ``.lift`` file with ``opencl`` bodies is to be trusted as much
as a ``.py`` file, and no more.
"""

from __future__ import annotations

import dataclasses
import pickle
import re
from dataclasses import dataclass, field
from typing import Callable

import cloudpickle
import numpy as np
import sympy

from ..errors import LiftError, LiftTypeError
from .primitives import MACROS, PRIMITIVES
from .types import ArrayType, Float, Int, ScalarType, TEXT_KEYWORDS, TupleType, Type, VectorType, as_size, size_str
from .userfun_expr import Expression

T = "T"  # the one type variable user functions may use: any scalar or vector type
SCALAR_OF_T = "scalar(T)"  # result of a reduction over the lanes of T (dot)


@dataclass(frozen=True, eq=False)
class UserFun:
    name: str
    param_names: tuple[str, ...]
    param_types: tuple[Type | str, ...]
    result_type: Type | str
    body: str  # OpenCL C statements, e.g. "return a + b;"
    numpy: Callable = field(compare=False)
    vector_width: object = None  # set on functions made by vectorize(n, f)
    base: "UserFun | None" = None
    expression: str | None = field(default=None, compare=False)  # the source of expression-defined functions
    tuples: bool = field(default=False, compare=False)  # T may also be a tuple (``id``, whose body copies)
    tree: Expression | None = field(default=None, compare=False, repr=False)  # an expression's, also when vectorized

    def __reduce__(self):
        """User functions travel to worker processes (and into caches) with their programs: built-ins by
        name, vectorized ones as ``vectorize(n, base)``, expression-defined ones by their expression, and
        others with their numpy implementation pickled by cloudpickle: by reference where it is a function
        a worker can import, by value otherwise (a lambda, a function defined in a notebook or a script
        run as ``__main__``, or in a file ``liftpy explore file.py:function`` loaded, which workers cannot
        import by its name)."""
        if self.base is not None:
            return (vectorize, (self.vector_width, self.base))
        if BUILTINS.get(self.name) == self:
            return (_builtin_named, (self.name,))
        if self.expression is not None:
            params = list(zip(self.param_names, self.param_types))
            return (userfun_from_expression, (self.name, params, self.result_type, self.expression))
        try:
            numpy_fn = cloudpickle.dumps(self.numpy)
        except Exception as e:  # noqa: BLE001 - whatever the function holds that cannot be pickled
            raise LiftError(f"user function {self.name}: its numpy semantics {self.numpy!r} cannot be sent to worker "
                            f"processes ({type(e).__name__}: {e}); define it with plain numpy code") from None
        return (_unpickled, (self.name, self.param_names, self.param_types, self.result_type, self.body, numpy_fn))

    def __post_init__(self):
        if len(self.param_names) != len(self.param_types):
            raise LiftError(f"user function {self.name}: {len(self.param_names)} names for {len(self.param_types)} types")
        _check_name(self.name)

    @property
    def key(self) -> tuple:
        return ("uf", self.name, self.param_types, self.result_type, self.body, str(self.vector_width))

    def __eq__(self, other):
        return isinstance(other, UserFun) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"<UserFun {self.text_name}>"

    @property
    def arity(self) -> int:
        return len(self.param_types)

    @property
    def is_generic(self) -> bool:
        return any(t == T for t in self.param_types)

    @property
    def text_name(self) -> str:
        if self.base is not None:
            return f"vectorize({size_str(self.vector_width)}, {self.base.text_name})"
        return self.name

    # Applying a user function in the embedded DSL (``f(a, b)``) builds a call node: installed by
    # ``liftpy.ir.sugar`` with the DSL's other syntax.

    # ----------------------------------------------------------------------------------------------
    def instantiate(self, arg_types: list[Type]) -> tuple[Type, dict]:
        """Check ``arg_types`` against the signature; return the result type and the binding of T."""
        if len(arg_types) != self.arity:
            raise LiftTypeError(self.text_name, f"expects {self.arity} arguments, got {len(arg_types)}")
        bound: Type | None = None
        for name, want, got in zip(self.param_names, self.param_types, arg_types):
            if want == T:
                if not (isinstance(got, (ScalarType, VectorType)) or (self.tuples and isinstance(got, TupleType))):
                    raise LiftTypeError(
                        self.text_name,
                        f"parameter '{name}' takes a scalar or vector value, got {got}{_one_element_hint(got)}",
                    )
                if bound is None:
                    bound = got
                elif bound != got:
                    raise LiftTypeError(
                        self.text_name,
                        f"parameters of type T must agree: '{name}' is {got}, an earlier one is {bound}"
                        + (_INT_FLOAT_HINT if {str(got), str(bound)} == {"int", "float"} else ""),
                    )
            elif want != got:
                raise LiftTypeError(
                    self.text_name, f"parameter '{name}' expects {want}, got {got}{_one_element_hint(got)}"
                )
        if self.result_type == T:
            if bound is None:
                raise LiftError(f"user function {self.name}: result type T is not bound by any parameter")
            result = bound
        elif self.result_type == SCALAR_OF_T:
            if not isinstance(bound, VectorType):
                raise LiftTypeError(self.text_name, f"expects vector arguments, got {bound}")
            result = bound.scalar
        else:
            result = self.result_type
        if self.tree is not None:
            # An expression's meaning depends on its types: those of T, or of a vectorized function, are known here.
            self.tree.check_call(self.text_name, arg_types, result)
        return result, ({"T": bound} if bound is not None else {})

    def c_name(self, binding: dict) -> str:
        # A user's function is named apart (uf_): its name may be an OpenCL built-in (mad, sin), a C keyword,
        # or the name of an input or a generated variable, each a build error as it stood.
        base = self.base if self.base is not None else self
        name = self.name if BUILTINS.get(base.name) == base else f"uf_{self.name}"
        if not binding:
            return name
        t = binding["T"]
        return f"{name}_{_c_type(t)}"

    def c_definition(self, binding: dict) -> str:
        def resolve(t):
            if t == T:
                return binding["T"]
            if t == SCALAR_OF_T:
                return binding["T"].scalar
            return t

        params = ", ".join(f"{_c_type(resolve(t))} {n}" for n, t in zip(self.param_names, self.param_types))
        ret = _c_type(resolve(self.result_type))
        body = self.body.strip()
        if binding:
            # A generic body names its type as $T (a cast to the scalar or vector type it is made for).
            body = body.replace("$T", _c_type(binding["T"]))
        body = "\n".join("  " + line for line in body.splitlines())
        return f"{ret} {self.c_name(binding)}({params}) {{\n{body}\n}}"


_INT_FLOAT_HINT = ("; a Python number or a size beside a DSL value is a float literal (write lit(1) or lit(N) for an "
                   "int), and toFloat(i) and toInt(x) convert")


def _one_element_hint(got: Type) -> str:
    """What to write when a value is a one-element array: a reduction's result is ``[T]1`` (Lift's, so that
    it composes with map and join), and arithmetic takes its element."""
    if isinstance(got, ArrayType) and str(got.size) == "1":
        return (" (a one-element array, as reduce gives: take its element with r[0] or at(0, r), or write "
                "fold(f, init, xs), which is at(0, reduce(f, init, xs)))")
    return ""


def _check_name(name) -> None:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", name):
        raise LiftError(f"user function name {str(name)[:60]!r} is not a C identifier (letters, digits and _, "
                        "not starting with a digit)")


def _c_type(t: Type) -> str:
    if isinstance(t, VectorType):
        return f"{t.scalar.name}{int(t.width)}"
    return t.name


def _unpickled(name, param_names, param_types, result_type, body, numpy_fn: bytes) -> UserFun:
    return UserFun(name, param_names, param_types, result_type, body, pickle.loads(numpy_fn))


def userfun(name: str, params: list[tuple[str, Type | str]], result: Type | str, body: str, numpy: Callable) -> UserFun:
    """Define a user function: ``userfun("mad", [("a", Float), ("b", Float), ("c", Float)], Float,
    "return a * b + c;", lambda a, b, c: a * b + c)``."""
    if name in BUILTINS:
        # Printed by name, it could not be told from the built-in (nor read back: the parser refuses it).
        raise LiftError(f"user function {name}: {name} is a built-in user function; give yours another name")
    if name in _text_words():
        # Its calls would read back as that primitive (``map(...)``), or not at all (``fun``, ``value``).
        raise LiftError(f"user function {name}: {name} is a word of the text form (a primitive, a helper or a keyword); "
                        "give yours another name")
    params = [(n, _type(name, t)) for n, t in params]
    result = _type(name, result)
    for what, t in [*((f"parameter '{n}'", t) for n, t in params), ("result", result)]:
        if isinstance(t, ArrayType):
            # It would type-check and evaluate, but C functions take no arrays by value: refused here.
            raise LiftTypeError(name, f"{what} has the array type {t}; user functions take and return scalars, "
                                "vectors or tuples: apply the function to the elements with map, or use a vector type")
    return UserFun(name, tuple(n for n, _ in params), tuple(t for _, t in params), result, body, numpy)


_WORDS: set = set()

# The text form's reader of a type (``liftpy.ir.parser.parse_type``), for parameters given as text: installed
# by ``liftpy.ir.sugar``, as the parser builds user functions with this module and so sits above it.
READ_TYPE = None


def _text_words() -> set:
    """The names the text form reads as something other than a user function (after the built-ins exist)."""
    if not _WORDS and "_registry" in globals():  # (the built-ins, defined before it, are named apart from these)
        _WORDS.update(PRIMITIVES, MACROS, TEXT_KEYWORDS, {"def", "userfun", "opencl", "rule", "vectorize"})
    return _WORDS


def _type(name: str, t):
    """A parameter's or result's type; one given as text (``"float"``, ``"[float]4"``) is parsed."""
    if isinstance(t, str) and t not in (T, SCALAR_OF_T):
        if READ_TYPE is None:  # pragma: no cover - liftpy.ir's import installs it
            raise LiftError(f"user function {name}: types given as text need liftpy.ir.parser")
        try:
            return READ_TYPE(t)
        except LiftError as e:
            raise LiftError(f"user function {name}: the type {t!r} is not a type ({e})") from None
    return t


def vectorize(width, f: UserFun) -> UserFun:
    """The vector version of a scalar user function: same body, every scalar becomes a vector."""
    width = as_size(width)
    if f.base is not None:
        raise LiftTypeError("vectorize", f"{f.text_name} is already vectorized")
    for t in list(f.param_types) + [f.result_type]:
        if not (t == T or isinstance(t, ScalarType)):
            raise LiftTypeError("vectorize", f"{f.name} has a non-scalar parameter or result ({t}); only scalar functions vectorize")

    def vec(t):
        return t if t == T else VectorType(t, width)

    return UserFun(
        f.name if f.is_generic else f"{f.name}_v{width}",
        f.param_names,
        tuple(vec(t) for t in f.param_types),
        vec(f.result_type),
        f.body,
        f.numpy,
        vector_width=width,
        base=f,
        tree=f.tree,
    )


# --------------------------------------------------------------------------------------------------
# Built-in user functions


def _builtin_named(name: str) -> "UserFun":
    return BUILTINS[name]

def _dot(a, b):
    return np.sum(np.asarray(a) * np.asarray(b), axis=-1, dtype=np.result_type(a, b))


BUILTINS: dict[str, UserFun] = {}


def _builtin(name, params, result, body, fn):
    BUILTINS[name] = userfun(name, params, result, body, fn)


_builtin("id", [("x", T)], T, "return x;", lambda x: x)
BUILTINS["id"] = dataclasses.replace(BUILTINS["id"], tuples=True)  # copies of arrays of tuples are made of id
_builtin("add", [("x", T), ("y", T)], T, "return x + y;", lambda x, y: x + y)
_builtin("sub", [("x", T), ("y", T)], T, "return x - y;", lambda x, y: x - y)
_builtin("mult", [("x", T), ("y", T)], T, "return x * y;", lambda x, y: x * y)
_builtin("max", [("x", T), ("y", T)], T, "return max(x, y);", lambda x, y: np.maximum(x, y))
_builtin("min", [("x", T), ("y", T)], T, "return min(x, y);", lambda x, y: np.minimum(x, y))
_builtin(
    "multAndSumUp", [("acc", T), ("x", T), ("y", T)], T, "return acc + x * y;", lambda acc, x, y: acc + x * y
)
_builtin("dot", [("x", T), ("y", T)], SCALAR_OF_T, "return dot(x, y);", _dot)
# The lanes of a float4 or float8 combined (``vectorizeSum``, ``vectorizeSumWide``: a sum, maximum or minimum
# read four or eight elements at a time), pairwise, so a sum's order is a balanced tree.
def _lanes_c(op: str, width: int) -> str:
    terms = [f"x.s{i}" for i in range(width)]
    while len(terms) > 1:
        terms = [f"({a} + {b})" if op == "+" else f"{op}({a}, {b})" for a, b in zip(terms[::2], terms[1::2])]
    return f"return {terms[0][1:-1] if op == '+' else terms[0]};"


def _lanes_np(combine):
    def fn(x):
        x = np.asarray(x)
        lanes = [x[..., i] for i in range(x.shape[-1])]
        while len(lanes) > 1:
            lanes = [combine(a, b) for a, b in zip(lanes[::2], lanes[1::2])]
        return lanes[0]
    return fn


for _w in (4, 8):
    _vec = VectorType(Float, _w)
    _builtin(f"lanesum{_w}", [("x", _vec)], Float, _lanes_c("+", _w), _lanes_np(np.add))
    _builtin(f"lanemax{_w}", [("x", _vec)], Float, _lanes_c("max", _w), _lanes_np(np.maximum))
    _builtin(f"lanemin{_w}", [("x", _vec)], Float, _lanes_c("min", _w), _lanes_np(np.minimum))
_builtin(
    "relu", [("x", Float)], Float, "return max(x, 0.0f);", lambda x: np.maximum(x, np.float32(0))
)
# Arithmetic of the embedded DSL (``0.5 * v``, ``a < b``, ``select(c, a, b)``): built-in user functions,
# so the type checker, interpreter, text form and code generator need nothing new.  Comparisons give 1 or
# 0 of the operands' type (OpenCL's ?: works lane-wise on vectors); ``select`` takes a value that is
# non-zero for "yes", as the comparisons give.


def _same(dtype_of, values):
    return np.asarray(values).astype(np.asarray(dtype_of).dtype, copy=False)


_builtin("div", [("x", T), ("y", T)], T, "return x / y;", lambda x, y: _same(x, np.asarray(x) / np.asarray(y)))
_builtin("neg", [("x", T)], T, "return -x;", lambda x: -np.asarray(x))
_builtin("fabs", [("x", T)], T, "return fabs(x);", lambda x: np.abs(x))
_builtin("sqrt", [("x", T)], T, "return sqrt(x);", lambda x: _same(x, np.sqrt(x)))
_builtin("exp", [("x", T)], T, "return exp(x);", lambda x: _same(x, np.exp(x)))
for _name, _op, _np in (("lt", "<", np.less), ("le", "<=", np.less_equal), ("gt", ">", np.greater), ("ge", ">=", np.greater_equal)):
    _builtin(_name, [("x", T), ("y", T)], T, f"return (x {_op} y) ? ($T)1 : ($T)0;",
             lambda x, y, _np=_np: _same(x, np.where(_np(x, y), 1, 0)))
_builtin("select", [("c", T), ("x", T), ("y", T)], T, "return (c != ($T)0) ? x : y;",
         lambda c, x, y: _same(x, np.where(np.asarray(c) != 0, x, y)))
# Equality and the logical operators work on the values comparisons give: any non-zero value is "yes", and
# the result is 1 or 0 of the operands' type, as for lt..ge (so they nest: and(lt(a, b), not(eq(i, j)))).
# Their text names are eq, ne, and, or, not (words of neither the text form nor C); in Python eq, ne, and_,
# or_, not_, and the operators &, |, ~ on DSL values.  ``==`` stays Python's structural equality of
# expressions, which the program's de-duplication needs.
_builtin("eq", [("x", T), ("y", T)], T, "return (x == y) ? ($T)1 : ($T)0;",
         lambda x, y: _same(x, np.where(np.equal(x, y), 1, 0)))
_builtin("ne", [("x", T), ("y", T)], T, "return (x != y) ? ($T)1 : ($T)0;",
         lambda x, y: _same(x, np.where(np.not_equal(x, y), 1, 0)))
_builtin("and", [("x", T), ("y", T)], T, "return (x != ($T)0 && y != ($T)0) ? ($T)1 : ($T)0;",
         lambda x, y: _same(x, np.where((np.asarray(x) != 0) & (np.asarray(y) != 0), 1, 0)))
_builtin("or", [("x", T), ("y", T)], T, "return (x != ($T)0 || y != ($T)0) ? ($T)1 : ($T)0;",
         lambda x, y: _same(x, np.where((np.asarray(x) != 0) | (np.asarray(y) != 0), 1, 0)))
_builtin("not", [("x", T)], T, "return (x == ($T)0) ? ($T)1 : ($T)0;",
         lambda x: _same(x, np.where(np.asarray(x) == 0, 1, 0)))


def _to_int(x):
    """C's ``(int)x``: truncation toward zero.  C leaves a NaN or a value outside int's range undefined; here it
    is what numpy's conversion gives (-2^31 on x86), and a kernel may give another."""
    with np.errstate(invalid="ignore"):
        return np.trunc(np.asarray(x, dtype=np.float32)).astype(np.int32)


# Conversions between int and float, as C's casts: (float)i rounds to the nearest float (an int beyond 2^24
# may not be one), (int)x truncates toward zero (OpenCL's convert_int_rtz for values in range).
_builtin("toFloat", [("x", Int)], Float, "return (float)x;", lambda x: np.asarray(x).astype(np.float32))
_builtin("toInt", [("x", Float)], Int, "return (int)x;", _to_int)

_registry: dict[str, UserFun] = dict(BUILTINS)


def register(f: UserFun) -> UserFun:
    """Make a user function known by name to the text parser."""
    old = _registry.get(f.name)
    if old is not None and old != f and f.name in BUILTINS:
        raise LiftError(f"cannot redefine the built-in user function {f.name}")
    _registry[f.name] = f
    return f


def lookup(name: str) -> UserFun | None:
    return _registry.get(name)


# --------------------------------------------------------------------------------------------------
# User functions written as one arithmetic expression (``userfun_expr``): data, read by a grammar of their own.


def userfun_from_expression(name: str, params: list[tuple[str, Type | str]], result: Type | str, expression: str) -> UserFun:
    """``userfun_from_expression("mad", [("a", Float), ...], Float, "a * b + c")``: the C body is printed from the
    expression's syntax tree and the numpy semantics evaluate that tree (``liftpy.ir.userfun_expr`` says what
    the expression may be and what it means)."""
    _check_name(name)
    if not isinstance(params, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in params):
        raise LiftError(f"user function {name}: its parameters are (name, type) pairs, got {str(params)[:80]}")
    params = [(n, _type(name, t)) for n, t in params]
    result = _type(name, result)
    tree = Expression(name, params, result, expression)
    f = userfun(name, params, result, f"return {tree.c};", tree)
    return dataclasses.replace(f, expression=expression, tree=tree)
