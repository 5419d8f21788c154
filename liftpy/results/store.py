"""The results store: one SQLite row per (device, layer, variant, configuration) explored.  (The column
``layer`` holds the problem's key, an operator's ``problem``: its name is kept so that stores written
before operators existed stay readable.)

Why SQLite: a finished point must survive the run being killed at any moment (a job reservation running
out, SIGKILL, a driver taking the machine down), and a notebook or a second process must be able to read the
results while a run is writing them.  The database runs in WAL mode with ``synchronous=FULL`` and every
finished point is its own transaction, so a kill loses at most the point being evaluated and never leaves a
half-written row; readers never block the writer.

Resumption is exact on the key: ``device`` (platform | name | driver, as ``Device.key`` gives it), ``layer``
(the layer's ``C,H,W,M,K,stride,pad`` spec, so catalogue aliases share rows), ``variant`` (the program
variant's identity, chosen by the caller: a name or a hash of the lowered program) and ``config`` (the tuning
parameters as canonical JSON: sorted keys, no spaces).  ``Store.put`` replaces the row of its key, so every
point is kept once however often it is re-run.

Before a point is evaluated the caller may ``begin`` it: that commits a row with status ``running`` and
counts the attempt.  A run killed during the point leaves that row behind; ``done`` says it still needs to
run, and ``attempts`` tells the caller that a point has taken the whole process down before (a driver or
device crash that worker isolation could not contain), so it can record it as ``crashed`` instead of
running it forever.

Schema ``liftpy-results/2``::

    meta(key TEXT PRIMARY KEY, value TEXT)            -- 'schema' -> 'liftpy-results/2'
    results(
        id INTEGER PRIMARY KEY,
        device TEXT, layer TEXT, variant TEXT, config TEXT,   -- the key (UNIQUE together)
        layer_name TEXT,                                      -- the name the layer was asked for by
        status TEXT,                                          -- a Status value
        time_ms REAL, bytes INTEGER,                          -- NULL unless measured
        source_hash TEXT, liftpy_version TEXT,
        profile TEXT, metrics TEXT,                           -- JSON objects (device profile record; extras)
        error TEXT,
        attempts INTEGER, started_at REAL, finished_at REAL,  -- Unix seconds
        run TEXT)                                             -- which exploration wrote it (host:pid:start)
    next_batches(                                     -- what a model search would measure next
        device TEXT, layer TEXT, search TEXT,
        settings TEXT,                                        -- JSON: seed, rule filter, variants, profile
        state TEXT,                                           -- fingerprint of the finished points it knew
        points TEXT,                                          -- JSON list of the batch's points
        saved_at REAL, run TEXT,
        PRIMARY KEY (device, layer, search, settings))

``next_batches`` holds no results, only a plan: a model search that ends saves the batch its strategy
would propose next, so that a resumed run can start measuring it before rebuilding the strategy (see
``liftpy.explore.resume``).  The plan is valid only while the store holds exactly the finished points its
strategy knew (``state``); a liftpy that does not know the table ignores it, so adding it changes no schema
version.

Several processes may write one store at once (two explorations of different problems, or of the same one
with different seeds): every write is one ``BEGIN IMMEDIATE`` transaction, waits for the others up to the
connection's timeout, and the key's uniqueness makes a point that both run end as one row.

Versions migrate forward when a store is opened for writing (``MIGRATIONS``: version 1 lacked ``run``),
inside one transaction, so a concurrent opener sees the old or the new schema, never half of it; a store
written by a newer liftpy is refused with a message.  ``Store(path, create=False)`` opens a store for
reading only (``liftpy show``, ``liftpy pareto``): the file is never written, an old schema is read as it
is (``liftpy.results.store_read``).

The file is data, never trusted: every row read is checked (its status, its configuration's names and
values, its JSON and numbers) and a row that is not what liftpy writes is refused with one line naming the
row, the column and the value; a damaged file gives one line naming it, never a traceback
(``liftpy.results.store_read``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import TuningError
from . import store_read as read

SCHEMA = "liftpy-results/2"
# Statements that take a store of each older version to the next one.
MIGRATIONS = {
    "liftpy-results/1": ("liftpy-results/2", ("ALTER TABLE results ADD COLUMN run TEXT",)),
}
REFERENCE_PREFIX = "reference:"  # variants of reference implementations (cudnn, im2col_gemm, ...) start so


class Status(str, enum.Enum):
    OK = "ok"
    COMPILE_ERROR = "compile_error"  # generating or building the kernel failed
    RUNTIME_ERROR = "runtime_error"  # the kernel or its host code raised while running
    TIMEOUT = "timeout"  # the evaluation ran past its time limit and its worker was killed
    WRONG_RESULT = "wrong_result"  # it ran, but the output does not match the reference
    INVALID_CONFIG = "invalid_config"  # the configuration violates a constraint or a device limit
    CRASHED = "crashed"  # the worker process died (a segfault or abort in a driver or compiler)
    ABORTED = "aborted"  # stopped after one run that was already too slow to beat the best so far
    RUNNING = "running"  # begun and not finished: the run was killed while evaluating it

    @property
    def finished(self) -> bool:
        return self is not Status.RUNNING

    @property
    def failed(self) -> bool:
        return self not in (Status.OK, Status.RUNNING)

    def __str__(self) -> str:
        return self.value


def _json_default(value: Any) -> Any:
    # numpy scalars and arrays come from samplers and metrics; store them as plain JSON numbers and lists.
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def canonical_json(value: Any) -> str:
    """The JSON text that identifies a configuration: sorted keys, no spaces, numpy values as plain numbers."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TuningError(f"cannot store {value!r} as JSON: {e}; use numbers, strings, lists and dicts") from None


