"""What the command-line tools read from their arguments, written once: sizes and program files."""

from __future__ import annotations

from pathlib import Path

from .errors import InputError


def parse_sizes(items: list[str] | str | None, parameters: bool = False) -> dict[str, int]:
    """``["N=64", "M=32"]``, ``["N=64,M=32"]`` or ``"N=64,M=32"`` -> {"N": 64, "M": 32}: positive integers
    (every command that takes sizes reads them here); with ``parameters`` the values may also be tuning
    parameters, some of which can be 0 (an optimisational padding)."""
    if isinstance(items, str):
        items = [items]
    out: dict[str, int] = {}
    for item in items or []:
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            if "=" not in part:
                raise InputError(f"size '{part}' must be written NAME=VALUE (e.g. -s M=1024,N=1024)")
            k, v = (x.strip() for x in part.split("=", 1))
            try:
                value = int(v)
            except ValueError:
                raise InputError(f"size {k} must be a positive integer, got '{v}'") from None
            if value < (0 if parameters else 1):
                raise InputError(f"size {k} must be a {'non-negative' if parameters else 'positive'} integer, got {value}")
            out[k] = value
    return out


def read_text(path: str) -> str:
    """A file's text (standard input for ``-``); an unreadable file is a one-line error."""
    import sys

    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None


