"""The embedded DSL: Python functions that build IR.

Functions passed to primitives are ordinary Python callables (``lambda row: ...``, a user function, or a
DSL function such as ``transpose``); they are traced once with fresh variables into IR lambdas.  Numbers
become literals.  Multi-dimensional helpers (``map2D``, ``slide2D``, ``pad2D`` and their 3D forms
``map3D``, ``slide3D``, ``pad3D``) are
built from the 1D primitives exactly as in the Lift papers, so rewrite rules and the emitter only ever see
1D primitives.

    H, W = sizes("H W")

    @program
    def stencil(weights: Array(Float, 3, 3), data: Array(Float, H, W)):
        return mapWrg(0, lambda row: join(mapLcl(0, lambda nbh: ..., row)), slide2D(3, 1, data))

What a program's Python means:

- A value bound to a Python variable is computed once: used twice, or inside a function traced after it
  was made (the row maximum of a softmax inside the map over the row), it is bound with ``let`` where its
  variables are (``liftpy.ir.share``).
- ``+ - * /`` and ``< <= > >=`` are user functions (a comparison is 1 or 0 of its operands' type); ``==`` is
  Python's equality of expressions, so values compare with ``eq``/``ne``, and conditions combine with ``&``,
  ``|``, ``~`` (``and_``, ``or_``, ``not_``).  A Python number or a size beside a value is a float literal
  (``2 * v``, ``x / N``); ``lit(2)``, ``lit(N - 1)`` are ints, ``lit(N, Float)`` a float.  ``toFloat(i)`` is
  C's ``(float)i``, ``toInt(x)`` C's ``(int)x`` (truncation toward zero; undefined in C for NaN and values
  beyond int, which the interpreter makes -2^31).  ``select(c, a, b)`` with an int condition of floats (or the
  reverse) has the condition converted.
- ``iota(n)`` is ``[int]n`` of the indices, ``mapIdx(lambda i, x: ..., xs)`` maps with the index.
- ``reduce`` gives a one-element array ``[T]1`` (as Lift's); ``fold(f, init, xs)`` is its element, for arithmetic.
"""

from __future__ import annotations

import builtins
import inspect
from typing import Callable

import numpy as np
import sympy

from ..errors import LiftTypeError
from . import primitives as P
from .expr import Call, Expr, Lambda, Literal, Program, Var, fresh_name
from .results import Results
from .types import TEXT_KEYWORDS, ArrayType, Bool, Float, Int, Type, as_size, readable_name
from .share import function_frame, share, tracing_program
from .typecheck import resolve_indexing
from .userfun import BUILTINS, UserFun

Fun = Callable | Lambda | UserFun


