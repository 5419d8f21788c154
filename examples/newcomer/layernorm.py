"""Layer normalization of each row, with a learned scale and shift per column, as a newcomer writes it
from the formula: the mean, the variance around it, then (x - mean) / sqrt(variance + eps) * gamma + beta.

    liftpy explore examples/newcomer/layernorm.py:layernorm -s N=256,M=256 --samples 16 \
        --reference examples/newcomer/layernorm.py:layernorm_ref
"""

import numpy as np

import liftpy as lp
from liftpy import Array, Float, program, sizes

N, M = sizes("N M")
EPS = 1e-5


@program
def layernorm(xs: Array(Float, N, M), gamma: Array(Float, M), beta: Array(Float, M)):
    def norm(row):
        mean = lp.fold(lp.add, 0.0, row) / M
        var = lp.fold(lp.add, 0.0, lp.map(lambda x: (x - mean) * (x - mean), row)) / M
        scale = 1.0 / lp.sqrt(var + EPS)
        return lp.map(lambda t: (t[0] - mean) * scale * t[1] + t[2], lp.zip(row, gamma, beta))

    return lp.map(norm, xs)


def layernorm_ref(xs, gamma, beta):
    mean = xs.mean(axis=1, keepdims=True)
    var = ((xs - mean) ** 2).mean(axis=1, keepdims=True)
    return (xs - mean) / np.sqrt(var + EPS) * gamma + beta


if __name__ == "__main__":
    xs, g, b = (np.random.rand(*s).astype(np.float32) for s in ((4, 6), (6,), (6,)))
    assert np.allclose(lp.evaluate(layernorm, xs, g, b), layernorm_ref(xs, g, b), atol=1e-5)
    print(layernorm)
