"""A GPU's measured numbers, probed once and kept for every exploration after: the cost model's inputs.

The analytical model (``liftpy.model.analytical.Machine``) reads a device's memory bandwidths, multiply-add
throughput, register pool and launch time from its profile.  Without a probe it falls back on guesses: on
an H200 a DRAM of 1 TB/s, caches of 4 and local memory of 8 TB/s, where the probes of an H100 measured 5.2,
32 and 33 TB/s.  Every search on the lent H200 ranked its candidates with those guesses (memory four to
eight times too slow against the arithmetic), while the searches of an H100 that beat cuDNN were given a
measured profile with ``--profile``.  So the first exploration on a GPU without a profile measures the
model's inputs (``MODEL_PROBES``, the quick sweeps: seconds) in the worker that owns the device, and keeps the
document in the cache directory, one JSON file per device and driver (``saved_path``); ``liftpy probe``
keeps what it measures there too.  A ``--profile`` file still takes precedence.

Not on a device whose kernels run on this host's CPUs, neither measured nor read: the model predicts those
from the operations of their code, with constants fitted per operation (``CPU_OPERATION_S``), and probing
there takes the cores of a 2-core machine for seconds (``--profile`` gives such a device a probed profile).

A kept document is JSON, read and checked like any profile file (never executed); one that cannot be read
or checked is measured again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Callable

from ..host.profile import DeviceProfile
from ..results.cache import cache_dir
from .errors import ProbeError

# What ``Machine.from_profile`` reads: launch time, fp32 throughput, the register pool, the global and cache
# bandwidths, local memory's.
MODEL_PROBES = ("launch", "compute", "registers", "buffer_bandwidth", "local_bandwidth")

_KEPT: dict[str, dict] = {}  # device key -> document, for this process (the cache may be off)


def saved_path(device_key: str) -> Path | None:
    """Where the profile of ``device_key`` (platform | name | driver) is kept; None where the cache is off."""
    directory = cache_dir()
    if directory is None:
        return None
    return directory / "devices" / f"{hashlib.sha1(device_key.encode()).hexdigest()[:20]}.json"


def saved_document(device_key: str) -> dict | None:
    """The kept document of ``device_key``, None where there is none or it does not pass the checks."""
    if device_key in _KEPT:
        return _KEPT[device_key]
    path = saved_path(device_key)
    if path is None or not path.is_file():
        return None
    from .document import validate  # (jsonschema, where installed, is imported only to check a document)

    try:
        doc = json.loads(path.read_text())
        validate(doc, require_schema=False)
    except (OSError, ValueError, ProbeError, KeyError, TypeError):
        return None
    if not isinstance(doc, dict) or _key_of(doc) != device_key:
        return None
    _KEPT[device_key] = doc
    return doc


def keep(doc: dict, device_key: str) -> Path | None:
    """Keep ``doc`` as the profile of ``device_key`` (this process, and the cache directory where it is on):
    written aside and renamed into place, so a concurrent reader sees the old file or the new one."""
    _KEPT[device_key] = doc
    path = saved_path(device_key)
    if path is None:
        return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError:
        return None  # kept for this process; the next one measures again
    return path


def covers_model(doc: dict) -> bool:
    """Whether every probe the model reads ran in ``doc`` (a ``liftpy probe --only`` run may not)."""
    probes = doc.get("probes") or {}
    return all((probes.get(name) or {}).get("status") == "ok" for name in MODEL_PROBES)


def probe_for_model(device) -> dict:
    """The quick sweeps of ``MODEL_PROBES`` on ``device`` (an index or name), as a profile document: what the
    worker that owns the device runs for ``device_profile``."""
    from ..host.device import get_device
    from .document import profile_document
    from .runner import run_probes

    return profile_document(run_probes(get_device(device), quick=True, only=MODEL_PROBES))


def device_profile(info, profile_path=None, probe: Callable[[], dict | None] | None = None,
                   say: Callable[[str], None] | None = None) -> DeviceProfile:
    """The profile of the device ``info`` describes: from ``profile_path`` where one is given, else what the
    driver reports with the kept probe document on top; on a GPU without one, ``probe()`` measures it
    first (module docstring) and ``say`` is told where it was kept."""
    base = DeviceProfile.from_device(info.index)
    if profile_path:
        return DeviceProfile.load(profile_path, base)
    if info.on_host_cpu:
        return base
    doc = saved_document(info.key)
    if doc is None and probe is not None:
        started = time.time()
        doc = probe()
        if doc is None or not covers_model(doc):
            if say is not None:
                say(f"note: probing {info.name} for the cost model failed; the model uses guessed bandwidths "
                    f"(`liftpy probe` says why)")
            return base
        path = keep(doc, info.key)
        if say is not None:
            say(f"measured {info.name}'s bandwidths and arithmetic for the cost model once ({time.time() - started:.1f} s"
                + (f", kept in {path}" if path is not None else "") + "; `liftpy probe` measures more)")
    if doc is None:
        return base
    return base.with_overrides(doc, str(saved_path(info.key) or "probed"))


def _key_of(doc: dict) -> str:
    dev = doc.get("device") or {}
    return " | ".join(str(dev.get(k, "")) for k in ("platform", "name", "driver"))
