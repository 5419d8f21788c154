"""Fuzz liftpy's front end: every mutant program text either works (parses, type-checks, evaluates, and for
a lowered program generates OpenCL) or fails with a liftpy error, never with a foreign exception
(RecursionError, KeyError, a sympy, lark or numpy error).

Three modes, each a set of seed texts and mutations of them:
  examples   the programs of examples/programs and a few lowered programs;
  features   the operator library, tuples, literals, vectors, user functions written in text, pads with
             boundaries, indices, gathers, sizes with functions; mutations aimed at limits (deep nesting,
             long sums, large constants, escapes, deep array types, reserved names);
  rules      rewrite rules written in text, mutated, parsed and applied to small programs, whose rewritten
             forms are type-checked and evaluated.

    python benchmarks/fuzz.py --mutants 7000 --json benchmarks/results/cpu-fuzz.json

The test suite runs the same mutators with a fixed seed and fewer mutants (tests/test_fuzz.py).  A foreign
exception is printed with its mode, type, message and the mutant that raised it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = ("examples", "features", "rules")
SIZE = 4  # every size of a mutant, so evaluation stays cheap

LOWERED = [
    "def f(x: [float]N) = mapGlb(0, id, x)",
    "def g(x: [[float]M]N) = mapWrg(0, fun(r) => mapLcl(0, fun(v) => add(v, 1.0f), r), split(2, join(x)))",
    "def h(x: [float]N, y: [float]N) = reduceSeq(fun(a, p) => multAndSumUp(a, p._0, p._1), 0.0f, zip(x, y))",
    "def p(x: [[float]W]H) = map(fun(r) => pad(1, 2, 0.0f, r), transpose(x))",
]

FEATURES = [
    'userfun mad(a: float, b: float, c: float): float = "a * b + c"\n'
    "def f(x: [float]N, y: [float]N) = mapGlb(0, fun(p) => mad(p._0, p._1, 2.0f), zip(x, y))",
    'userfun half(a: int): float = "a / 2.0f"\ndef h(x: [int]N) = map(fun(v) => half(v), x)',
    'userfun clip(a: float): float = "fmin(fmax(a, -1.0f), 1.0f)"\ndef c(x: [float]N) = mapSeq(clip, x)',
    "def v(x: [float]N) = asScalar(mapGlb(0, fun(q) => add(q, value(0.5f, float4)), asVector(4, x)))",
    "def t(x: [float]N, i: [int]N) = reduce(fun(acc, p) => max(acc, mult(p._0, 2.0f)), -inf, zip(x, i))",
    "def u(x: [float]N) = map(fun(v) => value((inf, -1), (float, int)), x)",
    "def l(x: [[float]3]3) = map(fun(r) => map(fun(v) => mult(v, r[1]), r), value([[1.0f, 2.0f, 1.0f], "
    "[2.0f, 4.0f, 2.0f], [1.0f, 2.0f, 1.0f]], [[float]3]3))",
    "def b(x: [float]N) = map(fun(w) => add(w[0], w[2]), slide(3, 1, pad(1, 1, clamp, x)))",
    "def m(x: [[float]W]H) = map(fun(r) => map(fun(w) => w[1], slide(3, 1, pad(1, 1, mirror, r))), x)",
    "def w(x: [float]N) = map(fun(v) => neg(v), pad(2, 2, wrap, x))",
    "def g(pos: [float]N, nbrs: [[int]K]N) = map(fun(row) => reduce(add, 0.0f, gather(row, pos)), nbrs)",
    "def r(x: [float]N) = reorder(stride(2), reorder(reverse, x))",
    "def s(x: [float]N) = map(fun(v) => x[N - 1], split(2, x))",
    "def z(x: [[float]M]N) = join(map(fun(r) => reduceSeq(fun(a, v) => max(a, v), -inf, r), x))",
    "def k(x: [[float]W]H) = map(fun(r) => let(fun(t) => map(fun(v) => add(v, t[0]), r), r), x)",
    "def d(x: [[[float]W]H]D) = map(fun(p) => p, transpose(x))",
    "def q(x: [[float]M]N) = map(fun(r) => split((Max(1, 2)), r), x)",
    "def e(x: [float]N, y: [float]N) = map(fun(p) => select(gt(p._0, p._1), sqrt(fabs(p._0)), exp(p._1)), zip(x, y))",
]

RULES = [
    "rule fuseText: map(f, map(g, x)) => map(fun(y) => f(g(y)), x)",
    "rule splitJoinText: map(f, x) => join(map(fun(c) => map(f, c), split(n, x)))",
    "rule transposeText: transpose(transpose(x)) => x",
    "rule padText: map(f, pad(l, r, 0.0f, x)) => pad(l, r, 0.0f, map(f, x))",
    "rule reduceText: reduce(f, z, x) => reduce(f, z, join(split(n, x)))",
]
RULE_TARGETS = [
    "def a(x: [[float]W]H) = map(fun(r) => map(fun(v) => add(v, 1.0f), map(neg, r)), transpose(transpose(x)))",
    "def b(x: [float]N) = reduce(add, 0.0f, map(neg, x))",
]

TOKENS = ["map", "mapGlb(0,", "mapLcl(1,", "reduce", "zip", "split(", "join(", "slide(", "pad(", "transpose(",
          "asVector(4,", "asScalar(", "let(", "toLocal(", "toPrivate(", "fun(a) =>", "fun(a, b) =>", "._0", "._2",
          "(", ")", ",", "0", "-1", "3", "1000000000000", "N", "K", "0.5f", "float", "float4", "[float]N",
          "[[float]2]0", "id", "add", "max", "dot", "=>", "def", ":", "//"]
FEATURE_TOKENS = TOKENS + [
    "value(1.0f, float)", "value((1.0f, 2), (float, int))", "(float, int)", "float<N>", "int", "int4", "[int]N",
    "gather(", "reorder(stride(2),", "reorder(reverse,", "clamp", "mirror", "wrap", "x[0]", "[N - 1]", "select(",
    "lt(", "sqrt(", "exp(", "fabs(", "inf", "-inf", "nan", "true", "false", "None", "2147483648", "9223372036854775808",
    "18446744073709551616", "N / 0", "(N - 1)", "floor(N/2)", "Mod(N, 2)", "Max(N, 3)", '"', '\\x', '\\u12',
    "userfun u(a: float): float = \"a\"\n", 'opencl "return a;"', "#include", "--", "rule r: x => x\n",
]
BIG = [0, 1, 2, 5, -3, 7, 2**31 - 1, 2**31, 2**32, 2**40, 2**63, 2**64, 10**30]


@dataclass
class Tally:
    mode: str
    mutants: int = 0
    accepted: int = 0
    liftpy_errors: int = 0
    slow: int = 0
    foreign: int = 0
    foreign_types: Counter = field(default_factory=Counter)
    examples: list = field(default_factory=list)  # (type, message, text) of the first foreign exceptions

    def record(self) -> dict:
        return {"mode": self.mode, "mutants": self.mutants, "accepted": self.accepted,
                "liftpy_errors": self.liftpy_errors, "slow": self.slow, "foreign": self.foreign,
                "foreign_types": dict(self.foreign_types),
                "foreign_examples": [{"type": t, "message": m, "text": x} for t, m, x in self.examples]}


@lru_cache(maxsize=None)
def seeds(mode: str) -> tuple[str, ...]:
    if mode == "examples":
        programs = ROOT / "examples" / "programs"
        return tuple(p.read_text() for p in sorted(programs.glob("*.lift"))) + tuple(LOWERED)
    if mode == "features":
        return tuple(FEATURES) + _library_texts()
    return tuple(RULES)


def _library_texts() -> tuple[str, ...]:
    """The operator library's programs in their text form: most of the primitives the library uses."""
    from liftpy.ir.printer import show_program
    from liftpy.operators import OPERATORS

    out = []
    for name, entry in sorted(OPERATORS.items()):
        sizes = {s: 8 for s in entry.sizes}
        try:
            out.append(show_program(entry.program(sizes, dict(entry.params))))
        except Exception:  # noqa: BLE001 - an entry that needs other parameters is simply not a seed
            continue
    return tuple(out)


