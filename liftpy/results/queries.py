"""What a notebook or the command line asks of a results store about one problem: its time/memory frontier
with the references, its fastest point, and the plot of both.  A problem is named by its operator (whose
``problem`` is the store's key) or by that key itself."""

from __future__ import annotations

from pathlib import Path

from ..errors import TuningError
from .pareto import pareto_front, plot_frontier
from .store import Record, Store


def problem_key(problem) -> str:
    """The store key of a problem: an operator's ``problem``, or that key as a string."""
    return problem.problem if hasattr(problem, "problem") else str(problem)


def records_of(store: Store, db, problem, device: str | None) -> list[Record]:
    """The records of ``problem`` (an operator or a problem key); a problem the store does not hold, beside
    others it does, is an error naming those (a layer's name, ``vgg16:7``, is not its key: pass the operator,
    ``ConvOperator.of("vgg16:7")``)."""
    key = problem_key(problem)
    records = store.records(device=device, layer=key)
    if not records:
        held = sorted({layer for _, layer in store.groups()})
        if held and key not in held:
            hint = ("pass the operator, e.g. ConvOperator.of('vgg16:7'), or one of these keys" if isinstance(problem, str)
                    else "explore it first, or name one of these with the sizes it was explored at")
            raise TuningError(f"{db} holds no results of the problem {key!r}; it holds: {', '.join(held)} ({hint})")
    return records


def frontier(db: str | Path, problem, device: str | None = None,
             max_error: float | None = None) -> tuple[list[Record], list[Record], list[Record]]:
    """(frontier, references, all measured records) of a problem (an operator or a problem key) in a store
    (any device if None and only one device has results); with ``max_error``, the frontier of the points whose
    largest relative error is at most that."""
    with Store(db, create=False) as store:
        records = records_of(store, db, problem, device)
    devices = sorted({r.device for r in records})
    if device is None and len(devices) > 1:
        raise TuningError(f"{db} holds results of several devices for {problem_key(problem)}; choose one with --device-key: {devices}")
    measured = [r for r in records if r.measured and not r.is_reference]
    refs = [r for r in records if r.is_reference and r.measured]
    return pareto_front(measured, max_error=max_error), refs, measured


def best(db: str | Path, problem=None, device: str | None = None) -> Record:
    """The fastest correct point of a store (of one problem, an operator or a problem key, if given)."""
    with Store(db, create=False) as store:
        records = records_of(store, db, problem, device) if problem is not None else store.records(device=device)
    ok = [r for r in records if r.measured and not r.is_reference]
    if not ok:
        raise TuningError(f"{db} has no measured point" + (f" for {problem_key(problem)}" if problem is not None else ""))
    return min(ok, key=lambda r: r.time_ms)


def plot(db: str | Path, problem, path: str | Path, device: str | None = None, title: str | None = None) -> Path:
    """The frontier plot of a problem (an operator or a problem key), titled with the operator's name."""
    front, refs, measured = frontier(db, problem, device)
    if title is None:
        title = f"{problem.name} ({problem.problem})" if hasattr(problem, "problem") else str(problem)
    return plot_frontier(measured, front, refs, path, title=title)
