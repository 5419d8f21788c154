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

The kernels of the batch a model search saves for its next run (``liftpy.tuning.engine``) are kept here
too (``remember`` and ``recall``), by variant, configuration, sizes and device limits: the store keeps the
points as JSON, and a resumed run on this machine sends them straight to the measuring worker.

The directory is ``$LIFTPY_CACHE_DIR`` or ``~/.cache/liftpy``; set ``LIFTPY_CACHE_DIR=off`` to disable it.
A damaged or unreadable entry is ignored and derived again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
from functools import lru_cache
from pathlib import Path

import sympy


@lru_cache(maxsize=None)
def ruleset_version(subpackages: tuple = ("rewrite", "ir")) -> str:
    """A hash of the source of the subpackages whose code decides what is cached."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha1()
    for sub in subpackages:
        for path in sorted((root / sub).rglob("*.py")):  # (a package's subpackages too: codegen's passes)
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    from ..version import __version__

    h.update(__version__.encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path | None:
    value = os.environ.get("LIFTPY_CACHE_DIR")
    if value and value.lower() in ("off", "0", "none", "no"):
        return None
    return Path(value) if value else Path.home() / ".cache" / "liftpy"


def cached_variants(op) -> tuple:
    """The operator's variants, from the cache when derived before with the same rules."""
    # codegen too: derivation drops the variants code generation refuses (``codegen.allocation``).
    return tuple(memo("variants", op.variant_key(), lambda: tuple(op.variants()), ("rewrite", "ir", "codegen")))


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


def _load(path: Path):
    try:
        # What was pickled is already in sympy's canonical form: rebuilding it without evaluation gives the
        # same expressions, four times faster (evaluating a Mod or a product asks sympy's assumptions).
        with open(path, "rb") as f, sympy.evaluate(False):
            return pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        return _MISSING


def _dump(path: Path, value) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # One temporary file per thread too: a resumed search rebuilds its strategy in a thread beside the main one.
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic: a concurrent exploration never reads half a file
    except (OSError, pickle.PicklingError, AttributeError, TypeError):
        pass  # what cannot be pickled (a lambda user function) is simply not cached
