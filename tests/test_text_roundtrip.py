"""The text form: print/parse round trips, hand-written text, and parse errors.

Properties (hypothesis, random well-typed programs over symbolic sizes):

- ``parse_program(str(p)) == p`` (structural, alpha-equivalent equality), the same hash, and the text is a
  fixed point: ``str(parse_program(str(p))) == str(p)``;
- the one-line form of the body parses back with ``parse_expr``;
- types print and parse back (``parse_type``), sizes with arithmetic included.

The generator mixes high-level and OpenCL-level primitives (map, mapSeq/mapSeqUnroll, mapGlb/mapWrg/mapLcl in
dimensions 0-2, reduce, reduceSeq/reduceSeqUnroll, zip, get, split, join, slide/slideStrict, pad with negative
amounts, transpose, reorder by stride and reverse, asVector/asScalar, let, toGlobal/toLocal/toPrivate, the 2D
helpers), lambdas whose parameter names collide with keywords, primitives, user functions and size names,
user functions (built-ins, a registered one, vectorize, dot), and literals (negative ints and floats, booleans,
array literals).  It stays clear of the known defects of the text form, which have targeted tests of their
own below (float literals in exponent notation with more than 9 significant digits, non-finite floats,
integer-valued float literals, vector literals, sizes with powers such as ``N*N``, calls of lambdas), so that
each defect is reported on its own instead of one masking the others.
"""

import re

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy as L
from liftpy import Array, Bool, Float, Float4, Int, ParseError, parse_expr, parse_program, parse_type, typecheck
from liftpy.ir.expr import Call, Lambda, Literal, Var
from liftpy.ir.printer import show
from liftpy.ir.types import ArrayType, Half, Half4, TupleType, VectorType

N, M, K, S = L.sizes("N M K S")

# A user function known by name to the parser (registered), used by the generator.
RT_MAD = L.register(
    L.userfun("rt_mad", [("a", Float), ("b", Float), ("c", Float)], Float, "return a * b + c;", lambda a, b, c: a * b + c)
)


def assert_round_trip(p: L.Program) -> str:
    text = str(p)
    q = parse_program(text)
    assert q == p, f"round trip changed the program:\n{text}\n--- parsed back as ---\n{q}"
    assert hash(q) == hash(p)
    assert str(q) == text, "the text is not a fixed point of print . parse"
    body = show(p.body)  # one-line form
    assert "\n" not in body
    assert parse_expr(body, [v.name for v in p.params]) == p.body
    return text


# --------------------------------------------------------------------------------------------------
# A generator of random well-typed programs


def _float_literal_is_printable(v: float) -> bool:
    """Floats whose repr uses no exponent, or an exponent with at most 9 significant digits (see
    test_float_literal_precision_round_trip for the others)."""
    text = repr(v)
    if "e" not in text:
        return True
    return len(re.sub(r"[^0-9]", "", text.split("e")[0]).lstrip("0")) <= 9


FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(_float_literal_is_printable),
    st.sampled_from([0.0, -0.0, 1.5, -2.25, 0.1, 1e-10, -3.5e-7, 2.5e20, 123456.789]),
)
INTS = st.one_of(st.integers(-(2**31), 2**31 - 1), st.integers(-5, 5))
HINTS = ["x", "acc", "row", "p", "v", "x1", "elem_2", "fun", "value", "true", "stride", "add", "transpose",
         "mapSeq", "N", "S", "map2D", "_", "id"]
SIZE_ARGS = [2, 3, 4, S, N, (N / 2), (S + 1), (K - 1), (2 * N)]


def _reverse(xs):
    return L.reorder(L.reverse, xs)


def _paddable(t) -> bool:
    return L.ir.types.scalar_of(t) is not None and not L.ir.types.contains_tuple(t)


