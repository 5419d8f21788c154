"""OpenCL source of every probe kernel.

Each function returns a ``ProbeKernel``: a stable kernel name and the readable source of one kernel
function that opens with a comment saying what it measures.  ``program`` joins the kernels of one probe
family into one program text, so a family costs one build (PoCL spends about 0.4 s per build whatever
its size).  Sizes that must be compile-time (the number of live registers, the
vector width, an access pattern) are written into the source; everything a sweep varies at run time
(iterations, masks, strides) is a kernel argument, so one build serves a whole sweep.

Every kernel defeats dead-code elimination the same ways: values start from run-time arguments the
compiler cannot see (``seed``, ``a``, ``b``), the work is a loop whose trip count is an argument, and the
result is written to global memory at an index the compiler cannot prove constant.
"""

from __future__ import annotations

from dataclasses import dataclass

SAMPLER = "__constant sampler_t probe_sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;"


@dataclass(frozen=True)
class ProbeKernel:
    name: str
    source: str


def program(*kernels: ProbeKernel) -> str:
    """One program text holding ``kernels``; the image sampler, when one uses it, is declared once."""
    head = "/* liftpy probe kernels: " + ", ".join(k.name for k in kernels) + " */\n"
    if any("probe_sampler" in k.source for k in kernels):
        head += SAMPLER + "\n"
    return head + "\n" + "\n".join(k.source for k in kernels)


def _header(*lines: str) -> str:
    body = "\n".join(f" * {line}" if line else " *" for line in lines)
    return f"/*\n{body}\n */\n"


def _indent(lines, depth: int) -> str:
    pad = "    " * depth
    return "\n".join(pad + line for line in lines)


def registers(nreg: int) -> ProbeKernel:
    """Romou Listing 1: ``nreg`` floats live across every loop iteration of each work-item."""
    decl = [f"float r{i} = seed + {i}.0f * zero;" for i in range(nreg)]
    ring = [f"r{i} *= r{(i - 1) % nreg};" for i in range(nreg)]
    save = [f"out[{i} * z] = r{i};" for i in range(nreg)]
    src = _header(
        f"liftpy probe: registers per work-item, {nreg} live values (Romou, Listing 1).",
        "Every iteration multiplies each value by its neighbour in a ring, so all of them are needed in the",
        "next iteration and must stay in registers.  Once they do not fit, values spill to memory and the",
        "time per multiply jumps.  seed = 1 and zero = 0 at run time, so the products stay 1.0 (no overflow,",
        "no denormals) but cannot be folded; z = 0 makes the store index unknown to the compiler.",
    ) + f"""__kernel void probe_registers_{nreg}(__global float* out, const int iters, const float seed, const float zero)
{{
{_indent(decl, 1)}
    for (int k = 0; k < iters; ++k) {{
{_indent(ring, 2)}
    }}
    const int z = iters >> 31;
{_indent(save, 1)}
}}
"""
    return ProbeKernel(f"probe_registers_{nreg}", src)


def lane_chains(chains: int, unroll: int = 8) -> ProbeKernel:
    """Dependent multiply-add chains per work-item: the body of the warp and concurrency probes."""
    names = [f"x{c}" for c in range(chains)]
    decl = [f"float {n} = (float)get_local_id(0) * b + {c}.0f * b;" for c, n in enumerate(names)]
    step = [f"{n} = {n} * a + b;" for n in names]
    body = []
    for _ in range(unroll):
        body.extend(step)
    total = " + ".join(names)
    src = _header(
        f"liftpy probe: lanes of a compute unit, {chains} dependent multiply-add chain(s) per work-item, unrolled {unroll}x.",
        "A work-group of w items costs as much as ceil(w / warp) warps when the device is saturated (many",
        "groups), and stays flat in w until the compute unit's issue slots are full (one group).",
        "a = 0.999, b = 0.001 at run time: x converges to 1, no overflow, no denormals.",
    ) + f"""__kernel void probe_lanes_{chains}(__global float* out, const int iters, const float a, const float b)
{{
{_indent(decl, 1)}
    for (int k = 0; k < iters; ++k) {{
{_indent(body, 2)}
    }}
    out[get_global_id(0)] = {total};
}}
"""
    return ProbeKernel(f"probe_lanes_{chains}", src)


