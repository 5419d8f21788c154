"""Does a Jacobi sweep gain from half storage once each work-item computes a run of a row? (issue 57)

liftpy's fastest Jacobi kernel computes one output per work-item, five scalar reads each; in half storage
those are five two-byte ``vload_half`` reads and it ran no faster than in floats (0.25 ms at 8192^2,
``h200-half.json``).  Here, by hand, on an 8192^2 grid with clamped borders: one output an item (``f1``,
``h1``, what liftpy generates) against eight outputs of a row an item (``f8``, ``h8``): the three rows' eight
elements loaded as one aligned vector each (for halves one sixteen-byte word, converted in private memory,
``half_add``'s way), the two neighbours beyond them as scalars, the eight results stored as one vector; the
border's items take the clamped path.  Each kernel's result is compared with numpy's (``wrong``: elements
further than the precision allows).  Writes ``$OUT/h200-halfstencil.json``.

    python benchmarks/device/halfstencil.py
"""
import json
import os

import numpy as np
import pyopencl as cl

from liftpy.codegen.half import WORD_HELPERS  # (the words liftpy's kernels move halves in)

N = int(os.environ.get("HALFSTENCIL_N", 8192))  # (a smaller grid to try it on a CPU)

SOURCE = WORD_HELPERS + r"""
#define AT(i, j) ((i) * N + (j))
#define CL(v) min(N - 1, max(0, (v)))

kernel void f1(global const float* x, global float* o) {
  int j = get_global_id(0), i = get_global_id(1);
  o[AT(i, j)] = ((((x[AT(i, j)] + x[AT(CL(i - 1), j)]) + x[AT(CL(i + 1), j)]) + x[AT(i, CL(j - 1))])
                 + x[AT(i, CL(j + 1))]) * 0.2f;
}

kernel void h1(global const half* x, global half* o) {
  int j = get_global_id(0), i = get_global_id(1);
  vstore_half_rte(((((vload_half(AT(i, j), x) + vload_half(AT(CL(i - 1), j), x)) + vload_half(AT(CL(i + 1), j), x))
                    + vload_half(AT(i, CL(j - 1)), x)) + vload_half(AT(i, CL(j + 1)), x)) * 0.2f, AT(i, j), o);
}

#define RUN8(LOAD8, LOAD1, STORE8)                                                         \
  int j = get_global_id(0) * 8, i = get_global_id(1);                                     \
  float8 c, u, d, l, r;                                                                   \
  if (i > 0 && i < N - 1 && j > 0 && j + 8 < N) {                                         \
    c = LOAD8(AT(i, j)); u = LOAD8(AT(i - 1, j)); d = LOAD8(AT(i + 1, j));                \
    float left = LOAD1(AT(i, j - 1)), right = LOAD1(AT(i, j + 8));                        \
    l = (float8)(left, c.s0123, c.s456);                                                  \
    r = (float8)(c.s1234, c.s567, right);                                                 \
  } else {                                                                                \
    float cs[8], us[8], ds[8], ls[8], rs[8];                                              \
    for (int k = 0; k < 8; k++) {                                                         \
      cs[k] = LOAD1(AT(i, j + k)); us[k] = LOAD1(AT(CL(i - 1), j + k));                   \
      ds[k] = LOAD1(AT(CL(i + 1), j + k)); ls[k] = LOAD1(AT(i, CL(j + k - 1)));           \
      rs[k] = LOAD1(AT(i, CL(j + k + 1)));                                                \
    }                                                                                     \
    c = vload8(0, cs); u = vload8(0, us); d = vload8(0, ds); l = vload8(0, ls); r = vload8(0, rs); \
  }                                                                                       \
  STORE8(((((c + u) + d) + l) + r) * 0.2f, AT(i, j));

#define F8(a) (*(const global float8*)(x + (a)))
#define F1(a) (x[(a)])
#define SF8(v, a) (*(global float8*)(o + (a)) = (v))
kernel void f8(global const float* x, global float* o) { RUN8(F8, F1, SF8) }

#define H8(a) load_half8_word(x + (a))
#define H1(a) vload_half((a), x)
#define SH8(v, a) store_half8_word((v), o + (a))
kernel void h8(global const half* x, global half* o) { RUN8(H8, H1, SH8) }
"""


def reference(x: np.ndarray) -> np.ndarray:
    p = np.pad(x.astype(np.float64), 1, mode="edge")
    return (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) * 0.2


def main() -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    print(ctx.devices[0].name, flush=True)
    program = cl.Program(ctx, SOURCE).build(options=[f"-DN={N}"])
    rng = np.random.default_rng(0)
    x16 = rng.standard_normal((N, N)).astype(np.float16)
    want = reference(x16)
    mf = cl.mem_flags
    res = {}
    for kernel, dtype, per_item, tol in (("f1", np.float32, 1, 1e-5), ("f8", np.float32, 8, 1e-5),
                                         ("h1", np.float16, 1, 2e-3), ("h8", np.float16, 8, 2e-3)):
        xs = x16.astype(dtype)
        xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
        ob = cl.Buffer(ctx, mf.WRITE_ONLY, xs.nbytes)
        k = getattr(program, kernel)
        for lsz in ((64, 4), (128, 2), (256, 1)):
            ts = []
            for _ in range(25):
                ev = k(queue, (N // per_item, N), lsz, xb, ob)
                ev.wait()
                ts.append((ev.profile.end - ev.profile.start) * 1e-6)
            got = np.empty_like(xs)
            cl.enqueue_copy(queue, got, ob)
            err = np.abs(got.astype(np.float64) - want) / np.maximum(np.abs(want), 1.0)
            wrong = int(np.sum(~(err <= tol)))
            ms = float(np.median(ts[5:]))
            nbytes = 2 * xs.nbytes
            res[f"{kernel}/{lsz[0]}x{lsz[1]}"] = {"ms": ms, "gb_s": nbytes / ms / 1e6, "wrong": wrong}
            print(f"{kernel} local {lsz}: {ms:.4f} ms {nbytes / ms / 1e6:7.0f} GB/s wrong {wrong}", flush=True)
    best = {k: min(v["ms"] for n, v in res.items() if n.startswith(k + "/")) for k in ("f1", "f8", "h1", "h8")}
    print("best ms", best, "h8 vs f1", best["f1"] / best["h8"], "h8 vs f8", best["f8"] / best["h8"])
    json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "h200-halfstencil.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
