"""Parser of the text form (grammar in ``grammar.lark``), the inverse of ``liftpy.ir.printer``.

Parsing is two steps: lark (LALR) turns the text into a small raw tree, then ``_Builder`` resolves names
with lexical scope (a name is a bound variable, a program input, a user function, or a primitive used as
a function) and converts each primitive's static arguments according to the primitive's fields.  Errors
carry the line and column and show the offending line with a caret.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import lark
import sympy

from ..errors import LiftError, LiftTypeError, ParseError
from . import dsl
from .expr import MAX_NESTING, Call, Expr, Lambda, Literal, Program, Var, fresh_name
from .typecheck import resolve_indexing
from .primitives import BOUNDARIES, MACROS, PRIMITIVES, At, Index, Pad, Reverse, Stride
from .types import SCALARS, ArrayType, Bool, Float, Int, TupleType, Type, VectorType, as_size, size_str, size_var
from .userfun import SCALAR_OF_T, T, UserFun, lookup, register, userfun, userfun_from_expression, vectorize

_GRAMMAR = Path(__file__).with_name("grammar.lark")


def _opencl_only(name: str, *args):
    """The numpy semantics of a user function read from text with its OpenCL body only."""
    raise LiftError(f"user function {name} was read from text with only its OpenCL body (= opencl \"...\"), so the "
                    "interpreter cannot evaluate it: define it in Python with userfun(..., numpy_function) and "
                    "register() it, or write it as one arithmetic expression (userfun name(...): float = \"a * b\")")


@lru_cache(maxsize=None)
def _parser(start: str) -> lark.Lark:
    return lark.Lark(_GRAMMAR.read_text(), parser="lalr", start=start, propagate_positions=True, maybe_placeholders=True)


@dataclass(frozen=True)
class _Raw:
    kind: str
    value: Any
    args: tuple = ()
    line: int = 0
    column: int = 0


def _pos(meta) -> tuple[int, int]:
    return (getattr(meta, "line", 0), getattr(meta, "column", 0))


def _not_generic(meta, types) -> None:
    """T is a whole parameter type of a user function; in a program's input or inside a type it is no type."""
    if any(t == T for t in types):
        raise ParseError(f"line {meta.line}, column {meta.column}: T stands for the type of a user function's parameter "
                         "(any scalar or vector type), not for part of a type or for a program's input")


