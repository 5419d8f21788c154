"""Isolated evaluation: tasks run in worker processes, so a segfault, an abort or a hang in an OpenCL driver or
compiler costs one point, never the exploration.

A task is a module-level function (passed by reference: it travels to the worker as its module and name) with
picklable arguments and a time limit.  Workers are kept warm between tasks; a worker that crashed or timed
out is killed and replaced before its next task (``liftpy.runtime.process`` is a worker's side).

Every task ends in an ``Outcome`` with a ``Status``:

* ``ok``: the function returned; ``result`` is what it returned;
* an error status when it raised: ``compile_error`` for ``KernelBuildError`` and ``CodegenError``,
  ``invalid_config`` for ``ConstraintError``, the exception's own ``status`` attribute if it has one (a
  ``Status``), ``runtime_error`` otherwise; ``message`` and ``traceback`` say what happened;
* ``timeout``: it ran past its limit and the worker was killed (the clock starts when the task is handed to
  a ready worker, so starting a worker and its initializer never count against a task);
* ``crashed``: the worker died (``message`` names the signal).

A worker's stdout and stderr (the task's prints, the OpenCL compiler's chatter, the traceback Python's
faulthandler writes on a fatal signal) go to a log file; the part written during a failed task comes back as
``Outcome.log``, and none of it reaches the driver's terminal, where a progress line may be drawn.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..errors import TuningError
from ..results.store import Status
from .process import quiet_context, serve, signal_name, task_name

LOG_TAIL_CHARS = 4000


@dataclass(frozen=True)
class Task:
    fn: Callable  # a module-level function: it travels to the worker by reference (its module and name)
    args: tuple = ()
    kwargs: dict = field(default_factory=dict, hash=False)
    timeout_s: float | None = None  # None: the pool's default
    tag: Any = None  # the caller's identity for the task, handed back with its outcome

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise TuningError(f"a task runs a function (a module-level one, passed by reference), got {self.fn!r}")

    @property
    def name(self) -> str:
        """The function as messages name it: ``package.module:function``."""
        return task_name(self.fn)


@dataclass(frozen=True)
class Outcome:
    status: Status
    result: Any = None
    error_type: str | None = None  # qualified name of the exception class, when the task raised
    message: str | None = None
    traceback: str | None = None
    log: str = ""  # what the worker wrote to stdout/stderr during a failed task (its tail)
    elapsed_s: float = 0.0
    worker_pid: int | None = None
    exitcode: int | None = None  # of a crashed worker: negative is the signal number

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


class _Slot:
    """One worker process and what it is doing: 'starting', 'idle' or 'busy'."""

    def __init__(self, index: int, log_path: str):
        self.index = index
        self.log_path = log_path
        self.proc = None
        self.conn = None
        self.state = "down"
        self.pid: int | None = None
        self.task: Task | None = None
        self.task_id = 0
        self.deadline: float | None = None
        self.deadline_reason: str | None = None  # why the deadline was brought forward (``WorkerPool.limit_busy``)
        self.started: float = 0.0
        self.ready_at: float | None = None  # wall time its last start-up finished (imports, initializer)
        self.spawned_at: float = 0.0  # wall time its process was started
        self.start_steps: dict = {}  # seconds of the last start-up's steps, as the worker reported them
        self.log_offset = 0
        self.tasks_run = 0

    def log_since(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return text[-LOG_TAIL_CHARS:]

    def log_size(self) -> int:
        try:
            return os.path.getsize(self.log_path)
        except OSError:
            return 0


class WorkerPool:
    """Worker processes that run ``Task`` s in isolation; use as a context manager or call ``close``.

    ``workers``: how many tasks run at once (one per device is right for timing; more can overlap compiles).
    ``initializer``: a module-level function run once in every new worker with ``init_args`` (for example to
    build the OpenCL context); if it raises, the pool stops with a ``TuningError``.
    ``max_tasks_per_worker``: replace a worker after this many tasks, to bound what per-process caches grow to.
    """

    def __init__(
        self,
        workers: int = 1,
        *,
        initializer: Callable | None = None,
        init_args: tuple = (),
        start_method: str = "spawn",
        default_timeout_s: float | None = None,
        start_timeout_s: float = 120.0,
        max_tasks_per_worker: int | None = None,
        start_attempts: int = 3,
    ):
        if workers < 1:
            raise TuningError(f"a worker pool needs at least one worker, got {workers}")
        if start_method not in ("spawn", "forkserver"):
            raise TuningError(f"start method {start_method!r}: use 'spawn' or 'forkserver' (OpenCL does not survive fork)")
        if initializer is not None and not callable(initializer):
            raise TuningError(f"the initializer {initializer!r} is not a function")
        self._ctx = quiet_context(start_method)
        self._initializer = initializer
        self._init_args = tuple(init_args)
        self._default_timeout_s = default_timeout_s
        self._start_timeout_s = start_timeout_s
        self._max_tasks = max_tasks_per_worker
        self._start_attempts = start_attempts
        self._dir = tempfile.mkdtemp(prefix="liftpy-workers-")
        self._slots = [_Slot(i, os.path.join(self._dir, f"worker{i}.log")) for i in range(workers)]
        self._next_id = 0
        self._closed = False
        self.restarts = 0  # workers replaced after a crash or a timeout
        self._retired: list = []  # processes of workers replaced after their tasks, on their way out

    # -- process management ----------------------------------------------------------------------------

    def _start(self, slot: _Slot) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        open(slot.log_path, "wb").close()
        proc = self._ctx.Process(
            target=serve,
            args=(child, slot.log_path, self._initializer, self._init_args),
            name=f"liftpy-worker-{slot.index}",
            daemon=True,
        )
        slot.spawned_at = time.time()
        proc.start()
        child.close()  # so the driver sees EOF the moment the worker dies
        slot.proc, slot.conn, slot.state = proc, parent, "starting"
        slot.pid, slot.task, slot.tasks_run = proc.pid, None, 0
        slot.deadline = time.monotonic() + self._start_timeout_s

    def _stop(self, slot: _Slot, kill: bool, told: bool = False) -> None:
        """Stop a worker: asked to leave (unless ``told`` already) and given five seconds, else killed."""
        if slot.proc is None:
            return
        if not kill and slot.proc.is_alive():
            if not told:
                try:
                    slot.conn.send(None)
                except (OSError, ValueError):
                    pass  # already going: the join below reaps it, the kill below if it hangs
            slot.proc.join(5)
        if slot.proc.is_alive():
            slot.proc.kill()  # SIGKILL: a hung driver call may ignore SIGTERM
            slot.proc.join(10)
        slot.conn.close()
        self._down(slot)

    @staticmethod
    def _down(slot: _Slot) -> None:
        slot.proc, slot.conn, slot.state, slot.task, slot.deadline = None, None, "down", None, None

    def _retire(self, slot: _Slot) -> None:
        """A worker that ran its ``max_tasks_per_worker`` asked to leave, and its slot free for a new one at once:
        its interpreter takes about a second to exit, which the pool waited for (17 replacements were 21 s of
        a network exploration's main process on the 2-core machine).  Reaped later (``_reap``, ``close``)."""
        try:
            slot.conn.send(None)
        except (OSError, ValueError):
            pass  # already going
        self._retired.append((slot.proc, slot.conn))
        self._down(slot)
        self._reap(0)

    def _reap(self, wait_s: float) -> None:
        """Join the retired workers that have left (waiting up to ``wait_s`` for the rest, then killing them)."""
        left = []
        for proc, conn in self._retired:
            proc.join(wait_s)
            if proc.is_alive() and wait_s > 0:
                proc.kill()
                proc.join(10)
            if proc.is_alive():
                left.append((proc, conn))
            else:
                conn.close()
        self._retired = left

    def _dispatch(self, slot: _Slot, task: Task) -> bool:
        """Hand a task to an idle worker; False if the worker turned out to be dead (it is then replaced)."""
        try:
            data = pickle.dumps((task.fn, tuple(task.args), dict(task.kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001 - pickling errors come as several exception types
            raise TuningError(f"task {task.name} cannot be sent to a worker (its function must be a module-level "
                              f"one and its arguments picklable): {e}") from None
        self._next_id += 1
        slot.log_offset = slot.log_size()
        try:
            slot.conn.send((self._next_id, data))
        except OSError:
            self._stop(slot, kill=True)
            self.restarts += 1
            return False
        slot.task, slot.task_id, slot.state = task, self._next_id, "busy"
        slot.started, slot.deadline_reason = time.monotonic(), None
        limit = task.timeout_s if task.timeout_s is not None else self._default_timeout_s
        slot.deadline = None if limit is None else slot.started + limit
        return True

    def _idle(self) -> _Slot | None:
        """A worker ready for a task, if any."""
        return next((s for s in self._slots if s.state == "idle"), None)

    def _lost(self, slot: _Slot, status: Status, message: str, exitcode: int | None) -> Outcome:
        """The outcome of a busy worker that died or was killed, which is then replaced."""
        elapsed = time.monotonic() - slot.started
        outcome = Outcome(status, message=message, log=slot.log_since(slot.log_offset), elapsed_s=elapsed,
                          worker_pid=slot.pid, exitcode=exitcode)  # fmt: skip
        self._stop(slot, kill=True)
        self.restarts += 1
        return outcome

    def warm(self) -> "WorkerPool":
        """Start every worker now, without waiting for them: their start-up (imports, the initializer, an
        OpenCL context) then overlaps with whatever the caller does before its first task."""
        if self._closed:
            raise TuningError("this worker pool is closed; create a new WorkerPool")
        for slot in self._slots:
            if slot.state == "down":
                self._start(slot)
        return self

    @property
    def ready_at(self) -> list[float]:
        """The wall times at which the workers last finished starting, as far as the pool has heard: how long
        a caller's first task waited for a worker's start-up (an OpenCL context, a reference result)."""
        return [s.ready_at for s in self._slots if s.ready_at is not None]

    @property
    def start_steps(self) -> list[dict]:
        """Each started worker's last start-up in seconds: ``interpreter_s`` (a new interpreter importing the
        main module and what the initializer's arguments need), the initializer's own steps, ``total_s``."""
        return [dict(s.start_steps) for s in self._slots if s.start_steps]

    # -- running ---------------------------------------------------------------------------------------

    def run(self, task: Task) -> Outcome:
        """Run one task and return its outcome."""
        outcome = None
        for _, outcome in self.imap_unordered([task]):
            pass
        return outcome

    @property
    def width(self) -> int:
        """How many tasks run at once."""
        return len(self._slots)

    def run_all(self, fn: Callable, args: Sequence) -> list[tuple[bool, Any]]:
        """``fn`` (a module-level function) called on each of ``args`` on the workers: in the order of ``args``,
        ``(True, result)``, or ``(False, None)`` where the call failed (its outcome's status)."""
        out: list = [(False, None)] * len(args)
        for task, outcome in self.imap_unordered(Task(fn, (a,), tag=k) for k, a in enumerate(args)):
            out[task.tag] = (outcome.ok, outcome.result if outcome.ok else None)
        return out

    def limit_busy(self, seconds: float, reason: str) -> int:
        """Give every task running now at most ``seconds`` more: one still running then is stopped (its worker
        killed and replaced) and reported as a timeout whose message starts with ``reason``.  Called between
        the outcomes of ``imap_unordered`` (whose waits honour the new deadlines); a nearer deadline is kept.
        Returns how many tasks were running."""
        until = time.monotonic() + seconds
        busy = [s for s in self._slots if s.state == "busy"]
        for slot in busy:
            if slot.deadline is None or until < slot.deadline:
                slot.deadline, slot.deadline_reason = until, reason
        return len(busy)

    def imap_unordered(self, tasks: Iterable[Task], poll: Callable[[], bool] | None = None) -> Iterator[tuple[Task, Outcome] | None]:
        """Run tasks on the pool's workers, yielding ``(task, outcome)`` as each finishes.

        Tasks are drawn from ``tasks`` one ahead of the free workers, so it may be a generator that decides
        what to try next from the outcomes so far (all but the last round's).  A task drawn already goes to
        the worker that frees before that worker's outcome is yielded.  Leaving the loop early kills workers
        still busy.

        ``poll``, asked before each wait for the workers: while it returns True the pool does not wait, and a
        round in which no task finished yields None, handing control back to the caller (who takes in what is
        ready and hands new tasks to idle workers without stopping for the busy ones: the compile workers of
        an exploration, harvested between the points its measuring worker runs).
        """
        if self._closed:
            raise TuningError("this worker pool is closed; create a new WorkerPool")
        source = iter(tasks)
        pending: Task | None = None
        exhausted = False
        start_failures = 0
        try:
            while True:
                while not exhausted:
                    if pending is None:
                        pending = next(source, None)
                        if pending is None:
                            exhausted = True
                            break
                        if not isinstance(pending, Task):
                            raise TuningError(f"a worker pool runs Task objects, got {type(pending).__name__}")
                    idle = self._idle()
                    if idle is None:
                        # Workers start only when a task waits for one, and then all together: starting (imports,
                        # an OpenCL context) costs about a second each, and tasks go to whichever is ready first.
                        for down in (s for s in self._slots if s.state == "down"):
                            self._start(down)
                        break
                    if self._dispatch(idle, pending):
                        pending = None
                busy = [s for s in self._slots if s.state == "busy"]
                starting = [s for s in self._slots if s.state == "starting"]
                if exhausted and not busy:
                    return
                if not busy and not starting:
                    continue  # a worker was lost before taking its task; the loop above starts another
                deadlines = [s.deadline for s in busy + starting if s.deadline is not None]
                timeout = None if not deadlines else max(0.0, min(deadlines) - time.monotonic())
                polled = poll is not None and poll()
                if polled:
                    timeout = 0.0
                waitables = [s.conn for s in busy + starting] + [s.proc.sentinel for s in busy + starting]
                ready = set(wait(waitables, timeout))
                finished: list[tuple[Task, Outcome]] = []
                for slot in busy + starting:
                    if slot.conn in ready or slot.proc.sentinel in ready:
                        message = None
                        try:
                            if slot.conn.poll():
                                message = slot.conn.recv()
                        except (EOFError, OSError):
                            message = None
                        if message is None:
                            if slot.proc.is_alive():
                                continue  # the pipe woke us without a message; look again next round
                            slot.proc.join(1)
                            exitcode = slot.proc.exitcode
                            if slot.state == "busy":
                                task = slot.task
                                finished.append((task, self._lost(slot, Status.CRASHED,
                                                 f"the worker died ({signal_name(exitcode)}) while running {task.name}", exitcode)))  # fmt: skip
                            else:
                                start_failures += 1
                                log = slot.log_since(0)
                                self._stop(slot, kill=True)
                                if start_failures >= self._start_attempts:
                                    raise TuningError(
                                        f"worker processes die while starting ({signal_name(exitcode)}).  Workers are "
                                        "spawned, which re-imports the main module: a script must start its work under "
                                        "`if __name__ == '__main__':`; see the traceback printed above"
                                        + (f", and the worker's log:\n{log}" if log.strip() else "")
                                    )
                        elif message[0] == "ready":
                            slot.state, slot.deadline = "idle", None
                            slot.ready_at = message[2]
                            info = dict(message[3])
                            slot.start_steps = {"interpreter_s": info.pop("entered") - slot.spawned_at, **info,
                                                "total_s": slot.ready_at - slot.spawned_at}
                            start_failures = 0
                        elif message[0] == "init_failed":
                            raise TuningError(f"the worker initializer {task_name(self._initializer)} failed: {message[1]}\n{message[2]}")
                        elif message[0] == "done":
                            _, task_id, status, result, error_type, text, trace, retire = message
                            task = slot.task
                            failed = status != Status.OK.value
                            finished.append((task, Outcome(
                                Status(status), result, error_type, text, trace,
                                slot.log_since(slot.log_offset) if failed else "",
                                time.monotonic() - slot.started, slot.pid, None,
                            )))  # fmt: skip
                            slot.state, slot.task, slot.deadline = "idle", None, None
                            slot.tasks_run += 1
                            if retire:
                                self._stop(slot, kill=True)
                                self.restarts += 1
                            elif self._max_tasks is not None and slot.tasks_run >= self._max_tasks:
                                self._retire(slot)
                now = time.monotonic()
                for slot in self._slots:
                    if slot.deadline is None or now < slot.deadline:
                        continue
                    if slot.state == "busy":
                        task = slot.task
                        limit = slot.deadline - slot.started
                        message = (f"{slot.deadline_reason} (stopped after {limit:.1f} s)" if slot.deadline_reason
                                   else f"{task.name} ran past its {limit:g} s limit")
                        finished.append((task, self._lost(slot, Status.TIMEOUT, message, None)))
                    elif slot.state == "starting":
                        start_failures += 1
                        log = slot.log_since(0)
                        self._stop(slot, kill=True)
                        if start_failures >= self._start_attempts:
                            raise TuningError(
                                f"worker processes did not start within {self._start_timeout_s:g} s; the last one's log:\n{log}"
                            )
                if finished and pending is not None:
                    # The task drawn already goes to a worker this round freed before the caller gets the
                    # outcomes: the worker runs it while the caller stores them (one measuring worker sat idle
                    # through every result's bookkeeping).
                    idle = self._idle()
                    if idle is not None and self._dispatch(idle, pending):
                        pending = None
                yield from finished
                if polled and not finished:
                    yield None
        finally:
            # A busy worker's result would arrive in a later call and be taken for another task's.
            for slot in self._slots:
                if slot.state == "busy":
                    self._stop(slot, kill=True)

    def pids(self) -> list[int]:
        """Process ids of the live workers (to tell a warm worker from a replaced one)."""
        return [s.pid for s in self._slots if s.state != "down" and s.pid is not None]

    def close(self) -> None:
        if self._closed:
            return
        # Every worker is told first, so that they exit together instead of one join after another.
        for slot in self._slots:
            if slot.proc is not None and slot.proc.is_alive():
                try:
                    slot.conn.send(None)
                except (OSError, ValueError):
                    pass  # already gone: _stop below reaps it
        for slot in self._slots:
            self._stop(slot, kill=False, told=True)
        self._reap(5)
        shutil.rmtree(self._dir, ignore_errors=True)
        self._closed = True

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown may have torn down what close needs
            pass


class OnDemandPool:
    """A ``WorkerPool`` of ``width`` processes (made by ``start``) started the first time ``run_all`` is handed at
    least ``least`` calls at once; fewer before that run in this process.  For work that pays for starting
    processes only sometimes: a model search on a CPU device screens a chunk of a hundred variants at its
    first proposal (half a second each on this project's 2-core machine), while a resumed one finds them on
    disk, and processes importing beside it would only slow it."""

    def __init__(self, start: Callable[[], "WorkerPool"], width: int, least: int):
        self._start, self.width, self.least = start, width, least
        self.pool: WorkerPool | None = None

    def run_all(self, fn: Callable, args: Sequence) -> list[tuple[bool, Any]]:
        """``WorkerPool.run_all``; in this process while the pool is not started and ``args`` are few (a call
        that raises is ``(False, None)`` there too: its caller computes it again and sees the error)."""
        if self.pool is None:
            if len(args) < self.least:
                return [_call_here(fn, a) for a in args]
            self.pool = self._start()
        return self.pool.run_all(fn, args)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    def __enter__(self) -> "OnDemandPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _call_here(fn: Callable, arg) -> tuple[bool, Any]:
    try:
        return True, fn(arg)
    except Exception:  # noqa: BLE001 - reported as a failed call, as a worker's would be
        return False, None
