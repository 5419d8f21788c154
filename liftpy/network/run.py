"""Running a network: every layer with the best stored implementation of its problem (exploring the
problems the store lacks), chained on the device, validated layer by layer against the numpy references
and end to end against PyTorch (the numpy chain where PyTorch is not installed), with its intermediate tensors planned into one arena and a time/peak-memory frontier
built from the layers' frontiers.

Weights are deterministic random numbers scaled as He initialisation does (so activations stay in range
through twenty layers); the input image is standard normal.  A layer's *workspace* is what its chosen
implementation allocates beyond its inputs and output (partial sums, a padded copy), live only while it
runs.  Peak memory = the arena of intermediate tensors + the weights + the largest workspace; naive = every
tensor and every workspace in its own buffer.  The network frontier: for each workspace cap, every layer
takes its fastest measured implementation within the cap (exact for this memory model, where the
workspaces never overlap in time).
"""

from __future__ import annotations

import functools
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import LiftError
from ..explore import explore_operator
from ..explore.devices import SharedWorkers
from ..explore.operator import input_shapes, library_operator, random_inputs
from ..results.precision import layer_check, network_tolerance
from ..host.device import get_device
from ..host.kernel import CompiledPipeline
from ..host.timing import device_timing
from ..results.cache import cached_variants
from ..results.pareto import format_table
from ..search import ModelSearch, Strategy
from ..search import find_variant
from . import torch_ref
from .chain import ChainedRun, chained_run
from .graph import Network, Node
from .memory import Tensor, check, greedy_by_size, lower_bound, naive


@dataclass(frozen=True)
class LayerRun:
    node: Node
    variant: str
    config: dict
    time_ms: float  # this run on the chained data, timed as the exploration times a point (``liftpy.host.timing``)
    explored_ms: float  # the stored measurement of the chosen implementation
    workspace_bytes: int
    max_error: float
    ok: bool


@dataclass(frozen=True)
class NetworkRun:
    network: Network
    device: str
    layers: tuple[LayerRun, ...]
    output: np.ndarray
    expected: np.ndarray
    end_to_end_error: float  # max |liftpy - numpy| over the final output, relative to its rms
    ok: bool
    time_ms: float
    weights_bytes: int
    arena_bytes: int
    naive_bytes: int
    tensors_naive_bytes: int  # the intermediate tensors alone, one buffer each (against arena_bytes)
    lower_bound_bytes: int
    peak_bytes: int
    frontier: tuple[tuple[float, int], ...] = field(default=())  # (time ms, peak bytes)
    explored: int = 0
    seconds: float = 0.0
    validated_against: str = "numpy"  # or "pytorch"
    explore_seconds: float = 0.0  # finding every layer's best implementation (exploring the ones the store lacks)
    chained: ChainedRun | None = None  # one forward pass chained on the device (``chain``), when asked for
    chain_error: float | None = None  # max |chained - layer by layer| over the output, relative to its rms


def _weights(node: Node, op, k: int, seed: int) -> list[np.ndarray]:
    """The operator's inputs after its activations: He-scaled weights, small biases."""
    arrays = random_inputs(op.prog, op.sizes(), seed=seed + 7919 * k)[len(node.inputs):]
    out = []
    for a in arrays:
        if a.ndim == 1:
            out.append((0.01 * a).astype(np.float32))
        else:
            fan_in = math.prod(a.shape[1:])
            out.append((a * math.sqrt(2.0 / fan_in)).astype(np.float32))
    return out


def network_weights(net: Network, seed: int = 0) -> dict[str, list[np.ndarray]]:
    """Every layer's weights as ``run_network`` makes them for ``seed`` (deterministic): what another framework
    needs to compute the same network."""
    return {node.name: _weights(node, library_operator(node.op, node.size_map), k, seed) for k, node in enumerate(net.nodes)}


