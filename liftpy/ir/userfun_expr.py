"""Expression user functions: ``userfun half(a: int): float = "a / 2.0f"``.

Such a body is data, not code: a program's text (a ``.lift`` file, a stored result) may come from anywhere,
so it is read with a grammar of its own into a syntax tree, and both the OpenCL C body (printed from the
tree, never copied from the text) and the numpy semantics of the reference interpreter (a walk over the
same tree, no ``eval``) come from that tree.  What the grammar does not take cannot reach a kernel, and the
two meanings cannot drift apart.

The grammar, with C's precedences (tightest first)::

    primary    decimal int constant | float constant | parameter | function(args) | ( expr )
    unary      - unary | + unary | primary
    product    * / %            (left to right)
    sum        + -              (left to right)
    relation   < <= > >=        (one per operand: a < b < c is refused; write (a < b) < c if meant)
    equality   == !=            (likewise)

Int constants are C ints: 0 to 2147483647 (a minus sign is an operator, so -2147483648 is refused as C
reads it: a long); ``010`` (octal in C) is refused.  Float constants (``1.5f``, ``2.0``, ``.5``, ``1e-3f``)
are floats with or without the ``f`` (liftpy has no double) and are printed with it.  The functions are
those of ``FUNCTIONS``, each with its arity.  Refused with a message: preprocessor lines, comments,
statements and blocks, assignments and ``++``/``--``, casts and declarations, the conditional ``?:`` (use
``fmax``/``fmin`` or a comparison, which is 1 or 0), logical and bitwise operators, indexing and members,
string and character literals.  A body is at most ``MAX_LENGTH`` characters and ``MAX_DEPTH`` levels deep (a
chain ``a + b + c`` nests one level per operator), so reading, printing and evaluating never recurse far.

Types and meaning are OpenCL C's, checked before anything runs (at definition for declared types; at type
checking for a ``T`` or vectorized function, once its types are known): bool is int in arithmetic; int with
float is float; ``/`` of ints truncates; ``%`` takes ints only (``fmod`` is for floats); a comparison is an
int 1 or 0 and takes scalars only (OpenCL's vector comparisons give -1); ``sqrt``, ``exp``, ``tanh``,
``fabs``, ``fmod``, ``fmax`` and ``fmin`` take floats (OpenCL has no int versions: write ``a + 0.0f``), ``max``
and ``min`` two of one type; vectors combine only with vectors of their type and with scalars that convert
to their element without loss; the parameters are all scalars or all vectors.  The value is converted to the
declared result type (to the argument's type where the result is ``T``), as C's ``return`` converts it.

Where C leaves a result undefined the interpreter gives one and a kernel may give another: integer overflow
wraps; int division or remainder by zero is 0; a float out of int's range (or NaN) converted to int.  Float
results may differ in the last bits: OpenCL may contract ``a * b + c`` to an fma, and its ``exp`` and ``tanh``
are within a few ulp of numpy's.
"""

from __future__ import annotations

import re
from collections import namedtuple
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import LiftError, LiftTypeError
from .types import Bool, Float, Int, ScalarType, Type, VectorType

MAX_LENGTH = 4000
MAX_DEPTH = 100
INT_MAX = 2**31 - 1

# name: (arity, rule of its argument types, numpy function with C's meaning on those types)
FUNCTIONS = {
    "sqrt": (1, "float", np.sqrt),
    "exp": (1, "float", np.exp),
    "tanh": (1, "float", np.tanh),
    "fabs": (1, "float", np.abs),
    "fmod": (2, "same float", np.fmod),
    "fmax": (2, "float, float or scalar", np.fmax),  # np.fmax, not np.maximum: C's fmax ignores a NaN
    "fmin": (2, "float, float or scalar", np.fmin),
    "max": (2, "same, or scalar", np.maximum),
    "min": (2, "same, or scalar", np.minimum),
}
_SUMMARY = ("an expression user function is one OpenCL C expression of its parameters, int and float constants, "
            "+ - * / %, comparisons, parentheses and calls of " + ", ".join(sorted(FUNCTIONS)))

_PREC = {"*": 3, "/": 3, "%": 3, "+": 4, "-": 4, "<": 6, "<=": 6, ">": 6, ">=": 6, "==": 7, "!=": 7}
_LOOSEST = 7
_COMPARISONS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
                "!=": np.not_equal}

