"""Baselines the notebooks time beside liftpy's kernels (``explore_operator(..., baselines=("numpy_baselines:gemv",))``):
plain numpy on the program's inputs, in the program's order, returning its output.  The engine checks each
output against the operator's reference before timing it, and keeps its time as a ``reference:`` record."""

import numpy as np


def gemv(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """y = A x in float32: numpy's BLAS (``sgemv``), with as many threads as the host gives it."""
    return a @ x
