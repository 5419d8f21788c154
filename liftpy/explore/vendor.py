"""Vendor references measured beside an exploration's points of a paper convolution layer, each returning its
output, its time and the memory it needs (with a breakdown); layouts as ``liftpy.operators.conv.direct``:

* ``im2col_gemm_numpy``: zero-padding, the im2col matrix ``[C*K*K][OH*OW]`` materialised, then one fp32
  GEMM through numpy's BLAS, on the CPU; memory counts input, padded input, im2col matrix, weights and output;
* ``torch_cpu``: PyTorch's ``conv2d`` on the CPU (when torch is installed); memory counts input, weights and
  output (the library's scratch space on the CPU is not visible to us);
* ``cudnn``: PyTorch's ``conv2d`` on CUDA through cuDNN in fp32 with TF32 off, cuDNN's algorithm autotuner on
  (``cudnn.benchmark``, as the paper's baselines were auto-tuned);
* ``im2col_gemm``: ``unfold`` (im2col) and one cuBLAS fp32 GEMM on CUDA, TF32 off.

An ``Epilogue`` (a bias per output channel and a ReLU) makes each reference a network's layer, as a
framework runs it: cuDNN's convolution with its bias, then an in-place ReLU; the GEMM with the bias as its
addend, then the ReLU; numpy and PyTorch on the CPU likewise.

CPU references are timed with ``time.perf_counter`` around the whole operation, the fastest of at least 40
runs after warm-up (``liftpy.host.timing``); CUDA ones with CUDA events around each run, after warm-up, the
median of repeated runs, host transfers excluded (as OpenCL profiling events time liftpy's kernels). CUDA
memory is input and weights plus the allocator's peak growth during one run, so the output, cuDNN's workspace
and the im2col matrix are all measured, not assumed.
"""

from __future__ import annotations

import platform
import statistics
import time
from typing import Callable, Sequence

import numpy as np

from ..errors import TuningError
from ..host.timing import cpu_timing
from ..operators.conv.direct import NO_EPILOGUE, Epilogue, check_shapes
from .operator import ReferenceResult

REFERENCES = ("im2col_gemm_numpy", "torch_cpu", "cudnn", "im2col_gemm")


def _torch():
    try:
        import torch  # optional, and seconds to import: only where a reference asks for it
    except ImportError:
        return None
    return torch


def _cuda_available() -> bool:
    torch = _torch()
    return bool(torch is not None and torch.cuda.is_available())


def available_references() -> tuple[str, ...]:
    """The references that can run here, in ``REFERENCES`` order."""
    names = ["im2col_gemm_numpy"]
    if _torch() is not None:
        names.append("torch_cpu")
    if _cuda_available():
        names += ["cudnn", "im2col_gemm"]
    return tuple(names)


def _time_cpu(fn: Callable[[], np.ndarray], warmup: int, repeat: int) -> tuple[np.ndarray, float, list[float]]:
    """``fn``'s last output, its time and every run's, timed as everything on a CPU is (``liftpy.host.timing``:
    the fastest of at least 40 runs, as liftpy's kernels on a CPU device are)."""
    rule = cpu_timing(repeat)
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(rule.runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if rule.enough(times):
            break
    return out, rule.of(times), times


def _cpu_name() -> str:
    return f"CPU ({platform.processor() or platform.machine()})"


def _im2col_gemm_numpy(x, w, stride, pad, warmup, repeat, epilogue: Epilogue = NO_EPILOGUE) -> ReferenceResult:
    c, h, wd, m, k, oh, ow = check_shapes(x, w, stride, pad)
    x = np.ascontiguousarray(x, dtype=np.float32)
    wm = np.ascontiguousarray(w, dtype=np.float32).reshape(m, c * k * k)

    def run() -> np.ndarray:
        xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad))) if pad else x
        windows = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::stride, ::stride]
        # [C][OH][OW][K][K] -> rows (c, i, j), columns (oy, ox): the copy is the im2col matrix.
        cols = np.ascontiguousarray(windows.transpose(0, 3, 4, 1, 2)).reshape(c * k * k, oh * ow)
        return epilogue.numpy((wm @ cols).reshape(m, oh, ow))

    out, time_ms, times = _time_cpu(run, warmup, repeat)
    breakdown = {
        "input": 4 * c * h * wd,
        "padded_input": 4 * c * (h + 2 * pad) * (wd + 2 * pad) if pad else 0,
        "im2col": 4 * c * k * k * oh * ow,
        "weights": 4 * m * c * k * k,
        "output": 4 * m * oh * ow,
    }
    return ReferenceResult("im2col_gemm_numpy", out, time_ms, tuple(times), sum(breakdown.values()),
                           breakdown, f"{_cpu_name()}, numpy BLAS")  # fmt: skip


