"""Exploring a program with several results (``tuple(a, b)``, ``liftpy.ir.results``).

Each result is a kernel of its own (``ir.kernels.split_kernels``), and so is each array the results share
(an array bound with ``let`` above the tuple: the sum that normalises an array and is returned too).  So
the variants of such a program are made of the variants of these parts, each explored on its own as a
program with one result, over the program's inputs and the shared arrays it reads:

1. the shared arrays (``let``-bound computed arrays) become parts in order; a ``let``-bound element of a
   computed array (``fold``'s value, ``at(0, reduce(...))``) shares the array, each part reading the
   element; other ``let``s (a view of the inputs, a scalar) go with each part that uses them;
2. a result that is only a view (an input returned as it is, a shared array) is copied by a kernel of its
   own, already lowered (``mapGlb`` over its outer dimensions, ``rewrite.pipeline.global_copy``);
3. every part is explored with the same options (placement in images apart: it is chosen once, for the
   whole program, at the end);
4. a variant of the program takes one variant of each part: their kernels (each part's own boundaries
   first) in the order of the parts, then ``tuple`` of the results' last kernels.  The tuning parameters
   of the parts are renamed apart (each part's ``s0`` is its own), and their requirements kept.

The parts' variants combine freely; when their product is larger than ``COMBINATIONS``, a spread of it is
kept in which every variant of every part appears at least once.  No fusion of the results into one
kernel is derived (a map and a reduction over the same array are two kernels, each reading the array).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

import sympy

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view, size_symbols
from ..ir.expr import Call, Lambda, Literal, Node, Program, Var, fresh_name, primitive_functions, replace_functions
from ..ir.kernels import is_boundary
from ..ir.results import Results, result_parts, with_lets
from ..ir.typecheck import type_of
from ..ir.types import ArrayType, Type, size_var, subs_type
from ..ir.userfun import UserFun, vectorize
from .derive import explore_one
from .options import ExploreOptions
from .pipeline import global_copy
from .placement import placement_stage
from .rule import Requirement, TraceStep
from .strategy import dedup
from .variant import Variant

COMBINATIONS = 256  # at most this many variants of a program are made of its parts' variants


def explore_results(program: Program, options):
    """``explore_all`` for a program with several results: (variants, dropped); each part, a program with one
    result, explored by ``derive.explore_one``."""
    parts = split_parts(program)
    strategy = not isinstance(options, ExploreOptions)
    sub_options = options if strategy else replace(options, images=False, max_variants=None)
    found, dropped = [], []
    taken = size_symbols(program)
    for part in parts:
        if part.copy:  # a copy has one lowering: its outer maps over global work-items
            found.append([Variant(part.program)])
            continue
        variants, refused = explore_one(part.program, sub_options)
        dropped.extend(refused)
        renamed = [_rename_apart(v, part.label, taken) for v in variants]
        for _, names in renamed:
            taken |= names
        found.append([v for v, _ in renamed])
    if not all(found):
        return [], dropped
    choices = _choices([len(f) for f in found])
    combined = dedup(_combine(program, parts, [found[k][i] for k, i in enumerate(c)]) for c in choices)
    if not strategy:
        placed = placement_stage(program, options)
        combined = dedup(w for v in combined for w in placed(v))
        if options.max_variants is not None and len(combined) > options.max_variants:
            step = len(combined) / options.max_variants
            combined = [combined[int(i * step)] for i in range(options.max_variants)]
    return combined, dropped


# ------------------------------------------------------------------------------------------ the parts


@dataclass(frozen=True)
class Part:
    label: str  # in the combined variants' traces: ``shared v``, ``result 0``, ...
    program: Program  # a program with one result
    var: Var | None = None  # the variable a shared array is bound to (None: a result)
    copy: bool = False  # a result returned as it is (a view), copied by a lowered program


def split_parts(program: Program) -> list[Part]:
    """The parts of a program with several results, in order, each a program with one result: first one
    per shared array (its parameters the program's inputs and the shared arrays before it that it reads),
    then one per result."""
    lets, results = result_parts(program.body)
    env: dict[str, Type] = dict(program.inputs)
    inputs = [p.name for p in program.params]
    shared: list[Var] = []
    local: list[tuple[Var, object]] = []
    parts = []

    def part_program(name: str, e) -> Program:
        e = with_lets(local, e)
        names = [n for n in inputs + [v.name for v in shared] if n in e.free_vars]
        return Program(f"{program.name}_{name}", tuple(Var(n) for n in names), tuple(env[n] for n in names), e)

    def typed(e) -> Type:
        whole = with_lets(local, e)
        return type_of(whole, {n: env[n] for n in whole.free_vars if n in env})

    def share(v: Var, value) -> None:
        name = re.sub(r"_\d+$", "", v.name) or "v"
        parts.append(Part(f"shared {name}", part_program(name, value), v))
        env[v.name] = typed(value)
        shared.append(v)

    for v, value in lets:
        if is_view(with_lets(local, value)):
            local.append((v, value))
        elif isinstance(typed(value), ArrayType):
            share(v, value)
        elif isinstance(value, Call) and isinstance(value.fn, P.At) and not is_view(value.args[0]):
            # An element of a computed array (``fold``'s value, at(0, reduce(...))): the array is shared, and
            # each part that uses the element reads it from there.
            whole = Var(fresh_name(v.name.rstrip("0123456789").rstrip("_") or "v"))
            share(whole, value.args[0])
            local.append((v, Call(value.fn, (whole,))))
        else:
            local.append((v, value))
    for k, r in enumerate(results):
        if is_view(with_lets(local, r)):  # returned as it is (an input, a shared value): copied by work-items
            parts.append(Part(f"result {k}", part_program(f"r{k}", global_copy(r, typed(r))), copy=True))
        else:
            parts.append(Part(f"result {k}", part_program(f"r{k}", r)))
    return parts


# ----------------------------------------------------------------------------------- combining them


def _choices(counts: list[int]):
    """Which variant of each part each combined variant takes: every combination while there are at most
    ``COMBINATIONS``; otherwise the diagonal (variant i of every part, modulo its count), so that each
    variant of each part appears, then combinations evenly spread over the whole product."""
    total = 1
    for c in counts:
        total *= c
    if total <= COMBINATIONS:
        yield from itertools.product(*(range(c) for c in counts))
        return
    seen = set()
    for i in range(max(counts)):
        choice = tuple(i % c for c in counts)
        seen.add(choice)
        yield choice
    left = COMBINATIONS - len(seen)
    for j in range(max(left, 0)):
        n = (j * total) // max(left, 1)
        choice = []
        for c in reversed(counts):
            n, i = divmod(n, c)
            choice.append(i)
        choice = tuple(reversed(choice))
        if choice not in seen:
            seen.add(choice)
            yield choice


def _combine(program: Program, parts: list[Part], chosen) -> Variant:
    kernels: list[tuple[Var, object]] = []  # (variable, toGlobal(value)) of every kernel before the results'
    finals = []
    for part, v in zip(parts, chosen):
        body = v.program.body
        while is_boundary(body):
            kernels.append((body.fn.f.params[0], body.args[0]))
            body = body.fn.f.body
        if part.var is not None:
            kernels.append((part.var, dsl.toGlobal(body)))
        else:
            finals.append(body)
    body = Call(Results(), tuple(finals))
    for var, value in reversed(kernels):
        body = Call(P.Let(Lambda((var,), body)), (value,))
    return Variant(
        program.with_body(body),
        params=tuple(p for v in chosen for p in v.params),
        requirements=tuple(r for v in chosen for r in v.requirements),
        trace=tuple(s for v in chosen for s in v.trace),
        lower_bounds=tuple(b for v in chosen for b in v.lower_bounds),
    )


# ----------------------------------------------------------------------------- parameters renamed apart


def _rename_apart(v, label: str, taken: set[str]):
    """``v`` with its tuning parameters renamed where another part (or a size) has the name already, and its
    trace labelled with the part; and the names it now uses."""
    mapping: dict[str, str] = {}
    mine = {str(p) for p in v.params}
    for p in v.params:
        name = str(p)
        if name in taken:
            hint, k = re.sub(r"\d+$", "", name) or "p", 0
            while f"{hint}{k}" in taken or f"{hint}{k}" in mine or f"{hint}{k}" in mapping.values():
                k += 1
            mapping[name] = f"{hint}{k}"
    names = {mapping.get(n, n) for n in mine}
    trace = tuple(TraceStep(s.rule, f"{label}: {s.where}", tuple(mapping.get(n, n) for n in s.params)) for s in v.trace)
    if not mapping:
        return replace(v, trace=trace), names
    subs = {size_var(a): size_var(b) for a, b in mapping.items()}
    words = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    return replace(
        v,
        program=v.program.with_body(rename_sizes(v.program.body, subs)),
        params=tuple(sympy.sympify(p).subs(subs) for p in v.params),
        requirements=tuple(Requirement(r.predicate.subs(subs), words.sub(lambda m: mapping[m.group(1)], r.message), r.rule)
                           for r in v.requirements),
        trace=trace,
        lower_bounds=tuple((mapping.get(n, n), lo) for n, lo in v.lower_bounds),
    ), names


def rename_sizes(node: Node, subs: dict):
    """``node`` with size symbols replaced (``subs``: symbol -> symbol) wherever a program holds sizes: the
    static arguments of primitives, the types and values of literals, the widths of vectorized functions."""
    if isinstance(node, Var):
        return node
    if isinstance(node, Literal):
        value = node.value.subs(subs) if isinstance(node.value, sympy.Basic) else node.value
        return Literal(value, subs_type(node.type, subs))
    if isinstance(node, Lambda):
        return Lambda(node.params, rename_sizes(node.body, subs))
    if isinstance(node, Call):
        fn = node.fn
        if isinstance(fn, Lambda):
            fn = rename_sizes(fn, subs)
        elif isinstance(fn, P.Primitive):
            fn = fn.subs(subs)
            fn = replace_functions(fn, {n: rename_sizes(f, subs) for n, f in primitive_functions(fn)})
        elif isinstance(fn, UserFun) and isinstance(fn.vector_width, sympy.Basic) and fn.vector_width.free_symbols & subs.keys():
            fn = vectorize(fn.vector_width.subs(subs), fn.base)
        return Call(fn, tuple(rename_sizes(a, subs) for a in node.args))
    return node
