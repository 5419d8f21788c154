"""The roofline of a device from its profile, and how close a kernel comes to it.

The compute ceiling is the measured ``fp32_gflops``; each memory level with a measured bandwidth gives a
bandwidth ceiling.  A kernel that does F flops, moves B bytes through one level and takes T seconds has
arithmetic intensity I = F / B and attains F / T; its bound is min(compute, bandwidth * I), and the
attained fraction is attained / bound.  A kernel with no flops (a copy) is measured against the bandwidth
ceiling alone: fraction = (B / T) / bandwidth.

    from liftpy.probe.roofline import attained
    a = attained("profile.json", flops=2 * n**3, bytes_moved=3 * 4 * n**2, seconds=result.time_ms / 1e3)
    print(f"{a.fraction:.0%} of the {a.bound_by} bound")
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..host.profile import DeviceProfile
from .errors import ProbeError

COMPUTE = "fp32_gflops"
MEMORIES = {
    # memory level a kernel's bytes go through -> the measured value that is its ceiling (GB/s)
    "global": "global_bandwidth_gbs",
    "cache": "cache_bandwidth_gbs",
    "image": "image_bandwidth_gbs",
    "image_cache": "image_cache_bandwidth_gbs",
    "local": "local_bandwidth_gbs",
    "constant": "constant_bandwidth_gbs",
}


@dataclass(frozen=True)
class Roofline:
    device: str
    compute_gflops: float
    bandwidths_gbs: tuple[tuple[str, float], ...]  # (memory level, GB/s), in MEMORIES order

    def bandwidth(self, memory: str = "global") -> float:
        for name, value in self.bandwidths_gbs:
            if name == memory:
                return value
        have = ", ".join(n for n, _ in self.bandwidths_gbs) or "none"
        raise ProbeError(f"the profile of {self.device} has no {memory} bandwidth ({MEMORIES.get(memory, '?')}); "
                         f"it has: {have}.  Run liftpy probe without --only, or choose one of those levels")

    def ridge(self, memory: str = "global") -> float:
        """Arithmetic intensity (flop/byte) where the kernel stops being bound by ``memory``."""
        return self.compute_gflops / self.bandwidth(memory)

    def bound_gflops(self, intensity: float, memory: str = "global") -> float:
        return min(self.compute_gflops, self.bandwidth(memory) * intensity)


@dataclass(frozen=True)
class Attainment:
    gflops: float  # attained
    intensity: float  # flop per byte (inf when no bytes move)
    bound_gflops: float
    fraction: float  # attained / bound (bandwidth fraction for kernels without flops)
    bound_by: str  # 'compute' or 'memory'
    memory: str


def _value(entry) -> float | None:
    v = entry.get("value") if isinstance(entry, dict) else entry
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def roofline(profile) -> Roofline:
    """The roofline of a profile: a ``DeviceProfile``, a profile document (dict) or the path of one."""
    if isinstance(profile, Roofline):
        return profile
    if isinstance(profile, (str, Path)):
        try:
            profile = json.loads(Path(profile).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ProbeError(f"cannot read profile {profile}: {e}") from None
    if isinstance(profile, DeviceProfile):
        measured, device = profile.measured, profile.device
    elif isinstance(profile, dict):
        measured = profile.get("measured") or {}
        dev = profile.get("device") or {}
        device = dev.get("name", "the device") if isinstance(dev, dict) else str(dev)
    else:
        raise ProbeError(f"a roofline needs a DeviceProfile, a profile document or its path, not {type(profile).__name__}")
    compute = _value(measured.get(COMPUTE))
    if compute is None:
        raise ProbeError(f"the profile of {device} has no measured {COMPUTE}; run: liftpy probe --only compute,buffer_bandwidth")
    bws = tuple((level, v) for level, name in MEMORIES.items() if (v := _value(measured.get(name))) is not None)
    return Roofline(device, compute, bws)


def attained(profile, flops: float, bytes_moved: float, seconds: float, memory: str = "global") -> Attainment:
    """Attained GFLOP/s of a kernel and its fraction of the roofline bound at its arithmetic intensity."""
    if not seconds > 0:
        raise ProbeError(f"a kernel time must be positive, got {seconds} s")
    if flops < 0 or bytes_moved < 0:
        raise ProbeError(f"flops and bytes moved must not be negative, got {flops} and {bytes_moved}")
    roof = roofline(profile)
    bw = roof.bandwidth(memory)
    gflops = flops / seconds / 1e9
    if flops == 0:
        return Attainment(0.0, 0.0, 0.0, bytes_moved / seconds / 1e9 / bw, "memory", memory)
    intensity = flops / bytes_moved if bytes_moved > 0 else math.inf
    bound = roof.bound_gflops(intensity, memory)
    return Attainment(gflops, intensity, bound, gflops / bound, "compute" if bound >= roof.compute_gflops else "memory", memory)
