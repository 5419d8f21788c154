"""What the command-line tools read from their arguments, written once: sizes, counts and program files."""

from __future__ import annotations

import argparse
import difflib
import inspect
import sys
from pathlib import Path

from .errors import InputError, LiftError, ParseError
from .ir.expr import Program
from .ir.parser import parse_program
from .loading import load_module
from .operators import OPERATORS


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


PROGRAM_FORMS = "FILE.lift (text form; '-' for standard input), FILE.py:function or module:function"


def read_program(spec: str):
    """The program ``spec`` names, in any of the forms every command takes (``PROGRAM_FORMS``): a text file
    (``.lift``, or any file that is not Python; ``-`` for standard input), a Python file and the name in it
    (``examples/matmul.py:matmul``: an ``@program`` function, or a function of no arguments returning a
    program), or an importable module and name (``mypackage.ops:softmax``).  A Python file without a name
    gives its one program.  Every failure is a one-line error naming the file."""
    path = Path(spec)
    python = spec.endswith(".py") or (":" in spec and spec.rsplit(":", 1)[0].endswith(".py"))
    if spec == "-" or spec.endswith(".lift") or (":" not in spec and not python and path.exists()):
        text = read_text(spec)
        try:
            return parse_program(text)
        except ParseError as e:
            raise ParseError(f"{'standard input' if spec == '-' else spec}: {e}") from None
    if ":" not in spec and not python:
        raise InputError(f"{spec!r} names no program: give {PROGRAM_FORMS} (e.g. examples/matmul.py:matmul)"
                         + _library_hint(spec))
    module_name, _, name = spec.rpartition(":") if ":" in spec else (spec, "", "")
    module = load_module(module_name)
    return _program_in(module, spec, name)


def _library_hint(word: str) -> str:
    """A pointer to the operator library for a plain word that names no file (``maxpool`` -> ``maxpool2d``)."""
    if "/" in word or "." in word:
        return ""
    close = difflib.get_close_matches(word, sorted(OPERATORS), n=3, cutoff=0.5)
    return f"; did you mean the library's {' or '.join(close)}?" if close else ""


def _program_in(module, spec: str, name: str):
    """The program ``name`` of ``module``: a Program, or a function of no arguments that returns one; without a
    name, the module's only Program."""
    if not name:
        found = sorted(k for k, v in vars(module).items() if isinstance(v, Program) and not k.startswith("_"))
        if len(found) != 1:
            raise InputError(f"{spec} defines {len(found) or 'no'} programs{': ' + ', '.join(found) if found else ''}; "
                             f"name one: {spec}:NAME")
        return getattr(module, found[0])
    obj = getattr(module, name, None)
    if obj is None:
        raise InputError(f"{spec.rpartition(':')[0]} has no {name}")
    if isinstance(obj, Program):
        return obj
    if callable(obj):
        try:
            inspect.signature(obj).bind()
        except (TypeError, ValueError):  # it needs arguments (or has no signature): not a program's maker
            raise InputError(f"{spec} is a function that takes arguments, not a liftpy program (an @program function, "
                             "or a function of no arguments returning one)") from None
        try:
            result = obj()
        except LiftError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's function may raise anything
            raise InputError(f"{spec}() raised {type(e).__name__}: {e}") from None
        if isinstance(result, Program):
            return result
    raise InputError(f"{spec} is not a liftpy program (an @program function, or a function returning one)")
