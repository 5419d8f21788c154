"""Rewrite rules written in the text syntax, so a user can add a rule without touching the engine.

    rule fuse: map(f, map(g, x)) => map(fun(y) => f(g(y)), x)
    rule splitJoin: map(f, x) => join(map(fun(c) => map(f, c), split(n, x)))

On the left, names that are not primitives or user functions are metavariables: ``x`` matches any
expression, ``f`` in a function position any function, ``n`` in a size position any size (a repeated
metavariable must match equal things).  On the right, ``f(e)`` applies the matched function, and a size
name the left did not bind becomes a fresh tuning parameter.  As for every rule, the engine applies a text
rule only where the result is well typed and of the same type, and the rule gets the same property test
as the built-in ones (``liftpy.rewrite.checks.check_rule``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import sympy

from ..errors import ParseError, RewriteError
from ..ir import primitives as P
from ..ir.expr import Call, Expr, Lambda, Literal, Var, apply_lambda, primitive_functions, rename_bound, substitute
from ..ir.parser import META_PREFIX, MetaFun, RuleText, parse_module
from ..ir.userfun import UserFun
from .rule import Rule


def _meta_fun_of(lam: Lambda) -> str | None:
    """``fun(x..) => f(x..)`` with f a function metavariable: the metavariable's name."""
    b = lam.body
    if isinstance(b, Call) and isinstance(b.fn, MetaFun) and len(b.args) == len(lam.params):
        if all(isinstance(a, Var) and a.name == p.name for a, p in zip(b.args, lam.params)):
            return b.fn.name
    return None


def match(pat, e, b: dict) -> bool:
    """Match pattern ``pat`` against ``e``, extending the bindings ``b`` (which it may modify on failure)."""
    if isinstance(pat, Var) and pat.name.startswith(META_PREFIX):
        if pat.name in b:
            return b[pat.name] == e
        b[pat.name] = e
        return True
    if isinstance(pat, (Var, Literal)):
        return pat == e
    if isinstance(pat, Call):
        if not isinstance(e, Call) or len(pat.args) != len(e.args):
            return False
        if isinstance(pat.fn, P.Primitive):
            if type(pat.fn) is not type(e.fn) or any(getattr(pat.fn, f) != getattr(e.fn, f) for f in pat.fn.flags):
                return False
            for f in dataclasses.fields(pat.fn):
                if f.name in pat.fn.flags:
                    continue
                if not _match_static(getattr(pat.fn, f.name), getattr(e.fn, f.name), b):
                    return False
        elif isinstance(pat.fn, UserFun):
            if pat.fn != e.fn:
                return False
        else:
            return False
        return all(match(p, x, b) for p, x in zip(pat.args, e.args))
    return False


def _match_static(p, v, b: dict) -> bool:
    if isinstance(p, Lambda):
        name = _meta_fun_of(p)
        if name is None:
            return isinstance(v, Lambda) and p == v
        if not isinstance(v, Lambda) or v.arity != p.arity:
            return False
        key = "fun:" + name
        if key in b:
            return b[key] == v
        b[key] = v
        return True
    if isinstance(p, sympy.Symbol):
        key = "size:" + p.name
        if key in b:
            return sympy.expand(b[key] - v) == 0
        b[key] = v
        return True
    if isinstance(p, P.Stride) and isinstance(v, P.Stride):
        return _match_static(p.s, v.s, b)
    if isinstance(p, sympy.Basic):
        return isinstance(v, sympy.Basic) and sympy.expand(p - v) == 0
    return p == v


def instantiate(t, b: dict, ctx, rule_name: str):
    if isinstance(t, Var) and t.name.startswith(META_PREFIX):
        if t.name not in b:
            raise RewriteError(f"rule {rule_name}: {t.name[1:]} on the right side is not bound by the left side")
        return b[t.name]
    if isinstance(t, (Var, Literal)):
        return t
    if isinstance(t, Call):
        args = tuple(instantiate(a, b, ctx, rule_name) for a in t.args)
        if isinstance(t.fn, MetaFun):
            key = "fun:" + t.fn.name
            if key not in b:
                raise RewriteError(f"rule {rule_name}: function {t.fn.name} on the right side is not bound by the left side")
            return apply_lambda(rename_bound(b[key]), args)
        if isinstance(t.fn, P.Primitive):
            changes = {}
            for f in dataclasses.fields(t.fn):
                changes[f.name] = _instantiate_static(getattr(t.fn, f.name), b, ctx, rule_name)
            return Call(dataclasses.replace(t.fn, **changes), args)
        return Call(t.fn, args)
    if isinstance(t, Lambda):
        return Lambda(t.params, instantiate(t.body, b, ctx, rule_name))
    raise RewriteError(f"rule {rule_name}: cannot instantiate {t!r}")


def _instantiate_static(v, b: dict, ctx, rule_name: str):
    if isinstance(v, Lambda):
        name = _meta_fun_of(v)
        if name is not None:
            key = "fun:" + name
            if key not in b:
                raise RewriteError(f"rule {rule_name}: function {name} on the right side is not bound by the left side")
            return rename_bound(b[key])
        return rename_bound(Lambda(v.params, instantiate(v.body, b, ctx, rule_name)))
    if isinstance(v, sympy.Basic) and v.free_symbols:
        subs = {}
        for s in v.free_symbols:
            key = "size:" + s.name
            if key not in b:
                b[key] = ctx.fresh(s.name)  # a size only the right side names: a new tuning parameter
            subs[s] = b[key]
        return v.subs(subs)
    if isinstance(v, P.Stride):
        return P.Stride(_instantiate_static(v.s, b, ctx, rule_name))
    return v


def compile_rule(rt: RuleText, kind: str = "algorithmic") -> Rule:
    def fn(e, site, ctx):
        bindings: dict = {}
        if not match(rt.lhs, e, bindings):
            return None
        return instantiate(rt.rhs, bindings, ctx, rt.name)

    return Rule(rt.name, rt.source, kind, fn)


def parse_rules(text: str) -> list[Rule]:
    """Rules from text (one ``rule name: lhs => rhs`` per definition)."""
    module = parse_module(text)
    if module.program is not None:
        raise ParseError("a rules file holds rules (and user functions), not a program")
    return [compile_rule(r) for r in module.rules]


def load_rules(path: str | Path) -> list[Rule]:
    return parse_rules(Path(path).read_text())
