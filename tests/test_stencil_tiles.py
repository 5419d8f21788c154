"""Stencils zipped with other arrays, tiled (liftpy/rewrite/stencil_tiles.py): each rule against the
interpreter on random programs, sizes and inputs; the user spellings of a Jacobi step get tiled and
locally staged variants; every tiled variant compiles on the default device and matches numpy."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.ir import dsl as L
from liftpy.ir.interpreter import evaluate
from liftpy.ir.types import Array, Int
from liftpy.ir.userfun import BUILTINS
from liftpy.rewrite.rule import applications
from liftpy.rewrite.stencil_tiles import STENCIL_RULES, local_stage_rows, local_stage_zipped, tile_sweeps, tile_zip2D

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import spellings as S  # noqa: E402
from rule_checks import RULE_SETTINGS, checker, ints  # noqa: E402

TESTED: set[str] = set()
checked = checker(TESTED)
add, mult = BUILTINS["add"], BUILTINS["mult"]


@st.composite
def zipped_stencils(draw):
    """A 2D map over a zip of one or two stencils' windows (any window, any step, each zipped as slide2D
    gives it or with its transpose in the reader, as the normal form leaves it) and up to two arrays of the
    output's shape, in a random order, with a function reading every component; and its inputs."""
    oh, ow = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    windows = [(draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2)),
                draw(st.booleans())) for _ in range(draw(st.integers(1, 2)))]
    plain = draw(st.integers(2 - len(windows), 2))  # (a zip takes two arrays or more)
    order = draw(st.permutations(range(len(windows) + plain)))
    seed = draw(st.integers(0, 10**6))
    rng = np.random.default_rng(seed)
    params, inputs = [], []
    for i, (n1, n2, s1, s2, _) in enumerate(windows):
        shape = ((oh - 1) * s1 + n1, (ow - 1) * s2 + n2)
        params.append((f"x{i}", Array(Int, *shape)))
        inputs.append(ints(rng, shape))
    for i in range(plain):
        params.append((f"y{i}", Array(Int, oh, ow)))
        inputs.append(ints(rng, (oh, ow)))

    def body(*args):
        operands, readers = [], []
        for (n1, n2, s1, s2, moved), x in zip(windows, args):
            if moved:  # slide2D's map(transpose) moved into the reader (zipViewFusion)
                operands.append(L.slide(n1, s1, L.map(lambda row: L.slide(n2, s2, row), x)))
                readers.append(L.transpose)
            else:
                operands.append(L.slide2D((n1, n2), (s1, s2), x))
                readers.append(lambda c: c)
        operands += list(args[len(windows):])
        readers += [lambda c: c] * plain
        operands, readers = [operands[i] for i in order], [readers[i] for i in order]

        def cell(p):
            total = None
            for k, i in enumerate(order):
                c = L.get(p, k)
                if i < len(windows):
                    n1, n2 = windows[i][:2]
                    term = add(L.at(n2 - 1, L.at(0, c)), mult(L.at(0, L.at(n1 - 1, c)), k + 2))
                else:
                    term = mult(c, k + 3)
                total = term if total is None else add(total, term)
            return total

        return L.map(lambda t: L.map(cell, L.zip(*[r(L.get(t, k)) for k, r in enumerate(readers)])), L.zip(*operands))

    return L.make_program("zs", params, body), inputs, max(oh, ow)


@RULE_SETTINGS
@given(zipped_stencils())
def test_tile_zip2D(case):
    program, inputs, most = case
    checked(tile_zip2D, program, inputs, candidates=list(range(1, most + 1)))


def test_tile_zip2D_leaves_elementwise_maps_and_lone_windows():
    """Nothing to tile in a map over a zip of plain arrays (no windows), and a map over windows alone is
    ``tile2D``'s (its own tiles, its parameter the input tile): tileZip2D takes neither."""
    a = ("a", Array(Int, 4, 4))
    plain = L.make_program("p", [a, ("b", Array(Int, 4, 4))], lambda a, b: L.map(
        lambda t: L.map(lambda p: add(L.get(p, 0), L.get(p, 1)), L.zip(L.get(t, 0), L.get(t, 1))), L.zip(a, b)))
    lone = L.make_program("q", [a], lambda a: L.map2D(lambda w: L.at(0, L.at(0, w)), L.slide2D(3, 1, a)))
    assert applications(plain, [tile_zip2D]) == [] and applications(lone, [tile_zip2D]) == []


