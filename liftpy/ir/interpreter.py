"""The reference interpreter: evaluates any liftpy program with numpy.

High-level and OpenCL-level primitives have the same semantics here (``mapGlb`` is ``map``, ``reduceSeq``
is ``reduce``, ``toPrivate`` is the identity), so the interpreter is the oracle every generated kernel is
checked against.  Evaluation is batched (see ``liftpy.ir.values``): a map evaluates its function once on
the whole array, so programs over thousands of elements run in milliseconds.  Reductions fold from the
left in float32, in the same order as the generated sequential loops.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import sympy

from ..errors import EvaluationError, InputError, LiftError
from .expr import Call, Expr, Lambda, Literal, Program, Var
from .precision import widen
from .primitives import Primitive
from .typecheck import check_sizes
from .types import ArrayType, Elements, TupleType, Type, VectorType, as_size, innermost, scalar_of, with_leaf
from .userfun import SCALAR_OF_T, T, UserFun
from .values import BV, fill_batch, lift, literal_number, tmap


class Evaluator:
    def __init__(self, bindings: Mapping):
        self.bindings = bindings

    def concrete(self, size) -> int:
        v = sympy.sympify(size).subs(self.bindings)
        if not v.is_Integer:
            raise LiftError(f"size {size} has no value (known: {', '.join(map(str, self.bindings)) or 'none'})")
        return int(v)

    def call(self, lam: Lambda, args: list[BV], batch: tuple[int, ...]) -> BV:
        env = dict(self._env)
        for p, a in zip(lam.params, args):
            env[p.name] = a
        saved = self._env
        self._env = env
        try:
            return self.eval(lam.body, batch)
        finally:
            self._env = saved

    def eval(self, e: Expr, batch: tuple[int, ...]) -> BV:
        if isinstance(e, Var):
            return lift(self._env[e.name], batch)
        if isinstance(e, Literal):
            return BV(_literal_array(e, self, batch), batch)
        if isinstance(e, Call):
            args = [lift(self.eval(a, batch), batch) for a in e.args]
            fn = e.fn
            if isinstance(fn, Primitive):
                return fn.evaluate(args, self)
            if isinstance(fn, UserFun):
                return _apply_userfun(fn, args, batch)
            if isinstance(fn, Lambda):
                return self.call(fn, args, batch)
        raise LiftError(f"cannot evaluate {e!r}")

    def run(self, body: Expr, env: dict[str, BV]) -> BV:
        self._env = env
        return fill_batch(self.eval(body, ()))


def _literal_array(e: Literal, ev: Evaluator, batch):
    value = literal_number(e.value, e.type, ev.bindings)  # a size's value (lit(N)) with the sizes' values
    if isinstance(value, Elements):
        arr = _elements(value, e.type, ev)
        return np.broadcast_to(arr, batch + arr.shape)
    t, dims = e.type, []
    while isinstance(t, ArrayType):
        dims.append(ev.concrete(t.size))
        t = t.elem
    return _constant(value, t, batch + tuple(dims), ev)


def _elements(value, t: Type, ev: Evaluator) -> np.ndarray:
    """An array literal given element by element (``Elements``), or a value repeated over ``t``."""
    if isinstance(t, ArrayType):
        if isinstance(value, Elements):
            return np.stack([_elements(v, t.elem, ev) for v in value])
        inner = _elements(value, t.elem, ev)
        return np.broadcast_to(inner, (ev.concrete(t.size),) + inner.shape)
    return _constant(value, t, (), ev)


def _constant(value, t: Type, shape: tuple[int, ...], ev: Evaluator):
    """``value`` (of the leaf type ``t``) repeated over ``shape``: a tuple of arrays for a tuple."""
    if isinstance(t, TupleType):
        return tuple(_constant(v, e, shape, ev) for v, e in zip(value, t.elems))
    lanes = (ev.concrete(t.width),) if isinstance(t, VectorType) else ()
    arr = np.full(lanes, value, dtype=scalar_of(t).dtype)
    return np.broadcast_to(arr, shape + lanes)


def _apply_userfun(fn: UserFun, args: list[BV], batch) -> BV:
    # A tuple argument reaches the numpy function as a tuple of arrays, one per component.
    datas = [a.data if isinstance(a.data, tuple) else np.asarray(a.data) for a in args]
    out = fn.numpy(*widen(datas))  # (half arguments computed in float32: liftpy.ir.precision)
    if fn.result_type in (T, SCALAR_OF_T):
        firsts = [d for d, t in zip(datas, fn.param_types) if t == T]
        if firsts and isinstance(firsts[0], tuple):  # id of a tuple
            return BV(tmap(lambda a: _result(a, a.dtype, batch), out), batch)
        return BV(_result(out, firsts[0].dtype if firsts else np.float32, batch), batch)
    return BV(_typed_result(fn, out, fn.result_type, batch), batch)


def _typed_result(fn: UserFun, out, t: Type, batch):
    if isinstance(t, TupleType):
        if not (isinstance(out, tuple) and len(out) == len(t.elems)):
            raise EvaluationError(f"user function {fn.name} returns {t}, but its numpy implementation returned "
                                  f"{type(out).__name__}; return a tuple of {len(t.elems)} arrays")
        return tuple(_typed_result(fn, o, e, batch) for o, e in zip(out, t.elems))
    return _result(out, scalar_of(t).dtype, batch)


def _result(out, dtype, batch) -> np.ndarray:
    out = np.asarray(out).astype(dtype, copy=False)
    if out.shape[: len(batch)] != batch:
        out = np.broadcast_to(out, batch + out.shape[len(batch) :] if out.ndim >= len(batch) else batch)
    return out


# --------------------------------------------------------------------------------------------------
# Inputs and outputs


def _bind_shape(name: str, t: Type, arr: np.ndarray, bindings: dict) -> None:
    """Match an input array against its declared type, learning size variables from its shape."""
    dims = []
    tt = t
    while isinstance(tt, ArrayType):
        dims.append(tt.size)
        tt = tt.elem
    if isinstance(tt, VectorType):
        dims.append(tt.width)
    if arr.ndim != len(dims):
        raise InputError(f"input '{name}' has {arr.ndim} dimensions (shape {arr.shape}) but its type {t} has {len(dims)}")
    for axis, (d, n) in enumerate(zip(dims, arr.shape)):
        d = sympy.sympify(d).subs(bindings)
        if d.is_Integer:
            if int(d) != n:
                raise InputError(f"input '{name}': dimension {axis} has length {n}, the type {t} says {d} (shape {arr.shape})")
        elif d.is_Symbol:
            bindings[d] = n
        else:
            solved = sympy.solve(sympy.Eq(d, n), list(d.free_symbols))
            if len(d.free_symbols) != 1 or not solved:
                raise InputError(f"input '{name}': cannot infer the sizes in {d} from length {n}; give them with sizes=")
            (sym,) = d.free_symbols
            bindings[sym] = int(solved[0])


def prepare_inputs(program: Program, args, kwargs, sizes: Mapping | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """Match positional or named input arrays to the program's parameters and infer the sizes."""
    names = [p.name for p in program.params]
    if len(args) > len(names):
        raise InputError(f"{program.name} takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise InputError(f"{program.name} has no input '{k}' (inputs: {', '.join(names)})")
        if k in given:
            raise InputError(f"input '{k}' given twice")
        given[k] = v
    missing = [n for n in names if n not in given]
    if missing:
        raise InputError(f"{program.name}: missing input(s) {', '.join(missing)}")
    bindings = {as_size(k) if isinstance(k, str) else k: int(v) for k, v in (sizes or {}).items()}
    arrays = {}
    for p, t in zip(program.params, program.param_types):
        arrays[p.name] = _input(p.name, t, given[p.name], bindings)
    return arrays, bindings


def _as_scalars(name: str, t: Type, arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``arr`` in the input's element type, refused where the conversion would change values: text, complex
    numbers, integers outside the device's 32 bits (they wrapped), fractions given for integers."""
    if arr.dtype.kind not in "biuf":
        raise InputError(f"input '{name}' of type {t} takes numbers, got an array of {arr.dtype}")
    if dtype.kind in "iu" and arr.size:
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.trunc(arr))):
            raise InputError(f"input '{name}' of type {t} takes whole numbers, got fractions (dtype {arr.dtype})")
        info = np.iinfo(dtype)
        low, high = arr.min(), arr.max()
        if low < info.min or high > info.max:
            raise InputError(f"input '{name}' of type {t}: values from {low} to {high} do not fit the device's "
                             f"{dtype} ({info.min} to {info.max})")
    return arr.astype(dtype, copy=False)


