"""Runs of a row per work-item: a stencil's inner map split into runs of ``n`` neighbouring outputs, each
run computed by one work-item with its copies unrolled.

One output per work-item reads each neighbour with its own scalar access: a Jacobi sweep five reads an
output.  A run of eight outputs reads its three rows' eight middle elements side by side, which code
generation loads as one aligned vector each (``codegen.passes.vectorize``; from half storage one
sixteen-byte word), the two neighbours beyond the run as scalars, and stores the eight results as one
vector; the border's runs keep the clamped reads (``codegen.passes.guards``, ``guard_runs``).  By hand on
the H200 (``benchmarks/device/halfstencil.py``, 8192^2): 0.235 ms one output an item in floats, 0.152 a run
of eight; in half storage 0.208 and 0.079.

``splitRuns`` is ``splitJoin`` with the inner map sequential and unrolled, ``n`` two, four or eight (the widths
the vectorization stores; a run of two fits a small tile).  The exploration's strategy ``stencil_rows``
applies it only to the innermost map of a nest over windows (``slide``, alone or zipped with other arrays)
whose own function maps nothing (a row's outputs, each a window's value): the runs' map is mapped to
work-items by the work mapping, the run's copies stay in one item.
"""

from __future__ import annotations

import sympy

from ..ir import dsl
from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call, rename_bound, subterms
from ..ir.prims.layout import Slide
from .positions import positions
from .rule import rule
from .strategy import once
from .variant import Variant

RUN_WIDTHS = (2, 4, 8)  # a vector store of two, four or eight elements


@rule("splitRuns", "map(f, x) => join(map(mapSeqUnroll(f), split(n, x)))")
def split_runs(e, site, ctx):
    if not (isinstance(e, Call) and type(e.fn) is P.Map) or is_view(e.fn.f.body):
        return None
    n = ctx.fresh("s")
    ctx.require(sympy.Contains(n, sympy.FiniteSet(*RUN_WIDTHS)),
                f"a run is loaded and stored as vectors of {' or '.join(map(str, RUN_WIDTHS))} elements, so {n} is one of them")
    f = e.fn.f
    return dsl.join(dsl.map(lambda run: Call(P.MapSeq(rename_bound(f), True), (run,)), dsl.split(n, e.args[0])))


def stencil_rows(v: Variant) -> list[Variant]:
    """``splitRuns`` at the row of the first stencil: the inner map of a map whose argument is made of
    windows (``slide``; alone or zipped with other arrays, a Jacobi step's mask), whose own function maps
    nothing.  A matrix product's rows (a map of maps over no windows) are left to the tilings, and a
    convolution's map over its kernels (whose function maps nothing) is no row of its windows."""
    rows = set()
    for path, e in positions(v.program.body):
        if not (isinstance(e, Call) and type(e.fn) is P.Map) or is_view(e.fn.f.body):
            continue
        if not any(isinstance(n, Call) and isinstance(n.fn, Slide) for n in subterms(e.args[0])):
            continue
        row, at = e, path
        # (down a 3D stencil's planes to its rows: each map over a part of what the map around it takes, so
        # a convolution's map over its kernels, inside a window's function, is not a row)
        while (isinstance(row.fn.f.body, Call) and type(row.fn.f.body.fn) is P.Map
               and row.fn.f.params[0].name in row.fn.f.body.args[0].free_vars):
            row, at = row.fn.f.body, at + (("fn", "f"),)
        if row is e or any(isinstance(n, Call) and isinstance(n.fn, P.MapLike) for n in subterms(row.fn.f.body)):
            continue
        rows.add(at)
    return once(split_runs, where=lambda path, e: path in rows)(v) if rows else []