class Gen:
    def __init__(self, draw):
        self.draw = draw

    def var(self, hint=None) -> Var:
        return Var(L.ir.expr.fresh_name(hint or self.draw(st.sampled_from(HINTS))))

    def type_of(self, e, env):
        return typecheck(e, env).type

    # -- scalars ---------------------------------------------------------------------------------
    def literal(self, t):
        if t == Float:
            return Literal(float(self.draw(FLOATS)), Float)
        if t == Half:  # (a value half holds exactly, as a program over half arrays would write)
            return Literal(float(np.float16(self.draw(st.floats(-60000, 60000, width=16)))), Half)
        if t == Int:
            return Literal(int(self.draw(INTS)), Int)
        if t == Bool:
            return Literal(self.draw(st.booleans()), Bool)
        raise AssertionError(t)

    @staticmethod
    def sources(t, env):
        """Variables of type t, and (variable, component) pairs of tuple variables with a t component."""
        leaves = sorted(n for n, tt in env.items() if tt == t)
        comps = sorted((n, i) for n, tt in env.items() if isinstance(tt, TupleType) for i, c in enumerate(tt.elems) if c == t)
        return leaves, comps

    def available(self, t, env) -> bool:
        return t in (Float, Int, Bool, Half) or any(self.sources(t, env))

    def scalar(self, t, env, depth):
        """An expression of scalar or vector type t (Float, Int, Bool, or Float4 when one is in scope)."""
        leaves, comps = self.sources(t, env)
        choices = []
        if leaves:
            choices += ["leaf", "leaf"]
        if comps:
            choices += ["get", "get"]
        if t in (Float, Int, Bool, Half):
            choices.append("literal")
        if depth > 0 and t in (Float, Int, Float4, Half):
            choices += ["binop", "binop", "madd", "let"]
        if depth > 0 and t == Float:
            choices += ["relu", "rt_mad"] + (["dot"] if self.available(Float4, env) else [])
        if depth > 0 and t == Float4:
            choices += ["vec_mad", "vec_relu"]
        kind = self.draw(st.sampled_from(choices))
        if kind == "leaf":
            return Var(self.draw(st.sampled_from(leaves)))
        if kind == "get":
            n, i = self.draw(st.sampled_from(comps))
            return L.get(Var(n), i)
        if kind == "literal":
            return self.literal(t)
        sub = lambda tt=t: self.scalar(tt, env, depth - 1)  # noqa: E731
        if kind == "binop":
            f = self.draw(st.sampled_from(["add", "sub", "mult", "max", "min"]))
            return L.BUILTINS[f](sub(), sub())
        if kind == "madd":
            return L.multAndSumUp(sub(), sub(), sub())
        if kind == "relu":
            return L.relu(sub())
        if kind == "rt_mad":
            return RT_MAD(sub(), sub(), sub())
        if kind == "dot":
            return L.dot(sub(Float4), sub(Float4))
        if kind == "vec_mad":
            return L.vectorize(4, RT_MAD)(sub(), sub(), sub())
        if kind == "vec_relu":
            return L.vectorize(4, L.relu)(sub())
        if kind == "let":
            inner_t = self.draw(st.sampled_from([Float, Int]))
            value = self.scalar(inner_t, env, depth - 1)
            v = self.var()
            body = self.scalar(t, {**env, v.name: inner_t}, depth - 1)
            return L.let(Lambda((v,), body), value)
        raise AssertionError(kind)

    # -- arrays ----------------------------------------------------------------------------------
    def array(self, env, depth):
        """An array-typed expression built from an array variable of env by 1-3 random steps."""
        names = sorted(n for n, t in env.items() if isinstance(t, ArrayType))
        e = Var(self.draw(st.sampled_from(names)))
        for _ in range(self.draw(st.integers(2, 5))):
            e = self.step(e, env, depth)
        return e

    def function(self, elem, env, depth):
        """A one-parameter function on ``elem``: a lambda, a user function or a layout function."""
        if isinstance(elem, ArrayType):
            if self.draw(st.integers(0, 3)) == 0:
                named = [L.toPrivate, _reverse] + ([L.transpose, L.join] if isinstance(elem.elem, ArrayType) else [])
                return self.draw(st.sampled_from(named))
            p = self.var()
            body = p
            for _ in range(self.draw(st.integers(1, 2))):
                body = self.step(body, {**env, p.name: elem}, depth)
            return Lambda((p,), body)
        if elem == Float and self.draw(st.integers(0, 3)) == 0:
            return self.draw(st.sampled_from([L.relu, L.BUILTINS["id"]]))
        p = self.var()
        inner = {**env, p.name: elem}
        if isinstance(elem, TupleType):
            i = self.draw(st.integers(0, len(elem.elems) - 1))
            comp = elem.elems[i]
            if isinstance(comp, ArrayType):
                body = L.get(p, i)
                for _ in range(self.draw(st.integers(0, 1))):
                    body = self.step(body, inner, depth)
                return Lambda((p,), body)
            return Lambda((p,), self.scalar(comp, inner, depth))
        out_t = self.draw(st.sampled_from([elem, Float] if elem in (Float, Int) else [elem]))
        return Lambda((p,), self.scalar(out_t, inner, depth))

    def step(self, e, env, depth):
        """e with one random operation applied; a choice that sizes make definitely ill-typed (``split(N)``
        of an array of length ``N/2``) is drawn again."""
        for _ in range(4):
            candidate = self._step(e, env, depth)
            try:
                self.type_of(candidate, env)
                return candidate
            except (L.LiftTypeError, RecursionError):  # RecursionError: sympy on Mod(N - 2, S + 1), see test_errors
                continue
        return L.toPrivate(e)

    def _step(self, e, env, depth):
        t = self.type_of(e, env)
        elem = t.elem
        ops = ["mem", "split", "slide", "reorder", "zip"]
        if depth > 0:
            ops += ["map"] * 4 + ["let"]
            if elem in (Float, Int, Half) or (elem == Float4 and self.available(Float4, env)):
                ops += ["reduce"] * 3
        if _paddable(t):
            ops.append("pad")
        if elem in (Float, Int):
            ops.append("asVector")
        if elem == Float4:
            ops.append("asScalar")
        if isinstance(elem, ArrayType):
            ops += ["join", "transpose"]
            if depth > 0:
                ops.append("map2D")
            if elem.elem in (Float, Int):
                ops += ["slide2D", "pad2D"]
        op = self.draw(st.sampled_from(ops))
        size = lambda: self.draw(st.sampled_from(SIZE_ARGS))  # noqa: E731

        if op == "map":
            kind = self.draw(st.sampled_from(["map", "mapSeq", "mapSeqUnroll", "mapGlb", "mapWrg", "mapLcl"]))
            f = self.function(elem, env, depth - 1)
            if kind in ("mapGlb", "mapWrg", "mapLcl"):
                return getattr(L, kind)(self.draw(st.integers(0, 2)), f, e)
            return getattr(L, kind)(f, e)
        if op == "reduce":
            kind = self.draw(st.sampled_from(["reduce", "reduceSeq", "reduceSeqUnroll"]))
            acc, x = self.var("acc"), self.var()
            body = self.scalar(elem, {**env, acc.name: elem, x.name: elem}, depth - 1)
            if elem == Float4:
                init = self.scalar(Float4, env, 0)
            elif self.draw(st.booleans()):
                init = self.literal(elem)
            else:
                init = L.toPrivate(L.id(self.literal(elem)))
            return getattr(L, kind)(Lambda((acc, x), body), init, e)
        if op == "mem":
            return self.draw(st.sampled_from([L.toGlobal, L.toLocal, L.toPrivate]))(e)
        if op == "let":
            v = self.var()
            body = self.step(v, {**env, v.name: t}, depth - 1)
            return L.let(Lambda((v,), body), e)
        if op == "split":
            return L.split(size(), e)
        if op == "join":
            return L.join(e)
        if op == "slide":
            return self.draw(st.sampled_from([L.slide, L.slideStrict]))(size(), size(), e)
        if op == "pad":
            value = self.literal(L.ir.types.scalar_of(t)).value
            left = self.draw(st.sampled_from([-1, 0, 2, K - 1, N]))
            right = self.draw(st.sampled_from([-2, 1, 3, S]))
            return L.pad(left, right, value, e)
        if op == "transpose":
            return L.transpose(e)
        if op == "reorder":
            return L.reorder(self.draw(st.sampled_from([L.reverse, L.stride(2), L.stride(S), L.stride(N / 4)])), e)
        if op == "asVector":
            return L.asVector(self.draw(st.sampled_from([2, 4, 16])), e)
        if op == "asScalar":
            return L.asScalar(e)
        if op == "zip":
            partner = self.draw(st.sampled_from(["self", "reverse", "literal", "three"]))
            if partner == "literal" and elem in (Float, Int, Bool):
                return L.zip(e, Literal(self.literal(elem).value, ArrayType(elem, t.size)))
            if partner == "three":
                return L.zip(e, e, _reverse(e))
            return L.zip(e, _reverse(e) if partner == "reverse" else e)
        if op == "map2D":
            return L.map2D(self.function(elem.elem, env, depth - 1), e)
        if op == "slide2D":
            return L.slide2D((size(), 3), (1, size()), e)
        if op == "pad2D":
            return L.pad2D(1, -1, 0, 2, self.literal(elem.elem).value, e)
        raise AssertionError(op)


