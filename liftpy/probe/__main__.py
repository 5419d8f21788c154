"""``python -m liftpy.probe [options]``: the ``liftpy probe`` command on its own, for machines where the
command modules of other subsystems need packages that are not installed (such as a lent GPU)."""

from __future__ import annotations

import argparse
import sys

from ..cli import dispatch
from .cli import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m liftpy.probe")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["probe", *(sys.argv[1:] if argv is None else argv)])
    return dispatch(args, "interrupted; the profile holds the probes that finished")


if __name__ == "__main__":
    sys.exit(main())
