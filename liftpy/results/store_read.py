"""Reading a results store without trusting its file.

A store is a file like any other: copied between machines, attached to a report, damaged by a full disk,
or written by hand.  Nothing read from it is executed or handed on unchecked: a configuration's names
become size names in code generation (``liftpy show``, a network run), so a row whose configuration,
status, numbers or JSON are not what liftpy writes is refused with one line naming the file, the row, the
column and the value, and what to do.

Reading commands (``liftpy show``, ``liftpy pareto``: ``Store(path, create=False)``) open the file with
SQLite's ``mode=ro``: no table is created, no old schema migrated and no journal mode switched, so the file
is byte-identical afterwards (reading a WAL store, SQLite may create its ``-wal`` and ``-shm`` companions, as
any reader does; in a folder this process cannot write, a store without a ``-wal`` file is opened
``immutable`` instead).  An empty file, a file that is not SQLite, a store of a newer or unknown schema and a
results table without liftpy's columns are refused at once; a store of schema 1 is read as it is (its rows
without ``run``).

Damage inside the file (a flipped bit in a page, text that is not UTF-8) is found where it is read: every
``sqlite3`` error and decoding error becomes one ``TuningError`` (``unusable``).  No ``PRAGMA quick_check`` on
opening: it reads every page of the file, which would make every ``liftpy show`` of a large store pay for
the rare damaged one.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import TuningError

SQLITE_HEADER = b"SQLite format 3\x00"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The sizes part of a program's problem key (``name#hash:M=1024,N=512``): names and integers, which become
# size names and values again when a stored point is regenerated.
_SIZES = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=-?[0-9]+(,[A-Za-z_][A-Za-z0-9_]*=-?[0-9]+)*")
REMEDY = "give another --db file, or restore this one from a copy"


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: one line, however long or multi-line the value."""
    return clip(repr(value), limit)


def clip(message: str, limit: int) -> str:
    """``message`` on one line, cut to ``limit`` characters."""
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 3] + "..."


def unusable(path: Path, error: BaseException) -> TuningError:
    """The one-line error for an ``sqlite3`` or decoding error met reading ``path``."""
    detail = clip(str(error), 120) or type(error).__name__
    return TuningError(f"{path} is damaged or not a liftpy results database ({detail}); {REMEDY}")


@contextlib.contextmanager
def reading(path: Path):
    """SQLite's and decoding's errors raised inside as one line naming ``path`` (``unusable``)."""
    try:
        yield
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise unusable(path, e) from None


def unknown_schema(path: Path, version: Any, schema: str, migrations: dict) -> TuningError:
    return TuningError(f"{path} holds results of schema {short(version)}, this liftpy reads {schema!r} (and "
                       f"{', '.join(sorted(migrations))}); use a newer liftpy or another --db file")


def refuse_foreign(db: sqlite3.Connection, path: Path, schema: str, migrations: dict) -> None:
    """Before a store opened for writing is written (its journal mode, its tables): a database of another
    program's tables, or of a schema this liftpy cannot migrate, is refused and left as it was."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "meta" not in tables:
        raise TuningError(f"{path} holds other tables ({', '.join(sorted(tables)[:5])}), not liftpy results; "
                          "give another --db path")
    if "meta" in tables:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is not None and row[0] != schema and row[0] not in migrations:
            raise unknown_schema(path, row[0], schema, migrations)


def open_read_only(path: Path, timeout_s: float, schema: str, migrations: dict) -> tuple[sqlite3.Connection, str]:
    """(a connection that cannot write ``path``, what to select rows from): the results table, or for a store
    of schema 1 the same with NULL for ``run``.  Refuses a file liftpy cannot read as it is."""
    db = connect_read_only(path, timeout_s)
    try:
        with reading(path):
            # No schema row: a store whose first opening was killed after making its tables (this version's).
            version = schema_version(db, path) or schema
            if version not in (schema, *migrations):
                raise unknown_schema(path, version, schema, migrations)
            has_run = check_columns(db, path, version)
    except BaseException:
        db.close()
        raise
    return db, "results" if has_run else "(SELECT *, NULL AS run FROM results)"


def check_header(path: Path) -> None:
    """Refuse an empty file or one that is not SQLite before SQLite sees it (SQLite would read an empty
    file as an empty database, and ``mode=ro`` would then report no tables rather than the mistake)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError as e:
        raise TuningError(f"cannot read the results database {path}: {e.strerror}; check the --db path") from None
    if not head:
        raise TuningError(f"{path} is empty, not a liftpy results database; give the --db file an exploration wrote")
    if head != SQLITE_HEADER:
        raise TuningError(f"{path} is not an SQLite file, so not a liftpy results database; {REMEDY}")