def network_image(net: Network, seed: int = 0) -> np.ndarray:
    """The input image ``run_network`` feeds the network for ``seed``: standard normal, ``[H][W][C]``."""
    return np.random.default_rng(seed).standard_normal(net.input_shape).astype(np.float32)


def memory_tensors(net: Network) -> list[Tensor]:
    last = {"input": 0}
    for i, n in enumerate(net.nodes):
        for x in n.inputs:
            last[x] = i
    steps = len(net.nodes)
    out = [Tensor("input", 4 * math.prod(net.input_shape), -1, last["input"])]
    for i, n in enumerate(net.nodes):
        out.append(Tensor(n.name, 4 * math.prod(n.shape), i, last.get(n.name, steps)))  # the output lives on
    return out


def run_network(net: Network, db="results.sqlite", samples: int = 8, search: type[Strategy] = ModelSearch, jobs: int | None = None,
                device=None, seed: int = 0, repeat: int = 3, progress: bool = True, stream=None,
                budget_s: float | None = None, chain_repeat: int = 0, precision: str = "fp32",
                time_s: float | None = None) -> NetworkRun:
    """``samples``: points per distinct layer, more for the layers doing most of the arithmetic
    (``layer_samples``); ``budget_s``: seconds of search per distinct layer (``explore_operator``'s); ``time_s``:
    seconds for the whole exploration, shared out between the layers still to explore (``layer_budget``), the
    layers doing most of the arithmetic then asking for up to ``TIMED_HEAVY_SAMPLES`` times the points; ``chain_repeat``: with more
    than 0, also time that many forward passes chained on the device (``chain.chained_run``); ``precision``:
    every layer's (``operators.precision``), each checked with its tolerance and the network end to end with
    ``results.precision.network_tolerance``."""
    stream = stream or sys.stdout
    t0 = time.time()
    dev = get_device(device)
    # 1. The best implementation of every distinct problem (explored if the store lacks it), the device's
    # workers started once for all of them.
    problems: dict = {}
    explored = 0
    with SharedWorkers(dev.index, jobs) as workers:
        ops = {node.key: library_operator(node.op, node.size_map, precision) for node in net.nodes}
        workers.derive(ops.values())
        workers.profile()  # (a GPU's rates for the cost model, measured once: not in the first layer's time)
        points = layer_samples(net, ops, samples, TIMED_HEAVY_SAMPLES if time_s is not None else HEAVY_SAMPLES)
        for node in net.nodes:
            if node.key in problems:
                continue
            op, started = ops[node.key], time.time()
            explore = functools.partial(explore_operator, op, db=db, search=search, device=dev.index, references=False,
                                        progress=False, seed=seed, shared=workers, save_batch=False)
            budget = budget_s
            if time_s is not None:
                left = sum(p for k, p in points.items() if k not in problems)  # (this layer's among them)
                share = layer_budget(time_s, started - t0, points[node.key], left)
                budget = share if budget is None else min(budget, share)
            ex = explore(samples=points[node.key], budget_s=budget)
            if ex.best is None and ex.over_budget:
                # The budget ran out before any point of this layer ran well (deriving and screening a
                # convolution's variants can take longer than a short budget): a network needs every layer, so
                # one point more.
                explored += ex.ran
                ex = explore(samples=len([r for r in ex.records if r.status.finished]) + 1)
            explored += ex.ran
            if ex.best is None:
                raise LiftError(f"{net.name}: no implementation of layer {node.name} ({node.op} at {node.size_map}) ran "
                                f"correctly; statuses: {sorted({r.status.value for r in ex.records})}")
            measured = [r for r in ex.records if r.measured and not r.is_reference]
            problems[node.key] = (op, ex.best, measured)
            if progress:
                # (the seconds to the first points chosen: deriving, the spaces, what other layers' points say)
                first = f", first points after {ex.first_proposal_s:.1f} s" if ex.first_proposal_s is not None else ""
                print(f"  {node.name:12s} {node.op:52s} best {ex.best.time_ms:.4g} ms of {len(measured)} measured "
                      f"({time.time() - started:.1f} s{first})", file=stream, flush=True)
    explore_seconds = time.time() - t0
    # 2. The network on the device, layer by layer, each checked against its reference on the same inputs.
    image = network_image(net, seed)
    with_torch = torch_ref.available()
    values = {"input": image}
    expected = {"input": image}
    compiled: dict = {}
    layers = []
    weights_bytes = 0
    all_weights: dict[str, list] = {}
    io_bytes: dict = {}  # problem -> bytes of its inputs, weights and output (a layer's workspace is the rest)
    for k, node in enumerate(net.nodes):
        op, best, _ = problems[node.key]
        weights = all_weights[node.name] = _weights(node, op, k, seed)
        weights_bytes += sum(w.nbytes for w in weights)
        shapes = input_shapes(op.prog, op.sizes())[:len(node.inputs)]
        acts = [values[x].reshape(s) for x, s in zip(node.inputs, shapes)]
        if node.key not in compiled:
            compiled[node.key] = _compiled_best(op, best, node, dev)
        rule = device_timing(dev.info.type, repeat)  # as the exploration timed the stored best
        result = compiled[node.key].run(*acts, *weights, repeat=rule.runs, warmup=1, statistic=rule.statistic,
                                        budget_ms=rule.budget_ms)
        out = np.asarray(result.output, dtype=np.float32).reshape(node.shape)
        verdict = layer_check(op, best, out, [*acts, *weights])
        values[node.name] = out
        if not with_torch:  # the numpy chain is the end-to-end reference only where PyTorch is missing
            expected[node.name] = np.asarray(op.expected([*(expected[x].reshape(s) for x, s in zip(node.inputs, shapes)),
                                                          *weights]), dtype=np.float32).reshape(node.shape)
        io = io_bytes[node.key] = sum(a.nbytes for a in acts) + sum(w.nbytes for w in weights) + out.nbytes
        layers.append(LayerRun(node, best.variant, dict(best.config), float(result.time_ms), float(best.time_ms),
                               max(0, int(best.bytes or 0) - io), float(verdict.max_abs_error), verdict.ok))
    # End to end against PyTorch where it is installed (an implementation independent of liftpy's numpy
    # references), else against the chain of numpy references.
    final = values[net.output.name]
    if with_torch:
        want, validated_against = torch_ref.forward(net, image, all_weights).astype(np.float32), "pytorch"
    else:
        want, validated_against = expected[net.output.name], "numpy"
    rms = float(np.sqrt(np.mean(want.astype(np.float64) ** 2))) or 1.0
    e2e = float(np.max(np.abs(final.astype(np.float64) - want))) / rms
    chained = chain_error = None
    if chain_repeat > 0:
        chained = chained_run(net, compiled, all_weights, image, dev, repeat=chain_repeat)
        chain_error = float(np.max(np.abs(chained.output.astype(np.float64) - final))) / rms
    # 3. Memory: the arena of intermediate tensors, against one buffer each.
    tensors = memory_tensors(net)
    plan = greedy_by_size(tensors)
    check(tensors, plan)
    workspaces = [l.workspace_bytes for l in layers]
    peak = plan.arena_bytes + weights_bytes + max(workspaces, default=0)
    naive_bytes = naive(tensors) + weights_bytes + sum(workspaces)
    front = network_frontier(net, problems, plan.arena_bytes + weights_bytes, io_bytes)
    ok = all(l.ok for l in layers) and e2e < network_tolerance(precision, len(layers)) and (chain_error is None or chain_error < 1e-5)
    return NetworkRun(net, dev.key, tuple(layers), final, want, e2e, ok,
                      sum(l.time_ms for l in layers), weights_bytes, plan.arena_bytes, naive_bytes, naive(tensors), lower_bound(tensors),
                      peak, front, explored, time.time() - t0, validated_against, explore_seconds, chained, chain_error)


