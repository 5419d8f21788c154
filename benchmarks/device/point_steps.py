"""Where a measured point's time goes on the device: python benchmarks/device/point_steps.py WORKLOAD N

For N new points (new programs) in one process: the build, a run of its own for the abort test (repeat 1), the timed
run, the same timed run again and the check; then the pieces of one run (uploads, readback, one launch)."""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
from search import workload
from liftpy.host.profile import resolve_profile
from liftpy.host.timing import device_timing
from liftpy.results.cache import cached_variants
from liftpy.runtime import points as ev
from liftpy.search import select_variants
from liftpy.search import Spaces
import numpy as np
import pyopencl as cl
name, n = sys.argv[1], int(sys.argv[2])
op, rules = workload(name)
variants = select_variants(cached_variants(op), rules or ("tile2DReduce|tile2DReduceStrided",))
prof = resolve_profile(None, "benchmarks/results/h100-profile.json")
spaces = Spaces(variants, op.sizes(), prof, 0)
import random
rng = random.Random(1)
pts = []
while len(pts) < n:
    i = rng.randrange(len(variants))
    s = spaces.sample(i, 1, rng.randrange(10**6))
    if s:
        pts.append((i, s[0]))
payloads = []
for i, c in pts:
    v = variants[i]
    p = ev.point_payload(op, v.program, v.placement_map, c, None, 0, 5, 1, prof.limits(), None)
    p["stages"] = ev.compile_point(p)["stages"]
    payloads.append(p)
inputs, check = ev._prepared(op, 0)
rows = []
for p in payloads:
    try:
        t = time.perf_counter(); compiled, kernels, _ = ev._build(p); b = time.perf_counter() - t
    except Exception as e:
        print("build failed", str(e)[:100]); continue
    timing = device_timing(compiled.device.info.type, 5)
    r = {"build": b}
    try:
        t = time.perf_counter(); first = compiled.run(*inputs, repeat=1, warmup=1); r["abort_run"] = time.perf_counter() - t
        t = time.perf_counter(); res = compiled.run(*inputs, repeat=timing.runs, warmup=1, statistic=timing.statistic); r["timed_run"] = time.perf_counter() - t
        t = time.perf_counter(); res = compiled.run(*inputs, repeat=timing.runs, warmup=1, statistic=timing.statistic); r["again"] = time.perf_counter() - t
        t = time.perf_counter(); check(res.output); r["check"] = time.perf_counter() - t
        r["kernel_ms"] = res.time_ms
    except Exception as e:
        print("run failed", str(e)[:100]); continue
    rows.append(r)
for k in ("build", "abort_run", "timed_run", "again", "check", "kernel_ms"):
    xs = [r[k] for r in rows]
    print(f"{k:10s} median {statistics.median(xs):.4f} sum {sum(xs):.3f}")
print("runs per timed", timing)
# pieces of one run on a warm kernel: uploads, one launch, readback
k0 = None
for p in payloads:
    try:
        compiled, kernels, _ = ev._build(p)
        if len(kernels) == 1: k0 = compiled; break
    except Exception: pass
ctx, q = k0.device.context, k0.device.queue
mf = cl.mem_flags
arrs = k0._arrays(inputs, {})
from liftpy.host.kernel import host_array
t = time.perf_counter()
for _ in range(10):
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host_array(arrs[nm], b.type)) for nm, b in zip(k0.ks.input_names, k0.ks.inputs)]
q.finish(); print("uploads per run %.4f" % ((time.perf_counter() - t) / 10))
out = np.empty(k0.ks.output_shape, dtype=np.float32); ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
t = time.perf_counter()
for _ in range(10):
    cl.enqueue_copy(q, out, ob).wait()
print("readback per run %.4f" % ((time.perf_counter() - t) / 10))
t = time.perf_counter()
for _ in range(10):
    k0.kernel(q, k0.ks.launch.global_size, k0.ks.launch.local_size, *bufs, ob).wait()
print("launch+wait %.4f" % ((time.perf_counter() - t) / 10))
