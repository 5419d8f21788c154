"""Expression user functions (``userfun f(a: float): float = "a * a"``) are expressions: one syntax tree gives
the OpenCL C and the interpreter's numpy semantics, so a kernel computes what the interpreter does; what is
not an expression (a preprocessor line, a statement, C's ++) never reaches a kernel, and every refusal is a
one-line liftpy error naming the function."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liftpy.ir.dsl as L
from liftpy import Array, Float, Int, compile, evaluate, parse_program, program, sizes, typecheck, vectorize
from liftpy.errors import LiftError, LiftTypeError, ParseError
from liftpy.ir.types import Float4
from liftpy.ir.userfun import userfun_from_expression
from liftpy.ir.userfun_expr import MAX_DEPTH, Expression

N, = sizes("N")
PARAMS = [("a", Float), ("b", Float), ("i", Int), ("j", Int)]
DEPTH = 3


def _text_form(name: str, expression: str, params: str = "a: float", result: str = "float") -> str:
    quoted = expression.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'userfun {name}({params}): {result} = "{quoted}"\ndef p(x: [float]N) = mapGlb(0, {name}, x)\n'


# -- C and numpy from one tree ------------------------------------------------------------------------------

def _atom(draw, kind: str) -> str:
    if kind == "int":
        return draw(st.sampled_from(["i", "j", "0", "3", "7"]))
    return draw(st.sampled_from(["a", "b", "1.5f", "0.25f", "2.0", "3e-1f", ".5"]))


def _nonzero_float_atom(draw) -> str:
    return draw(st.sampled_from(["a", "b", "1.5f", "-0.75f", "4.0"]))  # the inputs a, b are kept away from zero


@st.composite
def _expr(draw, kind: str, depth: int) -> str:
    """A well-typed expression of ``kind`` whose value the kernel and numpy compute alike: no int overflow (small
    values, shallow trees), no int division by zero, comparisons and fmod of exact operands only (near a step, a
    rounding difference in the last bit would change the result)."""
    if depth == 0 or (depth < DEPTH and draw(st.integers(0, 3)) == 3):
        return _atom(draw, kind)
    sub = lambda k: draw(_expr(k, depth - 1))  # noqa: E731
    if kind == "int":
        form = draw(st.sampled_from(["div", "arith", "mod", "neg", "cmp", "minmax"]))
        if form == "arith":
            return f"({sub('int')} {draw(st.sampled_from('+-*'))} {sub('int')})"
        if form == "neg":
            operand = sub("int")
            return f"-({operand})" if draw(st.booleans()) else ("- " if operand[0] == "-" else "-") + operand
        if form in ("div", "mod"):
            return f"({sub('int')} {'/' if form == 'div' else '%'} {draw(st.sampled_from(['3', '-2', '5']))})"
        if form == "cmp":
            k1, k2 = draw(st.sampled_from(["int", "float"])), draw(st.sampled_from(["int", "float"]))
            op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
            return f"({_atom(draw, k1)} {op} {_atom(draw, k2)})"
        return f"{draw(st.sampled_from(['max', 'min']))}({sub('int')}, {sub('int')})"
    form = draw(st.sampled_from(["arith", "mixed", "div", "neg", "fn1", "fn2", "fmod"]))
    if form == "arith":
        return f"{sub('float')} {draw(st.sampled_from('+-*'))} {sub('float')}"
    if form == "mixed":
        return f"({sub('int')} {draw(st.sampled_from('+-*'))} {sub('float')})"
    if form == "div":
        return f"({sub(draw(st.sampled_from(['int', 'float'])))} / {_nonzero_float_atom(draw)})"
    if form == "neg":
        return f"-({sub('float')})"
    if form == "fn1":
        fn = draw(st.sampled_from(["sqrt", "exp", "tanh", "fabs"]))
        if fn == "sqrt":
            return f"sqrt(fabs({sub('float')}))"
        return f"exp({_atom(draw, 'float')})" if fn == "exp" else f"{fn}({sub('float')})"
    if form == "fn2":
        return f"{draw(st.sampled_from(['fmax', 'fmin', 'max', 'min']))}({sub('float')}, {sub('float')})"
    return f"fmod({_atom(draw, 'float')}, {_nonzero_float_atom(draw)})"


@st.composite
def _functions(draw):
    kind = draw(st.sampled_from(["int", "float"]))
    result = Float if kind == "float" or draw(st.booleans()) else Int
    return draw(_expr(kind, DEPTH)), result


def _over_inputs(f):
    @program(name="prop")
    def prop(a: Array(Float, N), b: Array(Float, N), i: Array(Int, N), j: Array(Int, N)):
        return L.mapGlb(0, lambda p: f(p[0], p[1], p[2], p[3]), L.zip(a, b, i, j))

    return prop


_rng = np.random.default_rng(7)
_SIGNS = np.where(_rng.random(32) < 0.5, -1, 1).astype(np.float32)
INPUTS = ((_rng.uniform(0.5, 2.0, 32).astype(np.float32) * _SIGNS), (_rng.uniform(0.5, 2.0, 32).astype(np.float32)
          * _SIGNS[::-1]), _rng.integers(-9, 10, 32).astype(np.int32), _rng.integers(-9, 10, 32).astype(np.int32))


@settings(max_examples=25, deadline=None)
@given(st.lists(_functions(), min_size=3, max_size=3), st.permutations(range(len(PARAMS))))
def test_the_kernel_computes_what_the_interpreter_does(cases, order):
    params = [PARAMS[k] for k in order]  # the first parameter's type must not decide the result's
    for text, result in cases:  # three functions an example: more forms met in few examples
        f = userfun_from_expression("prop_f", params, result, text)
        # The C is printed from the tree, and reading it gives that tree back: it says what was read.
        assert f.body == f"return {f.tree.c};"
        assert Expression("prop_f", params, result, f.tree.c).root == f.tree.root
        prog = _over_inputs(lambda *p: f(*(p[k] for k in order)))
        want = evaluate(prog, *INPUTS)
        assert want.dtype == result.dtype
        got = compile(prog, {"N": 32}).run(*INPUTS).output
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3, err_msg=f"{text} -> {f.tree.c}")


def test_c_meaning_of_int_division_remainder_comparison_and_the_declared_result():
    """Spot checks of what the property compares: / of ints truncates toward zero and % keeps the dividend's sign,
    as in C; a comparison is 1 or 0; the value becomes the declared result type, not the first argument's."""
    i = np.arange(-7, 8, dtype=np.int32)
    div = userfun_from_expression("div_t", [("i", Int)], Int, "i / 2 + i % 3 * 100")
    assert list(div.numpy(i)) == [int(v / 2) + int(np.fmod(v, 3)) * 100 for v in range(-7, 8)]
    cmp = userfun_from_expression("cmp_t", [("a", Float), ("i", Int)], Float, "(a < i) + (a == 1) * 10")
    assert list(cmp.numpy(np.float32([0.5, 1.0, 3.0]), np.int32([1, 2, 2]))) == [1.0, 11.0, 0.0]
    to_int = userfun_from_expression("trunc_t", [("a", Float)], Int, "a * 2.0f")
    assert to_int.numpy(np.float32([-1.75, 1.75])).tolist() == [-3, 3]
    assert userfun_from_expression("g_t", [("x", "T")], "T", "x / 2").numpy(np.int32([-5, 5])).tolist() == [-2, 2]


