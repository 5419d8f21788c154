"""A progress line for long explorations: points done and failed, the best so far, elapsed time and ETA.

In a terminal the line redraws itself in place (``\\r``, at most ten times a second).  Anywhere else (CI logs,
a file, a notebook's captured output) it prints a full line now and then instead (every ``log_every_s``
seconds, and at the end), so logs stay short and readable.  No curses, no terminal queries beyond isatty.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from typing import TextIO

from .pareto import MB
from .store import Status


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@dataclass(frozen=True)
class ProgressState:
    total: int
    ok: int = 0
    failed: int = 0
    resumed: int = 0  # points already in the store, not run again
    best_ms: float | None = None
    best_bytes: int | None = None
    elapsed_s: float = 0.0

    @property
    def done(self) -> int:
        return self.ok + self.failed + self.resumed

    @property
    def eta_s(self) -> float | None:
        """Remaining time at the rate of the points run so far (resumed points took no time)."""
        ran = self.ok + self.failed
        if ran == 0:
            return None
        return self.elapsed_s / ran * max(self.total - self.done, 0)


def format_progress(state: ProgressState, label: str = "") -> str:
    width = len(str(state.total))
    parts = [f"{label} " if label else "", f"[{state.done:>{width}}/{state.total}] {state.ok} ok, {state.failed} failed"]
    if state.resumed:
        parts.append(f", {state.resumed} resumed")
    if state.best_ms is not None:
        best = f" | best {state.best_ms:.4g} ms"
        if state.best_bytes is not None:
            best += f" ({state.best_bytes / MB:.4g} MB)"
        parts.append(best)
    parts.append(f" | {_clock(state.elapsed_s)} elapsed")
    eta = state.eta_s
    if state.done < state.total:
        parts.append(f", ETA {_clock(eta)}" if eta is not None else ", ETA ?")
    return "".join(parts)


class Progress:
    """Counts finished points and shows ``format_progress`` on ``stream`` (stdout by default)."""

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None, log_every_s: float = 30.0, resumed: int = 0,
                 best: tuple[float, int | None] | None = None):
        self.stream = stream if stream is not None else sys.stdout
        self.label = label
        self.log_every_s = log_every_s
        # ``best``: (ms, bytes) of the resumed points' fastest, so that the line's best is the exploration's, not
        # only this run's.
        self.state = ProgressState(total=total, resumed=resumed, best_ms=best[0] if best else None,
                                   best_bytes=best[1] if best else None)
        self._t0 = time.monotonic()
        self._last_draw = float("-inf")
        self._width = 0
        try:
            self._tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self._tty = False

    def update(self, status: Status, time_ms: float | None = None, bytes: int | None = None) -> None:
        """Count one finished point; an ``ok`` one with a time may be the new best (fastest)."""
        s = self.state
        if status is Status.OK:
            s = replace(s, ok=s.ok + 1)
            if time_ms is not None and (s.best_ms is None or time_ms < s.best_ms):
                s = replace(s, best_ms=time_ms, best_bytes=bytes)
        else:
            s = replace(s, failed=s.failed + 1)
        self.state = s
        self._draw(final=False)

    def resume(self, n: int = 1) -> None:
        """Count points found done in the store."""
        self.state = replace(self.state, resumed=self.state.resumed + n)
        self._draw(final=False)

    def close(self) -> None:
        self._draw(final=True)

    def _draw(self, final: bool) -> None:
        now = time.monotonic()
        self.state = replace(self.state, elapsed_s=now - self._t0)
        interval = 0.1 if self._tty else self.log_every_s
        if not final and now - self._last_draw < interval:
            return
        self._last_draw = now
        line = format_progress(self.state, self.label)
        if self._tty:
            # Pad over the previous, possibly longer line; the newline comes only at the end.
            self.stream.write("\r" + line.ljust(self._width) + ("\n" if final else ""))
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
