"""``benchmarks/networks.py`` end to end on the default device at a tiny size: one network explored with one
point per layer, run layer by layer and chained, its JSON record complete; without PyTorch and CUDA the torch
fields are null (with them, numbers)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the benchmark script runs as a process and explores every layer

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "networks.py"
FIELDS = ("network", "liftpy_ms", "liftpy_wall_ms", "torch_graph_ms", "torch_eager_ms", "ratio_vs_graph", "explore_s",
          "peak_bytes")


def _run(*args, timeout=1500):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


def _torch_on_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def test_a_tiny_vgg16_is_measured_and_recorded(tmp_path):
    from liftpy.network.memory import greedy_by_size
    from liftpy.network.models import get_model
    from liftpy.network.run import memory_tensors, network_weights

    out = tmp_path / "n.json"
    size = ("--resolution", "32", "--width", "0.0625", "--classes", "10")
    r = _run("--only", "vgg16", *size, "--samples", "1", "--search", "uniform", "--chain", "3",
             "--db", str(tmp_path / "n.sqlite"), "--json", str(out))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    [rec] = json.loads(out.read_text())
    assert all(k in rec for k in FIELDS) and rec["network"] == "vgg16" and "vgg16" in r.stdout
    assert rec["ok"] is True and rec["error"] is None and rec["chain_error"] == 0.0
    assert rec["liftpy_ms"] > 0 and rec["liftpy_wall_ms"] > 0 and 0 < rec["explore_s"] <= rec["seconds"]
    net = get_model("vgg16", resolution=32, width=0.0625, classes=10)
    assert rec["layers"] == len(net.nodes) and rec["points"] >= 1
    # peak = the arena of the intermediate tensors + the weights + the largest workspace (never below the first two)
    fixed = greedy_by_size(memory_tensors(net)).arena_bytes + sum(w.nbytes for ws in network_weights(net).values() for w in ws)
    assert fixed <= rec["peak_bytes"]
    torch_fields = [rec[k] for k in ("torch_graph_ms", "torch_eager_ms", "ratio_vs_graph")]
    if _torch_on_cuda():
        assert all(v is not None and v > 0 for v in torch_fields) and rec["torch_error"] < 1e-3
    else:
        assert torch_fields == [None, None, None] and "torch fields are null" in r.stdout


def test_an_unknown_network_is_refused():
    r = _run("--only", "alexnet", timeout=300)
    assert r.returncode == 2 and "unknown network(s) alexnet" in r.stderr and "Traceback" not in r.stderr


def test_one_network_per_command_adds_to_the_file(tmp_path):
    """``--json`` names one file for the three networks measured one per device command: a record replaces
    an earlier one of the same network only, and a file that is not a list of records is written anew."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from gpu_common import Results
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = tmp_path / "n.json"
    Results(str(path), replace="network").add({"network": "vgg16", "liftpy_ms": 3.0})
    Results(str(path), replace="network").add({"network": "resnet18", "liftpy_ms": 1.4})
    Results(str(path), replace="network").add({"network": "vgg16", "liftpy_ms": 2.0})
    assert json.loads(path.read_text()) == [{"network": "resnet18", "liftpy_ms": 1.4}, {"network": "vgg16", "liftpy_ms": 2.0}]
    path.write_text("not json")
    Results(str(path), replace="network").add({"network": "mobilenet_v2", "liftpy_ms": 0.7})
    assert json.loads(path.read_text()) == [{"network": "mobilenet_v2", "liftpy_ms": 0.7}]
    Results(str(path)).add({"operator": "add"})  # without ``replace``: the file is this command's records
    assert json.loads(path.read_text()) == [{"operator": "add"}]
    # half.py's records name an operator and a precision: a second command into the file keeps the first's
    key = ("operator", "precision")
    Results(str(path), replace=key).add({"operator": "avgpool2d", "precision": "fp32", "ms": 0.08})
    Results(str(path), replace=key).add({"operator": "jacobi3d", "precision": "fp32", "ms": 0.36})
    Results(str(path), replace=key).add({"operator": "avgpool2d", "precision": "fp16-storage", "ms": 0.04})
    Results(str(path), replace=key).add({"operator": "avgpool2d", "precision": "fp32", "ms": 0.07})
    assert json.loads(path.read_text()) == [
        {"operator": "add"}, {"operator": "jacobi3d", "precision": "fp32", "ms": 0.36},
        {"operator": "avgpool2d", "precision": "fp16-storage", "ms": 0.04},
        {"operator": "avgpool2d", "precision": "fp32", "ms": 0.07}]
