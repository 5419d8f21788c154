"""The exploration engine: many generated convolutions for one layer and device, each validated and
measured, kept in the results store, with the time/memory Pareto frontier and reference points.

Points (a variant and a configuration of its tuning parameters) are chosen deterministically from the
seed: a variant drawn uniformly from the explored variants, then a configuration drawn uniformly from the
variant's valid space (constraint inference and the solver, under the device's profile).  Re-running the
same command therefore asks for the same points, and the store tells which are done: an interrupted run
resumes without running anything twice.  Every point runs in an isolated worker process with a time
limit, so a compiler crash or a hang is recorded (with its status) and the exploration goes on.

Python API (for notebooks): ``explore_layer`` returns an ``Exploration`` with the records, the frontier
and the references; ``frontier`` and ``best`` read a store.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import __version__
from ..errors import TuningError
from .layers import Layer, get_layer
from .pareto import format_frontier, pareto_front, plot_frontier
from .progress import Progress
from .store import REFERENCE_PREFIX, Key, Record, Status, Store

EVALUATE = "liftpy.tuning.evaluate:evaluate_point"


@dataclass(frozen=True)
class Point:
    variant_id: str
    variant_index: int
    config: dict

    def key(self, device: str, layer: Layer) -> Key:
        return Key.of(device, layer.spec, self.variant_id, self.config)


@dataclass(frozen=True)
class Exploration:
    layer: Layer
    device: str
    records: list  # every record of this layer and device, references included
    frontier: list
    references: list
    ran: int
    resumed: int
    failed: int

    def table(self) -> str:
        return format_frontier(self.frontier, self.references, flops=self.layer.flops)


def variant_text(v) -> str:
    from ..ir.printer import show_program

    place = "".join(f"\n// placement: {k} in {w}" for k, w in v.placements)
    return show_program(v.program) + place


def variant_id(v) -> str:
    """A short, stable name for a variant: its main rules and a hash of its text."""
    from ..rewrite.explore import features

    digest = hashlib.sha1(variant_text(v).encode()).hexdigest()[:10]
    short = {"tile2D": "tile", "vectorizeReduce": "vec", "partialReduce": "partial", "coalesce": "coal",
             "splitPartialKernels": "sum-kernel", "materializeInput": "pad-kernel", "padOpt": "padopt",
             "placeInImage": "image", "localStage": "local", "letPrivate": "let", "unrollReduceSeq": "unroll",
             "mapWrg": "wrg", "mapGlb": "glb", "cropKernel": "crop-kernel", "registerBlock2D": "block"}
    tags = sorted({short[f] for f in features(v) if f in short})
    return f"{'+'.join(tags) or 'plain'}#{digest}"


def select_variants(variants: Sequence, rules: Sequence[str]) -> tuple:
    """The variants whose derivation used every rule in ``rules``; an unknown rule name is an error that
    lists the rules the variants do use."""
    from ..rewrite.explore import features

    if not rules:
        return tuple(variants)
    known = set().union(*(features(v) for v in variants)) if variants else set()
    unknown = sorted(set(rules) - known)
    if unknown:
        raise TuningError(f"no variant uses the rule(s) {', '.join(unknown)}; the variants use: {', '.join(sorted(known))}")
    return tuple(v for v in variants if set(rules) <= features(v))


def _config_key(config: dict) -> tuple:
    return tuple(sorted(config.items()))


def choose_points(variants: Sequence, layer: Layer, samples: int, profile, seed: int, stream=None) -> list[Point]:
    """``samples`` distinct points: a variant drawn uniformly, then a configuration drawn uniformly from its
    valid space.  Deterministic for a seed.  Variants without a valid configuration are skipped."""
    from ..constraints import sample, solve
    from ..constraints.infer import variant_space
    from .conv import layer_sizes

    rng = random.Random(seed)
    sizes = layer_sizes(layer)
    order = list(range(len(variants)))
    rng.shuffle(order)
    spaces: dict[int, object] = {}
    pools: dict[int, list[dict]] = {}
    taken: dict[int, set] = {}
    dead: set[int] = set()
    points: list[Point] = []
    started = time.time()
    cursor = 0
    while len(points) < samples and len(dead) < len(order):
        i = order[cursor % len(order)]
        cursor += 1
        if i in dead:
            continue
        if i not in spaces:
            spaces[i] = solve(variant_space(variants[i], sizes, profile), seed=seed)
            pools[i], taken[i] = [], set()
        counted = spaces[i]
        if not pools[i]:
            # A variant's first draw is small so that the points spread over the variants; when few
            # variants are valid, their pools are drawn again, larger, without the points already taken.
            valid = counted.size.valid
            if len(taken[i]) >= valid:
                dead.add(i)
                continue
            want = min(valid, max(4, samples // 8, 2 * len(taken[i])))
            fresh = [c for c in sample(counted, want, seed=rng.randrange(2**31)) if _config_key(c) not in taken[i]]
            rng.shuffle(fresh)
            pools[i] = fresh
            if not fresh:
                dead.add(i)
                continue
        config = pools[i].pop()
        taken[i].add(_config_key(config))
        points.append(Point(variant_id(variants[i]), i, config))
        if stream is not None and time.time() - started > 5 and len(points) % 50 == 0:
            print(f"  chose {len(points)}/{samples} points from {len(spaces)} variants", file=stream)
    return points


def explore_layer(
    layer,
    samples: int = 100,
    db: str | Path = "results.sqlite",
    device=None,
    profile_path: str | Path | None = None,
    seed: int = 0,
    timeout_s: float = 300.0,
    repeat: int = 5,
    warmup: int = 1,
    references: bool = True,
    progress: bool = True,
    stream=None,
    rules: Sequence[str] = (),
) -> Exploration:
    """Explore the direct convolution of ``layer`` (a name like ``vgg16:7``, a spec ``C,H,W,M,K,stride,pad``
    or a ``Layer``) on a device, resuming from the store ``db``.  ``rules``: explore only the variants
    whose derivation uses every one of these rules."""
    from ..host.device import get_device
    from ..host.profile import resolve_profile
    from .conv import conv_variants
    from .worker import Task, WorkerPool

    stream = stream or sys.stdout
    layer = get_layer(layer)
    dev = get_device(device)
    device_key = dev.key
    profile = resolve_profile(device, profile_path)
    t0 = time.time()
    variants = select_variants(conv_variants(layer.K, layer.stride, layer.pad, images=profile.image_support), rules)
    if progress:
        print(f"{layer.name} ({layer.spec}) on {dev.info.name}: {len(variants)} variants from the rewrite rules "
              f"({time.time() - t0:.1f} s); choosing {samples} points", file=stream)
    points = choose_points(variants, layer, samples, profile, seed, stream if progress else None)
    if not points:
        raise TuningError(f"no variant has a valid configuration for {layer.name} on {dev.info.name}")
    with Store(db) as store:
        done = store.done_keys(device_key, layer.spec)
        todo = [p for p in points if p.key(device_key, layer) not in done]
        resumed = len(points) - len(todo)
        bar = Progress(len(points), label=layer.name, stream=stream if progress else _Null(), resumed=resumed)
        ran = failed = 0
        if todo:
            tasks = []
            for p in todo:
                v = variants[p.variant_index]
                payload = {
                    "layer": layer.spec,
                    "program": v.program.text(),
                    "placements": v.placement_map,
                    "config": p.config,
                    "device": device,
                    "seed": seed,
                    "repeat": repeat,
                    "warmup": warmup,
                }
                tasks.append(Task(EVALUATE, (payload,), tag=p))
            with WorkerPool(1, default_timeout_s=timeout_s, max_tasks_per_worker=200) as pool:
                for task, outcome in pool.imap_unordered(tasks):
                    p: Point = task.tag
                    v = variants[p.variant_index]
                    res = outcome.result if outcome.ok else {}
                    record = Record(
                        device=device_key,
                        layer=layer.spec,
                        variant=p.variant_id,
                        config=p.config,
                        status=outcome.status,
                        time_ms=res.get("time_ms"),
                        bytes=res.get("bytes"),
                        layer_name=layer.name,
                        source_hash=res.get("source_hash"),
                        liftpy_version=__version__,
                        profile=profile.record(),
                        metrics={
                            **{k: v_ for k, v_ in res.items() if k not in ("time_ms", "bytes", "source_hash")},
                            "rules": [str(s) for s in v.trace],
                            "program": variant_text(v),
                            "placements": v.placement_map,
                            "params": [str(s) for s in v.params],
                        },
                        error=None if outcome.ok else (outcome.message or str(outcome.status)),
                    )
                    store.put(record)
                    ran += 1
                    failed += not outcome.ok
                    bar.update(outcome.status, record.time_ms, record.bytes)
        bar.close()
        if references:
            _measure_references(store, layer, device_key, seed)
        records = store.records(device=device_key, layer=layer.spec)
    measured = [r for r in records if r.measured and not r.is_reference]
    refs = [r for r in records if r.is_reference and r.measured]
    return Exploration(layer, device_key, records, pareto_front(measured), refs, ran, resumed, failed)


class _Null:
    def write(self, *_):
        pass

    def flush(self):
        pass

    def isatty(self):
        return False


def _measure_references(store: Store, layer: Layer, device_key: str, seed: int) -> None:
    """The references measured once per layer and device (kept in the store like every point)."""
    from .references import available_references, measure_reference, random_inputs, reference_record

    x, w = random_inputs(layer, seed)
    for name in available_references():
        key = Key.of(device_key, layer.spec, REFERENCE_PREFIX + name, {})
        if store.done(key):
            continue
        result = measure_reference(name, x, w, layer.stride, layer.pad)
        store.put(reference_record(result, device_key, layer))


def frontier(db: str | Path, layer, device: str | None = None) -> tuple[list[Record], list[Record], list[Record]]:
    """(frontier, references, all measured records) of a layer in a store (any device if None and only
    one device has results)."""
    layer = get_layer(layer)
    with Store(db) as store:
        records = store.records(device=device, layer=layer.spec)
    devices = sorted({r.device for r in records})
    if device is None and len(devices) > 1:
        raise TuningError(f"{db} holds results of several devices for {layer.name}; choose one with --device-key: {devices}")
    measured = [r for r in records if r.measured and not r.is_reference]
    refs = [r for r in records if r.is_reference and r.measured]
    return pareto_front(measured), refs, measured


def best(db: str | Path, layer=None, device: str | None = None) -> Record:
    """The fastest correct point of a store (of one layer if given)."""
    with Store(db) as store:
        records = store.records(device=device, layer=get_layer(layer).spec if layer is not None else None)
    ok = [r for r in records if r.measured and not r.is_reference]
    if not ok:
        raise TuningError(f"{db} has no measured point" + (f" for {layer}" if layer else ""))
    return min(ok, key=lambda r: r.time_ms)


def plot(db: str | Path, layer, path: str | Path, device: str | None = None) -> Path:
    front, refs, measured = frontier(db, layer, device)
    lay = get_layer(layer)
    return plot_frontier(measured, front, refs, path, title=f"{lay.name} ({lay.spec})")
