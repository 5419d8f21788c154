"""Many small matrix products at once (B products of N x K by K x M), as a newcomer writes it: a map over
the pairs of matrices, each product a row of A against every column of B (transpose(B)'s rows).

    liftpy explore examples/newcomer/batched_matmul.py:batched_matmul -s B=256,N=16,K=16,M=16 --samples 16 \
        --reference examples/newcomer/batched_matmul.py:batched_matmul_ref
"""

import numpy as np

import liftpy as lp
from liftpy import Array, Float, program, sizes

B, N, K, M = sizes("B N K M")


@program
def batched_matmul(a: Array(Float, B, N, K), b: Array(Float, B, K, M)):
    def product(pair):
        x, y = pair[0], pair[1]
        return lp.map(lambda row: lp.map(lambda col: lp.fold(lambda acc, p: acc + p[0] * p[1], 0.0, lp.zip(row, col)),
                                         lp.transpose(y)),
                      x)

    return lp.map(product, lp.zip(a, b))


def batched_matmul_ref(a, b):
    return np.matmul(a, b)


if __name__ == "__main__":
    a, b = np.random.rand(3, 4, 5).astype(np.float32), np.random.rand(3, 5, 2).astype(np.float32)
    assert np.allclose(lp.evaluate(batched_matmul, a, b), batched_matmul_ref(a, b), atol=1e-5)
    print(batched_matmul)
