"""Stencils: Jacobi in one, two and three dimensions and a 3x3 Gaussian blur, with any boundary.

Each neighbour is read with ``at`` from the window ``slide`` gives over the padded grid, and the padding is
a boundary function of the view (clamp, mirror, wrap) or the constant zero: no padded copy is made unless a
variant chooses to.  The numpy references pad with ``np.pad`` and add shifted slices.
"""

from __future__ import annotations

import numpy as np

from ..ir import dsl as L
from ..ir.expr import Program
from ..ir.types import Array, Float, size_var

BOUNDARY_CHOICES = ("clamp", "mirror", "wrap", "zero")
_NUMPY = {"clamp": "edge", "mirror": "symmetric", "wrap": "wrap", "zero": "constant"}


def _pad_value(boundary: str):
    return 0.0 if boundary == "zero" else boundary


def _padded(x: np.ndarray, boundary: str) -> np.ndarray:
    return np.pad(x.astype(np.float64), 1, mode=_NUMPY[boundary])


def jacobi1d(boundary: str = "clamp") -> Program:
    n = size_var("N")
    return L.make_program(f"jacobi1d_{boundary}", [("x", Array(Float, n))], lambda x: L.map(
        lambda w: (L.at(0, w) + L.at(1, w) + L.at(2, w)) * (1.0 / 3.0),
        L.slide(3, 1, L.pad(1, 1, _pad_value(boundary), x))))


def jacobi1d_reference(x, boundary: str = "clamp"):
    p = _padded(x, boundary)
    return ((p[:-2] + p[1:-1] + p[2:]) / 3.0).astype(np.float32)


def jacobi2d(boundary: str = "clamp") -> Program:
    h, w = size_var("H"), size_var("W")

    def cell(nb):
        row = lambda i: L.at(i, nb)  # noqa: E731
        return (L.at(1, row(1)) + L.at(1, row(0)) + L.at(1, row(2)) + L.at(0, row(1)) + L.at(2, row(1))) * 0.2

    return L.make_program(f"jacobi2d_{boundary}", [("grid", Array(Float, h, w))], lambda g: L.map2D(
        cell, L.slide2D(3, 1, L.pad2D(1, 1, 1, 1, _pad_value(boundary), g))))


def jacobi2d_reference(g, boundary: str = "clamp"):
    p = _padded(g, boundary)
    c = p[1:-1, 1:-1]
    return ((c + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) * 0.2).astype(np.float32)


def jacobi3d(boundary: str = "clamp") -> Program:
    d, h, w = size_var("D"), size_var("H"), size_var("W")

    def cell(nb):
        e = lambda i, j, k: L.at(k, L.at(j, L.at(i, nb)))  # noqa: E731
        total = e(1, 1, 1) + e(0, 1, 1) + e(2, 1, 1) + e(1, 0, 1) + e(1, 2, 1) + e(1, 1, 0) + e(1, 1, 2)
        return total * (1.0 / 7.0)

    return L.make_program(f"jacobi3d_{boundary}", [("grid", Array(Float, d, h, w))], lambda g: L.map3D(
        cell, L.slide3D(3, 1, L.pad3D(1, 1, 1, 1, 1, 1, _pad_value(boundary), g))))


def jacobi3d_reference(g, boundary: str = "clamp"):
    p = _padded(g, boundary)
    c = p[1:-1, 1:-1, 1:-1]
    total = (c + p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
             + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:])
    return (total / 7.0).astype(np.float32)


GAUSS = ((1, 2, 1), (2, 4, 2), (1, 2, 1))  # divided by 16


def blur2d(boundary: str = "clamp") -> Program:
    h, w = size_var("H"), size_var("W")

    def cell(nb):
        terms = [L.at(j, L.at(i, nb)) * (GAUSS[i][j] / 16.0) for i in range(3) for j in range(3)]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    return L.make_program(f"blur2d_{boundary}", [("image", Array(Float, h, w))], lambda img: L.map2D(
        cell, L.slide2D(3, 1, L.pad2D(1, 1, 1, 1, _pad_value(boundary), img))))


def blur2d_reference(img, boundary: str = "clamp"):
    p = _padded(img, boundary)
    h, w = img.shape
    out = sum(p[i:i + h, j:j + w] * (GAUSS[i][j] / 16.0) for i in range(3) for j in range(3))
    return out.astype(np.float32)
