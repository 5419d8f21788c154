"""A GPU's measured numbers, probed once and kept for every exploration after: the cost model's inputs.

The analytical model (``liftpy.model.analytical.Machine``) reads a device's memory bandwidths, multiply-add
throughput, register pool and launch time from its profile.  Without a probe it falls back on guesses: on
an H200 a DRAM of 1 TB/s, caches of 4 and local memory of 8 TB/s, where the probes of an H100 measured 5.2,
32 and 33 TB/s.  Every search on the lent H200 ranked its candidates with those guesses (memory four to
eight times too slow against the arithmetic), while the searches of an H100 that beat cuDNN were given a
measured profile with ``--profile``.  So the first exploration on this machine's GPU (not a Ray cluster's,
whose workers report their own profiles) without a profile measures the
model's inputs (``MODEL_PROBES``, the quick sweeps: seconds) in the worker that owns the device, and keeps the
document in the cache directory, one JSON file per device and driver (``saved_path``); ``liftpy probe``
keeps what it measures there too.  A ``--profile`` file still takes precedence.

Not on a device whose kernels run on this host's CPUs, neither measured nor read: the model predicts those
from the operations of their code, with constants fitted per operation (``CPU_OPERATION_S``), and probing
there takes the cores of a 2-core machine for seconds (``--profile`` gives such a device a probed profile).

A kept document is JSON, read and checked like any profile file (never executed), from a private file of
the cache directory; one that cannot be read or checked, or lacks a probe the model reads, is measured
again.  Only its measurements are applied: the limits are what the driver reports now.  Its name carries a
hash of the probes' code, so a corrected probe measures again.  A probe that fails is not tried again by the
same process (a network's layers each open the device).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable

from ..host.device import get_device
from ..host.profile import DeviceProfile
from ..results.cache import cache_dir, read_private, ruleset_version, write_private
from .document import profile_document
from .errors import ProbeError
from .runner import run_probes

# What ``Machine.from_profile`` reads: launch time, fp32 throughput, the register pool, the global and cache
# bandwidths, local memory's.
MODEL_PROBES = ("launch", "compute", "registers", "buffer_bandwidth", "local_bandwidth")

_KEPT: dict[str, dict] = {}  # device key -> document, for this process (the cache may be off)
_FAILED: set[str] = set()  # devices whose probe failed in this process


def saved_path(device_key: str) -> Path | None:
    """Where the profile of ``device_key`` (platform | name | driver) is kept; None where the cache is off."""
    directory = cache_dir()
    if directory is None:
        return None
    name = hashlib.sha1(f"{device_key}|{ruleset_version(('probe',))}".encode()).hexdigest()[:20]
    return directory / "devices" / f"{name}.json"


def saved_document(device_key: str) -> dict | None:
    """The kept document of ``device_key``, None where there is none or it does not pass the checks."""
    if device_key in _KEPT:
        return _KEPT[device_key]
    path = saved_path(device_key)
    blob = read_private(path) if path is not None else None
    if blob is None:
        return None
    from .document import validate  # (jsonschema, where installed, is imported only to check a document)

    try:
        doc = json.loads(blob)
        if not isinstance(doc, dict) or not all(isinstance(doc.get(k), dict) for k in ("device", "measured", "probes")):
            return None
        validate(doc, require_schema=False)
        if _key_of(doc) != device_key or not covers_model(doc):
            return None
    except (ValueError, ProbeError, KeyError, TypeError, AttributeError):
        return None
    _KEPT[device_key] = doc
    return doc


def keep(doc: dict, device_key: str) -> Path | None:
    """Keep ``doc`` as the profile of ``device_key``: in this process, and in the cache directory where it is
    on (None where it is not, or the file could not be written: the next process measures again)."""
    _KEPT[device_key] = doc
    path = saved_path(device_key)
    if path is None or not write_private(path, (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode()):
        return None
    return path


def covers_model(doc: dict) -> bool:
    """Whether every probe the model reads ran in ``doc`` (a ``liftpy probe --only`` run may not)."""
    probes = doc.get("probes") or {}
    return all((probes.get(name) or {}).get("status") == "ok" for name in MODEL_PROBES)


# Seconds the probe may take in the measuring worker (5.9-6.3 s on an H200) before the model goes without.
PROBE_TIMEOUT_S = 120.0


def probe_for_model(device) -> dict:
    """The quick sweeps of ``MODEL_PROBES`` on ``device`` (an index or name), as a profile document: what the
    worker that owns the device runs for ``device_profile``."""
    return profile_document(run_probes(get_device(device), quick=True, only=MODEL_PROBES))


def device_profile(info, profile_path=None, probe: Callable[[], tuple[dict | None, str]] | None = None,
                   say: Callable[[str], None] | None = None) -> DeviceProfile:
    """The profile of the device ``info`` describes: from ``profile_path`` where one is given, else what the
    driver reports with the kept probe document's measurements on top; on a GPU without one, ``probe()``
    measures it first (module docstring: the document, or None and why) and ``say`` is told where it was
    kept, or why there is none."""
    base = DeviceProfile.from_device(info.index)
    if profile_path:
        return DeviceProfile.load(profile_path, base)
    if info.on_host_cpu:
        return base
    doc = saved_document(info.key)
    if doc is None and probe is not None and info.key not in _FAILED:
        started = time.time()
        doc, why = probe()
        if doc is not None and not covers_model(doc):
            failed = [k for k, v in (doc.get("probes") or {}).items() if v.get("status") != "ok"]
            doc, why = None, f"probe {', '.join(failed)}: {doc['probes'][failed[0]].get('reason', '')}" if failed else why
        if doc is None:
            _FAILED.add(info.key)
            if say is not None:
                say(f"note: measuring {info.name} for the cost model failed ({why}); the model uses guessed rates "
                    f"(`liftpy probe` measures them, `--profile` gives them)")
            return base
        path = keep(doc, info.key)
        if say is not None:
            say(f"measured {info.name}'s bandwidths and arithmetic for the cost model once ({time.time() - started:.1f} s"
                + (f", kept in {path}" if path is not None else "") + "; `liftpy probe` measures more)")
    if doc is None:
        return base
    # (the measurements only: the limits stay what the driver reports, of this very device)
    measured = {"schema": doc.get("schema"), "device": doc["device"], "measured": doc["measured"]}
    return base.with_overrides(measured, str(saved_path(info.key) or "probed"))


def _key_of(doc: dict) -> str:
    dev = doc.get("device") or {}
    return " | ".join(str(dev.get(k, "")) for k in ("platform", "name", "driver"))
