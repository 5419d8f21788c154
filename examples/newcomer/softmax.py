"""A row softmax written the naive way, as the README's normalize is: each row's maximum, the sum of the
exponentials, then every element's exponential (computed again) over that sum.

    liftpy explore examples/newcomer/softmax.py:softmax -s N=256,M=256 --samples 16 \
        --reference examples/newcomer/softmax.py:softmax_ref
"""

import numpy as np

import liftpy as lp
from liftpy import Array, Float, program, sizes

N, M = sizes("N M")


@program
def softmax(xs: Array(Float, N, M)):
    def row_softmax(row):
        top = lp.fold(lp.fmax, -np.inf, row)  # the row's maximum, for the exponentials not to overflow
        total = lp.fold(lp.add, 0.0, lp.map(lambda x: lp.exp(x - top), row))
        return lp.map(lambda x: lp.exp(x - top) / total, row)

    return lp.map(row_softmax, xs)


def softmax_ref(xs):
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    xs = np.random.rand(4, 6).astype(np.float32)
    assert np.allclose(lp.evaluate(softmax, xs), softmax_ref(xs), atol=1e-6)
    print(softmax)
