"""Benchmark: the same computation written as users write it, each spelling explored on its own (a CUDA machine).

    python benchmarks/spellings.py --json benchmarks/results/h200-spellings.json [--only gemm_epilogue] [--samples 24]

Lift's promise is that performance comes from rewriting any high-level expression, not from writing it the one
way the rules expect.  Each computation here is written in two or more spellings a user would write; each
spelling is explored with the model search (its points validated against a float64 numpy reference before
their times count) and set against PyTorch doing the same arithmetic in the same process (TF32 off) and
against the copy bandwidth measured in the same run.

JSON: records ``computation``, ``spelling``, ``sizes``, ``best_ms``, ``torch_ms``, ``ratio_vs_torch``
(torch_ms / best_ms), ``min_bytes``, ``flops``, ``fraction_of_copy`` (min_bytes over best_ms, over the copy
bandwidth), ``points``, ``explore_s``, ``variant``, ``config``.  Target (issue 54): every spelling >= 0.8x
PyTorch or >= 85% of the copy bandwidth; each computation's slowest spelling within 1.2x of its fastest.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from gpu_common import Results, copy_gb_s, explore_best, min_bytes, output_nbytes, torch_cuda, torch_ms

from liftpy.ir import dsl as L
from liftpy.ir.types import Array, Float, size_var
from liftpy.ir.userfun import BUILTINS

ALPHA, BETA = 1.5, 0.5
add, mult, mad, mx, exp, sqrt = (BUILTINS[n] for n in ("add", "mult", "multAndSumUp", "max", "exp", "sqrt"))
M, N, K = size_var("M"), size_var("N"), size_var("K")


def dot(a, b):
    """A dot product as most users write it: ``acc + x * y`` over the zipped rows (one-element result)."""
    return L.reduce(lambda acc, p: acc + L.get(p, 0) * L.get(p, 1), 0.0, L.zip(a, b))


def dot_mad(a, b):
    return L.reduce(lambda acc, p: mad(acc, L.get(p, 0), L.get(p, 1)), 0.0, L.zip(a, b))


def product(a, bt, d=dot):
    return L.map(lambda row: L.join(L.map(lambda col: d(row, col), bt)), a)


# -- C := A B (SGEMM: the canonical spelling the tiling rules were written for, and the one most users write) ------

def gemm_canonical():
    from liftpy.operators.linalg import matmul

    return matmul()


def gemm_acc_plus():
    """The inner product as ``acc + a * b`` over transpose(B)'s columns, each a one-element array joined."""
    return L.make_program("gemm_acc_plus", [("A", Array(Float, M, K)), ("B", Array(Float, K, N))],
                          lambda a, b: product(a, L.transpose(b)))


def gemm_plain_reference(a, b):
    return (a.astype(np.float64) @ b).astype(np.float32)


# -- C := alpha A B + beta C ---------------------------------------------------------------------------------

def gemm_zip_c():
    """A map over zip(C, A): each element is alpha * dot(row, col)[0] + beta * c, with transpose(B) inside."""
    return L.make_program("gemm_zip_c", [("A", Array(Float, M, K)), ("B", Array(Float, K, N)), ("C", Array(Float, M, N))],
                          lambda a, b, c: L.map(lambda ca: L.map(
                              lambda cb: ALPHA * L.at(0, dot(L.get(ca, 1), L.get(cb, 1))) + BETA * L.get(cb, 0),
                              L.zip(L.get(ca, 0), L.transpose(b))), L.zip(c, a)))


def gemm_product_then_epilogue():
    """The product first (the canonical matrix product), then a map over it zipped with C."""
    return L.make_program("gemm_product_then_epilogue",
                          [("A", Array(Float, M, K)), ("B", Array(Float, K, N)), ("C", Array(Float, M, N))],
                          lambda a, b, c: L.map(lambda pc: L.map(lambda e: ALPHA * L.get(e, 0) + BETA * L.get(e, 1),
                                                                 L.zip(L.get(pc, 0), L.get(pc, 1))),
                                                L.zip(product(a, L.transpose(b), dot_mad), c)))


def gemm_reference(a, b, c):
    return (ALPHA * (a.astype(np.float64) @ b) + BETA * c).astype(np.float32)


# -- D := (alpha A B) C + beta D ---------------------------------------------------------------------------

def chained_let():
    return L.make_program("chained_let", [("A", Array(Float, M, M)), ("B", Array(Float, M, M)), ("C", Array(Float, M, M)),
                                          ("D", Array(Float, M, M))],
                          lambda a, b, c, d: L.let(lambda p: L.map(lambda dp: L.map(
                              lambda e: ALPHA * L.at(0, dot(L.get(dp, 1), L.get(e, 1))) + BETA * L.get(e, 0),
                              L.zip(L.get(dp, 0), L.transpose(c))), L.zip(d, p)), product(a, L.transpose(b))))


