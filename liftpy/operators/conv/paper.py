"""The direct convolution of the Lift paper (its Listing 3), as the layers of its catalogue are explored: the
high-level program for square ``k x k`` kernels, the layer's sizes, random inputs in the program's layouts, and
what a correct result is (``liftpy.explore.conv.ConvOperator`` is the engine's operator of it).

Layouts of the program: input ``[[[float]C]W]H`` (channels innermost), weights ``[[[[float]C]K]K]M``,
biases ``[float]M``; the result is ``[[[[float]1]M]OW]OH``.  The plain convolution (``direct``) uses x[C][H][W],
w[M][C][K][K] and out[M][OH][OW]; ``to_reference_layout`` converts.

Why a second convolution program beside the library's (``general.conv2d``): they are not the same program.
This one takes (weights, biases, input), square kernels and symmetric padding, and its variants include the
paper's multi-kernel pipelines and the tiled GEMM-view rules that match its form; the library's takes (input,
weights, biases) and any kernel shape, stride, padding, dilation and groups.  Their texts differ, so their
variants, their ids in the store and their kernels differ: merging them would leave every stored layer
exploration unreadable as the same problem and change the kernels a layer explores.
"""

from __future__ import annotations

import numpy as np

from ...ir.dsl import join, make_program, map, map2D, pad2D, reduce, slide2D, zip
from ...ir.expr import Program
from ...ir.types import Array, Float, sizes
from ...ir.userfun import BUILTINS
from .layers import Layer
from .direct import Expectation, expectation


C, H, W, M = sizes("C H W M")
_MAS = BUILTINS["multAndSumUp"]
_RELU = BUILTINS["relu"]


def conv_program(k: int, stride: int, pad: int, relu: bool = False) -> Program:
    """The high-level convolution for k x k kernels: pad2D, slide2D, then for every window and every
    (weights, bias) pair a reduction of the flattened window against the flattened weights; with ``relu``
    a ReLU after each reduction (a network's layer: the tilings apply it as they write results out)."""
    return make_program(
        "conv_relu" if relu else "conv",
        [("weights", Array(Float, M, k, k, C)), ("biases", Array(Float, M)), ("input", Array(Float, H, W, C))],
        lambda weights, biases, input: map2D(
            lambda window: map(
                (lambda kb: map(_RELU, _dot(window, kb))) if relu else (lambda kb: _dot(window, kb)),
                zip(weights, biases),
            ),
            slide2D(k, stride, pad2D(pad, pad, pad, pad, 0.0, input)),
        ),
    )


def _dot(window, kb):
    """A window flattened, against one output channel's flattened weights, starting from its bias."""
    return reduce(lambda acc, xw: _MAS(acc, xw[0], xw[1]), kb[1], zip(join(join(window)), join(join(kb[0]))))


def layer_sizes(layer: Layer) -> dict[str, int]:
    return {"C": layer.C, "H": layer.H, "W": layer.W, "M": layer.M}


def layer_inputs(layer: Layer, seed: int = 0) -> tuple[list[np.ndarray], Expectation]:
    """Random inputs in the program's layouts, and what a correct result is (bias included)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((layer.C, layer.H, layer.W)).astype(np.float32)
    w = (rng.standard_normal((layer.M, layer.C, layer.K, layer.K)) / np.sqrt(layer.C * layer.K * layer.K)).astype(np.float32)
    b = rng.standard_normal(layer.M).astype(np.float32)
    exp = expectation(x, w, layer.stride, layer.pad)
    bias = b.astype(np.float64)[:, None, None]
    exp = Expectation(exp.expected + bias, exp.magnitude + np.abs(bias), exp.terms + 1)
    program_inputs = [np.ascontiguousarray(w.transpose(0, 2, 3, 1)), b, np.ascontiguousarray(x.transpose(1, 2, 0))]
    return program_inputs, exp


def to_reference_layout(out: np.ndarray, layer: Layer) -> np.ndarray:
    """[OH][OW][M][1] -> [M][OH][OW]."""
    return np.ascontiguousarray(out.reshape(layer.out_h, layer.out_w, layer.M).transpose(2, 0, 1))


def after_relu(exp: Expectation) -> Expectation:
    """What a correct result is after a ReLU: the rounding bounds of the convolution still hold, since
    max(x, 0) moves no value further from an exact one than x was."""
    return Expectation(np.maximum(exp.expected, 0.0), exp.magnitude, exp.terms)


def expectation_of(layer: Layer, inputs) -> Expectation:
    """The expected result for inputs in the program's layouts (weights, biases, input)."""
    w, b, x = inputs
    exp = expectation(np.ascontiguousarray(x.transpose(2, 0, 1)), np.ascontiguousarray(w.transpose(0, 3, 1, 2)), layer.stride, layer.pad)
    bias = np.asarray(b, dtype=np.float64)[:, None, None]
    return Expectation(exp.expected + bias, exp.magnitude + np.abs(bias), exp.terms + 1)
