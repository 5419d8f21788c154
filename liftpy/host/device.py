"""Choosing an OpenCL device and keeping one context and profiling queue per device.

The device is chosen by, in order: the ``device`` argument (an index into ``list_devices()`` or part of a
device name), the ``LIFTPY_DEVICE`` environment variable (same forms), then the first GPU, then the first
device that builds kernels.  PoCL on the CPU, from ``pip install 'liftpy[pocl]'``, is the device every
machine has, but its LLVM 14 cannot compile for CPUs newer than it (AMD Zen 5); there the Oclgrind
simulator (from the test extras) is the default, which checks results as well but times nothing useful.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from ..errors import DeviceError


def _cl():
    try:
        # pyopencl is loaded by the first use of a device: programs are built, typed, rewritten and printed
        # without it (and a missing pyopencl is then a one-line error, not an import failure of liftpy)
        import pyopencl as cl
    except ImportError as e:  # pragma: no cover - pyopencl is a dependency
        raise DeviceError(f"pyopencl is not installed ({e}); install liftpy with: pip install -e '.[pocl]'") from None
    return cl


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    platform: str
    name: str
    type: str
    version: str
    driver: str
    compute_units: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    local_mem_bytes: int
    global_mem_bytes: int
    max_alloc_bytes: int
    image_support: bool
    image2d_max: tuple[int, int]

    def __str__(self) -> str:
        return f"[{self.index}] {self.name} ({self.platform}, {self.type})"

    @property
    def key(self) -> str:
        """Identity of the device for records: platform, name and driver version."""
        return f"{self.platform} | {self.name} | {self.driver}"

    @property
    def on_host_cpu(self) -> bool:
        """Whether its kernels run on this host's CPUs (PoCL): work beside them (code generation, OpenCL
        builds, a search's model) takes cores from the kernels being timed, and slows them."""
        return "CPU" in self.type.upper()


@lru_cache(maxsize=None)
def _all_devices() -> tuple:
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        raise DeviceError(
            f"no OpenCL platform found ({e}).  Install the PoCL CPU device with "
            "pip install -e '.[pocl]' (or pip install 'pyopencl[pocl]'), or install a vendor OpenCL driver "
            "and check that its ICD file is visible (OCL_ICD_VENDORS)."
        ) from None
    devices = []
    for p in platforms:
        try:
            devices.extend(p.get_devices())
        except cl.Error:
            continue
    if not devices:
        raise DeviceError("OpenCL platforms were found but no devices; install 'pyopencl[pocl]' for a CPU device")
    return tuple(devices)


def _info(i: int, d) -> DeviceInfo:
    cl = _cl()
    kinds = []
    for flag, label in ((cl.device_type.GPU, "GPU"), (cl.device_type.CPU, "CPU"), (cl.device_type.ACCELERATOR, "accelerator")):
        if d.type & flag:
            kinds.append(label)
    img = bool(d.image_support)
    return DeviceInfo(
        index=i,
        platform=d.platform.name.strip(),
        name=d.name.strip(),
        type="/".join(kinds) or "other",
        version=d.version.strip(),
        driver=d.driver_version.strip(),
        compute_units=int(d.max_compute_units),
        max_work_group_size=int(d.max_work_group_size),
        max_work_item_sizes=tuple(int(x) for x in d.max_work_item_sizes),
        local_mem_bytes=int(d.local_mem_size),
        global_mem_bytes=int(d.global_mem_size),
        max_alloc_bytes=int(d.max_mem_alloc_size),
        image_support=img,
        image2d_max=(int(d.image2d_max_width), int(d.image2d_max_height)) if img else (0, 0),
    )


def list_devices() -> list[DeviceInfo]:
    return [_info(i, d) for i, d in enumerate(_all_devices())]