@RULE_SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 2), st.booleans(), st.integers(0, 10**6))
def test_local_stage_zipped(groups, per, n, s, first, seed):
    """A work-group's tile with its halo zipped with an aligned tile (what tileZip2D makes, lowered): the
    windowed component staged in local memory, read from there by every item."""
    rng = np.random.default_rng(seed)
    span = (per - 1) * s + n  # the input a group's ``per`` windows cover

    def program(x, y):
        def group(q):
            xi, yi = (0, 1) if first else (1, 0)
            wins = L.slide(n, s, L.get(q, xi))
            pairs = L.zip(wins, L.get(q, yi)) if first else L.zip(L.get(q, yi), wins)
            w, o = (0, 1) if first else (1, 0)
            return L.mapLcl(0, lambda p: add(L.at(0, L.reduceSeq(add, 0, L.get(p, w))), mult(L.get(p, o), 2)), pairs)

        tiles = L.slide(span, per * s, x)
        aligned = L.split(per, y)
        return L.mapWrg(0, group, L.zip(tiles, aligned) if first else L.zip(aligned, tiles))

    xlen = (groups * per - 1) * s + n
    prog = L.make_program("p", [("x", Array(Int, xlen)), ("y", Array(Int, groups * per))], program)
    results = checked(local_stage_zipped, prog, [ints(rng, (xlen,)), ints(rng, (groups * per,))])
    assert len(results) == 1  # the windowed tile only: the aligned one each item reads once stays


@RULE_SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2),
       st.integers(0, 10**6))
def test_local_stage_zipped_2D(g1, g2, per1, per2, n, s, seed):
    """The same over a 2D group (tileZip2D's tiles under mapLcl(1) and mapLcl(0)): the tile with its halo
    copied row by row, by the group's rows of items, then read through the windows."""
    rng = np.random.default_rng(seed)
    span1, span2 = (per1 - 1) * s + n, (per2 - 1) * s + n
    h, w = (g1 * per1 - 1) * s + n, (g2 * per2 - 1) * s + n

    def program(x, y):
        def group(q):
            return L.mapLcl(1, lambda r: L.mapLcl(0, lambda p: add(L.at(0, L.reduceSeq(add, 0, L.join(L.get(p, 0)))),
                                                                    mult(L.get(p, 1), 3)),
                                                  L.zip(L.get(r, 0), L.get(r, 1))),
                            L.zip(L.slide2D(n, s, L.get(q, 0), strict=True), L.get(q, 1)))

        tiles = L.join(L.slide2D((span1, span2), (per1 * s, per2 * s), x, strict=True))
        aligned = L.join(L.slide2D((per1, per2), (per1, per2), y, strict=True))
        return L.mapWrg(0, group, L.zip(tiles, aligned))

    prog = L.make_program("p", [("x", Array(Int, h, w)), ("y", Array(Int, g1 * per1, g2 * per2))], program)
    checked(local_stage_zipped, prog, [ints(rng, (h, w)), ints(rng, (g1 * per1, g2 * per2))])
    ((_, _, staged),) = applications(prog, [local_stage_zipped])
    assert "mapLcl(1," in staged.program.text().split("toLocal(")[1]  # copied by the group's rows of items


@RULE_SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2),
       st.integers(0, 10**6))
def test_local_stage_rows(g1, g2, per1, per2, n, s, seed):
    """tile2D's tiles under a 2D group (mapLcl(1) over rows of windows of the tile): the tile staged,
    copied by the group's rows of items, the windows read from it; a 1D group is localStage's alone."""
    rng = np.random.default_rng(seed)
    span1, span2 = (per1 - 1) * s + n, (per2 - 1) * s + n
    h, w = (g1 * per1 - 1) * s + n, (g2 * per2 - 1) * s + n

    def program(x):
        def group(tile):
            return L.mapLcl(1, lambda r: L.mapLcl(0, lambda win: L.at(0, L.reduceSeq(add, 0, L.join(win))), r),
                            L.slide2D(n, s, tile, strict=True))

        return L.mapWrg(0, group, L.join(L.slide2D((span1, span2), (per1 * s, per2 * s), x, strict=True)))

    prog = L.make_program("p", [("x", Array(Int, h, w))], program)
    checked(local_stage_rows, prog, [ints(rng, (h, w))])
    ((_, _, staged),) = applications(prog, [local_stage_rows])
    assert "mapLcl(1," in staged.program.text().split("toLocal(")[1]
    flat = L.make_program("q", [("x", Array(Int, h, w))], lambda x: L.mapWrg(0, lambda tile: L.mapLcl(
        0, lambda win: L.at(0, L.reduceSeq(add, 0, win)), L.slide(n, s, L.join(tile))),
        L.join(L.slide2D((span1, span2), (per1 * s, per2 * s), x, strict=True))))
    assert applications(flat, [local_stage_rows]) == []


def test_every_stencil_rule_is_tested():
    """Runs after the property tests of this file: every rule of stencil_tiles met one."""
    missing = {r.name for r in STENCIL_RULES} - TESTED
    assert not missing, f"rules without a property test run: {sorted(missing)}"


# ------------------------------------------------------------------------- the user spellings of a Jacobi step


