"""Max and average pooling over the planes of a ``[C][H][W]`` tensor: a ``k x k`` window every ``stride``
(windows that would run past the edge are left out, as in PyTorch without padding)."""

from __future__ import annotations

import numpy as np

from ..ir import dsl as L
from ..ir.userfun import BUILTINS
from ..ir.expr import Program
from ..ir.types import Array, Float, size_var

MOST_NEGATIVE = -3.0e38  # below every finite float the inputs hold: the identity of max in practice


def _windows(k: int, stride: int, data):
    return L.map(lambda plane: L.slide2D(k, stride, plane), data)


def maxpool2d(k: int = 2, stride: int = 2) -> Program:
    c, h, w = size_var("C"), size_var("H"), size_var("W")
    return L.make_program(f"maxpool{k}s{stride}", [("data", Array(Float, c, h, w))], lambda x: L.map(
        lambda plane: L.map2D(lambda win: L.reduce(lambda a, v: BUILTINS["max"](a, v), MOST_NEGATIVE, L.join(win)), plane),
        _windows(k, stride, x)))


def avgpool2d(k: int = 2, stride: int = 2) -> Program:
    c, h, w = size_var("C"), size_var("H"), size_var("W")
    scale = 1.0 / (k * k)
    return L.make_program(f"avgpool{k}s{stride}", [("data", Array(Float, c, h, w))], lambda x: L.map(
        lambda plane: L.map2D(lambda win: L.reduce(lambda a, v: a + v * scale, 0.0, L.join(win)), plane),
        _windows(k, stride, x)))


def _pool(x, k, stride, fn):
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (k, k), axis=(1, 2))[:, ::stride, ::stride]
    return fn(win, axis=(3, 4)).astype(np.float32)


def maxpool2d_reference(x, k: int = 2, stride: int = 2):
    return _pool(x, k, stride, np.max)


def avgpool2d_reference(x, k: int = 2, stride: int = 2):
    return _pool(x, k, stride, np.mean)