def _pick(spec) -> int:
    devices = _all_devices()
    if spec is None:
        spec = os.environ.get("LIFTPY_DEVICE")
    if spec is None or spec == "":
        cl = _cl()
        # A simulator (Oclgrind, installed for checking kernels; it calls itself a GPU too) is the default
        # only when no other device can build kernels: it runs large kernels a thousand times slower.
        simulators = [i for i, d in enumerate(devices) if _is_simulator(d)]
        real = [i for i in range(len(devices)) if i not in simulators]
        for i in real:
            if devices[i].type & cl.device_type.GPU:
                return i
        # (``liftpy devices`` says why a device is passed over; explorations name the device they use.)
        usable = [i for i in real if build_problem(i) is None]
        return (usable or simulators or real or [0])[0]
    if isinstance(spec, int) or (isinstance(spec, str) and spec.isdigit()):
        i = int(spec)
        if not 0 <= i < len(devices):
            raise DeviceError(f"no OpenCL device {i}; devices are: " + "; ".join(str(x) for x in list_devices()))
        return i
    matches = [i for i, d in enumerate(devices) if str(spec).lower() in (d.name + " " + d.platform.name).lower()]
    if not matches:
        raise DeviceError(f"no OpenCL device matches '{spec}'; devices are: " + "; ".join(str(x) for x in list_devices()))
    return matches[0]


def _is_simulator(d) -> bool:
    return "oclgrind" in d.platform.name.lower()


PROBE_KERNEL = "kernel void probe(global float* x) { x[get_global_id(0)] = 1.0f; }"


def build_problem(index: int) -> str | None:
    """Why a device cannot build even a trivial kernel, or None.  PoCL 3.0 (from ``pip install
    pyopencl[pocl]``) compiles with LLVM 14, which does not know CPUs newer than it (AMD Zen 5: "unknown
    target CPU 'generic'"); such a device is listed but not chosen by default, and the reason says what
    builds instead: another device, or the system's PoCL once installed."""
    detail = _build_error(index)
    if detail is None:
        return None
    hint = ""
    if "unknown target cpu" in detail.lower():
        others = [j for j, d in enumerate(_all_devices())
                  if j != index and not _is_simulator(d) and _build_error(j) is None]
        hint = f": this PoCL's LLVM predates the CPU; device {others[0]} builds" if others else NEWER_CPU_HINT
    return f"cannot build kernels ({detail}){hint}"


# What to do about a CPU newer than the compiler of pip's PoCL (seen with AMD Zen 5).
NEWER_CPU_HINT = ": this PoCL's LLVM predates the CPU; install the system's PoCL (apt install pocl-opencl-icd)"


@lru_cache(maxsize=None)
def _build_error(index: int) -> str | None:
    """The compiler's error line when the device cannot build a trivial kernel, or None."""
    cl = _cl()
    device = _all_devices()[index]
    try:
        cl.Program(cl.Context([device]), PROBE_KERNEL).build()
    except Exception as e:  # pyopencl raises its own error types, and RuntimeError for build failures
        lines = [l.strip() for l in str(e).splitlines() if "error" in l.lower() and l.strip()]
        return next((l for l in lines if l.lower().startswith("error:")), lines[0] if lines else type(e).__name__)
    return None


class Device:
    """One OpenCL device with its context and a profiling command queue."""

    def __init__(self, index: int):
        cl = _cl()
        self.index = index
        self.cl_device = _all_devices()[index]
        self.info = _info(index, self.cl_device)
        self.context = cl.Context([self.cl_device])
        self.queue = cl.CommandQueue(self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)

    def __repr__(self) -> str:
        return f"<Device {self.info}>"

    @property
    def key(self) -> str:
        return self.info.key


@lru_cache(maxsize=None)
def _device(index: int) -> Device:
    return Device(index)


def get_device(spec=None) -> Device:
    """The device named by ``spec`` (index or name fragment), ``LIFTPY_DEVICE``, or the default."""
    if isinstance(spec, Device):
        return spec
    return _device(_pick(spec))


def device_info(spec=None) -> DeviceInfo:
    """What ``get_device(spec)`` would describe, without making its context: a process that only names and
    profiles the device (an exploration's driver, whose worker process runs the kernels) then does not pay
    for a GPU context (seconds on a CUDA driver) before it starts that worker."""
    if isinstance(spec, Device):
        return spec.info
    i = _pick(spec)
    return _info(i, _all_devices()[i])