# C and OpenCL C words and predefined macros: a parameter so named would not compile or would be replaced by
# the preprocessor, and in a body such a name is a cast, a declaration or a statement.
_C_WORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
    volatile while bool true false half uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t global local
    constant private kernel generic pipe read_only write_only read_write image1d_t image2d_t image3d_t sampler_t
    event_t uniform NULL INFINITY NAN MAXFLOAT HUGE_VALF HUGE_VAL""".split())
_C_WORD_PATTERN = re.compile(r"(?:char|uchar|short|ushort|int|uint|long|ulong|float|double|half|bool)(?:2|3|4|8|16)"
                             r"|(?:M|FLT|DBL|HALF|CL|CLK|CHAR|SCHAR|UCHAR|SHRT|USHRT|INT|UINT|LONG|ULONG|FP)_\w*"
                             r"|__\w*|_[A-Z]\w*")

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\w*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op><<=|>>=|\*\*|//|/\*|\*/|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|->|[-+*/%&|^]=|[-+*/%<>()=,!~&|^?:;{}\[\].\#\\"'])
""", re.VERBOSE | re.ASCII)  # ASCII: C's digits and letters; others are refused, not read as numbers or names

_REFUSED = {
    "#": "a preprocessor line (#include, #define)", "\\": "a backslash", '"': "a string literal",
    "'": "a character literal", ";": "the end of a statement (the body is one expression; liftpy adds the return)",
    "{": "a block", "}": "a block", "++": "C's increment", "--": "C's decrement (a double negation is -(-a))",
    "=": "an assignment", "?": "the conditional operator ?: (use fmax, fmin, or a comparison, which is 1 or 0: "
    "a * (a > 0.0f))", ":": "part of the conditional operator ?:", "&&": "a logical operator",
    "||": "a logical operator", "!": "a logical operator", "&": "a bitwise operator", "|": "a bitwise operator",
    "^": "a bitwise operator", "~": "a bitwise operator", "<<": "a shift", ">>": "a shift", "[": "indexing",
    "]": "indexing", ".": "a member access (.x, .s0)", "->": "a member access", "//": "a comment (integer "
    "division is / between ints)", "/*": "a comment", "*/": "a comment", "**": "no operator of C (write x * x)",
    ",": "the comma operator",
    **{op: "an assignment" for op in ("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=")},
}


class _Refused(Exception):
    """A reason the body is not taken; the caller adds the function's name."""


# -- the syntax tree ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Num:
    value: int | float  # a float constant's value is a float32's, exactly
    type: ScalarType
    depth: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class Param:
    name: str
    depth: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class Unary:
    op: str
    operand: object
    depth: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class Binary:
    op: str
    left: object
    right: object
    depth: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class CallFn:
    fn: str
    args: tuple
    depth: int = field(default=1, compare=False, repr=False)


def _clip(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[: n - 3] + "...")


# -- reading -----------------------------------------------------------------------------------------------

_Tok = namedtuple("_Tok", "kind text column")


def _tokens(text: str) -> list[_Tok]:
    out, at = [], 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None:
            raise _Refused(f"the character {text[at]!r} at column {at + 1} is not OpenCL C arithmetic; {_SUMMARY}")
        if m.lastgroup != "space":
            out.append(_Tok(m.lastgroup, m.group(), at + 1))
        at = m.end()
    return out


def _float32(q: Fraction) -> float:
    """The float nearest ``q`` (ties to even), as a C compiler reads a float constant: straight from the
    decimal, not through a double, which can round twice."""
    with np.errstate(over="ignore"):
        f = np.float32(float(q))
        candidates = [c for c in (f, np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf)))
                      if np.isfinite(c)]
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - q), int(np.float32(c).view(np.int32)) & 1))
    return float(best)


_FLOAT_LIMIT = Fraction(2**128 - 2**103)  # halfway between float's largest value and 2**128: rounds to inf


