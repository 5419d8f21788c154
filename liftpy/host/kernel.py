"""Building generated kernels with pyopencl and running them with profiling events.

Programs are built once per device and source text (an in-process cache).  A run allocates the input and
output buffers (images for inputs placed in images, packed RGBA with channels grouped by four), launches
with the NDRange the kernel's mapping implies, copies the output back and reports the kernel time from
the OpenCL profiling events together with the bytes allocated on the device.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..codegen.kernel import DeviceLimits, KernelSource, Launch, generate_kernel
from ..errors import InputError, KernelBuildError, KernelRunError
from ..ir.expr import Program
from ..ir.interpreter import prepare_inputs
from .device import Device, _cl, get_device

_build_cache: dict = {}


def build(device: Device, source: str, options: tuple[str, ...] = ()) -> object:
    """Build an OpenCL program (cached per device and source)."""
    cl = _cl()
    key = (device.index, source, options)
    prg = _build_cache.get(key)
    if prg is not None:
        return prg
    try:
        prg = cl.Program(device.context, source).build(options=list(options))
    except cl.RuntimeError as e:
        log = getattr(e, "what", lambda: str(e))()
        try:
            log = "\n".join(str(x) for x in (e.args or [log]))
        except Exception:  # noqa: BLE001 - the log is best-effort context for the user
            pass
        raise KernelBuildError(f"the OpenCL compiler of {device.info.name} rejected the generated kernel", source, str(log)) from None
    _build_cache[key] = prg
    return prg


def build_cache_size() -> int:
    return len(_build_cache)


def device_limits(device: Device) -> DeviceLimits:
    info = device.info
    sizes = tuple(info.max_work_item_sizes) + (1,) * (3 - len(info.max_work_item_sizes))
    return DeviceLimits(info.max_work_group_size, sizes[:3])


@dataclass(frozen=True)
class RunResult:
    output: np.ndarray
    time_ms: float  # median kernel time over the timed runs
    times_ms: tuple[float, ...]
    device_bytes: int  # bytes of every buffer and image allocated on the device


def pack_image(arr: np.ndarray) -> np.ndarray:
    """[H][W][C] floats -> RGBA texels of shape (H, W*C/4, 4): channels packed by four (PHWC4)."""
    h, w, c = arr.shape
    return np.ascontiguousarray(arr.reshape(h, w, c // 4, 4).reshape(h, w * (c // 4), 4), dtype=np.float32)


class CompiledKernel:
    def __init__(self, ks: KernelSource, device: Device):
        self.ks = ks
        self.device = device
        self.program = build(device, ks.source)
        self.kernel = _cl().Kernel(self.program, ks.name)

    @property
    def source(self) -> str:
        return self.ks.source

    @property
    def plan(self):
        return self.ks.plan

    @property
    def launch(self) -> Launch:
        return self.ks.launch

    def _arrays(self, args, kwargs) -> dict[str, np.ndarray]:
        arrays, bindings = prepare_inputs(self.ks.program, args, kwargs, {str(k): v for k, v in self.ks.bindings.items()})
        for k, v in bindings.items():
            if k in self.ks.bindings and self.ks.bindings[k] != v:
                raise InputError(f"the kernel was generated for {k} = {self.ks.bindings[k]}, the inputs give {k} = {v}")
        return arrays

    def run(self, *args, repeat: int = 1, warmup: int = 0, **kwargs) -> RunResult:
        cl = _cl()
        arrays = self._arrays(args, kwargs)
        ctx, queue = self.device.context, self.device.queue
        mf = cl.mem_flags
        bufs = []
        nbytes = 0
        for name, buf in zip(self.ks.input_names, self.ks.inputs):
            arr = np.ascontiguousarray(arrays[name])
            if self.ks.placements.get(name) == "image":
                texels = pack_image(arr)
                img = cl.image_from_array(ctx, texels, num_channels=4, mode="r")
                bufs.append(img)
                nbytes += texels.nbytes
            else:
                bufs.append(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr))
                nbytes += arr.nbytes
        out = np.empty(self.ks.output_shape, dtype=self.ks.output.scalar.dtype)
        out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, max(out.nbytes, 1))
        nbytes += out.nbytes
        g = self.ks.launch.global_size
        l = self.ks.launch.local_size
        times = []
        try:
            for k in range(warmup + max(repeat, 1)):
                ev = self.kernel(queue, g, l, *bufs, out_buf)
                ev.wait()
                if k >= warmup:
                    times.append((ev.profile.end - ev.profile.start) * 1e-6)
            cl.enqueue_copy(queue, out, out_buf).wait()
        except cl.Error as e:
            raise KernelRunError(f"running kernel {self.ks.name} with {self.ks.launch} failed: {e}") from None
        return RunResult(out, statistics.median(times), tuple(times), nbytes)


def compile_program(
    program: Program,
    sizes: Mapping | None = None,
    device=None,
    launch: Launch | None = None,
    placements: Mapping[str, str] | None = None,
) -> CompiledKernel:
    """Generate and build the kernel of a lowered program for the given sizes on a device."""
    dev = get_device(device)
    ks = generate_kernel(program, sizes or {}, device_limits(dev), launch, placements)
    return CompiledKernel(ks, dev)
