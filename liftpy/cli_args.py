"""What the command-line tools read from their arguments, written once: sizes, counts and program files."""

from __future__ import annotations

import argparse
from pathlib import Path

from .errors import InputError


def _number(kind, low: float, strict: bool, what: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value < low or (strict and value == low):
            raise argparse.ArgumentTypeError(f"{text} is not {what}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


# argparse types of the numeric options: a count of zero or below (samples, repeats, jobs) is an error
# at the command line, not a silent empty run.
positive_int = _number(int, 0, True, "a positive integer")
nonnegative_int = _number(int, 0, False, "a non-negative integer")
positive_float = _number(float, 0.0, True, "a positive number")
# A factor of the best time (``--abort-factor``): below 1 a point would be stopped for being faster than the
# best, and stored as aborted for good.
at_least_one = _number(float, 1.0, False, "a number of at least 1")


def positive_float_or_off(text: str) -> float | None:
    """A positive number, or ``off`` (None): for a limit the user may lift."""
    return None if text.strip().lower() == "off" else positive_float(text)


positive_float_or_off.__name__ = "a positive number or off"


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
            if out.get(k, value) != value:  # (the last one was kept, silently)
                raise InputError(f"size {k} is given twice, as {out[k]} and {value}")
            out[k] = value
    return out


def read_text(path: str) -> str:
    """A file's text (standard input for ``-``); an unreadable file is a one-line error."""
    import sys

    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text()
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory; give a program file") from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read {path}: not UTF-8 text (byte {e.start}); give a program in text form") from None




def read_program(path: str):
    """The program in a text file; a syntax error names the file (the parser knows only line and column)."""
    from .errors import ParseError
    from .ir.parser import parse_program

    text = read_text(path)
    try:
        return parse_program(text)
    except ParseError as e:
        raise ParseError(f"{'standard input' if path == '-' else path}: {e}") from None