def as_expr(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return Literal(bool(x), Bool)
    if isinstance(x, int):
        return Literal(int(x), Int)
    if isinstance(x, float):
        return Literal(float(x), Float)
    if isinstance(x, sympy.Expr):
        return _size_literal(x, Int)  # a size where a value is expected: its value, an int (lit(N, Float): a float)
    if isinstance(x, np.generic) and not isinstance(x, np.complexfloating):  # numpy's scalars, either side of an operator
        if isinstance(x, np.bool_):
            return Literal(bool(x), Bool)
        if isinstance(x, np.integer):
            return lit(int(x), Int)
        if isinstance(x, np.floating):
            return Literal(float(x), Float)
    if isinstance(x, (builtins.map, builtins.zip)):
        # ``from liftpy import *`` leaves Lift's map and zip out (they would hide Python's): this is Python's.
        raise LiftTypeError("expression", f"{type(x).__name__}(...) here is Python's {type(x).__name__}, not liftpy's: "
                                          f"write lp.{type(x).__name__} (import liftpy as lp) or "
                                          f"from liftpy import {type(x).__name__}")
    if isinstance(x, tuple):
        raise LiftTypeError("expression", f"cannot use the Python tuple {x!r} as a liftpy expression: a tuple of results "
                                          "is only what a program returns (return (a, b) from the program's function); inside "
                                          "a function return one value (a tuple of scalars comes from a user function returning "
                                          "Tuple(...) or a literal lit((1.0, 2), Tuple(Float, Int)), an array of tuples from zip)")
    raise LiftTypeError("expression", f"cannot use {x!r} ({type(x).__name__}) as a liftpy expression")


def lit(value, type: Type | None = None) -> Literal:
    """A literal; with an array type every element has the value: ``lit(0.0, Array(Float, 4))``.  A
    tuple literal gives one value per component: ``lit((inf, -1), Tuple(Float, Int))``.

    A size is a value too: ``lit(N)`` is an int literal whose value is the size's (``lit(N - 1)``), and
    ``lit(N, Float)`` a float one (of an exact quotient such as ``N / 3`` as well); the interpreter takes
    the sizes' values and the kernel has the number.  Beside a DSL value in arithmetic a size is a float,
    as a Python number is (``x / N``); ``i < lit(N - 1)`` compares an int."""
    if type is None:
        return as_expr(value)
    if isinstance(value, sympy.Basic):
        return _size_literal(value, type)
    return Literal(value, type)


def _size_literal(size, type: Type) -> Literal:
    """A literal whose value is the size ``size`` (``types.literal_value`` keeps it symbolic)."""
    return Literal(as_size(size), type)


def beside_value(x, op: str = "") -> Expr:
    """An operand of arithmetic on DSL values (``2 * v``, ``x / N``): a bare Python number or a size is a float
    literal (``lit(2)``, ``lit(N)`` for an int), a Python bool is refused (it comes from ``==``)."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool) or isinstance(x, np.bool_):
        raise _python_bool(x, op)
    if isinstance(x, (int, float)):
        return Literal(float(x), Float)
    if isinstance(x, sympy.Expr):
        return _size_literal(x, Float)
    return as_expr(x)


def as_argument(x, who: str) -> Expr:
    """An argument of a user function applied in the DSL: as ``as_expr``, but a Python bool is refused."""
    if isinstance(x, (bool, np.bool_)):
        raise _python_bool(x, who)
    return as_expr(x)


def _python_bool(x, who: str) -> LiftTypeError:
    return LiftTypeError(who or "expression", f"got the Python value {bool(x)}: == and != on DSL values compare "
                         "expressions while the program is built, not values; write eq(a, b) or ne(a, b) (1 or 0), "
                         "and lit(True, Bool) for a constant")


def as_lambda(f: Fun, arity: int, hint: str = "x") -> Lambda:
    """Trace a Python callable (or wrap a user function) into an IR lambda of ``arity`` parameters."""
    if isinstance(f, Lambda):
        if f.arity != arity:
            raise LiftTypeError("function", f"expected a function of {arity} parameter(s), got one of {f.arity}")
        return f
    hints = [hint] * arity
    if not isinstance(f, UserFun) and callable(f):
        try:
            names = [p.name for p in inspect.signature(f).parameters.values()]
            if len(names) == arity:
                hints = names
        except (TypeError, ValueError):
            pass
    params = tuple(Var(fresh_name(h)) for h in hints)
    if isinstance(f, UserFun):
        if f.arity != arity:
            raise LiftTypeError(f.text_name, f"is used as a function of {arity} parameter(s) but takes {f.arity}")
        return Lambda(params, Call(f, params))
    if not callable(f):
        raise LiftTypeError("function", f"expected a function, got {f!r}")
    name = getattr(f, "__name__", repr(f))
    try:
        with function_frame() as frame:
            body = f(*params)
    except TypeError as e:  # a function of other arity, or one that needs numbers (math.sqrt, np.sqrt, float(x))
        raise LiftTypeError("function", f"{name} cannot be applied to {arity} DSL value(s): {e} (a function of the "
                            "program is traced once with symbolic values; use the DSL's functions: sqrt, exp, fabs, "
                            "fmax, select, or a userfun)") from None
    if isinstance(body, bool):
        # == and != compare expressions structurally in Python: they build no comparison.
        raise LiftTypeError("function", f"{name} returned the Python value {body} (from == or != on DSL values, which "
                            "compare expressions, not values); use eq(a, b), ne(a, b), <, <=, >, >= (1 or 0), select(c, a, b), "
                            "or lit(True, Bool) for a constant")
    lam = Lambda(params, as_expr(body))
    if frame is not None:
        frame.lam = lam  # what the calls made in this trace were made for (share: values it captures)
    return lam


def _call(prim, *args) -> Call:
    return Call(prim, tuple(as_expr(a) for a in args))


# ------------------------------------------------------------------------------------------- maps


def map(f: Fun, xs) -> Call:  # noqa: A001 - the Lift name
    return _call(P.Map(as_lambda(f, 1)), xs)


def mapSeq(f: Fun, xs, unroll: bool = False) -> Call:
    return _call(P.MapSeq(as_lambda(f, 1), unroll), xs)


def mapSeqUnroll(f: Fun, xs) -> Call:
    return mapSeq(f, xs, unroll=True)


def mapIdx(f: Fun, xs) -> Call:
    """``f(i, x)`` for every element ``x`` of ``xs`` and its index ``i`` (an int): ``map`` over
    ``zip(iota(n), xs)``, ``n`` the length of ``xs`` (``indices(xs)`` until the program is built).  For
    conditions on positions: ``mapIdx(lambda i, x: select(le(i, lit(N - 2)), x, 0.0), xs)``."""
    xs = as_expr(xs)
    if isinstance(f, (Lambda, UserFun)):
        g = as_lambda(f, 2, "i")
        return map(lambda p: Call(g, (get(p, 0), get(p, 1))), zip(indices(xs), xs))
    # The function is traced on the components of the pair (views), not substituted into afterwards: what it
    # binds to Python variables stays one object each, for the tracer to share.
    return map(_named(lambda p: f(get(p, 0), get(p, 1)), _param_names(f, 2)), zip(indices(xs), xs))


def iota(n) -> Call:
    """``[int]n`` whose element ``i`` is ``i``: a view with no memory (the kernel computes the index)."""
    return Call(P.Iota(as_size(n)), ())


def indices(xs) -> Call:
    """The indices of ``xs``, ``iota`` of its length (resolved into ``iota(n)`` when the program is built)."""
    return _call(P.Indices(), xs)


def _param_names(f, arity: int) -> list[str] | None:
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()]
    except (TypeError, ValueError):
        return None
    return names if len(names) == arity else None


def _named(fn, names):
    """``fn`` with a parameter hint for the printed lambda (``fun(p) =>``, or the pair's names joined)."""
    if names:
        fn.__signature__ = inspect.Signature([inspect.Parameter("_".join(names), inspect.Parameter.POSITIONAL_ONLY)])
    return fn


def mapGlb(dim: int, f: Fun, xs) -> Call:
    return _call(P.MapGlb(_dim(dim), as_lambda(f, 1)), xs)


def mapWrg(dim: int, f: Fun, xs) -> Call:
    return _call(P.MapWrg(_dim(dim), as_lambda(f, 1)), xs)


def mapLcl(dim: int, f: Fun, xs) -> Call:
    return _call(P.MapLcl(_dim(dim), as_lambda(f, 1)), xs)


def _dim(d) -> int:
    if d not in (0, 1, 2):
        raise LiftTypeError("map", f"OpenCL has NDRange dimensions 0, 1 and 2, not {d!r}")
    return int(d)


# ------------------------------------------------------------------------------------------ reduce


def reduce(f: Fun, init, xs) -> Call:
    return _call(P.Reduce(as_lambda(f, 2, "acc")), init, xs)


def reduceSeq(f: Fun, init, xs, unroll: bool = False) -> Call:
    return _call(P.ReduceSeq(as_lambda(f, 2, "acc"), unroll), init, xs)


def reduceSeqUnroll(f: Fun, init, xs) -> Call:
    return reduceSeq(f, init, xs, unroll=True)


def reduceLcl(dim: int, f: Fun, init, xs) -> Call:
    return _call(P.ReduceLcl(_dim(dim), as_lambda(f, 2, "acc")), init, xs)


def scanSeq(f: Fun, init, xs) -> Call:
    """The inclusive prefix fold: ``[f(init, x0), f(f(init, x0), x1), ...]``, one work-item after another element."""
    return _call(P.ScanSeq(as_lambda(f, 2, "acc")), init, xs)


def fold(f: Fun, init, xs) -> Call:
    """The value of a reduction, for arithmetic: ``at(0, reduce(f, init, xs))``.  ``reduce`` itself gives a
    one-element array ``[T]1``, as Lift's, which composes with ``map`` and ``join`` (``join(map(row ->
    reduce(...), rows))``); ``alpha * reduce(...)`` is a type error that says so."""
    return at(0, reduce(f, init, xs))


# ------------------------------------------------------------------------------------------ layout


def zip(*xs) -> Call:  # noqa: A001
    return _call(P.Zip(), *xs)


def get(t, i: int) -> Call:
    return _call(P.Get(int(i)), t)


def split(n, xs) -> Call:
    return _call(P.Split(as_size(n)), xs)


def join(xs) -> Call:
    return _call(P.Join(), xs)


def slide(size, step, xs) -> Call:
    return _call(P.Slide(as_size(size), as_size(step), False), xs)


def slideStrict(size, step, xs) -> Call:
    return _call(P.Slide(as_size(size), as_size(step), True), xs)


def pad(left, right, value, xs) -> Call:
    """``left`` elements before ``xs`` and ``right`` after: copies of ``value`` when it is a number (negative
    amounts crop), else the boundary it names: ``"clamp"``, ``"mirror"`` or ``"wrap"``."""
    return _call(P.Pad(as_size(left), as_size(right), value), xs)


def at(index, xs) -> Call:
    """Element ``index`` of the array ``xs`` (a number or a size expression), read where it lies."""
    return _call(P.At(index), xs)


def gather(indices, xs) -> Call:
    """``xs[indices[k]]`` for every ``k``: an array of int indices selects elements of ``xs`` (Lift's Filter)."""
    return _call(P.Gather(), indices, xs)


def transpose(xs) -> Call:
    return _call(P.Transpose(), xs)


def reorder(fn, xs) -> Call:
    return _call(P.Reorder(fn), xs)


def stride(s) -> P.Stride:
    return P.Stride(as_size(s))


reverse = P.Reverse()


def asVector(n, xs) -> Call:
    return _call(P.AsVector(as_size(n)), xs)


def asScalar(xs) -> Call:
    return _call(P.AsScalar(), xs)


def let(f: Fun, x) -> Call:
    return _call(P.Let(as_lambda(f, 1, "v")), x)


def toGlobal(x) -> Call:
    return _call(P.ToGlobal(), x)


def toGlobalLast(x) -> Call:
    """``toGlobal`` at a kernel boundary whose next kernel runs in this one's last work-group."""
    return _call(P.ToGlobal(True), x)


def toLocal(x) -> Call:
    return _call(P.ToLocal(), x)


def toLocalDouble(x) -> Call:
    """``toLocal`` with two halves used alternately (a tile staged at every step of a loop)."""
    return _call(P.ToLocal(True), x)


def toPrivate(x) -> Call:
    return _call(P.ToPrivate(), x)


def id(x) -> Call:  # noqa: A001 - the Lift name
    return BUILTINS["id"](x)


# Built-in user functions of conditions and conversions (``liftpy.ir.userfun``), by their Python names: the
# text form calls and_, or_ and not_ and, or and not (the comparisons are also < <= > >=, the logic & | ~).
lt = BUILTINS["lt"]
le = BUILTINS["le"]
gt = BUILTINS["gt"]
ge = BUILTINS["ge"]
eq = BUILTINS["eq"]
ne = BUILTINS["ne"]
and_ = BUILTINS["and"]
or_ = BUILTINS["or"]
not_ = BUILTINS["not"]
toFloat = BUILTINS["toFloat"]
toInt = BUILTINS["toInt"]


# ---------------------------------------------------------------------- multi-dimensional helpers


def _pair(v) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise LiftTypeError("slide2D", f"expects one value or a pair, got {v!r}")
        return tuple(v)
    return (v, v)


def map2D(f: Fun, xs) -> Call:
    return map(lambda row: map(f, row), xs)


def map3D(f: Fun, xs) -> Call:
    return map(lambda plane: map2D(f, plane), xs)


def slide2D(size, step, xs, strict: bool = False) -> Call:
    """Windows of ``size`` (an int or a (rows, cols) pair) every ``step`` in both dimensions:
    ``map(transpose, slide(size1, step1, map(row -> slide(size2, step2, row), xs)))``."""
    (s1, s2), (t1, t2) = _pair(size), _pair(step)
    sl = slideStrict if strict else slide
    return map(transpose, sl(s1, t1, map(lambda row: sl(s2, t2, row), xs)))


def slideStrict2D(size, step, xs) -> Call:
    return slide2D(size, step, xs, strict=True)


def pad2D(left, right, top, bottom, value, xs) -> Call:
    """Pad the two outer dimensions: columns by (left, right), rows by (top, bottom)."""
    return transpose(map(lambda col: pad(top, bottom, value, col), transpose(map(lambda row: pad(left, right, value, row), xs))))


def _triple(v, name: str) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != 3:
            raise LiftTypeError(name, f"expects one value or a triple (depth, rows, columns), got {v!r}")
        return tuple(v)
    return (v, v, v)


def slide3D(size, step, xs, strict: bool = False) -> Call:
    """Windows of ``size`` (an int or a (depth, rows, cols) triple) every ``step`` over the three outer
    dimensions: ``[D][H][W] -> [od][oh][ow][s1][s2][s3]``, from ``slide2D`` over each plane and ``slide``
    over the planes, the window's depth then moved inside."""
    (s1, s2, s3), (t1, t2, t3) = _triple(size, "slide3D"), _triple(step, "slide3D")
    sl = slideStrict if strict else slide
    planes = map(lambda plane: slide2D((s2, s3), (t2, t3), plane, strict), xs)  # [D][oh][ow][s2][s3]
    return map(lambda w: map(transpose, transpose(w)), sl(s1, t1, planes))


def slideStrict3D(size, step, xs) -> Call:
    return slide3D(size, step, xs, strict=True)


def pad3D(left, right, top, bottom, front, back, value, xs) -> Call:
    """Pad the three outer dimensions ``[D][H][W]``: columns by (left, right), rows by (top, bottom),
    planes by (front, back); ``value`` a number or a boundary (``clamp``, ``mirror``, ``wrap``)."""
    return pad(front, back, value, map(lambda plane: pad2D(left, right, top, bottom, value, plane), xs))


# ------------------------------------------------------------------------------------------ programs


def program(fn: Callable | None = None, *, name: str | None = None):
    """Decorator: a Python function whose parameters are annotated with liftpy types becomes a Program."""

    def build(f: Callable) -> Program:
        sig = inspect.signature(f, eval_str=True)  # annotations may be strings (from __future__ import annotations)
        params, types = [], []
        for pname, p in sig.parameters.items():
            if p.annotation is inspect.Parameter.empty or not isinstance(p.annotation, Type):
                raise LiftTypeError(
                    "program", f"parameter '{pname}' of {f.__name__} needs a liftpy type annotation, e.g. Array(Float, N)"
                )
            params.append(Var(_input_name(pname, f.__name__)))
            types.append(p.annotation)
        return _traced(name or f.__name__, params, types, f)

    return build(fn) if fn is not None else build


def _input_name(name, program: str) -> str:
    """An input's name, refused where the text form could not read it back (a word of it such as ``value`` or
    ``true``, or no identifier: a program's text names its inputs)."""
    if not readable_name(name):
        raise LiftTypeError("program", f"input {name!r} of {program}: an input's name must be an identifier other than "
                                       f"{', '.join(sorted(TEXT_KEYWORDS))}")
    return name


def make_program(name: str, inputs: list[tuple[str, Type]], body: Callable, shared: bool = True) -> Program:
    """Build a program without a decorator: ``make_program("f", [("x", Array(Float, N))], lambda x: ...)``.
    With ``shared=False`` a value used twice is written (and computed) twice, as a tree of the calls made."""
    params = [Var(_input_name(n, name)) for n, _ in inputs]
    return _traced(name, params, [t for _, t in inputs], body, shared)


def _result(value, name: str) -> Expr:
    """What a program's function returned, as the program's body: a Python tuple is several results
    (``tuple(a, b)``, ``liftpy.ir.results``), each an expression."""
    if isinstance(value, tuple):
        if len(value) < 2:
            raise LiftTypeError("program", f"{name} returns a tuple of {len(value)} value(s); return the value itself, or "
                                           "a tuple of two or more results")
        for i, v in enumerate(value):
            if isinstance(v, tuple):
                raise LiftTypeError("program", f"result {i} of {name} is itself a Python tuple: list every result in one "
                                               "tuple, return (a, b, c)")
        return Call(Results(), tuple(as_expr(v) for v in value))
    return as_expr(value)


def _traced(name: str, params: list, types: list, fn: Callable, shared: bool = True) -> Program:
    """The program ``fn`` makes of its inputs: traced, its shared values bound once (``liftpy.ir.share``),
    its notations that depend on types resolved (``x[i]``, ``indices``, ``select``'s condition)."""
    with tracing_program() as root:
        body = _result(fn(*params), name)
    return resolve_indexing(Program(name, tuple(params), tuple(types), share(body, root) if shared else body))
