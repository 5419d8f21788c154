"""The profile document: building it from a probe run, validating it, writing and reading it.

The format is the one ``liftpy.host.profile`` describes (``schema`` = ``liftpy-device-profile/1``) and
``schema.json`` next to this module defines.  Beyond the JSON Schema, ``validate`` checks what a schema
cannot say: every curve has as many y as x values, all numbers are finite, and every measured name a
probe lists exists.  ``write`` validates against the schema when jsonschema is installed and always runs
the other checks, so a machine without jsonschema (the lent GPU) can still write a profile.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from ..host.profile import SCHEMA
from ..version import __version__
from .errors import ProbeError
from .runner import ProbeRun

SCHEMA_PATH = Path(__file__).with_name("schema.json")


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def profile_document(run: ProbeRun) -> dict:
    measured, curves, probes = {}, {}, {}
    for r in run.results:
        for m in r.measurements:
            measured[m.name] = m.as_json(r.probe)
        for c in r.curves:
            curves[c.name] = c.as_json(r.probe)
        entry = {"status": r.status, "seconds": round(r.seconds, 3),
                 "measured": [m.name for m in r.measurements], "curves": [c.name for c in r.curves]}
        if r.reason:
            entry["reason"] = r.reason
        probes[r.probe] = entry
    return {
        "schema": SCHEMA,
        "device": dict(run.identity),
        "date": run.date,
        "liftpy_version": __version__,
        "mode": "quick" if run.plan.quick else "full",
        "seconds": round(run.seconds, 3),
        "reported": run.reported.as_json(),
        "measured": measured,
        "curves": curves,
        "probes": probes,
    }


def has_jsonschema() -> bool:
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return False
    return True


def validate(doc: dict, require_schema: bool = True) -> None:
    """Raise ``ProbeError`` naming the first place where ``doc`` breaks the profile format.  Without
    jsonschema installed, only the checks beyond the schema run, unless ``require_schema``."""
    if has_jsonschema():
        _validate_schema(doc)
    elif require_schema:
        raise ProbeError("validating a profile needs jsonschema: pip install -e '.[test]' (or pip install jsonschema)")
    _validate_content(doc)


def _validate_schema(doc: dict) -> None:
    import jsonschema  # (an optional dependency, the test extra's: the check runs where it is installed)

    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise ProbeError(f"profile does not match {SCHEMA_PATH.name} at {where}: {e.message}")


def _validate_content(doc: dict) -> None:
    for name, c in doc.get("curves", {}).items():
        if len(c["x"]) != len(c["y"]):
            raise ProbeError(f"profile curve {name} has {len(c['x'])} x values but {len(c['y'])} y values")
        if not all(math.isfinite(v) for v in c["x"] + c["y"]):
            raise ProbeError(f"profile curve {name} holds a non-finite number")
    for name, m in doc.get("measured", {}).items():
        v = m["value"]
        if isinstance(v, float) and not math.isfinite(v):
            raise ProbeError(f"profile value {name} is not finite")
    for probe, entry in doc.get("probes", {}).items():
        missing = [n for n in entry.get("measured", []) if n not in doc["measured"]] + \
                  [n for n in entry.get("curves", []) if n not in doc["curves"]]
        if missing:
            raise ProbeError(f"probe {probe} lists {', '.join(missing)}, which the profile does not hold")


def write(doc: dict, path: str | Path) -> Path:
    validate(doc, require_schema=False)
    path = Path(path)
    try:
        path.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    except OSError as e:
        raise ProbeError(f"cannot write profile {path}: {e.strerror}") from None
    return path


def read(path: str | Path) -> dict:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ProbeError(f"cannot read profile {path}: {e}") from None
    validate(doc)
    return doc
