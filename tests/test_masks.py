"""Masks never materialised, a select over a position a comparison (issue 54, item 3).

A Jacobi step that keeps its border with ``select`` over a mask of ones padded with zeros
(``benchmarks/spellings.py``'s ``jacobi_step``): the mask is a view (no buffer, no loop), the select a
condition on the positions (``liftpy.views.conditions``), and inside it the neighbours' clamped reads are
plain reads (``liftpy.codegen.passes.guards``).  The folding and the guards are checked here against the
functions' own semantics on random trees of reads (no device needed); every explored variant of every
spelling against the interpreter on the default device.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.codegen.kernel import generate_pipeline
from liftpy.codegen.passes.guards import guard_clamps, refine
from liftpy.ir.types import Float, Int
from liftpy.ir.userfun import BUILTINS
from liftpy.views import view as V
from liftpy import arith as A
from liftpy.arith import extremum, in_bounds, simplify, substitute
from liftpy.views.conditions import fold_builtin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import spellings  # noqa: E402  (the benchmarked programs themselves)

JACOBI = {"let": spellings.jacobi_let, "nested": spellings.jacobi_nested, "mask_let": spellings.jacobi_mask_let}
SIZES = {"M": 12, "N": 12}


def _variants(name):
    from liftpy.rewrite.explore import explore

    return explore(JACOBI[name]())


def _kernels(v, sizes):
    from liftpy.rewrite.validate import configurations

    s, params = configurations(v, [sizes], 1)[0]
    return [ks for ks, _ in generate_pipeline(v.program, {**s, **params}, placements=v.placement_map)]


@pytest.mark.parametrize("name", list(JACOBI))
def test_the_mask_is_a_comparison_and_the_interior_reads_are_plain(name):
    """Every variant of every spelling: no memory but the grid and the result (the mask is no buffer, no
    private or local array; a tiled variant may stage its tile of the grid, halo included, in local memory:
    ``localStageZipped``; a run of a row loads the grid's cells as vectors into registers: ``splitRuns``), no call of ``select`` (a comparison of the positions chooses), and no clamp
    left (``min``/``max``) where the cells are computed: inside the border every neighbour is in the grid
    (the copy of a tile's halo reads the padded grid, clamped at its edge)."""
    import re

    variants = _variants(name)
    assert len(variants) >= 4
    for v in variants:
        staged = any(s.rule == "localStageZipped" for s in v.trace)
        for ks in _kernels(v, SIZES):
            body = ks.source[ks.source.index("kernel void"):]
            inputs = [b.name for b in ks.plan.buffers if b.role == "input"]
            temps = [b for b in ks.plan.buffers if b.role not in ("input", "output")]
            # (registers a run of a row loads neighbouring cells into, ``splitRuns``: each a vector of the
            # grid or of its tile staged in local memory, no mask)
            loaded = [b for b in temps if b.space == "private" and re.fullmatch(r"v\d+", b.name)]
            grids = "|".join(inputs + [b.name for b in temps if b.space == "local"])
            for b in loaded:
                assert re.search(rf"vstore\d+\(\*\(\((global const|local) float\d+\*\)\(({grids}) \+ [^;]*, 0, {b.name}\);", body), body
            temps = [b for b in temps if b not in loaded]
            assert all(b.space == "local" for b in temps) and (staged or not temps), (ks.plan.buffers, body)
            copies = [ln for ln in body.splitlines() if any(re.match(rf"\s*{b.name}\[", ln) for b in temps)]
            assert len(copies) == len(temps), body  # one store each: the copy of the grid's tile
            assert all(re.search(rf"\b({'|'.join(inputs)})\[", ln) for ln in copies), copies
            computed = "\n".join(ln for ln in body.splitlines() if ln not in copies)
            assert "select_" not in ks.source and "min(" not in computed and "max(" not in computed, body
            assert ">= 0" in body and "?" in body, body


@pytest.mark.parametrize("name", list(JACOBI))
def test_every_variant_of_the_jacobi_spellings_matches_the_interpreter(name):
    from liftpy.rewrite.validate import check_variant

    program = JACOBI[name]()
    g = np.random.default_rng(5).standard_normal((SIZES["M"], SIZES["N"])).astype(np.float32)
    for v in _variants(name):
        result = check_variant(v, program, [SIZES], lambda s: [g], count=1, rtol=1e-5, atol=1e-5)
        assert result.ok, result.summary()


def test_a_select_over_indices_is_a_comparison():
    """``mapIdx`` conditions (a border kept with ``eq(i, 0) | eq(i, N - 1)``, a triangle ``le(i, j)`` made a
    float): no call of a comparison, a logical operator, a conversion or select is left."""
    import liftpy as L
    from liftpy import Array, compile, evaluate, lit
    from liftpy.ir.dsl import eq, le, make_program, or_
    from liftpy.ir.types import size_var

    n = size_var("N")

    def lowered(x):
        def point(i, w):
            return L.select(or_(eq(i, lit(0)), eq(i, lit(n - 1))), w[1], (w[0] + w[1] + w[2]) / 3)

        return L.mapGlb(0, lambda p: point(p[0], p[1]), L.zip(L.iota(n), L.slide(3, 1, L.pad(1, 1, "clamp", x))))

    border = make_program("border", [("x", Array(Float, n))], lowered)
    triangle = make_program("triangle", [("A", Array(Float, n, n))], lambda a: L.mapGlb(1, lambda p: L.mapGlb(
        0, lambda q: L.select(le(p[0], q[0]), q[1], 0.0), L.zip(L.iota(n), p[1])), L.zip(L.iota(n), a)))
    rng = np.random.default_rng(2)
    for prog, x in ((border, rng.standard_normal(16)), (triangle, rng.standard_normal((16, 16)))):
        x = x.astype(np.float32)
        k = compile(prog, {"N": 16})
        body = k.source[k.source.index("kernel void"):]
        for f in ("eq_", "or_", "le_", "select_", "toFloat_"):
            assert f not in k.source, body
        np.testing.assert_allclose(k.run(x).output, evaluate(prog, x), rtol=1e-6)
    assert "min(" not in compile(border, {"N": 16}).source.split("kernel void")[1]  # interior: no clamp


# ------------------------------------------------------------------------------ folding, by its semantics

I = A.var("i")
N_RANGE = 9  # i in [0, 9)


def _value(r, env, mem=None):
    """The value of a read for the loop variables ``env`` (``arith.substitute`` folds C's division and
    remainder of numbers), as C computes it (``?:`` evaluates one branch; a read of ``mem`` outside it fails)."""
    if isinstance(r, V.ConstRead):
        return r.value
    if isinstance(r, V.IndexRead):
        return int(substitute(r.index, env))
    if isinstance(r, V.CondRead):
        c = substitute(r.cond, env)
        assert c in (A.TRUE, A.FALSE), c
        return _value(r.then if c is A.TRUE else r.other, env, mem)
    if isinstance(r, V.FunCall):
        return BUILTINS[r.name].numpy(*[np.asarray(_value(a, env, mem)) for a in r.args])
    if isinstance(r, V.MemRead):
        k = int(substitute(r.index, env))
        assert 0 <= k < len(mem), f"read {r.buffer}[{k}] outside the array"
        return mem[k]
    raise AssertionError(r)


def _cond_on_i(draw):
    a = draw(st.integers(-2, N_RANGE + 1))
    kind = draw(st.sampled_from(["ge", "lt", "eq", "in"]))
    if kind == "in":
        return in_bounds(I - a, draw(st.integers(0, N_RANGE)))
    return A.rel({"ge": ">=", "lt": "<", "eq": "=="}[kind], I - a, 0)


@st.composite
def int_programs(draw, depth=3):
    """A random tree as nested tuples (the program), evaluated two ways by the test below."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.sampled_from(["index", "const", "mask"]))
        if leaf == "index":
            return ("index", draw(st.integers(-3, 3)))
        if leaf == "const":
            return ("const", draw(st.integers(-3, 3)))
        return ("mask", _cond_on_i(draw), draw(st.integers(-1, 2)))
    name = draw(st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "select", "toFloat"]))
    arity = {"not": 1, "select": 3, "toFloat": 1}.get(name, 2)
    return (name,) + tuple(draw(int_programs(depth - 1)) for _ in range(arity))


def _read_of(t, fold: bool):
    """The read of tree ``t``, its built-ins folded (``fold``) or called; (read, scalar type)."""
    kind = t[0]
    if kind == "index":
        return V.IndexRead(I + t[1]), Int
    if kind == "const":
        return V.ConstRead(t[1], Int), Int
    if kind == "mask":
        return V.CondRead(t[1], V.ConstRead(t[2], Int), V.ConstRead(0, Int)), Int
    parts = [_read_of(a, fold) for a in t[1:]]
    args = tuple(p[0] for p in parts)
    if kind == "toFloat":
        if parts[0][1] != Int:
            return parts[0]
        scalar = Float
    elif kind == "select":
        # select(c, x, y) needs one type: the branches made the condition's type by toFloat where they differ
        if len({p[1] for p in parts}) > 1:
            args = tuple(a if s == Float else _to_float(a, fold) for a, (_, s) in zip(args, parts))
            scalar = Float
        else:
            scalar = parts[0][1]
    else:
        if len({p[1] for p in parts}) > 1:
            args = tuple(a if s == Float else _to_float(a, fold) for a, (_, s) in zip(args, parts))
            scalar = Float
        else:
            scalar = parts[0][1]
    folded = fold_builtin(kind, args, scalar) if fold else None
    return (folded if folded is not None else V.FunCall(kind, args)), scalar


def _to_float(r, fold):
    folded = fold_builtin("toFloat", (r,), Float) if fold else None
    return folded if folded is not None else V.FunCall("toFloat", (r,))


@settings(max_examples=300, deadline=None)
@given(int_programs())
def test_folding_keeps_the_value_of_every_builtin(t):
    """Comparisons, ``and``/``or``/``not``, ``select`` and ``toFloat`` over indices, int constants and padded
    masks, folded into conditions, have at every index the value the functions' numpy semantics (what the
    interpreter runs) give for the calls unfolded."""
    folded, _ = _read_of(t, fold=True)
    called, _ = _read_of(t, fold=False)
    for i in range(N_RANGE):
        env = {I: i}
        assert float(_value(folded, env)) == float(_value(called, env)), (i, folded, called)


@st.composite
def guarded_stencils(draw):
    """A conditional read over a random condition on ``i``, its branches sums of clamped, mirrored or
    zero-padded reads of neighbours (what a padded view reads), for an array of ``n`` elements."""
    n = draw(st.integers(3, 10))
    parts = [draw(st.sampled_from(["ge", "lt", "in"])) for _ in range(draw(st.integers(1, 3)))]
    conds = []
    for kind in parts:
        a = draw(st.integers(-1, n))
        conds.append({"ge": A.rel(">=", I - a, 0), "lt": A.rel("<", I - a, 0),
                      "in": in_bounds(I - a, draw(st.integers(1, n)))}[kind])
    cond = A.conj(conds)

    def neighbours(k):
        reads = []
        for off in range(k):
            j = I + draw(st.integers(-2, 2))
            how = draw(st.sampled_from(["clamp", "mirror", "wrap", "zero"]))
            if how == "zero":
                reads.append(V.CondRead(in_bounds(j, n), V.MemRead("g", j, 1), V.ConstRead(0.0, Float)))
            else:
                reads.append(V.MemRead("g", V.boundary_index(how, j, n), 1))
        out = reads[0]
        for r in reads[1:]:
            out = V.FunCall("add", (out, r))
        return out

    if draw(st.booleans()):  # no condition: the clamps alone (guard_clamps makes one)
        return n, neighbours(draw(st.integers(1, 4)))
    return n, V.CondRead(cond, neighbours(draw(st.integers(1, 4))), neighbours(1))


@settings(max_examples=200, deadline=None)
@given(guarded_stencils())
def test_guards_keep_every_value_and_read_inside_the_array(case):
    """What a condition proves, used in its branches (clamps and padding conditions dropped), changes no
    value, and no read of the branch taken leaves the array; nor does a guard made for the clamps."""
    n, r = case
    ranges = {I: (0, n - 1)}
    simplified = V.transform(r, lambda x: x.map_exprs(lambda e: simplify(e, ranges)))
    refined = refine(simplified, ranges, ())
    guarded = refine(guard_clamps(refined, ranges), ranges, ())
    g = np.arange(1, n + 1, dtype=np.float64) * 1.5
    for i in range(n):
        assert _value(refined, {I: i}, g) == _value(r, {I: i}, g)
        assert _value(guarded, {I: i}, g) == _value(r, {I: i}, g)


def test_a_clamp_is_gone_where_the_condition_proves_it_needless():
    j = A.var("j")
    ranges = {I: (0, 15), j: (0, 7)}
    assert extremum(A.Max, [A.ZERO, I], ranges) is I
    assert extremum(A.Min, [A.const(15), I + 1], ranges) is A.minimum((15, I + 1))
    # a split loop's row 8*i + j - 1, inside 8*i + j - 1 >= 0 and 8*i + j - 127 < 0: its clamps go
    row = 8 * I + j - 1
    read = V.CondRead(A.conj((A.rel(">=", row, 0), A.rel("<", 8 * I + j - 127, 0))),
                      V.MemRead("g", A.minimum((127, A.maximum((0, row)))), 1), V.ConstRead(0.0, Float))
    assert refine(read, ranges, ()).then == V.MemRead("g", row, 1)


# ------------------------------------------------------------------------------ stencils' boundaries


@pytest.mark.parametrize("name,sizes", [("jacobi1d", {"N": 16}), ("jacobi2d", {"H": 12, "W": 12}),
                                        ("blur2d", {"H": 10, "W": 12}), ("jacobi3d", {"D": 6, "H": 6, "W": 8})])
@pytest.mark.parametrize("boundary", ["clamp", "mirror", "wrap", 0.0])
def test_a_stencils_interior_reads_plainly_and_every_variant_matches(name, sizes, boundary):
    """The library's stencils with each boundary: the first variant's interior (guarded by the condition
    under which every boundary function keeps its index) reads with no min, max or modulus; every variant
    matches the interpreter on the default device."""
    from liftpy.operators import stencils
    from liftpy.rewrite.explore import explore
    from liftpy.rewrite.validate import check_variant

    program = getattr(stencils, name)(boundary)
    variants = explore(program)
    big = {k: 64 for k in sizes}
    line = next(x for x in _kernels(variants[0], big)[0].source.splitlines() if "out[" in x)
    if boundary != 0.0:  # (a zero boundary reads each neighbour under its own condition, as before)
        interior = line.split(" ? ", 1)[1].split(" : ")[0]
        assert line.count(" ? ") >= 1 and not any(f in interior for f in ("min(", "max(", "%")), line
    g = np.random.default_rng(3).standard_normal(tuple(sizes.values())).astype(np.float32)
    # Every variant runs under the clamp boundary, every third under the others: their index functions
    # differ, the variants' loops do not (PoCL builds are what this test costs; tests/test_boundaries.py
    # samples the same way).
    for v in variants[::1 if boundary == "clamp" else 3]:
        check = check_variant(v, program, [sizes], lambda s: [g], count=1, rtol=1e-5, atol=1e-5)
        assert check.ok, check.summary()
