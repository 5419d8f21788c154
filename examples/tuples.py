"""Tuples as values: reductions with tuple accumulators and an all-pairs interaction over an array of tuples.

Each program is written once in the embedded DSL; tuples live in memory as C structs (an array of tuples is
an array of structs on the device, and a tuple of numpy arrays, one per component, in Python).

    python examples/tuples.py          # evaluates each program, checks it against numpy, runs it on PoCL

The numpy implementations of the user functions are module-level functions, so the programs can be
explored in worker processes too: ``liftpy explore examples.tuples:argmin_rows -s M=8,N=64``.
"""

from __future__ import annotations

import numpy as np

from liftpy.ir.dsl import join, lit, map, program, reduce, zip
from liftpy.ir.types import Array, Float, Int, Tuple, size_var
from liftpy.ir.userfun import register, userfun

M, N = size_var("M"), size_var("N")
MinIdx = Tuple(Float, Int)  # (smallest value so far, its index)
Moments = Tuple(Float, Float)  # (sum, sum of squares)
Point = Tuple(Float, Float)  # (x, y)
SOFTENING = 0.01


def _argmin_step(acc, x, i):
    better = x < acc[0]
    return np.where(better, x, acc[0]), np.where(better, i, acc[1])


def _moments_step(acc, x):
    return acc[0] + x, acc[1] + x * x


def _pull(acc, p, q):
    dx, dy = q[0] - p[0], q[1] - p[1]
    r2 = dx * dx + dy * dy + np.float32(SOFTENING)
    inv = np.float32(1) / (r2 * np.sqrt(r2))
    return acc[0] + dx * inv, acc[1] + dy * inv


argmin_step = register(userfun("argminStep", [("acc", MinIdx), ("x", Float), ("i", Int)], MinIdx,
                      "if (x < acc._0) { acc._0 = x; acc._1 = i; }\nreturn acc;", _argmin_step))
moments_step = register(userfun("momentsStep", [("acc", Moments), ("x", Float)], Moments,
                       "acc._0 += x;\nacc._1 += x * x;\nreturn acc;", _moments_step))
pull = register(userfun("pull", [("acc", Point), ("p", Point), ("q", Point)], Point,
               f"float dx = q._0 - p._0, dy = q._1 - p._1;\nfloat r2 = dx * dx + dy * dy + {SOFTENING}f;\n"
               "float inv = 1.0f / (r2 * sqrt(r2));\nacc._0 += dx * inv;\nacc._1 += dy * inv;\nreturn acc;", _pull))


@program
def argmin_rows(xs: Array(Float, M, N), ids: Array(Int, N)):
    """Per row, the smallest value and its column: one pass with a (value, index) accumulator."""
    return join(map(lambda row: reduce(lambda acc, p: argmin_step(acc, p[0], p[1]), lit((float("inf"), -1), MinIdx),
                                       zip(row, ids)), xs))


@program
def moments_rows(xs: Array(Float, M, N)):
    """Per row, the sum and the sum of squares in one pass (mean and variance follow)."""
    return join(map(lambda row: reduce(moments_step, lit((0.0, 0.0), Moments), row), xs))


@program
def all_pairs(ps: Array(Point, N)):
    """For every point, the pull of all points on it (softened inverse square): an all-pairs interaction
    over an array of tuples, with a tuple accumulator."""
    return join(map(lambda p: reduce(lambda acc, q: pull(acc, p, q), lit((0.0, 0.0), Point), ps), ps))


# ------------------------------------------------------------------------------------------ references
def argmin_rows_reference(xs, ids):
    return xs.min(axis=1), ids[xs.argmin(axis=1)]


def moments_rows_reference(xs):
    x = xs.astype(np.float64)
    return x.sum(axis=1), (x * x).sum(axis=1)


def all_pairs_reference(ps):
    x, y = (np.asarray(c, np.float64) for c in ps)
    dx, dy = x[None, :] - x[:, None], y[None, :] - y[:, None]
    r2 = dx * dx + dy * dy + SOFTENING
    inv = 1.0 / (r2 * np.sqrt(r2))
    return (dx * inv).sum(axis=1), (dy * inv).sum(axis=1)


def inputs(seed: int = 0, rows: int = 4, n: int = 32):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((rows, n)).astype(np.float32)
    ids = np.arange(n, dtype=np.int32)
    points = (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32))
    return {"argmin_rows": (xs, ids), "moments_rows": (xs,), "all_pairs": (points,)}


EXAMPLES = {"argmin_rows": (argmin_rows, argmin_rows_reference), "moments_rows": (moments_rows, moments_rows_reference),
            "all_pairs": (all_pairs, all_pairs_reference)}


def main() -> None:
    from liftpy.host.kernel import compile_program
    from liftpy.ir.interpreter import evaluate
    from liftpy.ir.printer import show_program

    args = inputs()
    for name, (prog, reference) in EXAMPLES.items():
        got = evaluate(prog, *args[name])
        want = reference(*args[name])
        assert all(np.allclose(g, w, rtol=1e-4, atol=1e-4) for g, w in zip_(got, want)), name
        from liftpy.rewrite.explore import explore

        variant = explore(prog)[0]
        sizes = {"M": 4, "N": 32} if name != "all_pairs" else {"N": 32}
        run = compile_program(variant.program, sizes).run(*args[name]).output
        assert all(np.allclose(g, w, rtol=1e-4, atol=1e-4) for g, w in zip_(run, want)), name
        print(show_program(prog))
        print("  matches numpy in the interpreter and on the OpenCL device\n")


def zip_(a, b):
    import builtins

    return builtins.zip(a, b)


if __name__ == "__main__":
    main()
