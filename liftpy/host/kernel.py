"""Building generated kernels with pyopencl and running them with profiling events.

Programs are built once per device and source text (an in-process cache).  A run allocates the input and
output buffers (images for inputs placed in images, packed RGBA with channels grouped by four), launches
with the NDRange the kernel's mapping implies, copies the output back and reports the kernel time from
the OpenCL profiling events together with the bytes allocated on the device.  Before it allocates
anything, a run's buffers (known from the sizes the kernels were generated for) are checked against the
device's limits and the host's available memory (``check_run_memory``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, NamedTuple

import numpy as np

from ..codegen import half
from ..codegen.kernel import DeviceLimits, KernelSource, Launch, generate_kernel, generate_pipeline
from ..errors import DeviceError, InputError, KernelBuildError, KernelRunError, summarize
from ..ir.expr import Program
from ..ir.interpreter import prepare_inputs
from ..ir.kernels import kernel_count, result_buffers
from ..ir.types import ArrayType, TupleType, Type, memory_bytes, memory_element, substitute_sizes
from ..ir.values import first_leaf, from_structs, to_structs
from .device import Device, _cl, get_device
from .profile import DeviceProfile
from .timing import TimingRule

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
    except cl.Error as e:
        # pyopencl's message holds the compiler's build log
        raise KernelBuildError(f"the OpenCL compiler of {device.info.name} rejected the generated kernel", source, str(e)) from None
    _build_cache[key] = prg
    return prg


def build_cache_size() -> int:
    return len(_build_cache)


def device_limits(device: Device) -> DeviceLimits:
    """The limits code generation respects on a device: those of its profile (one source of device limits
    for code generation, constraint inference and ``liftpy show``)."""
    return DeviceProfile.from_device(device).limits()


class RunBuffer(NamedTuple):
    """A buffer (or image) a run allocates on the device."""

    name: str  # an input's name, or the buffer a kernel writes (``out`` for the result)
    role: str  # 'input', 'intermediate' or 'output'
    nbytes: int


def available_host_bytes() -> int | None:
    """Memory the host can still give without swapping (Linux's MemAvailable, else free pages), or None
    where neither is known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _amount(nbytes: int) -> str:
    return f"{nbytes} bytes ({nbytes / 2**30:.2f} GiB)" if nbytes >= 2**20 else f"{nbytes} bytes"


def check_run_memory(buffers: list[RunBuffer], device: Device, host_bytes: int = 0) -> None:
    """Refuse a run before it allocates anything: a buffer larger than the device allocates at once
    (CL_DEVICE_MAX_MEM_ALLOC_SIZE), buffers larger together than its global memory, or more than the host
    has available for ``host_bytes`` (what the caller creates on the host) and the run's own host arrays (the
    result read back; on a device that runs on the host's CPUs, its buffers too).  Past these limits pyopencl
    fails with INVALID_BUFFER_SIZE at best, and at worst the host swaps until the process is killed."""
    limits = device_limits(device)
    name = device.info.name
    biggest = max(buffers, key=lambda b: b.nbytes)
    if limits.max_alloc_bytes is not None and biggest.nbytes > limits.max_alloc_bytes:
        raise DeviceError(f"the {biggest.role} buffer {biggest.name} takes {_amount(biggest.nbytes)}; {name} allocates at "
                          f"most {_amount(limits.max_alloc_bytes)} in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE): "
                          "run with smaller sizes, or on a device with more memory (--device)")
    device_total = sum(b.nbytes for b in buffers)
    if limits.global_mem_bytes is not None and device_total > limits.global_mem_bytes:
        listing = summarize(((b.name, b.nbytes) for b in buffers), limit=3)
        raise DeviceError(f"the run's {len(buffers)} buffers take {_amount(device_total)} together ({listing}); {name} has "
                          f"{_amount(limits.global_mem_bytes)} of global memory: run with smaller sizes, or on a device "
                          "with more memory (--device)")
    results = sum(b.nbytes for b in buffers if b.role == "output")  # (a program may have several results)
    host = host_bytes + results + (device_total if device.info.on_host_cpu else 0)
    available = available_host_bytes()
    if available is not None and host > available:
        where = f" (with {name}'s buffers, which it keeps in host memory)" if device.info.on_host_cpu else ""
        raise InputError(f"the run needs at least {_amount(host)} of host memory{where}; {_amount(available)} are available: "
                         "run with smaller sizes, or free memory first")


@dataclass(frozen=True)
class RunResult:
    # None where the runs stopped early (``stopped``): nothing was read back.  A tuple of them for a program with
    # several results (``ir.results``), in the program's order.
    output: np.ndarray | tuple | None
    time_ms: float  # kernel time over the timed runs: their median, or the fastest (``run``'s ``statistic``)
    times_ms: tuple[float, ...]
    device_bytes: int  # bytes of every buffer and image allocated on the device
    stopped: bool = False  # the first timed run took more than ``run``'s ``stop_above_ms``; the rest were skipped


def scratch_buffers(ks: KernelSource, context) -> list:
    """The kernel's scratch buffers on the device, zeroed (``KernelSource.scratch``: a counter the kernel
    expects at zero, the buffer between two stages run as one kernel), passed after its inputs."""
    cl = _cl()
    return [cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(max(b.nbytes, 1), np.uint8))
            for b in ks.scratch]


