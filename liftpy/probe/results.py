"""What a probe produces: measured values (each with its unit, method and confidence) and raw curves.

All three are small immutable records; the profile writer turns them into the JSON document and the
plotter reads them back from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

Value = Union[int, float, str, None]


def plain(value):
    """A JSON-ready copy of a measured value: numpy scalars become Python numbers, non-finite becomes None."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Measurement:
    name: str
    value: Value  # None when the probe could not conclude; see ``note``
    unit: str
    method: str  # how the number is read off its curve
    confidence: float  # 0 (a guess) .. 1 (clear signal well above the noise)
    note: str = ""

    def as_json(self, probe: str) -> dict:
        entry = {"value": plain(self.value), "unit": self.unit, "method": self.method,
                 "confidence": round(float(self.confidence), 3), "probe": probe}
        if self.note:
            entry["note"] = self.note
        return entry


@dataclass(frozen=True)
class Curve:
    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    x_label: str
    y_label: str
    group: str = ""  # curves of one group are drawn in one panel
    log_x: bool = False
    log_y: bool = False
    marks: tuple[tuple[float, str], ...] = ()  # x positions of the numbers read off this curve

    def as_json(self, probe: str) -> dict:
        return {
            "x": [float(v) for v in self.x],
            "y": [float(v) for v in self.y],
            "x_label": self.x_label,
            "y_label": self.y_label,
            "probe": probe,
            "group": self.group or self.name,
            "log_x": self.log_x,
            "log_y": self.log_y,
            "marks": [{"x": float(x), "label": label} for x, label in self.marks],
        }


@dataclass(frozen=True)
class ProbeResult:
    probe: str
    measurements: tuple[Measurement, ...] = ()
    curves: tuple[Curve, ...] = ()
    status: str = "ok"  # ok | skipped | failed
    reason: str = ""
    seconds: float = 0.0
