"""Device profiles: the limits that decide which kernels and parameter values can run on a device.

A profile starts from what pyopencl reports (work-group and work-item limits, local memory, image sizes,
the largest buffer) and can be overridden or extended by a JSON file, such as the one ``liftpy probe``
writes with measured values (usable registers per work-item, warp size, cache sizes, bandwidths).  The
constraint inference reads its hardware limits from a profile, and every sample records the profile it was
drawn under (``DeviceProfile.record()``).

JSON format (``schema`` = ``liftpy-device-profile/1``)::

    {"schema": "liftpy-device-profile/1",
     "device": {"platform": ..., "name": ..., "driver": ..., "version": ..., "type": "GPU"},
     "date": "2026-11-22T10:00:00",
     "limits":   {"max_work_group_size": 1024, ...},            # optional: overrides reported limits
     "measured": {"registers_per_item": {"value": 255, "unit": "registers", "method": ..., "confidence": ...},
                  ...},
     "curves":   {"name": {"x": [...], "y": [...], "x_label": ..., "y_label": ...}}}

A measured value whose name is a profile field (``registers_per_item``, ``warp_size``, ``local_mem_bytes``,
...) overrides that field; every measured value is kept in ``measured``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..codegen.kernel import DeviceLimits
from ..errors import DeviceError
from .device import device_info

SCHEMA = "liftpy-device-profile/1"


@dataclass(frozen=True)
class DeviceProfile:
    device: str  # platform | name | driver
    source: str  # 'pyopencl', or the path of the JSON file that overrode it
    max_work_group_size: int = 1024
    max_work_item_sizes: tuple[int, int, int] = (1024, 1024, 64)
    compute_units: int = 1
    local_mem_bytes: int = 32768
    global_mem_bytes: int = 1 << 30
    max_alloc_bytes: int = 1 << 28
    image_support: bool = False
    image2d_max_width: int = 0
    image2d_max_height: int = 0
    device_type: str = "CPU"  # as pyopencl reports it: GPU, CPU, accelerator
    # Measured by probes (None when unknown):
    registers_per_item: int | None = None  # 32-bit registers a work-item can use before spilling
    warp_size: int | None = None
    measured: dict = field(default_factory=dict, compare=False)

    @property
    def private_mem_bytes(self) -> int | None:
        """Private memory a work-item can keep in registers, if the register count is known."""
        return None if self.registers_per_item is None else 4 * self.registers_per_item

    @property
    def min_parallelism(self) -> int:
        """Work-items a kernel should launch to keep every compute unit busy: one warp per compute unit
        (32 lanes on a GPU whose warp was not measured, 1 on a CPU)."""
        lanes = self.warp_size or (32 if "GPU" in self.device_type else 1)
        return self.compute_units * lanes

    @property
    def private_item_limit_bytes(self) -> int:
        """Private memory a work-item may allocate at all, registers or not: on a GPU what spills past the
        registers goes to slow off-chip memory (16 KiB is 16 times an H100's registers per work-item); on
        a CPU the arrays live on a stack."""
        return 16 * 1024 if "GPU" in self.device_type else 64 * 1024

    @property
    def private_group_limit_bytes(self) -> int | None:
        """Private memory of a whole work-group, where the driver runs a group on one thread and keeps its
        work-items' private arrays on that thread's stack (PoCL: a group of 4,096 work-items with 4 KiB
        each took the process down)."""
        return None if "GPU" in self.device_type else 4 * 1024 * 1024

    def limits(self):
        return DeviceLimits(self.max_work_group_size, tuple(self.max_work_item_sizes), self.local_mem_bytes,
                            self.private_item_limit_bytes, self.private_group_limit_bytes, self.max_alloc_bytes,
                            self.global_mem_bytes)

    @classmethod
    def from_device(cls, device=None) -> "DeviceProfile":
        info = device_info(device)
        sizes = tuple(info.max_work_item_sizes) + (1,) * (3 - len(info.max_work_item_sizes))
        return cls(
            device=info.key,
            source="pyopencl",
            max_work_group_size=info.max_work_group_size,
            max_work_item_sizes=sizes[:3],
            compute_units=info.compute_units,
            local_mem_bytes=info.local_mem_bytes,
            global_mem_bytes=info.global_mem_bytes,
            max_alloc_bytes=info.max_alloc_bytes,
            image_support=info.image_support,
            image2d_max_width=info.image2d_max[0],
            image2d_max_height=info.image2d_max[1],
            device_type=info.type,
        )

    def with_overrides(self, data: dict, source: str) -> "DeviceProfile":
        """Apply a profile document (see the module docstring) on top of this profile."""
        if data.get("schema") not in (None, SCHEMA):
            raise DeviceError(f"{source}: unknown profile schema {data.get('schema')!r} (expected {SCHEMA})")
        names = {f.name for f in dataclasses.fields(self)} - {"device", "source", "measured"}
        changes: dict[str, Any] = {}
        # What the driver reported when the profile was measured, then explicit limits, then measurements:
        # a profile read on another machine (or with no device at all) describes the device it was taken on.
        reported = dict(data.get("reported") or {})
        if "image2d_max" in reported:
            reported["image2d_max_width"], reported["image2d_max_height"] = reported.pop("image2d_max")
        for k, v in reported.items():
            if k in names and v is not None:
                changes[k] = tuple(v) if isinstance(v, list) else v
        for k, v in (data.get("limits") or {}).items():
            if k in names:
                changes[k] = tuple(v) if isinstance(v, list) else v
        measured = dict(self.measured)
        for k, entry in (data.get("measured") or {}).items():
            value = entry.get("value") if isinstance(entry, dict) else entry
            measured[k] = entry
            if k in names and value is not None:
                changes[k] = tuple(value) if isinstance(value, list) else value
        dev = data.get("device") or {}
        ident = " | ".join(str(dev.get(k, "")) for k in ("platform", "name", "driver")) if dev else self.device
        if dev.get("type") and "device_type" not in changes:
            # (read on a machine without that device, a GPU's profile still describes a GPU: its private
            # memory per item, its lanes, and the model's GPU terms, not those of the CPU the library defaults to)
            changes["device_type"] = str(dev["type"])
        return dataclasses.replace(self, device=ident or self.device, source=source, measured=measured, **changes)

    @classmethod
    def load(cls, path: str | Path, base: "DeviceProfile | None" = None) -> "DeviceProfile":
        """A profile from a JSON file, on top of ``base`` (or library defaults when there is none)."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise DeviceError(f"cannot read device profile {path}: {e}") from None
        start = base if base is not None else cls(device="unknown", source="defaults")
        return start.with_overrides(data, str(path))

    @classmethod
    def from_record(cls, record: dict) -> "DeviceProfile":
        """The profile a stored ``record()`` describes (fields this version does not know are ignored,
        missing ones take their defaults), so stored points regenerate under the limits they were made for."""
        names = {f.name for f in dataclasses.fields(cls)} - {"measured"}
        data = {k: v for k, v in (record or {}).items() if k in names}
        if "max_work_item_sizes" in data:
            data["max_work_item_sizes"] = tuple(data["max_work_item_sizes"])
        return cls(**{"device": "stored", "source": "stored", **data})

    def record(self) -> dict:
        """A JSON-serializable summary, stored with every sample drawn under this profile."""
        d = dataclasses.asdict(self)
        d["measured"] = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in self.measured.items()}
        return d


def resolve_profile(device=None, profile_path: str | Path | None = None) -> DeviceProfile:
    """The profile of a device, overridden by a JSON file when one is given."""
    base = DeviceProfile.from_device(device)
    return DeviceProfile.load(profile_path, base) if profile_path else base
