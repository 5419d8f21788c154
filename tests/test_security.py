"""Data is never code (issue 58): each payload a colleague's file could carry is planted where it would be read,
and the command a user runs gives a one-line error (or ignores it) and no marker appears.

- the disk cache unpickles only entries this user signed, in folders and files only this user may write;
- a results store is read without being written, and what is read from it is checked: code as a configuration
  key reaches no parser that runs it, through ``show``, ``pareto`` or a resumed model search;
- a network run derives each layer's program again instead of building the text stored with its best point;
- an expression user function is an expression: preprocessor lines and statements are refused;
- a damaged store is one line, never a traceback; two explorations of one problem do not measure a point twice."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from liftpy.cli import main
from liftpy.errors import TuningError
from liftpy.results import cache
from liftpy.results.store import Key, Record, Status, Store
from liftpy.search import UniformSearch

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "programs" / "matmul_highlevel.lift"
CODE = ("rewrite", "ir")


class Planted:
    """A pickle whose unpickling makes a folder: what a planted cache entry could run."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def cache_here(tmp_path, monkeypatch):
    """A fresh cache directory for this test (each directory's key is read once per process)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(folder))
    return folder


def _planted_bytes(marker: Path) -> bytes:
    data = pickle.dumps(Planted(marker))
    # The payload is live: unpickled, it makes the marker (so the tests below can fail).
    pickle.loads(data)
    assert marker.is_dir()
    marker.rmdir()
    return data


def _signed(path: Path, data: bytes, key: bytes | None = None) -> bytes:
    key = key if key is not None else (path.parents[1] / cache.KEY_FILE).read_bytes()
    return cache.MAGIC + cache._mac(key, path, data) + data


# -- the disk cache ----------------------------------------------------------------------------------------


def test_folders_key_and_entries_are_private_whatever_the_umask(cache_here):
    old = os.umask(0)  # the modes are the cache's own, not the umask's
    try:
        assert cache.memo("kind", "k", lambda: {"v": 1}, CODE) == {"v": 1}
    finally:
        os.umask(old)
    entry = cache._entry("kind", "k", CODE)
    assert entry.is_file()
    assert _mode(cache_here) == 0o700 and _mode(entry.parent) == 0o700
    assert _mode(cache_here / cache.KEY_FILE) == 0o600 and _mode(entry) == 0o600
    assert len((cache_here / cache.KEY_FILE).read_bytes()) == cache.KEY_BYTES
    assert not [p for p in entry.parent.iterdir() if p.suffix == ".tmp"]
    assert cache.recall("kind", "k", CODE) == {"v": 1}


@pytest.mark.parametrize("form", ["unsigned", "forged", "other key", "other name", "cut short"])
def test_a_planted_entry_is_a_miss_and_is_never_unpickled(cache_here, tmp_path, form):
    marker = tmp_path / "marker"
    cache.remember("kind", "warm", 0, CODE)  # the folders and the key exist, as in a used cache
    entry = cache._entry("kind", "k", CODE)
    data = _planted_bytes(marker)
    planted = {
        "unsigned": data,  # what a liftpy before signing wrote, or anybody
        "forged": cache.MAGIC + os.urandom(cache.MAC_BYTES) + data,
        "other key": _signed(entry, data, key=os.urandom(cache.KEY_BYTES)),
        "other name": _signed(entry.with_name("elsewhere.pkl"), data),  # a signed entry copied under this name
        "cut short": _signed(entry, data)[:-5],
    }[form]
    entry.write_bytes(planted)
    assert cache.recall("kind", "k", CODE) is None
    assert cache.memo("kind", "k", lambda: "derived again", CODE) == "derived again"
    assert not marker.exists()
    assert cache.recall("kind", "k", CODE) == "derived again"  # the planted entry was replaced


def test_signed_entries_in_a_folder_or_file_others_may_write_are_misses(cache_here, tmp_path):
    marker = tmp_path / "marker"
    cache.remember("kind", "benign", [1, 2], CODE)
    benign = cache._entry("kind", "benign", CODE)
    assert cache.recall("kind", "benign", CODE) == [1, 2]
    os.chmod(benign.parent, 0o777)
    assert cache.recall("kind", "benign", CODE) is None
    entry = cache._entry("kind", "k", CODE)
    entry.write_bytes(_signed(entry, _planted_bytes(marker)))  # signed with the key: only its folder tells
    assert cache.recall("kind", "k", CODE) is None and not marker.exists()
    os.chmod(benign.parent, 0o700)
    assert cache.recall("kind", "benign", CODE) == [1, 2]
    os.chmod(benign, 0o666)
    assert cache.recall("kind", "benign", CODE) is None
    os.chmod(benign, 0o644)  # readable by others is no risk to this user
    assert cache.recall("kind", "benign", CODE) == [1, 2]


def test_entries_kept_in_the_process_are_read_again_when_their_file_changes(cache_here, tmp_path):
    """Variants, read once, are kept in the process (a network's layers share them); a planted or re-moded
    entry is read again, with every check, never served from what was kept."""
    marker = tmp_path / "marker"
    cache.remember("variants", "v", (1, 2), CODE)
    first = cache.recall("variants", "v", CODE)
    assert first == (1, 2) and cache.recall("variants", "v", CODE) is first  # kept: not unpickled again
    entry = cache._entry("variants", "v", CODE)
    os.chmod(entry.parent, 0o777)
    assert cache.recall("variants", "v", CODE) is None
    os.chmod(entry.parent, 0o700)
    assert cache.recall("variants", "v", CODE) == (1, 2)
    entry.write_bytes(_signed(entry, _planted_bytes(marker), key=os.urandom(cache.KEY_BYTES)))
    assert cache.recall("variants", "v", CODE) is None and not marker.exists()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="giving a file away needs root")
def test_entries_and_folders_of_another_user_are_misses(cache_here):
    cache.remember("kind", "benign", "value", CODE)
    entry = cache._entry("kind", "benign", CODE)
    os.chown(entry, 4242, -1)
    assert cache.recall("kind", "benign", CODE) is None
    os.chown(entry, 0, -1)
    assert cache.recall("kind", "benign", CODE) == "value"
    os.chown(entry.parent, 4242, -1)
    assert cache.recall("kind", "benign", CODE) is None


@pytest.mark.parametrize("how", ["key readable by others", "key of another user", "folder others may write"])
def test_a_cache_whose_key_or_folder_is_not_private_is_off_with_one_warning(tmp_path, monkeypatch, capsys, how):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    key = folder / cache.KEY_FILE
    key.write_bytes(os.urandom(cache.KEY_BYTES))
    os.chmod(key, 0o600)
    if how == "key readable by others":
        os.chmod(key, 0o644)
    elif how == "key of another user":
        if os.getuid() != 0:
            pytest.skip("giving a file away needs root")
        os.chown(key, 4242, -1)
    else:
        os.chmod(folder, 0o777)
    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(folder))
    calls = []
    for _ in range(3):
        assert cache.memo("kind", "k", lambda: calls.append(1) or 7, CODE) == 7
    assert len(calls) == 3 and cache.cache_dir() is None
    assert not (folder / "kind").exists()  # nothing written either
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("liftpy: warning: the disk cache") and str(folder) in lines[0]


def test_a_key_made_by_a_process_that_lost_the_race_is_not_used(cache_here, monkeypatch):
    """Two processes making the key at once: the second links its own in vain and reads the first's."""
    first = os.urandom(cache.KEY_BYTES)
    real_link = os.link

    def late_link(src, dst):
        Path(dst).write_bytes(first)  # the other process got there between the check and the link
        os.chmod(dst, 0o600)
        return real_link(src, dst)

    monkeypatch.setattr(cache.os, "link", late_link)
    cache_here.mkdir(mode=0o700)
    assert cache._key(cache_here) == first
    assert [p.name for p in cache_here.iterdir()] == [cache.KEY_FILE]


# -- reading a results store -------------------------------------------------------------------------------


def _store(path: Path, n: int = 6) -> Path:
    with Store(path) as store:
        for i in range(n):
            store.put(Record("dev", "mm#12345678:M=8", "tiled#abc", {"tile": i, "vec": 4}, Status.OK,
                             time_ms=1.0 + i, bytes=1000 - i, layer_name="mm", metrics={"program": "p", "rules": []}))
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _refused_in_one_line(capsys, command: str, path: Path, *words: str) -> str:
    rc, out, err = _cli(capsys, command, "--db", str(path))
    assert rc == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"liftpy {command}: error: "), err
    assert "Traceback" not in err and str(path) in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _damaged(kind: str, good: Path, path: Path) -> None:
    data = bytearray(good.read_bytes())
    if kind == "empty":
        data = bytearray()
    elif kind == "text":
        data = bytearray(b"device,layer,time\n" * 40)
    elif kind == "page size":
        data[16] ^= 0xFF  # the header's page size: SQLite reads no page
    elif kind == "page":
        page = int.from_bytes(data[16:18], "big")
        for k in range(page, page + 12):  # the header of the second page: a b-tree page SQLite cannot parse
            data[k] ^= 0x5A
    elif kind == "utf-8":
        for m in re.finditer(re.escape(b'{"tile":3,'), bytes(data)):  # the row and its index entry
            data[m.start() + 2] = 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("kind", ["empty", "text", "page size", "page", "utf-8"])
