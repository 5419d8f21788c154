"""The derivation of variants, and the screening of their spaces, cached on disk.

Deriving the variants of a program runs every rewrite rule at every position (15 s for the convolution's
3,548 variants on two cores); a resumed or repeated exploration of the same program needs exactly the same
list.  The list is pickled (programs, user functions and all: see ``liftpy.ir.userfun``) under a key made
of the operator's variant identity and a *rule-set version*: a hash of the source of the rewrite rules, the
primitives and the type checker, so that any change to what derivation does makes old entries unreachable.

The model search's screening of a variant (a pool of valid configurations drawn from its solved space and
the analytical model's prediction for each) is cached the same way (``memo``), keyed by the variant's text,
the sizes, the device profile, the draw and a version of the constraint and model code: a resumed
exploration then ranks its candidates without solving or modelling again.

The kernels of the batch a model search saves for its next run (``liftpy.explore.resume``) are kept here
too (``remember`` and ``recall``), by variant, configuration, sizes and device limits: the store keeps the
points as JSON, and a resumed run on this machine sends them straight to the measuring worker.

The directory is ``$LIFTPY_CACHE_DIR`` or ``~/.cache/liftpy``; set ``LIFTPY_CACHE_DIR=off`` to disable it.
A damaged or unreadable entry is ignored and derived again.

Unpickling runs code, so only entries this user wrote are unpickled.  Folders are created 0700 and files
0600.  Every entry is signed: ``cache.key`` in the directory (32 random bytes, created 0600 on first use, all
at once: written aside and linked into place, so a concurrent process never reads half a key) is the key of
an HMAC-SHA256 over the entry's name and pickled bytes, kept in the entry's first bytes and checked before
anything is unpickled.  An entry that is unsigned (written by a liftpy before this), wrongly signed, cut
short, signed for another name, in a folder or file not owned by this user, or writable by the group or
others, is a miss, never unpickled and never an error: it is derived again (and replaced).  Where the
directory or the key itself is not private (another owner, or group or others may write the directory or
read the key), the cache is off for the run, with one warning line: whoever could write those could sign.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import stat
import sys
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import sympy

from ..version import __version__

KEY_FILE = "cache.key"
KEY_BYTES = 32
MAGIC = b"liftpy-cache-hmac-sha256\n"  # what a signed entry starts with, before its MAC
MAC_BYTES = hashlib.sha256().digest_size


@lru_cache(maxsize=None)
def ruleset_version(subpackages: tuple = ("rewrite", "ir")) -> str:
    """A hash of the source of the subpackages whose code decides what is cached."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha1()
    for sub in subpackages:
        for path in sorted((root / sub).rglob("*.py")):  # (a package's subpackages too: codegen's passes)
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    h.update(__version__.encode())
    return h.hexdigest()[:16]


def configured_dir() -> Path | None:
    """The directory ``LIFTPY_CACHE_DIR`` names (or the default), None where it says off."""
    value = os.environ.get("LIFTPY_CACHE_DIR")
    if value and value.lower() in ("off", "0", "none", "no"):
        return None
    return Path(value) if value else Path.home() / ".cache" / "liftpy"


def cache_dir() -> Path | None:
    """The cache directory, or None where the cache is off (by ``LIFTPY_CACHE_DIR``, or because the
    directory or its key is not private: module docstring)."""
    directory = configured_dir()
    return directory if directory is not None and _key(directory) is not None else None


# codegen too: derivation drops the variants code generation refuses (``codegen.allocation``).
VARIANT_CODE = ("rewrite", "ir", "codegen")


def cached_variants(op) -> tuple:
    """The operator's variants, from the cache when derived before with the same rules."""
    return tuple(memo("variants", op.variant_key(), lambda: tuple(op.variants()), VARIANT_CODE))


def variants_cached(op) -> bool:
    """Whether ``cached_variants(op)`` would read its variants from the disk cache (without reading them)."""
    path = _entry("variants", op.variant_key(), VARIANT_CODE)
    return path is not None and path.exists()