def running_order() -> ProbeKernel:
    src = _header(
        "liftpy probe: running order of the work-items of one work-group (Romou, Listing 3).",
        "Each work-item takes a ticket from a counter in local memory; the tickets show which work-items ran",
        "together (runs of consecutive tickets are warps, interleaved runs are warps running at once).",
    ) + """__kernel void probe_running_order(__global int* order)
{
    __local int counter;
    if (get_local_id(0) == 0)
        counter = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    order[get_global_id(0)] = atomic_inc(&counter);
}
"""
    return ProbeKernel("probe_running_order", src)


def chase_buffer() -> ProbeKernel:
    src = _header(
        "liftpy probe: memory latency by pointer chase through a buffer (Romou, Listing 2, on a buffer).",
        "One work-item follows next[] for `steps` loads; each load's address is the previous load's value,",
        "so loads cannot overlap.  The position is kept in state[0] between launches, so consecutive",
        "launches continue around the whole cycle instead of re-reading its start.",
    ) + """__kernel void probe_chase_buffer(__global const uint* next, __global uint* state, const int steps)
{
    uint i = state[0];
    for (int k = 0; k < steps; ++k)
        i = next[i];
    state[0] = i;
}
"""
    return ProbeKernel("probe_chase_buffer", src)


def chase_image() -> ProbeKernel:
    src = _header(
        "liftpy probe: texture-cache latency by pointer chase through a 2D image (Romou, Listing 2).",
        "Each RGBA uint32 texel holds the coordinates of the next texel to read; one work-item follows them",
        "for `steps` reads.  The position is kept in state[0..1] between launches.",
    ) + """__kernel void probe_chase_image(__read_only image2d_t next, __global int* state, const int steps)
{
    int2 p = (int2)(state[0], state[1]);
    for (int k = 0; k < steps; ++k) {
        const uint4 t = read_imageui(next, probe_sampler, p);
        p = (int2)((int)t.x, (int)t.y);
    }
    state[0] = p.x;
    state[1] = p.y;
}
"""
    return ProbeKernel("probe_chase_image", src)


BUFFER_LAYOUTS = {
    # name: (first element of work-item g, step between its loads)
    "interleaved": ("get_global_id(0)", "get_global_size(0)"),  # neighbours read neighbours: GPU coalescing
    "contiguous": ("get_global_id(0) * (uint)(4 * iters)", "1u"),  # one run per work-item: CPU streaming
}


def read_buffer(width: int, layout: str = "interleaved") -> ProbeKernel:
    t = "float" if width == 1 else f"float{width}"
    total = "acc" if width == 1 else " + ".join(f"acc.s{c}" for c in "0123456789abcdef"[:width])
    first, step = BUFFER_LAYOUTS[layout]
    how = ("work-item g reads elements g, g + G, g + 2G, ... (G = global size: neighbouring work-items read",
           "neighbouring elements, as GPUs coalesce)") if layout == "interleaved" else (
           "work-item g reads its own run of 4 * iters consecutive elements (as CPUs stream), ",
           "")
    src = _header(
        f"liftpy probe: global-memory read bandwidth, {t} loads, {layout} layout.",
        *[line for line in how if line],
        "Indices wrap into a window of mask + 1 elements; the window size decides which level of the memory",
        "hierarchy serves the loads.",
    ) + f"""__kernel void probe_read_buffer_{t}_{layout}(__global const {t}* data, __global float* out, const int iters, const uint mask)
{{
    const uint step = {step};
    uint idx = {first};
    {t} acc0 = ({t})(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;  /* four sums: no add-latency chain */
    for (int k = 0; k < iters; ++k) {{
        acc0 += data[idx & mask];
        acc1 += data[(idx + step) & mask];
        acc2 += data[(idx + 2u * step) & mask];
        acc3 += data[(idx + 3u * step) & mask];
        idx += 4u * step;
    }}
    const {t} acc = (acc0 + acc1) + (acc2 + acc3);
    out[get_global_id(0)] = {total};
}}
"""
    return ProbeKernel(f"probe_read_buffer_{t}_{layout}", src)


