"""The strategy of cooperative rows (``liftpy.rewrite.rows``): which rules, in which order, where.

``cooperative_rows`` (in the default exploration) finds the maps whose function reduces its row, deals
each row to a work-group's items (after the optional algorithmic steps: float4 dot products, rows split
over work-groups, let-bound rows recomputed), then ``lower_rows`` lowers the rows over work-groups and
their shares over the items, with the choices of memory and unrolling that make sense together.
"""

from __future__ import annotations

from ..ir import primitives as P
from ..ir.analysis import is_view
from ..ir.expr import Call
from .algorithmic import map_fusion, vectorize_reduce
from .columns import split_columns
from .lowering import MAP_LCL, MAP_SEQ, MAP_WRG, limit_unrolled_nests, reduce_lcl, reduce_seq, unroll_in_item
from .positions import _child, get_at, positions
from .pipeline import let_global
from .rows import (deal_rows, deal_rows_vector, group_let_local, group_let_private, let_inline, let_shares,
                   reduce_lcl_shared, reduce_map_fusion, zip_map_fusion)
from .rows_split import lower_other_kernels, split_rows
from .rule import try_rule
from .strategy import choice, dedup, extend, normalize, once, optional, seq
from .work_mapping import private_accumulators


def _enclosing_maps(program, path):
    """The prefixes of ``path`` at which it enters the function of a plain ``map`` (outermost first), or
    None when it enters any other function on the way (a reduction's, a ``let``'s): a row map under those
    is not the work of a kernel's work-groups."""
    out = []
    for i, step in enumerate(path):
        if step[0] in ("fn", "callee"):
            node = get_at(program.body, path[:i])
            if not (isinstance(node, Call) and type(node.fn) is P.Map):
                return None
            out.append(path[:i])
    return out


def _group_level(program, rows_path):
    """``where`` for the positions the row's work-group runs together: inside the function of the map at
    ``rows_path``, entering no function but a ``let``'s on the way (not inside a work-item's map)."""
    body = rows_path + (("fn", "f"),)

    def where(path, e) -> bool:
        if path[: len(body)] != body:
            return False
        node = get_at(program.body, body)
        for step in path[len(body):]:
            if step[0] in ("fn", "callee") and not (isinstance(node, Call) and isinstance(node.fn, P.Let)):
                return False
            node = _child(node, step)
        return True

    return where


def _inside(rows_path):
    body = rows_path + (("fn", "f"),)
    return lambda path, e: path[: len(body)] == body


def _exhaust(rule, where_of):
    """Apply ``rule`` where ``where_of(program)`` allows until it applies nowhere (first position each
    time): the positions move as the program is rewritten, so the predicate is rebuilt for each step."""
    def go(v):
        for _ in range(200):
            nxt = once(rule, where=where_of(v.program))(v)
            if not nxt:
                return [v]
            v = nxt[0]
        raise RuntimeError(f"rule {rule.name} did not reach a normal form")

    return go


def lower_rows(v, rows_path, unroll: bool = True) -> list:
    """The lowering of a dealt row map at ``rows_path``: the rows over work-groups in dimension 0 (maps
    around them over dimensions 1 and 2), the row's partial results combined by trees in local memory,
    each ``let``-bound array of shares in private or local memory, the shares' maps over the group's
    work-items in dimension 0, the rest sequential; with ``unroll``, variants with each item's loops
    over its share unrolled too (always, for shares in private memory and for vectors: see below)."""
    outer = _enclosing_maps(v.program, rows_path)
    if outer is None or len(outer) > 2:
        return []
    for d, prefix in zip(range(len(outer), 0, -1), outer):
        r = try_rule(v.program, MAP_WRG[d], prefix)
        if r is None:
            return []
        v = extend(v, r)
    r = try_rule(v.program, MAP_WRG[0], rows_path)
    if r is None:
        return []
    v = extend(v, r)
    group = lambda program: _group_level(program, rows_path)  # noqa: E731
    inside = lambda program: _inside(rows_path)  # noqa: E731
    combine = seq(_exhaust(reduce_lcl_shared, group), _exhaust(reduce_lcl, group))
    memory = choice(_exhaust(group_let_private, group), _exhaust(group_let_local, group))
    rest = seq(_exhaust(MAP_LCL[0], group), normalize(MAP_SEQ), normalize(reduce_seq), private_accumulators)
    out = []
    for w in seq(combine, memory, rest)(v):
        # Shares in registers need constant indices; an item's vectors are read as one wide load only where
        # their lanes' reads are neighbouring statements (codegen.passes.vectorize): both need the unrolling.
        must = any(s.rule in ("groupLetPrivate", "dealRowsVector") for s in w.trace)
        if unroll:
            out.extend(seq(_exhaust(unroll_in_item, inside), limit_unrolled_nests)(w))
        if not (unroll and must):
            out.append(w)
    return dedup(out)


def cooperative_rows(opts) -> "Strategy":  # noqa: F821
    """Every row map of the program (a map whose function reduces its row) with its rows shared by the
    work-items of a group: dealt one element at a time or in vectors (``dealRows``, ``dealRowsVector``),
    after the dot products are vectorized (``vectorizeReduce``) or not, the rows split into chunks over
    work-groups (``splitRows``: a kernel of partial results, summed by a second one) or not, with the
    row-long ``let``\\ s kept (in private or local memory) or recomputed where used (``letInline``), a row
    read several times copied into the items' memory first or not (``letShares``), then lowered by
    ``lower_rows`` (a second kernel over global work-items)."""
    steps = []
    if opts.vectorize:
        steps.append(optional(once(vectorize_reduce)))
    if opts.split_k:
        steps.append(optional(once(split_rows)))
    # Recomputing: only where a let is inlined, and fusing only the maps that compute (not the views).
    computing = lambda path, e: not is_view(e)  # noqa: E731
    steps.append(optional(seq(once(let_inline), normalize(let_inline), normalize(reduce_map_fusion),
                              _exhaust(map_fusion, lambda program: computing))))
    # Rows the normal form took apart (two products zipped, a product and its epilogue) are one row map
    # again, which a work-group deals as one; a let left at the top is a kernel boundary (letGlobal), so
    # the rows of the kernel that computes it are dealt while the rest is lowered over global items.
    steps.append(optional(seq(once(zip_map_fusion), normalize(zip_map_fusion))))
    if opts.partial and opts.let_global:  # a column reduction in another kernel (A^T y after A x) over blocks of rows
        steps.append(optional(once(split_columns)))
    if opts.let_global:
        steps.append(normalize(let_global))
    front = seq(*steps)
    deals = (deal_rows, deal_rows_vector) if opts.vectorize else (deal_rows,)

    def go(v):
        out = []
        for w in front(v):
            for path, e in positions(w.program.body):
                if not (isinstance(e, Call) and type(e.fn) is P.Map) or _enclosing_maps(w.program, path) is None:
                    continue
                for deal in deals:
                    r = try_rule(w.program, deal, path)
                    if r is None:
                        continue
                    dealt = extend(w, r)
                    shared = try_rule(dealt.program, let_shares, path)  # a row read several times: read once
                    for x in [dealt] + ([extend(dealt, shared)] if shared is not None else []):
                        x = lower_other_kernels(x, path)
                        if x is not None:
                            out.extend(lower_rows(x, path, opts.unroll))
        return dedup(out)

    return go
