"""``liftpy operators``: the operator library, one line per entry (explore one with ``liftpy explore NAME``)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("operators", help="the operator library (stencils, pooling, linear algebra) to explore by name")
    p.set_defaults(func=cmd_operators)


def cmd_operators(args) -> int:
    # imported when the command runs, not at start-up (liftpy/cli.py says why)
    from . import describe

    print(describe())
    print("\nexplore one: liftpy explore jacobi2d:boundary=mirror -s H=512,W=512 --samples 50")
    return 0