INPUTS = [
    ("x", Array(Float, N)),
    ("w", Array(Float, M, N)),
    ("k", Array(Int, 2 * N)),
    ("v", Array(Float4, N)),
    ("img", Array(Float, M, N + 2)),
    ("tri", Array(Int, 3, N, K)),
]
# Half inputs, for programs of their own: added to INPUTS they would change the programs every other user of
# ``programs()`` draws (test_codegen_fastpaths), and with them which defects those tests happen upon.
HALF_INPUTS = [("hx", Array(Half, N)), ("hv", Array(Half4, M))]


@st.composite
def programs(draw, inputs=INPUTS):
    g = Gen(draw)
    chosen = draw(st.lists(st.sampled_from(inputs), min_size=1, max_size=3, unique_by=lambda p: p[0]))
    env = dict(chosen)
    body = g.array(env, depth=draw(st.integers(2, 3)))
    return L.Program("rt", tuple(Var(n) for n, _ in chosen), tuple(t for _, t in chosen), body)


@settings(max_examples=200)
@given(programs())
def test_random_programs_round_trip(p):
    typecheck(p)  # well-typed (requirements over the symbolic sizes may remain open)
    assert_round_trip(p)


@settings(max_examples=100)
@given(programs(inputs=HALF_INPUTS + INPUTS[:2]))
def test_random_programs_with_half_inputs_round_trip(p):
    typecheck(p)
    assert_round_trip(p)


