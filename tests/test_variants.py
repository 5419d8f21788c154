"""Exploration from high-level programs: counts of distinct lowered variants, and every checked variant
compiles on PoCL and matches the interpreter for three configurations (issue 3)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from highlevel import PROGRAMS, SHAPES, inputs  # noqa: E402

from liftpy.constraints import solve  # noqa: E402
from liftpy.constraints.infer import variant_space  # noqa: E402
from liftpy.rewrite.explore import diverse, explore, features  # noqa: E402
from liftpy.rewrite.validate import check_variant  # noqa: E402

MINIMUM = {"conv": 20, "stencil": 10, "matmul": 10}
CHECKED = {"conv": 22, "stencil": 10, "matmul": 10}


class _Explored(dict):
    """Each program's variants, explored the first time a test asks for them (the convolution's take longest)."""

    def __missing__(self, name):
        self[name] = explore(PROGRAMS[name]())
        return self[name]


@pytest.fixture(scope="module")
def explored():
    return _Explored()


# The convolution's cases are slow: exploring its program and checking 22 of its variants.
NAMES = [pytest.param(name, marks=pytest.mark.slow) if name == "conv" else name for name in sorted(PROGRAMS)]


def _feasible(name, variants):
    return [v for v in variants if any(solve(variant_space(v, s)).size.valid for s in SHAPES[name])]


@pytest.mark.parametrize("name", NAMES)
def test_exploration_yields_distinct_lowered_variants(explored, name):
    vs = explored[name]
    assert len({v.key for v in vs}) == len(vs)
    assert all(v.lowered for v in vs)
    assert len(_feasible(name, vs)) >= MINIMUM[name]
    kinds = set().union(*(features(v) for v in vs))
    assert {"mapGlb", "mapWrg", "mapLcl", "unrollReduceSeq"} <= kinds
    if name == "conv":
        assert {"tile2D", "vectorizeReduce", "partialReduce", "coalesce", "letPrivate", "localStage", "placeInImage"} <= kinds
    if name == "stencil":
        assert {"tile2D", "localStage"} <= kinds
    if name == "matmul":
        assert {"registerBlock2D", "localStage", "vectorizeReduce"} <= kinds


@pytest.mark.parametrize("name", NAMES)
def test_variants_compile_and_match_for_three_configurations(explored, name):
    program = PROGRAMS[name]()
    chosen = diverse(_feasible(name, explored[name]), CHECKED[name])
    if name == "matmul":  # the register-tiled and the local-memory variants are always among those checked
        for must in ("registerBlock2D", "localStage"):
            if not any(must in features(v) for v in chosen):
                chosen.append(next(v for v in _feasible(name, explored[name]) if must in features(v)))
    failures = []
    for v in chosen:
        check = check_variant(v, program, SHAPES[name], lambda s: inputs(name, s))
        # three configurations, or all there are (a variant without parameters has one per valid shape)
        available = sum(solve(variant_space(v, s)).size.valid for s in SHAPES[name])
        if not (check.ok and len(check.checks) >= min(3, available)):
            failures.append(check.summary())
    assert not failures, "\n".join(failures)


def test_image_placed_conv_matches_buffer_variant(explored):
    from liftpy.host.kernel import compile_program

    vs = explored["conv"]
    images = [v for v in vs if v.placements and not v.params]
    assert images
    img = images[0]
    buf = next(v for v in vs if not v.placements and v.program == img.program)
    s = dict(C=8, H=7, W=9, M=3)
    args = inputs("conv", s, seed=5)
    k_img = compile_program(img.program, s, placements=img.placement_map)
    k_buf = compile_program(buf.program, s)
    assert "read_imagef" in k_img.source and "image2d_t" in k_img.source
    assert "read_imagef" not in k_buf.source
    np.testing.assert_allclose(k_img.run(*args).output, k_buf.run(*args).output, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_variants_command_prints_variants_with_rules():
    prog = ROOT / "examples" / "programs" / "matmul_highlevel.lift"
    r = subprocess.run([sys.executable, "-m", "liftpy", "variants", str(prog), "-s", "M=16,K=8,N=12", "--max", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "distinct lowered variants" in r.stdout
    assert "rules: mapGlb1 -> mapGlb0" in r.stdout
    assert "valid configurations:" in r.stdout


@pytest.mark.slow
def test_variants_with_sizes_count_within_the_default_devices_limits(tmp_path):
    """An input larger than the device's largest allocation fits no variant: variants -s said 4 valid variants,
    explore found none to run.  PoCL reports limits that follow the host's free memory, so the device's
    allocation limit is set by a profile on top of the default device's."""
    import json

    profile = tmp_path / "small.json"
    profile.write_text(json.dumps({"limits": {"max_alloc_bytes": 2**20, "global_mem_bytes": 2**22}}))
    prog = tmp_path / "neg.lift"
    prog.write_text("def f(x: [float]N) =\n  map(fun(a) => neg(a), x)\n")
    n = 2**20  # four bytes each: four times one allocation
    runs = {flag: subprocess.Popen([sys.executable, "-m", "liftpy", "variants", str(prog), "-s", f"N={n}", *flag],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for flag in (("--profile", str(profile)), ("--no-device",))}
    out = {flag[0]: p.communicate(timeout=300) for flag, p in runs.items()}
    assert all(p.returncode == 0 for p in runs.values()), out
    assert out["--profile"][0].startswith("f: 0 distinct lowered variants") and "--no-device" in out["--profile"][0], out
    # (the elementwise map: 4 mappings, its float-vector and strided forms 6 more)
    assert out["--no-device"][0].startswith("f: 10 distinct lowered variants"), out
