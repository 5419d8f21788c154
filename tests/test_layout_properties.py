"""Property tests of the layout primitives: random compositions over random shapes.

A hypothesis strategy builds a random *layout chain* over one input (split, join, slide, pad with positive
and negative amounts or with a clamp, mirror or wrap boundary, transpose, reorder by stride and reverse, zip with a fresh input and tuple access,
asVector/asScalar, each possibly applied at depth through a map of the layout function), feeds it to a
lowered parallel copy (mapGlb in one to three dimensions, or mapWrg/mapLcl, with mapSeq/mapSeqUnroll and
``id`` inside) and optionally stores the copy through write-side layouts (join, split, transpose, vector
casts).  Alongside the program it computes the expected value with the numpy functions below, written here
independently of liftpy's interpreter (index arithmetic instead of reshapes where liftpy reshapes, and
vice versa).

- ``test_interpreter_matches_numpy``: the reference interpreter agrees with that independent numpy model,
  for lowered and high-level forms (no OpenCL, many examples);
- ``test_kernel_matches_interpreter_*``: the generated OpenCL on PoCL agrees with the interpreter, exactly
  (pure data movement is bit-exact, for integers and floats alike).

Sizes are sometimes symbolic (input lengths ``N0``, ``N1``..., split factors as tuning parameters ``S0``...),
given values at evaluation/compilation time.  Each kernel build costs PoCL time, so the OpenCL tests use few
examples; the deterministic hypothesis profile (tests/conftest.py) makes them the same on every run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import liftpy as L
from liftpy import Array, Float, Int, evaluate, typecheck

# --------------------------------------------------------------------------------------------------
# An independent numpy model of each layout primitive, acting on axis ``ax`` of a numpy array.


def np_split(a, ax, k):
    n = a.shape[ax]
    # gather with explicit indices: element [i][j] is element i*k + j
    idx = np.arange(n // k)[:, None] * k + np.arange(k)[None, :]
    return np.take(a, idx, axis=ax)


def np_join(a, ax):
    n, m = a.shape[ax], a.shape[ax + 1]
    out_idx = np.arange(n * m)
    moved = np.moveaxis(a, (ax, ax + 1), (0, 1))
    flat = moved[out_idx // m, out_idx % m]
    return np.moveaxis(flat, 0, ax)


def np_slide(a, ax, size, step):
    n = a.shape[ax]
    count = (n - size) // step + 1
    idx = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    return np.take(a, idx, axis=ax)


def np_pad(a, ax, left, right, value):
    n = a.shape[ax]
    src = np.arange(left + n + right) - left
    if isinstance(value, str):  # a boundary: which element each position reads
        if value == "clamp":
            src = np.clip(src, 0, n - 1)
        elif value == "mirror":
            src = np.where(src < 0, -1 - src, np.where(src >= n, 2 * n - 1 - src, src))
        else:
            src = src % n
        return np.take(a, src, axis=ax)
    inside = (src >= 0) & (src < n)
    taken = np.take(a, np.clip(src, 0, n - 1), axis=ax)
    mask = inside.reshape((1,) * ax + (-1,) + (1,) * (a.ndim - ax - 1))
    return np.where(mask, taken, np.array(value, dtype=a.dtype))


def np_slide2d(a, ax, size, step):
    """Windows over axes ax, ax+1: result axes (rows, cols, size1, size2) at ax."""
    w = np_slide(np_slide(a, ax + 1, size[1], step[1]), ax, size[0], step[0])  # (rows, s1, cols, s2)
    return np.swapaxes(w, ax + 1, ax + 2)


def np_transpose(a, ax):
    return np.swapaxes(a, ax, ax + 1)


def np_stride(a, ax, s):
    """Lift's striddenIndex(s): out[i] = in[i / m + s * (i % m)], m = n / s; computed as the transpose of
    the (m, s) matrix view of the input (out viewed as (s, m))."""
    n = a.shape[ax]
    m = n // s
    moved = np.moveaxis(a, ax, 0)
    out = moved.reshape((m, s) + moved.shape[1:]).swapaxes(0, 1).reshape((n,) + moved.shape[1:])
    return np.moveaxis(out, 0, ax)


def np_reverse(a, ax):
    return np.flip(a, axis=ax)


def np_as_vector(a, ax, w):
    # ax is the innermost array axis; the lanes become a trailing axis
    return np.stack([np.take(a, np.arange(t, a.shape[ax], w), axis=ax) for t in range(w)], axis=-1)


def np_as_scalar(a):
    return a.reshape(a.shape[:-2] + (a.shape[-2] * a.shape[-1],))


def test_numpy_model_self_check():
    """The model agrees with hand-computed values (so it is not just a copy of the interpreter)."""
    a = np.arange(6)
    assert np_split(a, 0, 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert np_join(np_split(a, 0, 2), 0).tolist() == a.tolist()
    assert np_slide(a, 0, 3, 2).tolist() == [[0, 1, 2], [2, 3, 4]]
    assert np_pad(a, 0, 2, -3, -1).tolist() == [-1, -1, 0, 1, 2]
    assert np_pad(a, 0, -6, 2, 9).tolist() == [9, 9]
    assert np_stride(a, 0, 2).tolist() == [0, 2, 4, 1, 3, 5]  # i/3 + 2*(i%3)
    assert np_stride(a, 0, 3).tolist() == [0, 3, 1, 4, 2, 5]
    assert np_as_vector(a, 0, 2).tolist() == [[0, 1], [2, 3], [4, 5]]
    assert np_transpose(np_split(a, 0, 3), 0).tolist() == [[0, 3], [1, 4], [2, 5]]
    m = np.arange(12).reshape(3, 4)
    assert np_slide2d(m, 0, (2, 3), (1, 1))[1, 1].tolist() == [[5, 6, 7], [9, 10, 11]]
    assert np_slide2d(m, 0, (2, 3), (1, 1)).shape == (2, 2, 2, 3)


# --------------------------------------------------------------------------------------------------
# Values of a chain under construction: the liftpy expression and its expected numpy value.


@dataclass(frozen=True)
class Val:
    expr: L.Expr
    ref: np.ndarray  # shape: dims + (vec,) if vec
    dims: tuple[int, ...]
    vec: int = 0  # 0: scalar leaves; n: vectors of n lanes
    comps: tuple["Val", ...] | None = None  # a zipped value: one Val per component (their dims start with dims)


class Case:
    """A generated program with its inputs, size values and expected (numpy model) output."""

    def __init__(self, program, inputs, sizes, expected, steps):
        self.program, self.inputs, self.sizes, self.expected, self.steps = program, inputs, sizes, expected, steps

    def __repr__(self) -> str:
        shapes = ", ".join(str(a.shape) for a in self.inputs)
        return f"Case(sizes={self.sizes}, inputs={shapes}, steps={self.steps})\n{self.program}"


def at_depth(d, f, e, mapper=None):
    """f applied at nesting depth d: ``map(r -> ... map(f, r) ..., e)``."""
    mapper = mapper or L.map
    if d == 0:
        return f(e)
    return mapper(lambda r: at_depth(d - 1, f, r, mapper), e)


class Builder:
    def __init__(self, draw, elem: str, read_as_scalar: bool = False):
        self.draw = draw
        self.read_as_scalar = read_as_scalar
        self.elem = elem
        self.scalar = Int if elem == "int" else Float
        self.dtype = np.int32 if elem == "int" else np.float32
        self.inputs: list[tuple[str, L.Type, np.ndarray]] = []
        self.sizes: dict[str, int] = {}
        self.steps: list[str] = []
        self.rng = np.random.default_rng(draw(st.integers(0, 2**16)))

    # -- inputs --------------------------------------------------------------------------------
    def data(self, shape):
        count = int(np.prod(shape))
        if self.elem == "int":
            vals = self.rng.permutation(count).astype(np.int32) * 3 - count  # distinct values
        else:
            vals = self.rng.standard_normal(count).astype(np.float32)
        return vals.reshape(shape)

    def new_input(self, dims) -> Val:
        name = "xyzuvw"[len(self.inputs)]
        decl = []
        for n in dims:
            if self.draw(st.booleans()):
                sym = f"N{len(self.sizes)}"
                self.sizes[sym] = n
                decl.append(L.size_var(sym))
            else:
                decl.append(n)
        t = Array(self.scalar, *decl)
        arr = self.data(dims)
        self.inputs.append((name, t, arr))
        return Val(L.Var(name), arr, tuple(dims))

    def boundary(self):
        """None (a constant boundary) or the name of a boundary function."""
        return self.draw(st.sampled_from([None, None, "clamp", "mirror", "wrap"]))

    def pad_value(self):
        if self.elem == "int":
            return self.draw(st.sampled_from([0, -1, 7, -1234567]))
        return self.draw(st.sampled_from([0.0, -1.5, 0.1, 3.0e-3, -2.5e7, 1e-20]))

    def factor(self, n, what="split"):
        divisors = [k for k in range(1, n + 1) if n % k == 0]
        k = self.draw(st.sampled_from(divisors))
        if what == "split" and self.draw(st.integers(0, 3)) == 0:
            sym = f"S{sum(1 for s in self.sizes if s.startswith('S'))}"
            self.sizes[sym] = k
            return L.size_var(sym), k
        return k, k

    # -- one random step -----------------------------------------------------------------------
    def options(self, v: Val) -> list[tuple[str, int]]:
        """(operation, depth) pairs applicable to v."""
        out = []
        nd = len(v.dims)
        zipped = v.comps is not None
        for d in range(nd):
            out += [("split", d), ("slide", d), ("stride", d), ("reverse", d)]
            if not zipped:
                out.append(("pad", d))
            if d + 1 < nd:
                out += [("join", d), ("transpose", d), ("slide2D", d)]
                if not zipped:
                    out.append(("pad2D", d))
        if not zipped:
            if v.vec == 0 and any(v.dims[-1] % w == 0 for w in (2, 3, 4, 8, 16)):
                out.append(("asVector", nd - 1))
            if v.vec and self.read_as_scalar:
                out.append(("asScalar", nd - 1))
            out.append(("zip", 0))
        else:
            out.append(("get", nd))
        return out

    def step(self, v: Val) -> Val:
        options = self.options(v)
        op = self.draw(st.sampled_from(sorted({o for o, _ in options})))  # each kind equally likely
        d = self.draw(st.sampled_from([d for o, d in options if o == op]))
        mapper = self.draw(st.sampled_from([L.map, L.map, L.mapSeq])) if d else None
        n = v.dims[d] if d < len(v.dims) else None

        if op == "zip":
            return self.zip(v)
        if op == "get":
            k = self.draw(st.integers(0, len(v.comps) - 1))
            self.steps.append(f"get {k} at depth {d}")
            c = v.comps[k]
            return replace(c, expr=at_depth(d, lambda p: L.get(p, k), v.expr, mapper))

        if op == "split":
            static, k = self.factor(n)
            f, g, dims = (lambda e: L.split(static, e)), (lambda a: np_split(a, d, k)), (n // k, k)
        elif op == "join":
            f, g, dims = L.join, (lambda a: np_join(a, d)), (n * v.dims[d + 1],)
        elif op == "slide":
            size = self.draw(st.integers(1, n))
            step = self.draw(st.integers(1, max(1, n - size + 1)))
            f = lambda e: L.slide(size, step, e)  # noqa: E731
            g, dims = (lambda a: np_slide(a, d, size, step)), ((n - size) // step + 1, size)
        elif op == "pad":
            value = self.boundary()
            if value is None:
                left = self.draw(st.integers(-n, 3))
                right = self.draw(st.integers(max(-n, 1 - n - left), 3))
                value = self.pad_value()
            else:  # boundaries pad (never crop); mirror and wrap by at most the length
                most = 3 if value == "clamp" else min(3, n)
                left, right = self.draw(st.integers(0, most)), self.draw(st.integers(0, most))
            f = lambda e: L.pad(left, right, value, e)  # noqa: E731
            g, dims = (lambda a: np_pad(a, d, left, right, value)), (left + n + right,)
        elif op == "transpose":
            f, g, dims = L.transpose, (lambda a: np_transpose(a, d)), (v.dims[d + 1], n)
        elif op == "stride":
            _, s = self.factor(n, "stride")
            f = lambda e: L.reorder(L.stride(s), e)  # noqa: E731
            g, dims = (lambda a: np_stride(a, d, s)), (n,)
        elif op == "reverse":
            f, g, dims = (lambda e: L.reorder(L.reverse, e)), (lambda a: np_reverse(a, d)), (n,)
        elif op == "slide2D":
            (n1, n2) = v.dims[d], v.dims[d + 1]
            s1, s2 = self.draw(st.integers(1, n1)), self.draw(st.integers(1, n2))
            t1, t2 = self.draw(st.integers(1, 3)), self.draw(st.integers(1, 3))
            f = lambda e: L.slide2D((s1, s2), (t1, t2), e)  # noqa: E731
            g = lambda a: np_slide2d(a, d, (s1, s2), (t1, t2))  # noqa: E731
            dims = ((n1 - s1) // t1 + 1, (n2 - s2) // t2 + 1, s1, s2)
        elif op == "pad2D":
            (n1, n2) = v.dims[d], v.dims[d + 1]
            value = self.boundary()
            if value is None:
                top, left = self.draw(st.integers(-n1 + 1, 2)), self.draw(st.integers(-n2 + 1, 2))
                # Cropping takes at most the whole length from each side, and leaves at least one element.
                bottom = self.draw(st.integers(max(-2, -n1, 1 - n1 - top), 2))
                right = self.draw(st.integers(max(-2, -n2, 1 - n2 - left), 2))
                value = self.pad_value()
            else:
                m1, m2 = (2, 2) if value == "clamp" else (min(2, n1), min(2, n2))
                top, bottom = self.draw(st.integers(0, m1)), self.draw(st.integers(0, m1))
                left, right = self.draw(st.integers(0, m2)), self.draw(st.integers(0, m2))
            f = lambda e: L.pad2D(left, right, top, bottom, value, e)  # noqa: E731
            g = lambda a: np_pad(np_pad(a, d + 1, left, right, value), d, top, bottom, value)  # noqa: E731
            dims = (top + n1 + bottom, left + n2 + right)
        elif op == "asVector":
            w = self.draw(st.sampled_from([w for w in (2, 3, 4, 8, 16) if n % w == 0]))
            f = lambda e: L.asVector(w, e)  # noqa: E731
            self.steps.append(f"asVector({w}) at depth {d}")
            return Val(at_depth(d, f, v.expr, mapper), np_as_vector(v.ref, d, w), v.dims[:-1] + (n // w,), w)
        elif op == "asScalar":
            self.steps.append(f"asScalar at depth {d}")
            return Val(at_depth(d, L.asScalar, v.expr, mapper), np_as_scalar(v.ref), v.dims[:-1] + (n * v.vec,), 0)
        else:  # pragma: no cover
            raise AssertionError(op)
        self.steps.append(f"{op} at depth {d}")
        expr = at_depth(d, f, v.expr, mapper)
        consumed = 2 if op in ("join", "transpose", "slide2D", "pad2D") else 1  # dims replaced by ``dims``
        new_dims = v.dims[:d] + dims + v.dims[d + consumed:]
        if v.comps is None:
            return Val(expr, g(v.ref), new_dims, v.vec)
        comps = tuple(replace(c, ref=g(c.ref), dims=new_dims + c.dims[len(v.dims):]) for c in v.comps)
        return Val(expr, None, new_dims, 0, comps)

    def zip(self, v: Val) -> Val:
        n = v.dims[0]
        partners = []
        for _ in range(self.draw(st.integers(1, 2))):
            if self.draw(st.booleans()):
                inner = tuple(self.draw(st.lists(st.integers(1, 4), max_size=1)))
                partners.append(self.new_input((n,) + inner))
            else:
                partners.append(Val(L.reorder(L.reverse, v.expr), np_reverse(v.ref, 0), v.dims, v.vec))
        self.steps.append(f"zip with {len(partners)} more")
        comps = (v,) + tuple(partners)
        return Val(L.zip(*(c.expr for c in comps)), None, (n,), 0, comps)


# -- the consumer: a lowered parallel copy -------------------------------------------------------


def _seq(draw, n):
    if n <= 4 and draw(st.integers(0, 2)) == 0:
        return lambda f, e: L.mapSeqUnroll(f, e)
    return lambda f, e: L.mapSeq(f, e)


def consumer(draw, v: Val, lowered: bool):
    """A copy of v (projecting a zipped value inside the copy), its dims and its leaf vector width."""
    proj = None
    if v.comps is not None:
        k = draw(st.integers(0, len(v.comps) - 1))
        proj = (len(v.dims), k)
        target = v.comps[k]
    else:
        target = v
    dims, nd = target.dims, len(target.dims)
    styles = ["glb"]
    if nd >= 2:
        styles += ["glb2", "wrg"]
    if nd >= 3:
        styles += ["glb3", "wrg_lcl2", "wrg2"]
    if not lowered:
        styles += ["map", "map"]
    style = draw(st.sampled_from(styles))
    top = {
        "glb": [lambda f, e: L.mapGlb(0, f, e)],
        "glb2": [lambda f, e: L.mapGlb(1, f, e), lambda f, e: L.mapGlb(0, f, e)],
        "glb3": [lambda f, e: L.mapGlb(2, f, e), lambda f, e: L.mapGlb(1, f, e), lambda f, e: L.mapGlb(0, f, e)],
        "wrg": [lambda f, e: L.mapWrg(0, f, e), lambda f, e: L.mapLcl(0, f, e)],
        "wrg_lcl2": [lambda f, e: L.mapWrg(0, f, e), lambda f, e: L.mapLcl(1, f, e), lambda f, e: L.mapLcl(0, f, e)],
        "wrg2": [lambda f, e: L.mapWrg(1, f, e), lambda f, e: L.mapWrg(0, f, e), lambda f, e: L.mapLcl(0, f, e)],
        "map": [lambda f, e: L.map(f, e)],
    }[style]
    kinds = top + [_seq(draw, n) for n in dims[len(top):]]
    to_global = draw(st.integers(0, 3)) == 0

    def build(level, e):
        if proj is not None and level == proj[0]:
            e = L.get(e, proj[1])
        if level == nd:
            return L.id(e)
        if to_global and level == nd - 1 and level >= len(top):
            return L.toGlobal(kinds[level](lambda r: build(level + 1, r), e))
        return kinds[level](lambda r: build(level + 1, r), e)

    return build(0, v.expr), target.ref, dims, target.vec, style


def write_side(draw, expr, ref, dims, vec, steps):
    """Store the copy through 0-2 invertible layouts (write views), possibly mapped over the outer dimension."""
    for _ in range(draw(st.integers(0, 2))):
        opts = []
        if len(dims) >= 2:
            opts += ["join", "transpose"]
        if any(k for k in range(2, dims[0]) if dims[0] % k == 0):
            opts.append("split")
        if vec and len(dims) == 1:
            opts.append("asScalar")
        # maps of layout functions on the write side
        if len(dims) >= 3:
            opts += ["map-transpose", "map-join"]
        if vec and len(dims) == 2:
            opts.append("map-asScalar")
        if len(dims) >= 2 and any(dims[1] % k == 0 for k in range(2, dims[1])):
            opts.append("map-split")
        if not vec and len(dims) == 1 and any(dims[0] % w == 0 for w in (2, 4)):
            opts.append("asVector")
        if not opts:
            break
        op = draw(st.sampled_from(opts))
        steps.append(f"write-side {op}")
        if op == "join":
            expr, ref, dims = L.join(expr), np_join(ref, 0), (dims[0] * dims[1],) + dims[2:]
        elif op == "transpose":
            expr, ref, dims = L.transpose(expr), np_transpose(ref, 0), (dims[1], dims[0]) + dims[2:]
        elif op == "split":
            k = draw(st.sampled_from([k for k in range(2, dims[0]) if dims[0] % k == 0]))
            expr, ref, dims = L.split(k, expr), np_split(ref, 0, k), (dims[0] // k, k) + dims[1:]
        elif op == "asScalar":
            expr, ref, dims, vec = L.asScalar(expr), np_as_scalar(ref), dims[:-1] + (dims[-1] * vec,), 0
        elif op == "map-transpose":
            expr, ref, dims = L.map(L.transpose, expr), np_transpose(ref, 1), (dims[0], dims[2], dims[1]) + dims[3:]
        elif op == "map-join":
            expr, ref, dims = L.map(L.join, expr), np_join(ref, 1), (dims[0], dims[1] * dims[2]) + dims[3:]
        elif op == "map-asScalar":
            expr, ref, dims, vec = L.map(L.asScalar, expr), np_as_scalar(ref), (dims[0], dims[1] * vec), 0
        elif op == "map-split":
            k = draw(st.sampled_from([k for k in range(2, dims[1]) if dims[1] % k == 0]))
            expr = L.map(lambda r: L.split(k, r), expr)
            ref, dims = np_split(ref, 1, k), (dims[0], dims[1] // k, k) + dims[2:]
        elif op == "asVector":
            w = draw(st.sampled_from([w for w in (2, 4) if dims[0] % w == 0]))
            expr, ref, dims, vec = L.asVector(w, expr), np_as_vector(ref, 0, w), (dims[0] // w,), w
    return expr, ref


@st.composite
def layout_cases(draw, elem="int", lowered=True, max_steps=4, vector_roundtrip=False):
    """A random layout chain and its copy.  Read-side asScalar (of vectors made by asVector from a view) is
    generated only with ``vector_roundtrip``, which ends every chain with ``asScalar(... asVector(w, ...))``
    at the innermost level, so that this pattern has a property test of its own."""
    b = Builder(draw, elem, read_as_scalar=not lowered)
    ndims = draw(st.integers(1, 3))
    budget = {1: 24, 2: 8, 3: 4}[ndims]
    dims = tuple(draw(st.integers(1, budget)) for _ in range(ndims - 1))
    dims += (draw(st.one_of(st.integers(1, budget), st.sampled_from([4, 8, 16]))),)  # room for vectors
    v = b.new_input(dims)
    for _ in range(draw(st.integers(0 if vector_roundtrip else 1, max_steps))):
        v = b.step(v)
        if v.ref is not None and v.ref.size > 4096:  # keep kernels and interpreter runs small
            break
    if vector_roundtrip:
        if v.comps is not None:  # project a zipped value first
            k = draw(st.integers(0, len(v.comps) - 1))
            v = replace(v.comps[k], expr=at_depth(len(v.dims), lambda p: L.get(p, k), v.expr))
            b.steps.append(f"get {k}")
        if v.vec:
            v = Val(at_depth(len(v.dims) - 1, L.asScalar, v.expr), np_as_scalar(v.ref), v.dims[:-1] + (v.dims[-1] * v.vec,))
        d, n = len(v.dims) - 1, v.dims[-1]
        widths = [w for w in (2, 3, 4, 8, 16) if n % w == 0]
        assume(widths)
        w = draw(st.sampled_from(widths))
        expr = at_depth(d, lambda e: L.asScalar(L.asVector(w, e)), v.expr)
        b.steps.append(f"asScalar(asVector({w})) at depth {d}")
        v = Val(expr, np_as_scalar(np_as_vector(v.ref, d, w)), v.dims)
    expr, ref, out_dims, vec, style = consumer(draw, v, lowered)
    b.steps.append(f"copy: {style}")
    if lowered:
        expr, ref = write_side(draw, expr, ref, out_dims, vec, b.steps)
    program = L.Program(
        f"layout_{elem}",
        tuple(L.Var(n) for n, _, _ in b.inputs),
        tuple(t for _, t, _ in b.inputs),
        expr,
    )
    return Case(program, tuple(a for _, _, a in b.inputs), dict(b.sizes), ref, b.steps)


# --------------------------------------------------------------------------------------------------
# The properties


def _interpret(case: Case):
    return evaluate(case.program, *case.inputs, sizes=case.sizes)


@settings(max_examples=150)
@given(layout_cases(elem="int", lowered=False, max_steps=5))
def test_interpreter_matches_numpy_int(case):
    typecheck(case.program)  # well-typed with symbolic sizes
    got = _interpret(case)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, case.expected)


@settings(max_examples=60)
@given(layout_cases(elem="float", lowered=True, max_steps=5))
def test_interpreter_matches_numpy_float(case):
    got = _interpret(case)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, case.expected)


def _run_kernel(case: Case):
    kernel = case.program.compile(case.sizes)
    out = kernel.run(*case.inputs).output
    return kernel, out


@settings(max_examples=30)
@given(layout_cases(elem="int"))
def test_kernel_matches_interpreter_int(case):
    expected = _interpret(case)
    kernel, out = _run_kernel(case)
    assert out.shape == expected.shape, kernel.source
    np.testing.assert_array_equal(out, expected, err_msg=kernel.source)
    assert {b.role for b in kernel.plan.buffers} <= {"input", "output"}, kernel.plan.table()


@settings(max_examples=20)
@given(layout_cases(elem="float"))
def test_kernel_matches_interpreter_float(case):
    expected = _interpret(case)
    kernel, out = _run_kernel(case)
    assert out.shape == expected.shape, kernel.source
    # a copy moves bits: no tolerance is needed, even for floats and float padding literals
    np.testing.assert_array_equal(out, expected, err_msg=kernel.source)


@settings(max_examples=10)
@given(layout_cases(elem="int", vector_roundtrip=True, max_steps=2))
def test_kernel_vector_casts_over_views(case):
    """``asScalar(asVector(w, v))`` over a random view v reads the same scalars as v (the vectors are views,
    so asScalar must find each lane in them)."""
    expected = _interpret(case)
    kernel, out = _run_kernel(case)
    np.testing.assert_array_equal(out, expected, err_msg=kernel.source)


# --------------------------------------------------------------------------------------------------
# Targeted compositions (each one kernel): the paper's helpers and vector casts over views.

H, W = L.sizes("H W")


def _targeted():
    cases = {}
    # slide2D over pad2D (the convolution's input side), copied by work-groups and local items
    cases["pad2D_slide2D_wrg_lcl"] = (
        L.make_program(
            "p2s2",
            [("x", Array(Float, H, W))],
            lambda x: L.mapWrg(0, lambda row: L.mapLcl(0, lambda win: L.toGlobal(L.mapSeq(L.id, L.join(win))), row),
                               L.slide2D((3, 2), (2, 1), L.pad2D(1, 2, 2, -1, -0.5, x))),
        ),
        {"H": 7, "W": 6},
        lambda x: np_slide2d(_np_pad2d(x, 1, 2, 2, -1, -0.5), 0, (3, 2), (2, 1)).reshape(-1),
    )
    # the paper's coalescing: reorder(stride(n/omega)) then split(omega), per work-item chunks
    cases["stride_split_glb"] = (
        L.make_program(
            "coalesce",
            [("x", Array(Int, 4, 3, 2))],
            lambda x: L.mapGlb(0, lambda chunk: L.mapSeq(L.id, chunk),
                               L.split(4, L.reorder(L.stride(6), L.join(L.join(x))))),
        ),
        {},
        lambda x: np_split(np_stride(x.reshape(-1), 0, 6), 0, 4),
    )
    # vectors read through a non-contiguous view and turned back into scalars
    cases["asScalar_asVector_join"] = (
        L.make_program(
            "vec_join",
            [("x", Array(Int, 3, 8))],
            lambda x: L.mapGlb(0, L.id, L.asScalar(L.asVector(4, L.join(x)))),
        ),
        {},
        lambda x: x.reshape(-1),
    )
    cases["asScalar_asVector_pad"] = (
        L.make_program(
            "vec_pad",
            [("x", Array(Int, 6))],
            lambda x: L.mapGlb(0, L.id, L.asScalar(L.asVector(2, L.pad(1, 1, -7, x)))),
        ),
        {},
        lambda x: np.concatenate([[-7], x, [-7]]),
    )
    # float3 vectors: 3-lane loads and stores
    cases["float3_vectors"] = (
        L.make_program(
            "f3",
            [("x", Array(Float, 4, 6))],
            lambda x: L.mapGlb(0, lambda r: L.mapSeq(L.id, L.asVector(3, r)), L.reorder(L.reverse, x)),
        ),
        {},
        lambda x: x[::-1].reshape(4, 2, 3),
    )
    # zip of three arrays, tuple access inside a 2D global copy, padded vectors
    cases["zip3_get_padvec"] = (
        L.make_program(
            "z3",
            [("a", Array(Float, 5, 8)), ("b", Array(Float, 5))],
            lambda a, b: L.mapGlb(1, lambda p: L.mapGlb(0, L.id, L.pad(1, 0, 2.5, L.asVector(4, p[0]))),
                                  L.zip(a, b, L.reorder(L.reverse, b))),
        ),
        {},
        lambda a, b: np_pad(a.reshape(5, 2, 4), 1, 1, 0, 2.5),
    )
    # reverse over a join: the index n-1-i meets the join's modulo (C's % truncates negative dividends)
    cases["reverse_join"] = (
        L.make_program("rev_join", [("x", Array(Int, 2, 3))], lambda x: L.mapGlb(0, L.id, L.reorder(L.reverse, L.join(x)))),
        {},
        lambda x: x.reshape(-1)[::-1],
    )
    cases["reverse_stride_rows"] = (
        L.make_program(
            "rev_stride",
            [("x", Array(Float, 4, 5))],
            lambda x: L.mapGlb(1, lambda r: L.mapGlb(0, L.id, r), L.reorder(L.reverse, L.reorder(L.stride(2), x))),
        ),
        {},
        lambda x: np_reverse(np_stride(x, 0, 2), 0),
    )
    # a map of a layout function on the write side: each row's result is stored transposed
    cases["write_side_map_transpose"] = (
        L.make_program(
            "wmt",
            [("x", Array(Int, 3, 4, 2))],
            lambda x: L.map(L.transpose, L.mapGlb(0, lambda m: L.mapSeq(lambda r: L.mapSeq(L.id, r), m), x)),
        ),
        {},
        lambda x: x.transpose(0, 2, 1),
    )
    # vectors over padded vectors and back: lanes of a padded vector array
    cases["asScalar_pad_asVector"] = (
        L.make_program(
            "vec_padvec",
            [("x", Array(Float, 8))],
            lambda x: L.mapGlb(0, L.id, L.asScalar(L.pad(1, 0, 0.5, L.asVector(4, x)))),
        ),
        {},
        lambda x: np.concatenate([[0.5] * 4, x]),
    )
    return cases


def _np_pad2d(x, l, r, t, b, v):
    return np_pad(np_pad(x, 1, l, r, v), 0, t, b, v)


TARGETED = _targeted()


@pytest.mark.parametrize("name", sorted(TARGETED))
def test_targeted_composition(name):
    from conftest import on_simulator

    if name == "asScalar_pad_asVector" and on_simulator():
        pytest.skip("Oclgrind 21.10 miscompiles this kernel's chain of conditions (3, 3, 3, 3 for 0, 1, 2, 3 of "
                    "x = 0..7; PoCL and NVIDIA's driver compute it right)")
    program, sz, reference = TARGETED[name]
    rng = np.random.default_rng(7)
    inputs = []
    for t in program.param_types:
        shape = tuple(int(L.ir.types.as_size(d).subs({L.size_var(k): v for k, v in sz.items()})) for d in t.dims)
        arr = rng.permutation(int(np.prod(shape))).reshape(shape) - 10
        inputs.append(arr.astype(L.ir.types.scalar_of(t).dtype))
    expected = evaluate(program, *inputs, sizes=sz)
    np.testing.assert_array_equal(expected, np.asarray(reference(*inputs)).reshape(expected.shape))
    kernel = program.compile(sz)
    out = kernel.run(*inputs).output
    np.testing.assert_array_equal(out, expected, err_msg=kernel.source)
