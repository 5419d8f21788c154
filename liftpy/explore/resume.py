"""The batch a model search saves for the run that resumes it.

A model search that ends (its samples or its budget reached) saves the batch its strategy proposes next in the
store (``next_batches``), with the kernels of its points generated in the run's workers and kept in the disk
cache, and the first of them built on the device (the OpenCL compiler's output then waits in pyopencl's binary
cache: building a convolution tiling took 2 s of the 3.3 s a resumed search of VGG-16 layer 12 needed to its
first run on the H100). Rebuilding the strategy from the store (observing the stored points, screening, fitting
the learned model, ranking) took a resumed SGEMM search 2.4 s on an H100 host before its first point could even
be generated; a resumed run whose saved batch still matches measures that batch at once, its kernels straight to
the measuring worker, and rebuilds the strategy meanwhile (in a thread, or after the batch where the kernels run
on this host's CPUs). The search's behaviour is unchanged: the batch is exactly what the uninterrupted run would
have measured next (with a smaller batch size, its first points). It is used only for the same device, problem,
variants, rule filter, seed and device profile, and only while the store holds exactly the finished points the
saving strategy knew (``store.points_state``): a point measured since by another exploration, or measured again,
makes it stale, and it is deleted.

``Later`` is the thread in which a resumed run rebuilds its strategy meanwhile.
"""

from __future__ import annotations

import hashlib
import threading

from ..results.cache import cache_dir, recall, remember
from ..results.store import BatchKey, Store, canonical_json, config_key
from ..runtime.points import compile_point, point_payload, prebuild_point
from ..runtime.pool import Task


STAGES_CODE = ("ir", "codegen", "views")  # what the generated kernels of a saved batch depend on


def plan_settings(vkey: str, rules, seed: int, profile) -> dict:
    """What decides a model search's proposals besides the store: the variants (the operator's program
    and the rule filter), the seed and the device profile (its limits and the analytical model's machine)."""
    digest = lambda text: hashlib.sha1(text.encode()).hexdigest()  # noqa: E731
    return {"variants": digest(vkey), "rules": list(rules), "seed": seed,
            "profile": digest(canonical_json(profile.record()))}


def saved_plan(store: Store, key: BatchKey, state: str, position: dict, ids, taken: set) -> list | None:
    """The points of the batch saved under ``key``, if it was saved for this state of the store and its
    points still name these variants and are not measured; a stale batch is deleted."""
    saved = store.saved_batch(key)
    if saved is None:
        return None
    points = _plan_points(saved, state, position, ids, taken)
    if points is None:
        store.drop_batch(key)
    return points


def _plan_points(saved: tuple[str, list], state: str, position: dict, ids, taken: set) -> list | None:
    saved_state, entries = saved
    if saved_state != state or not entries:
        return None
    points = []
    for entry in entries:
        i = position.get(entry.get("index"))
        if i is None or ids[i] != entry.get("variant") or not isinstance(entry.get("config"), dict):
            return None
        if (i, config_key(entry["config"])) in taken:
            return None
        points.append((i, entry["config"]))
    return points


def _stages_key(op, vid: str, config: dict, limits) -> str:
    """The disk-cache key of a point's generated kernels: everything ``compile_point`` reads (the
    variant's program and placements through its id, the sizes, the configuration, the device limits)."""
    return f"{vid}|{canonical_json(op.sizes())}|{canonical_json(config)}|{limits!r}"


def generated_kernels(op, ids, chosen, limits) -> dict:
    """(stages, codegen seconds) of the chosen points whose kernels were generated when their batch was
    saved, by (variant, configuration key)."""
    out = {}
    for i, config in chosen:
        found = recall("stages", _stages_key(op, ids[i], config, limits), STAGES_CODE)
        if found is not None:
            out[(i, config_key(config))] = found
    return out


PREBUILD_POINTS = 1  # points of a saved batch built on the device when it is saved (``save_plan``)


def save_plan(store: Store, key: BatchKey, state: str, chosen: list, op, variants, ids, origin, limits, pool,
              measuring=None, device=None) -> int:
    """Save the batch the strategy proposes next (``chosen``) for the store's ``state``; with a worker
    ``pool``, generate its kernels now and keep them in the disk cache, so that the run that resumes
    builds them on the device at once; with the ``measuring`` worker, build the first ``PREBUILD_POINTS``
    of them on ``device`` too, so that the resumed run's first build finds the compiler's output in
    pyopencl's binary cache.  Only the first: each build costs this run as much as it saves the next
    (2 s for a convolution tiling on the H100), and the resumed run builds the others while it measures.
    Returns how many points were built."""
    if not chosen:
        store.drop_batch(key)
        return 0
    generated = _generate_ahead(pool, op, variants, ids, chosen, limits) if pool is not None else {}
    store.save_batch(key, state, [{"index": origin[i], "variant": ids[i], "config": dict(c)} for i, c in chosen])
    if measuring is None:
        return 0
    tasks = []
    for i, config in chosen[:PREBUILD_POINTS]:
        stages = generated.get((i, config_key(config)))
        if stages is not None:
            v = variants[i]
            payload = point_payload(op, v.program, v.placement_map, config, device, 0, 1, 0, limits, None)
            tasks.append(Task(prebuild_point, ({**payload, "stages": stages},), tag=(i, config)))
    # A point that fails to build is recorded as such when the resumed run measures it; nothing to do here.
    return sum(outcome.ok for _, outcome in measuring.imap_unordered(tasks))


def _generate_ahead(pool, op, variants, ids, chosen, limits) -> dict:
    """Generate the kernels of ``chosen`` in ``pool`` and keep them in the disk cache; returns their stages
    by (variant, ``config_key``), as ``generated_kernels`` finds them again."""
    if cache_dir() is None:
        return {}  # nowhere to keep them
    tasks = []
    for i, config in chosen:
        v = variants[i]
        # Only what code generation reads; the measuring settings come from the run that uses the kernels.
        payload = point_payload(op, v.program, v.placement_map, config, None, 0, 1, 0, limits, None)
        tasks.append(Task(compile_point, (payload,), tag=(i, config)))
    out: dict = {}
    for task, outcome in pool.imap_unordered(tasks):
        if outcome.ok:
            i, config = task.tag
            remember("stages", _stages_key(op, ids[i], config, limits),
                     (outcome.result["stages"], outcome.result["codegen_s"]), STAGES_CODE)
            out[(i, config_key(config))] = outcome.result["stages"]
    return out


class Later:
    """A function's result when asked for: computed meanwhile in a daemon thread (``thread``) or then;
    ``result`` raises what the function raised."""

    def __init__(self, fn, thread: bool = True):
        self._fn, self._value, self._error = fn, None, None
        self._thread = threading.Thread(target=self._run, name="liftpy-rebuild-search", daemon=True) if thread else None
        if self._thread is not None:
            self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as e:  # noqa: BLE001 - handed to the thread that waits for the result
            self._error = e

    def result(self):
        if self._thread is None:
            return self._fn()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
