"""Isolated evaluation: tasks run in worker processes, so a segfault, an abort or a hang in an OpenCL driver or
compiler costs one point, never the exploration.

A task names a function by ``"module:function"`` (so a notebook or a CLI can send work without pickling code)
with picklable arguments and a time limit.  Each worker is a separate process started with ``spawn`` (or
``forkserver``): OpenCL implementations do not survive ``fork`` once initialised.  Workers are kept warm
between tasks, so what a task module caches at module level (OpenCL contexts, built programs) is paid for
once per worker; a worker that crashed or timed out is killed and replaced before its next task.

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

import importlib
import multiprocessing
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback as tb_module
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..errors import TuningError
from ..results.store import Status

_FN_NAME = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
LOG_TAIL_CHARS = 4000


def uncached_imports(modules: Iterable[str] = ("sympy", "numpy")) -> list[str]:
    """The packages among ``modules`` that every new worker process compiles from source: Python keeps no
    bytecode for them (``PYTHONDONTWRITEBYTECODE`` set, no ``__pycache__`` beside them and no
    ``PYTHONPYCACHEPREFIX``).  On a lent H100 whose image shipped sympy so, each worker's start took 3.4-4 s
    instead of 0.5-1.2 s, most of a resumed exploration's time to its first run."""
    import importlib.util

    if not sys.flags.dont_write_bytecode:
        return []  # whatever is missing is written by the first process that imports it
    out = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if origin and origin.endswith(".py") and not os.path.exists(importlib.util.cache_from_source(origin)):
            out.append(name)
    return out


@dataclass(frozen=True)
class Task:
    fn: str  # "package.module:function"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict, hash=False)
    timeout_s: float | None = None  # None: the pool's default
    tag: Any = None  # the caller's identity for the task, handed back with its outcome

    def __post_init__(self) -> None:
        if not isinstance(self.fn, str) or not _FN_NAME.match(self.fn):
            raise TuningError(f"task function {self.fn!r} must be named as 'package.module:function'")


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


def classify(exc: BaseException) -> Status:
    """The status of a task that raised ``exc``."""
    own = getattr(exc, "status", None)
    if isinstance(own, Status):
        return own
    from ..errors import CodegenError, ConstraintError, KernelBuildError

    if isinstance(exc, (KernelBuildError, CodegenError)):
        return Status.COMPILE_ERROR
    if isinstance(exc, ConstraintError):
        return Status.INVALID_CONFIG
    return Status.RUNTIME_ERROR


def _raise_kernel_run_error() -> None:
    """For tests: fail the way a faulting GPU kernel does."""
    from ..errors import KernelRunError

    raise KernelRunError("clWaitForEvents failed: <unknown error -9999> (simulated)")


def _resolve(name: str):
    module_name, _, attr = name.partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{name} is not callable")
    return obj


