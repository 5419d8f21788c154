"""Shared test configuration.

Hypothesis runs deterministically (``derandomize=True``): the same examples on every run and machine, so
CI is reproducible; tests bound their own ``max_examples`` with ``@settings``.  Set
``HYPOTHESIS_PROFILE=liftpy-explore`` to search with fresh random examples locally.
"""

import os
import sys
import time

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "liftpy-ci",
    derandomize=True,
    database=None,  # no replay of examples saved by earlier runs: every run tests exactly the same examples
    deadline=None,
    max_examples=25,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "liftpy-explore",
    derandomize=False,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "liftpy-ci"))


def on_simulator() -> bool:
    """Whether the default device is the Oclgrind simulator (where PoCL cannot build for the CPU)."""
    from liftpy.host.device import get_device

    return "oclgrind" in get_device(None).info.platform.lower()


# The warning filters of a fresh interpreter (no -W, no PYTHONWARNINGS): what ``python -m liftpy`` shows.
_FRESH_WARNING_FILTERS = (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                          ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                          ("ignore", ResourceWarning, ""))


def liftpy_here(args, cwd=None) -> tuple[int, str, str]:
    """``python -m liftpy ARGS`` in this process: ``liftpy.cli.main(args)`` with its stdout and stderr captured,
    the warnings a fresh interpreter shows printed to that stderr, an exception that escapes it printed as the
    interpreter prints one (a traceback, exit status 1), and ``SystemExit`` (argparse's usage errors) ending it
    with its code as it ends the process.  Returns (exit status, stdout, stderr), as ``subprocess.run`` gives
    them.  An interpreter costs a second of CPU to start and import liftpy; this, a few milliseconds.  What a C
    library writes to the file descriptors themselves is not captured: tests of commands that build or run
    kernels start the process.  (tests/test_cli_input.py compares the two on a few commands.)"""
    import contextlib
    import io
    import traceback
    import warnings

    from liftpy.cli import main

    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in _FRESH_WARNING_FILTERS:
                warnings.filterwarnings(action, category=category, module=module, append=True)
            warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: sys.stderr.write(
                warnings.formatwarning(message, category, filename, lineno, line))
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    code = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    code = 1
            except Exception:  # noqa: BLE001 - what the interpreter does with it
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(before)
    return int(code or 0), out.getvalue(), err.getvalue()


@pytest.fixture(scope="session", autouse=True)
def shared_derivation_cache(tmp_path_factory):
    """One cache of derived variants for the whole run (in a fresh directory, so nothing is read from an
    earlier run or the user's cache): the convolution's 3,000 variants are derived once, not once per
    module (or per xdist worker) that needs them; the command-line tests' subprocesses inherit it."""
    if os.environ.get("LIFTPY_CACHE_DIR"):
        yield
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # One for all of xdist's workers (their base folders share this run's parent): what one derived, the
        # other reads instead of deriving it again.  Its entries are written atomically (results.cache).
        folder = tmp_path_factory.getbasetemp().parent / "liftpy-cache"
        folder.mkdir(mode=0o700, exist_ok=True)  # (a folder others may write is no cache: results.cache)
    else:
        folder = tmp_path_factory.mktemp("liftpy-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIFTPY_CACHE_DIR", str(folder))
        yield


