"""liftpy's exception types.

Every error a user can cause (an ill-typed program, impossible sizes, a missing device, a kernel the
OpenCL compiler rejects) surfaces as one of these, with a message that names what is wrong and, where
possible, what to do about it.  Nothing below liftpy (sympy, lark, pyopencl) should reach the user as a
raw traceback without this context.
"""

from __future__ import annotations


class LiftError(Exception):
    """Base class of all liftpy errors."""


class LiftTypeError(LiftError):
    """A program is ill-typed: wrong argument types, sizes that do not match or do not divide."""

    def __init__(self, primitive: str, message: str, expr_text: str | None = None):
        self.primitive = primitive
        self.detail = message
        self.expr_text = expr_text
        text = f"{primitive}: {message}"
        if expr_text:
            text += f"\n  in: {expr_text}"
        super().__init__(text)


class InputError(LiftError):
    """Input arrays given to the interpreter or a kernel do not match the program's declared types."""


class EvaluationError(LiftError):
    """The reference interpreter cannot evaluate a program at the given sizes (out of memory)."""


class ParseError(LiftError):
    """The text form of a program or rule could not be parsed."""


class CodegenError(LiftError):
    """A program cannot be turned into OpenCL as written (for example, it is not fully lowered)."""


class DeviceError(LiftError):
    """No usable OpenCL device, or the device lacks a feature the kernel needs."""


class KernelBuildError(LiftError):
    """The OpenCL compiler rejected a generated kernel."""

    def __init__(self, message: str, source: str, log: str):
        self.source = source
        self.log = log
        super().__init__(f"{message}\n--- build log ---\n{log.strip()}")


class KernelRunError(LiftError):
    """A kernel failed while being enqueued or run.  On a GPU such a failure (an illegal access, a
    watchdog) can leave the OpenCL context unusable, so a worker process that saw one is replaced."""

    retires_worker = True


class RewriteError(LiftError):
    """A rewrite rule could not be applied where it was asked to be."""


class ConstraintError(LiftError):
    """A parameter assignment violates a constraint, or no valid assignment exists."""


class TuningError(LiftError):
    """The exploration machinery was given something it cannot use: an unknown layer name or a malformed layer
    spec, a results database of another schema or a file that is not one, a reference implementation that is
    not available here, or a worker process that cannot start."""


def summarize(items, limit: int = 5, unit: str = "B") -> str:
    """``(name, size)`` items as ``"a (4096 B), b (16 B) and 998 more"``: the ``limit`` largest, then how many
    are left out.  A message that listed every item (the private arrays of a kernel unrolled 2^20 times)
    ran to megabytes on one line; the largest few are the ones that explain it."""
    items = sorted(items, key=lambda kv: -kv[1])
    shown = ", ".join(f"{name} ({size} {unit})" for name, size in items[:limit])
    rest = len(items) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown
