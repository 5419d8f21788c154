"""Constraint inference with device profiles (issues 4 and 6): measured limits prune configurations that
pyopencl's reported limits allow, impossible requests are explained, and ``liftpy space`` prints it all."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from liftpy.constraints import explain, sample, solve
from liftpy.constraints.solver import enumerate_valid
from liftpy.constraints.infer import infer_space, variant_space
from liftpy.host.profile import DeviceProfile, resolve_profile
from liftpy.ir.parser import parse_program

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def _profile_file(tmp_path, doc) -> Path:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({"schema": "liftpy-device-profile/1", **doc}))
    return path


def _variant(program, feature):
    from liftpy.rewrite.explore import explore, features

    return next(v for v in explore(program) if feature in features(v))


def test_measured_registers_remove_configurations_pyopencl_limits_allow(tmp_path):
    from highlevel import matmul

    v = _variant(matmul(), "registerBlock2D")  # each work-item keeps an r1 x r2 block of accumulators
    sizes = dict(M=32, K=8, N=32)
    base = resolve_profile()
    assert base.registers_per_item is None  # pyopencl reports no register limit
    plain = solve(variant_space(v, sizes, base))
    measured = DeviceProfile.load(_profile_file(tmp_path, {"measured": {"registers_per_item": {"value": 16, "unit": "registers"}}}), base)
    assert measured.registers_per_item == 16
    pruned_space = variant_space(v, sizes, measured)
    pruned = solve(pruned_space)
    assert 0 < pruned.size.valid < plain.size.valid
    assert any(c.primitive == "device:registers_per_item" for c in pruned_space.constraints)
    for cfg in sample(pruned, pruned.size.valid, seed=1):
        assert cfg["r0"] * cfg["r1"] * 4 <= 16 * 4  # the accumulator block fits the measured registers


def test_measured_local_memory_limit_removes_configurations(tmp_path):
    from highlevel import stencil

    from liftpy.rewrite.explore import explore, features

    v = next(v for v in explore(stencil()) if {"localStage", "tile2D"} <= features(v))
    sizes = dict(H=34, W=34)
    base = resolve_profile()
    # the tile of t0 x t0 floats: 256 bytes hold t0 = 3, 4 and 6, not 10
    small = DeviceProfile.load(_profile_file(tmp_path, {"measured": {"local_mem_bytes": {"value": 256, "unit": "bytes"}}}), base)
    full, cut = solve(variant_space(v, sizes, base)), solve(variant_space(v, sizes, small))
    assert 0 < cut.size.valid < full.size.valid
    assert all(cfg["t0"] ** 2 * 4 <= 256 for cfg in sample(cut, cut.size.valid))


IMPOSSIBLE = """
def chunks(xs: [float]N) =
  mapWrg(0, fun(r) => mapLcl(0, fun(x) => id(x), r), split(s, asVector(s, xs)))
"""


def test_a_gpus_profile_read_without_its_gpu_describes_a_gpu(tmp_path):
    """A profile document of a GPU read on a machine without it (``--profile h100.json`` on a laptop, the
    code-generation benchmark) keeps the GPU's private memory limit and the model's GPU terms: the document's
    device type, not the library's CPU default."""
    from liftpy.model.analytical import Machine

    doc = {"device": {"platform": "NVIDIA CUDA", "name": "NVIDIA H200", "type": "GPU"}, "reported": {"compute_units": 132}}
    gpu = DeviceProfile.load(_profile_file(tmp_path, doc))
    assert gpu.device_type == "GPU" and gpu.private_item_limit_bytes == 16 * 1024 and gpu.min_parallelism == 132 * 32
    assert Machine.from_profile(gpu).is_gpu
    cpu = DeviceProfile.load(_profile_file(tmp_path, {"device": {"name": "pthread", "type": "CPU"}}))
    assert cpu.device_type == "CPU" and not Machine.from_profile(cpu).is_gpu
    # the GPU's repository profile too, whose warp the quick probe did not measure
    quick = DeviceProfile.load(ROOT / "benchmarks/results/h200-profile-quick.json")
    assert quick.warp_size is None and Machine.from_profile(quick).is_gpu


def test_impossible_request_is_explained(tmp_path):
    program = parse_program(IMPOSSIBLE)
    tiny = DeviceProfile("tiny device", "test", max_work_group_size=1, max_work_item_sizes=(1, 1, 1))
    space = infer_space(program, {"N": 64}, profile=tiny)
    counted = solve(space)
    assert counted.size.valid == 0
    why = explain(space)
    assert why is not None
    text = str(why)
    assert "work-items per group" in text and "vector width" in text


@pytest.mark.slow
def test_space_command_prints_parameters_constraints_order_and_sizes(tmp_path):
    prog = ROOT / "examples" / "programs" / "conv_pipeline.lift"
    r = subprocess.run([sys.executable, "-m", "liftpy", "space", str(prog), "-s", "C=8,H=14,W=14,M=8", "--samples", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for expected in ("Parameters (4)", "Constraints", "[algorithmic]", "[hardware]", "Dependency order", "valid", "uniformly drawn valid configurations"):
        assert expected in out, expected
    bad = tmp_path / "bad.lift"
    bad.write_text(IMPOSSIBLE)
    prof = _profile_file(tmp_path, {"limits": {"max_work_group_size": 1, "max_work_item_sizes": [1, 1, 1]}})
    r = subprocess.run([sys.executable, "-m", "liftpy", "space", str(bad), "-s", "N=64", "--profile", str(prof)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "work-items per group" in r.stdout


FLAT_CHUNKS = """
def flatchunks(xs: [[float]N]N) =
  mapGlb(0, fun(c) => toGlobal(mapSeq(id, reduceSeq(fun(acc, x) => add(acc, x), toPrivate(id(0.0f)), c))),
    split(s, join(xs)))
"""


def test_a_parameter_may_split_lengths_longer_than_any_input_dimension():
    """``split(s, join(xs))`` over an 8 x 8 input splits 64 elements: every divisor of 64 is a valid ``s``,
    not only those up to the largest input dimension (8).  That bound had cut split-K of VGG-16's deep
    layers off at chunks of 256 of their 9·C terms (18 chunks and more), where 4 to 16 are the vendor's."""
    program = parse_program(FLAT_CHUNKS)
    space = infer_space(program, {"N": 8}, params=["s"])
    assert space.parameter("s").hi >= 64
    valid = {c["s"] for c in enumerate_valid(solve(space))}
    assert valid == {1, 2, 4, 8, 16, 32, 64}
