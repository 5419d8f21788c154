"""A rank-1 update of the lower triangle of a square matrix, the upper triangle kept (as BLAS's syr does):
A[i][j] + alpha * x[i] * y[j] where j <= i, A[i][j] elsewhere.  The condition is on the element's row and
column, given by mapIdx.

    liftpy explore examples/newcomer/triangular.py:lower_update -s N=256 --samples 16 \
        --reference examples/newcomer/triangular.py:lower_update_ref
"""

import numpy as np

import liftpy as lp
from liftpy import Array, Float, program, sizes

(N,) = sizes("N")
ALPHA = 0.5


@program
def lower_update(a: Array(Float, N, N), x: Array(Float, N), y: Array(Float, N)):
    # x[i] with i an element's index is refused ("the index must be a whole number or a size expression"):
    # each row goes with its x, each element with its y, through zip.
    def update(i, row_x):
        row, xi = row_x[0], row_x[1]
        return lp.mapIdx(lambda j, a_y: lp.select(j <= i, a_y[0] + ALPHA * xi * a_y[1], a_y[0]), lp.zip(row, y))

    return lp.mapIdx(update, lp.zip(a, x))


def lower_update_ref(a, x, y):
    return np.where(np.tri(len(a), dtype=bool), a + ALPHA * np.outer(x, y), a)


if __name__ == "__main__":
    a, x, y = np.random.rand(5, 5).astype(np.float32), np.random.rand(5).astype(np.float32), np.random.rand(5).astype(np.float32)
    assert np.allclose(lp.evaluate(lower_update, a, x, y), lower_update_ref(a, x, y), atol=1e-6)
    print(lower_update)
