"""What the GPU benchmarks (roofline.py, spellings.py) share: the device's copy bandwidth measured in the same
run, a PyTorch function timed with CUDA events over batches of calls, an exploration of one operator with its
best point, and JSON results written after every record (an interrupted run keeps what it measured)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def torch_cuda():
    """PyTorch with a CUDA device, fp32 as liftpy computes it (TF32 off), or None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    return torch


def torch_ms(fn, repeat: int = 15, batch: int = 20) -> float:
    """Median per-call milliseconds of ``fn`` (batches of calls between two CUDA events, after warm-up)."""
    from liftpy.explore.vendor import cuda_times

    for _ in range(3):
        fn()
    times, _ = cuda_times(fn, repeat, batch)
    return float(np.median(times))


def copy_gb_s(torch, gib: float = 1.0) -> float:
    """The device's copy bandwidth (reads + writes counted), a device-to-device copy of ``gib`` GiB."""
    n = int(gib * (1 << 30)) // 4
    a = torch.empty(n, device="cuda", dtype=torch.float32).normal_()
    b = torch.empty_like(a)
    ms = torch_ms(lambda: b.copy_(a), repeat=10, batch=5)
    del a, b
    torch.cuda.empty_cache()
    return 2 * n * 4 / (ms * 1e-3) / 1e9


def explore_best(op, samples: int, db: Path, jobs: int | None, budget_s: float | None, search=None,
                 progress: bool = False, timeout_s: float = 300.0):
    """Explore ``op`` and return (best record or None, seconds, points measured, the exploration or the
    liftpy error that stopped it: a benchmark goes on to the next operator).  ``search``: a strategy (by
    default the model search); ``progress``: the exploration's phases and points as they happen (without it,
    a run that stalls shows nothing of where); ``timeout_s``: the most one point may take."""
    from liftpy.errors import LiftError
    from liftpy.explore import explore_operator
    from liftpy.search import ModelSearch

    t = time.time()
    try:
        ex = explore_operator(op, samples=samples, db=db, search=search or ModelSearch, jobs=jobs, budget_s=budget_s,
                              references=False, progress=progress, timeout_s=timeout_s)
    except LiftError as e:
        return None, time.time() - t, 0, e
    measured = [r for r in ex.records if r.measured and not r.is_reference]
    best = min(measured, key=lambda r: r.time_ms) if measured else None
    return best, time.time() - t, len(measured), ex


def output_nbytes(op) -> int:
    """Bytes of the operator's output at its sizes, from the program's type (no reference run needed)."""
    from liftpy.ir.typecheck import typecheck
    from liftpy.ir.types import ArrayType, VectorType

    t = typecheck(op.prog, bindings=op.sizes()).type
    n = 1
    while isinstance(t, ArrayType):
        n *= int(t.size)
        t = t.elem
    return 4 * n * (int(t.width) if isinstance(t, VectorType) else 1)


def min_bytes(inputs, output_nbytes: int) -> int:
    """The least traffic: every input read once, the output written once."""
    def nbytes(x):
        return sum(nbytes(c) for c in x) if isinstance(x, tuple) else int(np.asarray(x).nbytes)

    return sum(nbytes(x) for x in inputs) + int(output_nbytes)


class Results:
    """A JSON list written again after each record.  ``replace``: the field, or fields, naming what a record
    measures (``"network"``; ``("operator", "precision")``): the file's records from earlier commands are
    kept, but for those measuring the same, which a new record replaces (one network per device command,
    one file for the three; a device part running ``half.py`` twice into one file keeps both commands')."""

    def __init__(self, path: str | None, replace: str | tuple | None = None):
        self.path = Path(path) if path else None
        self.replace = (replace,) if isinstance(replace, str) else replace
        self.records: list[dict] = []
        if replace is not None and self.path is not None and self.path.exists():
            try:
                earlier = json.loads(self.path.read_text())
            except ValueError:
                earlier = None
            if isinstance(earlier, list):
                self.records = [r for r in earlier if isinstance(r, dict)]

    def add(self, record: dict) -> None:
        if self.replace is not None:
            key = [record.get(f) for f in self.replace]
            self.records = [r for r in self.records if [r.get(f) for f in self.replace] != key]
        self.records.append(record)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.records, indent=1) + "\n")