def chained_nested():
    return L.make_program("chained_nested", [("A", Array(Float, M, M)), ("B", Array(Float, M, M)), ("C", Array(Float, M, M)),
                                             ("D", Array(Float, M, M))],
                          lambda a, b, c, d: L.map(lambda pd: L.map(lambda e: ALPHA * L.get(e, 0) + BETA * L.get(e, 1),
                                                                    L.zip(L.get(pd, 0), L.get(pd, 1))),
                                                   L.zip(product(product(a, L.transpose(b)), L.transpose(c)), d)))


def chained_reference(a, b, c, d):
    return (ALPHA * ((a.astype(np.float64) @ b) @ c) + BETA * d).astype(np.float32)


# -- y := A^T (A x) ---------------------------------------------------------------------------------------

def atax_let():
    return L.make_program("atax_let", [("A", Array(Float, M, N)), ("x", Array(Float, N))],
                          lambda a, x: L.let(lambda t: L.join(L.map(lambda col: dot(col, t), L.transpose(a))),
                                             L.join(L.map(lambda row: dot(row, x), a))))


def atax_nested():
    return L.make_program("atax_nested", [("A", Array(Float, M, N)), ("x", Array(Float, N))],
                          lambda a, x: L.join(L.map(lambda col: dot_mad(col, L.join(L.map(lambda row: dot_mad(row, x), a))),
                                                    L.transpose(a))))


def atax_reference(a, x):
    a = a.astype(np.float64)
    return (a.T @ (a @ x)).astype(np.float32)


# -- y := alpha A x + beta B x -----------------------------------------------------------------------------

def axpby_zip_rows():
    return L.make_program("axpby_zip_rows", [("A", Array(Float, M, N)), ("B", Array(Float, M, N)), ("x", Array(Float, N))],
                          lambda a, b, x: L.map(lambda r: ALPHA * L.at(0, dot(L.get(r, 0), x)) + BETA * L.at(0, dot(L.get(r, 1), x)),
                                                L.zip(a, b)))


def axpby_two_products():
    return L.make_program("axpby_two_products",
                          [("A", Array(Float, M, N)), ("B", Array(Float, M, N)), ("x", Array(Float, N))],
                          lambda a, b, x: L.map(lambda e: ALPHA * L.get(e, 0) + BETA * L.get(e, 1),
                                                L.zip(L.join(L.map(lambda row: dot_mad(row, x), a)),
                                                      L.join(L.map(lambda row: dot_mad(row, x), b)))))


def axpby_reference(a, b, x):
    return (ALPHA * (a.astype(np.float64) @ x) + BETA * (b.astype(np.float64) @ x)).astype(np.float32)


# -- a Jacobi time step (two sweeps) keeping its border -------------------------------------------------------

def _sweep(g, mask):
    """One 5-point sweep of the interior, the border kept: select over a mask of ones padded with zeros."""
    def cell(p):
        nb, (keep, old) = L.get(p, 0), (L.get(p, 1), L.get(p, 2))
        row = lambda i: L.at(i, nb)  # noqa: E731
        new = (L.at(1, row(1)) + L.at(1, row(0)) + L.at(1, row(2)) + L.at(0, row(1)) + L.at(2, row(1))) * 0.2
        return BUILTINS["select"](keep, new, old)

    windows = L.slide2D(3, 1, L.pad2D(1, 1, 1, 1, "clamp", g))
    return L.map(lambda t: L.map(cell, L.zip(L.get(t, 0), L.get(t, 1), L.get(t, 2))), L.zip(windows, mask, g))


def _mask():
    return L.pad2D(1, 1, 1, 1, 0.0, L.lit(1.0, Array(Float, M - 2, N - 2)))


def jacobi_let():
    return L.make_program("jacobi_let", [("g", Array(Float, M, N))],
                          lambda g: L.let(lambda once: _sweep(once, _mask()), _sweep(g, _mask())))


def jacobi_nested():
    return L.make_program("jacobi_nested", [("g", Array(Float, M, N))], lambda g: _sweep(_sweep(g, _mask()), _mask()))


def jacobi_mask_let():
    """The mask bound once by ``let`` and used by both sweeps (a view: read where it is used, ``letView``)."""
    return L.make_program("jacobi_mask_let", [("g", Array(Float, M, N))],
                          lambda g: L.let(lambda m: _sweep(_sweep(g, m), m), _mask()))