def read_image() -> ProbeKernel:
    src = _header(
        "liftpy probe: image read bandwidth with read_imagef on an RGBA float image.",
        "Like the buffer probe: work-item g reads texels g, g + G, ... of a window of mask + 1 texels,",
        "laid out row by row in an image 2^width_log2 texels wide.",
    ) + """__kernel void probe_read_image(__read_only image2d_t data, __global float* out, const int iters,
                               const uint mask, const uint width_log2)
{
    const uint gsize = get_global_size(0);
    const uint wmask = (1u << width_log2) - 1u;
    uint idx = get_global_id(0);
    float4 acc0 = (float4)(0.0f), acc1 = acc0;  /* two sums: no add-latency chain */
    for (int k = 0; k < iters; ++k) {
        const uint t0 = idx & mask;
        const uint t1 = (idx + gsize) & mask;
        acc0 += read_imagef(data, probe_sampler, (int2)((int)(t0 & wmask), (int)(t0 >> width_log2)));
        acc1 += read_imagef(data, probe_sampler, (int2)((int)(t1 & wmask), (int)(t1 >> width_log2)));
        idx += 2u * gsize;
    }
    const float4 acc = acc0 + acc1;
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
"""
    return ProbeKernel("probe_read_image", src)


def read_local(elems: int) -> ProbeKernel:
    src = _header(
        f"liftpy probe: local-memory read bandwidth, a {elems * 16}-byte float4 tile per work-group.",
        "The tile is filled from global memory once; then work-item l reads elements l, l + L, ... of it",
        "(L = work-group size), so a warp reads consecutive float4 without bank conflicts.",
    ) + f"""__kernel void probe_read_local(__global const float4* seed, __global float* out, const int iters)
{{
    __local float4 tile[{elems}];
    const uint lid = get_local_id(0);
    const uint lsize = get_local_size(0);
    for (uint i = lid; i < {elems}u; i += lsize)
        tile[i] = seed[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint idx = lid;
    float4 acc0 = (float4)(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;  /* four sums: no add-latency chain */
    for (int k = 0; k < iters; ++k) {{
        acc0 += tile[idx & {elems - 1}u];
        acc1 += tile[(idx + lsize) & {elems - 1}u];
        acc2 += tile[(idx + 2u * lsize) & {elems - 1}u];
        acc3 += tile[(idx + 3u * lsize) & {elems - 1}u];
        idx += 4u * lsize;
    }}
    const float4 acc = (acc0 + acc1) + (acc2 + acc3);
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}}
"""
    return ProbeKernel("probe_read_local", src)


def read_constant() -> ProbeKernel:
    src = _header(
        "liftpy probe: constant-memory read bandwidth (bytes delivered to work-items).",
        "All work-items read the same float4 at each step (the broadcast constant memory is built for),",
        "walking through a window of mask + 1 elements; each item starts its sum from its own id.",
    ) + """__kernel void probe_read_constant(__constant float4* table, __global float* out, const int iters, const uint mask)
{
    float4 acc0 = (float4)((float)get_global_id(0)), acc1 = acc0, acc2 = acc0, acc3 = acc0;  /* four sums */
    uint idx = 0;
    for (int k = 0; k < iters; ++k) {
        acc0 += table[idx & mask];
        acc1 += table[(idx + 1u) & mask];
        acc2 += table[(idx + 2u) & mask];
        acc3 += table[(idx + 3u) & mask];
        idx += 4u;
    }
    const float4 acc = (acc0 + acc1) + (acc2 + acc3);
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
"""
    return ProbeKernel("probe_read_constant", src)


