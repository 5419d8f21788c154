"""What the exploration loop writes to the results store: a point's record, the operator's references, and
the points another exploration of the same problem finished meanwhile (``finished_elsewhere``); and a
reference measured apart, as a record (``reference_record``).
"""

from __future__ import annotations

import re
import time

from ..results.store import REFERENCE_PREFIX, Key, Record, Status, Store, config_key
from ..runtime.points import reference_result
from ..search.variants import variant_text
from ..version import __version__
from .operator import ReferenceResult


def point_record(op, v, vid: str, config: dict, outcome, device_key: str, profile, index: int, where=None) -> Record:
    """The record of a point's ``outcome`` (variant ``v``, named ``vid``, ``index`` in the derivation order);
    ``where``: which device worker measured the point (``ran_on``, ``worker``), with device workers."""
    res = outcome.result if outcome.ok else {}
    extra = dict(where or {})
    if not outcome.ok and outcome.status is Status.ABORTED:
        extra["first_run_ms"] = _aborted_time(outcome.message)
    return Record(
        device=device_key,
        layer=op.problem,
        variant=vid,
        config=config,
        status=outcome.status,
        time_ms=res.get("time_ms"),
        bytes=res.get("bytes"),
        layer_name=op.name,
        source_hash=res.get("source_hash"),
        liftpy_version=__version__,
        profile=profile.record(),
        metrics={
            **{k: v_ for k, v_ in res.items() if k not in ("time_ms", "bytes", "source_hash")},
            **extra,
            "rules": [str(s) for s in v.trace],
            "program": variant_text(v),
            "placements": v.placement_map,
            "params": [str(s) for s in v.params],
            "variant_index": index,
        },
        error=None if outcome.ok else (outcome.message or str(outcome.status)),
    )


def _aborted_time(message: str | None) -> float | None:
    m = re.search(r"took ([0-9.eE+-]+) ms", message or "")
    return float(m.group(1)) if m else None


def measure_references(store: Store, op, device_key: str, seed: int, remote=None, refs=None) -> None:
    """The operator's references (or ``refs``), measured once per problem and device (kept in the store like
    every point); ``remote(op, seed)``: measure them where the device workers are, giving plain dicts."""
    refs = op.references() if refs is None else refs
    if all(store.done(Key.of(device_key, op.problem, REFERENCE_PREFIX + ref.name, {})) for ref in refs):
        return
    if remote is not None:
        results = remote(op, seed)
    else:
        results = [reference_result(ref.run(seed)) for ref in refs]
    for result in results:
        key = Key.of(device_key, op.problem, REFERENCE_PREFIX + result["name"], {})
        if store.done(key):
            continue
        now = time.time()
        store.put(Record(
            device=device_key, layer=op.problem, variant=REFERENCE_PREFIX + result["name"], config={}, status=Status.OK,
            time_ms=result["time_ms"], bytes=result["bytes"], layer_name=op.name, liftpy_version=__version__,
            metrics={"breakdown": result["breakdown"], "times_ms": result["times_ms"], "ran_on": result["device"]},
            started_at=now, finished_at=now,
        ))


def finished_elsewhere(store: Store, chosen: list, device_key: str, problem: str, ids, origin) -> tuple[list, list, set]:
    """(the chosen points still to run, (index, record) of those another run finished meanwhile, the points
    whose stored row is of another derivation order and is replaced as before): one query per point.  A
    finished row counts as this run's records do when it read the store (same variant id and index)."""
    run, finished, stale = [], [], set()
    for i, config in chosen:
        record = store.get(Key.of(device_key, problem, ids[i], config))
        if record is not None and record.status.finished:
            if record.metrics.get("variant_index") == origin[i]:
                finished.append((i, record))
                continue
            stale.add((i, config_key(config)))
        run.append((i, config))
    return run, finished, stale


def reference_record(result: ReferenceResult, device: str, layer) -> Record:
    """A reference's measurement as a store record (variant ``reference:<name>``, empty configuration), so
    that a frontier read back from the store is drawn with the references of the same run; ``layer``: the
    convolution layer it ran (``liftpy.operators.conv``)."""
    now = time.time()
    return Record(
        device=device,
        layer=layer.spec,
        variant=REFERENCE_PREFIX + result.name,
        config={},
        status=Status.OK,
        time_ms=result.time_ms,
        bytes=result.bytes,
        layer_name=layer.name,
        liftpy_version=__version__,
        metrics={"breakdown": dict(result.breakdown), "times_ms": list(result.times_ms), "ran_on": result.device},
        started_at=now,
        finished_at=now,
    )
