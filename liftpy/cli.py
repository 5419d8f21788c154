"""The ``liftpy`` command.  Each subsystem contributes its subcommands through a ``register(subparsers)``
function in its own ``cli`` module, listed in ``COMMAND_MODULES``; this file only assembles them and turns
liftpy errors into one-line messages with exit status 2.

The command modules import what a command needs inside the function that runs it: every module here is
imported to build the parser, and ``liftpy --help`` took 1.7 s with those imports deferred against 2.7 s
with them at the modules' heads (2-core machine, 2026-11-29)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .errors import LiftError
from .version import __version__

COMMAND_MODULES = [
    "liftpy.host.cli",  # devices, compile, run
    "liftpy.probe.cli",  # probe
    "liftpy.rewrite.cli",  # variants
    "liftpy.explore.cli",  # explore, pareto, failures, show
    "liftpy.constraints.cli",  # space
    "liftpy.operators.cli",  # operators
    "liftpy.network.cli",  # network
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="liftpy", description="A Lift-style compiler for data-parallel programs.")
    parser.add_argument("--version", action="version", version=f"liftpy {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for command in sub.choices.values():
        # An option is spelt out: argparse would take a prefix of one (--device 1 as show's --device-key).
        command.allow_abbrev = False
    return parser


def dispatch(args, interrupted: str = "interrupted") -> int:
    """Run a parsed command; a liftpy error becomes one line and exit status 2, an interrupt status 130."""
    try:
        return int(args.func(args) or 0)
    except LiftError as e:
        print(f"liftpy {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"liftpy {args.command}: {interrupted}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``liftpy variants ... | head``): nothing left to say to it.
        sys.stderr = open(os.devnull, "w")
        return 0


def main(argv: list[str] | None = None) -> int:
    return dispatch(build_parser().parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