def _sweep_numpy(g):
    out = g.copy()
    out[1:-1, 1:-1] = 0.2 * (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    return out


def jacobi_reference(g):
    return _sweep_numpy(_sweep_numpy(g.astype(np.float64))).astype(np.float32)


# -- a 3x3 convolution of one image ------------------------------------------------------------------------

def conv_windows():
    return L.make_program("conv_windows", [("w", Array(Float, 3, 3)), ("img", Array(Float, M, N))],
                          lambda w, img: L.map(lambda row: L.join(L.map(lambda win: dot(L.join(win), L.join(w)), row)),
                                               L.slide2D(3, 1, img)))


def conv_taps():
    def cell(w, win):
        total = None
        for i in range(3):
            for j in range(3):
                t = L.at(j, L.at(i, win)) * L.at(j, L.at(i, w))
                total = t if total is None else total + t
        return total

    return L.make_program("conv_taps", [("w", Array(Float, 3, 3)), ("img", Array(Float, M, N))],
                          lambda w, img: L.map2D(lambda win: cell(w, win), L.slide2D(3, 1, img)))


def conv_reference(w, img):
    h, wd = img.shape
    img = img.astype(np.float64)
    return sum(img[i:h - 2 + i, j:wd - 2 + j] * w[i, j] for i in range(3) for j in range(3)).astype(np.float32)


# -- softmax and layer norm of rows ----------------------------------------------------------------------

def softmax_python_vars():
    """Written with Python variables, as a user would: the row's maximum and sum are used for every element."""
    def row(r):
        top = L.at(0, L.reduce(mx, -3.0e38, r))
        e = L.map(lambda v: exp(v - top), r)
        total = L.at(0, L.reduce(add, 0.0, e))
        return L.map(lambda v: v / total, e)

    return L.make_program("softmax_python_vars", [("x", Array(Float, M, N))], lambda x: L.map(row, x))


def softmax_let(sizes):
    from liftpy.operators.rows import softmax_rows

    return softmax_rows(sizes)


def softmax_reference(x):
    from liftpy.operators.rows import softmax_rows_reference

    return softmax_rows_reference(x)


def layernorm_let(sizes):
    from liftpy.operators.rows import layernorm_rows

    return layernorm_rows(sizes)


def layernorm_python_vars(sizes):
    inv_n = 1.0 / int(sizes["N"])

    def row(r):
        mean = L.at(0, L.reduce(add, 0.0, r)) * inv_n
        centred = L.map(lambda v: v - mean, r)
        var = L.at(0, L.reduce(lambda acc, v: acc + v * v, 0.0, centred)) * inv_n
        return L.map(lambda v: v / sqrt(var + 1e-5), centred)

    return L.make_program(f"layernorm_python_vars_{sizes['N']}", [("x", Array(Float, M, N))], lambda x: L.map(row, x))


def layernorm_reference(x):
    from liftpy.operators.rows import layernorm_rows_reference

    return layernorm_rows_reference(x)


# (computation, spellings {name: builder}, sizes, reference, flops, torch builder)
def computations():
    square = {"M": 2048, "N": 2048, "K": 2048}
    big = {"M": 8192, "N": 8192}
    return [
        ("sgemm", {"canonical": gemm_canonical, "acc_plus": gemm_acc_plus}, square, gemm_plain_reference,
         2.0 * 2048 ** 3, lambda t, a, b: (lambda: t.mm(a, b))),
        ("gemm_epilogue", {"zip_c": gemm_zip_c, "product_then_epilogue": gemm_product_then_epilogue}, square,
         gemm_reference, 2.0 * 2048 ** 3,
         lambda t, a, b, c: (lambda: t.addmm(c, a, b, beta=BETA, alpha=ALPHA))),
        ("chained_products", {"let": chained_let, "nested": chained_nested}, {"M": 1024}, chained_reference,
         4.0 * 1024 ** 3, lambda t, a, b, c, d: (lambda: t.addmm(d, t.mm(a, b), c, beta=BETA, alpha=ALPHA))),
        ("atax", {"let": atax_let, "nested": atax_nested}, big, atax_reference, 4.0 * 8192 ** 2,
         lambda t, a, x: (lambda: t.mv(a.t(), t.mv(a, x)))),
        ("axpby_gemv", {"zip_rows": axpby_zip_rows, "two_products": axpby_two_products}, big, axpby_reference,
         4.0 * 8192 ** 2, lambda t, a, b, x: (lambda: t.addmv(t.mv(b, x), a, x, beta=BETA, alpha=ALPHA))),
        ("jacobi_step", {"let": jacobi_let, "nested": jacobi_nested, "mask_let": jacobi_mask_let}, big, jacobi_reference, 10.0 * 8192 ** 2,
         _torch_jacobi),
        ("conv3x3_image", {"windows": conv_windows, "taps": conv_taps}, big, conv_reference, 18.0 * 8192 ** 2,
         lambda t, w, img: (lambda: t.nn.functional.conv2d(img[None, None], w[None, None]))),
        ("softmax_rows", {"let": softmax_let, "python_vars": softmax_python_vars}, big, softmax_reference,
         4.0 * 8192 ** 2, lambda t, x: (lambda: t.softmax(x, dim=1))),
        ("layernorm_rows", {"let": layernorm_let, "python_vars": layernorm_python_vars}, big, layernorm_reference,
         6.0 * 8192 ** 2, lambda t, x: (lambda: t.nn.functional.layer_norm(x, (x.shape[1],), eps=1e-5))),
    ]


def _torch_jacobi(t, g):
    import torch.nn.functional as F

    k = t.tensor([[0, 0.2, 0], [0.2, 0.2, 0.2], [0, 0.2, 0]], device="cuda", dtype=t.float32)[None, None]

    def step():
        x = g
        for _ in range(2):
            y = x.clone()
            y[1:-1, 1:-1] = F.conv2d(x[None, None], k)[0, 0]
            x = y
        return x

    return step


def build(builder, sizes):
    import inspect

    return builder(sizes) if inspect.signature(builder).parameters else builder()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--only", help="comma-separated computations, or computation.spelling")
    ap.add_argument("--samples", type=int, default=24)
    ap.add_argument("--jobs", type=int, default=14)
    ap.add_argument("--budget", type=float, default=None, help="seconds of search per spelling")
    ap.add_argument("--db", default=None)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size (a smoke test on a small GPU)")
    args = ap.parse_args(argv)
    torch = torch_cuda()
    if torch is None:
        print("spellings: needs PyTorch with a CUDA GPU", file=sys.stderr)
        return 2
    from liftpy.explore.operator import ProgramOperator

    only = set(args.only.split(",")) if args.only else None
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "spellings.sqlite"
    copy = copy_gb_s(torch)
    print(f"copy bandwidth {copy:.0f} GB/s")
    print(f"{'computation':<18}{'spelling':<22}{'best ms':>10}{'torch ms':>10}{'vs torch':>9}{'of copy':>8}{'pts':>5}{'s':>6}  variant")
    results = Results(args.json)
    for name, spellings, sizes, reference, flops, torch_builder in computations():
        sizes = {k: max(8, int(v * args.scale)) for k, v in sizes.items()}
        wanted = [s for s in spellings if only is None or name in only or f"{name}.{s}" in only]
        if not wanted:
            continue
        ops = {s: ProgramOperator.of(build(spellings[s], sizes), sizes, reference=reference,
                                     flop_count=flops * args.scale ** 3) for s in wanted}  # (a scaled smoke test's rates are rough)
        first = next(iter(ops.values()))
        inputs = first.inputs(0)
        least = min_bytes(inputs, output_nbytes(first))
        xs = [torch.from_numpy(x).cuda() for x in inputs]
        ref_ms = torch_ms(torch_builder(torch, *xs))
        del xs
        torch.cuda.empty_cache()
        for spelling, op in ops.items():
            best, seconds, points, ex = explore_best(op, args.samples, db, args.jobs, args.budget)
            rec = {"computation": name, "spelling": spelling, "sizes": sizes, "torch_ms": ref_ms, "min_bytes": least,
                   "flops": op.flops(), "copy_gb_s": copy, "points": points, "explore_s": round(seconds, 1),
                   "best_ms": None, "ratio_vs_torch": None, "fraction_of_copy": None, "variant": None, "config": None,
                   "error": str(ex).splitlines()[0][:500] if isinstance(ex, Exception) else None}
            if best is not None:
                frac = least / (best.time_ms * 1e-3) / 1e9 / copy
                rec.update(best_ms=best.time_ms, ratio_vs_torch=ref_ms / best.time_ms, fraction_of_copy=frac,
                           variant=best.variant, config=best.config)
                print(f"{name:<18}{spelling:<22}{best.time_ms:>10.4f}{ref_ms:>10.4f}{ref_ms / best.time_ms:>9.2f}{frac:>8.2f}"
                      f"{points:>5}{seconds:>6.0f}  {best.variant}", flush=True)
            else:
                print(f"{name:<18}{spelling:<22}{'no valid point':>10}{ref_ms:>10.4f}  {rec['error'] or ''}", flush=True)
            results.add(rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
