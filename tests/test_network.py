"""Networks: the arena planner (no two live tensors share bytes; between the live-bytes lower bound and one
buffer each), the three models' shapes, and a small network run end to end on PoCL with the best stored
implementation of each layer, validated against numpy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.errors import InputError
from liftpy.network.graph import Builder
from liftpy.network.memory import Tensor, check, greedy_by_size, lower_bound, naive
from liftpy.network.models import get_model
from liftpy.search import UniformSearch


@st.composite
def tensors(draw):
    n = draw(st.integers(1, 12))
    out = []
    for i in range(n):
        first = draw(st.integers(0, 10))
        out.append(Tensor(f"t{i}", draw(st.integers(1, 1000)), first, first + draw(st.integers(0, 5))))
    return out


@settings(max_examples=200, deadline=None)
@given(tensors())
def test_arena_plan_is_valid_and_between_bounds(ts):
    plan = greedy_by_size(ts)
    check(ts, plan)
    assert lower_bound(ts) <= plan.arena_bytes <= naive(ts)


def test_a_chain_reuses_memory():
    # a -> b -> c -> d, each read only by the next: two buffers' worth at a time
    ts = [Tensor("a", 100, 0, 1), Tensor("b", 100, 1, 2), Tensor("c", 100, 2, 3), Tensor("d", 100, 3, 4)]
    plan = greedy_by_size(ts)
    assert plan.arena_bytes == 200 and naive(ts) == 400
    assert plan.offset("a") == plan.offset("c")


def test_check_catches_an_overlap():
    from liftpy.network.memory import Plan

    ts = [Tensor("a", 100, 0, 2), Tensor("b", 100, 1, 3)]
    with pytest.raises(AssertionError, match="overlap"):
        check(ts, Plan((("a", 0), ("b", 50)), 150))


@pytest.mark.parametrize("name,layers,adds,out", [("vgg16", 21, 0, (1, 1000)), ("resnet18", 31, 8, (1, 1000)),
                                                   ("mobilenet_v2", 64, 10, (1, 1000))])
def test_models_have_their_shapes(name, layers, adds, out):
    net = get_model(name, fuse=False)
    assert len(net.nodes) == layers and net.output.shape == out
    assert sum(n.op.startswith("add") for n in net.nodes) == adds
    fused = get_model(name)  # every residual add fused into the convolution it adds to
    assert len(fused.nodes) == layers - adds and fused.output.shape == out
    assert sum("residual=1" in n.op for n in fused.nodes) == adds
    reduced = get_model(name, reduced=True)
    assert reduced.input_shape == (32, 32, 3) and reduced.output.shape == (1, 10)
    if name == "mobilenet_v2":
        assert any(n.name.endswith("dwconv") for n in net.nodes)


def test_a_residual_add_fuses_into_the_convolution_it_adds_to():
    """The fused convolution reads the shortcut as its second activation, keeps the add's ReLU, takes the
    add's place (its shortcut, a 1x1 convolution, is computed after it) and the add's readers read it; a
    convolution read twice, or with an activation of its own, is left alone."""
    from liftpy.network.graph import Builder, fuse_residuals

    b = Builder("t", 8, 8, 4)
    x = b.conv("input", 8, relu=1)
    y = b.conv(x, 8, relu=0)
    s = b.conv(x, 8, k=1, pad=0, relu=0)
    z = b.add(y, s, relu=1)
    act = b.conv(z, 8, relu=1)
    w = b.add(act, z)  # the convolution has a ReLU of its own: not fused
    twice = b.conv(w, 8, relu=0)
    v = b.add(twice, w)  # the convolution is read by the next add too: not fused
    b.fc(b.add(v, twice), 10)
    net = b.build()
    fused = fuse_residuals(net)
    names = [n.name for n in fused.nodes]
    assert names == ["00_conv", "02_conv", "01_conv", "04_conv", "05_add", "06_conv", "07_add", "08_add", "09_fc"]
    f = fused.nodes[2]
    assert f.op == "conv2d:k=3,stride=1,pad=1,groups=1,relu=1,residual=1" and f.inputs == ("00_conv", "02_conv")
    assert fused.nodes[3].inputs == ("01_conv",) and fused.nodes[4].inputs == ("04_conv", "01_conv")
    assert fuse_residuals(fused) == fused and fuse_residuals(get_model("vgg16")) == get_model("vgg16")


def test_layers_doing_most_of_the_arithmetic_get_more_points():
    """Points per layer kind scale with its share of the network's arithmetic (every layer of the kind
    counted), between the asked number and ``HEAVY_SAMPLES`` times it: VGG-16's poolings get 8, its heaviest
    convolutions (a kind used twice, each 3.7 GFLOP) the most."""
    from liftpy.explore.operator import library_operator
    from liftpy.network.run import HEAVY_SAMPLES, layer_samples

    net = get_model("vgg16")
    ops = {n.key: library_operator(n.op, n.size_map) for n in net.nodes}
    points = layer_samples(net, ops, 8)
    assert set(points) == set(ops) and all(8 <= p <= 8 * HEAVY_SAMPLES for p in points.values())
    by_name = {n.name: points[n.key] for n in net.nodes}
    assert by_name["02_maxpool"] == 8 and by_name["20_fc"] == 8 and by_name["07_conv"] == 8 * HEAVY_SAMPLES
    assert by_name["04_conv"] > by_name["00_conv"]


@pytest.mark.slow
def test_unknown_network_and_too_small_input_are_refused():
    with pytest.raises(InputError, match="choose one of vgg16, resnet18, mobilenet_v2"):
        get_model("alexnet")
    with pytest.raises(InputError, match="use a larger input"):
        get_model("vgg16", resolution=16)
    r = subprocess.run([sys.executable, "-m", "liftpy", "network", "alexnet"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "choose one of" in r.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_small_network_runs_end_to_end(tmp_path):
    from liftpy.network.run import format_run, run_network

    b = Builder("tiny", 8, 8, 3)
    x = b.conv("input", 4)
    y = b.conv(x, 4, relu=0)
    x = b.add(y, x, relu=1)
    x = b.maxpool(x, k=3, stride=2, pad=1)
    x = b.conv(x, 8, k=3, stride=1, groups=4, relu=6)
    x = b.global_avgpool(x)
    b.fc(x, 5, relu=0)
    net = b.build()
    run = run_network(net, db=tmp_path / "r.sqlite", samples=1, search=UniformSearch, progress=False, chain_repeat=2)
    assert run.ok, format_run(run)
    # The chained pass runs the same kernels on the same inputs, on the device: the same output exactly.
    assert run.chain_error == 0.0 and np.array_equal(run.chained.output, run.output)
    assert run.chained.launches >= len(net.nodes) and len(run.chained.walls_ms) == 2 and run.chained.wall_ms > 0
    assert run.output.shape == (1, 5) and all(layer.ok for layer in run.layers)
    assert run.lower_bound_bytes <= run.arena_bytes < run.tensors_naive_bytes
    assert run.peak_bytes <= run.naive_bytes and run.frontier
    text = format_run(run)
    assert f"matches {run.validated_against}" in text and "one arena" in text and "chained on the device" in text
    from liftpy.network import torch_ref

    assert run.validated_against == ("pytorch" if torch_ref.available() else "numpy")
    again = run_network(net, db=tmp_path / "r.sqlite", samples=1, search=UniformSearch, progress=False)
    assert again.explored == 0  # every layer's best comes from the store


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "vgg16"])
def test_pytorch_forward_agrees_with_the_numpy_references(name):
    """The two references of a network (PyTorch's layers, liftpy's numpy ones) agree: layouts, padding,
    dilation, groups, ReLU6 and residuals are converted right."""
    pytest.importorskip("torch")
    import numpy as np

    from liftpy.explore.operator import input_shapes, library_operator
    from liftpy.network import torch_ref
    from liftpy.network.run import _weights

    net = get_model(name, reduced=True)
    image = np.random.default_rng(0).standard_normal(net.input_shape).astype(np.float32)
    values, weights = {"input": image}, {}
    for k, node in enumerate(net.nodes):
        op = library_operator(node.op, node.size_map)
        weights[node.name] = _weights(node, op, k, 0)
        acts = [values[x].reshape(shape) for x, shape in zip(node.inputs, input_shapes(op.prog, op.sizes()))]
        values[node.name] = np.asarray(op.expected([*acts, *weights[node.name]])).reshape(node.shape)
    theirs = torch_ref.forward(net, image, weights)
    ours = values[net.output.name]
    assert np.allclose(ours, theirs, rtol=1e-4, atol=1e-4 * float(np.abs(theirs).max()))


@pytest.mark.slow
@pytest.mark.usefixtures("pools_here")
def test_a_budget_spent_before_any_point_still_gives_every_layer_one(tmp_path):
    """A budget shorter than deriving a layer's variants measured nothing, and the network had no implementation
    of that layer; each such layer gets one point beyond the budget."""
    from liftpy.network.run import format_run, run_network

    b = Builder("tiny", 8, 8, 3)
    x = b.conv("input", 4)
    x = b.global_avgpool(x)
    b.fc(x, 5, relu=0)
    run = run_network(b.build(), db=tmp_path / "r.sqlite", samples=2, search=UniformSearch, progress=False, budget_s=1e-3)
    assert run.ok, format_run(run)
    assert run.explored == len(run.layers)  # one point each: the budget stopped the rest
    # A time for the whole network spent before it starts: every layer still gets its least share of time
    # (``LEAST_LAYER_S``), in which these tiny layers reach at least their first point.
    timed = run_network(b.build(), db=tmp_path / "t.sqlite", samples=2, search=UniformSearch, progress=False, time_s=1e-3)
    assert timed.ok and timed.explored >= len(timed.layers)


def test_a_time_for_the_whole_network_is_shared_out_as_the_layers_go():
    """``--time``: each layer gets the time left in proportion to the points it asks for among the layers
    still to explore, so time a layer does not use goes to those after it, and never less than a layer needs
    to reach its first point."""
    from liftpy.network.run import LEAST_LAYER_S, TIMED_HEAVY_SAMPLES, layer_budget, layer_samples

    assert layer_budget(170, 0, 16, 160) == pytest.approx(17.0)
    assert layer_budget(170, 100, 16, 32) == pytest.approx(35.0)  # half of what is left: half the points left
    assert layer_budget(170, 169, 8, 8) == LEAST_LAYER_S and layer_budget(170, 200, 8, 8) == LEAST_LAYER_S
    # Following the budgets layer by layer, a network whose layers use all they are given ends on time.
    asks, elapsed = [8, 24, 8, 16, 24], 0.0
    for k, p in enumerate(asks):
        elapsed += layer_budget(170, elapsed, p, sum(asks[k:]))
    assert elapsed == pytest.approx(170)
    from liftpy.explore.operator import library_operator

    net = get_model("vgg16")
    ops = {n.key: library_operator(n.op, n.size_map) for n in net.nodes}
    timed = layer_samples(net, ops, 8, TIMED_HEAVY_SAMPLES)
    assert max(timed.values()) == 8 * TIMED_HEAVY_SAMPLES > max(layer_samples(net, ops, 8).values())


def test_network_time_must_be_positive():
    from conftest import liftpy_here

    code, _, err = liftpy_here(["network", "resnet18", "--time", "0"])
    assert code == 2 and "--time" in err and "Traceback" not in err


def test_network_says_which_adds_it_fused(tmp_path):
    """The first line names the fused residual adds and how to keep them (no device here: it stops after)."""
    from conftest import liftpy_here

    db = str(tmp_path / "r.sqlite")
    code, out, err = liftpy_here(["network", "resnet18", "--reduced", "--device", "99", "--db", db])
    assert code == 2 and "no OpenCL device 99" in err
    assert out.startswith("resnet18: 23 layers (8 residual adds fused into their convolutions; --unfused keeps them)")
    code, out, _ = liftpy_here(["network", "resnet18", "--reduced", "--unfused", "--device", "99", "--db", db])
    assert code == 2 and out.startswith("resnet18: 31 layers, ")