# A layer kind doing more than its share of the network's arithmetic gets up to this many times the points.
# On the H200 with 8 points a layer and 14 workers: at most 1x, ResNet-18 explored in 153 s, VGG-16 in 126 s;
# at most 3x, VGG-16 in 142 s (0.32x -> 0.58x of PyTorch's CUDA graph) but ResNet-18 in 197 s, past the
# three minutes a network's exploration should take; at most 2x, with the model's rates probed, ResNet-18 in 140 s,
# MobileNetV2 in 144 s and VGG-16 in 124 s.
HEAVY_SAMPLES = 2
# With a time for the whole exploration (``time_s``), which bounds what extra points cost, up to this many.
TIMED_HEAVY_SAMPLES = 3
# A layer's share of the time left is never below this many seconds: deriving and screening a convolution's
# variants takes a few seconds before its first point, and a layer with no point measured gets one anyway.
LEAST_LAYER_S = 2.0


def layer_budget(time_s: float, elapsed_s: float, points: int, points_left: int) -> float:
    """Seconds of search for the next layer of a network explored in ``time_s``: the time left shared out in
    proportion to the points each layer still to explore asks for (``points_left`` counts this one's), so
    what a layer does not use goes to those after it."""
    return max(LEAST_LAYER_S, (time_s - elapsed_s) * points / max(1, points_left))