def test_reading_commands_refuse_a_damaged_store_in_one_line_and_leave_it_as_it_was(tmp_path, capsys, kind):
    good = _store(tmp_path / "good.sqlite")
    path = tmp_path / "damaged.sqlite"
    _damaged(kind, good, path)
    before = _digest(path)
    for command in ("show", "pareto"):
        _refused_in_one_line(capsys, command, path)
        assert _digest(path) == before
    with pytest.raises(TuningError, match=re.escape(str(path))):
        with Store(path, create=False) as store:
            store.records()
    assert _digest(path) == before


def test_an_empty_file_is_not_made_a_store_by_reading_it(tmp_path, capsys):
    path = tmp_path / "empty.sqlite"
    path.touch()
    _refused_in_one_line(capsys, "show", path, "empty")
    _refused_in_one_line(capsys, "pareto", path, "empty")
    assert path.stat().st_size == 0 and not Path(f"{path}-wal").exists()


def test_reading_commands_show_a_good_store_without_writing_it(tmp_path, capsys):
    path = _store(tmp_path / "good.sqlite")
    before = _digest(path)
    rc, out, err = _cli(capsys, "pareto", "--db", str(path))
    assert rc == 0 and "6 measured points" in out, (out, err)
    assert _digest(path) == before
    with Store(path, create=False) as store, pytest.raises(TuningError, match="opened for reading"):
        store.put(Record("dev", "L", "v", {}, Status.OK))
    assert _digest(path) == before


