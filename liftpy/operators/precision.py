"""``precision=fp32|fp16-storage|fp16`` for the operator library, ``liftpy explore`` and ``liftpy network``.

- ``fp32``: the operator as it always was;
- ``fp16-storage``: the same program, explored with every float array stored as half
  (``ExploreOptions.precision``, ``liftpy.rewrite.half``): only such variants are enumerated;
- ``fp16``: the program computing in half (``rewrite.half.half_arithmetic``), its arrays half too, checked
  with the tolerance of half arithmetic over its reduction length.  A device must have half arithmetic
  (``liftpy.probe.half``): ``require_device`` refuses it in one line otherwise, naming fp16-storage.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import TuningError
from ..host.device import get_device
from ..host.profile import resolve_profile
from ..ir.precision import FP16, FP16_STORAGE, FP32, check_precision, tolerance
from ..ir.typecheck import typecheck
from ..ir.types import flat_count, size_var, substitute_sizes
from ..probe.half import has_half_arithmetic, require_half_arithmetic, run_probe
from ..rewrite.half import half_arithmetic


def reduction_length(op) -> int:
    """The terms summed into one output element, from the operator's FLOPs (a multiply-add two) over its output
    elements: K for a matrix product, C*KH*KW for a convolution, 1 for elementwise operators."""
    flops = op.flops()
    if not flops:
        return 1
    out = substitute_sizes(flat_count(typecheck(op.program()).type), {size_var(k): v for k, v in op.sizes().items()})
    return max(1, int(flops / (2 * int(out)))) if out.is_Integer and int(out) > 0 else 1


def with_precision(op, precision: str = FP32):
    """``op`` (a program or library operator) at ``precision``: its variants those of that precision."""
    try:
        check_precision(precision)
    except ValueError as e:
        raise TuningError(str(e)) from None
    if precision == FP32:
        return op
    if not hasattr(op, "prog"):
        raise TuningError(f"precision {precision} is for programs and library operators (conv2d:k=3x3,... for a "
                          f"convolution), not {type(op).__name__}")
    options = op.explore_options()
    if precision == FP16_STORAGE:
        return replace(op, options=replace(options, precision=FP16_STORAGE))

    arrays = len(op.prog.params) + 1
    return replace(op, prog=half_arithmetic(op.prog), options=replace(options, precision=FP16),
                   rtol=tolerance(FP16, arrays, reduction_length(op), base=op.rtol))


def require_device(precision: str, device=None, profile_path=None) -> None:
    """Refuse ``precision=fp16`` before any work where the device has no half arithmetic: the profile's probe
    answer (``--profile``), else the device's extension string, else the probe run now (one small build)."""
    if precision != FP16:
        return

    dev = get_device(device)
    available = has_half_arithmetic(resolve_profile(dev.index, profile_path))
    if available is None:
        available = "cl_khr_fp16" in (dev.cl_device.extensions or "") or bool(run_probe(dev).value)
    require_half_arithmetic(dev.info.name, available)
