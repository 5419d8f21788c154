"""The main job (issue 5): the convolution explored end to end on PoCL, with the results store,
resumption after a kill, the frontier, and the command line."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from liftpy.errors import TuningError
from liftpy.explore.conv import explore_layer
from liftpy.ir.kernels import kernel_count
from liftpy.operators.conv import conv_program, layer_inputs, layer_sizes, to_reference_layout
from liftpy.operators.conv import get_layer, layer_names
from liftpy.operators.conv.direct import validate
from liftpy.results.store import Status, Store

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["vgg16:0", "vgg16:2", "vgg16:5", "vgg16:7", "vgg16:10", "vgg16:12", "vgg16:17", "vgg16:19", "vgg16:24", "alexnet:0"]


def conv3x3_variants():
    """``conv_variants(3, 1, 1)``, the variants of every 3 x 3 layer of stride 1 and padding 1, through the run's
    derivation cache (conftest.py): derived once in the run (26 s), not once in each process that asks."""
    from liftpy.explore.conv import ConvOperator
    from liftpy.results.cache import cached_variants

    return cached_variants(ConvOperator.of(get_layer("vgg16:7")))


def test_catalogue_has_the_paper_layers():
    assert set(LAYERS) <= set(layer_names())
    assert get_layer("alexnet:0").spec == "3,227,227,96,11,4,0"


@pytest.mark.slow
def test_four_stage_pipeline_is_derived_and_matches():
    """Some variants are the paper's four kernels (pad, partial convolution, sums, crop); one of them,
    with tiling, vectorization and coalescing, validates against the reference convolution."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.host.kernel import compile_program
    from liftpy.rewrite.explore import features

    layer = get_layer("vgg16:7").reduced(spatial=12, channels=8, kernels=4)
    variants = conv3x3_variants()
    wanted = {"padOpt", "materializeInput", "splitPartialKernels", "tile2D", "vectorizeReduce", "coalesce"}
    four = [v for v in variants if kernel_count(v.program) == 4 and wanted <= features(v)]
    assert four, "no four-kernel variant with every optimisation"
    v = four[0]
    counted = solve(variant_space(v, layer_sizes(layer)))
    assert counted.size.valid > 0
    config = sample(counted, 1, seed=3)[0]
    k = compile_program(v.program, {**layer_sizes(layer), **config}, placements=v.placement_map)
    assert len(k.kernels) == 4
    inputs, exp = layer_inputs(layer, seed=1)
    out = k.run(*inputs).output
    check = validate(to_reference_layout(out, layer), exp)
    assert check.ok, check.message


# vgg16:0 (its reduction padded) and alexnet:0 (11 x 11, stride 4) derive variants of their own, and the first
# vgg16 layer of a run derives the shared ones for the others (145 s on a loaded 2-core machine): slow.
_SLOW_LAYERS = ("vgg16:0", "alexnet:0", "vgg16:2")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_LAYERS else n for n in LAYERS])
@pytest.mark.usefixtures("pools_here")
def test_every_paper_layer_validates_on_pocl(name, tmp_path):
    """Reduced spatial sizes (same kernel, stride and padding); every sampled point must be correct."""
    layer = get_layer(name).reduced(spatial=12 if name != "alexnet:0" else 23, channels=4, kernels=4)
    result = explore_layer(layer, samples=3, db=tmp_path / "r.sqlite", references=False, progress=False, repeat=1, warmup=0, seed=7)
    points = [r for r in result.records if not r.is_reference]
    assert len(points) == 3
    bad = [(r.variant, r.status, r.error) for r in points if r.status is not Status.OK]
    assert not bad, bad
    assert result.frontier