def _number(tok: _Tok) -> Num:
    text = tok.text
    if re.fullmatch(r"\d+", text):
        if len(text) > 1 and text[0] == "0":
            raise _Refused(f"the constant {text} at column {tok.column} is octal in C; write it without the "
                           "leading zeros")
        if len(text) > 10 or int(text) > INT_MAX:
            raise _Refused(f"the constant {_clip(text, 30)[1:-1]} at column {tok.column} is outside int's range "
                           f"0 to {INT_MAX} (int constants are 32-bit C ints, and a minus sign is an operator; "
                           "for a larger value write a float constant such as 4294967296.0f)")
        return Num(int(text), Int)
    m = re.fullmatch(r"(?P<m>\d+\.\d*|\.\d+|\d+)(?:[eE](?P<e>[+-]?\d+))?(?P<s>[fF]?)", text)
    if m is None or ("." not in m["m"] and m["e"] is None):
        hint = f"write {text[:-1]}.0f" if m is not None else "decimal ints like 12 and floats like 1.5f or 2e-3f"
        raise _Refused(f"{_clip(text, 30)} at column {tok.column} is not a constant of OpenCL C arithmetic ({hint})")
    exponent = int(m["e"] or 0)
    if abs(exponent) > 1000:
        raise _Refused(f"the constant {_clip(text, 30)[1:-1]} at column {tok.column} is outside float's range")
    q = Fraction(m["m"]) * Fraction(10) ** exponent
    if q >= _FLOAT_LIMIT:
        raise _Refused(f"the constant {_clip(text, 30)[1:-1]} at column {tok.column} is outside float's range "
                       f"(the largest float is {c_float(np.finfo(np.float32).max)})")
    return Num(_float32(q), Float)


class _Reader:
    """Precedence climbing over the tokens: recursion only for parentheses, calls and unary signs, each of
    which counts against ``MAX_DEPTH`` before it recurses."""

    def __init__(self, text: str, params: tuple[str, ...]):
        self.toks, self.at, self.params, self.nesting = _tokens(text), 0, params, 0
        self.grouped: set[int] = set()  # ids of nodes written in parentheses

    def read(self):
        if not self.toks:
            raise _Refused("the expression is empty")
        node = self.binary(_LOOSEST)
        if self.at < len(self.toks):
            tok = self.toks[self.at]
            if tok.text in _REFUSED:
                self.refuse(tok)
            what = "an unmatched ')'" if tok.text == ")" else f"{tok.text!r}"
            raise _Refused(f"{what} at column {tok.column} follows a complete expression (an operator is missing?)")
        return node

    def peek(self) -> _Tok | None:
        return self.toks[self.at] if self.at < len(self.toks) else None

    def refuse(self, tok: _Tok):
        raise _Refused(f"{tok.text!r} at column {tok.column} is {_REFUSED[tok.text]}, not OpenCL C arithmetic; "
                       f"{_SUMMARY}")

    def enter(self, tok: _Tok):
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise _Refused(f"the expression nests more than {MAX_DEPTH} levels deep (at column {tok.column})")

    def made(self, node):
        if node.depth > MAX_DEPTH:
            raise _Refused(f"the expression nests more than {MAX_DEPTH} levels deep (parentheses, calls, signs, and "
                           "each operator of a chain like a + b + c count one level); split it into user functions")
        return node

    def binary(self, loosest: int):
        left = self.unary()
        while (tok := self.peek()) is not None and tok.kind == "op" and _PREC.get(tok.text, 99) <= loosest:
            self.at += 1
            prec = _PREC[tok.text]
            right = self.binary(prec - 1)
            if tok.text in _COMPARISONS:
                for side in (left, right):
                    if isinstance(side, Binary) and side.op in _COMPARISONS and id(side) not in self.grouped:
                        raise _Refused(f"the comparison {tok.text!r} at column {tok.column} takes a comparison as "
                                       "an operand, which is not OpenCL C arithmetic as it reads (a < b < c compares "
                                       "a < b, which is 1 or 0, with c); write (a < b) * (b < c), or add parentheses")
            left = self.made(Binary(tok.text, left, right, 1 + max(left.depth, right.depth)))
        return left

    def unary(self):
        tok = self.peek()
        if tok is not None and tok.text in ("-", "+"):
            self.at += 1
            self.enter(tok)
            operand = self.unary()
            self.nesting -= 1
            return self.made(Unary(tok.text, operand, operand.depth + 1))
        return self.primary()

    def primary(self):
        tok = self.peek()
        if tok is None:
            last = self.toks[-1]
            raise _Refused(f"the expression ends after {last.text!r} (column {last.column}) where an operand is "
                           "expected")
        self.at += 1
        if tok.kind == "number":
            return _number(tok)
        if tok.kind == "name":
            after = self.peek()
            if after is not None and after.text == "(":
                return self.call(tok)
            if tok.text in self.params:
                return Param(tok.text)
            self.unknown(tok, "name")
        if tok.text == "(":
            self.enter(tok)
            node = self.binary(_LOOSEST)
            self.expect(")", tok)
            self.nesting -= 1
            self.grouped.add(id(node))
            return node
        if tok.text in _REFUSED and tok.text != ",":
            self.refuse(tok)
        raise _Refused(f"{tok.text!r} at column {tok.column} stands where an operand is expected")

    def expect(self, text: str, opened: _Tok):
        tok = self.peek()
        if tok is None:
            raise _Refused(f"the '(' at column {opened.column} is never closed")
        if tok.text != text:
            if tok.text in _REFUSED:
                self.refuse(tok)
            raise _Refused(f"{tok.text!r} at column {tok.column} stands where {text!r} is expected")
        self.at += 1

    def unknown(self, tok: _Tok, what: str):
        name = tok.text
        if name in FUNCTIONS:
            raise _Refused(f"the function {name} (column {tok.column}) is named but not called: write {name}(...)")
        if name in _C_WORDS or _C_WORD_PATTERN.fullmatch(name):
            raise _Refused(f"{name!r} at column {tok.column} is a C type, keyword or macro: casts, declarations and "
                           "statements are not OpenCL C arithmetic of an expression (the value is converted to the "
                           "declared result type, and liftpy adds the return)")
        raise _Refused(f"unknown {what} {name!r} at column {tok.column} (parameters: "
                       f"{', '.join(self.params) or 'none'}; functions: {', '.join(sorted(FUNCTIONS))})")

    def call(self, tok: _Tok):
        name = tok.text
        if name in self.params:
            raise _Refused(f"{name}(...) at column {tok.column} calls the parameter {name!r}, a value, not a function")
        if name not in FUNCTIONS:
            self.unknown(tok, "function")
        opened = self.toks[self.at]
        self.at += 1
        self.enter(opened)
        args = []
        if self.peek() is None or self.peek().text != ")":
            args.append(self.binary(_LOOSEST))
            while self.peek() is not None and self.peek().text == ",":
                self.at += 1
                args.append(self.binary(_LOOSEST))
        self.expect(")", opened)
        self.nesting -= 1
        arity = FUNCTIONS[name][0]
        if len(args) != arity:
            raise _Refused(f"{name}(...) at column {tok.column} has {len(args)} argument{'s' * (len(args) != 1)}; "
                           f"{name} takes {arity}")
        return self.made(CallFn(name, tuple(args), 1 + max((a.depth for a in args), default=0)))


