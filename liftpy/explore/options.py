"""What an exploration is asked to do (``ExplorationOptions``, checked when made) and what it gives back
(``Exploration``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import TuningError
from ..results.pareto import format_frontier
from ..runtime.evaluate import STRAGGLER_S
from ..search import UniformSearch
from ..search.strategy import Strategy
from ..search.variants import rule_list


@dataclass(frozen=True)
class ExplorationOptions:
    """Every setting of an exploration (``explore_operator``); a value that cannot work is refused when the
    options are made, before any work.

    ``samples``: points of this problem the store should hold when done (resumed ones count); ``db``: the
    results store, which a run resumes from and writes each point to as soon as it is known; ``device``: an
    OpenCL device index or name fragment (the default device if None); ``profile_path``: a device profile
    (``liftpy probe``) instead of the device's own limits; ``timeout_s``: seconds one point may take;
    ``repeat``: timed runs per point (their median; on a CPU device the fastest of at least 40:
    ``liftpy.host.timing``), after ``warmup`` runs; ``references``: measure the operator's references (once per
    problem and device); ``progress`` and ``stream``: the progress line, and where it goes (stdout);
    ``rules``: only the variants whose derivation uses every one of these rules (``A|B`` either, ``!R`` none
    of R; the command line's ``A,B`` as one string); ``search``: the strategy, a class (``UniformSearch``,
    ``ModelSearch``: ``liftpy.search``); ``jobs``: code-generation processes (measurement is always one
    process; by default ``devices.default_jobs``); ``budget_s``: start no point after this many seconds (the
    one measuring then finishes); ``abort_factor``: stop a point after one run slower than this many times the
    best so far (below 1 that stops points faster than the best too: the command line refuses it);
    ``straggler_s``: stop a compile step still running this many seconds after the rest of its batch went to
    the device (``liftpy.runtime.evaluate``; None waits for it); ``batch``: points per proposal (by default
    the strategy's ``batch_size``); ``variants``: explore these instead of the operator's (cached)
    derivation; ``workers``: spread the points over device workers on Ray (``local:N``, ``ray://HOST:PORT``,
    ``ray`` or a ``runtime.cluster.Cluster``), ``jobs`` code-generation processes each; ``baselines``:
    Python callables to time on the same inputs (``module:function``, see ``liftpy.explore.baseline``), kept
    in the store as references; ``shared``: this machine's device workers shared by several explorations
    (``devices.SharedWorkers``, as a network's layers use them), instead of workers of this exploration's own;
    ``save_batch``: choose the batch a resumed run would start with, and generate its kernels, at the end (a
    network never resumes a layer it finished: it reads the layer's best point from the store).
    """

    samples: int = 100
    db: str | Path = "results.sqlite"
    device: object = None
    profile_path: str | Path | None = None
    seed: int = 0
    timeout_s: float = 300.0
    repeat: int = 5
    warmup: int = 1
    references: bool = True
    progress: bool = True
    stream: object = None
    rules: Sequence[str] = ()
    search: type[Strategy] = UniformSearch
    jobs: int | None = None
    budget_s: float | None = None
    abort_factor: float | None = None
    straggler_s: float | None = STRAGGLER_S
    batch: int | None = None
    variants: Sequence | None = None
    workers: object = None
    baselines: Sequence[str] = ()
    shared: object = None
    save_batch: bool = True

    def __post_init__(self) -> None:
        if not (isinstance(self.search, type) and issubclass(self.search, Strategy)):
            raise TuningError(f"search {self.search!r} is not a search strategy: pass one, such as "
                              "liftpy.search.ModelSearch or UniformSearch")
        object.__setattr__(self, "rules", rule_list(self.rules))
        object.__setattr__(self, "baselines", tuple(self.baselines))
        if self.samples < 1:
            raise TuningError(f"samples must be a positive number of points, got {self.samples}")
        if self.abort_factor is not None and not self.abort_factor > 0:
            raise TuningError(f"the abort factor must be positive, got {self.abort_factor:g}")
        if self.shared is not None and self.workers is not None:
            raise TuningError("shared local workers and device workers on Ray exclude each other")
        if self.workers is not None and self.device is not None:
            raise TuningError("choose the device or the device workers, not both: with workers, each measures on "
                              "the device Ray assigns it")


@dataclass(frozen=True)
class Exploration:
    operator: object
    device: str
    records: list  # every record of this problem and device, references included
    frontier: list
    references: list
    ran: int
    resumed: int
    failed: int
    search: str = "uniform"  # the strategy's name
    seconds: float = 0.0
    lost_workers: int = 0  # device workers that died during the run (with workers on Ray)
    requeued: int = 0  # points given to another device worker because theirs died
    first_proposal_s: float | None = None  # from the call to the first points chosen (a resume's own overhead)
    first_result_s: float | None = None  # from the call to the first new point's outcome
    measure_ready_s: float | None = None  # from the call to the measuring worker's start-up finished
    measure_start_steps: dict | None = None  # seconds of that start-up's steps (``WorkerPool.start_steps``)
    from_saved_batch: int = 0  # points of the first batch taken from the batch the run before saved
    prebuilt: int = 0  # points of the batch this run saved that it built on the device (``resume.save_plan``)
    exhausted: bool = False  # the search had no valid point left to propose before it ran all it was asked
    over_budget: bool = False  # the budget ran out before all the points asked for ran
    roofline_gb_s: float | None = None  # the device's memory bandwidth, where a probe measured it

    def table(self) -> str:
        return format_frontier(self.frontier, self.references, flops=self.operator.flops(),
                               min_bytes=self.operator.min_bytes(), roofline_gb_s=self.roofline_gb_s)

    @property
    def best(self):
        ok = [r for r in self.records if r.measured and not r.is_reference]
        return min(ok, key=lambda r: r.time_ms) if ok else None
