"""The operator library: classic operators written once as high-level programs, each with a numpy
reference and a FLOP count, explored like any program (``liftpy explore NAME -s sizes``).

An entry names the program's sizes and its parameters (a stencil's boundary, a pooling window and stride);
``liftpy.explore.operator.library_operator("jacobi2d:boundary=mirror", {"H": 512, "W": 512})`` gives the
engine's operator, validated against the numpy reference (so sizes far beyond the interpreter's reach can be explored).  The
spec form ``NAME[:KEY=VALUE,...]`` is the same on the command line.  ``OPERATORS`` lists the entries.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import InputError
from . import conv, linalg, pooling, rows, stencils


@dataclass(frozen=True)
class LibraryEntry:
    name: str
    summary: str
    sizes: tuple[str, ...]
    build: Callable  # (**params) -> Program
    reference: Callable  # (*inputs, **params) -> expected output
    flops: Callable  # (sizes, params) -> float
    params: Mapping[str, Any] = field(default_factory=dict)  # defaults
    choices: Mapping[str, tuple] = field(default_factory=dict)  # allowed values, where limited
    check: Callable | None = None  # (sizes, params) -> None; raises InputError for what types cannot say
    sized: bool = False  # build(sizes, **params): the program needs a size as a value (a mean's divisor)

    def program(self, sizes: Mapping[str, int], params: Mapping[str, Any]):
        return self.build(dict(sizes), **params) if self.sized else self.build(**params)


def _stencil(name, summary, sizes, module_fn, points):
    return LibraryEntry(name, summary, sizes, getattr(stencils, module_fn), getattr(stencils, f"{module_fn}_reference"),
                        lambda s, p, sz=sizes, k=points: 2.0 * k * _prod(s[n] for n in sz),
                        {"boundary": "clamp"}, {"boundary": stencils.BOUNDARY_CHOICES})


def _prod(values) -> float:
    out = 1.0
    for v in values:
        out *= v
    return out


def _pool_flops(s, p):
    oh, ow = (s["H"] - p["k"]) // p["stride"] + 1, (s["W"] - p["k"]) // p["stride"] + 1
    return float(s["C"] * oh * ow * p["k"] * p["k"])


OPERATORS: dict[str, LibraryEntry] = {e.name: e for e in [
    _stencil("jacobi1d", "3-point Jacobi stencil over [N]", ("N",), "jacobi1d", 3),
    _stencil("jacobi2d", "5-point Jacobi stencil over [H][W]", ("H", "W"), "jacobi2d", 5),
    _stencil("jacobi3d", "7-point Jacobi stencil over [D][H][W]", ("D", "H", "W"), "jacobi3d", 7),
    _stencil("blur2d", "3x3 Gaussian blur over [H][W]", ("H", "W"), "blur2d", 9),
    LibraryEntry("maxpool2d", "max pooling of [C][H][W], k x k windows every stride", ("C", "H", "W"),
                 pooling.maxpool2d, pooling.maxpool2d_reference, _pool_flops, {"k": 2, "stride": 2}),
    LibraryEntry("avgpool2d", "average pooling of [C][H][W], k x k windows every stride", ("C", "H", "W"),
                 pooling.avgpool2d, pooling.avgpool2d_reference, lambda s, p: 2 * _pool_flops(s, p), {"k": 2, "stride": 2}),
    LibraryEntry("matmul", "matrix product [M][K] x [K][N]", ("M", "N", "K"), linalg.matmul, linalg.matmul_reference,
                 lambda s, p: 2.0 * s["M"] * s["N"] * s["K"]),
    LibraryEntry("batched_matmul", "B matrix products [M][K] x [K][N]", ("B", "M", "N", "K"), linalg.batched_matmul,
                 linalg.batched_matmul_reference, lambda s, p: 2.0 * s["B"] * s["M"] * s["N"] * s["K"]),
    LibraryEntry("gemv", "matrix-vector product [M][N] x [N]", ("M", "N"), linalg.gemv, linalg.gemv_reference,
                 lambda s, p: 2.0 * s["M"] * s["N"]),
    LibraryEntry("conv2d", "convolution of [H][W][C] with [M][KH][KW][C/groups] (+ bias, optional ReLU; residual=1: "
                 "+ a second input [OH][OW][M] before the ReLU): "
                 "k=KHxKW, stride=SHxSW, pad=P|PHxPW|top/bottom/left/right, dilation, groups (depthwise: groups=C=M)",
                 ("C", "H", "W", "M"), conv.conv2d, conv.conv2d_reference, conv.conv2d_flops,
                 {"k": "3x3", "stride": "1", "pad": "1", "dilation": "1", "groups": 1, "relu": 0, "residual": 0},
                 {"relu": (0, 1, 6), "residual": (0, 1)}, check=conv.conv2d_check),
    LibraryEntry("dot", "dot product of two [N] vectors (a whole-array reduction)", ("N",), linalg.dot,
                 linalg.dot_reference, lambda s, p: 2.0 * s["N"]),
    LibraryEntry("sum", "sum of the elements of [N] (a whole-array reduction)", ("N",), linalg.total,
                 linalg.total_reference, lambda s, p: float(s["N"])),
    LibraryEntry("max", "largest element of [N] (a whole-array reduction by max)", ("N",), linalg.maximum,
                 linalg.maximum_reference, lambda s, p: float(s["N"])),
    LibraryEntry("fully_connected", "relu(W x + b) for a batch: x [B][N], W [M][N], b [M] (relu=0: W x + b)",
                 ("B", "M", "N"), linalg.fully_connected, linalg.fully_connected_reference,
                 lambda s, p: 2.0 * s["B"] * s["M"] * s["N"], {"relu": 1}, {"relu": (0, 1)}),
    LibraryEntry("add", "elementwise sum of two [N] arrays (a residual connection), relu=1 fuses a ReLU", ("N",),
                 linalg.add, linalg.add_reference, lambda s, p: float(s["N"]), {"relu": 0}, {"relu": (0, 1)}),
    LibraryEntry("maxpool_hwc", "max pooling of [H][W][C] (channels innermost), k x k every stride, padding pad",
                 ("H", "W", "C"), pooling.maxpool_hwc, pooling.maxpool_hwc_reference,
                 lambda s, p: float(s["H"] * s["W"] * s["C"]), {"k": 2, "stride": 2, "pad": 0}),
    LibraryEntry("global_avgpool", "the mean of each channel of [H][W][C]", ("H", "W", "C"), pooling.global_avgpool_hwc,
                 pooling.global_avgpool_hwc_reference, lambda s, p: float(s["H"] * s["W"] * s["C"]), sized=True),
    LibraryEntry("softmax_rows", "softmax of each row of [M][N]", ("M", "N"), rows.softmax_rows, rows.softmax_rows_reference,
                 lambda s, p: 4.0 * s["M"] * s["N"], sized=True),
    LibraryEntry("layernorm_rows", "layer normalisation of each row of [M][N] (no scale or shift)", ("M", "N"),
                 rows.layernorm_rows, rows.layernorm_rows_reference, lambda s, p: 6.0 * s["M"] * s["N"], sized=True),
]}


def is_library_spec(spec: str) -> bool:
    """Whether a command-line operator names a library entry (``NAME`` or ``NAME:KEY=VALUE,...``)."""
    name, _, rest = spec.partition(":")
    return name in OPERATORS and (not rest or "=" in rest or not _importable(name))


def _importable(module: str) -> bool:
    """Whether ``module`` names a Python module or file here (then ``NAME:function`` is a function of it, not
    a library entry with a parameter lacking its value, ``jacobi2d:boundary``)."""
    if Path(module + ".py").exists():
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def parse_spec(spec: str) -> tuple[LibraryEntry, dict]:
    """The entry and its parameters (defaults filled in) of ``NAME[:KEY=VALUE,...]``."""
    name, _, rest = spec.partition(":")
    if name not in OPERATORS:
        raise InputError(f"no operator {name!r} in the library; it has: {', '.join(sorted(OPERATORS))}")
    entry = OPERATORS[name]
    params = dict(entry.params)
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq and key in entry.params:
            raise InputError(f"{name}: the parameter {key} needs a value ({key}={entry.params[key]}, say)")
        if not eq or key not in entry.params:
            known = ", ".join(f"{k}={v}" for k, v in entry.params.items()) or "none"
            raise InputError(f"{name}: unknown parameter {item!r}; its parameters (with defaults): {known}")
        default = entry.params[key]
        if isinstance(default, int):
            try:
                params[key] = int(value)
            except ValueError:
                raise InputError(f"{name}: {key} must be a whole number, got {value!r}") from None
            least = 0 if key in ("pad", "relu", "residual") else 1  # amounts and switches may be 0; sizes may not
            if params[key] < least:
                raise InputError(f"{name}: {key} must be at least {least}, got {params[key]}")
        else:
            params[key] = value
        allowed = entry.choices.get(key)
        if allowed and params[key] not in allowed:
            raise InputError(f"{name}: {key} must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return entry, params


def check_sizes(entry: LibraryEntry, sizes: Mapping[str, int], params: Mapping[str, Any] | None = None) -> None:
    """The sizes an entry's program needs, all given and nothing else, and the entry's own checks."""
    missing = [s for s in entry.sizes if s not in sizes]
    if missing:
        raise InputError(f"{entry.name} needs the sizes {', '.join(entry.sizes)} (give -s "
                         + ",".join(f"{s}=..." for s in entry.sizes) + f"); missing {', '.join(missing)}")
    extra = sorted(set(sizes) - set(entry.sizes))
    if extra:
        raise InputError(f"{entry.name} has no size {', '.join(extra)}; its sizes are {', '.join(entry.sizes)}")
    if entry.check is not None:
        entry.check(dict(sizes), dict(params if params is not None else entry.params))


def reference_of(entry: LibraryEntry, params: Mapping[str, Any]) -> Callable:
    """The numpy reference with its parameters bound (picklable: a partial of a module-level function)."""
    return partial(entry.reference, **params)


def describe() -> str:
    """One line per library entry: name, sizes, parameters, what it computes."""
    lines = []
    for e in OPERATORS.values():
        params = ",".join(f"{k}={v}" for k, v in e.params.items())
        lines.append(f"{e.name + (':' + params if params else ''):34} -s {','.join(s + '=..' for s in e.sizes):22} {e.summary}")
    return "\n".join(lines)