def jacobi_zip2D():
    """Both sweeps as ``map2D(cell, zip2D(windows, mask, g))``, the 2D zip a map of zips (``zip2DFusion``)."""
    def cell(p):
        nb, keep, old = L.get(p, 0), L.get(p, 1), L.get(p, 2)
        new = (L.at(1, L.at(1, nb)) + L.at(1, L.at(0, nb)) + L.at(1, L.at(2, nb)) + L.at(0, L.at(1, nb))
               + L.at(2, L.at(1, nb))) * 0.2
        return BUILTINS["select"](keep, new, old)

    def sweep(g):
        zipped = L.zip(L.slide2D(3, 1, L.pad2D(1, 1, 1, 1, "clamp", g)), S._mask(), g)
        return L.map2D(cell, L.map(lambda t: L.zip(L.get(t, 0), L.get(t, 1), L.get(t, 2)), zipped))

    return L.make_program("jacobi_zip2D", [("g", S.Array(S.Float, S.M, S.N))], lambda g: sweep(sweep(g)))


SPELLINGS = {"let": S.jacobi_let, "nested": S.jacobi_nested, "mask_let": S.jacobi_mask_let, "zip2D": jacobi_zip2D}


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(SPELLINGS)), st.integers(3, 12), st.integers(3, 12), st.data())
def test_every_sweep_tiled_keeps_the_results(name, m, n, data):
    """The normal form, then ``tile_sweeps``: both sweeps tiled, with any tile sizes dividing the grid,
    compute the two sweeps numpy computes."""
    from liftpy.rewrite.explore import Variant
    from liftpy.rewrite.normal import normal_form

    v = normal_form()(Variant(SPELLINGS[name]()))[0]
    (tiled,) = tile_sweeps()(v)
    assert [s.rule for s in tiled.trace].count("tileZip2D") == 2 and len(tiled.params) == 2
    sizes = {str(p): data.draw(st.sampled_from([d for d in range(1, min(m, n) + 1) if m % d == 0 and n % d == 0]))
             for p in tiled.params}
    g = np.random.default_rng(m * 100 + n).standard_normal((m, n)).astype(np.float32)
    got = evaluate(tiled.program, g, sizes=sizes)
    assert np.allclose(got, S.jacobi_reference(g), atol=1e-5), sizes


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_spellings_get_tiled_and_staged_variants(name):
    """Before tileZip2D none of these spellings had a tiled variant (tile2D matches no map over a zip); the
    zip2D spelling reaches the zip's shape through ``zip2DFusion``."""
    from liftpy.rewrite.explore import explore_all

    kept, dropped = explore_all(SPELLINGS[name]())
    assert not dropped
    rules = [{s.rule for s in v.trace} for v in kept]
    assert sum("tileZip2D" in r for r in rules) >= 10
    assert any("localStageZipped" in r for r in rules)


@pytest.mark.slow
def test_every_tiled_jacobi_variant_compiles_and_matches():
    """Every tiled variant of the let spelling on the default device (PoCL here) at 32 x 32, one sampled
    configuration each (tile sizes dividing 32), against numpy."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.host.profile import resolve_profile
    from liftpy.rewrite.explore import explore_all

    kept, _ = explore_all(S.jacobi_let())
    tiled = [v for v in kept if any(s.rule == "tileZip2D" for s in v.trace)]
    sizes = {"M": 32, "N": 32}
    g = np.random.default_rng(3).standard_normal((32, 32)).astype(np.float32)
    want = S.jacobi_reference(g)
    device, profile = get_device(None), resolve_profile(None)
    ran = 0
    for k, v in enumerate(tiled):
        (config,) = sample(solve(variant_space(v, sizes, profile)), 1, seed=k)
        out = CompiledPipeline(v.program, {**sizes, **config}, device, v.placement_map).run(g, repeat=1, warmup=0).output
        assert np.allclose(np.asarray(out).reshape(want.shape), want, atol=1e-5), (config, [str(s) for s in v.trace])
        ran += 1
    assert ran == len(tiled) >= 10


@pytest.mark.slow
def test_library_stencils_staged_by_rows_compile_and_match():
    """jacobi2d and blur2d: their localStageRows variants on the default device against numpy (the tile's rows
    computed one output an item, and in runs of two: ``splitRuns``)."""
    from liftpy.host.device import get_device
    from liftpy.host.kernel import CompiledPipeline
    from liftpy.operators import stencils as O
    from liftpy.rewrite.explore import explore_all

    x = np.random.default_rng(4).standard_normal((48, 40)).astype(np.float32)
    for build, reference in ((O.jacobi2d, O.jacobi2d_reference), (O.blur2d, O.blur2d_reference)):
        kept, _ = explore_all(build())
        staged = {any(s.rule == "splitRuns" for s in v.trace): v for v in kept if any(s.rule == "localStageRows" for s in v.trace)}
        assert set(staged) == {False, True}, build.__name__
        for runs, v in staged.items():
            for t in (4, 10):  # tiles of 2 and 8 outputs: both divide 48 and 40, and a run of two divides both
                params = {"t0": t, **({str(v.params[-1]): 2} if runs else {})}
                out = CompiledPipeline(v.program, {"H": 48, "W": 40, **params}, get_device(None), v.placement_map).run(
                    x, repeat=1, warmup=0).output
                assert np.allclose(np.asarray(out).reshape(x.shape), reference(x), atol=1e-5), (build.__name__, params)