# -- printing C --------------------------------------------------------------------------------------------

def c_float(value: float) -> str:
    """A float constant that C reads back as exactly ``value`` (numpy prints a float's shortest such decimal)."""
    text = str(np.float32(value))
    return (text if ("." in text or "e" in text) else text + ".0") + "f"


def to_c(node) -> str:
    """The OpenCL C of ``node``, with the parentheses C's precedences need and those this grammar asks for."""
    if isinstance(node, Num):
        return str(node.value) if node.type == Int else c_float(node.value)
    if isinstance(node, Param):
        return node.name
    if isinstance(node, CallFn):
        return f"{node.fn}({', '.join(to_c(a) for a in node.args)})"
    if isinstance(node, Unary):
        inner = to_c(node.operand)
        return node.op + (f"({inner})" if isinstance(node.operand, (Unary, Binary)) else inner)
    prec = _PREC[node.op]
    compare = node.op in _COMPARISONS

    def side(operand, tighter_than: int) -> str:
        text = to_c(operand)
        if isinstance(operand, Binary) and (_PREC[operand.op] > tighter_than or compare and operand.op in _COMPARISONS):
            return f"({text})"
        return text

    return f"{side(node.left, prec)} {node.op} {side(node.right, prec - 1)}"


# -- types (OpenCL C's), shared by the checks before anything runs and by the evaluation ----------------------

def _elem(t: Type) -> ScalarType:
    return t.scalar if isinstance(t, VectorType) else t


def _promoted(t: Type) -> Type:
    return Int if t == Bool else t


def _arith_type(node, a: Type, b: Type) -> Type:
    a, b = _promoted(a), _promoted(b)
    if node.op == "%" and Float in (_elem(a), _elem(b)):
        raise _Refused(f"{_clip(to_c(node))}: % takes ints in OpenCL C, here {a} and {b}; use fmod(x, y) for floats")
    if isinstance(a, VectorType) and isinstance(b, VectorType):
        if a != b:
            raise _Refused(f"{_clip(to_c(node))}: {a} {node.op} {b}: OpenCL C combines a vector only with a vector of "
                           "its type")
        return a
    if isinstance(a, VectorType) or isinstance(b, VectorType):
        vector, scalar = (a, b) if isinstance(a, VectorType) else (b, a)
        if vector.scalar == Int and scalar == Float:
            raise _Refused(f"{_clip(to_c(node))}: {a} {node.op} {b}: a float does not convert to an int vector's "
                           "element in OpenCL C")
        return vector
    return Float if Float in (a, b) else Int


