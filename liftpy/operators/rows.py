"""Row-wise operators of ``[M][N]``: softmax and layer normalisation (no affine parameters), each row reduced
twice and then mapped, with every reduction's result bound once by ``let`` so it is computed once per row.

Both need ``N`` as a value (a mean's divisor), so they are built for their sizes (``sized`` library entries)."""

from __future__ import annotations

import numpy as np

from ..ir import dsl as L
from ..ir.expr import Program
from ..ir.types import Array, Float, size_var
from ..ir.userfun import BUILTINS

MOST_NEGATIVE = -3.0e38  # the identity of max in practice: below every finite float the inputs hold
EPSILON = 1e-5  # layer norm's guard in the variance, as PyTorch's default


def softmax_rows(sizes) -> Program:
    """``exp(x - max(row)) / sum(exp(x - max(row)))`` for each row."""
    m, n = size_var("M"), size_var("N")
    mx, add, exp = BUILTINS["max"], BUILTINS["add"], BUILTINS["exp"]

    def row(r):
        return L.let(lambda top: L.let(
            lambda e: L.let(lambda total: L.map(lambda v: v / L.at(0, total), e), L.reduce(add, 0.0, e)),
            L.map(lambda v: exp(v - L.at(0, top)), r)), L.reduce(mx, MOST_NEGATIVE, r))

    return L.make_program(f"softmax_rows_{sizes['N']}", [("x", Array(Float, m, n))], lambda x: L.map(row, x))


def softmax_rows_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def layernorm_rows(sizes) -> Program:
    """``(x - mean) / sqrt(var + eps)`` for each row, the variance of the centred values (two passes)."""
    m, n = size_var("M"), size_var("N")
    add, sqrt = BUILTINS["add"], BUILTINS["sqrt"]
    inv_n = 1.0 / int(sizes["N"])

    def row(r):
        return L.let(lambda total: L.let(
            lambda centred: L.let(
                lambda sq: L.map(lambda v: v / sqrt(L.at(0, sq) * inv_n + EPSILON), centred),
                L.reduce(lambda acc, v: acc + v * v, 0.0, centred)),
            L.map(lambda v: v - L.at(0, total) * inv_n, r)), L.reduce(add, 0.0, r))

    return L.make_program(f"layernorm_rows_{sizes['N']}", [("x", Array(Float, m, n))], lambda x: L.map(row, x))


def layernorm_rows_reference(x):
    x = x.astype(np.float64)
    centred = x - x.mean(axis=1, keepdims=True)
    return (centred / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + EPSILON)).astype(np.float32)