@settings(max_examples=150)
@given(programs())
def test_the_printers_least_length_is_at_most_every_one_line_text(p):
    """The printer refuses a one-line form by ``_shortest`` before rendering it: a bound above the real length
    of any subterm would break over lines a call that fits on one (the text would change, not break), so it
    is checked against every subterm's one-line text (its bound variables get fresh names, its free ones
    keep theirs: both at least as long as the hint the bound counts)."""
    from liftpy.ir.expr import subterms
    from liftpy.ir.printer import Printer

    for node in subterms(p.body):
        assert Printer()._shortest(node) <= len(Printer().flat(node)), show(node)


def _types(depth=2):
    leaf = st.sampled_from([Float, Int, Bool, Float4, VectorType(Float, 16), VectorType(Float, S), VectorType(Int, 2),
                            Half, Half4, VectorType(Half, 16), VectorType(Half, S)])
    sizes = st.sampled_from([1, 7, N, M, N + 2, 2 * N, N / 4, N * M, N - K + 1, sympy.floor((N - 3) / 2) + 1, sympy.Mod(N, 4)])
    if depth == 0:
        return leaf
    inner = _types(depth - 1)
    return st.one_of(
        leaf,
        st.builds(ArrayType, inner, sizes),
        st.builds(lambda *ts: TupleType(tuple(ts)), inner, inner),
    )


@settings(max_examples=150)
@given(_types(3))
def test_types_round_trip(t):
    assert parse_type(str(t)) == t
    assert str(parse_type(str(t))) == str(t)


# --------------------------------------------------------------------------------------------------
# Targeted programs


H, W = L.sizes("H W")


def _stencil():
    @L.program
    def stencil(weights: Array(Float, 3, 3), data: Array(Float, H, W)):
        return L.mapWrg(0, lambda row: L.join(L.mapLcl(0, lambda nbh:
            L.toGlobal(L.mapSeq(L.id, L.reduceSeq(lambda acc, p: L.multAndSumUp(acc, p[0], p[1]),
                                                  L.toPrivate(L.id(0.0)), L.zip(L.join(nbh), L.join(weights))))),
            row)), L.slide2D(3, 1, data))

    return stencil