def test_an_int_argument_with_a_float_result_is_not_truncated():
    half = userfun_from_expression("half", [("a", Int)], Float, "a / 2.0f")
    prog = parse_program('userfun half(a: int): float = "a / 2.0f"\ndef halves(x: [int]N) = mapGlb(0, half, x)')
    x = np.array([1, 2, 3, -1], dtype=np.int32)
    assert evaluate(prog, x).tolist() == [0.5, 1.0, 1.5, -0.5]
    assert compile(prog, {"N": 4}).run(x).output.tolist() == [0.5, 1.0, 1.5, -0.5]
    assert half.numpy(np.int32(1)) == np.float32(0.5)


# -- what is refused ----------------------------------------------------------------------------------------

PAYLOADS = {
    "include": '#include "/etc/passwd"',
    "define": "#define a b\na",
    "pre-decrement": "--a",
    "post-increment": "a++",
    "statements": "a; b",
    "block": "{",
    "sqrt arity": "sqrt(a, a)",
    "fmod arity": "fmod(a)",
    "calls a parameter": "a(1)",
    "unknown function": "system(a)",
    "2**31": str(2**31),
    "2**63": str(2**63),
    "300 parentheses": "(" * 300 + "a" + ")" * 300,
    "5000 terms": " + ".join(["a"] * 5000),
    "conditional": "a > 0.0f ? a : 0.0f",
    "assignment": "a = 1.0f",
    "cast": "(int)a",
    "comment": "a /* b */",
    "chained comparison": "0.0f < a < 1.0f",
    "string": '"a"',
    "float remainder": "a % 2.0f",
    "octal": "010",
    "mixed max": "max(a, 0)",
}