def mutate(text: str, rng: random.Random, mode: str) -> str:
    tokens = FEATURE_TOKENS if mode != "examples" else TOKENS
    for _ in range(rng.randint(1, 3)):
        kinds = ["delete", "insert", "number", "duplicate"]
        if mode != "examples":
            kinds += ["nest", "long", "deep_type", "rename"]
        kind = rng.choice(kinds)
        n = len(text)
        at = rng.randint(0, max(n - 1, 0))
        if kind == "delete":
            text = text[:at] + text[at + rng.randint(1, 12):]
        elif kind == "insert":
            text = text[:at] + rng.choice(tokens) + text[at:]
        elif kind == "duplicate":
            end = min(n, at + rng.randint(1, 20))
            text = text[:end] + text[at:end] + text[end:]
        elif kind == "number":
            numbers = list(re.finditer(r"\b\d+\b", text))
            if numbers:
                m = rng.choice(numbers)
                text = text[:m.start()] + str(rng.choice(BIG)) + text[m.end():]
        elif kind == "nest":  # deep nesting: of parentheses, of maps, of lambdas
            depth = rng.choice([50, 150, 300, 1000])
            what = rng.choice(["paren", "neg", "map"])
            m = re.search(r"\b(x|v|r|a)\b", text[at:])
            if m:
                s, e = at + m.start(), at + m.end()
                inner = text[s:e]
                wrapped = {"paren": "(" * depth + inner + ")" * depth, "neg": "neg(" * depth + inner + ")" * depth,
                           "map": "map(id, " * depth + inner + ")" * depth}[what]
                text = text[:s] + wrapped + text[e:]
        elif kind == "long":  # a long sum, of sizes or of values
            count = rng.choice([100, 1000, 5000])
            m = re.search(r"\bN\b", text)
            if m and rng.random() < 0.5:
                text = text[:m.start()] + "(" + " + ".join(["N"] * count) + ")" + text[m.end():]
            else:
                m = re.search(r"\badd\(v, 1\.0f\)|\bv\b", text)
                if m:
                    text = text[:m.start()] + "add(" * count + "v" + ", v)" * count + text[m.end():]
        elif kind == "deep_type":
            depth = rng.choice([10, 65, 200])
            text = text.replace("[float]N", "[" * depth + "float" + "]2" * depth, 1)
        else:  # rename a size or a function to a reserved or odd name
            old = rng.choice(["N", "M", "x", "add", "f"])
            new = rng.choice(["None", "True", "__import__", "fun", "value", "int", "float", "kernel", "if",
                              "_", "N0", "é", "lambda", "def", "out"])
            text = re.sub(rf"\b{old}\b", new, text, count=rng.randint(1, 3))
    return text


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def check_text(mode: str, text: str) -> None:
    """What a user's command would do with the text; raises whatever it raises."""
    if mode == "rules":
        _check_rule(text)
    else:
        from liftpy.ir.parser import parse_program

        _check_program(parse_program(text), generate=bool(re.search(r"Glb|Wrg|Seq", text)))


