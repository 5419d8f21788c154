"""The plain convolution every explored variant of a paper layer is validated against, its inputs, and the
epilogue of a network's layer.

Layouts (single image, no batch, fp32 in and out; no bias unless an ``Epilogue`` says so):

* input   ``x[C][H][W]``
* weights ``w[M][C][K][K]``   (``w[m][c][i][j]`` multiplies ``x[c][oy*stride + i - pad][ox*stride + j - pad]``)
* output  ``out[M][OH][OW]``

``conv2d_direct`` is the obviously-correct convolution (float64, a sum over the K*K kernel taps of
channel contractions) that every explored variant is validated against with ``expectation`` and
``validate``.  An ``Epilogue`` (a bias per output channel and a ReLU) makes it a network's layer.  The vendor
references measured beside an exploration's points (numpy, PyTorch, cuDNN) are ``liftpy.explore.vendor``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...ir.compare import Validation, within  # noqa: F401 - the conv validates with them
from .layers import Layer

EPS32 = float(np.finfo(np.float32).eps)


def _out_size(n: int, k: int, stride: int, pad: int) -> int:
    return (n + 2 * pad - k) // stride + 1


def check_shapes(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> tuple[int, int, int, int, int, int, int]:
    """(C, H, W, M, K, OH, OW) of a convolution of ``x`` by ``w``; shapes that do not fit are an InputError."""
    if x.ndim != 3 or w.ndim != 4:
        raise InputError(f"expected x[C][H][W] and w[M][C][K][K], got shapes {x.shape} and {w.shape}")
    c, h, wd = x.shape
    m, c2, k, k2 = w.shape
    if c2 != c or k != k2:
        raise InputError(f"weights {w.shape} do not fit input {x.shape}: need [M][{c}][K][K]")
    if stride < 1 or pad < 0 or k > min(h, wd) + 2 * pad:
        raise InputError(f"a {k}x{k} kernel at stride {stride} and pad {pad} does not fit a {h}x{wd} input")
    return c, h, wd, m, k, _out_size(h, k, stride, pad), _out_size(wd, k, stride, pad)


def conv2d_direct(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> np.ndarray:
    """The plain convolution in float64: out[m] = sum over taps (i, j) of w[:, :, i, j] . x_padded shifted."""
    c, h, wd, m, k, oh, ow = check_shapes(x, w, stride, pad)
    xp = np.pad(np.asarray(x, dtype=np.float64), ((0, 0), (pad, pad), (pad, pad)))
    w64 = np.asarray(w, dtype=np.float64)
    out = np.zeros((m, oh, ow))
    for i in range(k):
        for j in range(k):
            patch = xp[:, i : i + stride * (oh - 1) + 1 : stride, j : j + stride * (ow - 1) + 1 : stride]
            out += np.tensordot(w64[:, :, i, j], patch, axes=(1, 0))
    return out


def random_inputs(layer: Layer, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Fixed random fp32 input and weights of a layer, uniform in [-1, 1) so that sums cancel and an error
    cannot hide behind a large common offset."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=layer.input_shape).astype(np.float32)
    w = rng.uniform(-1, 1, size=layer.weight_shape).astype(np.float32)
    return x, w


def random_epilogue(layer: Layer, seed: int = 0, relu: bool = True) -> "Epilogue":
    """A layer's fixed random biases (uniform in [-1, 1)) and, where ``relu``, its ReLU."""
    bias = np.random.default_rng(seed + 1).uniform(-1, 1, size=layer.M).astype(np.float32)
    return Epilogue(bias, relu)


# -- validation ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """What a correct output is, computed once per layer and inputs: the exact-ish result and, per output
    element, the sum of the magnitudes of its terms (which bounds fp32 rounding error)."""

    expected: np.ndarray  # float64 [M][OH][OW]
    magnitude: np.ndarray  # float64 [M][OH][OW]: sum |w| |x| over the element's C*K*K terms
    terms: int  # C*K*K


def expectation(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> Expectation:
    c, _, _, _, k, _, _ = check_shapes(x, w, stride, pad)
    expected = conv2d_direct(x, w, stride, pad)
    magnitude = conv2d_direct(np.abs(x), np.abs(w), stride, pad)
    return Expectation(expected, magnitude, c * k * k)


def validate(actual: np.ndarray, exp: Expectation, factor: float = 8.0) -> Validation:
    """Whether ``actual`` is a correct fp32 result.

    Element (m, y, x) may differ from the float64 result by ``factor * sqrt(terms) * eps32 * magnitude``:
    fp32 sums in any order stay well inside that (rounding errors of a sum of n terms grow like sqrt(n)
    times the size of what is summed), while a missing, repeated or misplaced term is about
    ``magnitude / terms``, above it for every layer of VGG-16 and AlexNet.  A summed or relative norm would
    instead be loose on large outputs or fail on elements whose terms cancel to near zero.
    """
    actual = np.asarray(actual)
    if actual.shape != exp.expected.shape:
        return Validation(False, math.inf, math.inf, None, f"output shape {actual.shape}, expected {exp.expected.shape}")
    allowed = factor * math.sqrt(exp.terms) * EPS32 * exp.magnitude + np.finfo(np.float32).tiny
    return within(actual, exp.expected, allowed)


@dataclass(frozen=True)
class Epilogue:
    """What follows the convolution in a network's layer: ``bias`` (one per output channel) added, then a
    ReLU where ``relu``.  The default does nothing (the plain convolution)."""

    bias: np.ndarray | None = None
    relu: bool = False

    def __bool__(self) -> bool:
        return self.bias is not None or self.relu

    def numpy(self, out: np.ndarray) -> np.ndarray:
        """Applied to ``out[M][...]`` in place (float32 or float64)."""
        if self.bias is not None:
            out += np.asarray(self.bias, dtype=out.dtype).reshape((-1,) + (1,) * (out.ndim - 1))
        if self.relu:
            np.maximum(out, 0, out=out)
        return out


NO_EPILOGUE = Epilogue()
