"""Micro-benchmark: half storage read and written with the conversion done by integer and float
operations (no ``vload_half``), against float4 and ``vload_half4``, adding two 2^26 arrays.

Why: on NVIDIA's OpenCL ``vload_half4`` reaches 3.6 TB/s and ``vload_half8`` 1.7 (``halfload.py``), which
caps half storage's add at 1.76x its float time.  If sixteen-byte loads of halves converted by bit
operations run at float4's 4.1 TB/s, half storage can pass 1.8x.

    python benchmarks/device/halfconv.py     # writes $OUT/halfconv.json (``half_add.py``)
    HALFCONV_ONLY=h4,v8 HALFCONV_N=4194304 python benchmarks/device/halfconv.py   # some kernels, fewer halves
"""
import os

import numpy as np

from half_add import run

N = int(os.environ.get("HALFCONV_N", 1 << 26))
assert N % (8 * 512) == 0, "HALFCONV_N: a multiple of 4096 (eight halves an item, groups of up to 512)"
src = r"""
// half bits -> float: normals by shifting the exponent, subnormals through an int -> float conversion,
// infinities and NaNs kept.
inline float h2f(uint h) {
  uint e = h & 0x7c00u, m = h & 0x3ffu;
  float v = e == 0u ? (float)m * 0x1p-24f : as_float(((h & 0x7fffu) << 13) + 0x38000000u);
  v = e == 0x7c00u ? as_float(0x7f800000u | (m << 13)) : v;
  return as_float(as_uint(v) | ((h & 0x8000u) << 16));
}
// float -> half bits, round to nearest even (F. Giesen's float_to_half_fast3_rtne).
inline uint f2h(float x) {
  uint f = as_uint(x), sign = f & 0x80000000u;
  f ^= sign;
  uint o;
  if (f >= 0x47800000u) {
    o = f > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (f < 0x38800000u) {
    o = as_uint(as_float(f) + 0.5f) - 0x3f000000u;
  } else {
    uint odd = (f >> 13) & 1u;
    f += 0xc8000fffu + odd;
    o = f >> 13;
  }
  return o | (sign >> 16);
}
inline float2 h2f2(uint w) { return (float2)(h2f(w & 0xffffu), h2f(w >> 16)); }
inline uint f2h2(float2 v) { return f2h(v.x) | (f2h(v.y) << 16); }

kernel void c8(global const uint4* a, global const uint4* b, global uint4* o) {
  int i = get_global_id(0);
  o[i] = a[i] ^ b[i];
}
kernel void m2(global const uint* a, global const uint* b, global uint* o) {
  int i = get_global_id(0);
  o[i] = f2h2(h2f2(a[i]) + h2f2(b[i]));
}
kernel void m4(global const uint2* a, global const uint2* b, global uint2* o) {
  int i = get_global_id(0);
  uint2 x = a[i], y = b[i];
  o[i] = (uint2)(f2h2(h2f2(x.x) + h2f2(y.x)), f2h2(h2f2(x.y) + h2f2(y.y)));
}
kernel void m8(global const uint4* a, global const uint4* b, global uint4* o) {
  int i = get_global_id(0);
  uint4 x = a[i], y = b[i];
  o[i] = (uint4)(f2h2(h2f2(x.x) + h2f2(y.x)), f2h2(h2f2(x.y) + h2f2(y.y)),
                 f2h2(h2f2(x.z) + h2f2(y.z)), f2h2(h2f2(x.w) + h2f2(y.w)));
}
kernel void v8(global const uint4* a, global const uint4* b, global uint4* o) {
  // sixteen-byte loads and stores, converted four halves at a time in private memory
  int i = get_global_id(0);
  uint4 x = a[i], y = b[i], r;
  const private half* px = (const private half*)&x;
  const private half* py = (const private half*)&y;
  vstore_half4_rte(vload_half4(0, px) + vload_half4(0, py), 0, (private half*)&r);
  vstore_half4_rte(vload_half4(1, px) + vload_half4(1, py), 1, (private half*)&r);
  o[i] = r;
}
kernel void v8s(global const uint4* a, global const uint4* b, global uint4* o) {
  // the same, converted two halves at a time
  int i = get_global_id(0);
  uint4 x = a[i], y = b[i], r;
  const private half* px = (const private half*)&x;
  const private half* py = (const private half*)&y;
  for (int j = 0; j < 4; j++)
    vstore_half2_rte(vload_half2(j, px) + vload_half2(j, py), j, (private half*)&r);
  o[i] = r;
}
inline float h2f_fast(uint h) {  // normals and subnormals exact when subnormal floats are kept, no inf/NaN
  return as_float((((h & 0x7fffu) << 13) | 0u)) * 0x1p112f * ((h & 0x8000u) ? -1.0f : 1.0f);
}
kernel void f8(global const uint4* a, global const uint4* b, global half* o) {
  // a multiply per half to convert the loads, the store by vstore_half4_rte twice
  int i = get_global_id(0);
  uint4 x = a[i], y = b[i];
  float4 lo = (float4)(h2f_fast(x.x & 0xffffu) + h2f_fast(y.x & 0xffffu), h2f_fast(x.x >> 16) + h2f_fast(y.x >> 16),
                       h2f_fast(x.y & 0xffffu) + h2f_fast(y.y & 0xffffu), h2f_fast(x.y >> 16) + h2f_fast(y.y >> 16));
  float4 hi = (float4)(h2f_fast(x.z & 0xffffu) + h2f_fast(y.z & 0xffffu), h2f_fast(x.z >> 16) + h2f_fast(y.z >> 16),
                       h2f_fast(x.w & 0xffffu) + h2f_fast(y.w & 0xffffu), h2f_fast(x.w >> 16) + h2f_fast(y.w >> 16));
  vstore_half4_rte(lo, 2 * i, o);
  vstore_half4_rte(hi, 2 * i + 1, o);
}
kernel void r8(global const uint4* a, global const uint4* b, global half* o) {
  // manual conversion of the loads only, the store by vstore_half4_rte twice
  int i = get_global_id(0);
  uint4 x = a[i], y = b[i];
  float4 lo = (float4)(h2f2(x.x) + h2f2(y.x), h2f2(x.y) + h2f2(y.y));
  float4 hi = (float4)(h2f2(x.z) + h2f2(y.z), h2f2(x.w) + h2f2(y.w));
  vstore_half4_rte(lo, 2 * i, o);
  vstore_half4_rte(hi, 2 * i + 1, o);
}
"""

rng = np.random.default_rng(0)
a16 = (rng.standard_normal(N) * 4).astype(np.float16)
b16 = (rng.standard_normal(N) * 4).astype(np.float16)
# a few subnormals, infinities and a NaN, to check the bit conversions
a16[:6] = np.array([6e-8, -3e-6, 65504, np.inf, -np.inf, np.nan], np.float16)
b16[:6] = np.array([1e-7, 0, 10, 1, 1, 0], np.float16)
only = os.environ.get("HALFCONV_ONLY")
kernels = [(k, w) for k, w in (("h4", 4), ("m2", 2), ("m4", 4), ("m8", 8), ("r8", 8), ("v8", 8), ("v8s", 8), ("f8", 8))
           if not only or k in only.split(",")]
run("halfconv", src, kernels + [("c8", 8)], a16, b16, group_sizes=(128, 256, 512), unchecked=("c8",))