_CREATE_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE results (
    id INTEGER PRIMARY KEY, device TEXT NOT NULL, layer TEXT NOT NULL, variant TEXT NOT NULL,
    config TEXT NOT NULL, layer_name TEXT, status TEXT NOT NULL, time_ms REAL, bytes INTEGER,
    source_hash TEXT, liftpy_version TEXT, profile TEXT, metrics TEXT NOT NULL DEFAULT '{}', error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1, started_at REAL, finished_at REAL,
    UNIQUE (device, layer, variant, config)
);
"""


def test_an_old_store_is_read_as_it_is_and_a_newer_or_foreign_one_refused(tmp_path, capsys):
    old = tmp_path / "v1.sqlite"
    with sqlite3.connect(old) as db:
        db.executescript(_CREATE_V1)
        db.execute("INSERT INTO meta VALUES ('schema', 'liftpy-results/1')")
        db.execute("INSERT INTO results (device, layer, variant, config, status, time_ms, bytes, metrics) "
                   "VALUES ('dev', 'L', 'v', '{\"t\":1}', 'ok', 2.5, 64, '{}')")
    db.close()
    before = _digest(old)
    with Store(old, create=False) as store:
        (rec,) = store.records()
        assert (rec.config, rec.time_ms, rec.run) == ({"t": 1}, 2.5, None) and store.done(rec.key)
    rc, out, err = _cli(capsys, "pareto", "--db", str(old))
    assert rc == 0 and "1 measured points" in out, (out, err)
    assert _digest(old) == before  # not migrated by reading
    with sqlite3.connect(old) as db:
        assert db.execute("SELECT value FROM meta").fetchone()[0] == "liftpy-results/1"
    db.close()

    newer = tmp_path / "v9.sqlite"
    _store(newer, 1)
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE meta SET value = 'liftpy-results/9' WHERE key = 'schema'")
    db.close()
    before = _digest(newer)
    _refused_in_one_line(capsys, "show", newer, "liftpy-results/9", "newer liftpy")
    assert _digest(newer) == before

    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    db.close()
    before = _digest(foreign)
    _refused_in_one_line(capsys, "pareto", foreign, "notes")
    with pytest.raises(TuningError, match="other tables"):  # nor is it written into by an exploration
        Store(foreign)
    assert _digest(foreign) == before


def _with_row(path: Path, **columns) -> int:
    """Insert a row as someone editing the file would, past ``Store.put``'s checks; returns its id."""
    row = {"device": "dev", "layer": "mm#12345678:M=8", "variant": "tiled#abc", "config": '{"tile":99}',
           "status": "ok", "time_ms": 0.5, "bytes": 10, "metrics": '{"program":"p"}', **columns}
    with sqlite3.connect(path) as db:
        cur = db.execute(f"INSERT INTO results ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                         tuple(row.values()))
        row_id = cur.lastrowid
    db.close()
    return row_id


def _bad_rows(marker: Path) -> dict:
    code = f"__import__('os').mkdir({str(marker)!r})"
    return {
        "code as a parameter name": (dict(config=json.dumps({code: 1})), "config"),
        "code as a parameter value": (dict(config=json.dumps({"tile": code})), "config"),
        "code as a size name": (dict(layer=f"mm#12345678:{code}=8"), "layer"),
        "unknown status": (dict(status="exploded"), "status"),
        "configuration not JSON": (dict(config="tile=4"), "config"),
        "configuration not an object": (dict(config="[1, 2]"), "config"),
        "nested configuration": (dict(config='{"tile":{"a":1}}'), "config"),
        "time as text": (dict(time_ms="fast"), "time_ms"),
        "negative bytes": (dict(bytes=-5), "bytes"),
        "metrics not an object": (dict(metrics='"all good"'), "metrics"),
        "placements not names": (dict(metrics='{"placements":{"A":[1]}}'), "metrics"),
        "profile not JSON": (dict(profile="{"), "profile"),
        "deeply nested JSON": (dict(metrics="[" * 100000 + "]" * 100000), "metrics"),
    }


@pytest.mark.parametrize("case", list(_bad_rows(Path("m"))))
def test_a_bad_row_is_refused_in_one_line_naming_it_and_nothing_in_it_runs(tmp_path, capsys, case):
    marker = tmp_path / "MARKER"
    columns, column = _bad_rows(marker)[case]
    path = _store(tmp_path / "r.sqlite")
    row_id = _with_row(path, **columns)
    before = _digest(path)
    for command in ("show", "pareto"):
        _refused_in_one_line(capsys, command, path, f"row {row_id} ", f"bad {column} ",
                             f"DELETE FROM results WHERE id = {row_id}")
    assert _digest(path) == before
    for create in (False, True):  # an exploration's store refuses it too
        with Store(path, create=create) as store, pytest.raises(TuningError, match=f"row {row_id} .*bad {column}"):
            store.records()
    assert not marker.exists()


def test_a_refused_row_is_named_with_its_value_cut_to_one_short_line(tmp_path):
    path = _store(tmp_path / "r.sqlite")
    _with_row(path, config=json.dumps({"x" * 500 + "\n(": 1}))
    with Store(path, create=False) as store, pytest.raises(TuningError) as info:
        store.records()
    message = str(info.value)
    assert "\n" not in message and len(message) < 400 and "xxx..." in message


def test_a_damaged_saved_batch_is_no_batch(tmp_path):
    from liftpy.results.store import BatchKey

    path = _store(tmp_path / "r.sqlite")
    key = BatchKey.of("dev", "L", "model", {"seed": 0})
    with Store(path) as store:
        store.save_batch(key, "s", [{"index": 1, "variant": "v", "config": {"tile": 2}}])
        assert store.saved_batch(key) == ("s", [{"index": 1, "variant": "v", "config": {"tile": 2}}])
        for points in ('[{"index": 1, "variant": "v", "config": {"__import__(1)": 2}}]', "{", '"x"', "[1]"):
            with sqlite3.connect(path) as db:
                db.execute("UPDATE next_batches SET points = ?", (points,))
            db.close()
            assert store.saved_batch(key) is None, points


# -- two explorations of one problem into one store --------------------------------------------------------


def _explore(db: Path, **kw):
    from liftpy.explore import explore_operator
    from liftpy.explore.operator import ProgramOperator, load_program

    op = ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8, "K": 8})
    return explore_operator(op, samples=3, db=db, search=UniformSearch, progress=False, repeat=1, warmup=0,
                            references=False, seed=4, jobs=1, **kw)


