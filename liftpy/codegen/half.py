"""Half storage in generated kernels: float arrays kept as half in global memory (issue 57).

A buffer with ``stored == "half"`` holds floats as halves.  The kernel never dereferences its ``half*``
(that needs ``cl_khr_fp16``, which NVIDIA and PoCL do not report): it reads with ``vload_half`` /
``vload_halfN``, which give floats, and writes with ``vstore_half_rte`` / ``vstore_halfN_rte``, which round
a float to the nearest half.  Both are core OpenCL, so every device runs these kernels, and every value the
kernel computes with stays a float: only the memory traffic halves.

``half_placements`` decides which arrays of a kernel are stored so, from a variant's placements (an input
by its name, the result by ``OUTPUT_KEY``); the emitter then gives those buffers ``stored="half"`` and the
printer (``render.value_c``, ``render._store_c``) asks here for the text of their accesses.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import CodegenError
from ..ir.precision import HALF_PLACEMENT
from ..ir.types import Float, Type, memory_element

HALF = HALF_PLACEMENT


def half_storable(t: Type) -> bool:
    """Whether an array of type ``t`` can be stored as half: its elements are floats or float vectors
    (a tuple's struct or an int has no half form)."""
    return memory_element(t) == Float


def check_half_storable(name: str, t: Type) -> None:
    if not half_storable(t):
        raise CodegenError(f"'{name}' of type {t} cannot be stored as half: only arrays of floats (or float vectors) "
                           "can; keep it in float (no half placement for it)")


def is_half(buffer) -> bool:
    return getattr(buffer, "stored", None) == HALF


def storage_dtype(buffer) -> np.dtype:
    """The numpy type of a buffer's memory, as the host uploads and reads it back."""
    return np.dtype(np.float16) if is_half(buffer) else buffer.scalar.dtype


def element_bytes(buffer) -> int:
    """Bytes one element of a buffer takes in memory (2 for a half-stored float)."""
    return 2 if is_half(buffer) else buffer.scalar.nbytes


def _address(name: str, index_c: str) -> str:
    return name if index_c == "0" else f"{name} + {index_c}"


def read_c(buffer, index_c: str, width: int, aligned: bool = False) -> str:
    """A float (or floatN) read from a half buffer at element ``index_c``; ``aligned``: the index is a
    multiple of the width (eight halves are then read as one word, ``WORD_HELPERS``)."""
    if width == 1:
        return f"vload_half({index_c}, {buffer.name})"
    if width in WORD_WIDTHS and aligned:
        return f"load_half{width}_word({_address(buffer.name, index_c)})"
    return f"vload_half{width}(0, {_address(buffer.name, index_c)})"


def store_c(buffer, index_c: str, value_c: str, width: int, aligned: bool = False) -> str:
    """A float (or floatN) written to a half buffer at element ``index_c``, rounded to nearest even."""
    if width == 1:
        return f"vstore_half_rte({value_c}, {index_c}, {buffer.name});"
    if width in WORD_WIDTHS and aligned:
        return f"store_half{width}_word({value_c}, {_address(buffer.name, index_c)});"
    return f"vstore_half{width}_rte({value_c}, 0, {_address(buffer.name, index_c)});"


# Eight halves at an index that is a multiple of eight move as one sixteen-byte word (sixteen as two), converted
# four at a time in private memory: NVIDIA's OpenCL reads ``vload_half8`` from global memory at 1.7 TB/s and
# ``vload_half4`` at 3.6 on an H200, these at 4.1, as fast as float4 (adding two 2^26 arrays: 0.097 ms against
# float4's 0.196 and ``vload_half4``'s 0.110; ``benchmarks/results/h200-halfconv.json``).  The buffers' 16-byte
# alignment is the OpenCL allocator's, as for the aligned float vector accesses (every buffer is a whole
# ``cl.Buffer``).  The word is read through the halves' pointer: NVIDIA's driver, PoCL and Oclgrind compute it
# bit for bit (tests/test_half_storage.py, h200-halfconv.json).
WORD_WIDTHS = (8, 16)
WORD_HELPERS = """float8 load_half8_word(const global half* p) {
  const uint4 w = *(const global uint4*)p;
  return (float8)(vload_half4(0, (const private half*)&w), vload_half4(1, (const private half*)&w));
}

void store_half8_word(float8 v, global half* p) {
  uint4 w;
  vstore_half4_rte(v.lo, 0, (private half*)&w);
  vstore_half4_rte(v.hi, 1, (private half*)&w);
  *(global uint4*)p = w;
}

float16 load_half16_word(const global half* p) {
  return (float16)(load_half8_word(p), load_half8_word(p + 8));
}

void store_half16_word(float16 v, global half* p) {
  store_half8_word(v.lo, p);
  store_half8_word(v.hi, p + 8);
}
"""


def uses_word_helpers(lines: list[str]) -> bool:
    """Whether a kernel's body calls the word helpers, which its preamble then defines (once)."""
    return any("half8_word(" in line or "half16_word(" in line for line in lines)


def param_c(buffer) -> str:
    const = "const " if buffer.role == "input" else ""
    return f"global {const}half* restrict {buffer.name}"


def to_device(arr: np.ndarray, half_stored: bool) -> np.ndarray:
    """An input's host array as its buffer holds it (rounded to nearest half where stored as half)."""
    return np.ascontiguousarray(arr, dtype=np.float16) if half_stored else arr


def from_device(arr: np.ndarray, buffer) -> np.ndarray:
    """A result read back, as the program's float result: a half buffer's values widened to float32."""
    return arr.astype(np.float32) if is_half(buffer) else arr


def preamble(ir) -> list[str]:
    """The lines a kernel's text starts with for half: the arrays it stores as half, and where it computes
    in half (a half program: precision fp16) the ``cl_khr_fp16`` pragma.  None for a float kernel, whose
    text is as before."""
    out = []
    names = [b.name for b in ir.params if is_half(b)]
    if names:
        out += [f"// half storage: {', '.join(names)} (vload_half / vstore_half_rte; arithmetic in float)", ""]
    buffers = tuple(ir.params) + tuple(ir.locals)
    if any(b.scalar.name == "half" for b in buffers) or any(re.search(r"\bhalf\d*\b", d) for _, d in ir.functions):
        out += ["// half arithmetic: needs cl_khr_fp16, or the half probe (liftpy.probe.half) passed", PRAGMA, ""]
    return out


PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable"
