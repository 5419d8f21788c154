"""Micro-benchmark: how NVIDIA's OpenCL reads and writes halves (vload_halfN from global vs a ushortN load
converted from private memory), against float4, add of two 2^26 arrays."""
import json, os, sys
import numpy as np
import pyopencl as cl

N = 1 << 26
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
dev = ctx.devices[0]
print(dev.name, dev.extensions.count("fp16"))
src = r"""
kernel void f4(global const float* a, global const float* b, global float* o) {
  int i = get_global_id(0);
  vstore4(vload4(i, a) + vload4(i, b), i, o);
}
kernel void h1(global const half* a, global const half* b, global half* o) {
  int i = get_global_id(0);
  vstore_half_rte(vload_half(i, a) + vload_half(i, b), i, o);
}
kernel void h4(global const half* a, global const half* b, global half* o) {
  int i = get_global_id(0);
  vstore_half4_rte(vload_half4(i, a) + vload_half4(i, b), i, o);
}
kernel void h8(global const half* a, global const half* b, global half* o) {
  int i = get_global_id(0);
  vstore_half8_rte(vload_half8(i, a) + vload_half8(i, b), i, o);
}
kernel void u8(global const ushort* a, global const ushort* b, global ushort* o) {
  int i = get_global_id(0);
  ushort8 ra = vload8(i, a), rb = vload8(i, b);
  float8 x = vload_half8(0, (const private half*)&ra) + vload_half8(0, (const private half*)&rb);
  ushort8 r;
  vstore_half8_rte(x, 0, (private half*)&r);
  vstore8(r, i, o);
}
kernel void u4(global const ushort* a, global const ushort* b, global ushort* o) {
  int i = get_global_id(0);
  ushort4 ra = vload4(i, a), rb = vload4(i, b);
  float4 x = vload_half4(0, (const private half*)&ra) + vload_half4(0, (const private half*)&rb);
  ushort4 r;
  vstore_half4_rte(x, 0, (private half*)&r);
  vstore4(r, i, o);
}
kernel void u2(global const uint* a, global const uint* b, global uint* o) {
  int i = get_global_id(0);
  uint ra = a[i], rb = b[i];
  float2 x = vload_half2(0, (const private half*)&ra) + vload_half2(0, (const private half*)&rb);
  uint r;
  vstore_half2_rte(x, 0, (private half*)&r);
  o[i] = r;
}
"""
prg = cl.Program(ctx, src).build()
mf = cl.mem_flags
a16 = np.random.rand(N).astype(np.float16); b16 = np.random.rand(N).astype(np.float16)
a32 = a16.astype(np.float32); b32 = b16.astype(np.float32)
res = {}
def bench(name, bufs, gsize, out, ref, dtype):
    k = getattr(prg, name)
    for lsz in (128, 256):
        ts = []
        for r in range(25):
            ev = k(q, (gsize,), (lsz,), *bufs)
            ev.wait()
            ts.append((ev.profile.end - ev.profile.start) * 1e-6)
        got = np.empty(N, dtype); cl.enqueue_copy(q, got, out)
        err = float(np.max(np.abs(got.astype(np.float32) - ref)))
        ms = float(np.median(ts[5:]))
        nbytes = 3 * N * np.dtype(dtype).itemsize
        res[f"{name}/{lsz}"] = {"ms": ms, "gb_s": nbytes / ms / 1e6, "err": err}
        print(f"{name:4} lsz {lsz}: {ms:.4f} ms {nbytes/ms/1e6:7.0f} GB/s err {err:.3g}", flush=True)
A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a32); B = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b32)
O = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * N)
bench("f4", (A, B, O), N // 4, O, a32 + b32, np.float32)
A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a16); B = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b16)
O = cl.Buffer(ctx, mf.WRITE_ONLY, 2 * N)
ref = (a32 + b32).astype(np.float16).astype(np.float32)
for name, w in (("h1", 1), ("h4", 4), ("h8", 8), ("u2", 2), ("u4", 4), ("u8", 8)):
    bench(name, (A, B, O), N // w, O, ref, np.float16)
out = os.environ.get("OUT", "/tmp")
json.dump(res, open(os.path.join(out, "halfload.json"), "w"), indent=1)
