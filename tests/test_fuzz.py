"""Fuzzing the front end: mutated program texts and randomly built DSL expressions either work (parse,
type-check, evaluate, and for lowered programs generate a kernel) or fail with a liftpy error — never a
foreign exception (KeyError, StopIteration, a sympy or lark error, a numpy broadcasting error).

A failure here prints the program that broke through; the fix belongs where the first check should have
caught it (the parser, the type rule of the primitive, the interpreter's input check)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import liftpy.ir.dsl as L
from liftpy.codegen.kernel import DeviceLimits, generate_pipeline
from liftpy.errors import LiftError
from liftpy.ir.analysis import size_symbols
from liftpy.ir.interpreter import evaluate
from liftpy.ir.parser import parse_program
from liftpy.ir.printer import show_program
from liftpy.ir.typecheck import typecheck
from liftpy.ir.types import Array, Float, sizes
from liftpy.ir.userfun import lookup

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "programs"
# conv_pipeline.lift has tuning parameters that need chosen values, so it is a seed for mutation only.
HIGH_LEVEL = [p.read_text() for p in sorted(PROGRAMS.glob("*.lift")) if p.name != "conv_pipeline.lift"] + [
    "def f(x: [float]N) = mapGlb(0, id, x)",
    "def g(x: [[float]M]N) = mapWrg(0, fun(r) => mapLcl(0, fun(v) => add(v, 1.0f), r), split(2, join(x)))",
    "def h(x: [float]N, y: [float]N) = reduceSeq(fun(a, p) => multAndSumUp(a, p._0, p._1), 0.0f, zip(x, y))",
    "def p(x: [[float]W]H) = map(fun(r) => pad(1, 2, 0.0f, r), transpose(x))",
]
SEEDS = HIGH_LEVEL + [(PROGRAMS / "conv_pipeline.lift").read_text()]
TOKENS = ["map", "mapGlb(0,", "mapLcl(1,", "reduce", "zip", "split(", "join(", "slide(", "pad(", "transpose(",
          "asVector(4,", "asScalar(", "let(", "toLocal(", "toPrivate(", "fun(a) =>", "fun(a, b) =>", "._0", "._2",
          "(", ")", ",", "0", "-1", "3", "1000000000000", "N", "K", "0.5f", "float", "float4", "[float]N",
          "[[float]2]0", "id", "add", "max", "dot", "=>", "def", ":", "//"]

SIZE = 4
# CI runs a fixed set of examples (derandomized, so a run fails only on a change of the code); set
# LIFTPY_FUZZ_EXAMPLES to fuzz longer with fresh random examples.
FUZZ = settings(max_examples=int(os.environ.get("LIFTPY_FUZZ_EXAMPLES", 1000)), deadline=None,
                derandomize="LIFTPY_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=[HealthCheck.too_slow])


def _check(program, event=lambda _: None, generate: bool = True) -> None:
    """Type-check, evaluate on small random inputs, generate OpenCL; every failure must be a LiftError."""
    event("built")
    typecheck(program)
    event("type-checked")
    sizes = {s: SIZE for s in size_symbols(program)}
    from liftpy.tuning.operator import random_inputs

    inputs = random_inputs(program, sizes, seed=0)
    evaluate(program, *inputs, sizes=sizes)
    show_program(program)
    event("evaluated")
    if generate:
        generate_pipeline(program, sizes, DeviceLimits(), {})
        event("generated")


def _robust(fn, *args):
    try:
        fn(*args)
    except LiftError:
        pass


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "number", "duplicate"]))
        n = len(text)
        at = draw(st.integers(0, max(n - 1, 0)))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)):]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        elif kind == "duplicate":
            end = min(n, at + draw(st.integers(1, 20)))
            text = text[:end] + text[at:end] + text[end:]
        else:
            numbers = list(re.finditer(r"\b\d+\b", text))
            if numbers:
                m = draw(st.sampled_from(numbers))
                text = text[:m.start()] + str(draw(st.sampled_from([0, 1, 2, 5, -3, 7, 2**40]))) + text[m.end():]
    return text


@FUZZ
@given(mutated())
def test_mutated_program_texts_fail_only_with_liftpy_errors(text):
    try:
        program = parse_program(text)
    except LiftError:
        return
    try:
        _check(program, event)
    except LiftError:
        pass


# -- random DSL construction ------------------------------------------------------------------------------

ints = st.sampled_from([-2, 0, 1, 2, 3, 4, 8])


@st.composite
def layout(draw, depth=0):
    """A function from an expression to an expression built of layout and compute primitives."""
    kind = draw(st.sampled_from(["split", "join", "slide", "pad", "transpose", "map_id", "reduce", "zip_self",
                                 "asVector", "get", "mapGlb", "let"] if depth < 3 else ["join", "map_id"]))
    a, b = draw(ints), draw(ints)
    inner = draw(layout(depth + 1)) if kind in ("map_id", "mapGlb", "let") and draw(st.booleans()) else None
    if kind == "split":
        return lambda x: L.split(a, x)
    if kind == "join":
        return L.join
    if kind == "slide":
        return lambda x: L.slide(a, b, x)
    if kind == "pad":
        return lambda x: L.pad(a, b, 0.0, x)
    if kind == "transpose":
        return L.transpose
    if kind == "asVector":
        return lambda x: L.asVector(a, x)
    if kind == "get":
        return lambda x: L.get(x, a)
    if kind == "zip_self":
        return lambda x: L.zip(x, x)
    if kind == "reduce":
        return lambda x: L.reduce(lookup("add"), 0.0, x)
    if kind == "let":
        return lambda x: L.let(lambda t: inner(t) if inner else t, x)
    f = inner or L.id
    if kind == "mapGlb":
        return lambda x: L.mapGlb(a, f, x)
    return lambda x: L.map(f, x)


@FUZZ
@given(st.lists(layout(), min_size=1, max_size=4), st.integers(1, 3), st.sampled_from([None, 0, 3, 4, 6]))
def test_randomly_built_programs_fail_only_with_liftpy_errors(steps, rank, concrete):
    (N,) = sizes("N")
    dim = concrete if concrete is not None else N
    t = Float
    for _ in range(rank):
        t = Array(t, dim)

    def body(x):
        for f in steps:
            x = f(x)
        return x

    try:
        program = L.make_program("fuzz", [("x", t)], body)
        _check(program, event)
    except LiftError:
        pass


def test_the_fuzzers_reach_working_programs():
    """The mutators are not so destructive that nothing parses: the seeds all pass the checks."""
    assert len(HIGH_LEVEL) >= 8
    for text in HIGH_LEVEL:
        _check(parse_program(text), generate=False)  # high-level: not lowered, no kernel