def layer_samples(net: Network, ops: dict, samples: int, heavy: int = HEAVY_SAMPLES) -> dict:
    """Points for each distinct problem: ``samples``, times the share of the network's arithmetic it does (every
    layer of it counted) over an equal share, rounded, between 1 and ``heavy``.  A layer's search time is
    mostly its set-up (deriving and screening its variants), so a few more points cost little, and the search
    of a layer doing an eighth of VGG-16's work is worth more points than a pooling's: with 8 points each, one
    such layer on an H200 kept a tiling taking 3.6 ms, more than PyTorch's whole network."""
    counts: dict = {}
    for node in net.nodes:
        counts[node.key] = counts.get(node.key, 0) + 1
    work = {key: (ops[key].flops() or 0.0) * n for key, n in counts.items()}
    total = sum(work.values())
    if total <= 0:
        return dict.fromkeys(counts, samples)
    fair = total / len(work)
    return {key: samples * max(1, min(heavy, round(w / fair))) for key, w in work.items()}


def _compiled_best(op, best, node, dev):
    """The best point's pipeline, its program derived again from the operator and the stored variant id, as the
    exploration derived it: a store is data written by anyone, so the program text stored beside the point
    (which may carry OpenCL bodies of user functions) is never built."""
    v = find_variant(cached_variants(op), best.variant)
    if v is None:
        raise LiftError(f"layer {node.name}: the stored best implementation {best.variant!r} is not among the variants "
                        f"this liftpy derives for {node.op}; explore it again into a new --db")
    unknown = sorted(set(best.config) - {str(p) for p in v.params})
    if unknown:
        raise LiftError(f"layer {node.name}: the stored configuration of {best.variant!r} names {', '.join(unknown[:5])}, "
                        "which are not its tuning parameters; explore it again into a new --db")
    return CompiledPipeline(v.program, {**node.size_map, **best.config}, dev, v.placement_map)


def network_frontier(net: Network, problems: dict, fixed_bytes: int, io_bytes: dict) -> tuple[tuple[float, int], ...]:
    """(network time, peak bytes) points: for each workspace cap, every layer's fastest measured point within
    it; Pareto-filtered."""
    per_layer = []
    for node in net.nodes:
        _, _, measured = problems[node.key]
        per_layer.append([(r.time_ms, max(0, int(r.bytes or 0) - io_bytes[node.key])) for r in measured])
    points = []
    for cap in sorted({ws for pts in per_layer for _, ws in pts}):
        chosen = [min(((t, ws) for t, ws in pts if ws <= cap), default=None) for pts in per_layer]
        if None not in chosen:
            points.append((float(sum(t for t, _ in chosen)), fixed_bytes + max(ws for _, ws in chosen)))
    front = []
    for t, m in sorted(set(points), key=lambda p: (p[1], p[0])):
        if not front or t < front[-1][0]:
            front.append((t, m))
    return tuple(front)