def _conv_high_level():
    C, KH, KW, NK, IH, IW = L.sizes("C KH KW NK IH IW")

    @L.program
    def conv(weights: Array(Float, NK, KH, KW, C), biases: Array(Float, NK), data: Array(Float, IH, IW, C)):
        padded = L.pad2D(1, 1, 2, 0, 0.0, data)
        windows = L.slide2D((KH, KW), (2, 1), padded)
        return L.map2D(lambda window: L.map(lambda wb: L.reduce(lambda acc, xw: L.multAndSumUp(acc, xw[0], xw[1]), wb[1],
                                                                  L.zip(L.join(L.join(window)), L.join(L.join(wb[0])))),
                                            L.zip(weights, biases)), windows)

    return conv


def _matmul_vectorized():
    @L.program
    def matmul(A: Array(Float, M, K), B: Array(Float, K, N)):
        return L.mapGlb(1, lambda row: L.mapGlb(0, lambda col: L.toGlobal(L.mapSeqUnroll(L.id, L.reduceSeqUnroll(
            lambda acc, p: L.add(acc, L.dot(p[0], p[1])), -0.0, L.zip(L.asVector(4, row), L.asVector(4, col))))),
            L.transpose(B)), A)

    return matmul


def _misc_literals():
    @L.program
    def lits(x: Array(Int, N), y: Array(Float, N + 1)):
        return L.zip(
            L.mapSeq(lambda a: L.add(a, -2147483648), L.pad(-1, 1, -7, L.reorder(L.stride(N / 4), x))),
            L.mapSeq(lambda a: L.sub(a, 3), L.lit(-3, Array(Int, N))),
            L.mapSeq(L.id, L.lit(-1.5e-3, Array(Float, N))),
            L.mapSeq(L.id, L.lit(True, Array(Bool, N))),
            L.mapSeq(lambda b: L.mult(b, -2.5), L.pad(-1, 0, 1.0, y)),
        )

    return lits


def _sizes_arith():
    @L.program
    def windows(y: Array(Float, 2 * N + 1), z: Array(Float, M, K + 2)):
        return L.zip(
            L.split((N + 1) / 2, L.join(L.slideStrict(N + 1, N, y))),
            L.split(2, L.join(L.map(L.asScalar, L.map(lambda r: L.asVector(2, r), L.slide(2, 2, L.join(z)))))),
        )

    return windows


TARGETED = {
    "stencil (README)": _stencil,
    "convolution (paper Listing 3)": _conv_high_level,
    "vectorized matmul with dot": _matmul_vectorized,
    "negative and array literals": _misc_literals,
    "sizes with arithmetic": _sizes_arith,
}


@pytest.mark.parametrize("name", sorted(TARGETED))
def test_targeted_round_trip(name):
    p = TARGETED[name]()
    typecheck(p)
    text = assert_round_trip(p)
    assert text.startswith(f"def {p.name}(")


def test_long_program_prints_on_several_lines_and_round_trips():
    p = _conv_high_level()
    text = str(p)
    assert len(text.splitlines()) > 3 and all(len(line) <= 110 for line in text.splitlines())
    assert_round_trip(p)


def test_hand_written_text_parses_to_the_dsl_program():
    text = """
    // a comment, then a program using the 2D helpers and a lambda with a keyword-like hint
    def blur(img: [[float]W]H) =
      mapGlb(1, fun(row) => mapGlb(0, fun(win) =>
          toGlobal(mapSeq(id, reduceSeq(fun(acc, v) => add(acc, v), 0.0f, join(win)))), row),
        slide2D(3, 1, pad2D(1, 1, 1, 1, -0.5f, img)))
    """
    parsed = parse_program(text)

    @L.program
    def blur(img: Array(Float, H, W)):
        return L.mapGlb(1, lambda row: L.mapGlb(0, lambda win: L.toGlobal(L.mapSeq(L.id, L.reduceSeq(
            lambda acc, v: L.add(acc, v), 0.0, L.join(win)))), row), L.slide2D(3, 1, L.pad2D(1, 1, 1, 1, -0.5, img)))

    assert parsed == blur
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_allclose(L.evaluate(parsed, x), L.evaluate(blur, x), rtol=1e-6)


def test_text_userfun_definition_round_trips_and_evaluates():
    text = (
        'userfun rt_clamp(a: float, lo: float, hi: float): float = "fmin(fmax(a, lo), hi)"\n'
        "def clamp(x: [float]N) = mapGlb(0, fun(a) => rt_clamp(a, -1.0f, 2.5f), x)\n"
    )
    p = parse_program(text)
    assert_round_trip(p)
    x = np.array([-3.0, -1.0, 0.5, 2.5, 9.0], dtype=np.float32)
    np.testing.assert_array_equal(L.evaluate(p, x), np.clip(x, -1.0, 2.5))


