"""Dense linear algebra: matrix product, batched matrix product, matrix-vector product, and a fully
connected layer with bias and ReLU fused (``relu(W x + b)`` for a batch of inputs)."""

from __future__ import annotations

import numpy as np

from ..ir import dsl as L
from ..ir.userfun import BUILTINS
from ..ir.expr import Program
from ..ir.types import Array, Float, size_var


def _dot(a, b, init=0.0):
    return L.reduce(lambda acc, p: BUILTINS["multAndSumUp"](acc, L.get(p, 0), L.get(p, 1)), init, L.zip(a, b))


def matmul() -> Program:
    m, n, k = size_var("M"), size_var("N"), size_var("K")
    return L.make_program("matmul", [("A", Array(Float, m, k)), ("B", Array(Float, k, n))], lambda a, b: L.map(
        lambda row: L.map(lambda col: _dot(row, col), L.transpose(b)), a))


def matmul_reference(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def batched_matmul() -> Program:
    bs, m, n, k = size_var("B"), size_var("M"), size_var("N"), size_var("K")
    return L.make_program("batched_matmul", [("A", Array(Float, bs, m, k)), ("Bm", Array(Float, bs, k, n))],
                          lambda a, b: L.map(lambda pair: L.map(
                              lambda row: L.map(lambda col: _dot(row, col), L.transpose(L.get(pair, 1))),
                              L.get(pair, 0)), L.zip(a, b)))


def batched_matmul_reference(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def gemv() -> Program:
    m, n = size_var("M"), size_var("N")
    return L.make_program("gemv", [("A", Array(Float, m, n)), ("x", Array(Float, n))], lambda a, x: L.join(L.map(
        lambda row: _dot(row, x), a)))


def gemv_reference(a, x):
    return (a.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)


def fully_connected(relu: int = 1) -> Program:
    """``out[b][m] = relu(bias[m] + sum_n x[b][n] * w[m][n])``: the bias is the reduction's initial value
    and the ReLU (``relu=0``: none) is applied to its result, so both are fused into the one kernel."""
    bs, m, n = size_var("B"), size_var("M"), size_var("N")

    def out(wb, xb):
        total = _dot(L.get(wb, 0), xb, L.get(wb, 1))
        return L.map(BUILTINS["relu"], total) if relu else total

    return L.make_program("fully_connected" + ("" if relu else "_linear"),
                          [("x", Array(Float, bs, n)), ("w", Array(Float, m, n)), ("bias", Array(Float, m))],
                          lambda x, w, bias: L.map(lambda xb: L.join(L.map(lambda wb: out(wb, xb), L.zip(w, bias))), x))


def fully_connected_reference(x, w, bias, relu: int = 1):
    out = x.astype(np.float64) @ w.astype(np.float64).T + bias
    return (np.maximum(out, 0.0) if relu else out).astype(np.float32)


def add(relu: int = 0) -> Program:
    """Elementwise sum of two ``[N]`` arrays (a residual connection), ReLU fused when ``relu=1``."""
    n = size_var("N")
    return L.make_program("add" + ("_relu" if relu else ""), [("a", Array(Float, n)), ("b", Array(Float, n))],
                          lambda a, b: L.map(lambda p: BUILTINS["relu"](L.get(p, 0) + L.get(p, 1)) if relu
                                             else L.get(p, 0) + L.get(p, 1), L.zip(a, b)))


def add_reference(a, b, relu: int = 0):
    out = a.astype(np.float64) + b
    return (np.maximum(out, 0.0) if relu else out).astype(np.float32)


def dot() -> Program:
    """The dot product of two vectors: a whole-array reduction, computed in parallel as partial sums in one
    kernel and their sum in a second (``reduceKernels``)."""
    n = size_var("N")
    return L.make_program("dot", [("a", Array(Float, n)), ("b", Array(Float, n))], lambda a, b: _dot(a, b))


def dot_reference(a, b):
    return np.array([np.dot(a.astype(np.float64), b.astype(np.float64))], dtype=np.float32)


def total() -> Program:
    """The sum of a vector's elements."""
    n = size_var("N")
    return L.make_program("total", [("x", Array(Float, n))], lambda x: L.reduce(lambda acc, v: acc + v, 0.0, x))


def total_reference(x):
    return np.array([x.astype(np.float64).sum()], dtype=np.float32)


def maximum() -> Program:
    """The largest of a vector's elements (a whole-array reduction by max, split like a sum)."""
    n = size_var("N")
    return L.make_program("maximum", [("x", Array(Float, n))],
                          lambda x: L.reduce(lambda acc, v: BUILTINS["max"](acc, v), float("-inf"), x))


def maximum_reference(x):
    return np.array([x.max()], dtype=np.float32)
