"""What to measure on a device: sweep ranges and time targets, scaled to what the device reports.

``make_plan`` decides every range once, from the limits pyopencl reports (``Reported``) and the mode:

* quick: small sweeps that finish in about a minute on a 2-core CPU with PoCL (the CI device) and in
  seconds on a GPU; enough points for every reader to work, coarser resolution.
* full: ranges that reach past the last cache of a large GPU (pointer chase and bandwidth windows up to
  256 MiB or four times the reported cache, whichever is larger), enough work-groups to fill every
  compute unit sixteen times over, warp sweeps to 136 work-items (wave64 needs two full periods), and the
  register sweep to 320 live values (past NVIDIA's 255).

Every buffer and image size is capped by the largest allocation, a quarter of global memory and the
image dimensions, so no probe asks for memory the device cannot give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..host.device import Device

KiB = 1024
MiB = 1024 * 1024


@dataclass(frozen=True)
class Reported:
    """Limits the driver reports, beyond ``DeviceInfo``, that size the sweeps."""

    gpu: bool
    compute_units: int
    max_work_group_size: int
    local_mem_bytes: int
    global_mem_bytes: int
    max_alloc_bytes: int
    global_cache_bytes: int
    global_cacheline_bytes: int
    constant_bytes: int
    clock_mhz: int
    image_support: bool
    image2d_max: tuple[int, int]

    def as_json(self) -> dict:
        return {
            "compute_units": self.compute_units,
            "max_work_group_size": self.max_work_group_size,
            "local_mem_bytes": self.local_mem_bytes,
            "global_mem_bytes": self.global_mem_bytes,
            "max_alloc_bytes": self.max_alloc_bytes,
            "global_mem_cache_bytes": self.global_cache_bytes,
            "global_mem_cacheline_bytes": self.global_cacheline_bytes,
            "max_constant_buffer_bytes": self.constant_bytes,
            "max_clock_mhz": self.clock_mhz,
            "image_support": self.image_support,
            "image2d_max": list(self.image2d_max),
        }


def reported(device: Device) -> Reported:
    info, d = device.info, device.cl_device

    def query(name: str, default: int = 0) -> int:
        try:
            return int(getattr(d, name))
        except Exception:  # noqa: BLE001 - a driver may not answer an optional query; the default stands
            return default

    return Reported(
        gpu="GPU" in info.type,
        compute_units=info.compute_units,
        max_work_group_size=info.max_work_group_size,
        local_mem_bytes=info.local_mem_bytes,
        global_mem_bytes=info.global_mem_bytes,
        max_alloc_bytes=info.max_alloc_bytes,
        global_cache_bytes=query("global_mem_cache_size"),
        global_cacheline_bytes=query("global_mem_cacheline_size"),
        constant_bytes=query("max_constant_buffer_size", 64 * KiB),
        clock_mhz=query("max_clock_frequency"),
        image_support=info.image_support,
        image2d_max=info.image2d_max,
    )


@dataclass(frozen=True)
class ProbePlan:
    quick: bool
    gpu: bool
    target_s: float  # time of one timed launch after calibration
    repeats: int
    warmup: int
    group_size: int  # work-group size of throughput kernels
    groups: int  # work-groups of throughput kernels (several per compute unit)
    register_counts: tuple[int, ...]
    register_items: tuple[int, ...]
    register_refine: bool  # sweep again at finer steps around the spill point
    warp_widths: tuple[int, ...]
    knee_widths: tuple[int, ...]
    order_launches: int
    chase_sizes: tuple[int, ...]  # bytes
    image_chase_sizes: tuple[int, ...]
    chase_slot: int  # bytes between chased elements (at most the smallest plausible line)
    chase_strides: tuple[int, ...]  # bytes, for the line-size sweep
    chase_block: int  # bytes visited per random block in the line-size sweep
    chase_warm_s: float  # time budget to warm a cache before timing a chase point
    chase_levels: int  # levels whose line size is measured
    octave_points: int
    bandwidth_windows: tuple[int, ...]  # bytes
    image_windows: tuple[int, ...]
    image_width: int  # texels per row of the bandwidth image
    constant_windows: tuple[int, ...]
    local_tile_bytes: int
    pattern_threads: tuple[int, ...]
    pattern_side: int
    compute_widths: tuple[int, ...]
    launch_count: int


def _geometric(lo: int, hi: int, per_octave: int, align: int) -> tuple[int, ...]:
    out: list[int] = []
    if hi < lo:
        return ()
    n = int(math.floor(math.log2(hi / lo) * per_octave + 1e-9))
    for i in range(n + 1):
        v = int(round(lo * 2 ** (i / per_octave) / align)) * align
        if v >= align and (not out or v > out[-1]):
            out.append(v)
    return tuple(out)


def _thin(values: tuple[int, ...], keep_every: int) -> tuple[int, ...]:
    """Every ``keep_every``-th value, counted from the largest so that the largest is always kept."""
    return values[::-1][::keep_every][::-1]


def _pow2_floor(n: int) -> int:
    return 1 << max(0, int(n).bit_length() - 1)


def make_plan(rep: Reported, quick: bool) -> ProbePlan:
    gpu = rep.gpu
    cus = max(1, rep.compute_units)
    max_wg = max(1, rep.max_work_group_size)
    cap = max(4 * MiB, min(rep.max_alloc_bytes, rep.global_mem_bytes // 4))
    if quick:
        big = 128 * MiB if gpu else 64 * MiB
    else:
        big = min(max(256 * MiB, 4 * rep.global_cache_bytes), 1024 * MiB)
    big = _pow2_floor(min(big, cap))
    img_w, img_h = rep.image2d_max if rep.image_support else (0, 0)
    image_texels = _pow2_floor(max(1, min(img_w, 4096))) * _pow2_floor(max(1, img_h)) if rep.image_support else 0
    image_big = _pow2_floor(max(KiB, min(big if not quick or gpu else 8 * MiB, 16 * image_texels, cap)))

    def upto(values, limit):
        return tuple(v for v in values if v <= limit)

    if quick:
        warp_widths = tuple(range(1, 41)) + tuple(range(48, 137, 8)) if gpu else tuple(range(1, 11)) + (12, 16, 20, 24, 32, 40, 48, 64)
        knee = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if gpu else (1, 2, 4, 8, 16, 32, 64, 128)
    else:
        warp_widths = tuple(range(1, 137)) if gpu else tuple(range(1, 65))
        knee = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
    ppo = 2 if quick else 3
    group_size = min(256 if gpu else 64, max_wg)
    side = 4096 if (gpu and not quick) else 1024
    side = min(side, _pow2_floor(max(1, min(img_w, img_h)))) if rep.image_support else 0
    return ProbePlan(
        quick=quick,
        gpu=gpu,
        target_s=0.001 if (gpu or quick) else 0.002,
        repeats=3 if quick else 5,
        warmup=1,
        group_size=group_size,
        groups=cus * (16 if gpu else 4),
        # CPUs have 16 to 32 vector registers; GPUs allow up to 255 (NVIDIA) or 512 (AMD) per work-item
        register_counts=(4, 8, 12, 16, 24, 32, 48, 64) if not gpu and quick
        else (4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128) if not gpu
        else (8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320) if quick
        else (8,) + tuple(range(16, 321, 16)),
        register_items=upto((1, 16) if quick and not gpu else (1, 16, 64) if not gpu else (1, 64, 256, 512, 1024), max_wg),
        register_refine=not quick,
        warp_widths=upto(warp_widths, max_wg),
        knee_widths=upto(knee, max_wg),
        order_launches=3,
        chase_sizes=_geometric(KiB, big, ppo, 32),
        image_chase_sizes=_geometric(KiB, image_big, ppo, 16) if rep.image_support else (),
        chase_slot=32,
        chase_strides=(4, 8, 16, 32, 64, 128, 256, 512, 1024),
        chase_block=4096,
        chase_warm_s=0.05 if quick else 0.3,
        chase_levels=1 if quick else 3,
        octave_points=ppo,
        bandwidth_windows=_thin(_geometric(4 * KiB, big, 1, 4 * KiB), 2 if quick and not gpu else 1),
        image_windows=_thin(_geometric(4 * KiB, image_big, 1, 4 * KiB), 2 if quick and not gpu else 1) if rep.image_support else (),
        image_width=min(4096, _pow2_floor(max(1, img_w))) if rep.image_support else 0,
        constant_windows=upto((256, 1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB) if not quick else (1 * KiB, 16 * KiB), _pow2_floor(rep.constant_bytes)),
        local_tile_bytes=_pow2_floor(min(16 * KiB, max(256, rep.local_mem_bytes // 2))),
        pattern_threads=upto((1, 8, 64) if quick and not gpu else (1, 4, 16, 32, 64, 128, 256, 512, 1024) if not quick else (1, 32, 256, 1024), max_wg),
        pattern_side=side,
        compute_widths=(1, 4, 8) if quick else (1, 2, 4, 8, 16),
        launch_count=50 if quick else 200,
    )