SCREEN_CODE = ("rewrite", "ir", "constraints", "model", "views", "codegen")


def memo(kind: str, key: str, compute, code: tuple = ("rewrite", "ir")):
    """``compute()``, or what it returned before for the same ``kind``, ``key`` and version of the source
    of the ``code`` subpackages."""
    path = _entry(kind, key, code)
    if path is None:
        return compute()
    found = _load(path)
    if found is not _MISSING:
        return found
    value = compute()
    _dump(path, value)
    return value


def remember(kind: str, key: str, value, code: tuple = ("rewrite", "ir")) -> None:
    """Keep ``value`` for ``recall`` (what ``memo`` does after computing, for a value computed elsewhere:
    kernels generated in a worker process)."""
    path = _entry(kind, key, code)
    if path is not None:
        _dump(path, value)


def recall(kind: str, key: str, code: tuple = ("rewrite", "ir")):
    """What ``remember`` or ``memo`` kept for ``kind`` and ``key`` with this version of ``code``, or None."""
    path = _entry(kind, key, code)
    found = _MISSING if path is None else _load(path)
    return None if found is _MISSING else found


_MISSING = object()


def _entry(kind: str, key: str, code: tuple) -> Path | None:
    directory = cache_dir()
    if directory is None:
        return None
    digest = hashlib.sha1(f"{key}|{ruleset_version(tuple(code))}".encode()).hexdigest()[:24]
    return directory / kind / f"{digest}.pkl"


_keys: dict[str, bytes | None] = {}  # the key of each directory used by this process (None: off)
_keys_lock = threading.Lock()


def _key(directory: Path) -> bytes | None:
    """The signing key of ``directory``, made on first use; None (with one warning line) where the
    directory or the key is not private to this user."""
    name = str(directory)
    with _keys_lock:
        if name not in _keys:
            key, why = _read_or_make_key(directory)
            if why is not None:
                print(f"liftpy: warning: the disk cache {directory} is off for this run: {why}", file=sys.stderr)
            _keys[name] = key
        return _keys[name]