class PoolHere:
    """``liftpy.runtime.pool.WorkerPool``'s interface, every task run in this process: for tests of what an exploration
    does with its workers, not of the workers (a real pool spawns interpreters that import liftpy and make an
    OpenCL context: one to three seconds each on a 2-core machine, for every exploration).  The tests of the
    pool itself, and a few explorations marked ``slow``, start real processes.

    Tasks run one at a time in the order drawn, with no time limit and no isolation (a task that crashes takes
    the test with it); their arguments and results go through pickle, as to and from a worker.  Tasks are drawn
    ahead as a pool of ``width`` workers draws them: when the k-th outcome is yielded, the tasks up to the
    (k + width)-th are drawn (an exploration decides a point's abort bar when the point is drawn: a uniform
    search's second point is drawn while its first runs).  With ``poll``, an outcome is followed by a None
    where ``poll()`` says so and tasks are left, as a pool whose other workers are still busy yields."""

    def __init__(self, workers: int = 1, *, initializer=None, init_args: tuple = (), **_ignored):
        self._width, self._initializer, self._init_args = workers, initializer, tuple(init_args)
        self._ready_at: float | None = None
        self._steps: dict = {}
        self._closed = False
        self.restarts = 0

    def _start(self) -> None:
        if self._ready_at is not None:
            return
        from liftpy.errors import TuningError
        from liftpy.runtime.process import task_name

        t = time.time()
        try:
            steps = self._initializer(*self._init_args) if self._initializer else {}
        except Exception as e:  # noqa: BLE001 - as a real pool reports a failed initializer
            raise TuningError(f"the worker initializer {task_name(self._initializer)} failed: {type(e).__name__}: {e}") from e
        self._ready_at = time.time()
        self._steps = {"interpreter_s": 0.0, **(steps if isinstance(steps, dict) else {}), "total_s": self._ready_at - t}

    def warm(self) -> "PoolHere":
        self._start()
        return self

    @property
    def width(self) -> int:
        return self._width

    @property
    def ready_at(self) -> list[float]:
        return [] if self._ready_at is None else [self._ready_at]

    @property
    def start_steps(self) -> list[dict]:
        return [dict(self._steps)] if self._steps else []

    def pids(self) -> list[int]:
        return [os.getpid()] if self._ready_at is not None else []

    def _run(self, task):
        import pickle
        import traceback
        from multiprocessing.reduction import ForkingPickler

        from liftpy.results.store import Status
        from liftpy.runtime.pool import Outcome
        from liftpy.runtime.process import classify

        from liftpy.errors import TuningError

        self._start()
        try:
            sent = pickle.dumps((task.fn, tuple(task.args), dict(task.kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001 - as a real pool refuses a task it cannot send
            raise TuningError(f"task {task.name} cannot be sent to a worker (its function must be a module-level "
                              f"one and its arguments picklable): {e}") from None
        t = time.monotonic()
        try:
            fn, args, kwargs = pickle.loads(sent)
            result = pickle.loads(ForkingPickler.dumps(fn(*args, **kwargs)))
        except Exception as e:  # noqa: BLE001 - every failure of a task is its outcome, as in a worker
            if getattr(e, "retires_worker", False):
                self._ready_at = None  # started again before the next task, as a replaced worker is
                self.restarts += 1
            return Outcome(classify(e), None, f"{type(e).__module__}.{type(e).__qualname__}", str(e),
                           traceback.format_exc(), "", time.monotonic() - t, os.getpid(), None)
        return Outcome(Status.OK, result, elapsed_s=time.monotonic() - t, worker_pid=os.getpid())

    def imap_unordered(self, tasks, poll=None):
        from collections import deque

        from liftpy.errors import TuningError
        from liftpy.runtime.pool import Task

        if self._closed:
            raise TuningError("this worker pool is closed; create a new WorkerPool")
        source, drawn = iter(tasks), deque()

        def draw(n: int) -> None:
            while len(drawn) < n:
                task = next(source, None)
                if task is None:
                    return
                if not isinstance(task, Task):
                    raise TuningError(f"a worker pool runs Task objects, got {type(task).__name__}")
                drawn.append(task)

        draw(self._width + 1)
        while drawn:
            task = drawn.popleft()
            outcome = self._run(task)
            yield task, outcome
            draw(self._width + 1)
            if poll is not None and drawn and poll():
                yield None

    def run(self, task):
        outcome = None
        for _, outcome in self.imap_unordered([task]):
            pass
        return outcome

    def run_all(self, fn, args) -> list:
        from liftpy.runtime.pool import Task

        out = [(False, None)] * len(args)
        for task, outcome in self.imap_unordered(Task(fn, (a,), tag=k) for k, a in enumerate(args)):
            out[task.tag] = (outcome.ok, outcome.result if outcome.ok else None)
        return out

    def limit_busy(self, seconds: float, reason: str) -> int:
        return 0  # no task runs while the caller is asked: none is ever stopped

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> "PoolHere":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@pytest.fixture
def pools_here(monkeypatch):
    """Explorations in this test (``explore_operator`` and what calls it: ``explore_program``, ``explore_layer``,
    ``run_network``) run their compile and measuring workers' tasks in this process (``PoolHere``).  Yields the
    pools made, in order."""
    from liftpy.explore import devices
    from liftpy.runtime import points

    made = []

    def compile_pool(workers: int, timeout_s: float):
        made.append(PoolHere(workers, initializer=points.warm_compile).warm())
        return made[-1]

    def measure_pool(device, timeout_s: float, prepare=None):
        made.append(PoolHere(1, initializer=points.warm_measure, init_args=(device, prepare)).warm())
        return made[-1]

    monkeypatch.setattr(devices, "compile_pool", compile_pool)
    monkeypatch.setattr(devices, "measure_pool", measure_pool)
    points._PREPARED.clear()  # what a fresh measuring worker holds: nothing of another test's problems
    yield made
    points._PREPARED.clear()
