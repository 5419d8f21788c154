"""The 2D stencil of the Lift paper's Listing 1, compiled to OpenCL and checked.

slide2D makes 3x3 neighbourhoods (a view: no copy), each work-group takes a row of them (mapWrg), each
work-item one neighbourhood (mapLcl), and a sequential reduction over the zipped, flattened
neighbourhood and weights accumulates in private memory before the result is copied to global memory.

Runs on three sizes (one non-square) and compares the kernel's output with the reference interpreter and
with an independent numpy computation; exits with status 1 on any mismatch.
"""

import sys

import numpy as np

from liftpy import Array, Float, evaluate, id, join, mapLcl, mapSeq, mapWrg, multAndSumUp, program, reduceSeq, sizes, slide2D
from liftpy import toGlobal, toPrivate, zip

H, W = sizes("H W")


@program
def stencil2D(weights: Array(Float, 3, 3), data: Array(Float, H, W)):
    return mapWrg(0, lambda row: join(mapLcl(0, lambda nbh:
        toGlobal(mapSeq(id, reduceSeq(lambda acc, p: multAndSumUp(acc, p[0], p[1]),
                                      toPrivate(id(0.0)),
                                      zip(join(nbh), join(weights))))),
        row)), slide2D(3, 1, data))


def numpy_stencil(weights, data):
    h, w = data.shape
    out = np.zeros((h - 2, w - 2), dtype=np.float64)
    for i in range(3):
        for j in range(3):
            out += weights[i, j] * data[i:i + h - 2, j:j + w - 2]
    return out


def main() -> int:
    rng = np.random.default_rng(0)
    ok = True
    for k, (h, w) in enumerate([(16, 16), (37, 61), (64, 130)]):
        weights = rng.standard_normal((3, 3)).astype(np.float32)
        data = rng.standard_normal((h, w)).astype(np.float32)
        kernel = stencil2D.compile({"H": h, "W": w})
        if k == 0:
            print(kernel.source)
        result = kernel.run(weights, data, repeat=5, warmup=1)
        interp = evaluate(stencil2D, weights, data)
        independent = numpy_stencil(weights.astype(np.float64), data.astype(np.float64))
        e1 = float(np.max(np.abs(result.output - interp)))
        e2 = float(np.max(np.abs(result.output - independent)))
        good = e1 <= 1e-5 and e2 <= 1e-4
        ok &= good
        print(f"H={h:4d} W={w:4d}  launch {kernel.launch}  {result.time_ms:.4f} ms  "
              f"|kernel - interpreter| = {e1:.2e}  |kernel - numpy| = {e2:.2e}  {'OK' if good else 'MISMATCH'}")
    print("all sizes match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
