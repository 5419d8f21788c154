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


# -- channels innermost ([H][W][C], the layout of conv2d and of the networks) ---------------------------


def maxpool_hwc(k: int = 2, stride: int = 2, pad: int = 0) -> Program:
    """Max pooling of ``[H][W][C]`` (padding never wins: it is the most negative float)."""
    h, w, c = size_var("H"), size_var("W"), size_var("C")
    return L.make_program(f"maxpool_hwc{k}s{stride}p{pad}", [("x", Array(Float, h, w, c))], lambda x: L.map2D(
        lambda win: L.map(lambda taps: L.reduce(lambda a, v: BUILTINS["max"](a, v), MOST_NEGATIVE, taps),
                          L.transpose(L.join(win))),
        L.slide2D(k, stride, L.pad2D(pad, pad, pad, pad, MOST_NEGATIVE, x))))


def maxpool_hwc_reference(x, k: int = 2, stride: int = 2, pad: int = 0):
    xp = np.pad(x.astype(np.float64), ((pad, pad), (pad, pad), (0, 0)), constant_values=MOST_NEGATIVE)
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(0, 1))[::stride, ::stride]
    return win.max(axis=(3, 4)).astype(np.float32)


def global_avgpool_hwc(sizes) -> Program:
    """The mean of each channel of ``[H][W][C]``: ``[C]`` (the divisor is a literal: the program is built for
    its height and width)."""
    h, w, c = size_var("H"), size_var("W"), size_var("C")
    scale = 1.0 / (int(sizes["H"]) * int(sizes["W"]))
    return L.make_program(f"global_avgpool_{sizes['H']}x{sizes['W']}", [("x", Array(Float, h, w, c))], lambda x: L.join(L.map(
        lambda ch: L.map(lambda s: s * scale, L.reduce(lambda a, v: a + v, 0.0, ch)), L.transpose(L.join(x)))))


def global_avgpool_hwc_reference(x):
    return x.astype(np.float64).mean(axis=(0, 1)).astype(np.float32)
