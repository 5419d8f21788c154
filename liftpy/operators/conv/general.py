"""A general 2D convolution layer: ``KH x KW`` kernels, a stride per axis, padding per side, dilation per
axis, groups (depthwise when groups = channels = kernels), the bias as the reduction's initial value and
ReLU (``relu=1``; ``relu=6``: ReLU6) applied to the result: both fused into the one kernel.  With
``residual=1`` a second input, ``residual`` ``[OH][OW][M]`` (a shortcut), is added to each result before the
activation, in the same kernel (a network's residual add, ``liftpy.network.graph.fuse_residuals``).

Layout as in the Lift paper's Listing 3 (channels innermost): input ``[H][W][C]``, weights
``[M][KH][KW][C/G]``, biases ``[M]``, output ``[OH][OW][M]``.  Everything before the reduction is a view:
the padded input, the windows, the dilated taps (every ``d``-th element of a window of ``(K-1)d+1``, read
with ``at``) and the channels of each group (``split``).  The paper's layers (``liftpy explore conv --layer
...``) keep their own square-kernel program (``paper``, which says why it is another program) and its tiled
GEMM-view rules; this one covers the shapes that catalogue cannot write.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...ir import dsl as L
from ...ir.expr import Program
from ...ir.types import Array, Float, size_var
from ...ir.userfun import BUILTINS


def parse_pair(text, name: str) -> tuple[int, int]:
    """``3`` or ``3x5`` -> (3, 3) or (3, 5); positive whole numbers."""
    parts = str(text).lower().split("x")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(f"conv2d: {name} must be N or NxM (whole numbers), got {text!r}") from None
    if len(values) == 1:
        values = values * 2
    if len(values) != 2 or min(values) < 1:
        raise InputError(f"conv2d: {name} must be N or NxM with positive numbers, got {text!r}")
    return values


def parse_pads(text) -> tuple[int, int, int, int]:
    """``1`` (every side), ``1x2`` (rows x columns) or ``t/b/l/r`` -> (top, bottom, left, right)."""
    text = str(text)
    try:
        if "/" in text:
            values = tuple(int(p) for p in text.split("/"))
            if len(values) != 4:
                raise ValueError
        else:
            parts = tuple(int(p) for p in text.lower().split("x"))
            if len(parts) == 1:
                values = parts * 4
            elif len(parts) == 2:
                values = (parts[0], parts[0], parts[1], parts[1])
            else:
                raise ValueError
    except ValueError:
        raise InputError(f"conv2d: pad must be P, PHxPW or top/bottom/left/right (whole numbers), got {text!r}") from None
    if min(values) < 0:
        raise InputError(f"conv2d: padding cannot be negative, got {text!r}")
    return values


@dataclass(frozen=True)
class ConvShape:
    """The parameters of a layer, parsed once: kernel taps, stride, dilation per axis, padding per side."""

    kh: int
    kw: int
    sh: int
    sw: int
    dh: int
    dw: int
    top: int
    bottom: int
    left: int
    right: int

    @classmethod
    def of(cls, k="3x3", stride="1", pad="1", dilation="1", **_) -> "ConvShape":
        return cls(*parse_pair(k, "k"), *parse_pair(stride, "stride"), *parse_pair(dilation, "dilation"), *parse_pads(pad))

    @property
    def extent(self) -> tuple[int, int]:
        """Rows and columns a dilated kernel covers."""
        return (self.kh - 1) * self.dh + 1, (self.kw - 1) * self.dw + 1

    def output(self, h: int, w: int) -> tuple[int, int]:
        eh, ew = self.extent
        return (h + self.top + self.bottom - eh) // self.sh + 1, (w + self.left + self.right - ew) // self.sw + 1


def _dilate(d: int, k: int, xs):
    """Taps 0, d, 2d, ... of a window of (k-1)d+1 elements: pad to kd, cut into k rows of d, keep each first."""
    if d == 1:
        return xs
    return L.map(lambda row: L.at(0, row), L.split(d, L.pad(0, d - 1, 0.0, xs)))


def _activation(relu: int, v):
    if relu == 6:  # ReLU6 (MobileNet)
        return BUILTINS["min"](BUILTINS["max"](v, 0.0), 6.0)
    return BUILTINS["relu"](v) if relu else v


def conv2d(k="3x3", stride="1", pad="1", dilation="1", groups: int = 1, relu: int = 0, residual: int = 0) -> Program:
    cs = ConvShape.of(k, stride, pad, dilation)
    kh, kw, sh, sw, dh, dw = cs.kh, cs.kw, cs.sh, cs.sw, cs.dh, cs.dw
    top, bottom, left, right = cs.top, cs.bottom, cs.left, cs.right
    if groups < 1:
        raise InputError(f"conv2d: groups must be at least 1, got {groups}")
    c, h, w, m = size_var("C"), size_var("H"), size_var("W"), size_var("M")
    g = groups
    eh, ew = cs.extent
    name = (f"conv{kh}x{kw}s{sh}x{sw}p{top}_{bottom}_{left}_{right}d{dh}x{dw}g{g}" + ("res" if residual else "")
            + ("relu" if relu else ""))
    act = 0 if residual else relu  # with a residual, the activation follows the sum

    def pixel(window, weights, biases):
        # window: [eh][ew][C] -> [KH][KW][C] (dilation) -> [G][KH][KW][C/G] (groups)
        taps = _dilate(dh, kh, L.map(lambda row: _dilate(dw, kw, row), window))
        grouped = L.transpose(L.map(L.transpose, L.map(lambda row: L.map(lambda px: L.split(c / g, px), row), taps)))

        def kernel(kb, win):
            total = L.reduce(lambda acc, xw: BUILTINS["multAndSumUp"](acc, L.get(xw, 0), L.get(xw, 1)), L.get(kb, 1),
                             L.zip(L.join(L.join(win)), L.join(L.join(L.get(kb, 0)))))
            return L.map(lambda v: _activation(act, v), total) if act else total

        if g == 1:
            # One group: every kernel against the whole window, a map of maps over a dot product, which
            # the GEMM-view tiling (flattenMap2D, tile2DReduce) takes as a matrix product.
            return L.map(lambda kb: kernel(kb, taps), L.zip(weights, biases))  # [M][1]
        per_group = L.map(lambda gwb: L.map(lambda kb: kernel(kb, L.get(gwb, 0)), L.zip(L.get(gwb, 1), L.get(gwb, 2))),
                          L.zip(grouped, L.split(m / g, weights), L.split(m / g, biases)))
        return L.join(per_group)  # [M][1]

    def conv(x, wt, b):
        return L.map2D(lambda win: pixel(win, wt, b), L.slide2D((eh, ew), (sh, sw), L.pad2D(left, right, top, bottom, 0.0, x)))

    weights_and_biases = [("weights", Array(Float, m, kh, kw, c / g)), ("biases", Array(Float, m))]
    if not residual:
        return L.make_program(name, [("input", Array(Float, h, w, c))] + weights_and_biases, conv)
    # A residual connection added to each result before the activation, as a framework fuses it: an
    # elementwise function of the convolution's results and the shortcut, read at the same pixel and kernel.
    # Written over the joined windows (the product's rows, as flattenMap2D would give), it is a matrix
    # product's epilogue (``epilogue.py``): the product's tiles write the sum out, so it costs no kernel.
    oh, ow = cs.output(h, w)  # (with symbols: the count of windows ``slide``'s type gives)

    def body(x, r, wt, b):
        windows = L.join(L.slide2D((eh, ew), (sh, sw), L.pad2D(left, right, top, bottom, 0.0, x)))
        products = L.map(lambda win: pixel(win, wt, b), windows)  # [OH*OW][M][1]

        def pixel_sum(q):  # q: ([M][1] results, [M] shortcut)
            return L.map(lambda t: L.map(lambda v: _activation(relu, v + L.get(t, 1)), L.get(t, 0)),
                         L.zip(L.get(q, 0), L.get(q, 1)))

        return L.split(ow, L.map(pixel_sum, L.zip(products, L.join(r))))

    return L.make_program(name, [("input", Array(Float, h, w, c)), ("residual", Array(Float, oh, ow, m))]
                          + weights_and_biases, body)


def conv2d_reference(x, *arrays, k="3x3", stride="1", pad="1", dilation="1", groups: int = 1, relu: int = 0,
                     residual: int = 0):
    """A plain numpy loop over the kernel's taps: out[oy][ox][m] = b[m] + sum x_pad[oy*sh + i*dh][ox*sw + j*dw]
    [g*C/G + c] * w[m][i][j][c], with g the group of kernel m (+ shortcut[oy][ox][m] with a residual)."""
    shortcut, weights, biases = arrays if residual else (None, *arrays)
    cs = ConvShape.of(k, stride, pad, dilation)
    kh, kw, sh, sw, dh, dw = cs.kh, cs.kw, cs.sh, cs.sw, cs.dh, cs.dw
    xp = np.pad(x.astype(np.float64), ((cs.top, cs.bottom), (cs.left, cs.right), (0, 0)))
    c, m = x.shape[2], weights.shape[0]
    cg, mg = c // groups, m // groups
    oh, ow = cs.output(x.shape[0], x.shape[1])
    out = np.tile(biases.astype(np.float64), (oh, ow, 1))
    for gi in range(groups):
        wg = weights[gi * mg:(gi + 1) * mg].astype(np.float64)  # [Mg][KH][KW][Cg]
        for i in range(kh):
            for j in range(kw):
                patch = xp[i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, gi * cg:(gi + 1) * cg]
                out[:, :, gi * mg:(gi + 1) * mg] += patch @ wg[:, i, j, :].T
    if residual:
        out += shortcut.astype(np.float64)
    if relu:
        out = np.clip(out, 0.0, 6.0) if relu == 6 else np.maximum(out, 0.0)
    return out.astype(np.float32)


def conv2d_flops(sizes, params) -> float:
    cs = ConvShape.of(**params)
    oh, ow = cs.output(sizes["H"], sizes["W"])
    return 2.0 * oh * ow * sizes["M"] * cs.kh * cs.kw * sizes["C"] / params["groups"]


def conv2d_check(sizes, params) -> None:
    """Sizes the program's types cannot state: groups dividing channels and kernels, a window that fits."""
    g = params["groups"]
    for n in ("C", "M"):
        if sizes[n] % g:
            raise InputError(f"conv2d: groups={g} must divide {n}={sizes[n]} (depthwise: groups = C = M)")
    cs = ConvShape.of(**params)
    for axis, n, k, d, pads, extent in (("H", sizes["H"], cs.kh, cs.dh, cs.top + cs.bottom, cs.extent[0]),
                                        ("W", sizes["W"], cs.kw, cs.dw, cs.left + cs.right, cs.extent[1])):
        if n + pads < extent:
            raise InputError(f"conv2d: a {k}-tap kernel dilated by {d} spans {extent} > {axis}={n} + padding {pads}")
