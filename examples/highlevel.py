"""The high-level programs the exploration starts from, shared by the examples and tests.

They are the Lift paper's expressions: the convolution layer of Listing 3 (pad2D, slide2D, map2D over
windows, zip of weights and biases, a reduction), the 3x3 stencil of Listing 1 before lowering, and
matrix multiplication.  Text versions are in examples/programs/.
"""

import numpy as np

from liftpy import Array, Float, join, make_program, map, map2D, multAndSumUp, pad2D, reduce, sizes, slide2D, transpose, zip

C, H, W, M, K, N = sizes("C H W M K N")


def conv(k: int = 3, stride: int = 1, pad: int = 1):
    return make_program(
        "conv",
        [("weights", Array(Float, M, k, k, C)), ("biases", Array(Float, M)), ("input", Array(Float, H, W, C))],
        lambda weights, biases, input: map2D(
            lambda window: map(
                lambda kb: reduce(lambda acc, xw: multAndSumUp(acc, xw[0], xw[1]), kb[1],
                                  zip(join(join(window)), join(join(kb[0])))),
                zip(weights, biases)),
            slide2D(k, stride, pad2D(pad, pad, pad, pad, 0.0, input))),
    )


def stencil():
    return make_program(
        "stencil",
        [("weights", Array(Float, 3, 3)), ("data", Array(Float, H, W))],
        lambda weights, data: map2D(
            lambda nbh: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(join(nbh), join(weights))),
            slide2D(3, 1, data)),
    )


def matmul():
    return make_program(
        "matmul",
        [("A", Array(Float, M, K)), ("B", Array(Float, K, N))],
        lambda A, B: map(lambda row: map(
            lambda col: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0.0, zip(row, col)), transpose(B)), A),
    )


# Small problem sizes for checking variants on PoCL, and random inputs for them.
SHAPES = {
    "conv": [dict(C=4, H=8, W=8, M=4), dict(C=8, H=6, W=10, M=2), dict(C=4, H=12, W=9, M=6)],
    "stencil": [dict(H=18, W=18), dict(H=12, W=20), dict(H=10, W=10)],
    "matmul": [dict(M=16, K=8, N=12), dict(M=8, K=12, N=8), dict(M=12, K=16, N=4)],
}


def inputs(name: str, s: dict, seed: int = 0):
    rng = np.random.default_rng(seed)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    if name == "conv":
        return [f(s["M"], 3, 3, s["C"]), f(s["M"]), f(s["H"], s["W"], s["C"])]
    if name == "stencil":
        return [f(3, 3), f(s["H"], s["W"])]
    return [f(s["M"], s["K"]), f(s["K"], s["N"])]


PROGRAMS = {"conv": conv, "stencil": stencil, "matmul": matmul}
