"""One worker process of a ``WorkerPool``: its body, how it is started, and what a failed task becomes.

Each worker is a separate process started with ``spawn`` (or ``forkserver``): OpenCL implementations do not
survive ``fork`` once initialised.  A task travels to it as a function reference and picklable arguments:
pickle names a module-level function by its module and qualified name, and the worker imports that module
(once: it stays warm between tasks, so what a task module caches at module level, OpenCL contexts and built
programs, is paid for once per worker).  The worker ignores Ctrl-C, which is the driver's to handle
(``quiet_context``), and writes its stdout and stderr to a log file, whose part written during a failed task
comes back with its outcome.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback as tb_module
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import Iterable

from ..errors import CodegenError, ConstraintError, KernelBuildError, KernelRunError
from ..results.store import Status


def task_name(fn) -> str:
    """A task's function as messages name it: ``package.module:function``."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}:{name}" if module and name else repr(fn)


def uncached_imports(modules: Iterable[str] = ("sympy", "numpy")) -> list[str]:
    """The packages among ``modules`` that every new worker process compiles from source: Python keeps no
    bytecode for them (``PYTHONDONTWRITEBYTECODE`` set, no ``__pycache__`` beside them and no
    ``PYTHONPYCACHEPREFIX``).  On a lent H100 whose image shipped sympy so, each worker's start took 3.4-4 s
    instead of 0.5-1.2 s, most of a resumed exploration's time to its first run."""
    if not sys.flags.dont_write_bytecode:
        return []  # whatever is missing is written by the first process that imports it
    out = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if origin and origin.endswith(".py") and not os.path.exists(importlib.util.cache_from_source(origin)):
            out.append(name)
    return out


def classify(exc: BaseException) -> Status:
    """The status of a task that raised ``exc``."""
    own = getattr(exc, "status", None)
    if isinstance(own, Status):
        return own
    if isinstance(exc, (KernelBuildError, CodegenError)):
        return Status.COMPILE_ERROR
    if isinstance(exc, ConstraintError):
        return Status.INVALID_CONFIG
    return Status.RUNTIME_ERROR


def _raise_kernel_run_error() -> None:
    """For tests: fail the way a faulting GPU kernel does."""
    raise KernelRunError("clWaitForEvents failed: <unknown error -9999> (simulated)")


def serve(conn, log_path: str, initializer, init_args: tuple) -> None:
    """The body of a worker process: run the tasks sent over ``conn`` (a task id and the pickled function,
    arguments and keywords) until told to stop or orphaned."""
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
            steps = initializer(*init_args)
    except BaseException as e:  # noqa: BLE001 - reported to the driver, which stops the pool
        conn.send(("init_failed", f"{type(e).__name__}: {e}", tb_module.format_exc()))
        return
    # What the start-up took, for a driver that wants to know what its first task waited for: the
    # initializer may return a dict of its own steps' seconds.
    conn.send(("ready", os.getpid(), time.time(), {"entered": entered, **(steps if isinstance(steps, dict) else {})}))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the driver is gone
        if message is None:
            return
        task_id, data = message
        try:
            # Unpickled here, not by ``recv``: a function this process cannot import (defined in a notebook,
            # or in a module only the driver's path holds) is the task's error, not the worker's end.
            fn, args, kwargs = pickle.loads(data)
            reply = ("done", task_id, Status.OK.value, fn(*args, **kwargs), None, None, None, False)
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
    worker's body ignores it (``serve``); the pools' other processes keep it blocked.  The driver loses
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


def signal_name(exitcode: int | None) -> str:
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
