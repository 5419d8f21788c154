"""The text form of liftpy expressions: a readable, Lift-like notation that ``liftpy.ir.parser`` reads back.

    def stencil(weights: [[float]3]3, data: [[float]W]H) =
      mapWrg(0, fun(row) => join(mapLcl(0, fun(nbh) => ..., row)), map(transpose, slide(3, 1, ...)))

Primitives print as ``name(static arguments, data arguments)``; lambdas as ``fun(x, y) => body``; tuple
components as ``p._0``; user functions by name (``vectorize(4, add)`` for vectorized ones); a lambda that
only forwards its parameters to a user function or a layout primitive prints as that function's name.
Bound variables get readable names derived from the names they were built with, made unique per print, so
the text of a program does not depend on the process that built it.

A program's text starts with the definitions of the user functions it calls that are not built in:
``userfun f(a: float): float = "a * a"`` for one written as an expression, ``userfun f(a: float): float =
opencl "float d = a; return d * d;"`` for one written in Python with its OpenCL body.  So the text says
everything the kernels compute: the results store keys a problem by it (a changed function is another
problem, not a resumed one), and ``liftpy show`` reads a stored point's program back without the Python
that defined it (the interpreter then has no semantics for an ``opencl`` function; code generation needs none).
"""

from __future__ import annotations

import re
from functools import lru_cache

import sympy

from .analysis import size_symbols
from .expr import Call, Lambda, Literal, Node, Program, Var, subterms
from .primitives import Get, Index, Primitive, Reverse, Stride
from .types import ArrayType, Elements, ScalarType, TEXT_KEYWORDS, TupleType, Type, innermost, scalar_of, size_str
from .userfun import BUILTINS, T, UserFun

WIDTH = 100


class _Names:
    def __init__(self, reserved: set[str]):
        self.used = set(reserved)
        self.counts: dict[str, int] = {}

    def fresh(self, var: Var) -> str:
        hint = _hint(var.name)
        if hint in _RESERVED:
            hint = hint + "_"
        k = self.counts.get(hint, 0)
        while True:
            name = hint if k == 0 else f"{hint}{k}"
            k += 1
            if name not in self.used:
                break
        self.counts[hint] = k
        self.used.add(name)
        return name


def _hint(name: str) -> str:
    """What a variable's printed name starts with (``_Names.fresh``)."""
    hint = re.sub(r"_\d+$", "", name) or "x"
    return re.sub(r"\d+$", "", hint) or "x"


@lru_cache(maxsize=4096)
def _least_name(name: str) -> int:
    """The fewest characters a variable called ``name`` prints as: its own name if free, a fresh name
    starting with its hint if bound."""
    return len(_hint(name))


# A bound variable is never given a word of the text form (``TEXT_KEYWORDS``) or of its definitions.
_RESERVED = TEXT_KEYWORDS | {"def", "userfun", "opencl", "rule", "reverse", "stride", "vectorize"}


def format_value(v, t: Type | None = None) -> str:
    """A literal value as the grammar reads it back: floats keep their type and every bit (the shortest
    repr that round-trips), ``inf``/``-inf``/``nan`` included."""
    if isinstance(v, Elements):
        elem = t.elem if isinstance(t, ArrayType) else None
        return "[" + ", ".join(format_value(x, elem) for x in v) + "]"
    if isinstance(v, sympy.Basic):  # a size's value (lit(N)): the size, in parentheses unless a name
        return size_str(v)
    if isinstance(v, tuple):
        leaf = innermost(t) if t is not None else None
        elems = leaf.elems if isinstance(leaf, TupleType) else (None,) * len(v)
        return "(" + ", ".join(format_value(x, e) for x, e in zip(v, elems)) + ")"
    scalar = scalar_of(t) if t is not None else None
    if isinstance(v, bool) or (scalar is not None and scalar.name == "bool"):
        return "true" if v else "false"
    if isinstance(v, float) or (scalar is not None and scalar.name in ("float", "half")):
        v = float(v)
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        text = repr(v)
        if "." not in text and "e" not in text:
            text += ".0"
        return text + "f"
    return str(int(v))


def _has_size(value) -> bool:
    """Whether a literal's value is, or holds, a size (printed as ``value(N, int)``, never as a bare name)."""
    if isinstance(value, tuple):
        return any(_has_size(v) for v in value)
    return isinstance(value, sympy.Basic)


_KINDS: dict = {}  # the kind of callee of each class (``_callee_kind``)


def _callee_kind(fn) -> str:
    """``get``, ``index``, ``primitive``, ``userfun``, ``lambda`` or ``other``, by ``fn``'s class: the
    primitives' base is an abstract class, whose ``isinstance`` runs Python code (a fifth of printing a
    program asked it, several times at every call)."""
    kind = _KINDS.get(type(fn))
    if kind is None:
        kind = _KINDS[type(fn)] = (
            "get" if isinstance(fn, Get) else "index" if isinstance(fn, Index) else
            "primitive" if isinstance(fn, Primitive) else "userfun" if isinstance(fn, UserFun) else
            "lambda" if isinstance(fn, Lambda) else "other")
    return kind