def _compare_type(node, a: Type, b: Type) -> Type:
    """The type both operands are compared in (the comparison itself is an int)."""
    if isinstance(a, VectorType) or isinstance(b, VectorType):
        raise _Refused(f"{_clip(to_c(node))}: comparisons take scalars here (OpenCL C's comparisons of vectors give "
                       "-1 for true, not 1)")
    return Float if Float in (_promoted(a), _promoted(b)) else Int


def _call_type(node, types: list[Type]) -> Type:
    rule, elems = FUNCTIONS[node.fn][1], [_elem(t) for t in types]
    if Bool in elems:
        raise _Refused(f"{_clip(to_c(node))}: {node.fn} takes int or float arguments, not bool (bool + 0 is an int)")
    if rule != "same, or scalar" and Int in elems:
        raise _Refused(f"{_clip(to_c(node))}: {node.fn} takes floats in OpenCL C (it has no int version), here "
                       f"{', '.join(map(str, types))}; a + 0.0f converts an int a")
    if len(types) == 1:
        return types[0]
    a, b = types
    if a == b or (rule != "same float" and isinstance(a, VectorType) and b == a.scalar):
        return a
    allowed = "two of one type" if rule == "same float" else "two of one type, or a vector and a scalar of its element"
    raise _Refused(f"{_clip(to_c(node))}: {node.fn} takes {allowed} in OpenCL C, here {a} and {b} (a float constant "
                   "is written 2.0f, not 2)")


def infer(node, env: dict[str, Type]) -> Type:
    if isinstance(node, Num):
        return node.type
    if isinstance(node, Param):
        return env[node.name]
    if isinstance(node, Unary):
        return _promoted(infer(node.operand, env))
    if isinstance(node, Binary):
        a, b = infer(node.left, env), infer(node.right, env)
        if node.op in _COMPARISONS:
            _compare_type(node, a, b)
            return Int
        return _arith_type(node, a, b)
    return _call_type(node, [infer(a, env) for a in node.args])


# -- numpy evaluation ----------------------------------------------------------------------------------------

_KINDS = {"b": Bool, "i": Int, "u": Int, "f": Float}


def _type_of(value) -> ScalarType:
    return _KINDS[value.dtype.kind]


def _as(value, t: Type):
    dtype = _elem(t).dtype
    return value if value.dtype == dtype else value.astype(dtype)


def _c_divide(a, b):
    """C's ``/`` of ints: the quotient truncated toward zero (numpy's ``//`` floors); by zero, 0."""
    q = np.floor_divide(a, b)
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


def evaluate(node, env: dict):
    if isinstance(node, Num):
        return np.asarray(node.value, dtype=node.type.dtype)
    if isinstance(node, Param):
        return env[node.name]
    if isinstance(node, Unary):
        value = evaluate(node.operand, env)
        value = _as(value, _promoted(_type_of(value)))
        return np.negative(value) if node.op == "-" else value
    if isinstance(node, Binary):
        a, b = evaluate(node.left, env), evaluate(node.right, env)
        if node.op in _COMPARISONS:
            t = _compare_type(node, _type_of(a), _type_of(b))
            return np.asarray(_COMPARISONS[node.op](_as(a, t), _as(b, t))).astype(np.int32)
        t = _arith_type(node, _type_of(a), _type_of(b))
        a, b = _as(a, t), _as(b, t)
        if node.op == "/":
            return _c_divide(a, b) if _elem(t) == Int else np.divide(a, b)
        ufunc = {"+": np.add, "-": np.subtract, "*": np.multiply, "%": np.fmod}[node.op]
        return ufunc(a, b)
    args = [evaluate(a, env) for a in node.args]
    _call_type(node, [_type_of(a) for a in args])
    return FUNCTIONS[node.fn][2](*args)


# -- the function ------------------------------------------------------------------------------------------

def _c_name_problem(name) -> str | None:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name, re.ASCII):
        return (f"the parameter name {str(name)[:40]!r} is not a C identifier (letters, digits and _, not starting "
                "with a digit)")
    if name in _C_WORDS or _C_WORD_PATTERN.fullmatch(name):
        return f"the parameter name {name!r} is a C type, keyword or macro (or reserved: _ and a capital, or __)"
    return None