def _read_or_make_key(directory: Path) -> tuple[bytes | None, str | None]:
    """(key, None), or (None, why the cache cannot be used)."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        why = _not_private(os.stat(directory), "folder", stat.S_ISDIR)
        if why is not None:
            return None, f"{why}; make it yours and private (chmod 700) or set LIFTPY_CACHE_DIR"
        path = directory / KEY_FILE
        if not os.path.lexists(path):
            _make_key(path)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            info = os.fstat(fd)
            why = _not_private(info, "key", stat.S_ISREG, 0o066)
            key = os.read(fd, KEY_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as e:
        return None, f"{e.strerror or e} ({e.filename or directory}); set LIFTPY_CACHE_DIR to a folder of yours"
    if why is not None:
        return None, f"{path}: {why}; delete it (a new one is made) or set LIFTPY_CACHE_DIR"
    if len(key) != KEY_BYTES:
        return None, f"{path} is not a key of {KEY_BYTES} bytes; delete it (a new one is made)"
    return key, None


def _make_key(path: Path) -> None:
    """Write a new key aside and link it into place: a process that finds the key reads all of it, and of
    two processes making one at once, both use the one linked first."""
    tmp = path.with_name(f"{KEY_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: its key is the one
        except OSError:
            # A file system without hard links: renamed into place instead, where two processes making a
            # key at the same instant may each sign with their own for this run (their entries then miss).
            if not os.path.lexists(path):
                os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _not_private(info: os.stat_result, what: str, kind, forbidden: int = 0o022) -> str | None:
    """Why the folder or file ``info`` describes is not this user's alone to change (``forbidden``: the
    mode bits that must be clear), or None."""
    if not kind(info.st_mode):
        return f"the {what} is not a {'folder' if kind is stat.S_ISDIR else 'plain file'}"
    if info.st_uid != os.getuid():
        return f"the {what} belongs to user {info.st_uid}, not to this one ({os.getuid()})"
    if info.st_mode & forbidden:
        return f"the {what} has mode {stat.S_IMODE(info.st_mode):04o} (others than its owner may " \
               f"{'write' if forbidden == 0o022 else 'read or write'} it)"
    return None


def _mac(key: bytes, path: Path, data) -> bytes:
    """The entry's signature, over its name as well as its bytes: a signed entry copied under another
    name (another key's) is a miss."""
    mac = hmac.new(key, f"{path.parent.name}/{path.name}\0".encode(), hashlib.sha256)
    mac.update(data)  # (not joined to the name: an entry of variants is tens of megabytes)
    return mac.digest()


# Entries of immutable values kept in this process once read: a network's layers share one convolution's
# variants, and unpickling the same tens of megabytes for each layer took seconds.  Kept with the entry's
# file identity and the key, so a changed, replaced or re-keyed entry is read (and its signature checked) again.
_KEPT_KINDS = ("variants",)
_KEPT: OrderedDict = OrderedDict()  # path -> (signature, value)
_KEPT_MAX = 8


def _load(path: Path):
    """The value of a signed entry of this user's, else ``_MISSING`` (and nothing is unpickled)."""
    key = _key(path.parent.parent)
    if key is None:
        return _MISSING
    if path.parent.name not in _KEPT_KINDS:
        return _load_signed(path, key)
    try:
        info, folder = os.stat(path), os.stat(path.parent)
    except OSError:
        return _MISSING
    # (ctime and modes: a chmod or chown of the entry or its folder reads the entry again, with its checks)
    signature = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode, info.st_uid,
                 folder.st_ino, folder.st_mode, folder.st_uid, hashlib.sha256(key).digest())
    kept = _KEPT.get(path)
    if kept is not None and kept[0] == signature:
        _KEPT.move_to_end(path)
        return kept[1]
    value = _load_signed(path, key)
    if value is not _MISSING:
        _KEPT[path] = (signature, value)
        while len(_KEPT) > _KEPT_MAX:
            _KEPT.popitem(last=False)
    return value


def read_private(path: Path) -> bytes | None:
    """The bytes of ``path``, a plain file in a folder that only this user may change (no link followed);
    None where it is missing, unreadable or not private."""
    try:
        if _not_private(os.stat(path.parent), "folder", stat.S_ISDIR) is not None:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            if _not_private(os.fstat(fd), "entry", stat.S_ISREG) is not None:
                return None
            return f.read()
    except OSError:
        return None


def write_private(path: Path, *parts: bytes) -> bool:
    """Write ``parts`` to ``path`` as a file only this user may read (0600, in a 0700 folder), atomically: a
    concurrent reader sees the old file or the new one.  False where it could not be written."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # One temporary file per thread too: a resumed search rebuilds its strategy in a thread beside the main one.
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(fd, 0o600)  # (a temporary file left by a killed process kept its mode)
            for part in parts:
                f.write(part)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def _load_signed(path: Path, key: bytes):
    blob = read_private(path)
    if blob is None:
        return _MISSING
    view = memoryview(blob)
    head, mac, data = view[: len(MAGIC)], view[len(MAGIC) : len(MAGIC) + MAC_BYTES], view[len(MAGIC) + MAC_BYTES :]
    if head != MAGIC or not hmac.compare_digest(mac, _mac(key, path, data)):
        return _MISSING
    try:
        # What was pickled is already in sympy's canonical form: rebuilding it without evaluation gives the
        # same expressions, four times faster (evaluating a Mod or a product asks sympy's assumptions).
        with sympy.evaluate(False):
            return pickle.loads(data)
    except (EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        return _MISSING  # signed by this user, but of classes this liftpy no longer has


def _dump(path: Path, value) -> None:
    key = _key(path.parent.parent)
    if key is None:
        return
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        return  # what cannot be pickled (a lambda user function) is simply not cached
    write_private(path, MAGIC, _mac(key, path, data), data)  # (a concurrent exploration never reads half a file)
