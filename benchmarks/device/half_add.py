"""What the half-storage micro-benchmarks share (``halfload.py``, ``halfconv.py``): two arrays of N halves
added by each kernel of one OpenCL source (every kernel's arguments: two inputs and an output), timed with
the queue's profiling events at several group sizes, beside a float4 add of the same values (``FLOAT4``), and
each result compared with numpy's; the records written to ``$OUT/NAME.json``."""
import json
import os

import numpy as np
import pyopencl as cl

FLOAT4 = r"""
kernel void f4(global const float* a, global const float* b, global float* o) {
  int i = get_global_id(0);
  vstore4(vload4(i, a) + vload4(i, b), i, o);
}
kernel void h4(global const half* a, global const half* b, global half* o) {
  int i = get_global_id(0);
  vstore_half4_rte(vload_half4(i, a) + vload_half4(i, b), i, o);
}
"""


def run(name: str, source: str, kernels, a16: np.ndarray, b16: np.ndarray, group_sizes=(128, 256), unchecked=()) -> dict:
    """``kernels``: (kernel name, halves an item) each, run over ``a16`` and ``b16`` (float16 arrays of N)
    after ``f4`` over the same values as floats; ``unchecked``: kernels whose output is not a sum (a copy).
    Each record: ``ms`` (median of 20 runs after 5), ``gb_s`` (three arrays' bytes), ``wrong`` (elements not
    equal to numpy's sum rounded to half, NaN equal to NaN; -1 unchecked)."""
    n = len(a16)
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    dev = ctx.devices[0]
    print(dev.name, "cl_khr_fp16" in dev.extensions, dev.single_fp_config)
    program = cl.Program(ctx, FLOAT4 + source).build()
    mf = cl.mem_flags
    res = {}

    def bench(kernel, bufs, items, out, want, dtype):
        k = getattr(program, kernel)  # (once: pyopencl builds a kernel object at each retrieval)
        for lsz in group_sizes:
            ts = []
            for _ in range(25):
                ev = k(queue, (items,), (lsz,), *bufs)
                ev.wait()
                ts.append((ev.profile.end - ev.profile.start) * 1e-6)
            got = np.empty(n, dtype)
            cl.enqueue_copy(queue, got, out)
            g, w = got.astype(np.float32), None if want is None else want.astype(np.float32)
            wrong = -1 if w is None else int(np.sum(~((g == w) | (np.isnan(g) & np.isnan(w)))))
            ms = float(np.median(ts[5:]))
            nbytes = 3 * n * np.dtype(dtype).itemsize
            res[f"{kernel}/{lsz}"] = {"ms": ms, "gb_s": nbytes / ms / 1e6, "wrong": wrong}
            print(f"{kernel:4} lsz {lsz}: {ms:.4f} ms {nbytes / ms / 1e6:7.0f} GB/s wrong {wrong}", flush=True)

    a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
    buffers = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x) for x in (a32, b32)]
    out = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * n)
    bench("f4", (*buffers, out), n // 4, out, a32 + b32, np.float32)
    buffers = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x) for x in (a16, b16)]
    out = cl.Buffer(ctx, mf.WRITE_ONLY, 2 * n)
    with np.errstate(all="ignore"):
        want = (a32 + b32).astype(np.float16)
    for kernel, halves in kernels:
        bench(kernel, (*buffers, out), n // halves, out, None if kernel in unchecked else want, np.float16)
    json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), f"{name}.json"), "w"), indent=1)
    return res