def test_printing_does_not_depend_on_the_names_used_to_build():
    """Alpha-equivalent programs are equal and hash alike; the text depends only on the name hints, not on
    the numbers that make names unique in the building process."""

    def build(h1, h2, h3):
        a, acc, y = Var(h1), Var(h2), Var(h3)
        red = L.reduceSeq(Lambda((acc, y), L.multAndSumUp(acc, y, y)), L.get(a, 0), _reverse(Var("x")))
        body = L.mapGlb(0, Lambda((a,), L.toGlobal(L.mapSeq(L.id, red))), L.zip(Var("x"), Var("x")))
        return L.Program("f", (Var("x"),), (Array(Float, N),), body)

    p, q, r = build("a_1", "acc_2", "y_3"), build("a_71", "acc_9", "y_12"), build("zz_9", "s_4", "x")
    assert p == q == r and hash(p) == hash(q) == hash(r)
    assert str(p) == str(q)
    assert "fun(a) =>" in str(p) and "fun(acc, y) =>" in str(p)
    assert "fun(x1) =>" not in str(p) and "fun(s, x1) =>" in str(r)  # the input x is not shadowed
    for prog in (p, r):
        assert_round_trip(prog)


# --------------------------------------------------------------------------------------------------
# Known defects of the text form: each is a separate test so each is reported on its own.


def _one(body, t=Array(Float, N), name="x"):
    return L.Program("f", (Var(name),), (t,), body(Var(name)))


def test_float_literal_precision_round_trip():
    """A float literal in exponent notation must keep every digit (repr), not 9 significant digits."""
    for v in (1.2345678901234e-07, 1.2345678901234e22, float(np.float32(1e-38)) / 3):
        p = _one(lambda x: L.mapGlb(0, lambda a: L.add(a, v), x))
        assert_round_trip(p)


def test_non_finite_float_literal_round_trip():
    for v in (float("inf"), float("-inf")):
        p = _one(lambda x: L.pad(1, 1, v, x))
        assert_round_trip(p)


def test_integer_valued_float_literal_keeps_its_type():
    """``lit(0, Float)`` is a float literal; printing it as ``0`` makes it an int literal."""
    p = _one(lambda x: L.mapGlb(0, lambda a: L.add(a, L.lit(0, Float)), x))
    typecheck(p)
    assert_round_trip(p)


def test_vector_literal_round_trip():
    """A float4 literal (e.g. the accumulator of a vectorized reduction) keeps its vector type."""
    p = _one(lambda x: L.toGlobal(L.mapSeq(L.id, L.reduceSeq(L.vectorize(4, L.add), Literal(0.0, Float4), x))),
             t=Array(Float4, N))
    typecheck(p)
    assert_round_trip(p)


def test_power_sizes_round_trip():
    """``N*N`` prints as sympy's ``N**2``, which the size grammar must read back."""
    p = _one(lambda x: L.split(N, x), t=Array(Float, N * N))
    assert_round_trip(p)


def test_applied_lambda_round_trip():
    """A call whose callee is a lambda (what a beta-expansion rewrite produces) is an IR node the text form
    must print in a form the grammar accepts."""
    q = Var("q")
    p = _one(lambda x: L.mapGlb(0, Lambda((Var("a"),), Call(Lambda((q,), L.add(q, 1.0)), (Var("a"),))), x))
    typecheck(p)
    assert_round_trip(p)


# --------------------------------------------------------------------------------------------------
# Parse errors: ParseError with the line and column of the problem


def _err(text) -> str:
    with pytest.raises(ParseError) as info:
        parse_program(text)
    return str(info.value)


