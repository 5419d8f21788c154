"""One exploration spread over several devices and machines, on Ray.

Why Ray: scheduling work over machines, noticing that one died and placing an actor per GPU are what
distributed engines already do well (kernel_tuner and pyATF explore on Ray, TVM on its RPC tracker); liftpy
keeps only what is its own: which point to try next and what to keep.

The split of roles:

* one **device worker** (a Ray actor) per device: it owns that device, generates the code of the points it
  is given (in ``jobs`` parallel processes), measures them one at a time, validates every output, and sends
  plain outcomes back.  Inside the actor the same isolated ``WorkerPool`` as a single-device exploration runs
  each point, so a kernel that crashes or hangs costs one point, not the actor;
* the **driver** (the process that called ``explore``) owns the search (the cost model refits on results as
  they arrive) and the results store, as its only writer.

A device worker that dies (its machine lost, its process killed) has its unfinished points put back at the
head of the queue and is replaced; a point whose worker died under it three times is recorded as crashed,
so one poisonous point cannot stop the exploration.  Every record keeps the device it was measured on
(``metrics["ran_on"]``: host, OpenCL device, GPU); devices of one exploration must be of one kind (one
``Device.key``), so that their points share one search and one frontier; a cluster of different GPUs is
explored once per kind, with ``resources`` naming which.

``--workers`` forms: ``local:N`` starts Ray on this machine with N device workers (one per GPU when there
are GPUs, else N on the CPU device); ``ray://HOST:PORT`` connects to a running cluster through Ray Client;
``ray`` joins the cluster this machine belongs to (``ray start`` was run here).  On a cluster, there is one
device worker per GPU, or one per machine where there are no GPUs, spread over the machines.  liftpy (this version)
must be installed on every machine of a cluster.
"""

from __future__ import annotations

import os
import queue
import re
import socket
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass

from ..errors import TuningError
from ..host.device import get_device, list_devices
from ..host.profile import DeviceProfile
from ..results.store import Status, config_key
from .evaluate import compile_pool, measure_pool
from .points import (
    abort_threshold,
    compile_point,
    compile_steps,
    measure_point,
    point_payload,
    reference_result,
    with_compile_steps,
)
from .pool import Outcome, Task

# Ray is an optional dependency (the ray extra): it is imported where a cluster is asked for, and a missing one
# is said in one line (``_ray``).

RAY_HINT = "pip install -e '.[ray]'"
MAX_POINT_LOSSES = 3  # a point whose worker died under it this often is recorded as crashed
MAX_REPLACEMENTS = 8  # device workers started again after deaths, per device, before giving up on it


@dataclass(frozen=True)
class WorkersSpec:
    """Where device workers run: ``address`` None starts Ray here with ``count`` workers."""

    text: str
    address: str | None
    count: int | None


def parse_workers(text: str) -> WorkersSpec:
    """``local:N``, ``ray://HOST:PORT`` or ``ray``; anything else is an error that lists the forms."""
    text = str(text).strip()
    m = re.fullmatch(r"local:(\d+)", text)
    if m:
        n = int(m.group(1))
        if n < 1:
            raise TuningError(f"--workers {text}: the number of device workers must be at least 1")
        return WorkersSpec(text, None, n)
    if re.fullmatch(r"ray://[\w.\-]+:\d+", text):
        return WorkersSpec(text, text, None)
    if text in ("ray", "ray:auto"):
        return WorkersSpec(text, "auto", None)
    raise TuningError(f"--workers {text!r}: use local:N (N device workers on this machine), ray://HOST:PORT "
                      "(a running Ray cluster, through Ray Client) or ray (the cluster this machine belongs to)")


def _ray(spec_text: str):
    try:
        import ray  # (optional: module head)
    except ImportError:
        raise TuningError(f"--workers {spec_text} runs the exploration on Ray, which is not installed: {RAY_HINT}") from None
    return ray


def _assigned_device(device):
    """The OpenCL device index a device worker measures on: the GPU Ray assigned to it, else ``device``."""
    import ray  # (optional: module head; in a Ray worker it is there)

    gpu_ids = ray.get_gpu_ids()
    if not gpu_ids:
        return device
    gpus = _opencl_gpus()
    if not gpus:
        raise TuningError("Ray assigned a GPU to this worker but no OpenCL GPU device is visible; "
                          "check that the vendor's OpenCL driver is registered (OCL_ICD_VENDORS)")
    if len(gpus) == 1:  # the driver honours CUDA_VISIBLE_DEVICES, which Ray set to this worker's GPU
        return gpus[0].index
    position = int(gpu_ids[0])
    if position >= len(gpus):
        raise TuningError(f"Ray assigned GPU {position} but only {len(gpus)} OpenCL GPUs are visible")
    return gpus[position].index


class DeviceWorker:
    """The body of a device worker (made a threaded Ray actor by ``Cluster``): one device, its points.

    Points arrive one per call, up to ``jobs + 1`` at once: each takes a free code-generation process of
    its own (``jobs`` of them), then waits for the one measuring process, which owns the device.  So code
    generation overlaps measurement, and the driver can balance points one by one across devices of
    different speed instead of in batches that wait for their slowest point.
    """

    def __init__(self, device=None, jobs: int = 1, timeout_s: float = 300.0):
        dev = get_device(_assigned_device(device))
        self.index = dev.index
        self.key = dev.key
        self.name = dev.info.name
        # A WorkerPool serves one caller at a time: one single-process pool per concurrent compile.
        self.compilers: queue.Queue = queue.Queue()
        self.pools = [compile_pool(1, timeout_s) for _ in range(jobs)]
        for pool in self.pools:
            self.compilers.put(pool)
        self.measure_pool = measure_pool(dev.index, timeout_s)
        self.pools.append(self.measure_pool)
        self.measuring = threading.Lock()
        gpu = ",".join(str(g) for g in _gpu_ids())
        self.ran_on = f"{socket.gethostname()}:{dev.index}" + (f":gpu{gpu}" if gpu else "")

    def describe(self) -> dict:
        return {"key": self.key, "name": self.name, "ran_on": self.ran_on, "pid": os.getpid(),
                "host": socket.gethostname(), "profile": DeviceProfile.from_device(self.index)}

    def evaluate(self, op, program, placements, config: dict, seed: int, repeat: int, warmup: int, limits,
                 abort_ms):
        """The ``Outcome`` of one point: its code generated, then built, run and validated on the device."""
        payload = point_payload(op, program, placements, config, self.index, seed, repeat, warmup, limits, abort_ms)
        pool = self.compilers.get()
        try:
            compiled = pool.run(Task(compile_point, (payload,)))
        finally:
            self.compilers.put(pool)
        if not compiled.ok:
            return compiled
        payload["stages"] = compiled.result["stages"]
        with self.measuring:
            outcome = self.measure_pool.run(Task(measure_point, (payload,)))
        return with_compile_steps(outcome, compile_steps(compiled.result))

    def references(self, op, seed: int) -> list[dict]:
        """The operator's references measured on this worker's device (outputs left behind)."""
        with self.measuring:
            return [reference_result(ref.run(seed), ran_on=self.ran_on) for ref in op.references()]

    def close(self) -> None:
        for pool in self.pools:
            pool.close()


def _gpu_ids() -> list:
    try:
        import ray  # (optional: module head)

        return list(ray.get_gpu_ids())
    except Exception:  # noqa: BLE001 - outside a Ray worker there is no assignment
        return []


class _Slot:
    """One device worker as the driver sees it."""

    def __init__(self, number: int):
        self.number = number
        self.actor = None
        self.info: dict = {}
        self.replacements = 0
        self.alive = False


