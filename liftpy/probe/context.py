"""What every probe runs with: the device, the plan, the timer, and helpers to build kernels and place
data on the device with errors a user can act on."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import DeviceError, KernelRunError
from ..host.device import Device, _cl
from .errors import ProbeNotApplicable
from .kernels import ProbeKernel, program
from .plan import ProbePlan, Reported
from .timing import Timer


@dataclass(frozen=True)
class ProbeContext:
    device: Device
    plan: ProbePlan
    reported: Reported
    timer: Timer
    seed: int = 0

    def rng(self, salt: int = 0) -> np.random.Generator:
        return np.random.default_rng(self.seed * 1_000_003 + salt)

    def kernels(self, *kernels: ProbeKernel) -> dict:
        """Build one program holding ``kernels`` (cached); their pyopencl kernel objects by name."""
        cl = _cl()
        with warnings.catch_warnings():
            # compilers log notes on correct probe code (PoCL: the ABI of float16 builtins without AVX-512),
            # which would break the progress lines; a wrong kernel is caught by the probes' result checks
            warnings.simplefilter("ignore", getattr(cl, "CompilerWarning", UserWarning))
            from ..host.kernel import build  # the code generator behind it is for kernels, not for probes

            prg = build(self.device, program(*kernels))
        return {k.name: cl.Kernel(prg, k.name) for k in kernels}

    def group_limit(self, kernel) -> int:
        """Largest work-group this kernel can launch with (the device maximum shrinks with its resources)."""
        cl = _cl()
        try:
            return int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device.cl_device))
        except cl.Error as e:
            raise KernelRunError(f"{self.device.info.name} does not report the work-group limit of {kernel.function_name}: {e}") from None

    def private_bytes(self, kernel) -> int:
        """Private (spill) memory per work-item the compiler reports for a kernel, or -1 if it does not."""
        cl = _cl()
        try:
            return int(kernel.get_work_group_info(cl.kernel_work_group_info.PRIVATE_MEM_SIZE, self.device.cl_device))
        except cl.Error:
            return -1

    def _alloc_error(self, what: str, nbytes: int, e) -> DeviceError:
        return DeviceError(
            f"{self.device.info.name} could not allocate {what} of {nbytes / 2**20:.1f} MiB ({e}); "
            "run with --quick, or with --only to skip this probe"
        )

    def buffer(self, array: np.ndarray, writable: bool = False):
        cl = _cl()
        mf = cl.mem_flags
        flags = (mf.READ_WRITE if writable else mf.READ_ONLY) | mf.COPY_HOST_PTR
        try:
            return cl.Buffer(self.device.context, flags, hostbuf=np.ascontiguousarray(array))
        except cl.Error as e:
            raise self._alloc_error("a buffer", array.nbytes, e) from None

    def empty_buffer(self, nbytes: int):
        cl = _cl()
        try:
            return cl.Buffer(self.device.context, cl.mem_flags.READ_WRITE, max(4, int(nbytes)))
        except cl.Error as e:
            raise self._alloc_error("a buffer", nbytes, e) from None

    def image(self, texels: np.ndarray):
        """A read-only 2D RGBA image from an array of shape (height, width, 4), float32 or uint32."""
        cl = _cl()
        order = cl.channel_order.RGBA
        kind = cl.channel_type.FLOAT if texels.dtype == np.float32 else cl.channel_type.UNSIGNED_INT32
        h, w = texels.shape[:2]
        make = getattr(cl, "create_image", cl.Image)  # create_image replaces the Image constructor in pyopencl 2025+
        try:
            return make(self.device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                        cl.ImageFormat(order, kind), shape=(w, h), hostbuf=np.ascontiguousarray(texels))
        except cl.Error as e:
            raise self._alloc_error(f"a {w}x{h} image", texels.nbytes, e) from None

    def read(self, buf, dtype, count: int) -> np.ndarray:
        cl = _cl()
        out = np.empty(count, dtype=dtype)
        try:
            cl.enqueue_copy(self.device.queue, out, buf).wait()
        except cl.Error as e:
            raise KernelRunError(f"reading a probe result back from {self.device.info.name} failed: {e}") from None
        return out

    def write(self, buf, array: np.ndarray) -> None:
        cl = _cl()
        try:
            cl.enqueue_copy(self.device.queue, buf, np.ascontiguousarray(array)).wait()
        except cl.Error as e:
            raise KernelRunError(f"writing {array.nbytes} bytes of probe data to {self.device.info.name} failed: {e}") from None

    def require_images(self) -> None:
        if not self.reported.image_support:
            raise ProbeNotApplicable(f"{self.device.info.name} has no image support; image probes do not apply")
