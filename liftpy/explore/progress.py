"""Progress of a long exploration: what it is doing before the first point (deriving the variants, screening
their spaces), then points done and failed, the best so far, elapsed time and ETA.

In a terminal it is a tqdm bar, shown from the start of the exploration (its phase in the description, the
counts and the best time beside it; tqdm's smoothed rate gives the ETA, so the first point's worker start-up
does not dominate it).  Anywhere else (CI logs, a file, a notebook's captured output) it prints a full line
now and then instead (every ``log_every_s`` seconds, at each phase, and at the end), so logs stay short.
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass, replace
from typing import TextIO

from tqdm import tqdm

from ..results.pareto import MB
from ..results.store import Status


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
    """Counts finished points and shows them on ``stream`` (stdout by default): a tqdm bar in a terminal,
    ``format_progress`` lines elsewhere.  ``phase`` says what happens before the points start."""

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
        try:
            tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            tty = False
        # The terminal's size as Python reads it: tqdm's own query gave -1 rows on pseudo-terminals without a
        # window size (ssh -T, script, pty), and a bar below row -1 is never drawn.
        width, height = shutil.get_terminal_size((100, 24))
        self._bar = tqdm(total=total, initial=resumed, desc=label or None, file=self.stream, unit="pt", leave=True,
                         ncols=width if width > 0 else 100, nrows=height if height > 0 else 24, smoothing=0.3,
                         mininterval=0.1) if tty else None

    def phase(self, text: str) -> None:
        """What the exploration is doing before its points run (or between batches), shown at once."""
        if self._bar is not None:
            self._bar.set_description(f"{self.label}: {text}" if self.label else text)
        else:
            self.stream.write(f"{self.label}: {text}\n" if self.label else f"{text}\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own, printed above the bar (or in the log)."""
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def start(self, total: int, resumed: int = 0, best: tuple[float, int | None] | None = None) -> None:
        """The points are about to run: ``total`` in all, ``resumed`` of them already in the store."""
        self.state = replace(self.state, total=total, resumed=resumed,
                             best_ms=best[0] if best else self.state.best_ms, best_bytes=best[1] if best else self.state.best_bytes)
        if self._bar is not None:
            self._bar.reset(total=total)
            self._bar.update(resumed)
            self._bar.set_description(self.label or None)

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
        self._draw(final=False, advance=1)

    def resume(self, n: int = 1) -> None:
        """Count points found done in the store."""
        self.state = replace(self.state, resumed=self.state.resumed + n)
        self._draw(final=False, advance=n)

    def close(self) -> None:
        self._draw(final=True, advance=0)

    def _draw(self, final: bool, advance: int) -> None:
        now = time.monotonic()
        self.state = replace(self.state, elapsed_s=now - self._t0)
        if self._bar is not None:
            s = self.state
            best = f", best {s.best_ms:.4g} ms" if s.best_ms is not None else ""
            self._bar.set_postfix_str(f"{s.ok} ok, {s.failed} failed" + (f", {s.resumed} resumed" if s.resumed else "") + best,
                                      refresh=False)
            self._bar.update(advance)
            if final:
                self._bar.close()
            return
        if not final and now - self._last_draw < self.log_every_s:
            return
        self._last_draw = now
        self.stream.write(format_progress(self.state, self.label) + "\n")
        self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