class Cluster:
    """Device workers on Ray and the driver's side of talking to them; use as a context manager.

    ``evaluate`` streams outcomes, handing points out one at a time.  ``lost`` counts device workers that
    died, ``requeued`` the points given to another worker because of it.
    """

    def __init__(self, workers: str | WorkersSpec, jobs: int = 1, timeout_s: float = 300.0, device=None,
                 start_timeout_s: float = 300.0):
        self.spec = workers if isinstance(workers, WorkersSpec) else parse_workers(workers)
        ray = self._ray = _ray(self.spec.text)
        self.jobs = jobs
        self.timeout_s = timeout_s
        self.device = device
        self.start_timeout_s = start_timeout_s
        self.lost = 0
        self.requeued = 0
        self._started_ray = False
        if not ray.is_initialized():
            if self.spec.address is None:
                gpus = _local_gpus()
                if gpus and self.spec.count > gpus:
                    raise TuningError(f"--workers {self.spec.text}: this machine has {gpus} GPU(s); "
                                      f"use local:{gpus} or fewer")
                cpus = os.cpu_count() or 1
                ray.init(num_cpus=max(cpus, self.spec.count * jobs), num_gpus=gpus, include_dashboard=False,
                         log_to_driver=False, configure_logging=False)
            else:
                try:
                    ray.init(address=self.spec.address, log_to_driver=False, configure_logging=False)
                except Exception as e:  # noqa: BLE001 - Ray raises several types for an unreachable cluster
                    raise TuningError(f"--workers {self.spec.text}: cannot join the Ray cluster: {e}") from None
            self._started_ray = True
        try:
            resources = ray.cluster_resources()
            gpus = int(resources.get("GPU", 0))
            # Without a count: one worker per GPU, or on a cluster without GPUs one per machine (a CPU device
            # uses every core of its machine for one kernel: two measuring at once would time each other).
            nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
            count = self.spec.count or gpus or max(1, nodes)
            self._options = {"num_gpus": 1, "num_cpus": 0} if gpus else {"num_cpus": 1}
            self._options["scheduling_strategy"] = "SPREAD"
            self._options["max_concurrency"] = jobs + 1
            self._remote = ray.remote(DeviceWorker)
            self.slots = [_Slot(k) for k in range(count)]
            for slot in self.slots:
                self._start(slot)
            self._describe(self.slots)
            kinds = sorted({s.info["key"] for s in self.slots})
            if len(kinds) > 1:
                raise TuningError("the device workers measure on different kinds of device (" + "; ".join(kinds) +
                                  "): explore each kind separately, one point set and frontier per device")
        except BaseException:
            self.close()
            raise
        first = self.slots[0].info
        self.device_key, self.device_name, self.base_profile = first["key"], first["name"], first["profile"]

    # -- device workers --------------------------------------------------------------------------------

    def _start(self, slot: _Slot) -> None:
        slot.actor = self._remote.options(**self._options).remote(self.device, self.jobs, self.timeout_s)
        slot.alive = True

    def _describe(self, slots) -> None:
        ray = self._ray
        refs = {s.actor.describe.remote(): s for s in slots}
        ready, waiting = ray.wait(list(refs), num_returns=len(refs), timeout=self.start_timeout_s)
        if waiting:
            raise TuningError(f"{len(waiting)} device worker(s) did not start within {self.start_timeout_s:g} s: "
                              "the cluster may lack free GPUs or CPUs for them (ray status shows what it has)")
        for ref in ready:
            try:
                refs[ref].info = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - an actor's constructor failure comes back wrapped
                raise TuningError(f"a device worker failed to start: {_cause(e)}") from None

    def _replace(self, slot: _Slot) -> None:
        slot.alive = False
        try:
            self._ray.kill(slot.actor)
        except Exception:  # noqa: BLE001 - it is dead already
            pass
        if slot.replacements >= MAX_REPLACEMENTS:
            return
        slot.replacements += 1
        self._start(slot)
        try:
            self._describe([slot])
        except TuningError:
            slot.alive = False

    def pids(self) -> list[int]:
        """Process ids of the live device workers (they run on this machine with ``local:N``)."""
        return [s.info["pid"] for s in self.slots if s.alive and s.info]

    def profile(self, profile_path=None):
        return DeviceProfile.load(profile_path, self.base_profile) if profile_path else self.base_profile

    # -- work ------------------------------------------------------------------------------------------

    def evaluate(self, op, variants, chosen, seed, repeat, warmup, limits, abort_ms, deadline=None):
        """Yield ``((index, config), Outcome, where)`` for every chosen point, in the order they finish.

        Each device worker holds up to ``jobs + 1`` points at once (its compile processes and its device
        busy), and gets the next point as soon as one of its own finishes.  After ``deadline`` (a
        ``time.time()``) no point is handed out; those already out still finish."""
        ray = self._ray
        queue = deque(chosen)
        losses: Counter = Counter()
        inflight: dict = {}  # ObjectRef -> (slot, the actor handle it went to, point)
        depth = self.jobs + 1
        op_ref = ray.put(op)  # sent once, not with every point
        while queue or inflight:
            if deadline is not None and time.time() > deadline:
                queue.clear()
                if not inflight:
                    return
            load = Counter(id(s) for s, _, _ in inflight.values())
            for slot in self.slots:
                while queue and slot.alive and load[id(slot)] < depth:
                    i, c = item = queue.popleft()
                    v = variants[i]
                    ref = slot.actor.evaluate.remote(op_ref, v.program, v.placement_map, c, seed, repeat, warmup,
                                                     limits, abort_threshold(abort_ms))
                    inflight[ref] = (slot, slot.actor, item)
                    load[id(slot)] += 1
            if not inflight:
                raise TuningError(f"every device worker of --workers {self.spec.text} died; "
                                  f"{len(queue)} point(s) were not evaluated")
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                slot, actor, item = inflight.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - the actor died (its process or its machine)
                    if not _is_actor_death(e):
                        raise TuningError(f"a device worker failed: {_cause(e)}") from None
                    losses[_key(item)] += 1
                    if losses[_key(item)] >= MAX_POINT_LOSSES:
                        yield item, Outcome(Status.CRASHED, message=f"its device worker died {MAX_POINT_LOSSES} "
                                            f"times while evaluating it ({_cause(e)})"), _where(slot)
                    else:
                        queue.appendleft(item)
                        self.requeued += 1
                    if slot.actor is actor:  # the first of its points to report the death replaces it
                        self.lost += 1
                        self._replace(slot)
                    continue
                yield item, outcome, _where(slot)

    def references(self, op, seed: int) -> list[dict]:
        """The operator's references, measured by the first live device worker."""
        for slot in self.slots:
            if slot.alive:
                return self._ray.get(slot.actor.references.remote(op, seed))
        raise TuningError("no device worker is alive to measure the references")

    def close(self) -> None:
        ray = self._ray
        for slot in getattr(self, "slots", []):
            if slot.actor is not None:
                try:
                    ray.kill(slot.actor)
                except Exception:  # noqa: BLE001 - already gone
                    pass
                slot.actor, slot.alive = None, False
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
            self._started_ray = False

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _where(slot: _Slot) -> dict:
    """What a record keeps of the device worker that measured it."""
    return {"ran_on": slot.info.get("ran_on"), "worker": f"{slot.number}:{slot.info.get('pid')}"}


def _key(item) -> tuple:
    return item[0], config_key(item[1])


def _is_actor_death(e: BaseException) -> bool:
    from ray import exceptions as rx  # (optional: module head)

    kinds = tuple(getattr(rx, n) for n in ("RayActorError", "ActorDiedError", "ActorUnavailableError",
                                           "WorkerCrashedError", "NodeDiedError", "OwnerDiedError")
                  if hasattr(rx, n))
    return isinstance(e, kinds)


def _cause(e: BaseException) -> str:
    cause = getattr(e, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {cause}"
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[-1] if text else ''}"


def _opencl_gpus() -> list:
    """The OpenCL GPUs of this machine, simulators left out."""
    return [d for d in list_devices() if "GPU" in d.type and "oclgrind" not in d.platform.lower()]


def _local_gpus() -> int:
    """How many device workers of this machine can each have a GPU."""
    try:
        return len(_opencl_gpus())
    except Exception:  # noqa: BLE001 - no OpenCL at all: the workers will say so
        return 0