def _input(name: str, t: Type, value, bindings: dict):
    """One input as the interpreter holds it, its sizes learnt into ``bindings``.  An array of tuples is
    given as a tuple of arrays (one per component, as ``evaluate`` returns them) or as a numpy
    structured array with one field per component."""
    leaf = innermost(t)
    if not isinstance(leaf, TupleType):
        if isinstance(value, tuple):
            raise InputError(f"input '{name}' of type {t} is given as a tuple of {len(value)} arrays; pass one array")
        arr = np.asarray(value)
        s = scalar_of(t)
        if s is not None:
            arr = _as_scalars(name, t, arr, np.dtype(s.dtype))
        _bind_shape(name, t, arr, bindings)
        return arr
    if isinstance(value, np.ndarray) and value.dtype.names:
        value = tuple(value[f] for f in value.dtype.names)
    if not (isinstance(value, tuple) and len(value) == len(leaf.elems)):
        raise InputError(f"input '{name}' of type {t}: give its {len(leaf.elems)} components as a tuple of arrays "
                         "(or a structured array with one field per component)")
    return tuple(_input(f"{name}._{k}", with_leaf(t, e), v, bindings) for k, (e, v) in enumerate(zip(leaf.elems, value)))


def evaluate(program: Program, *args, sizes: Mapping | None = None, **kwargs):
    """Run ``program`` on numpy inputs (positional or by name); returns a numpy array.

    Size variables are inferred from the input shapes; tuning parameters that do not appear in input
    types (a split factor) must be given in ``sizes``."""
    arrays, bindings = prepare_inputs(program, args, kwargs, sizes)
    check_sizes(program, bindings)
    ev = Evaluator(bindings)
    env = {name: BV(arr, ()) for name, arr in arrays.items()}
    try:
        out = ev.run(program.body, env)
        return _materialize(out.data)
    except MemoryError as e:
        # numpy says how much it asked for; the interpreter materialises every intermediate array.
        raise EvaluationError(f"evaluating {program.name} with {_sizes_text(bindings)} needs more memory than "
                              f"is available ({e}); the interpreter builds every intermediate array: "
                              "evaluate at smaller sizes") from None


def _sizes_text(bindings) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(bindings.items(), key=lambda kv: str(kv[0]))) or "no sizes"


def _materialize(data):
    if isinstance(data, tuple):
        return tuple(_materialize(d) for d in data)
    return np.ascontiguousarray(data)


def evaluate_expr(e: Expr, env: Mapping[str, np.ndarray], bindings: Mapping | None = None):
    """Evaluate an expression with free variables bound to numpy arrays (used by rule tests)."""
    ev = Evaluator({as_size(k) if isinstance(k, str) else k: v for k, v in (bindings or {}).items()})
    return _materialize(ev.run(e, {k: BV(np.asarray(v), ()) for k, v in env.items()}).data)