def _check_program(program, generate: bool) -> None:
    from liftpy.codegen.kernel import DeviceLimits, generate_pipeline
    from liftpy.ir.analysis import size_symbols
    from liftpy.ir.inputs import random_inputs
    from liftpy.ir.interpreter import evaluate
    from liftpy.ir.printer import show_program
    from liftpy.ir.typecheck import typecheck

    typecheck(program)
    sizes = {s: SIZE for s in size_symbols(program)}
    inputs = random_inputs(program, sizes, seed=0)
    evaluate(program, *inputs, sizes=sizes)
    show_program(program)
    if generate:
        generate_pipeline(program, sizes, DeviceLimits(), {})


def _check_rule(text: str) -> None:
    from liftpy.ir.analysis import size_symbols
    from liftpy.ir.inputs import random_inputs
    from liftpy.ir.interpreter import evaluate
    from liftpy.ir.parser import parse_program
    from liftpy.ir.typecheck import typecheck
    from liftpy.rewrite.rule import applications
    from liftpy.rewrite.text_rules import parse_rules

    rules = parse_rules(text)
    for target in RULE_TARGETS:
        program = parse_program(target)
        for _, _, rw in applications(program, list(rules))[:4]:
            typecheck(rw.program)
            sizes = {s: 2 for s in size_symbols(rw.program)}
            evaluate(rw.program, *random_inputs(rw.program, sizes, seed=0), sizes=sizes)


def run(mode: str, mutants: int, seed: int = 0, time_limit_s: float = 20.0, keep: int = 20, stream=None) -> Tally:
    """Check ``mutants`` mutants of the mode's seeds; a mutant that takes longer than ``time_limit_s`` is
    counted as slow and left (a hang is a finding of its own, not a foreign exception)."""
    from liftpy.errors import LiftError

    rng = random.Random(f"{mode}:{seed}")
    tally = Tally(mode)
    base = seeds(mode)
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for i in range(mutants):
            text = mutate(rng.choice(base), rng, mode)
            tally.mutants += 1
            signal.setitimer(signal.ITIMER_REAL, time_limit_s)
            try:
                check_text(mode, text)
                tally.accepted += 1
            except LiftError:
                tally.liftpy_errors += 1
            except _Slow:
                tally.slow += 1
            except Exception as e:  # noqa: BLE001 - this is what the fuzzer looks for
                tally.foreign += 1
                tally.foreign_types[type(e).__name__] += 1
                if len(tally.examples) < keep:
                    tally.examples.append((type(e).__name__, str(e)[:300], text[:2000]))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if stream is not None and (i + 1) % 500 == 0:
                print(f"  {mode}: {i + 1}/{mutants} mutants, {tally.foreign} foreign", file=stream, flush=True)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return tally


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=7000, help="mutants per mode")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the counts here")
    args = ap.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    rows = []
    for mode in args.modes.split(","):
        t0 = time.time()
        tally = run(mode, args.mutants, args.seed, stream=sys.stderr)
        rows.append({**tally.record(), "seconds": round(time.time() - t0, 1)})
        for t, m, x in tally.examples[:5]:
            print(f"FOREIGN {mode} {t}: {m}\n  in: {x[:300]!r}", file=sys.stderr)
    print(f"{'mode':10s} {'mutants':>8s} {'accepted':>9s} {'liftpy':>8s} {'slow':>5s} {'foreign':>8s}")
    for r in rows:
        print(f"{r['mode']:10s} {r['mutants']:8d} {r['accepted']:9d} {r['liftpy_errors']:8d} {r['slow']:5d} {r['foreign']:8d}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any(r["foreign"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
