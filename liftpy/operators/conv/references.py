"""Reference convolutions: a plain one to validate against, and vendor ones to measure against.

Layouts (single image, no batch, fp32 in and out; no bias unless an ``Epilogue`` says so):

* input   ``x[C][H][W]``
* weights ``w[M][C][K][K]``   (``w[m][c][i][j]`` multiplies ``x[c][oy*stride + i - pad][ox*stride + j - pad]``)
* output  ``out[M][OH][OW]``

``conv2d_direct`` is the obviously-correct convolution (float64, a sum over the K*K kernel taps of
channel contractions) that every explored variant is validated against with ``expectation`` and
``validate``.  The measured references, each returning its output, its time and the memory it needs
(with a breakdown):

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

import math
import platform
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ...errors import InputError, TuningError
from ...host.timing import cpu_timing
from ...ir.compare import Validation, within  # noqa: F401 - the conv validates with them
from .layers import Layer

REFERENCES = ("im2col_gemm_numpy", "torch_cpu", "cudnn", "im2col_gemm")
EPS32 = float(np.finfo(np.float32).eps)


def _out_size(n: int, k: int, stride: int, pad: int) -> int:
    return (n + 2 * pad - k) // stride + 1


def _check(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> tuple[int, int, int, int, int, int, int]:
    if x.ndim != 3 or w.ndim != 4:
        raise InputError(f"expected x[C][H][W] and w[M][C][K][K], got shapes {x.shape} and {w.shape}")
    c, h, wd = x.shape
    m, c2, k, k2 = w.shape
    if c2 != c or k != k2:
        raise InputError(f"weights {w.shape} do not fit input {x.shape}: need [M][{c}][K][K]")
    if stride < 1 or pad < 0 or k > min(h, wd) + 2 * pad:
        raise InputError(f"a {k}x{k} kernel at stride {stride} and pad {pad} does not fit a {h}x{wd} input")
    return c, h, wd, m, k, _out_size(h, k, stride, pad), _out_size(wd, k, stride, pad)


def conv2d_direct(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> np.ndarray:
    """The plain convolution in float64: out[m] = sum over taps (i, j) of w[:, :, i, j] . x_padded shifted."""
    c, h, wd, m, k, oh, ow = _check(x, w, stride, pad)
    xp = np.pad(np.asarray(x, dtype=np.float64), ((0, 0), (pad, pad), (pad, pad)))
    w64 = np.asarray(w, dtype=np.float64)
    out = np.zeros((m, oh, ow))
    for i in range(k):
        for j in range(k):
            patch = xp[:, i : i + stride * (oh - 1) + 1 : stride, j : j + stride * (ow - 1) + 1 : stride]
            out += np.tensordot(w64[:, :, i, j], patch, axes=(1, 0))
    return out


def random_inputs(layer: Layer, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Fixed random fp32 input and weights of a layer, uniform in [-1, 1) so that sums cancel and an error
    cannot hide behind a large common offset."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=layer.input_shape).astype(np.float32)
    w = rng.uniform(-1, 1, size=layer.weight_shape).astype(np.float32)
    return x, w


def random_epilogue(layer: Layer, seed: int = 0, relu: bool = True) -> "Epilogue":
    """A layer's fixed random biases (uniform in [-1, 1)) and, where ``relu``, its ReLU."""
    bias = np.random.default_rng(seed + 1).uniform(-1, 1, size=layer.M).astype(np.float32)
    return Epilogue(bias, relu)


# -- validation ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """What a correct output is, computed once per layer and inputs: the exact-ish result and, per output
    element, the sum of the magnitudes of its terms (which bounds fp32 rounding error)."""

    expected: np.ndarray  # float64 [M][OH][OW]
    magnitude: np.ndarray  # float64 [M][OH][OW]: sum |w| |x| over the element's C*K*K terms
    terms: int  # C*K*K


def expectation(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> Expectation:
    c, _, _, _, k, _, _ = _check(x, w, stride, pad)
    expected = conv2d_direct(x, w, stride, pad)
    magnitude = conv2d_direct(np.abs(x), np.abs(w), stride, pad)
    return Expectation(expected, magnitude, c * k * k)


def validate(actual: np.ndarray, exp: Expectation, factor: float = 8.0) -> Validation:
    """Whether ``actual`` is a correct fp32 result.

    Element (m, y, x) may differ from the float64 result by ``factor * sqrt(terms) * eps32 * magnitude``:
    fp32 sums in any order stay well inside that (rounding errors of a sum of n terms grow like sqrt(n)
    times the size of what is summed), while a missing, repeated or misplaced term is about
    ``magnitude / terms``, above it for every layer of VGG-16 and AlexNet.  A summed or relative norm would
    instead be loose on large outputs or fail on elements whose terms cancel to near zero.
    """
    actual = np.asarray(actual)
    if actual.shape != exp.expected.shape:
        return Validation(False, math.inf, math.inf, None, f"output shape {actual.shape}, expected {exp.expected.shape}")
    allowed = factor * math.sqrt(exp.terms) * EPS32 * exp.magnitude + np.finfo(np.float32).tiny
    return within(actual, exp.expected, allowed)


# -- measured references -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceResult:
    name: str
    output: np.ndarray = field(repr=False)  # float32 [M][OH][OW], on the host
    time_ms: float  # on a GPU the median of the runs, on the CPU the fastest (``liftpy.host.timing``)
    times_ms: tuple[float, ...]
    bytes: int
    breakdown: Mapping[str, int]  # the parts of ``bytes``, by buffer
    device: str  # where it ran, in words


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
    return out, rule.of(times), times


def _cpu_name() -> str:
    return f"CPU ({platform.processor() or platform.machine()})"


@dataclass(frozen=True)
class Epilogue:
    """What follows the convolution in a network's layer: ``bias`` (one per output channel) added, then a
    ReLU where ``relu``.  The default does nothing (the plain convolution)."""

    bias: np.ndarray | None = None
    relu: bool = False

    def __bool__(self) -> bool:
        return self.bias is not None or self.relu

    def numpy(self, out: np.ndarray) -> np.ndarray:
        """Applied to ``out[M][...]`` in place (float32 or float64)."""
        if self.bias is not None:
            out += np.asarray(self.bias, dtype=out.dtype).reshape((-1,) + (1,) * (out.ndim - 1))
        if self.relu:
            np.maximum(out, 0, out=out)
        return out


NO_EPILOGUE = Epilogue()


def _im2col_gemm_numpy(x, w, stride, pad, warmup, repeat, epilogue: Epilogue = NO_EPILOGUE) -> ReferenceResult:
    c, h, wd, m, k, oh, ow = _check(x, w, stride, pad)
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
    c, h, wd, m, k, oh, ow = _check(x, w, stride, pad)
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
    c, h, wd, m, k, oh, ow = _check(x, w, stride, pad)
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