def _sent_to_workers(monkeypatch, before_each=None) -> list:
    """The points the engine hands to its workers, recorded; ``before_each(op, variants, point)`` runs as
    each outcome comes back, before the engine sees it."""
    from liftpy.explore import devices

    sent = []
    real = devices.evaluate_points

    def recording(op, variants, chosen, *args, **kw):
        sent.extend(chosen)
        for point, outcome in real(op, variants, chosen, *args, **kw):
            if before_each is not None:
                before_each(op, variants, point)
            yield point, outcome

    monkeypatch.setattr(devices, "evaluate_points", recording)
    return sent


def _hide_the_first_read(monkeypatch):
    """The engine's first read of the store finds nothing: as if it read it before the other run stored."""
    real = Store.records
    calls = []

    def records(self, *args, **kw):
        calls.append(1)
        return [] if len(calls) == 1 else real(self, *args, **kw)

    monkeypatch.setattr(Store, "records", records)


def _rows(db: Path) -> dict:
    with Store(db, create=False) as store:
        return {(r.variant, json.dumps(r.config, sort_keys=True)): r for r in store.records()}


@pytest.mark.usefixtures("pools_here")
def test_an_exploration_skips_the_points_another_finished_since_it_read_the_store(tmp_path, monkeypatch):
    db = tmp_path / "r.sqlite"
    first = _explore(db)
    assert first.ran == 3
    stored = _rows(db)
    _hide_the_first_read(monkeypatch)
    sent = _sent_to_workers(monkeypatch)
    second = _explore(db)
    assert sent == [] and (second.ran, second.resumed, second.failed) == (0, 3, 0)
    after = _rows(db)
    assert {k: (r.run, r.finished_at, r.time_ms) for k, r in after.items()} == \
           {k: (r.run, r.finished_at, r.time_ms) for k, r in stored.items()}  # the first results stay
    assert [r.key for r in second.frontier] == [r.key for r in first.frontier]


