"""An analytical time model for a lowered program on a device, in the spirit of TMModel and the roofline.

From the symbolic counts of the program (``liftpy.model.counts``), its resources
(``liftpy.constraints.resources``) and the device profile (probed numbers where they exist, driver numbers
and published defaults otherwise), a configuration's time is estimated per kernel as

    time = |compute, local memory, cache, DRAM|_4 / (wave efficiency * latency hiding) + launch

The terms combine as a 4-norm, a smooth maximum: the units work at once, but where two terms are close
neither hides the other entirely (two equal terms take 1.19x either).  Measured offline on the H100
searches' uniform stores (SGEMM 1024, VGG-16 layers 12, 5, 10, 24), the 4-norm ranked them better than the
maximum (Kendall tau +0.001..+0.007), and with partial warps' cache reads counted once (``predict_kernel``)
+0.01..+0.02 on four of the five (0.682, 0.688, 0.714, 0.661, 0.671 -> 0.698, 0.685, 0.738, 0.672,
0.694); norms 2-6 and a partial-warp threshold of 2-16 lanes were all within 0.005 of these.

- compute: user-function applications at the fp32 rate (an application is one fused multiply-add);
- local memory: elements read from local memory at the probed local bandwidth, times the passes bank
  conflicts make a warp's requests take (``liftpy.model.access``), and the elements staged into it;
- cache: elements read from global memory (repeated reads mostly hit the caches) at the cache bandwidth,
  times how many cache lines a warp's requests touch per byte asked for (``liftpy.model.access``):
  measured at one configuration of the variant for ranking thousands of candidates, and at the
  configuration itself for the few a search is about to measure (the factor of one tiled variant of
  VGG-16 layer 5 ranges from 2 to 31 over its configurations);
- DRAM: the inputs and the output once at the global bandwidth;
- occupancy from registers (private bytes per work-item), local memory and work-group size decides how
  many groups a compute unit holds; the last wave of groups is counted whole (wave efficiency), and too
  few warps per compute unit leave latency unhidden.  A grid smaller than one full wave is spread over
  the compute units: its efficiency is how evenly it covers them, and its latency hiding counts the
  groups each one actually runs, not the ones it could hold: a 256-group SGEMM tiling on 132 compute units
  that could hold ten groups each was predicted at a fifth of its speed (256 / 1320), and ranked 3x
  behind what it measured; each unit simply runs its two groups.  Work-items with a register block of
  accumulators need fewer warps to hide latency (up to half as many).

On a CPU (PoCL) a group runs on one core, its work-items in a loop: there are no warps and no latency to
hide, and the rates are the scalar ones (the probed ``fp32_scalar_gflops`` and ``cache_scalar_bandwidth_gbs``,
or per-core values measured by those probes on PoCL).  PoCL vectorizes that loop where the code between two
barriers is short, running work-items as the lanes of one vector instruction (``fp32_vector_width``, or
four): the gain falls as unrolled loops lengthen the stretch (``liftpy.model.counts``: ``unrolled_body``) and
is gone from ``CPU_VECTOR_BODY_LIMIT`` copies on.  On PoCL (2 cores of an AMD EPYC), one unstaged tiling of
the reduced VGG-16 layer 7 with 8 work-items a group and blocks of 4 x 2 took 0.057, 0.070, 0.089, 0.103 and
0.18-0.29 ms for unrolled reduction steps of 1, 2, 3, 4 and 6-36 (stretches of 8 to 288 copies), where the
formula without it predicted them all alike (0.058-0.045 ms, the longer steps faster).  Staged tilings, whose
barriers make each stretch between them a loop over the work-items of its own, their private values saved
across, showed no such gain: their short steps were the slower ones.  A CPU has no texture units either:
PoCL emulates each ``read_imagef`` in software, some 14 ns a read on one core of that machine (a
least-squares fit of the measured times below; the image bandwidth probe: 17-27 ns), where a float from a
buffer takes under 1 ns, so reads of an input a variant placed in an image (``image_reads``) are a term of
their own there.  A GPU's prediction depends on neither (its texture units serve image reads as its caches
serve the others).  On PoCL's uniform store of the reduced VGG-16 layer 7 (993 points measured on an idle
machine, half with the input in an image, which ran 2.3x slower at the median) the formula ranked the
measured times at Kendall tau 0.09 blind to placements and at the vector rates, 0.50 with the image term and
the scalar rates, and 0.51 with the vector lanes as well, which also put the store's fastest and third
fastest points first and third of 993 (ranks 128 and 169 without them); on an earlier store of the same
points, measured while the machine did other work: 0.05, 0.45 and 0.46.  Timed as the fastest of 40 runs
(``liftpy.host.timing``), the same points measured again agree at a tau of 0.84, and the formula still
ranks a fresh store of them at 0.50 (gradient-boosted trees trained on 800 of them: 0.68;
``benchmarks/results/pocl-tau-ceiling.json``): on a CPU the formula, not the measurement, is what limits.

So on a CPU, where a variant's model has them, a kernel's time is not its rates but the operations its code
executes (``liftpy.model.operations``: private reads, address arithmetic, conditional reads, stores into
local memory, emulated image reads), each at a cost per operation on one core, the busiest core's share of
the groups, plus the launch (``_predict_cpu_operations``; ``CPU_OPERATION_S``).  The costs are a least-squares
fit of log time on a fresh uniform store of the reduced VGG-16 layer 7 (993 points, fastest of 40 runs each):
with each point's own counts it ranks them at Kendall tau 0.699 (the rates: 0.52, refitted to the store:
0.56); fitted to half of the store's kinds of variant, it ranks the other half at 0.688; and on a store the fit
never saw, 200 uniform points of the reduced layer 24 (8 x 14 x 14), at 0.653, where the rates rank them at
0.485 and costs refitted to that store itself at 0.660.  Address arithmetic is a fraction of a cycle an
operation (the compiler shares most of it), a private read a little more (a register block the
privatization left in an array), a conditional read half a nanosecond, an emulated ``read_imagef`` 10 ns;
the launch fitted at 10 us.  Counts added for loop iterations, branches, barriers times work-items, local,
global and user-function reads, or work-items as lanes beyond four, each left the fit within 0.002.  Ranking
thousands of candidates, a search takes the counts of one configuration per variant as shares of its
symbolic counts (``OPERATION_SHARES``), which ranks that store at 0.555 (0.54-0.60 over four draws of the
configurations); the few points it is about to measure it counts at their own configuration.  Four
configurations per variant, each point taking the shares of the nearest, ranked it at 0.61-0.63, but the
search's results were mixed: of ten guided searches of 50 runs, 3 came within 5% of the uniform best (4 with
one configuration), 7 when measured again alike (4); for four times the code generation at screening, not kept
(``benchmarks/results/pocl-search-paths.json``; issue 12's notes).

The expressions are compiled once per variant (``VariantModel``) and evaluated for thousands of
configurations in milliseconds, so a search can rank a whole space before measuring any of it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

import sympy
from sympy.printing.pycode import PythonCodePrinter

from ..constraints.resources import analyze
from ..errors import LiftError
from ..ir.expr import Program
from ..ir.kernels import split_kernels
from ..ir.levels import PARALLEL_LEVELS, Part
from ..ir.precision import HALF_PLACEMENT, OUTPUT_KEY
from .access import access_factors
from .counts import count, stored_bytes
from .operations import OperationCounts, operation_counts

OVERLAP_NORM = 4  # how the terms of a kernel's time combine (``predict_kernel``; module docstring)
PARTIAL_WARP_LANES = 4  # a warp's cache requests count as issued whole from a quarter of its lanes on

TEXEL_BYTES = 16  # what the probes' ``read_imagef`` of an RGBA float texel reads (``liftpy.probe.bandwidth``)
# Unprobed, a CPU's software image reads per second and core: ``liftpy probe --only image_bandwidth`` on PoCL 3.0
# (2 cores of an AMD EPYC) measured 1.2-1.9 GB/s of 16-byte texels, 37-58 million reads a second per core,
# where float reads from its caches ran at 20-63 GB/s.
CPU_IMAGE_READS_PER_CU = 5e7
# Unprobed, a CPU core's scalar rates: the same probes measured 16.3 GFLOP/s of scalar multiply-adds and 19.6 GB/s
# of scalar float reads from the caches on those two cores (40 GFLOP/s and 63 GB/s with float4).
CPU_SCALAR_GFLOPS_PER_CU = 8.0
CPU_SCALAR_CACHE_GBS_PER_CU = 10.0
# Unprobed, the work-items a CPU runs as lanes of one vector instruction (SSE's four floats; the compute probe
# measures ``fp32_vector_width``), and the straight stretch of unrolled copies from which PoCL no longer gains
# by it (module docstring: a sweep of the unrolled reduction step of one tiling on PoCL).
CPU_VECTOR_LANES = 4
CPU_VECTOR_BODY_LIMIT = 32
# Seconds a CPU core spends per operation counted on the statement IR (``liftpy.model.operations``; per
# element a copy stores into local memory, per doubling of the group's work-items), and per launch: fitted
# to PoCL's uniform store of the reduced VGG-16 layer 7 on 2 cores of an AMD EPYC (module docstring).
CPU_OPERATION_S = {"private_reads": 7.5e-11, "address_ops": 3.9e-11, "conditional_reads": 1.5e-10, "local_writes": 7.5e-10,
                   "image_calls": 1.04e-8, "launch": 1.0e-5}
# The counts of ``liftpy.model.operations`` as a model's constants, measured at the variant's probe
# (``model_code``): each per what it grows with among the symbolic counts (the local writes with the elements
# staged, the image calls with the elements read from images), or per user-function application where the
# symbolic count is nought there (a copy the counts do not see as one).
SHARE_OF = "_per_"  # joins an operation and what it is a share of in a model's constants (``private_reads_per_flops``)
OPERATION_SHARES = {"private_reads": "flops", "address_ops": "flops", "conditional_reads": "flops", "local_writes": "copy_elements",
                    "image_calls": "image_elements"}

# Unprobed, a GPU's seconds per work-group and compute unit: starting a group costs the unit time whatever the
# group does.  Adding two 2^26-float arrays on an H200 (132 units) in groups of 32 items, or of 8 items with
# float4, took 1.27 ms, and in half as large groups 2.53 ms: 2M and 4M groups, 84 ns each per unit, where the
# same arrays in groups of 256 items with float4 took 0.20 ms (benchmarks/results/h200-half.json's stores).
# Without it every group size predicted the DRAM time, and searches measured the smallest groups first.
GPU_GROUP_S = 84e-9
# Unprobed, the seconds a GPU's load is in flight from DRAM: a warp keeps the loads of one application of its
# user function in flight (and of the copies unrolled loops put beside it), so the bytes it asks per load bound
# the bandwidth (Little's law).  Adding two 2^26 arrays on an H200 in groups of 256: floats one per item 0.231
# ms, halves 0.191 ms (at half the bytes), four halves 0.111 ms, four floats 0.196 ms
# (benchmarks/results/h200-halfload.json and the roofline store); 780 ns (two loads in flight a warp) puts the
# four within 15% of those with the DRAM term, where the DRAM and group terms alone put one float an item
# within a tenth of four.  (Kendall tau over the H200 stores of sum, max, softmax and layer-norm rows, add
# and gemv, fp32 and half storage, under an H100's probed rates: 0.43 -> 0.47.)
GPU_LOAD_LATENCY_S = 780e-9
# Unprobed, the longest straight stretch of unrolled copies of one user-function application (``unrolled_body``)
# whose loop a GPU's instruction cache holds, and how much slower its instructions issue per doubling past it.
# On an H200 the same tiles, register blocks and reduction steps ran alike up to 1024 copies and 1.0-1.45x
# slower at 2048 (median 1.3): two chained 1024 products, 64 x 128 tiles with 8 x 4 blocks, 0.067 ms a product
# at a step of 32 (1024 copies), 0.077 at 64 (2048); 8 x 8 blocks 0.066 at a step of 8, 0.068 at 16, 0.095
# at 32; SGEMM 2048, 128 x 128 tiles with 8 x 8 blocks, 0.379, 0.387 and 0.468 ms at steps of 8, 16 and 32
# (``benchmarks/results/h200-unrolled.json``).  The formula alone put the longer steps slightly faster (fewer
# barriers), and a search kept tiles with 2048 copies that ran 1.4x slower than their 1024-copy twins.
GPU_UNROLLED_BODY_LIMIT = 1024
GPU_UNROLLED_BODY_COST = 0.3

FEATURES = ("flops", "global_reads", "local_reads", "copy_bytes", "written", "items", "groups", "local_bytes", "private_bytes",
            "input_bytes", "global_traffic", "local_traffic")


@dataclass(frozen=True)
class Machine:
    """The numbers of a device the model uses."""

    compute_units: int
    fma_per_s: float
    dram_bytes_per_s: float
    cache_bytes_per_s: float
    local_bytes_per_s: float
    launch_s: float
    registers_per_cu: int
    local_bytes_per_cu: int
    items_per_cu: int
    warp: int
    is_gpu: bool
    # Reads through images (``read_imagef``) per second where they cost more than other global reads: a CPU
    # has no texture units, and PoCL emulates each read in software.  None on a GPU, whose texture units
    # serve them as its caches serve the rest (counted with the other global reads, as before images were
    # counted apart).
    image_reads_per_s: float | None = None
    # Seconds a load from DRAM is in flight (``GPU_LOAD_LATENCY_S``); 0 on a CPU, whose prefetchers and
    # out-of-order cores the operation counts model instead.
    load_latency_s: float = 0.0
    # Work-items a CPU driver runs as the lanes of one vector instruction (PoCL vectorizes the loop over a
    # group's work-items where it can; module docstring); 1 on a GPU, whose warps the model counts apart.
    vector_lanes: int = 1
    # Seconds per work-group and compute unit (``GPU_GROUP_S``); 0 on a CPU, whose per-group cost the
    # operation counts carry (``CPU_OPERATION_S``).
    group_s: float = 0.0

    @classmethod
    def from_profile(cls, profile) -> "Machine":
        m = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in (profile.measured or {}).items()}
        gpu = "GPU" in str(profile.device_type) or (profile.warp_size or 1) > 1
        cus = max(1, int(profile.compute_units))
        dram = m.get("global_bandwidth_gbs") or (1000.0 if gpu else 20.0)
        if gpu:
            gflops = m.get("fp32_gflops") or cus * 128 * 2 * 1.5
            cache = m.get("cache_bandwidth_gbs") or 4 * dram
            local = m.get("local_bandwidth_gbs") or 8 * dram
        else:
            # A CPU runs a group's work-items one after another on one core, each read and multiply-add an
            # instruction of its own: the scalar rates, not the vector ones (module docstring).
            gflops = m.get("fp32_scalar_gflops") or cus * CPU_SCALAR_GFLOPS_PER_CU
            cache = m.get("cache_scalar_bandwidth_gbs") or cus * CPU_SCALAR_CACHE_GBS_PER_CU
            local = m.get("local_bandwidth_gbs") or cache
        launch_us = m.get("empty_kernel_us") or (5.0 if gpu else 20.0)
        image = m.get("image_cache_bandwidth_gbs") or m.get("image_bandwidth_gbs")
        return cls(
            compute_units=cus,
            fma_per_s=gflops * 1e9 / 2,
            dram_bytes_per_s=dram * 1e9,
            cache_bytes_per_s=cache * 1e9,
            local_bytes_per_s=local * 1e9,
            launch_s=launch_us * 1e-6,
            registers_per_cu=int(m.get("register_pool") or (65536 if gpu else 1 << 20)),
            local_bytes_per_cu=int(profile.local_mem_bytes) * (4 if gpu else 1),
            items_per_cu=2048 if gpu else int(profile.max_work_group_size),
            warp=int(profile.warp_size or (32 if gpu else 1)),
            is_gpu=gpu,
            image_reads_per_s=None if gpu else (image * 1e9 / TEXEL_BYTES if image else cus * CPU_IMAGE_READS_PER_CU),
            vector_lanes=1 if gpu else int(m.get("fp32_vector_width") or CPU_VECTOR_LANES),
            group_s=GPU_GROUP_S if gpu else 0.0,
            load_latency_s=GPU_LOAD_LATENCY_S if gpu else 0.0,
        )


@dataclass(frozen=True)
class Prediction:
    seconds: float
    bound: str  # which term dominated: compute, local, cache, dram, latency, image, groups, or invalid
    occupancy: int  # groups per compute unit
    features: dict
    kernel_seconds: tuple = ()  # each kernel's share of ``seconds`` (a pipeline's; ``ModelSearch._composed``)


def _kernel_expressions(stage: Program, images: frozenset = frozenset(), halves: frozenset = frozenset()) -> dict[str, sympy.Expr]:
    c = count(stage, images, halves)
    res = analyze(stage)
    extents = {part: [x for level in PARALLEL_LEVELS if level.part is part for d in range(3)
                      if (x := res.extent(level, d)) is not None] for part in Part}
    if extents[Part.GLOBAL]:
        total = sympy.Mul(*extents[Part.GLOBAL])
        # Unevaluated (as the constraint inference's minimum): deciding it for symbolic sizes asks
        # sympy's assumptions, and the sizes are substituted before the code is printed.
        items = sympy.Min(total, 256, evaluate=not total.free_symbols)
        groups = total / items
    else:
        items = sympy.Mul(*extents[Part.LOCAL])
        groups = sympy.Mul(*extents[Part.GROUPS])
    local_bytes = sympy.Add(*[b for b, _ in res.local_bytes]) if res.local_bytes else sympy.Integer(0)
    private_bytes = sympy.Add(*[b for b, _ in res.private_bytes]) if res.private_bytes else sympy.Integer(0)
    input_bytes = sympy.Add(*[stored_bytes(t, "half" if p.name in halves else "global") for p, t in zip(stage.params, stage.param_types)])
    return {
        "flops": c.flops, "global_reads": c.global_reads, "global_loads": c.global_loads, "applications": c.applications,
        "local_reads": c.local_reads,
        "image_reads": c.image_reads, "unrolled_body": c.unrolled_body, "copy_bytes": c.copy_bytes, "written": c.written, "items": items, "groups": groups,
        "local_bytes": local_bytes, "private_bytes": private_bytes, "input_bytes": input_bytes,
    }


def predict_kernel(f: Mapping[str, float], machine: Machine) -> Prediction:
    items = max(1.0, float(f["items"]))
    groups = max(1.0, float(f["groups"]))
    if not machine.is_gpu and "private_reads" in f:
        return _predict_cpu_operations(f, machine, items, groups)
    regs = float(f["private_bytes"]) / 4 + 24
    # A group whose registers do not fit still runs: the compiler spills the excess to (cached) memory.
    # It is slower by about the share that does not fit, not impossible, so it ranks low but finite.
    demand = items * regs / machine.registers_per_cu if machine.is_gpu else 0.0
    spill = max(1.0, demand)
    occ = max(1, math.floor(1 / demand)) if machine.is_gpu else 1
    if f["local_bytes"]:
        occ = min(occ, math.floor(machine.local_bytes_per_cu / float(f["local_bytes"])))
    occ = min(occ, math.floor(machine.items_per_cu / items), 32)
    if occ < 1:
        return Prediction(math.inf, "invalid", 0, dict(f))
    slots = machine.compute_units * occ
    if groups >= slots:
        waves = math.ceil(groups / slots)
        wave_eff = groups / (waves * slots)
        resident = occ
    else:
        per_cu = math.ceil(groups / machine.compute_units)
        wave_eff = groups / (machine.compute_units * per_cu)
        resident = per_cu
    if machine.is_gpu:
        warps_per_group = math.ceil(items / machine.warp)
        lanes = items / (warps_per_group * machine.warp)  # a group of 2 items still occupies a warp
        # A work-item with many private values (a register block of accumulators) has independent
        # multiply-adds to issue between dependent ones, so fewer warps hide the latency: counted up to
        # twice, from 16 private floats on (a 2-group SGEMM tiling of 8 x 8 blocks measured 0.069 ms
        # where eight warps per unit for full speed predicted 0.083).
        ilp = min(2.0, max(1.0, float(f["private_bytes"]) / 4 / 16))
        hiding = min(1.0, resident * warps_per_group * ilp / 8.0)
    else:
        lanes, hiding = _cpu_lanes(f, machine, items), 1.0
    # A warp with few active lanes: the coalescing factor in ``global_traffic`` already counts the cache
    # lines its requests touch per byte asked, so only the requests' issue is left to count, from below a
    # quarter of a warp (``PARTIAL_WARP_LANES``); dividing by ``lanes`` too counted the waste twice (a
    # one-item group reading scattered floats 32 x 32 times).
    # (On a CPU the lanes are work-items in one vector instruction, whose reads are issued together too.)
    cache_lanes = lanes if "global_traffic" not in f or not machine.is_gpu else min(1.0, lanes * PARTIAL_WARP_LANES)
    terms = {
        "compute": float(f["flops"]) / (machine.fma_per_s * lanes),
        "local": float(f.get("local_traffic", f["local_reads"]) + f["copy_bytes"]) / (machine.local_bytes_per_s * lanes),
        "cache": float(f.get("global_traffic", f["global_reads"])) / (machine.cache_bytes_per_s * cache_lanes),
        "dram": (float(f["input_bytes"]) + float(f["written"])) / machine.dram_bytes_per_s,
    }
    if machine.group_s:
        terms["groups"] = groups / machine.compute_units * machine.group_s
    body = float(f.get("unrolled_body", 1))
    if machine.is_gpu and body > GPU_UNROLLED_BODY_LIMIT:
        fetch = 1.0 + GPU_UNROLLED_BODY_COST * math.log2(body / GPU_UNROLLED_BODY_LIMIT)
        terms["compute"] *= fetch  # (what issues instructions: the arithmetic and the local reads)
        terms["local"] *= fetch
    if machine.load_latency_s and f.get("global_loads") and f.get("global_reads"):
        # (Little's law: a full compute unit's warps each keep the loads of one application of the user
        # function in flight, times the copies unrolled loops put side by side, each of ``width`` bytes a lane.
        # The warps of a full unit, not those resident: ``hiding`` counts the occupancy, and counting it here
        # too put a 2-warp reduction 23 times slower than it ran.  Of the bytes read, those from DRAM: a
        # kernel's inputs, less where it reads a part of them, as a split reduction's second kernel does.)
        loads = float(f["global_loads"])
        width = float(f["global_reads"]) / loads
        per_warp = max(1.0, loads / max(1.0, float(f.get("applications", f["flops"])))) * max(1.0, float(f.get("unrolled_body", 1)))
        in_flight = machine.compute_units * machine.items_per_cu * width * per_warp
        terms["latency"] = min(float(f["input_bytes"]), float(f["global_reads"])) / in_flight * machine.load_latency_s
    if machine.image_reads_per_s and f.get("image_reads"):
        # Each element read from an image is one emulated ``read_imagef`` (a texel, one lane of it used).
        terms["image"] = float(f["image_reads"]) / 4 / machine.image_reads_per_s
    bound = max(terms, key=terms.get)
    # The units work at once but do not overlap perfectly: the terms combine as a 4-norm (two equal terms
    # take 1.19x either), not as their maximum (module docstring).
    busy = sum(t ** OVERLAP_NORM for t in terms.values()) ** (1.0 / OVERLAP_NORM)
    return Prediction(spill * busy / (wave_eff * hiding) + machine.launch_s * f.get("launches", 1.0), bound, occ, dict(f))


def _cpu_lanes(f: Mapping[str, float], machine: Machine, items: float) -> float:
    """The work-items PoCL runs as the lanes of one vector instruction where the code between two barriers
    is short (module docstring): up to ``vector_lanes``, fewer as unrolled loops lengthen the stretch, and
    none in a kernel that stages tiles in local memory (barriers: each stretch between them a loop over the
    work-items of its own, their private values saved across), which gained nothing measurable."""
    if f.get("copy_bytes") or machine.vector_lanes <= 1:
        return 1.0
    short = max(0.0, 1.0 - float(f.get("unrolled_body", 1)) / CPU_VECTOR_BODY_LIMIT)
    return 1.0 + (min(float(machine.vector_lanes), items) - 1.0) * short


def _predict_cpu_operations(f: Mapping[str, float], machine: Machine, items: float, groups: float) -> Prediction:
    """A CPU kernel's time from the operations its code executes (``liftpy.model.operations``; module
    docstring): each core runs whole groups, so the time is a group's share of the operations times the
    groups the busiest core runs, plus the launch."""
    lanes = _cpu_lanes(f, machine, items)
    s = CPU_OPERATION_S
    work = (float(f["private_reads"]) * s["private_reads"] + float(f["address_ops"]) * s["address_ops"]
            + float(f["conditional_reads"]) * s["conditional_reads"]) / lanes
    work += float(f["local_writes"]) * s["local_writes"] * math.log2(items + 1) + float(f["image_calls"]) * s["image_calls"]
    per_core = math.ceil(groups / machine.compute_units) / groups
    return Prediction(work * per_core + s["launch"] * f.get("launches", 1.0), "operations", 1, dict(f))


_NAME = re.compile(r"[A-Za-z_]\w*")


class VariantModel:
    """The analytical model of one variant: symbolic once (``model_code``), numeric per configuration."""

    def __init__(self, code: tuple, params, machine: Machine):
        """``code``: what ``model_code`` returned for the variant; ``params``: its tuning parameters."""
        self.code = code  # kept: plain data, what a worker process sends back instead of the compiled functions
        self.machine = machine
        self.params = [str(p) for p in params]
        self.kernels = [{name: _function(self.params, text) for name, text in kernel} for kernel in code]
        # The parameters each kernel's formulas read: a pipeline's kernels often have their own (two chained
        # products' tiles), which the search may choose apart (``ModelSearch._recombined``).
        names = [{w for _, text in kernel for w in _NAME.findall(text)} for kernel in code]
        self.kernel_params = [frozenset(p for p in self.params if p in used) for used in names]

    def features(self, config: Mapping, access: tuple | None = None) -> list[dict]:
        """Each kernel's features at ``config``.  ``access``: how each kernel's reads are served, measured at
        this very configuration (``liftpy.model.access.access_factors``); without it, as measured at the
        variant's probe."""
        args = [int(config[p]) for p in self.params]
        if access is not None and len(access) != len(self.kernels):
            access = None
        out = []
        for k, fns in enumerate(self.kernels):
            f = {name: float(fn(*args)) for name, fn in fns.items()}
            coalescing, banks = f.pop("coalescing", 1.0), f.pop("banks", 1.0)
            shares = {key: f.pop(key) for key in [key for key in f if SHARE_OF in key]}
            measured = access[k] if access is not None else None
            if isinstance(measured, OperationCounts):
                f.update(measured._asdict())
            elif shares:
                f.update(_operations_from_shares(shares, f))
            elif measured is not None:
                coalescing, banks = measured
            f["global_traffic"] = f["global_reads"] * coalescing
            f["local_traffic"] = f["local_reads"] * banks
            out.append(f)
        return out

    def predict(self, config: Mapping, access: tuple | None = None) -> Prediction:
        total, bound, occ, feats, each = 0.0, "", 0, {}, []
        for i, f in enumerate(self.features(config, access)):
            p = predict_kernel(f, self.machine)
            total += p.seconds
            each.append(p.seconds)
            if i == len(self.kernels) - 1 or p.seconds > 0.5 * total:
                bound, occ = p.bound, p.occupancy
            for k, v in f.items():
                feats[k] = feats.get(k, 0.0) + v
        return Prediction(total, bound, occ, feats, tuple(each))