def connect_read_only(path: Path, timeout_s: float) -> sqlite3.Connection:
    """A connection that cannot write ``path`` (``mode=ro``, and ``query_only`` besides)."""
    check_header(path)
    base = path.resolve().as_uri()
    # A WAL store needs its -shm file to be read, which SQLite creates in the store's folder; where it
    # cannot, and no -wal file holds commits the file lacks, the file is all there is to read.
    immutable = not os.access(path.resolve().parent, os.W_OK) and not Path(f"{path}-wal").exists()
    uri = base + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    try:
        db = sqlite3.connect(uri, uri=True, timeout=timeout_s, isolation_level=None)
    except sqlite3.Error as e:
        raise unusable(path, e) from None
    db.row_factory = sqlite3.Row
    try:
        db.execute("PRAGMA query_only = ON")
    except sqlite3.Error as e:
        db.close()
        raise unusable(path, e) from None
    return db


def schema_version(db: sqlite3.Connection, path: Path) -> str | None:
    """The store's ``meta`` schema, None where it has no ``meta`` row; refuses a database without liftpy's
    ``meta`` table (another program's SQLite file)."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        what = "has no tables" if not tables else f"holds other tables ({', '.join(sorted(tables)[:5])})"
        raise TuningError(f"{path} {what}, not liftpy results; give the --db file an exploration wrote")
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    version = None if row is None else row[0]
    if version is not None and not isinstance(version, str):
        raise TuningError(f"{path} names its schema {short(version)}, not a liftpy results schema; {REMEDY}")
    return version


RESULT_COLUMNS = (
    "id", "device", "layer", "variant", "config", "layer_name", "status", "time_ms", "bytes", "source_hash",
    "liftpy_version", "profile", "metrics", "error", "attempts", "started_at", "finished_at",
)  # fmt: skip  (``run`` too from schema 2 on)


def check_columns(db: sqlite3.Connection, path: Path, version: str) -> bool:
    """Whether the results table has ``run``; refuses one that lacks a column liftpy reads."""
    have = {r[1] for r in db.execute("PRAGMA table_info(results)")}
    if not have:
        raise TuningError(f"{path} (schema {version}) has no results table; {REMEDY}")
    missing = [c for c in RESULT_COLUMNS if c not in have]
    if missing:
        raise TuningError(f"{path} (schema {version}) has a results table without {', '.join(missing)}; {REMEDY}")
    return "run" in have


# -- rows --------------------------------------------------------------------------------------------------


class BadRow(Exception):
    """A column of a row is not what liftpy writes (``column``, ``value``, ``why``), made a ``TuningError``
    with the file and the row by ``bad_row``."""

    def __init__(self, column: str, value: Any, why: str):
        super().__init__(column, value, why)
        self.column, self.value, self.why = column, value, why


def bad_row(path: Path, row_id: Any, e: BadRow) -> TuningError:
    where = f"row {row_id}" if isinstance(row_id, int) else "a row"
    delete = (f"delete the row (sqlite3 {path} 'DELETE FROM results WHERE id = {row_id}')" if isinstance(row_id, int)
              else "delete the row")
    return TuningError(f"{path}: {where} of its results has a bad {e.column} ({short(e.value)}: {e.why}); "
                       f"{delete} or give another --db file")


def checked(row: sqlite3.Row, path: Path, check, *args) -> Any:
    """``check(row, *args)``, a ``BadRow`` made the one-line ``TuningError`` naming ``path`` and the row."""
    try:
        return check(row, *args)
    except BadRow as e:
        raise bad_row(path, row_id(row), e) from None


def row_id(row: sqlite3.Row) -> Any:
    try:
        return row["id"]
    except (IndexError, KeyError):
        return None


def row_fields(row: sqlite3.Row, path: Path, statuses: dict) -> dict[str, Any]:
    """A results row's columns as ``Record`` fields, each checked (``statuses``: the known status values)."""
    try:
        return dict(
            device=text(row, "device"),
            layer=layer(row),
            variant=text(row, "variant"),
            config=config(row),
            status=status(row, statuses),
            time_ms=number(row, "time_ms"),
            bytes=number(row, "bytes", True),
            layer_name=text(row, "layer_name", True),
            source_hash=text(row, "source_hash", True),
            liftpy_version=text(row, "liftpy_version", True),
            profile=json_object(row, "profile", True),
            metrics=metrics(row),
            error=text(row, "error", True),
            attempts=attempts(row),
            started_at=number(row, "started_at"),
            finished_at=number(row, "finished_at"),
            run=text(row, "run", True),
        )
    except BadRow as e:
        raise bad_row(path, row_id(row), e) from None