@pytest.mark.parametrize("text", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_what_is_not_an_expression_is_refused_in_one_line_naming_the_function(text):
    with pytest.raises(LiftError) as caught:
        userfun_from_expression("payload_f", [("a", Float), ("b", Float)], Float, text)
    message = str(caught.value)
    assert "\n" not in message and "payload_f" in message and len(message) < 600
    assert "root:" not in message  # an #include's file (here /etc/passwd) is never read
    # The text form refuses it where the function is defined: no program, so no kernel, is made of it.
    with pytest.raises(ParseError) as caught:
        parse_program(_text_form("payload_t", text, "a: float, b: float"))
    assert "\n" not in str(caught.value) and "payload_t" in str(caught.value)


@pytest.mark.parametrize("text, words", [
    ("sqrt(a, a)", "sqrt takes 1"), ("fmod(a)", "fmod takes 2"), ("a(1)", "calls the parameter 'a'"),
    ("system(a)", "unknown function 'system'"), (str(2**31), "2147483648 .* outside int's range 0 to 2147483647"),
    (str(2**63), "9223372036854775808 .* outside int's range"), ("(" * 300 + "a" + ")" * 300, f"more than {MAX_DEPTH}"),
    (" + ".join(["a"] * 5000), "characters"), (" + ".join(["a"] * 150), f"more than {MAX_DEPTH} levels"),
    ("#define a b\na", "preprocessor"), ("--a", "decrement"), ("a; b", "statement"),
])
def test_refusals_say_what_is_wrong(text, words):
    with pytest.raises(LiftError, match=words):
        userfun_from_expression("said_f", [("a", Float)], Float, text)


def test_int_arguments_of_float_functions_are_refused_and_never_reach_numpy():
    """OpenCL's sqrt has no int version: refused where the types are known (at the definition, or at type
    checking for T), and the numpy semantics called on ints directly raise a liftpy error, not numpy's."""
    with pytest.raises(LiftError, match="no int version"):
        userfun_from_expression("isqrt", [("a", Int)], Float, "sqrt(a)")
    with pytest.raises(LiftError, match="sqrt takes 1"):
        userfun_from_expression("isqrt2", [("a", Int)], Float, "sqrt(a, a)")
    assert userfun_from_expression("fsqrt", [("a", Int)], Float, "sqrt(a + 0.0f)").numpy(np.int32(9)) == 3.0
    generic = userfun_from_expression("gsqrt", [("a", "T")], "T", "sqrt(a)")
    with pytest.raises(LiftError, match="no int version"):
        generic.numpy(np.arange(4, dtype=np.int32))

    @program
    def roots(x: Array(Int, N)):
        return L.mapGlb(0, generic, x)

    with pytest.raises(LiftTypeError, match="gsqrt.*no int version"):
        typecheck(roots)
    assert np.allclose(generic.numpy(np.float32([4.0, 9.0])), [2.0, 3.0])


def test_parameter_names_and_types_are_checked():
    for name in ("a) { return 0; } float g(float a", "float", "M_PI", "__global", "a b"):
        with pytest.raises(LiftError, match="parameter name"):
            userfun_from_expression("named_f", [(name, Float)], Float, "1.0f")
    with pytest.raises(LiftError, match="given twice"):
        userfun_from_expression("twice_f", [("a", Float), ("a", Float)], Float, "a")
    with pytest.raises(LiftError, match="expression user functions take"):
        userfun_from_expression("pair_f", [("p", "(float, float)")], Float, "1.0f")
    with pytest.raises(ParseError, match="malformed escape"):
        parse_program('userfun esc(a: float): float = "\\x"\ndef p(x: [float]N) = mapGlb(0, esc, x)')


# -- vectors, travel, text --------------------------------------------------------------------------------

def test_vectorized_expressions_compute_alike_and_vector_comparisons_are_refused():
    ramp = vectorize(4, userfun_from_expression("ramp", [("a", Float)], Float, "fmax(a, 0.0f) * 2 + max(a, -0.5f)"))

    @program
    def ramps(x: Array(Float, N)):
        return L.asScalar(L.mapGlb(0, ramp, L.asVector(4, x)))

    x = np.linspace(-2, 2, 16, dtype=np.float32)
    want = np.maximum(x, 0) * 2 + np.maximum(x, -0.5)
    np.testing.assert_allclose(evaluate(ramps, x), want, rtol=1e-6)
    np.testing.assert_allclose(compile(ramps, {"N": 16}).run(x).output, want, rtol=1e-6)

    step = vectorize(4, userfun_from_expression("step", [("a", Float)], Float, "a > 0.0f"))

    @program
    def steps(x: Array(Float, N)):
        return L.asScalar(L.mapGlb(0, step, L.asVector(4, x)))

    with pytest.raises(LiftTypeError, match="comparisons take scalars"):
        typecheck(steps)


def test_expression_functions_travel_and_print_by_their_expression():
    f = userfun_from_expression("travel_f", [("a", Float), ("i", Int)], Float, "a*(i-1)/2.0f")
    again = pickle.loads(pickle.dumps(f))
    assert again == f and again.expression == "a*(i-1)/2.0f" and again.body == "return a * (i - 1) / 2.0f;"
    v = vectorize(4, userfun_from_expression("travel_g", [("a", Float)], Float, "-a"))
    assert pickle.loads(pickle.dumps(v)) == v
    text = _text_form("shown_f", "fmin(fmax(a, -1), 1.0f)", result="float")
    with pytest.raises(ParseError, match="fmax takes floats"):
        parse_program(text)
    prog = parse_program(_text_form("shown_f", "fmin(fmax(a, -1.0f), 1.0f)  *  2"))
    assert str(prog).splitlines()[0] == 'userfun shown_f(a: float): float = "fmin(fmax(a, -1.0f), 1.0f)  *  2"'
    assert parse_program(str(prog)) == prog


FRAGMENTS = ["a", "i", "b", "(", ")", ",", "+", "-", "*", "/", "%", "<", "==", "sqrt", "fmod", "max", "fmax", "tanh",
             "0", "1", "2.5f", ".5", "1e40f", "2147483648", "#", ";", "--", "?", ":", ".", "{", "'", "=", "f", "1f"]


@st.composite
def _mutated(draw) -> str:
    """A well-formed expression with a few fragments deleted, inserted or replaced."""
    parts = re.findall(r"\w+\.?\w*|\S", draw(_expr(draw(st.sampled_from(["int", "float"])), DEPTH)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(parts)))
        kind = draw(st.sampled_from(["delete", "insert", "replace"]))
        if kind != "insert" and at < len(parts):
            del parts[at]
        if kind != "delete":
            parts.insert(at, draw(st.sampled_from(FRAGMENTS)))
    return " ".join(parts) if draw(st.booleans()) else "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_mutated())
def test_any_text_is_taken_or_refused_with_a_liftpy_error(text):
    """Whatever the text, defining the function, checking it at other types and evaluating it on ints and floats
    (zeros among them) either works or raises a liftpy error: never numpy's, Python's TypeError or a RecursionError."""
    try:
        f = userfun_from_expression("fuzz_f", [("a", Float), ("b", "T"), ("i", Int), ("j", "T")], "T", text)
    except LiftError:
        return
    for t in (Float, Int, Float4):
        try:
            f.instantiate([Float, t, Int, t])
        except LiftError:
            pass
    for t in (np.float32, np.int32):
        try:
            out = f.numpy(np.float32([0.0, 1.0, -2.0]), t([0, 2, -5]), np.int32([0, 2, -5]), t([3, 0, -1]))
            assert out.dtype == t and out.shape == (3,)
        except LiftError:
            pass