def pack_image(arr: np.ndarray) -> np.ndarray:
    """[H][W][C] floats -> RGBA texels of shape (H, W*C/4, 4): channels packed by four (PHWC4)."""
    h, w, c = arr.shape
    return np.ascontiguousarray(arr.reshape(h, w, c // 4, 4).reshape(h, w * (c // 4), 4), dtype=np.float32)


def host_array(data, t: Type) -> np.ndarray:
    """An input as the device holds it: contiguous, and an array of tuples (a tuple of arrays here, as
    the interpreter keeps it) as an array of structs."""
    elem = memory_element(t)
    if isinstance(elem, TupleType):
        depth = len(t.dims) if isinstance(t, ArrayType) else 0
        return to_structs(data, elem, first_leaf(data).shape[:depth])
    return np.ascontiguousarray(data)


def host_result(out: np.ndarray, t: Type):
    """A result read back from the device, as the interpreter gives it (tuples of arrays for tuples)."""
    elem = memory_element(t)
    return from_structs(out, elem) if isinstance(elem, TupleType) else out


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

    def buffers(self) -> list[RunBuffer]:
        """What a run allocates on the device, from the sizes the kernel was generated for."""
        ins = [RunBuffer(n, "input", b.nbytes) for n, b in zip(self.ks.input_names, self.ks.inputs)]
        scratch = [RunBuffer(b.name, "intermediate", b.nbytes) for b in self.ks.scratch]
        return ins + scratch + [RunBuffer("out", "output", self.ks.output.nbytes)]

    def check_memory(self, host_bytes: int = 0) -> None:
        """``check_run_memory`` for this kernel's run; ``host_bytes``: what the caller creates besides."""
        check_run_memory(self.buffers(), self.device, host_bytes)

    def _arrays(self, args, kwargs) -> dict[str, np.ndarray]:
        arrays, bindings = prepare_inputs(self.ks.program, args, kwargs, {str(k): v for k, v in self.ks.bindings.items()})
        for k, v in bindings.items():
            if k in self.ks.bindings and self.ks.bindings[k] != v:
                raise InputError(f"the kernel was generated for {k} = {self.ks.bindings[k]}, the inputs give {k} = {v}")
        return arrays

    def run(self, *args, repeat: int = 1, warmup: int = 0, statistic: str = "median", stop_above_ms: float | None = None,
            budget_ms: float | None = None, **kwargs) -> RunResult:
        """Run ``warmup + repeat`` times; the time is the timed runs' ``statistic`` (``median`` or ``fastest``,
        ``liftpy.host.timing``).  With ``stop_above_ms``, a first timed run slower than that ends the runs
        (``RunResult.stopped``, its time alone, no output): a search's point that cannot beat the best."""
        timing = TimingRule(max(repeat, 1), statistic, budget_ms)
        self.check_memory()
        cl = _cl()
        arrays = self._arrays(args, kwargs)
        ctx, queue = self.device.context, self.device.queue
        mf = cl.mem_flags
        bufs = []
        nbytes = 0
        for name, buf in zip(self.ks.input_names, self.ks.inputs):
            arr = half.to_device(host_array(arrays[name], buf.type), half.is_half(buf))
            if self.ks.placements.get(name) == "image":
                texels = pack_image(arr)
                img = cl.image_from_array(ctx, texels, num_channels=4, mode="r")
                bufs.append(img)
                nbytes += texels.nbytes
            else:
                bufs.append(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr))
                nbytes += arr.nbytes
        bufs += scratch_buffers(self.ks, ctx)
        nbytes += sum(b.nbytes for b in self.ks.scratch)
        out = np.empty(self.ks.output_shape, dtype=half.storage_dtype(self.ks.output))
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
                    if _stops(times, stop_above_ms):
                        return RunResult(None, times[0], tuple(times), nbytes, stopped=True)
                    if timing.enough(times):
                        break
            cl.enqueue_copy(queue, out, out_buf).wait()
        except cl.Error as e:
            raise KernelRunError(f"running kernel {self.ks.name} with {self.ks.launch} failed: {e}") from None
        return RunResult(host_result(half.from_device(out, self.ks.output), self.ks.output_type), timing.of(times), tuple(times),
                         nbytes)


def _stops(times: list, stop_above_ms: float | None) -> bool:
    """Whether the runs end after the first timed one: it alone took more than ``stop_above_ms``."""
    return stop_above_ms is not None and len(times) == 1 and times[0] > stop_above_ms


class CompiledPipeline:
    """The kernels of a program with kernel boundaries, run in order on device-resident buffers."""

    def __init__(self, program: Program, sizes: Mapping, device: Device, placements: Mapping[str, str] | None,
                 stages: list | None = None, limits: DeviceLimits | None = None):
        """``stages``: the generated kernels (``codegen.kernel.generate_pipeline``), when they were made
        elsewhere (a code-generation worker); otherwise they are generated here for ``sizes``."""
        self.program = program
        self.device = device
        self.placements = dict(placements or {})
        bindings = {str(k): int(v) for k, v in (sizes or {}).items()}
        if stages is None:
            stages = generate_pipeline(program, bindings, limits or device_limits(device), self.placements)
        self.kernels: list[tuple[CompiledKernel, str]] = [(CompiledKernel(ks, device), out) for ks, out in stages]
        self.results = result_buffers(program) or ("out",)  # the buffers read back, in the program's order

    @property
    def source(self) -> str:
        parts = []
        for i, (k, out) in enumerate(self.kernels):
            parts.append(f"// ===== kernel {i + 1} of {len(self.kernels)}: writes {out} =====\n{k.source}")
        return "\n".join(parts)

    @property
    def plans(self):
        return [k.plan for k, _ in self.kernels]

    @property
    def launches(self) -> list[Launch]:
        return [k.launch for k, _ in self.kernels]

    def buffers(self) -> list[RunBuffer]:
        """What a run allocates on the device: every input of the program (uploaded whether a kernel reads
        it or not) and every kernel's output, all at once."""
        bindings = self.kernels[0][0].ks.bindings
        sizes = [(p.name, substitute_sizes(memory_bytes(t), bindings)) for p, t in zip(self.program.params, self.program.param_types)]
        # (An input no kernel reads may have a size only its array gives: it is left out.)
        ins = [RunBuffer(name, "input", int(n) // (2 if self.placements.get(name) == half.HALF else 1)) for name, n in sizes if n.is_Integer]
        outs = [RunBuffer(out, "output" if out in self.results else "intermediate", k.ks.output.nbytes) for k, out in self.kernels]
        scratch = [RunBuffer(b.name, "intermediate", b.nbytes) for k, _ in self.kernels for b in k.ks.scratch]
        return ins + outs + scratch

    def check_memory(self, host_bytes: int = 0) -> None:
        """``check_run_memory`` for this pipeline's run; ``host_bytes``: what the caller creates besides."""
        check_run_memory(self.buffers(), self.device, host_bytes)

    def run(self, *args, repeat: int = 1, warmup: int = 0, statistic: str = "median", stop_above_ms: float | None = None,
            budget_ms: float | None = None, **kwargs) -> RunResult:
        """Run every kernel ``warmup + repeat`` times in order; the time of one pipeline run is the sum of
        its kernels' times (pad and crop included), reported as the timed runs' ``statistic`` (``median`` or
        ``fastest``), and each kernel's in ``kernel_times_ms`` from the runs that statistic read.  ``stop_above_ms`` as
        ``CompiledKernel.run``'s, for the first timed pipeline run."""
        timing = TimingRule(max(repeat, 1), statistic, budget_ms)
        self.check_memory()
        cl = _cl()
        first = self.kernels[0][0]
        arrays, _ = prepare_inputs(self.program, args, kwargs, {str(k): v for k, v in first.ks.bindings.items()})
        ctx, queue = self.device.context, self.device.queue
        mf = cl.mem_flags
        buffers: dict[str, object] = {}
        nbytes = 0
        types = dict(zip((p.name for p in self.program.params), self.program.param_types))
        for name, arr in arrays.items():
            arr = half.to_device(host_array(arr, types[name]), self.placements.get(name) == half.HALF)
            if self.placements.get(name) == "image":
                texels = pack_image(arr)
                buffers[name] = cl.image_from_array(ctx, texels, num_channels=4, mode="r")
                nbytes += texels.nbytes
            else:
                buffers[name] = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr)
                nbytes += arr.nbytes
        scratch = {}
        for k, out in self.kernels:
            size = max(k.ks.output.nbytes, 1)
            buffers[out] = cl.Buffer(ctx, mf.READ_WRITE, size)
            nbytes += k.ks.output.nbytes + sum(b.nbytes for b in k.ks.scratch)
            scratch[out] = scratch_buffers(k.ks, ctx)
        totals = []
        per_kernel: list[list[float]] = [[] for _ in self.kernels]
        try:
            for it in range(warmup + max(repeat, 1)):
                total = 0.0
                for i, (k, out) in enumerate(self.kernels):
                    bufs = [buffers[name] for name in k.ks.input_names] + scratch[out]
                    ev = k.kernel(queue, k.ks.launch.global_size, k.ks.launch.local_size, *bufs, buffers[out])
                    ev.wait()
                    t = (ev.profile.end - ev.profile.start) * 1e-6
                    total += t
                    if it >= warmup:
                        per_kernel[i].append(t)
                if it >= warmup:
                    totals.append(total)
                    if _stops(totals, stop_above_ms):
                        self.kernel_times_ms = tuple(ts[0] for ts in per_kernel)
                        return RunResult(None, total, tuple(totals), nbytes, stopped=True)
                    if timing.enough(totals):
                        break
            writers = {out: k for k, out in self.kernels}
            results = []
            for out in self.results:
                ks = writers[out].ks
                result = np.empty(ks.output_shape, dtype=half.storage_dtype(ks.output))
                cl.enqueue_copy(queue, result, buffers[out]).wait()
                results.append(host_result(half.from_device(result, ks.output), ks.output_type))
        except cl.Error as e:
            raise KernelRunError(f"running the pipeline of {self.program.name} failed: {e}") from None
        read = timing.runs_read(totals)
        self.kernel_times_ms = tuple(sum(ts[r] for r in read) / len(read) for ts in per_kernel)
        output = results[0] if len(results) == 1 else tuple(results)
        return RunResult(output, timing.of(totals), tuple(totals), nbytes)


def compile_program(
    program: Program,
    sizes: Mapping | None = None,
    device=None,
    launch: Launch | None = None,
    placements: Mapping[str, str] | None = None,
):
    """Generate and build a lowered program for the given sizes on a device: one kernel, or a pipeline
    of kernels when the program has kernel boundaries (``let(f, toGlobal(e))`` at its top)."""
    dev = get_device(device)
    if kernel_count(program) > 1:
        if launch is not None:
            raise KernelRunError("a launch configuration can only be given for a single-kernel program")
        return CompiledPipeline(program, sizes or {}, dev, placements)
    ks = generate_kernel(program, sizes or {}, device_limits(dev), launch, placements)
    return CompiledKernel(ks, dev)