def status(row: sqlite3.Row, statuses: dict) -> Any:
    value = column(row, "status")
    if not isinstance(value, str) or value not in statuses:
        raise BadRow("status", value, f"not one of {', '.join(statuses)}")
    return statuses[value]


def column(row: sqlite3.Row, name: str) -> Any:
    try:
        return row[name]
    except (IndexError, KeyError):
        raise BadRow(name, None, "the column is missing") from None


def text(row: sqlite3.Row, name: str, optional: bool = False) -> str | None:
    value = column(row, name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise BadRow(name, value, "not text")
    return value


def number(row: sqlite3.Row, name: str, integer: bool = False) -> float | int | None:
    """A finite, non-negative number (an integer where ``integer``), or None."""
    value = column(row, name)
    if value is None:
        return None
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value) or value < 0:
        raise BadRow(name, value, "not a non-negative integer" if integer else "not a non-negative number")
    return value


def attempts(row: sqlite3.Row) -> int:
    value = number(row, "attempts", True)
    if value is None:
        raise BadRow("attempts", value, "not a non-negative integer")
    return value


def json_value(row: sqlite3.Row, name: str) -> Any:
    raw = text(row, name)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:  # (JSONDecodeError is a ValueError; so is a 5,000-digit number)
        raise BadRow(name, raw, f"not JSON: {clip(str(e), 50)}") from None


def json_object(row: sqlite3.Row, name: str, optional: bool = False) -> dict | None:
    if optional and column(row, name) is None:
        return None
    value = json_value(row, name)
    if not isinstance(value, dict):
        raise BadRow(name, column(row, name), "not a JSON object")
    return value


def _plain(value: Any, nested: bool = False) -> bool:
    """What a configuration holds: numbers, booleans, names, and lists of those."""
    if value is None or isinstance(value, (bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return IDENTIFIER.fullmatch(value) is not None
    return isinstance(value, list) and not nested and all(_plain(v, True) for v in value)


def config_problem(config: Any) -> tuple[Any, str] | None:
    """(the offending part, why) where ``config`` is not a configuration liftpy writes, else None: a JSON
    object whose keys are names (they become size names in code generation) and whose values are numbers,
    booleans, names or lists of those."""
    if not isinstance(config, dict):
        return config, "not a JSON object"
    for key, value in config.items():
        if IDENTIFIER.fullmatch(key) is None:
            return key, "a parameter name that is not an identifier"
        if not _plain(value):
            return value, f"the value of {key} is not a number, a boolean or a name"
    return None


def config(row: sqlite3.Row) -> dict:
    value = json_value(row, "config")
    problem = config_problem(value)
    if problem is not None:
        raise BadRow("config", *problem)
    return value


def layer(row: sqlite3.Row) -> str:
    """The problem key; where it names sizes (``name#hash:M=1024``), they must be names and integers."""
    value = text(row, "layer")
    if "=" in value and _SIZES.fullmatch(value.split(":", 1)[-1]) is None:
        raise BadRow("layer", value, "its sizes are not NAME=INTEGER,...")
    return value


def metrics(row: sqlite3.Row) -> dict:
    """The metrics object; the entries ``liftpy show`` regenerates a point from must have their shapes."""
    value = json_object(row, "metrics")
    placements = value.get("placements")
    if placements is not None and not (isinstance(placements, dict)
                                       and all(isinstance(v, str) for v in placements.values())):
        raise BadRow("metrics", placements, "its placements are not names of memories")
    rules = value.get("rules")
    if rules is not None and not (isinstance(rules, list) and all(isinstance(r, str) for r in rules)):
        raise BadRow("metrics", rules, "its rules are not a list of text")
    if not isinstance(value.get("program", ""), str):
        raise BadRow("metrics", value["program"], "its program is not text")
    return value


def plan_points(raw: Any) -> list | None:
    """A saved batch's points (``next_batches.points``) if they are a JSON list of points with valid
    configurations, else None: a damaged plan is only a plan, ignored and replaced."""
    try:
        points = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(points, list):
        return None
    for p in points:
        if not (isinstance(p, dict) and isinstance(p.get("variant"), str) and config_problem(p.get("config")) is None
                and isinstance(p.get("index"), int) and not isinstance(p.get("index"), bool)):
            return None
    return points