def _eta_name(lam: Lambda) -> str | None:
    """The name of the function a lambda merely forwards to (``fun(x, y) => add(x, y)`` is ``add``)."""
    b = lam.body
    if not isinstance(b, Call) or len(b.args) != len(lam.params):
        return None
    if not all(isinstance(a, Var) and a.name == p.name for a, p in zip(b.args, lam.params)):
        return None
    kind = _callee_kind(b.fn)
    if kind == "userfun":
        return b.fn.text_name
    if kind in ("get", "index", "primitive") and not b.fn.static_args() and b.fn.nargs == 1:
        return b.fn.text_name
    return None


class _TooLong(Exception):
    """A one-line rendering longer than its budget (``Printer._render``)."""


class Printer:
    def __init__(self, reserved: set[str] = frozenset()):
        self.names = _Names(set(reserved))
        self.env: dict[str, str] = {}
        self._least: dict[int, int] = {}  # a lower bound of each node's one-line length, by node identity

    # Flat (one-line) rendering ---------------------------------------------------------------------
    def flat(self, node) -> str:
        return self._render(node, None)

    def _render(self, node, indent: int | None, budget: int | None = None) -> str:
        """Render ``node``; with ``indent`` None on one line, otherwise broken over lines if long.

        ``budget`` (one-line rendering only): raise ``_TooLong`` as soon as the line is known to be
        longer.  Breaking a call over lines tries its one-line form first; rendering the whole one-line
        form of every large subtree at every level made printing a program quadratic in its depth, and
        such a form is only wanted when it fits.  Whoever gives a budget restores the names on failure.
        A node whose one-line form cannot fit (``_shortest``) is refused before any of it is rendered: the
        attempts of a deep program's calls, each rendering up to a line of its subtree, were half of printing."""
        if budget is not None and self._shortest(node) > budget:
            raise _TooLong
        out = self._render_node(node, indent, budget)
        if budget is not None and len(out) > budget:
            raise _TooLong
        return out

    def _render_node(self, node, indent: int | None, budget: int | None) -> str:
        if isinstance(node, Var):
            return self.env.get(node.name, node.name)
        if isinstance(node, Literal):
            # (a bare number reads back as a float or an int: a half one says its type)
            if not isinstance(node.type, ScalarType) or node.type.name == "half" or _has_size(node.value):
                return f"value({format_value(node.value, node.type)}, {node.type})"
            return format_value(node.value, node.type)
        if isinstance(node, Lambda):
            eta = _eta_name(node)
            if eta is not None:
                return eta
            saved = dict(self.env)
            try:
                names = []
                for p in node.params:
                    n = self.names.fresh(p)
                    self.env[p.name] = n
                    names.append(n)
                head = f"fun({', '.join(names)}) =>"
                if indent is None:
                    inner = None if budget is None else budget - len(head) - 1
                    return f"{head} {self._render(node.body, None, inner)}"
                snapshot = (dict(self.names.counts), set(self.names.used))
                try:
                    body = self._render(node.body, None, WIDTH - indent - len(head) - 1)
                    return f"{head} {body}"
                except _TooLong:
                    self.names.counts, self.names.used = snapshot
                    return f"{head}\n{' ' * (indent + 2)}{self._render(node.body, indent + 2)}"
            finally:
                self.env = saved
        if isinstance(node, Call):
            fn = node.fn
            kind = _callee_kind(fn)
            if kind == "get":
                return f"{self._render(node.args[0], indent, budget)}._{fn.index}"
            if kind == "index":
                return f"{self._render(node.args[0], indent, budget)}[{size_str(fn.index)}]"
            if kind == "primitive":
                head = fn.text_name
                statics = [self._static(v) if not isinstance(v, Lambda) else v for _, v in fn.static_args()]
            elif kind == "userfun":
                head, statics = fn.text_name, []
            elif kind == "lambda":
                head, statics = f"({self._render(fn, None, budget if indent is None else None)})", []
            else:
                head, statics = getattr(fn, "text_name", repr(fn)), []
            items = statics + list(node.args)
            if indent is None:
                return self._one_line(head, items, budget)
            # Try one line first; the names given to bound variables must not depend on the attempt.
            snapshot = (dict(self.names.counts), set(self.names.used))
            try:
                return self._one_line(head, items, WIDTH - indent)
            except _TooLong:
                pass
            self.names.counts, self.names.used = snapshot
            # Static arguments stay on the first line; the functions and data follow, one per line.
            inner = indent + 2
            lead = [x for x in items if isinstance(x, str)]
            rest = [self._render(x, inner) for x in items if not isinstance(x, str)]
            first = f"{head}(" + "".join(f"{x}, " for x in lead).rstrip()
            return first + "\n" + ",\n".join(" " * inner + p for p in rest) + ")"
        raise TypeError(f"cannot print {node!r}")

    def _shortest(self, node) -> int:
        """A lower bound of the length of ``node`` on one line, whatever names its variables get: exact for
        the names of functions, punctuation and static arguments (a map's function counted by its own
        bound), a variable's name at least as long as the hint its name is made from (``_Names.fresh``),
        one character for a literal.  (Counting a static argument as one character left a map's function
        out of its bound: the attempts to print such calls on one line, most of them failing, were half of
        printing a program.)"""
        key = id(node)
        n = self._least.get(key)
        if n is not None:
            return n
        if isinstance(node, Lambda):
            eta = _eta_name(node)
            if eta is not None:
                n = len(eta)
            else:  # "fun(a, b) => body"
                n = (len("fun() => ") + sum(_least_name(p.name) for p in node.params) + 2 * (len(node.params) - 1)
                     + self._shortest(node.body))
        elif isinstance(node, Call):
            fn = node.fn
            kind = _callee_kind(fn)
            if kind in ("get", "index"):  # "x._0", "x[i]"
                n = self._shortest(node.args[0]) + 2
            else:
                if kind == "primitive":
                    args = fn.static_args()
                    head, statics = len(fn.text_name), len(args)
                    head += sum(self._shortest(v) if isinstance(v, Lambda) else len(self._static(v)) for _, v in args)
                elif kind == "userfun":
                    head, statics = len(fn.text_name), 0
                elif kind == "lambda":
                    head, statics = 2 + self._shortest(fn), 0
                else:
                    head, statics = 0, 0
                count = statics + len(node.args)
                n = head + 2 + sum(self._shortest(a) for a in node.args) + 2 * max(count - 1, 0)
        elif isinstance(node, Var):
            n = _least_name(node.name)
        else:
            n = 1
        self._least[key] = n
        return n

    def _one_line(self, head: str, items: list, budget: int | None) -> str:
        """``head(item, item, ...)`` on one line; within ``budget`` characters when one is given."""
        parts = []
        used = len(head) + 1  # "head("
        for x in items:
            if parts:
                used += 2  # ", "
            if isinstance(x, str):
                part = x
            else:
                part = self._render(x, None, None if budget is None else budget - used)
            used += len(part)
            if budget is not None and used > budget:
                raise _TooLong
            parts.append(part)
        if budget is not None and used + 1 > budget:  # and the closing parenthesis
            raise _TooLong
        return f"{head}({', '.join(parts)})"

    def _static(self, v) -> str:
        if isinstance(v, (Stride, Reverse)):
            return v.text()
        if isinstance(v, sympy.Basic):
            return size_str(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return format_value(v)
        return str(v)


def show(node: Node, indent: int | None = None) -> str:
    """One expression in text form (on one line unless ``indent`` is given)."""
    if isinstance(node, Program):
        return show_program(node)
    return Printer()._render(node, indent)


def show_program(p: Program) -> str:
    # Variables never take the name of an input, a size or a tuning parameter, so the text reads back.
    pr = Printer({q.name for q in p.params} | size_symbols(p))
    params = ", ".join(f"{q.name}: {t}" for q, t in zip(p.params, p.param_types))
    return "".join(d + "\n" for d in user_definitions(p)) + f"def {p.name}({params}) =\n  {pr._render(p.body, 2)}"


def user_definitions(p: Program) -> list[str]:
    """The text definitions of the user functions ``p`` calls that are not built in (of a vectorized
    one, its scalar base), in the order they are first called."""
    found: dict[str, UserFun] = {}
    for node in subterms(p.body):
        if isinstance(node, Call) and isinstance(node.fn, UserFun):
            f = node.fn
            while f.base is not None:
                f = f.base
            if BUILTINS.get(f.name) != f:
                found.setdefault(f.name, f)
    return [_definition(f) for f in found.values()]


def _definition(f: UserFun) -> str:
    def ty(t) -> str:
        return "T" if t == T else str(t)

    params = ", ".join(f"{n}: {ty(t)}" for n, t in zip(f.param_names, f.param_types))
    if f.expression is not None:
        value = _quoted(f.expression)
    else:
        # The body as it is, blank lines around it included: a body printed stripped read back as another
        # function (the key compares bodies), one without the numpy semantics the original was registered with.
        value = "opencl " + _quoted(f.body)
    return f"userfun {f.name}({params}): {ty(f.result_type)} = {value}"


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _quoted(text: str) -> str:
    """A string literal of the grammar (``STRING``) that the parser decodes back to ``text``: printable ASCII as
    it is, the rest escaped (so a program's text is ASCII, whatever a body holds)."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'
