"""A researcher's own baseline: any Python callable (numpy, PyTorch, CuPy, ...) timed on the exploration's own
inputs, in the same run, as the convolution's vendor references are, and kept in the store beside them.

``liftpy explore prog.lift -s N=... --reference mymodule:my_numpy_version`` (or ``file.py:function``) names
a function that takes the program's inputs as numpy arrays, in the program's order, and returns its output.
A function may carry two optional attributes, for libraries whose arrays live on a device:

* ``fn.prepare(*inputs) -> args``: called once, untimed, to turn the numpy inputs into the function's own
  arrays (``torch.from_numpy(x).cuda()``), so that timing counts no transfer;
* its result is waited for before the clock stops: a PyTorch CUDA tensor with ``torch.cuda.synchronize()``,
  a CuPy array with its device's ``synchronize()``.

The output is checked against the program's reference (a baseline that computes something else would make
every ratio meaningless): a wrong one is refused with the first differing element.  On a GPU the time is the
median of 20 runs after 3 warm-ups; on the CPU the fastest of up to 40 runs (at most ~2 s), as liftpy's own
kernels are timed on a CPU device (``liftpy.host.timing``)."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ..errors import LiftError, TuningError
from ..loading import load_attribute
from .operator import Reference, ReferenceResult


def load_callable(spec: str) -> Callable:
    """``module:function`` or ``path/file.py:function``: the function, or a one-line TuningError."""
    try:
        fn = load_attribute(spec, "function")
    except LiftError as e:
        raise TuningError(f"cannot load the reference {spec}: {e}") from None
    if not callable(fn):
        raise TuningError(f"the reference {spec} is not a function")
    return fn


def _synchronizer(out) -> Callable[[], None]:
    """What waits for ``out`` to be computed: nothing for numpy, the device for PyTorch CUDA and CuPy arrays."""
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    module = type(first).__module__.split(".")[0]
    if module == "torch" and getattr(first, "is_cuda", False):
        import torch  # (not a dependency: the user's function returned one of its arrays, so it is there)

        return torch.cuda.synchronize
    if module == "cupy":
        import cupy  # (likewise)

        return cupy.cuda.Device().synchronize
    return lambda: None


def _to_numpy(out):
    if isinstance(out, (tuple, list)):
        return tuple(_to_numpy(o) for o in out)
    if hasattr(out, "detach"):  # PyTorch
        return out.detach().cpu().numpy()
    if hasattr(out, "get") and type(out).__module__.split(".")[0] == "cupy":
        return out.get()
    return np.asarray(out)


def measure_callable(name: str, fn: Callable, inputs: list, check) -> ReferenceResult:
    """Time ``fn`` on ``inputs`` (see the module docstring); ``check(output_numpy)`` gives a validation."""
    prepare = getattr(fn, "prepare", None)
    args = prepare(*inputs) if prepare is not None else inputs
    try:
        out = fn(*args)
        sync = _synchronizer(out)
        sync()
    except Exception as e:  # noqa: BLE001 - the user's function: its failure is said in one line
        raise TuningError(f"the reference {name} failed on the program's inputs: {type(e).__name__}: {e}") from None
    verdict = check(_to_numpy(out))
    if not verdict.ok:
        raise TuningError(f"the reference {name} does not compute what the program computes: {verdict.message}")
    on_device = sync.__name__ != "<lambda>"
    warmup, runs, deadline = (3, 20, None) if on_device else (1, 40, time.perf_counter() + 2.0)
    for _ in range(warmup):
        fn(*args)
        sync()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(*args)
        sync()
        times.append((time.perf_counter() - t) * 1e3)
        if deadline is not None and time.perf_counter() > deadline and len(times) >= 3:
            break
    best = float(np.median(times)) if on_device else min(times)
    nbytes = sum(int(np.asarray(x).nbytes) for x in inputs) + sum(
        int(np.asarray(o).nbytes) for o in (_to_numpy(out) if isinstance(out, (tuple, list)) else (_to_numpy(out),)))
    device = "the GPU, through Python" if on_device else "the host, through Python"
    return ReferenceResult(name, _to_numpy(out), best, tuple(times), nbytes, {"inputs and output": nbytes}, device)


def baseline_reference(spec: str, op) -> Reference:
    """The operator's reference that loads ``spec`` and times it on the operator's inputs of a seed."""
    fn = load_callable(spec)  # refused now, before an exploration starts, if it cannot be loaded

    def run(seed: int) -> ReferenceResult:
        inputs = op.inputs(seed)
        return measure_callable(spec, fn, inputs, lambda out: op.check(out, inputs))

    return Reference(spec, run)
