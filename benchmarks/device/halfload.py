"""Micro-benchmark: how NVIDIA's OpenCL reads and writes halves (vload_halfN from global vs a ushortN load
converted from private memory), against float4, add of two 2^26 arrays (``half_add.py``).

    python benchmarks/device/halfload.py     # writes $OUT/halfload.json
"""
import numpy as np

from half_add import run

src = r"""
kernel void h1(global const half* a, global const half* b, global half* o) {
  int i = get_global_id(0);
  vstore_half_rte(vload_half(i, a) + vload_half(i, b), i, o);
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

a16 = np.random.rand(1 << 26).astype(np.float16)
b16 = np.random.rand(1 << 26).astype(np.float16)
run("halfload", src, (("h1", 1), ("h4", 4), ("h8", 8), ("u2", 2), ("u4", 4), ("u8", 8)), a16, b16)