@pytest.mark.usefixtures("pools_here")
def test_a_point_another_exploration_finishes_while_this_one_measures_it_keeps_the_first_result(tmp_path, monkeypatch):
    from liftpy.host.device import device_info
    from liftpy.search import variant_id

    db = tmp_path / "r.sqlite"
    others = []

    def the_other_run_finishes(op, variants, point):
        """Before the first outcome reaches the engine, another run stores that point."""
        if others:
            return
        i, config = point
        key = Key.of(device_info(None).key, op.problem, variant_id(variants[i]), config)
        with Store(db) as store:
            store.put(Record(key.device, key.layer, key.variant, config, Status.OK, time_ms=123.0, bytes=1,
                             run="other:1:1"))
        others.append(key)

    sent = _sent_to_workers(monkeypatch, the_other_run_finishes)
    ex = _explore(db)
    assert len(sent) == 3 and (ex.ran, ex.resumed) == (2, 1)
    (key,) = others
    with Store(db, create=False) as store:
        kept = store.get(key)
        assert (kept.run, kept.time_ms) == ("other:1:1", 123.0) and store.count() == 3
    assert any(r.key == key and r.time_ms == 123.0 for r in ex.records)


# -- payloads met end to end, as a user meets them ------------------------------------------------------------

def _liftpy(*args, cwd=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "liftpy", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def _one_line_error(result) -> str:
    assert result.returncode != 0, result.stdout[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return lines[0]


@pytest.mark.slow
def test_a_resumed_model_search_learning_from_a_planted_row_runs_nothing(tmp_path):
    """The model search reads other problems' rows of the store to learn from them: a row whose configuration
    key is code is refused in one line, and the code never runs."""
    marker = tmp_path / "MARKER"
    db = tmp_path / "r.sqlite"
    sizes = "M=8,N=8,K=8"
    first = _liftpy("explore", MATMUL, "-s", sizes, "--samples", "2", "--search", "uniform", "--db", db, "--jobs", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    from liftpy.host.device import device_info

    _with_row(db, device=device_info(None).key, layer="other#12345678:M=16",
              config=json.dumps({f"__import__('os').mkdir({str(marker)!r})": 1}))
    again = _liftpy("explore", MATMUL, "-s", sizes, "--samples", "3", "--search", "model", "--db", db, "--jobs", "1")
    assert "bad config" in _one_line_error(again)
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_a_network_run_never_builds_the_program_text_stored_with_its_best_point(tmp_path, monkeypatch):
    """The stored text is data: here it is replaced by a program whose OpenCL body includes a file, which a
    build would read (and fail on); the run derives the layer's variant again and is right."""
    from liftpy.ir import parser
    from liftpy.network.graph import Builder
    from liftpy.network.run import run_network

    b = Builder("one", 6, 6, 2)
    b.conv("input", 2)
    net = b.build()
    db = tmp_path / "r.sqlite"
    run_network(net, db=db, samples=1, search=UniformSearch, progress=False)
    planted = ('userfun evil(a: float): float = opencl "#include \\"/nonexistent/MARKER\\"\\nreturn a;"\n'
               "def evil_program(x: [float]N) = mapGlb(0, evil, x)")
    with sqlite3.connect(db) as con:
        con.execute("UPDATE results SET metrics = json_set(metrics, '$.program', ?) WHERE status = 'ok'", (planted,))
    con.close()
    parsed = []
    real = parser.parse_program
    monkeypatch.setattr(parser, "parse_program", lambda text: parsed.append(text) or real(text))
    again = run_network(net, db=db, samples=1, search=UniformSearch, progress=False)
    assert again.ok and again.explored == 0
    assert not any("evil" in text for text in parsed)


@pytest.mark.parametrize("body", ['a\\n#include \\"/etc/passwd\\"', "a\\n#define a 0", "--a", "a; a", "sqrt(a, a)"])
@pytest.mark.slow
def test_a_text_user_function_that_is_not_an_expression_is_refused_in_one_line(tmp_path, body):
    program = tmp_path / "p.lift"
    program.write_text(f'userfun f(a: float): float = "{body}"\ndef p(x: [float]N) = mapGlb(0, f, x)\n')
    for command in (("run", program, "-s", "N=16"), ("compile", program, "-s", "N=16")):
        line = _one_line_error(_liftpy(*command))
        assert "user function f" in line and "root:" not in line  # nothing of /etc/passwd reaches the message