def model_code(program: Program, sizes: Mapping, params, probe: Mapping | None = None,
               placements: Mapping[str, str] | None = None, cpu: bool = False) -> tuple:
    """The model's expressions for each kernel of a variant at given sizes, as Python expressions over its
    tuning parameters: plain text, so that a search keeps them on disk and a resumed one skips the symbolic
    counting (and sympy's lambdify) of every variant it meets again.

    ``probe``: one valid configuration of the variant, at which how each kernel's reads are served
    (coalescing of the global ones, bank conflicts of the local ones) is measured on its statement IR
    (``liftpy.model.access``) and kept as constants; without one, reads count as served ideally.
    ``placements``: the variant's (``{"input": "image"}``), whose image reads the model counts apart, and
    whose arrays kept as half (inputs, stages' outputs by name, the result as ``"out"``) move two bytes an
    element.
    ``cpu``: for a CPU device, where the probe counts the operations of each kernel's code instead
    (``liftpy.model.operations``), kept as shares of its symbolic counts (``OPERATION_SHARES``)."""
    bind = {sympy.Symbol(str(k), positive=True, integer=True): int(v) for k, v in sizes.items()}
    printer = PythonCodePrinter()
    stages = split_kernels(program)
    images = frozenset(k for k, where in (placements or {}).items() if where == "image")
    halves = frozenset(k for k, where in (placements or {}).items() if where == HALF_PLACEMENT)
    # (a stage's own program writes "out": stored as half where the pipeline keeps that stage's output so)
    exprs = [_kernel_expressions(st.program, images, frozenset(p.name for p in st.program.params if p.name in halves)
                                 | ({OUTPUT_KEY} if st.output in halves else frozenset()))
             for st in stages]
    bindings = {**dict(sizes), **dict(probe or {})}
    # A probe the emitter refuses leaves the model as it is without one; the search meets the refusal itself
    # when it generates that point.
    measured = measure_at(program, bindings, placements, cpu) if probe is not None else None
    if measured is None or len(measured) != len(stages):
        measured = [None] * len(stages)
    out = []
    for ex, m in zip(exprs, measured):
        code = tuple((name, printer.doprint(sympy.sympify(e).subs(bind))) for name, e in ex.items())
        if cpu:
            more = _operation_shares(m, ex, bindings) if m is not None else ()
        else:
            coalescing, banks = m if m is not None else (1.0, 1.0)
            more = (("coalescing", repr(float(coalescing))), ("banks", repr(float(banks))))
        out.append(code + tuple(more))
    # A stage run in the previous kernel's last work-group (``toGlobalLast``) costs no launch of its own.
    return tuple(k + (("launches", "0"),) if st.last_group else k for k, st in zip(out, stages))


