"""Learning from other problems of the same variants: what a store measured on this device for the other layers
of a network, or other sizes of a matrix product, informs a strategy before its first proposal
(``use_other_problems``), as TVM's transfer learning and vendors' heuristics do.
"""

from __future__ import annotations

from pathlib import Path

from ..results.store import Status
from ..search.variants import variant_tags


HINTS_PER_PROBLEM = 3
# Of a problem of other variants: its fastest points, each offered to at most this many variants of its kind
# here (checking a hint infers that variant's space: some 0.1-0.8 s each where the search had not).
KINDRED_HINTS = 2
KINDRED_VARIANTS = 2
# and only the problems measured last: a network's later layers would otherwise check hints from every layer
# before them, a cost growing with the layers (MobileNetV2 has 37 distinct ones).
KINDRED_PROBLEMS = 6
# Measurements of other problems that train a model search's learned correction: offline on the H100 stores of
# VGG-16 layers 12, 10, 5 and 24 (each ranked by its own 50 points and the other layers'), held-out Kendall tau
# rose with how many (the most recent 256: 0.74-0.82; 1,024: 0.79-0.86; ``liftpy.model.learned``).  Each costs
# an analytical model at its own sizes the first time (0.1-0.3 s of code generation for a convolution tiling;
# 1,024 points of VGG-16 layers took 164 s in one process of a 2-core machine), made in the search's ``jobs``
# processes (``Spaces.prefetch_at``), then a read of its prediction from the disk cache (``Spaces.predict_at``:
# the same 1,024 in 0.4 s).
TRANSFER_POINTS = 1024


def use_other_problems(store, strategy, op, device_key: str, position: dict, ids, jobs: int = 1) -> tuple[int, int]:
    """What the store measured on this device for other problems of the same variants (the other layers of a
    network, other sizes of a matrix product) informs the strategy before its first proposal, as TVM's
    transfer learning and vendors' heuristics do: the fastest points of each problem are offered as
    candidates (``hint``; a tiling fast on one layer is often fast, or one move away from fast, on the
    next), and up to ``TRANSFER_POINTS`` of the most recent measurements train its learned model
    (``learn_elsewhere``: which variants' code the formula misjudges carries over between sizes; their
    models made first in ``jobs`` processes where the disk cache lacks them).  Returns how many other
    problems and points there were."""
    hint, learn = getattr(strategy, "hint", None), getattr(strategy, "learn_elsewhere", None)
    if hint is None and learn is None:
        return 0, 0
    problem = op.problem
    by_problem: dict[str, list] = {}
    kindred: dict[str, list] = {}  # problems of other variants (another operator spec), by problem
    for r in store.records(device=device_key):
        if r.layer == problem or r.is_reference or r.status is not Status.OK or r.time_ms is None:
            continue
        i = position.get(r.metrics.get("variant_index", -1))
        if i is not None and ids[i] == r.variant:
            by_problem.setdefault(r.layer, []).append((i, r))
        elif hint is not None and _size_names(r.layer) == _size_names(problem):  # (a convolution: not a pooling)
            kindred.setdefault(r.layer, []).append(r)
    sizes = {p: op.problem_sizes(p) for p in by_problem}
    if hint is not None:
        hints = [(i, r.config) for points in by_problem.values()
                 for i, r in sorted(points, key=lambda p: p[1].time_ms)[:HINTS_PER_PROBLEM]]
        hints += _kindred_hints(strategy, kindred)
        # Checking a hint infers its variant's space, which the workers do at once where there are some.
        prefetch = getattr(getattr(strategy, "spaces", None), "prefetch_models", None)
        if prefetch is not None:
            prefetch([i for i, _ in hints])
        for i, config in hints:
            hint(i, config)
    if learn is not None:
        recent = sorted(((i, r) for p, points in by_problem.items() if sizes[p] for i, r in points),
                        key=lambda p: p[1].finished_at or 0)[-TRANSFER_POINTS:]
        prefetch = getattr(strategy, "prefetch_elsewhere", None)
        if prefetch is not None and jobs > 1:
            prefetch([(i, sizes[r.layer], r.config) for i, r in recent], jobs)
        for i, r in recent:
            learn(i, r.config, r.time_ms, sizes[r.layer])
    return len(by_problem), sum(len(points) for points in by_problem.values())


def _size_names(problem: str) -> frozenset:
    """The names of a problem key's sizes (``name#digest:C=64,H=56``)."""
    _, _, sizes = problem.partition(":")
    return frozenset(part.split("=")[0] for part in sizes.split(",") if part)


def _kindred_hints(strategy, kindred: dict) -> list[tuple[int, dict]]:
    """The fastest points of problems of other variants, offered as candidates of the variants here of the same
    kind (the same main rules, ``variant_tags``, and the same parameter names): a convolution without its
    ReLU is another operator with other variants, but its fastest tilings are the fastest tilings of the
    convolution with it (ResNet-18 on an H200, 8 points a layer: each of the three later 3x3 convolutions
    without a ReLU took 2.0-3.7x the time of its twin with one, neither told of the other's points).  The
    strategy keeps only those its constraints allow."""
    variants = getattr(getattr(strategy, "spaces", None), "variants", None)
    if variants is None or not kindred:
        return []
    kinds: dict = {}
    for i, v in enumerate(variants):
        kinds.setdefault((variant_tags(v), frozenset(str(p) for p in v.params)), []).append(i)
    last = sorted(kindred.values(), key=lambda records: max(r.finished_at or 0 for r in records))[-KINDRED_PROBLEMS:]
    return [(i, r.config) for records in last for r in sorted(records, key=lambda r: r.time_ms)[:KINDRED_HINTS]
            for i in kinds.get((r.variant.split("#")[0], frozenset(r.config)), ())[:KINDRED_VARIANTS]]


def print_others(others: tuple[int, int], op, search: str, db, progress: bool, say) -> None:
    count, points = others
    if count and progress:
        say(f"{op.name}: the {search} search uses {points} points of {count} other problem(s) of these "
            f"variants in {Path(db).name} (their fastest as candidates, the {TRANSFER_POINTS} most recent to train "
            "its model)")
