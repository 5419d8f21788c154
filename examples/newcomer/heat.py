"""One time step of the heat equation on a grid (a 5-point Jacobi update), the border kept as it was:
each cell's 3x3 neighbourhood from slide2D over the grid padded by one, and the cell's row and column from
mapIdx to tell the border from the interior.

    liftpy explore examples/newcomer/heat.py:heat_step -s H=256,W=256 --samples 16 \
        --reference examples/newcomer/heat.py:heat_step_ref
"""

import numpy as np

import liftpy as lp
from liftpy import Array, Float, program, sizes

H, W = sizes("H W")
K = 0.2  # the diffusion coefficient times the time step over the squared cell size


@program
def heat_step(grid: Array(Float, H, W)):
    def cell(i, j, nbh):
        centre = nbh[1][1]
        laplacian = nbh[0][1] + nbh[2][1] + nbh[1][0] + nbh[1][2] - 4.0 * centre
        # i and j are ints, and a bare number beside them would be a float (a type error that says so): lit.
        border = (i < lp.lit(1)) | (i > lp.lit(H - 2)) | (j < lp.lit(1)) | (j > lp.lit(W - 2))
        return lp.select(border, centre, centre + K * laplacian)

    windows = lp.slide2D(3, 1, lp.pad2D(1, 1, 1, 1, "clamp", grid))
    return lp.mapIdx(lambda i, row: lp.mapIdx(lambda j, nbh: cell(i, j, nbh), row), windows)


def heat_step_ref(grid):
    out = grid.copy()
    g = grid
    out[1:-1, 1:-1] = g[1:-1, 1:-1] + K * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] - 4 * g[1:-1, 1:-1])
    return out


if __name__ == "__main__":
    g = np.random.rand(6, 7).astype(np.float32)
    assert np.allclose(lp.evaluate(heat_step, g), heat_step_ref(g), atol=1e-6)
    print(heat_step)