@pytest.mark.parametrize(
    "text, line, column, words",  # the message names the position; syntax and name errors also show the line
    [
        ("def f(x: [float]N) =\n  mapGlb(0, fun(v) => add(v, v), x", 2, 34, ["syntax error"]),
        ("def f(x: [float]N) =\n  mapGlb(0, fun(v) => add(v v), x)", 2, 29, ["syntax error"]),
        ("def f(x: [float]N) =\n  x $ x", 2, 5, ["syntax error"]),
        ("def f(x: [float]N) =\n  mapGlb(0, fun(v) => frob(v), x)", 2, 23, ["unknown function 'frob'"]),
        ("def f(x: [float]N) =\n  mapGlb(0, fun(v) => add(v, w), x)", 2, 30, ["unknown name 'w'"]),
        ("def f(x: [flot]N) = x", 1, 11, ["unknown type 'flot'"]),
        ("def f(x: [float]N) =\n  reduceSeq(fun(a) => a, 0.0f, x)", 2, 13, ["2 parameter"]),
        ("def f(x: [float]N) =\n  map(fun(p) => p.foo, x)", 2, 17, ["._0"]),
        ("def f(x: [float]N) =\n  zip(fun(a) => a, x)", 2, 7, ["function is not a value"]),
        ("def f(x: [float]N) =\n  mapGlb(0.5, id, x)", 2, 10, ["integer dim"]),
        ("def f(x: [float]N) =\n  reorder(strid(2), x)", 2, 11, ["stride(s) or reverse"]),
        ("def f(x: [float]N) =\n  split(x)", 2, 3, ["split", "data argument"]),
    ],
)
def test_parse_errors_name_line_and_column(text, line, column, words):
    message = _err(text)
    assert f"line {line}, column {column}" in message, message
    for w in words:
        assert w in message, message
    if "type" not in words[0]:  # the offending line is shown with a caret under the column
        shown = text.splitlines()[line - 1].strip()
        assert shown in message, message
        caret_line = message.splitlines()[-1]
        assert caret_line.rstrip().endswith("^")


def test_parse_error_for_empty_text():
    assert "no program" in _err("// nothing but a comment\n")


def test_invalid_vector_width_in_text_is_a_parse_error():
    """``float<5>`` must be reported as a ParseError with its position, like ``float5`` is."""
    assert "line 1" in _err("def f(x: [float5]N) = x")
    assert "line 1" in _err("def f(x: [float<5>]N) = x")


def test_bad_userfun_expression_is_a_parse_error():
    """A syntax error in a text user function's expression is reported as a ParseError, not a raw lark
    VisitError wrapping Python's SyntaxError."""
    message = _err('userfun rt_bad(a: float): float = "a +"\ndef f(x: [float]N) = map(rt_bad, x)')
    assert "rt_bad" in message and "line 1" in message


def test_ndrange_dimension_out_of_range_in_text():
    """The DSL refuses mapGlb(3, ...) (OpenCL has dimensions 0-2); the text form must refuse it too."""
    _err("def f(x: [float]N) =\n  mapGlb(3, id, x)")


@pytest.mark.parametrize("word", ["value", "fun", "true", "false", "inf", "nan"])
def test_names_the_text_form_reads_as_something_else_are_refused_or_renamed(word):
    """An input named ``true`` read back as the literal true (a different program, silently); ``value`` and
    ``fun`` did not parse.  Such inputs and sizes are refused where they are made; a bound variable is renamed."""
    from liftpy.errors import LiftTypeError
    from liftpy.ir.dsl import make_program

    n = L.size_var("N")
    with pytest.raises(LiftTypeError, match=f"input '{word}' of f"):
        make_program("f", [(word, Array(Float, n))], lambda x: L.map(L.neg, x))
    with pytest.raises(LiftTypeError, match="size_var"):
        L.size_var(word)
    lam = Lambda((Var(word),), Call(L.ir.userfun.BUILTINS["add"], (Var(word), L.lit(1.0))))
    p = make_program("f", [("x", Array(Float, n))], lambda x: L.map(lam, x))
    assert f"fun({word}_)" in show(p)
    assert parse_program(show(p)) == p


def test_a_size_name_that_is_no_identifier_is_refused():
    from liftpy.errors import LiftTypeError

    with pytest.raises(LiftTypeError, match="'2N'"):
        L.size_var("2N")  # printed as 2N, read back as 2*N


# --------------------------------------------------------------------------------------------------
# User functions: their definitions print and read back as they were (issue 55)

UF_TYPES = [Float, Int, Bool, Float4, VectorType(Int, 2), VectorType(Float, 16), TupleType((Float, Int)),
            TupleType((Float4, TupleType((Int, Float)))), "T"]