class Expression:
    """One expression user function's body: its tree, its C, its type checks and its numpy semantics (calling
    it evaluates the tree on numpy arrays)."""

    def __init__(self, name: str, params: list[tuple[str, object]], result, text: str):
        self.name, self.text = name, text
        self.param_names = tuple(n for n, _ in params)
        self.param_types = tuple(t for _, t in params)
        self.result_type = result
        self._checked: dict = {}
        try:
            self._check_signature()
            if not isinstance(text, str):
                raise _Refused(f"the expression must be text, not {type(text).__name__}")
            if len(text) > MAX_LENGTH:
                raise _Refused(f"the expression has {len(text)} characters, more than the {MAX_LENGTH} an expression "
                               "user function may have; split it into several functions")
            self.root = _Reader(text, self.param_names).read()
            self.c = to_c(self.root)
            if "T" not in (*self.param_types, result):
                self._check(self.param_types, result)
        except _Refused as e:
            raise LiftError(self._message(e)) from None

    def _message(self, e: _Refused) -> str:
        shown = f" in {_clip(self.text)}" if isinstance(self.text, str) else ""
        return f"user function {self.name}{shown}: {e}"

    def _check_signature(self):
        seen = set()
        for n in self.param_names:
            problem = _c_name_problem(n)
            if problem:
                raise _Refused(problem)
            if n in seen:
                raise _Refused(f"the parameter name {n!r} is given twice")
            seen.add(n)
        for what, t in [*((f"parameter {n!r}", t) for n, t in zip(self.param_names, self.param_types)),
                        ("result", self.result_type)]:
            if not (t == "T" or t in (Float, Int, Bool) or (isinstance(t, VectorType) and t.scalar in (Float, Int))):
                raise _Refused(f"its {what} has the type {t}; expression user functions take and return float, int, "
                               "bool, vectors of float or int, or T (define others in Python with userfun(...))")
        if self.result_type == "T" and "T" not in self.param_types:
            raise _Refused("its result type T is not the type of any parameter")

    def _check(self, param_types: tuple, result: Type) -> None:
        """Raise ``_Refused`` unless OpenCL C takes the body with these types and gives what the evaluation does."""
        key = (param_types, result)
        if key in self._checked:
            problem = self._checked[key]
        else:
            problem = None
            try:
                vectors = [t for t in param_types if isinstance(t, VectorType)]
                if vectors and (len(vectors) < len(param_types) or len({t.width for t in vectors}) > 1):
                    raise _Refused(f"with parameters of types {', '.join(map(str, param_types))}: an expression user "
                                   "function takes all scalars or all vectors of one width")
                value = infer(self.root, dict(zip(self.param_names, param_types)))
                if (isinstance(result, VectorType) or isinstance(value, VectorType)) and value != result:
                    raise _Refused(f"its value is {value} but its result is declared {result}, and OpenCL C does not "
                                   "convert vectors implicitly")
            except _Refused as e:
                problem = str(e)
            self._checked[key] = problem
        if problem is not None:
            raise _Refused(problem)

    def check_call(self, who: str, arg_types: list[Type], result: Type) -> None:
        """The check for the types a call gives (those of a ``T`` or a vectorized function are known only then)."""
        try:
            self._check(tuple(arg_types), result)
        except _Refused as e:
            raise LiftTypeError(who, f"{e} (in {_clip(self.text)})") from None

    def __call__(self, *args):
        if len(args) != len(self.param_names):
            raise LiftError(f"user function {self.name} takes {len(self.param_names)} arguments, got {len(args)}")
        env = {}
        try:
            for name, t, arg in zip(self.param_names, self.param_types, args):
                value = np.asarray(arg)
                if value.dtype.kind not in _KINDS:
                    raise _Refused(f"its parameter {name!r} takes numbers, got {value.dtype}")
                env[name] = _as(value, _type_of(value) if t == "T" else _elem(t))
            with np.errstate(all="ignore"):
                value = np.asarray(evaluate(self.root, env))
                first_t = next((env[n] for n, t in zip(self.param_names, self.param_types) if t == "T"), None)
                value = value.astype(first_t.dtype if self.result_type == "T" else _elem(self.result_type).dtype)
            shape = np.broadcast_shapes(value.shape, *(v.shape for v in env.values()))
            return value if value.shape == shape else np.broadcast_to(value, shape)
        except _Refused as e:
            raise LiftError(self._message(e)) from None
        except ValueError:
            shapes = ", ".join(str(v.shape) for v in env.values())
            raise LiftError(f"user function {self.name}: arguments of shapes {shapes} do not combine") from None