def format_run(run: NetworkRun) -> str:
    """The per-layer table, the totals, the memory plan and the frontier, as text."""
    mb = 1e6
    rows = [[l.node.name, l.node.op, ",".join(f"{k}={v}" for k, v in l.node.sizes), l.variant, f"{l.time_ms:.4g}",
             f"{l.workspace_bytes / mb:.3g}", "ok" if l.ok else f"WRONG ({l.max_error:.3g})"] for l in run.layers]
    lines = [format_table(["layer", "operator", "sizes", "implementation", "time ms", "workspace MB", "check"], rows,
                          numeric={"time ms", "workspace MB"})]
    lines.append(f"\n{run.network.name} on {run.device}: {run.time_ms:.4g} ms for {len(run.layers)} layers; end to end "
                 f"{'matches' if run.ok else 'DOES NOT match'} {run.validated_against} (max error {run.end_to_end_error:.2g} of the output's rms)")
    lines.append(f"intermediate tensors: {run.arena_bytes / mb:.4g} MB in one arena (lower bound {run.lower_bound_bytes / mb:.4g}) "
                 f"instead of {run.tensors_naive_bytes / mb:.4g} MB one buffer each "
                 f"({run.tensors_naive_bytes / max(run.arena_bytes, 1):.2f}x less)")
    lines.append(f"peak memory: {run.peak_bytes / mb:.4g} MB (arena + weights {run.weights_bytes / mb:.4g} MB + the largest "
                 f"workspace) against {run.naive_bytes / mb:.4g} MB allocated naively ({run.naive_bytes / max(run.peak_bytes, 1):.2f}x)")
    if run.chained is not None:
        lines.append(f"one forward pass chained on the device: {run.chained.wall_ms:.4g} ms wall ({run.chained.launches} "
                     f"launches; the kernels alone {run.time_ms:.4g} ms); chained output "
                     f"{'matches' if run.chain_error < 1e-5 else 'DIFFERS from'} the layer-by-layer run")
    if run.frontier:
        lines.append("network time/peak-memory frontier (from the layers' measured implementations):")
        lines.append(format_table(["#", "time ms", "peak MB"], [[str(i), f"{t:.4g}", f"{m / mb:.4g}"] for i, (t, m) in
                                                              enumerate(run.frontier, 1)], numeric={"#", "time ms", "peak MB"}))
    return "\n".join(lines)


def run_record(run: NetworkRun) -> dict:
    """Plain data for JSON."""
    return {
        "network": run.network.name, "device": run.device, "input_shape": list(run.network.input_shape),
        "layers": [{"name": l.node.name, "op": l.node.op, "sizes": dict(l.node.sizes), "variant": l.variant,
                    "config": l.config, "time_ms": l.time_ms, "explored_ms": l.explored_ms,
                    "workspace_bytes": l.workspace_bytes, "ok": l.ok} for l in run.layers],
        "time_ms": run.time_ms, "ok": run.ok, "end_to_end_error": run.end_to_end_error,
        "validated_against": run.validated_against,
        "weights_bytes": run.weights_bytes, "arena_bytes": run.arena_bytes, "lower_bound_bytes": run.lower_bound_bytes,
        "peak_bytes": run.peak_bytes, "naive_bytes": run.naive_bytes, "tensors_naive_bytes": run.tensors_naive_bytes,
        "frontier": [{"time_ms": t, "peak_bytes": m} for t, m in run.frontier], "explored_points": run.explored,
        "seconds": run.seconds, "explore_seconds": run.explore_seconds,
        "wall_ms": run.chained.wall_ms if run.chained is not None else None,
        "walls_ms": list(run.chained.walls_ms) if run.chained is not None else None,
        "chain_error": run.chain_error,
    }