PATTERNS = {
    # name: (x, y) of the texel work-item j reads at step k, before wrapping into the image
    "column": ("j", "k"),
    "row": ("k", "j"),
    "block2": ("k >> 1", "(j << 1) + (k & 1)"),
    "block4": ("k >> 2", "(j << 2) + (k & 3)"),
}


def image_pattern(pattern: str) -> ProbeKernel:
    x, y = PATTERNS[pattern]
    reuse = {"column": 0, "row": 1, "block2": 2, "block4": 4}[pattern]
    src = _header(
        f"liftpy probe: 2D image access pattern '{pattern}' (TMModel, section 3.2.1; cache-line reuse distance {reuse}).",
        "One work-group; work-item j reads one RGBA float texel per step k at",
        f"    x = {x},  y = {y}",
        "wrapped into a side x side image, and sums them.",
        "column: neighbouring work-items read neighbouring texels of a row at once (coalesced);",
        "row: each work-item walks its own row; blockN: each work-item zigzags down N rows of its own.",
    ) + f"""__kernel void probe_image_pattern_{pattern}(__read_only image2d_t data, __global float* out, const int steps, const int side)
{{
    const int j = (int)get_local_id(0);
    const int wrap = side - 1;
    float4 acc = (float4)(0.0f);
    for (int k = 0; k < steps; ++k) {{
        const int2 p = (int2)(({x}) & wrap, ({y}) & wrap);
        acc += read_imagef(data, probe_sampler, p);
    }}
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}}
"""
    return ProbeKernel(f"probe_image_pattern_{pattern}", src)


FMA_FORMS = {
    # name: how one chain step is written; compilers differ in which form reaches full rate (PoCL calls a
    # library routine for fma(); Apple's mad() halves throughput), so the probe tries all and keeps the best
    "fma": "{x} = fma({x}, va, vb);",
    "mad": "{x} = mad({x}, va, vb);",
    "muladd": "{x} = {x} * va + vb;",
}


def fma_throughput(width: int, form: str = "fma", chains: int = 8, unroll: int = 8) -> ProbeKernel:
    t = "float" if width == 1 else f"float{width}"
    names = [f"x{c}" for c in range(chains)]
    decl = [f"{t} {n} = ({t})((float)get_global_id(0) * b + {c}.0f * b);" for c, n in enumerate(names)]
    step = [FMA_FORMS[form].format(x=n) for n in names]
    body = []
    for _ in range(unroll):
        body.extend(step)
    if width == 1:
        total = " + ".join(names)
    else:
        total = " + ".join(f"{n}.s{c}" for n in names for c in "0123456789abcdef"[:width])
    src = _header(
        f"liftpy probe: fp32 multiply-add throughput, {t}, written as '{FMA_FORMS[form].format(x='x')}':",
        f"{chains} independent chains per work-item, unrolled {unroll}x; each loop iteration is",
        f"{chains * unroll} multiply-adds on {t} = {2 * chains * unroll * width} flops per work-item.",
        "Independent chains give every lane enough work in flight to hide the latency.",
        "a = 0.999, b = 0.001 at run time: x converges to 1, no overflow, no denormals.",
    ) + f"""__kernel void probe_fma_{form}_{t}(__global float* out, const int iters, const float a, const float b)
{{
    const {t} va = ({t})(a);
    const {t} vb = ({t})(b);
{_indent(decl, 1)}
    for (int k = 0; k < iters; ++k) {{
{_indent(body, 2)}
    }}
    out[get_global_id(0)] = {total};
}}
"""
    return ProbeKernel(f"probe_fma_{form}_{t}", src)


def empty() -> ProbeKernel:
    src = _header(
        "liftpy probe: kernel launch overhead.",
        "The body does nothing unless flag has a value the host never passes; what is timed is the launch.",
    ) + """__kernel void probe_empty(__global int* out, const int flag)
{
    if (flag == 0x7eadbeef)
        out[get_global_id(0)] = flag;
}
"""
    return ProbeKernel("probe_empty", src)
