"""The convolution layer of the Lift paper's Listing 3, and a hand-lowered OpenCL version of it.

High level: pad2D, slide2D, map2D over the windows, zip of kernel weights and biases, a reduction of the
flattened window against each kernel.  The interpreter evaluates it on several layer shapes (including
stride 2 and a 5x5 kernel) and is compared with a plain numpy loop.

Low level: a global 3D map over kernels (dimension 2), window rows (1) and windows (0), each work-item
reducing its flattened window sequentially in private memory, optionally with asVector(4) and dot.  The
generated kernel is compared with the numpy loop too.  Exits with status 1 on any mismatch.

Layouts: input [[[float]C]W]H (channels innermost), weights [[[[float]C]K]K]M, biases [float]M.
"""

import sys

import numpy as np

from liftpy import Array, Float, add, asVector, dot, evaluate, id, join, make_program, map, map2D, mapGlb, mapSeq
from liftpy import multAndSumUp, pad2D, reduce, reduceSeq, sizes, slide2D, toGlobal, toPrivate, zip

C, H, W, M = sizes("C H W M")


def conv_layer(K: int, S: int, P: int):
    """Listing 3: the high-level program for K x K kernels, stride S, padding P."""
    return make_program(
        f"conv{K}x{K}s{S}p{P}",
        [("weights", Array(Float, M, K, K, C)), ("biases", Array(Float, M)), ("input", Array(Float, H, W, C))],
        lambda weights, biases, input: map2D(
            lambda window: map(
                lambda kb: reduce(lambda acc, xw: multAndSumUp(acc, xw[0], xw[1]),
                                  kb[1], zip(join(join(window)), join(join(kb[0])))),
                zip(weights, biases)),
            slide2D(K, S, pad2D(P, P, P, P, 0.0, input))),
    )


def conv_lowered(K: int, S: int, P: int, vectorize: bool):
    """A hand-lowered version: output [M][outH][outW], one work-item per output value."""

    def window_dot(kb, window):
        flat_x, flat_w = join(join(window)), join(join(kb[0]))
        if vectorize:
            return reduceSeq(lambda acc, xw: add(acc, dot(xw[0], xw[1])), toPrivate(id(kb[1])),
                             zip(asVector(4, flat_x), asVector(4, flat_w)))
        return reduceSeq(lambda acc, xw: multAndSumUp(acc, xw[0], xw[1]), toPrivate(id(kb[1])), zip(flat_x, flat_w))

    return make_program(
        f"conv{K}x{K}s{S}p{P}{'_vec4' if vectorize else ''}",
        [("weights", Array(Float, M, K, K, C)), ("biases", Array(Float, M)), ("input", Array(Float, H, W, C))],
        lambda weights, biases, input: mapGlb(2, lambda kb:
            mapGlb(1, lambda wrow:
                join(mapGlb(0, lambda window: toGlobal(mapSeq(id, window_dot(kb, window))), wrow)),
                slide2D(K, S, pad2D(P, P, P, P, 0.0, input))),
            zip(weights, biases)),
    )


def numpy_conv(weights, biases, x, S, P):
    """A plain loop over kernel offsets: out[m, y, x] = b[m] + sum x_pad[y*S+i, x*S+j, c] * w[m, i, j, c]."""
    m, k, _, c = weights.shape
    xp = np.pad(x, ((P, P), (P, P), (0, 0)))
    oh = (xp.shape[0] - k) // S + 1
    ow = (xp.shape[1] - k) // S + 1
    out = np.zeros((m, oh, ow)) + biases[:, None, None]
    for i in range(k):
        for j in range(k):
            patch = xp[i:i + S * (oh - 1) + 1:S, j:j + S * (ow - 1) + 1:S, :]  # [oh][ow][c]
            out += np.einsum("yxc,mc->myx", patch, weights[:, i, j, :])
    return out


def main() -> int:
    rng = np.random.default_rng(2)
    ok = True
    print("High-level program (Listing 3) in the interpreter:")
    shapes = [  # C, H, W, M, K, S, P
        (3, 8, 8, 4, 3, 1, 1),
        (4, 9, 7, 3, 3, 2, 1),
        (2, 11, 10, 5, 5, 1, 2),
        (8, 12, 12, 6, 5, 2, 0),
    ]
    for c, h, w, m, k, s, p in shapes:
        prog = conv_layer(k, s, p)
        wts = rng.standard_normal((m, k, k, c)).astype(np.float32)
        b = rng.standard_normal(m).astype(np.float32)
        x = rng.standard_normal((h, w, c)).astype(np.float32)
        got = evaluate(prog, wts, b, x)  # [outH][outW][M][1]
        got = np.transpose(got[..., 0], (2, 0, 1))
        ref = numpy_conv(wts.astype(np.float64), b, x.astype(np.float64), s, p)
        err = float(np.max(np.abs(got - ref)))
        good = got.shape == ref.shape and err < 1e-4
        ok &= good
        print(f"  C={c} H={h} W={w} M={m} K={k} stride={s} pad={p}: output {ref.shape}, max error {err:.2e} {'OK' if good else 'MISMATCH'}")

    print("Hand-lowered program on OpenCL:")
    printed = False
    for c, h, w, m, k, s, p in shapes:
        for vec in (False, True):
            if vec and (k * k * c) % 4:
                continue
            prog = conv_lowered(k, s, p, vec)
            kernel = prog.compile({"C": c, "H": h, "W": w, "M": m})
            if vec and not printed:
                print(kernel.source)
                printed = True
            wts = rng.standard_normal((m, k, k, c)).astype(np.float32)
            b = rng.standard_normal(m).astype(np.float32)
            x = rng.standard_normal((h, w, c)).astype(np.float32)
            result = kernel.run(wts, b, x)
            ref = numpy_conv(wts.astype(np.float64), b, x.astype(np.float64), s, p)
            interp = evaluate(prog, wts, b, x)
            err = float(np.max(np.abs(result.output - ref)))
            err_i = float(np.max(np.abs(result.output - interp)))
            good = err < 1e-4 and err_i < 1e-5
            ok &= good
            print(f"  C={c} H={h} W={w} M={m} K={k} stride={s} pad={p} {'asVector(4)+dot' if vec else 'scalar        '}: "
                  f"|kernel - numpy| = {err:.2e}, |kernel - interpreter| = {err_i:.2e} {'OK' if good else 'MISMATCH'}")
    print("all match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