_WS = st.text(alphabet=" \t\n\r", max_size=4)
_EXPRESSIONS = ["a", "a + b", "a * b - a", "(a - b) * 2", "max(a, b) + a", "a / b"]
_uf_names = iter(range(10**9))


def _concrete(t):
    return Float4 if t == "T" else t


@st.composite
def user_functions(draw):
    """A registered user function: an OpenCL body of any characters (quotes, backslashes, letters beyond ASCII)
    with blank lines and spaces around it, or an expression with whitespace around it; vector, tuple and
    generic (T, scalar(T)) parameter and result types."""
    name = f"rt_uf{next(_uf_names)}"
    if draw(st.booleans()):
        scalar = draw(st.sampled_from([Float, Int]))
        arity = draw(st.integers(1, 2))
        names = ["a", "b"][:arity]
        text = draw(st.sampled_from([e for e in _EXPRESSIONS if arity == 2 or "b" not in e]))
        if scalar == Int:
            text = text.replace("max(a, b)", "max(a, b)").replace("2", "3")
        body = draw(_WS) + text + draw(_WS)
        f = L.userfun_from_expression(name, [(n, scalar) for n in names], scalar, body)
        return L.register(f)
    params = draw(st.lists(st.sampled_from(UF_TYPES), min_size=1, max_size=3))
    generic = "T" in params
    result = draw(st.sampled_from((["T", "scalar(T)"] if generic else []) + [Float, Float4, TupleType((Float, Int))]))
    body = draw(_WS) + draw(st.text(max_size=40)) + draw(_WS)
    numpy = lambda *args: args[0]  # noqa: E731 - semantics the interpreter is not asked for here
    f = L.userfun(name, [(f"p{k}", t) for k, t in enumerate(params)], result, body, numpy)
    return L.register(f)


@settings(max_examples=150)
@given(st.lists(user_functions(), min_size=1, max_size=3))
def test_user_function_definitions_round_trip(functions):
    """A body beginning with a newline (a triple-quoted string) printed stripped and read back as another
    function, without the numpy semantics it was registered with; now the text carries it as it is."""
    inputs, calls = [], []
    for f in functions:
        first = len(inputs)
        inputs += [(f"x{len(inputs)}", Array(_concrete(t), N)) for t in f.param_types]
        calls.append((f, first))
    params = tuple(Var(n) for n, _ in inputs)
    parts = []
    for f, first in calls:
        args = params[first:first + f.arity]
        if f.arity == 1:
            parts.append(L.map(f, args[0]))
        else:
            p = Var(L.ir.expr.fresh_name("p"))
            parts.append(L.map(Lambda((p,), Call(f, tuple(L.get(p, k) for k in range(f.arity)))), L.zip(*args)))
    body = parts[0] if len(parts) == 1 else L.zip(*parts)
    program = L.Program("uf", params, tuple(t for _, t in inputs), body)
    text = assert_round_trip(program)
    assert text.isascii()
    for f in functions:
        assert L.ir.userfun.lookup(f.name) is f  # not replaced by a function read from the text


def test_a_registered_function_with_a_triple_quoted_body_reads_back_with_its_semantics():
    square = L.register(L.userfun("rt_square", [("a", Float)], Float, """
        float s = a * a;
        return s;
    """, lambda a: a * a))
    p = _one(lambda x: L.mapGlb(0, square, x))
    text = assert_round_trip(p)
    assert 'opencl "\\n        float s = a * a;' in text
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(L.evaluate(parse_program(text), x), x * x)


def test_a_type_variable_is_no_type_of_a_program_input():
    for text in ("def f(x: [T]N) = x", "def f(x: T) = x", "def f(x: [(T, float)]N) = x"):
        assert "T stands for the type of a user function's parameter" in _err(text)
    assert "scalar(T)" in _err('userfun rt_g(a: T): vector(T) = opencl "return a;"\ndef f(x: [float]N) = x')


def test_user_functions_may_not_take_the_names_of_the_text_form():
    from liftpy.errors import LiftError

    for name in ("map", "join", "iota", "map2D", "value", "vectorize"):
        with pytest.raises(LiftError, match="word of the text form"):
            L.userfun(name, [("a", Float)], Float, "return a;", lambda a: a)