def config_key(config: Mapping[str, Any]) -> tuple:
    """A configuration as a hashable key (its items in name order): how searches and explorations tell points
    apart in memory, as ``canonical_json`` does in the store."""
    return tuple(sorted(config.items()))


@dataclass(frozen=True)
class Key:
    device: str
    layer: str  # the problem's key (an operator's ``problem``; a convolution layer's spec)
    variant: str
    config: str  # canonical JSON of the configuration

    @classmethod
    def of(cls, device: str, layer: str, variant: str, config: Mapping[str, Any]) -> "Key":
        return cls(device, layer, variant, canonical_json(dict(config)))


@dataclass(frozen=True)
class BatchKey:
    """Which search a saved batch belongs to: a device, a problem, a search strategy and the settings
    that decide its proposals (canonical JSON)."""

    device: str
    layer: str
    search: str
    settings: str

    @classmethod
    def of(cls, device: str, layer: str, search: str, settings: Mapping[str, Any]) -> "BatchKey":
        return cls(device, layer, search, canonical_json(dict(settings)))


def points_state(records: Iterable["Record"]) -> str:
    """A fingerprint of the finished points of records (their keys, statuses and times; order and
    timestamps aside): equal exactly when a search rebuilt from them would know the same."""
    entries = sorted((r.variant, canonical_json(dict(r.config)), r.status.value,
                      None if r.time_ms is None else repr(float(r.time_ms)))
                     for r in records if not r.is_reference and r.status.finished)
    digest = hashlib.sha1(canonical_json(entries).encode()).hexdigest()
    return f"{len(entries)}:{digest}"


@dataclass(frozen=True)
class Record:
    device: str
    layer: str  # the problem's key (an operator's ``problem``; a convolution layer's spec)
    variant: str
    config: dict[str, Any] = field(hash=False)
    status: Status
    time_ms: float | None = None  # median of the timed runs, all kernels of the pipeline summed
    bytes: int | None = None  # memory footprint: every buffer the implementation allocates
    layer_name: str | None = None
    source_hash: str | None = None
    liftpy_version: str | None = None
    profile: dict[str, Any] | None = field(default=None, hash=False)
    metrics: dict[str, Any] = field(default_factory=dict, hash=False)
    error: str | None = None
    attempts: int = 1
    started_at: float | None = None
    finished_at: float | None = None
    run: str | None = None  # the exploration that wrote it (``host:pid:start``), set by ``Store.put``

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))

    @property
    def key(self) -> Key:
        return Key.of(self.device, self.layer, self.variant, self.config)

    @property
    def is_reference(self) -> bool:
        return self.variant.startswith(REFERENCE_PREFIX)

    @property
    def measured(self) -> bool:
        """Finished correctly with both objectives known: a candidate for the Pareto frontier."""
        return self.status is Status.OK and self.time_ms is not None and self.bytes is not None


_COLUMNS = (
    "device", "layer", "variant", "config", "layer_name", "status", "time_ms", "bytes", "source_hash",
    "liftpy_version", "profile", "metrics", "error", "attempts", "started_at", "finished_at", "run",
)  # fmt: skip