def measure_at(program: Program, bindings: Mapping, placements: Mapping[str, str] | None, cpu: bool) -> tuple | None:
    """What the model measures of a lowered program at one configuration, per kernel: on a GPU how its reads
    are served (``liftpy.model.access``), on a CPU the operations its code executes
    (``liftpy.model.operations``, given the variant's ``placements``); None where the emitter refuses it."""
    try:
        return operation_counts(program, bindings, placements) if cpu else access_factors(program, bindings, placements)
    except LiftError:
        return None


def _operation_bases(f: Mapping) -> dict:
    """What the operation counts are shares of (``OPERATION_SHARES``), from a kernel's symbolic counts."""
    return {"flops": float(f["flops"]), "copy_elements": float(f["copy_bytes"]) / 4, "image_elements": float(f["image_reads"]) / 4}


def _operations_from_shares(shares: Mapping[str, float], f: Mapping) -> dict:
    """A kernel's operation counts from the shares its probe measured (``name_per_base``) and its symbolic
    counts at a configuration."""
    base = _operation_bases(f)
    out = {}
    for key, share in shares.items():
        name, of = key.split(SHARE_OF)
        out[name] = share * base[of]
    return out


def _operation_shares(counts: OperationCounts, exprs: Mapping, bindings: Mapping) -> tuple:
    """One kernel's operations at the probe (``bindings``) as shares of what its symbolic counts (``exprs``)
    give there (``OPERATION_SHARES``), each per user-function application where that count is nought."""
    at = {sympy.Symbol(str(k), positive=True, integer=True): int(v) for k, v in bindings.items()}
    base = _operation_bases({name: sympy.sympify(exprs[name]).subs(at) for name in ("flops", "copy_bytes", "image_reads")})
    shares = []
    for name, of in OPERATION_SHARES.items():
        of = of if base[of] or not base["flops"] else "flops"
        shares.append((f"{name}{SHARE_OF}{of}", repr(getattr(counts, name) / base[of] if base[of] else 0.0)))
    return tuple(shares)


_NAMESPACE = {"math": math, "Min": min, "Max": max}


def _function(params: list[str], text: str):
    return eval(f"lambda {', '.join(params)}: {text}", dict(_NAMESPACE))  # noqa: S307 - our own printed expressions