@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_pareto_and_show_commands(tmp_path):
    db = tmp_path / "r.sqlite"
    explore_layer(get_layer("vgg16:12").reduced(spatial=8, channels=4, kernels=4), samples=4, db=db, progress=False, repeat=1, warmup=0)
    png = tmp_path / "front.png"
    args = ["--layer", "vgg16:12", "--reduced", "--spatial", "8", "--channels", "4", "--kernels", "4", "--db", str(db)]
    r = subprocess.run([sys.executable, "-m", "liftpy", "pareto", *args, "--plot", str(png)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "time ms" in r.stdout and "reference:im2col_gemm_numpy" in r.stdout
    assert png.stat().st_size > 10_000
    r = subprocess.run([sys.executable, "-m", "liftpy", "show", "--db", str(db), "--best"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "kernel void" in r.stdout and "def conv(" in r.stdout
    # Without a problem named, pareto shows the one the store holds; a plot's folder is made for it, and a
    # plot that cannot be written is one line of error.
    nested = tmp_path / "plots" / "new" / "front.png"
    rp = subprocess.run([sys.executable, "-m", "liftpy", "pareto", "--db", str(db), "--plot", str(nested)],
                       capture_output=True, text=True, timeout=300)
    assert rp.returncode == 0 and "time ms" in rp.stdout and nested.stat().st_size > 10_000, rp.stderr
    (tmp_path / "a-file").write_text("not a folder")
    rp = subprocess.run([sys.executable, "-m", "liftpy", "pareto", "--db", str(db), "--plot", str(tmp_path / "a-file" / "f.png")],
                       capture_output=True, text=True, timeout=300)
    assert rp.returncode == 2 and "Traceback" not in rp.stderr and "cannot write the plot" in rp.stderr, rp.stderr

    # The Python API reads the store by operator or by problem key; the engine knows no layer names, and a
    # name that is not a stored key is an error naming the keys the store holds, not an empty frontier.
    from liftpy.explore.conv import ConvOperator
    from liftpy.results.queries import best, frontier

    op = ConvOperator.of(get_layer("vgg16:12").reduced(spatial=8, channels=4, kernels=4))
    front, refs, measured = frontier(db, op)
    assert front and refs and len(measured) == 4
    assert frontier(db, op.problem)[2] == measured
    fastest = best(db, op)
    assert fastest == min(measured, key=lambda r: r.time_ms)
    # the same memory in the same unit (decimal MB) in the frontier table and in show --best
    assert f"{fastest.bytes / 1e6:.4g} MB" in r.stdout, r.stdout[:400]
    with pytest.raises(TuningError, match=re.escape(op.problem) + ".*ConvOperator.of"):
        frontier(db, "vgg16:12")
    with pytest.raises(TuningError, match=re.escape(op.problem) + ".*explore it first"):
        frontier(db, ConvOperator.of(get_layer("vgg16:12").reduced(spatial=8, channels=4, kernels=2)))


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_fifty_sampled_configurations_of_layer7_typecheck_compile_and_match(tmp_path):
    """Issue 4: every configuration the sampler hands out is valid by construction: 50 samples of the
    convolution's variants on a reduced VGG-16 layer 7 all type-check (the kernel generator checks every
    requirement first), compile on PoCL and match the reference."""
    layer = get_layer("vgg16:7").reduced(spatial=10, channels=8, kernels=4)
    result = explore_layer(layer, samples=50, db=tmp_path / "r.sqlite", references=False, progress=False,
                           repeat=1, warmup=0, seed=11)
    points = [r for r in result.records if not r.is_reference]
    assert len(points) == 50
    assert len({r.variant for r in points}) > 25  # spread over many variants
    bad = [(r.variant, r.config, r.status, (r.error or "")[:200]) for r in points if r.status is not Status.OK]
    assert not bad, bad


def test_points_are_drawn_again_when_few_variants_are_valid():
    from liftpy.host.profile import resolve_profile
    from liftpy.search import choose_points, select_variants

    layer = get_layer("vgg16:7").reduced(spatial=16, channels=8, kernels=8)
    blocked = select_variants(conv3x3_variants(), ["registerBlock2D"])
    assert blocked and all("registerBlock2D" in {s.rule for s in v.trace} for v in blocked)
    profile = resolve_profile(None, None)
    few = blocked[:2]
    points = choose_points(few, layer_sizes(layer), 40, profile, seed=3)
    keys = {(p.variant_index, tuple(sorted(p.config.items()))) for p in points}
    assert len(keys) == len(points)
    from liftpy.constraints import solve
    from liftpy.constraints.infer import variant_space

    valid = sum(solve(variant_space(v, layer_sizes(layer), profile)).size.valid for v in few)
    # More than the first draw of 4 per variant: the pools are drawn again until the request or the spaces run out.
    assert len(points) == min(40, valid) and len(points) > 8
    assert choose_points(few, layer_sizes(layer), 40, profile, seed=3) == points


def test_unknown_rule_filter_names_the_rules_in_use():
    from liftpy.errors import TuningError
    from liftpy.search import select_variants

    with pytest.raises(TuningError, match="registerBlock2D"):
        select_variants(conv3x3_variants(), ["registerBlock3D"])


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_register_blocked_convolution_matches(tmp_path):
    layer = get_layer("vgg16:7").reduced(spatial=16, channels=8, kernels=8)
    result = explore_layer(layer, samples=6, db=tmp_path / "r.sqlite", progress=False, repeat=1, warmup=0,
                           references=False, rules=("registerBlock2D",))
    points = [r for r in result.records if not r.is_reference]
    assert len(points) == 6 and all(r.status is Status.OK for r in points), [(r.variant, r.error) for r in points]
    assert all(r.variant.startswith("block") for r in points)



@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_show_without_a_program_refuses_a_store_of_several_problems(tmp_path):
    """``show --best`` without a program printed the fastest point of whichever problem had it, while
    ``pareto`` asked which problem; both now show the one problem a store holds and name them otherwise."""
    from liftpy.explore import explore_operator
    from liftpy.explore.operator import library_operator

    db = tmp_path / "two.sqlite"
    for spec, n in (("sum", 16), ("max", 16)):
        explore_operator(library_operator(spec, {"N": n}), samples=1, db=db, progress=False, repeat=1, warmup=0)
    r = subprocess.run([sys.executable, "-m", "liftpy", "show", "--db", str(db), "--best"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and "holds several problems" in r.stderr and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    r = subprocess.run([sys.executable, "-m", "liftpy", "show", "max", "-s", "N=16", "--db", str(db), "--best"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "kernel void" in r.stdout, r.stderr


def test_a_rule_filter_given_as_one_string_is_not_read_letter_by_letter():
    from liftpy.ir.parser import parse_program
    from liftpy.rewrite.explore import explore_all
    from liftpy.search import rule_list, select_variants

    assert rule_list("tile2D, mapGlb") == ("tile2D", "mapGlb") and rule_list(["a|b"]) == ("a|b",)
    program = parse_program((ROOT / "examples" / "programs" / "matmul_highlevel.lift").read_text())
    variants = explore_all(program)[0]
    chosen = select_variants(variants, "tile2DReduce")
    assert chosen and chosen == select_variants(variants, ("tile2DReduce",)) and len(chosen) < len(variants)