def _torch_cpu(x, w, stride, pad, warmup, repeat, epilogue: Epilogue = NO_EPILOGUE) -> ReferenceResult:
    torch = _torch()
    c, h, wd, m, k, oh, ow = check_shapes(x, w, stride, pad)
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))[None]
    wt = torch.from_numpy(np.ascontiguousarray(w, dtype=np.float32))
    bt = None if epilogue.bias is None else torch.from_numpy(np.ascontiguousarray(epilogue.bias, dtype=np.float32))

    def run():
        out = torch.nn.functional.conv2d(xt, wt, bt, stride=stride, padding=pad)
        return torch.relu_(out) if epilogue.relu else out

    with torch.inference_mode():
        out, time_ms, times = _time_cpu(run, warmup, repeat)
    breakdown = {"input": 4 * c * h * wd, "weights": 4 * m * c * k * k, "output": 4 * m * oh * ow}
    return ReferenceResult("torch_cpu", out[0].numpy().copy(), time_ms, tuple(times),
                           sum(breakdown.values()), breakdown, f"{_cpu_name()}, torch {torch.__version__}")  # fmt: skip


CUDA_BATCH = 10  # calls between two CUDA events: one call alone would count the launch gap before it


def cuda_times(run: Callable[[], object], repeat: int, batch: int = CUDA_BATCH) -> tuple[list[float], object]:
    """Per-call milliseconds of ``run`` on the current CUDA stream, each the mean of ``batch`` calls between
    two events, and the last call's result.  A batch keeps the GPU busy from one call to the next, so the
    time is the kernels' (as liftpy's OpenCL profiling events are), not the host's launch latency too."""
    torch = _torch()
    times, out = [], None
    for _ in range(max(repeat, 1)):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            out = run()
        end.record()
        end.synchronize()
        times.append(float(start.elapsed_time(end)) / batch)
    return times, out