@lark.v_args(meta=True)
class _ToRaw(lark.Transformer):
    # expressions
    def name(self, meta, c):
        return _Raw("name", str(c[0]), (), *_pos(meta))

    def apply(self, meta, c):
        callee, args = c[0], c[1]
        return _Raw("apply", callee, tuple(args or ()), *_pos(meta))

    def arglist(self, meta, c):
        return list(c)

    def index(self, meta, c):
        return _Raw("index", c[1], (c[0],), *_pos(meta))

    def field(self, meta, c):
        return _Raw("field", str(c[1]), (c[0],), *_pos(meta))

    def lambda_(self, meta, c):
        *names, body = c
        return _Raw("lambda", tuple(str(n) for n in names if n is not None), (body,), *_pos(meta))

    def float_lit(self, meta, c):
        return _Raw("lit", float(c[0]), (Float,), *_pos(meta))

    def neg_float(self, meta, c):
        return _Raw("lit", -float(c[0]), (Float,), *_pos(meta))

    def int_lit(self, meta, c):
        return _Raw("lit", int(c[0]), (Int,), *_pos(meta))

    def neg_int(self, meta, c):
        return _Raw("lit", -int(c[0]), (Int,), *_pos(meta))

    def inf_lit(self, meta, c):
        return _Raw("lit", float("inf"), (Float,), *_pos(meta))

    def nan_lit(self, meta, c):
        return _Raw("lit", float("nan"), (Float,), *_pos(meta))

    def neg_inf(self, meta, c):
        return _Raw("lit", float("-inf"), (Float,), *_pos(meta))

    def paren_lambda(self, meta, c):
        return c[0]

    def true_lit(self, meta, c):
        return _Raw("lit", True, (Bool,), *_pos(meta))

    def false_lit(self, meta, c):
        return _Raw("lit", False, (Bool,), *_pos(meta))

    def value_literal(self, meta, c):
        lit, t = c
        return _Raw("arrlit", lit.value, (t,), *_pos(meta))

    def tuple_value(self, meta, c):
        return _Raw("lit", tuple(x.value for x in c), (), *_pos(meta))

    def array_value(self, meta, c):
        return _Raw("lit", [x.value for x in c], (), *_pos(meta))

    def size_value(self, meta, c):
        value = size_var(str(c[0])) if isinstance(c[0], lark.Token) else c[0]
        return _Raw("lit", value, (), *_pos(meta))

    def size_expr(self, meta, c):
        return _Raw("size", c[0], (), *_pos(meta))

    # sizes
    def s_int(self, meta, c):
        return as_size(int(c[0]))  # (refuses constants beyond the 32-bit indices kernels use)

    def s_name(self, meta, c):
        return size_var(str(c[0]))

    def s_add(self, meta, c):
        return c[0] + c[1]

    def s_sub(self, meta, c):
        return c[0] - c[1]

    def s_mul(self, meta, c):
        return c[0] * c[1]

    def s_div(self, meta, c):
        if c[1] == 0:
            raise ParseError(f"line {meta.line}: a size divided by zero ({size_str(c[0])} / 0)")
        return c[0] / c[1]

    def s_neg(self, meta, c):
        return -c[0]

    def s_fun(self, meta, c):
        fname, *args = c
        fns = {"floor": sympy.floor, "Mod": sympy.Mod, "ceiling": sympy.ceiling, "Max": sympy.Max, "Min": sympy.Min}
        if str(fname) not in fns:
            raise ParseError(f"line {meta.line}: unknown size function {fname}() (known: {', '.join(fns)})")
        return fns[str(fname)](*args)

    # types
    def t_name(self, meta, c):
        n = str(c[0])
        if n == T:  # the type variable of a user function (refused elsewhere by the rules that take types)
            return T
        if n in SCALARS:
            return SCALARS[n]
        for s in SCALARS:
            if n.startswith(s) and n[len(s):].isdigit():
                try:
                    return VectorType(SCALARS[s], int(n[len(s):]))
                except ValueError as e:
                    raise ParseError(f"line {meta.line}: {e}") from None
        raise ParseError(f"line {meta.line}, column {meta.column}: unknown type '{n}' (float, int, bool, float4, ...)")

    def t_vector(self, meta, c):
        n = str(c[0])
        if n not in SCALARS:
            raise ParseError(f"line {meta.line}: unknown scalar type '{n}' in a vector type")
        try:
            return VectorType(SCALARS[n], c[1])
        except ValueError as e:
            raise ParseError(f"line {meta.line}, column {meta.column}: {e}") from None

    def t_array(self, meta, c):
        _not_generic(meta, c[:1])
        return ArrayType(c[0], c[1])

    def t_tuple(self, meta, c):
        _not_generic(meta, c)
        return TupleType(tuple(c))

    def t_generic(self, meta, c):
        if (str(c[0]), str(c[1])) != ("scalar", T):
            raise ParseError(f"line {meta.line}, column {meta.column}: unknown type {c[0]}({c[1]}) (a user function's "
                             "result may be scalar(T), the element of its vector type T)")
        return SCALAR_OF_T

    # definitions
    def param(self, meta, c):
        _not_generic(meta, c[1:])
        return (str(c[0]), c[1])

    def uparam(self, meta, c):
        return (str(c[0]), c[1])

    def userfun(self, meta, c):
        name, *rest = c
        *params, result, opencl, body = rest
        params = [p for p in params if p is not None]
        try:
            try:
                # The escapes the printer writes (``printer._quoted``) and characters as they stand, any letter
                # included (decoded as text, not as the bytes of its UTF-8).
                text = str(body)[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
            except UnicodeDecodeError as e:
                raise LiftError(f"user function {name}: its body has a malformed escape ({e.reason})") from None
            if opencl is not None:
                return userfun(str(name), params, result, text, partial(_opencl_only, str(name)))
            return userfun_from_expression(str(name), params, result, text)
        except LiftError as e:
            raise ParseError(f"line {meta.line}: {e}") from None

    def rule(self, meta, c):
        name, lhs, rhs = c
        return ("rule", str(name), lhs, rhs, meta.line)

    def program(self, meta, c):
        name, *rest = c
        *params, body = rest
        return ("program", str(name), [p for p in params if p is not None], body)

    def start(self, meta, c):
        return list(c)


# lark names the rule 'lambda' which is a Python keyword; map it.
setattr(_ToRaw, "lambda", _ToRaw.lambda_)




@dataclass(frozen=True)
class MetaFun:
    """A function metavariable of a rule pattern (``f`` in ``map(f, x)``)."""

    name: str

    @property
    def text_name(self) -> str:
        return self.name


META_PREFIX = "?"


class _Builder:
    def __init__(self, text: str, userfuns: dict[str, UserFun], meta: bool = False):
        self.text = text
        self.userfuns = userfuns
        self.meta = meta  # building a rule pattern: unknown names are metavariables

    def error(self, raw: _Raw, message: str):
        line = raw.line
        where = f"line {line}, column {raw.column}: " if line else ""
        snippet = ""
        if line:
            src = self.text.splitlines()[line - 1] if line - 1 < len(self.text.splitlines()) else ""
            snippet = f"\n  {src}\n  {' ' * (raw.column - 1)}^"
        raise ParseError(f"{where}{message}{snippet}")

    def userfun(self, name: str) -> UserFun | None:
        return self.userfuns.get(name) or lookup(name)

    # ------------------------------------------------------------------------------------------
    def expr(self, raw, scope: dict[str, Var]) -> Expr:
        if not isinstance(raw, _Raw):
            raise ParseError(f"unexpected {raw!r}")
        k = raw.kind
        if k == "name":
            if raw.value in scope:
                return scope[raw.value]
            if self.meta and not (self.userfun(raw.value) or raw.value in PRIMITIVES):
                return Var(META_PREFIX + raw.value)
            if self.userfun(raw.value) or raw.value in PRIMITIVES:
                self.error(raw, f"'{raw.value}' is a function; call it with arguments")
            self.error(raw, f"unknown name '{raw.value}' (in scope: {', '.join(sorted(scope)) or 'nothing'})")
        if k == "lit":
            return Literal(raw.value, raw.args[0])
        if k == "arrlit":
            try:
                return Literal(raw.value, raw.args[0])
            except LiftTypeError as e:
                self.error(raw, e.detail)
        if k == "index":
            return Call(Index(raw.value), (self.expr(raw.args[0], scope),))
        if k == "field":
            if not (raw.value.startswith("_") and raw.value[1:].isdigit()):
                self.error(raw, f"tuple components are written ._0, ._1, ...; got .{raw.value}")
            return dsl.get(self.expr(raw.args[0], scope), int(raw.value[1:]))
        if k == "apply":
            return self.apply(raw, scope)
        if k == "lambda":
            self.error(raw, "a function is not a value here")
        if k == "size":
            self.error(raw, "an arithmetic size expression is not a value here")
        self.error(raw, f"unexpected {k}")

    def apply(self, raw: _Raw, scope) -> Expr:
        callee, args = raw.value, list(raw.args)
        if callee.kind == "lambda":  # (fun(x) => body)(arg)
            names = callee.value
            if len(names) != len(args):
                self.error(raw, f"a function of {len(names)} parameter(s) applied to {len(args)} argument(s)")
            params = tuple(Var(fresh_name(n)) for n in names)
            inner = dict(scope)
            inner.update(zip(names, params))
            return Call(Lambda(params, self.expr(callee.args[0], inner)), tuple(self.expr(a, scope) for a in args))
        if callee.kind == "apply":  # vectorize(4, f)(x, y)
            f = self.function_value(callee, scope)
            if not isinstance(f, UserFun):
                self.error(raw, "only user functions can be applied this way")
            return f(*[self.expr(a, scope) for a in args])
        if callee.kind != "name":
            self.error(raw, "only named functions can be called")
        name = callee.value
        if name in PRIMITIVES:
            return self.primitive(name, raw, args, scope)
        if name in MACROS:
            return self.macro(name, raw, args, scope)
        uf = self.userfun(name)
        if uf is not None:
            if len(args) != uf.arity:
                self.error(raw, f"user function {name} takes {uf.arity} argument(s), got {len(args)}")
            return Call(uf, tuple(self.expr(a, scope) for a in args))
        if self.meta and name not in scope:
            return Call(MetaFun(name), tuple(self.expr(a, scope) for a in args))
        if name in scope:
            self.error(raw, f"'{name}' is a value, not a function")
        self.error(raw, f"unknown function '{name}'")

    def primitive(self, name: str, raw: _Raw, args: list, scope) -> Expr:
        cls, fixed = PRIMITIVES[name]
        fields = [f for f in dataclasses.fields(cls) if f.name not in fixed and f.name not in cls.flags]
        if len(args) < len(fields):
            self.error(raw, f"{name} takes {len(fields)} static argument(s) ({', '.join(f.name for f in fields)}) before its data, got {len(args)} argument(s)")
        kwargs = dict(fixed)
        for f, a in zip(fields, args):
            kwargs[f.name] = self.static(cls, f.name, a, scope)
        data = [self.expr(a, scope) for a in args[len(fields):]]
        try:
            prim = cls(**kwargs)
        except (TypeError, ValueError) as e:
            self.error(raw, f"{name}: {e}")
        if prim.nargs >= 0 and len(data) != prim.nargs:
            self.error(raw, f"{name} takes {prim.nargs} data argument(s) after its static ones, got {len(data)}")
        return Call(prim, tuple(data))

    def static(self, cls, field: str, raw: _Raw, scope):
        if field == "f":
            return self.function(raw, cls.fun_arity, scope)
        if field == "index" and cls is At:  # element i of an array: a number or a size expression (``N - 1``)
            return self.size(raw)
        if field in ("dim", "index"):
            if raw.kind != "lit" or not isinstance(raw.value, int) or isinstance(raw.value, bool):
                self.error(raw, f"expected an integer {field}")
            if field == "dim" and raw.value not in (0, 1, 2):
                self.error(raw, f"OpenCL has NDRange dimensions 0, 1 and 2, not {raw.value}")
            return raw.value
        if field == "value":
            if raw.kind == "name" and cls is Pad and raw.value in BOUNDARIES:
                return raw.value
            if raw.kind != "lit":
                self.error(raw, "expected a number" + (f" or a boundary ({', '.join(BOUNDARIES)})" if cls is Pad else ""))
            return raw.value
        if field == "fn":
            if raw.kind == "name" and raw.value == "reverse":
                return Reverse()
            if raw.kind == "apply" and raw.value.kind == "name" and raw.value.value == "stride" and len(raw.args) == 1:
                return Stride(self.size(raw.args[0]))
            self.error(raw, "expected an index function: stride(s) or reverse")
        return self.size(raw)

    def size(self, raw: _Raw):
        if raw.kind == "lit" and isinstance(raw.value, int) and not isinstance(raw.value, bool):
            return sympy.Integer(raw.value)
        if raw.kind == "name":
            return size_var(raw.value)
        if raw.kind == "size":
            return raw.value
        self.error(raw, "expected a size: an integer, a size name or a parenthesized arithmetic expression")

    def function_value(self, raw: _Raw, scope):
        """A user function or primitive named or built in a function position."""
        if raw.kind == "name":
            uf = self.userfun(raw.value)
            if uf is not None:
                return uf
            if raw.value in PRIMITIVES:
                cls, fixed = PRIMITIVES[raw.value]
                fields = [f for f in dataclasses.fields(cls) if f.name not in fixed and f.name not in cls.flags]
                if not fields and cls.nargs == 1:
                    return cls(**fixed)
                self.error(raw, f"{raw.value} needs arguments; write a lambda: fun(x) => {raw.value}(..., x)")
            self.error(raw, f"unknown function '{raw.value}'")
        if raw.kind == "apply" and raw.value.kind == "name" and raw.value.value == "vectorize":
            if len(raw.args) != 2:
                self.error(raw, "vectorize takes a width and a user function")
            base = self.function_value(raw.args[1], scope)
            if not isinstance(base, UserFun):
                self.error(raw, "vectorize applies to user functions")
            return vectorize(self.size(raw.args[0]), base)
        self.error(raw, "expected a function")

    def function(self, raw: _Raw, arity: int, scope) -> Lambda:
        if raw.kind == "lambda":
            names = raw.value
            if len(names) != arity:
                self.error(raw, f"expected a function of {arity} parameter(s), got one of {len(names)}")
            params = tuple(Var(fresh_name(n)) for n in names)
            inner = dict(scope)
            inner.update(zip(names, params))
            return Lambda(params, self.expr(raw.args[0], inner))
        if self.meta and raw.kind == "name" and not (self.userfun(raw.value) or raw.value in PRIMITIVES):
            params = tuple(Var(fresh_name("x")) for _ in range(arity))
            return Lambda(params, Call(MetaFun(raw.value), params))
        f = self.function_value(raw, scope)
        params = tuple(Var(fresh_name("x")) for _ in range(arity))
        if isinstance(f, UserFun):
            if f.arity != arity:
                self.error(raw, f"{f.text_name} takes {f.arity} argument(s) but is used as a function of {arity}")
            return Lambda(params, Call(f, params))
        if arity != 1:
            self.error(raw, f"{f.text_name} is used as a function of {arity} parameters")
        return Lambda(params, Call(f, params))

    def macro(self, name: str, raw: _Raw, args: list, scope) -> Expr:
        try:
            if name in ("map2D", "map3D"):
                if len(args) != 2:
                    self.error(raw, f"{name} takes a function and an array")
                f = self.function(args[0], 1, scope)
                return getattr(dsl, name)(f, self.expr(args[1], scope))
            if name in ("slide2D", "slideStrict2D"):
                if len(args) == 3:
                    size, step = self.size(args[0]), self.size(args[1])
                elif len(args) == 5:
                    size = (self.size(args[0]), self.size(args[1]))
                    step = (self.size(args[2]), self.size(args[3]))
                else:
                    self.error(raw, f"{name} takes (size, step, xs) or (size1, size2, step1, step2, xs)")
                return getattr(dsl, name)(size, step, self.expr(args[-1], scope))
            if name in ("slide3D", "slideStrict3D"):
                if len(args) == 3:
                    size, step = self.size(args[0]), self.size(args[1])
                elif len(args) == 7:
                    size = tuple(self.size(a) for a in args[0:3])
                    step = tuple(self.size(a) for a in args[3:6])
                else:
                    self.error(raw, f"{name} takes (size, step, xs) or (size1, size2, size3, step1, step2, step3, xs)")
                return getattr(dsl, name)(size, step, self.expr(args[-1], scope))
            if name == "pad3D":
                if len(args) != 8:
                    self.error(raw, "pad3D takes (left, right, top, bottom, front, back, value, xs)")
                amounts = [self.size(a) for a in args[:6]]
                if args[6].kind != "lit" and not (args[6].kind == "name" and args[6].value in BOUNDARIES):
                    self.error(args[6], f"expected a padding value or a boundary ({', '.join(BOUNDARIES)})")
                return dsl.pad3D(*amounts, args[6].value, self.expr(args[7], scope))
            if name == "pad2D":
                if len(args) != 6:
                    self.error(raw, "pad2D takes (left, right, top, bottom, value, xs)")
                l, r, t, b = (self.size(a) for a in args[:4])
                if args[4].kind != "lit" and not (args[4].kind == "name" and args[4].value in BOUNDARIES):
                    self.error(args[4], f"expected a padding value or a boundary ({', '.join(BOUNDARIES)})")
                return dsl.pad2D(l, r, t, b, args[4].value, self.expr(args[5], scope))
        except LiftError as e:
            if isinstance(e, ParseError):
                raise
            self.error(raw, str(e))
        self.error(raw, f"unknown macro {name}")


def _lark_parse(text: str, start: str = "start"):
    try:
        tree = _parser(start).parse(text)
    except lark.exceptions.UnexpectedInput as e:
        context = e.get_context(text, span=60)
        expected = ""
        if isinstance(e, (lark.exceptions.UnexpectedToken,)):
            names = sorted(e.expected)[:8]
            expected = f" (expected one of: {', '.join(names)})" if names else ""
        raise ParseError(f"syntax error at line {e.line}, column {e.column}{expected}:\n{context}") from None
    _refuse_deep(tree)
    try:
        return _ToRaw().transform(tree)
    except lark.exceptions.VisitError as e:
        if isinstance(e.orig_exc, LiftError):
            raise e.orig_exc from None
        raise


# The syntax tree of a program nests about three times as deep as the program (a call is an application
# of an argument list); transforming it recurses once per level.  Text nested deeper than the programs the
# IR takes (``MAX_NESTING``) is refused before, as is a long chain of + in a size.
_TREE_DEPTH_MAX = 3 * MAX_NESTING


def _refuse_deep(tree) -> None:
    """A ParseError for a syntax tree deeper than ``_TREE_DEPTH_MAX``, found without recursion."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > _TREE_DEPTH_MAX:
            line = getattr(getattr(node, "meta", None), "line", None)
            where = f" (at line {line})" if line else ""
            raise ParseError(f"the text nests more than {_TREE_DEPTH_MAX} levels deep{where}, which liftpy does not "
                             "handle: bind parts with let, or sum many terms with reduce over an array")
        stack.extend((c, depth + 1) for c in getattr(node, "children", ()) if isinstance(c, lark.Tree))


@dataclass(frozen=True)
class RuleText:
    """A rule as written: patterns in which ``?x`` variables, ``MetaFun`` callees and size symbols are
    metavariables (compiled into a rewrite rule by ``liftpy.rewrite.text_rules``)."""

    name: str
    lhs: Expr
    rhs: Expr
    source: str


@dataclass(frozen=True)
class Module:
    userfuns: tuple[UserFun, ...]
    program: Program | None
    rules: tuple[RuleText, ...] = ()


def parse_module(text: str) -> Module:
    items = _lark_parse(text)
    userfuns = {}
    rules = []
    prog = None
    for item in items:
        if isinstance(item, UserFun):
            if item.name in userfuns and userfuns[item.name] != item:
                raise ParseError(f"user function {item.name} is defined twice, differently")
            known = lookup(item.name)
            if known is not None and known == item:
                # The same function (name, types, body) defined here already: that one, with its Python
                # semantics, where the text (a program's, printed with its definitions) has only its body.
                item = known
            userfuns[item.name] = register(item)
        elif isinstance(item, tuple) and item[0] == "rule":
            _, name, lhs, rhs, line = item
            b = _Builder(text, userfuns, meta=True)
            src = text.splitlines()[line - 1].strip() if line else name
            rules.append(RuleText(name, b.expr(lhs, {}), b.expr(rhs, {}), src))
        elif isinstance(item, tuple) and item[0] == "program":
            _, name, params, body = item
            b = _Builder(text, userfuns)
            scope = {n: Var(n) for n, _ in params}
            prog = resolve_indexing(Program(name, tuple(scope[n] for n, _ in params), tuple(t for _, t in params), b.expr(body, scope)))
    return Module(tuple(userfuns.values()), prog, tuple(rules))


def parse_program(text: str) -> Program:
    """Parse ``def name(x: T, ...) = expr`` (optionally preceded by user-function definitions)."""
    m = parse_module(text)
    if m.program is None:
        raise ParseError("no program found: expected 'def name(inputs) = expression'")
    return m.program


def parse_expr(text: str, free: dict[str, Any] | list[str] | None = None) -> Expr:
    """Parse one expression; ``free`` names the variables it may use (program inputs)."""
    wrapped = f"def _expr() = {text}"
    items = _lark_parse(wrapped)
    (_, _, _, body) = items[-1]
    names = list(free or [])
    return _Builder(wrapped, {}).expr(body, {n: Var(n) for n in names})


def parse_type(text: str) -> Type:
    items = _lark_parse(f"def _t(x: {text}) = x")
    return items[-1][2][0][1]


def load_program(path: str | Path) -> Program:
    return parse_program(Path(path).read_text())