def _worker_main(conn, log_path: str, initializer: str | None, init_args: tuple) -> None:
    """The body of a worker process: run tasks sent over ``conn`` until told to stop or orphaned."""
    import faulthandler

    entered = time.time()  # after the interpreter started, imported the main module and unpickled the arguments

    # Ctrl-C in the terminal is the driver's to handle; it stops workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _sigint_unblocked()
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
    faulthandler.enable(file=sys.stderr, all_threads=True)
    steps = {}
    try:
        if initializer:
            steps = _resolve(initializer)(*init_args)
    except BaseException as e:  # noqa: BLE001 - reported to the driver, which stops the pool
        conn.send(("init_failed", f"{type(e).__name__}: {e}", tb_module.format_exc()))
        return
    # What the start-up took, for a driver that wants to know what its first task waited for: the
    # initializer may return a dict of its own steps' seconds.
    conn.send(("ready", os.getpid(), time.time(), {"entered": entered, **(steps if isinstance(steps, dict) else {})}))
    functions: dict[str, Any] = {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the driver is gone
        if message is None:
            return
        task_id, fn, args, kwargs = message
        try:
            if fn not in functions:
                functions[fn] = _resolve(fn)
            reply = ("done", task_id, Status.OK.value, functions[fn](*args, **kwargs), None, None, None, False)
        except BaseException as e:  # noqa: BLE001 - every failure of a task is its outcome
            exc_type = f"{type(e).__module__}.{type(e).__qualname__}"
            # An exception may say that the process that saw it cannot be trusted with more work (a GPU
            # fault leaves the OpenCL context unusable: every later build in it fails).
            retire = bool(getattr(e, "retires_worker", False))
            reply = ("done", task_id, classify(e).value, None, exc_type, str(e), tb_module.format_exc(), retire)
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            conn.send(reply)
        except Exception as e:  # noqa: BLE001 - a result that cannot be pickled is the task's error
            conn.send(("done", task_id, Status.RUNTIME_ERROR.value, None, f"{type(e).__module__}.{type(e).__qualname__}",
                       f"the task's result cannot be sent back to the driver: {e}", tb_module.format_exc(), False))  # fmt: skip


@contextmanager
def _sigint_held():
    """SIGINT kept from a process while it is started, so that a Ctrl-C in the terminal, sent to the whole
    process group, reaches the driver, which stops its workers, and not a worker importing its modules, which
    printed a KeyboardInterrupt traceback each.  The driver's main thread blocks SIGINT while it starts the
    process: the new process inherits the blocked signal through fork and exec, and keeps it blocked until the
    worker's body ignores it (``_worker_main``); the pools' other processes keep it blocked.  The driver loses
    nothing meanwhile: a Ctrl-C goes to another of its threads (numpy's are there), whose handler tells the
    main thread, or waits until the main thread unblocks it; the main thread's handler runs once the process
    is started.  Ignoring SIGINT in the driver instead, for the
    child to inherit, lost a Ctrl-C that came while a worker started (the exploration ran on to its end).
    Where there are no signal masks (Windows), SIGINT is ignored meanwhile, as it was.  Signal handlers
    belong to the main thread; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if hasattr(signal, "pthread_sigmask"):
        # Another thread's Ctrl-C runs the driver's handler in the main thread at once, which raised
        # KeyboardInterrupt in the middle of writing the new process's start-up data: the process then
        # printed an EOFError traceback.  The handler is deferred until the process is started.
        # A driver that ignores SIGINT (started in the background) goes on ignoring it; a handler installed
        # from C (``getsignal`` None) is left alone.
        pending = []
        previous = signal.getsignal(signal.SIGINT)
        defer = previous is not None and previous != signal.SIG_IGN
        if defer:
            signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            if defer:
                signal.signal(signal.SIGINT, previous)
            if pending:
                if callable(previous):
                    previous(signal.SIGINT, None)
                elif previous == signal.SIG_DFL:
                    signal.raise_signal(signal.SIGINT)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _sigint_unblocked() -> None:
    """In a started worker, once SIGINT is ignored: no longer blocked (inherited from ``_sigint_held``), so
    that what the worker runs (a compiler, a subprocess) starts with the usual signal mask."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class _QuietSpawnProcess(multiprocessing.context.SpawnProcess):
    def start(self):
        if os.name == "posix":
            # multiprocessing's resource tracker, started with the first spawned process, blocks SIGINT
            # while it starts and then unblocks it, undoing ``_sigint_held``'s block: started first.
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
        with _sigint_held():
            super().start()


class _QuietForkProcess(multiprocessing.context.ForkProcess):
    def start(self):
        with _sigint_held():
            super().start()


class _QuietSpawnContext(multiprocessing.context.SpawnContext):
    Process = _QuietSpawnProcess


class _QuietForkContext(multiprocessing.context.ForkContext):
    Process = _QuietForkProcess


def quiet_context(method: str | None = None):
    """A multiprocessing context (``spawn`` or ``fork``; None: the platform's default) whose processes
    leave Ctrl-C to the process that started them (``_sigint_held``): for every pool of the engine's."""
    method = method or multiprocessing.get_start_method()
    if method == "spawn":
        return _QuietSpawnContext()
    if method == "fork":
        return _QuietForkContext()
    return multiprocessing.get_context(method)


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None:
        return "unknown exit"
    if exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


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
    ``initializer``: ``"module:function"`` run once in every new worker with ``init_args`` (for example to
    build the OpenCL context); if it raises, the pool stops with a ``TuningError``.
    ``max_tasks_per_worker``: replace a worker after this many tasks, to bound what per-process caches grow to.
    """

    def __init__(
        self,
        workers: int = 1,
        *,
        initializer: str | None = None,
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
        if initializer is not None and not _FN_NAME.match(initializer):
            raise TuningError(f"initializer {initializer!r} must be named as 'package.module:function'")
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

    # -- process management ----------------------------------------------------------------------------

    def _start(self, slot: _Slot) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        open(slot.log_path, "wb").close()
        proc = self._ctx.Process(
            target=_worker_main,
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
        slot.proc, slot.conn, slot.state, slot.task, slot.deadline = None, None, "down", None, None

    def _dispatch(self, slot: _Slot, task: Task) -> bool:
        """Hand a task to an idle worker; False if the worker turned out to be dead (it is then replaced)."""
        self._next_id += 1
        slot.log_offset = slot.log_size()
        try:
            slot.conn.send((self._next_id, task.fn, tuple(task.args), dict(task.kwargs)))
        except OSError:
            self._stop(slot, kill=True)
            self.restarts += 1
            return False
        except Exception as e:  # noqa: BLE001 - pickling errors come as several exception types
            raise TuningError(f"the arguments of task {task.fn} cannot be sent to a worker (they must be picklable): {e}") from None
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

    def run_all(self, fn: str, args: Sequence) -> list[tuple[bool, Any]]:
        """``fn`` (``package.module:function``) called on each of ``args`` on the workers: in the order of
        ``args``, ``(True, result)``, or ``(False, None)`` where the call failed (its outcome's status)."""
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
                                                 f"the worker died ({_signal_name(exitcode)}) while running {task.fn}", exitcode)))  # fmt: skip
                            else:
                                start_failures += 1
                                log = slot.log_since(0)
                                self._stop(slot, kill=True)
                                if start_failures >= self._start_attempts:
                                    raise TuningError(
                                        f"worker processes die while starting ({_signal_name(exitcode)}).  Workers are "
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
                            raise TuningError(f"the worker initializer {self._initializer} failed: {message[1]}\n{message[2]}")
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
                                self._stop(slot, kill=False)
                now = time.monotonic()
                for slot in self._slots:
                    if slot.deadline is None or now < slot.deadline:
                        continue
                    if slot.state == "busy":
                        task = slot.task
                        limit = slot.deadline - slot.started
                        message = (f"{slot.deadline_reason} (stopped after {limit:.1f} s)" if slot.deadline_reason
                                   else f"{task.fn} ran past its {limit:g} s limit")
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

    def run_all(self, fn: str, args: Sequence) -> list[tuple[bool, Any]]:
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


def _call_here(fn: str, arg) -> tuple[bool, Any]:
    try:
        return True, _resolve(fn)(arg)
    except Exception:  # noqa: BLE001 - reported as a failed call, as a worker's would be
        return False, None