def _cuda(name: str, x, w, stride, pad, warmup, repeat, batch: int = CUDA_BATCH,
          epilogue: Epilogue = NO_EPILOGUE) -> ReferenceResult:
    torch = _torch()
    c, h, wd, m, k, oh, ow = check_shapes(x, w, stride, pad)
    dev = torch.device("cuda")
    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    saved = (cudnn.allow_tf32, cudnn.benchmark, matmul.allow_tf32)
    # fp32 for a fair comparison with liftpy's fp32 kernels: TF32 would round inputs to 10-bit mantissas.
    cudnn.allow_tf32, cudnn.benchmark, matmul.allow_tf32 = False, True, False
    try:
        xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(dev)[None]
        wt = torch.from_numpy(np.ascontiguousarray(w, dtype=np.float32)).to(dev)
        bt = None if epilogue.bias is None else torch.from_numpy(np.ascontiguousarray(epilogue.bias, dtype=np.float32)).to(dev)
        if name == "cudnn":
            def conv():
                return torch.nn.functional.conv2d(xt, wt, bt, stride=stride, padding=pad)
        else:
            wm = wt.reshape(m, c * k * k)

            def conv():
                cols = torch.nn.functional.unfold(xt, k, padding=pad, stride=stride)[0]  # [C*K*K][OH*OW]
                product = wm @ cols if bt is None else torch.addmm(bt[:, None], wm, cols)
                return product.reshape(1, m, oh, ow)

        def run():
            return torch.relu_(conv()) if epilogue.relu else conv()

        with torch.inference_mode():
            for _ in range(max(warmup, 1)):  # at least one: cuDNN's autotuner runs on the first call
                out = run()
            del out
            torch.cuda.synchronize(dev)
            torch.cuda.reset_peak_memory_stats(dev)
            base = torch.cuda.memory_allocated(dev)
            out = run()
            torch.cuda.synchronize(dev)
            grown = torch.cuda.max_memory_allocated(dev) - base
            times, out = cuda_times(run, repeat, batch)
            result = out[0].cpu().numpy().copy()
        output_bytes = 4 * m * oh * ow
        im2col_bytes = 4 * c * k * k * oh * ow if name == "im2col_gemm" else 0
        breakdown = {"input": 4 * c * h * wd, "weights": 4 * m * c * k * k, "output": output_bytes}
        if im2col_bytes:
            breakdown["im2col"] = im2col_bytes
        # What the allocator grew by beyond output and im2col matrix: cuDNN's workspace, unfold's temporaries.
        breakdown["workspace"] = max(int(grown) - output_bytes - im2col_bytes, 0)
        props = torch.cuda.get_device_properties(dev)
        what = f"cuDNN {cudnn.version()}" if name == "cudnn" else "unfold + cuBLAS"
        if epilogue:
            what += " + " + " + ".join(p for p, on in (("bias", epilogue.bias is not None), ("ReLU", epilogue.relu)) if on)
        return ReferenceResult(name, result, statistics.median(times), tuple(times), sum(breakdown.values()), breakdown,
                               f"{props.name}, torch {torch.__version__}, {what}, fp32 (TF32 off)")  # fmt: skip
    finally:
        cudnn.allow_tf32, cudnn.benchmark, matmul.allow_tf32 = saved


def measure_reference(
    name: str,
    x: np.ndarray,
    w: np.ndarray,
    stride: int = 1,
    pad: int = 0,
    warmup: int | None = None,
    repeat: int | None = None,
    batch: int = CUDA_BATCH,
    epilogue: Epilogue = NO_EPILOGUE,
) -> ReferenceResult:
    """Run and time one reference (see ``REFERENCES``); CPU ones default to 1 warm-up and the fastest of
    40 timed runs (``liftpy.host.timing``: as liftpy's kernels on a CPU device), CUDA ones to 5 warm-ups and
    the median of 20 runs, each the mean of ``batch`` calls timed together; ``epilogue``: a bias and a ReLU
    after the convolution."""
    if name not in REFERENCES:
        raise TuningError(f"unknown reference {name!r}; references: {', '.join(REFERENCES)}")
    if name not in available_references():
        need = "PyTorch (pip install torch)" if name == "torch_cpu" else "PyTorch with a CUDA GPU"
        raise TuningError(f"reference {name} is not available here: it needs {need}; available: {', '.join(available_references())}")
    on_gpu = name in ("cudnn", "im2col_gemm")
    warmup = (5 if on_gpu else 1) if warmup is None else warmup
    repeat = (20 if on_gpu else 5) if repeat is None else repeat
    if on_gpu:
        return _cuda(name, x, w, stride, pad, warmup, repeat, batch, epilogue)
    if name == "torch_cpu":
        return _torch_cpu(x, w, stride, pad, warmup, repeat, epilogue)
    return _im2col_gemm_numpy(x, w, stride, pad, warmup, repeat, epilogue)


def measure_references(
    x: np.ndarray,
    w: np.ndarray,
    stride: int = 1,
    pad: int = 0,
    names: Sequence[str] | None = None,
    warmup: int | None = None,
    repeat: int | None = None,
) -> list[ReferenceResult]:
    """Run and time the given references (all available ones by default)."""
    return [measure_reference(n, x, w, stride, pad, warmup, repeat) for n in (names or available_references())]