_CREATE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    device TEXT NOT NULL,
    layer TEXT NOT NULL,
    variant TEXT NOT NULL,
    config TEXT NOT NULL,
    layer_name TEXT,
    status TEXT NOT NULL,
    time_ms REAL,
    bytes INTEGER,
    source_hash TEXT,
    liftpy_version TEXT,
    profile TEXT,
    metrics TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    started_at REAL,
    finished_at REAL,
    run TEXT,
    UNIQUE (device, layer, variant, config)
);
CREATE INDEX IF NOT EXISTS results_by_group ON results (device, layer, status);
CREATE TABLE IF NOT EXISTS next_batches (
    device TEXT NOT NULL,
    layer TEXT NOT NULL,
    search TEXT NOT NULL,
    settings TEXT NOT NULL,
    state TEXT NOT NULL,
    points TEXT NOT NULL,
    saved_at REAL,
    run TEXT,
    PRIMARY KEY (device, layer, search, settings)
);
"""


_STATUSES = {s.value: s for s in Status}


def _row_to_record(row: sqlite3.Row, path: Path | str = "the results store") -> Record:
    """A row as a record, every column checked: a TuningError naming the row otherwise (``store_read``)."""
    return Record(**read.row_fields(row, path, _STATUSES))


class Store:
    """An SQLite results database; open with ``Store(path)`` (created if missing, with its folder, and
    migrated to this schema), or ``Store(path, create=False)`` to read one without writing it (module
    docstring); close or use ``with``."""

    def __init__(self, path: str | Path, timeout_s: float = 60.0, create: bool = True):
        self.path = Path(path)
        self.read_only = not create
        self.run = f"{socket.gethostname()}:{os.getpid()}:{int(time.time())}"
        self._results = "results"
        if not create and not self.path.is_file():
            # Reading a store that is not there: an error, not an empty store left behind by the typo.
            raise TuningError(f"no results store at {self.path} (liftpy explore ... --db {self.path} makes one)")
        if self.read_only:
            self._db, self._results = read.open_read_only(self.path, timeout_s, SCHEMA, MIGRATIONS)
            return
        # A missing folder is most often a typo in --db: made silently, the results went where nobody looked.
        if not self.path.parent.is_dir():
            what = "is not a folder" if self.path.parent.exists() else "does not exist"
            raise TuningError(f"the folder {self.path.parent} of the results store {self.path} {what}; create it first "
                              "or give another --db path")
        self._db = self._connect(timeout_s)
        try:
            self._migrate()
        except sqlite3.Error as e:
            self._db.close()
            raise read.unusable(self.path, e) from None

    def _connect(self, timeout_s: float) -> sqlite3.Connection:
        """Open the database in WAL mode and create its tables.  Switching a new file to WAL takes an exclusive
        lock for which SQLite does not call its busy handler, so two explorations that create one store at the
        same instant can get "database is locked" at once: retry until ``timeout_s`` like any other wait."""
        deadline = time.monotonic() + timeout_s
        delay = 0.01
        while True:
            db = None
            try:
                # isolation_level=None: transactions are explicit, one per finished point.
                db = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None)
                db.row_factory = sqlite3.Row
                read.refuse_foreign(db, self.path, SCHEMA, MIGRATIONS)
                db.execute("PRAGMA journal_mode=WAL")
                # FULL: a commit is on disk before put() returns, so even a power cut keeps finished points.
                db.execute("PRAGMA synchronous=FULL")
                db.executescript(_CREATE)
                return db
            except sqlite3.OperationalError as e:
                if db is not None:
                    db.close()
                busy = "locked" in str(e) or "busy" in str(e)
                if not busy or time.monotonic() >= deadline:
                    raise TuningError(f"{self.path} is not a usable liftpy results database ({e}); give another --db path") from None
                time.sleep(delay)
                delay = min(2 * delay, 0.5)
            except sqlite3.DatabaseError as e:
                if db is not None:
                    db.close()
                raise TuningError(f"{self.path} is not a usable liftpy results database ({e}); give another --db path") from None
            except BaseException:
                if db is not None:
                    db.close()
                raise

    def _migrate(self) -> None:
        """Bring an older store to this version, one step per transaction; refuse a newer one."""
        while True:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                version = row["value"] if row is not None else None
                if version is None:
                    self._db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA,))
                elif version in MIGRATIONS:
                    target, statements = MIGRATIONS[version]
                    for sql in statements:
                        self._db.execute(sql)
                    self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (target,))
                self._db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                self._db.close()
                raise
            if version is None or version == SCHEMA:
                return
            if version not in MIGRATIONS:
                self._db.close()
                raise read.unknown_schema(self.path, version, SCHEMA, MIGRATIONS)

    # -- writing ---------------------------------------------------------------------------------------

    def put(self, record: Record, replace: bool = True) -> bool:
        """Store a finished point, replacing any earlier row of its key (unless ``replace`` is false and that
        row is finished: another run measured the point first); committed when this returns.  Returns whether
        the record was stored."""
        rec = record if record.finished_at is not None else dataclasses.replace(record, finished_at=time.time())
        rec = rec if rec.run is not None else dataclasses.replace(rec, run=self.run)
        values = (
            rec.device, rec.layer, rec.variant, canonical_json(dict(rec.config)), rec.layer_name, rec.status.value,
            None if rec.time_ms is None else float(rec.time_ms), None if rec.bytes is None else int(rec.bytes),
            rec.source_hash, rec.liftpy_version, None if rec.profile is None else canonical_json(rec.profile),
            canonical_json(dict(rec.metrics)), rec.error, int(rec.attempts), rec.started_at, rec.finished_at, rec.run,
        )  # fmt: skip
        # The attempt count and start time of a begun row carry over to its finished row.  Without
        # ``replace`` the check of the earlier row is part of the write, so two runs that finish one point at
        # once keep the first result, not whichever committed last.
        return self._write(
            f"INSERT INTO results ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
            "ON CONFLICT (device, layer, variant, config) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[5:] if c not in ("attempts", "started_at"))
            + ", layer_name = COALESCE(excluded.layer_name, results.layer_name)"
            + ", attempts = CASE WHEN results.status = 'running' THEN results.attempts"
            " ELSE results.attempts + excluded.attempts END"
            + ", started_at = COALESCE(excluded.started_at, results.started_at)"
            + ("" if replace else " WHERE results.status = 'running'"),
            values,
        ) > 0

    def begin(self, key: Key, layer_name: str | None = None) -> int:
        """Mark a point as being evaluated (committed); returns how many times it has been begun or stored,
        this time included.  Begin only points that are not ``done`` (or that are being retried): a begun
        point's earlier result is cleared until ``put`` stores the new one."""
        now = time.time()
        self._write(
            "INSERT INTO results (device, layer, variant, config, layer_name, status, attempts, started_at) "
            "VALUES (?, ?, ?, ?, ?, 'running', 1, ?) "
            "ON CONFLICT (device, layer, variant, config) DO UPDATE SET status = 'running', "
            "attempts = results.attempts + 1, started_at = excluded.started_at, time_ms = NULL, bytes = NULL, "
            "error = NULL, finished_at = NULL, layer_name = COALESCE(excluded.layer_name, results.layer_name)",
            (key.device, key.layer, key.variant, key.config, layer_name, now),
        )
        return self.attempts(key)

    def _write(self, sql: str, params: tuple) -> int:
        """Run one statement as its own transaction; returns the rows it changed."""
        if self.read_only:
            raise TuningError(f"{self.path} was opened for reading (Store(..., create=False)); open it with "
                              "Store(path) to write")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                changed = self._db.execute(sql, params).rowcount
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return changed
        except sqlite3.Error as e:
            raise TuningError(f"writing to {self.path} failed: {e}") from None

    def save_batch(self, key: BatchKey, state: str, points: list) -> None:
        """Keep the batch a search would propose next (``points``, plain JSON data) for the store's
        ``state`` (``points_state`` of what the search knew), replacing the batch saved before under ``key``."""
        self._write(
            "INSERT OR REPLACE INTO next_batches (device, layer, search, settings, state, points, saved_at, run) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (key.device, key.layer, key.search, key.settings, state, canonical_json(points), time.time(), self.run),
        )

    def drop_batch(self, key: BatchKey) -> None:
        """Forget the batch saved under ``key`` (used, or no longer what the search would propose)."""
        self._write("DELETE FROM next_batches WHERE device = ? AND layer = ? AND search = ? AND settings = ?",
                    (key.device, key.layer, key.search, key.settings))

    def saved_batch(self, key: BatchKey) -> tuple[str, list] | None:
        """(state, points) of the batch saved under ``key``, or None (also where the saved points are not
        valid points: ``store_read.plan_points``)."""
        with read.reading(self.path):
            row = self._db.execute(
                "SELECT state, points FROM next_batches WHERE device = ? AND layer = ? AND search = ? AND settings = ?",
                (key.device, key.layer, key.search, key.settings),
            ).fetchone()
        if row is None or not isinstance(row["state"], str):
            return None
        points = read.plan_points(row["points"])
        return None if points is None else (row["state"], points)

    # -- reading ---------------------------------------------------------------------------------------

    def _row(self, key: Key) -> sqlite3.Row | None:
        with read.reading(self.path):
            return self._db.execute(
                f"SELECT * FROM {self._results} WHERE device = ? AND layer = ? AND variant = ? AND config = ?",
                (key.device, key.layer, key.variant, key.config),
            ).fetchone()

    def get(self, key: Key) -> Record | None:
        row = self._row(key)
        return None if row is None else _row_to_record(row, self.path)

    def done(self, key: Key, retry: Iterable[Status] = ()) -> bool:
        """Whether a point is finished and need not run again; statuses in ``retry`` (for example
        ``Status.TIMEOUT`` after raising the time limit) count as not done."""
        row = self._row(key)
        if row is None:
            return False
        status = read.checked(row, self.path, read.status, _STATUSES)
        return status.finished and status not in set(retry)

    def attempts(self, key: Key) -> int:
        row = self._row(key)
        return 0 if row is None else read.checked(row, self.path, read.attempts)

    def done_keys(self, device: str | None = None, layer: str | None = None) -> set[Key]:
        """The keys of every finished point (one query, for resuming a large run)."""
        where, params = self._where(device, layer, None, None)
        where.append("status != 'running'")
        with read.reading(self.path):
            rows = self._db.execute(
                f"SELECT device, layer, variant, config FROM {self._results} WHERE {' AND '.join(where)}", params)
            return {Key(r["device"], r["layer"], r["variant"], r["config"]) for r in rows}

    @staticmethod
    def _where(device, layer, variant, status) -> tuple[list[str], list]:
        where, params = ["1 = 1"], []
        for column, value in (("device", device), ("layer", layer), ("variant", variant)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if status is not None:
            statuses = [status] if isinstance(status, (str, Status)) else list(status)
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            params.extend(Status(s).value for s in statuses)
        return where, params

    def records(
        self,
        device: str | None = None,
        layer: str | None = None,
        variant: str | None = None,
        status: "Status | str | Iterable[Status | str] | None" = None,
    ) -> list[Record]:
        """Rows as records, in the order they were first written, filtered by any of the arguments."""
        where, params = self._where(device, layer, variant, status)
        with read.reading(self.path):
            rows = self._db.execute(f"SELECT * FROM {self._results} WHERE {' AND '.join(where)} ORDER BY id", params)
            return [_row_to_record(r, self.path) for r in rows]

    def count(self, device: str | None = None, layer: str | None = None, status=None) -> int:
        where, params = self._where(device, layer, None, status)
        with read.reading(self.path):
            return self._db.execute(f"SELECT COUNT(*) FROM results WHERE {' AND '.join(where)}", params).fetchone()[0]

    def groups(self) -> list[tuple[str, str]]:
        """The (device, layer) pairs that have rows."""
        with read.reading(self.path):
            # (with a row's id, to name it if its layer is refused)
            rows = self._db.execute("SELECT MIN(id) AS id, device, layer FROM results GROUP BY device, layer "
                                    "ORDER BY device, layer").fetchall()
        return [(read.checked(r, self.path, read.text, "device"), read.checked(r, self.path, read.layer))
                for r in rows]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def to_pandas(records: Iterable[Record]):
    """A pandas DataFrame with one row per record and one column per field; configuration parameters and
    metrics become ``config.<name>`` and ``metrics.<name>`` columns.  Needs pandas (``pip install pandas``)."""
    try:
        import pandas as pd  # optional (the notebooks extra), and 0.5 s to import: only when asked for
    except ImportError:
        raise TuningError("to_pandas needs pandas: pip install pandas (records() gives the same data as a list)") from None
    rows = []
    for rec in records:
        row = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec) if f.name not in ("config", "metrics", "profile")}
        row["status"] = rec.status.value
        row.update({f"config.{k}": v for k, v in rec.config.items()})
        row.update({f"metrics.{k}": v for k, v in rec.metrics.items()})
        rows.append(row)
    return pd.DataFrame(rows)
