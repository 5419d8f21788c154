"""The map levels as declared in ``liftpy/ir/levels.py``, and the parts of the compiler that read them: the
nesting rules that the emitter and the lowering rules share, the launch decision, the constraint
extents, and the work mappings named over levels."""

import itertools

import pytest
import sympy

import liftpy as L
from liftpy import Array, CodegenError, Float, make_program
from liftpy.codegen.kernel import DeviceLimits, Launch, decide_launch, generate_kernel
from liftpy.codegen.stmt import Block, Loop
from liftpy.constraints.infer import _total_items
from liftpy.constraints.resources import analyze
from liftpy.ir import primitives as P
from liftpy.ir.levels import PARALLEL_LEVELS, Level, Part, Scheme
from liftpy.rewrite.lowering import MAP_TO
from liftpy.rewrite.mappings import group_mapping, mapping_policies
from liftpy.rewrite.rule import try_rule

N = L.sizes("N")[0]


def test_each_level_has_its_map_class_and_rules():
    for level in Level:
        cls = P.map_class(level)
        assert cls.level is level and cls.name == level.primitive_name
    assert [r.name for r in MAP_TO[Level.LCL]] == ["mapLcl0", "mapLcl1", "mapLcl2"]
    assert MAP_TO[Level.SEQ].name == "mapSeq"
    assert Scheme.GROUP.levels == (Level.WRG, Level.LCL) and Scheme.GLOBAL.levels == (Level.GLB,)
    assert not Level.SEQ.parallel and Level("lcl") is Level.LCL and Level.LCL.size_key(1) == ("lcl", 1)


@pytest.mark.parametrize("level, dim, enclosing, words", [
    (Level.LCL, 0, {}, "mapLcl(0) must be nested inside a mapWrg"),
    (Level.LCL, 0, {Level.GLB: {0}}, "a kernel uses either global or work-group mapping"),
    (Level.GLB, 1, {Level.WRG: {0}}, "mapGlb(1) inside mapWrg"),
    (Level.WRG, 1, {Level.WRG: {0}, Level.LCL: {0}}, "mapWrg(1) inside mapLcl"),
    (Level.LCL, 0, {Level.WRG: {0}, Level.LCL: {0}}, "mapLcl(0) nested inside another mapLcl(0)"),
    (Level.GLB, 0, {Level.GLB: {0}}, "mapGlb(0) nested inside another mapGlb(0)"),
])
def test_nesting_errors(level, dim, enclosing, words):
    assert words in level.nesting_error(dim, enclosing)


@pytest.mark.parametrize("level, dim, enclosing", [
    (Level.LCL, 1, {Level.WRG: {0}, Level.LCL: {0}}),
    (Level.WRG, 1, {Level.WRG: {0}}),
    (Level.GLB, 2, {Level.GLB: {0, 1}}),
    (Level.SEQ, 0, {Level.WRG: {0}, Level.LCL: {0}}),
])
def test_nestings_allowed(level, dim, enclosing):
    assert level.nesting_error(dim, enclosing) is None


def _nest():
    return make_program("nest", [("a", Array(Float, N, 4))], lambda a: L.map(lambda r: L.map(L.id, r), a))


@pytest.mark.parametrize("outer, inner", list(itertools.product(PARALLEL_LEVELS, repeat=2)))
def test_lowering_and_the_emitter_agree_on_nesting(outer, inner):
    """Lowering a map nest level by level succeeds exactly where the level's nesting rule allows it, and
    every nest it lowers compiles."""
    prog = _nest()
    top = try_rule(prog, MAP_TO[outer][1], ())
    assert (top is not None) == (outer.nesting_error(1, {}) is None)
    if top is None:
        return
    inner_path = (("fn", "f"),)
    for d in (0, 1):
        r = try_rule(top.program, MAP_TO[inner][d], inner_path)
        allowed = inner.nesting_error(d, {outer: {1}}) is None
        assert (r is not None) == allowed, (outer, inner, d)
        if r is not None:
            source = generate_kernel(r.program, {"N": 8}).source
            assert inner.id_fn in source and outer.id_fn in source
        else:
            # the nest the rule refused, written directly: the emitter refuses it too
            build_outer, build_inner = (getattr(L, level.primitive_name) for level in (outer, inner))
            forced = make_program("forced", [("a", Array(Float, N, 4))],
                                  lambda a: build_outer(1, lambda r: build_inner(d, L.id, r), a))
            with pytest.raises(CodegenError):
                generate_kernel(forced, {"N": 8})


def _loop(level, dim, extent):
    return Loop(sympy.Symbol(f"x{dim}"), extent, level, dim, Block(()))


def test_launch_global_scheme():
    launch, sizes = decide_launch([_loop(Level.GLB, 0, 100), _loop(Level.GLB, 1, 7), _loop(Level.GLB, 0, 120)],
                                  DeviceLimits(), None)
    assert launch == Launch((120, 7), None) and sizes == {("glb", 0): 120, ("glb", 1): 7}


def test_launch_group_scheme_fits_the_device():
    limits = DeviceLimits(max_work_group_size=64, max_work_item_sizes=(64, 64, 64))
    launch, sizes = decide_launch([_loop(Level.WRG, 0, 10), _loop(Level.LCL, 0, 32), _loop(Level.LCL, 1, 8)], limits, None)
    # 32 x 8 items exceed the 64 of a group: the longer dimension halved until they fit
    assert launch.local_size == (8, 8) and launch.global_size == (80, 8)
    assert sizes == {("wrg", 0): 10, ("lcl", 0): 8, ("wrg", 1): 1, ("lcl", 1): 8}


def test_launch_override_and_mixed_schemes():
    _, sizes = decide_launch([_loop(Level.WRG, 0, 4), _loop(Level.LCL, 0, 8)], DeviceLimits(), Launch((64,), (16,)))
    assert sizes == {("glb", 0): 64, ("lcl", 0): 16, ("wrg", 0): 4}
    with pytest.raises(CodegenError, match="either mapGlb or mapWrg"):
        decide_launch([_loop(Level.GLB, 0, 4), _loop(Level.LCL, 0, 8)], DeviceLimits(), None)


def test_extents_by_level_and_the_items_launched():
    groups = make_program("g", [("a", Array(Float, N, 4))], lambda a: L.mapWrg(0, lambda r: L.mapLcl(0, L.id, r), a))
    res = analyze(groups)
    assert res.extent(Level.WRG, 0) == N and res.extent(Level.LCL, 0) == 4 and res.extent(Level.GLB, 0) is None
    assert _total_items(res) == 4 * N
    assert {level.part for level in PARALLEL_LEVELS} == set(Part)


def test_mapping_policies_are_named_over_levels():
    names = [[r.name for r in m.rules(3)] for m in mapping_policies(3)]
    assert names == [["mapGlb2", "mapGlb1", "mapGlb0"], ["mapGlb1", "mapGlb0", "mapGlb2"], ["mapGlb0"],
                     ["mapWrg0", "mapLcl0"], ["mapWrg0", "mapLcl1", "mapLcl0"]]
    # a kernel with fewer maps than the mapping asks for gets a global mapping over the maps it has
    assert [r.name for r in group_mapping(2, 2).rules(3)] == ["mapGlb2", "mapGlb1", "mapGlb0"]
    assert [r.name for r in group_mapping(2, 2).rules(1)] == ["mapGlb0"]
