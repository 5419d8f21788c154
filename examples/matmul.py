"""Matrix multiplication written with OpenCL-level primitives, compiled and checked.

A global 2D map over rows of A (dimension 1) and columns of B (dimension 0, the columns being the rows of
transpose(B), a view), each work-item reducing the zipped row and column sequentially in private memory.
Checks three non-square size triples against the interpreter and numpy; exits with status 1 on mismatch.
"""

import sys

import numpy as np

from liftpy import Array, Float, evaluate, id, join, mapGlb, mapSeq, multAndSumUp, program, reduceSeq, sizes
from liftpy import toGlobal, toPrivate, transpose, zip

M, K, N = sizes("M K N")


@program
def matmul(A: Array(Float, M, K), B: Array(Float, K, N)):
    return mapGlb(1, lambda row:
        join(mapGlb(0, lambda col:
            toGlobal(mapSeq(id, reduceSeq(lambda acc, p: multAndSumUp(acc, p[0], p[1]),
                                          toPrivate(id(0.0)), zip(row, col)))),
            transpose(B))),
        A)


def main() -> int:
    rng = np.random.default_rng(1)
    ok = True
    for k, (m, kk, n) in enumerate([(16, 8, 24), (33, 17, 9), (64, 128, 48)]):
        a = rng.standard_normal((m, kk)).astype(np.float32)
        b = rng.standard_normal((kk, n)).astype(np.float32)
        kernel = matmul.compile({"M": m, "K": kk, "N": n})
        if k == 0:
            print(kernel.source)
        result = kernel.run(a, b, repeat=5, warmup=1)
        interp = evaluate(matmul, a, b)
        independent = a.astype(np.float64) @ b.astype(np.float64)
        e1 = float(np.max(np.abs(result.output - interp)))
        e2 = float(np.max(np.abs(result.output - independent)))
        good = e1 <= 1e-4 and e2 <= 1e-3
        ok &= good
        print(f"M={m:4d} K={kk:4d} N={n:4d}  launch {kernel.launch}  {result.time_ms:.4f} ms  "
              f"|kernel - interpreter| = {e1:.2e}  |kernel - numpy| = {e2:.2e}  {'OK' if good else 'MISMATCH'}")
    print("all sizes match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
