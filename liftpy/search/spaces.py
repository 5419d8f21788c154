"""The valid spaces of a problem's variants and their analytical models, computed on first use, kept on disk
(``liftpy.results.cache``) and, where the exploration lends its worker processes, computed there several at a
time: what both search strategies ask of the variants (``liftpy.search.uniform``, ``liftpy.search.model``).

The module-level functions at the end are the tasks ``Spaces`` hands to worker processes (passed by
reference: ``Spaces.use_workers``).
"""

from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import ProcessPoolExecutor
from typing import Sequence

from ..constraints import solver
from ..constraints.infer import variant_space
from ..errors import LiftError
from ..model import Machine, VariantModel
from ..model.analytical import measure_at, model_code
from ..model.counts import count
from ..results.cache import SCREEN_CODE, memo, recall, remember
from ..results.store import config_key
from ..runtime.process import quiet_context
from .variants import variant_text

PREFETCH_AT_MIN = 8  # models of other problems' points worth starting processes for (``Spaces.prefetch_at``)


class Spaces:
    """The valid spaces of a problem's variants and their analytical models, computed on first use."""

    def __init__(self, variants: Sequence, sizes: dict, profile, seed: int = 0, keys: Sequence[str] | None = None,
                 program=None):
        """``keys``: a stable name of each variant for the disk cache (its text by default); ``program``: the
        high-level program the variants derive from, whose work at given sizes scales the learned model's
        features (``work``; without it they are not scaled)."""
        self.variants = variants
        self.program = program
        self._work_expr = None
        self._works: dict = {}
        self._texts: dict = {}
        self._elsewhere: dict = {}  # predictions of other problems' points read or made (``predict_at``)
        self.keys = keys
        self.sizes = dict(sizes)
        self.profile = profile
        self.seed = seed
        self._counted: dict = {}
        self._spaces: dict = {}
        self._checkers: dict = {}
        self._models: dict = {}
        self._access: dict = {}
        self._screens: dict = {}  # ``screen`` results, by (variant, n, seed)
        self._machine = None
        self._profile_key = None
        self._workers = None  # ``use_workers``

    def use_workers(self, run_all, width: int) -> None:
        """Let ``prefetch_access`` hand its points to the caller's worker processes: ``run_all(function,
        arguments)`` returns, in order, ``(True, result)`` of each call or ``(False, None)`` where its worker
        failed, on ``width`` processes.  An exploration's code-generation workers wait while its strategy
        proposes, and its proposals lower tens of candidates each (``ModelSearch._best_first``)."""
        self._workers = (run_all, width) if run_all is not None and width > 1 else None

    def prefetching(self) -> int:
        """How many points ``prefetch_access`` computes at once with the workers of ``use_workers`` (1 without)."""
        return self._workers[1] if self._workers is not None else 1

    def has_access(self, i: int, config: dict) -> bool:
        return (i, config_key(config)) in self._access

    def work(self, sizes: dict | None = None) -> float | None:
        """The problem's work at this problem's (or other) ``sizes``: user-function applications of the
        high-level program, counted as the analytical model counts a variant's (``liftpy.model.counts``); None
        without the program, or where it cannot be counted.  What ``feature_vector`` scales features by,
        so that the measurements of problems of other sizes train the learned model alike."""
        if self.program is None:
            return None
        if self._work_expr is None:
            try:
                self._work_expr = count(self.program).flops
            except (LiftError, TypeError, ValueError):
                self._work_expr = False
        if self._work_expr is False:
            return None
        at = tuple(sorted((self.sizes if sizes is None else sizes).items()))
        if at not in self._works:
            expr, named = self._work_expr, dict(at)
            if hasattr(expr, "free_symbols"):
                expr = expr.subs({sym: named[sym.name] for sym in expr.free_symbols if sym.name in named})
            try:
                value = float(expr)
            except (TypeError, ValueError):
                value = None
            self._works[at] = value if value is not None and value > 0 and math.isfinite(value) else None
        return self._works[at]

    def space(self, i: int):
        """The inferred space (parameters and constraints) of variant ``i``; None when inference fails."""
        if i not in self._spaces:
            try:
                # Cached on disk like the screens: a resumed search asks for the spaces of the variants
                # of its best points and their siblings (to expand them) before its first run, and
                # inferring them is most of that time.
                self._spaces[i] = memo("spaces", self._key(i), lambda: variant_space(self.variants[i], self.sizes, self.profile), SCREEN_CODE)
            except LiftError:
                self._spaces[i] = None
        return self._spaces[i]

    def counted(self, i: int):
        """The solved space of variant ``i`` (None when it has no valid configuration): what sampling
        needs; checking one configuration needs only ``space``."""
        if i not in self._counted:
            space = self.space(i)
            try:
                c = solver.solve(space, seed=self.seed) if space is not None else None
                self._counted[i] = c if c is not None and c.size.valid else None
            except LiftError:
                self._counted[i] = None
        return self._counted[i]

    def valid(self, i: int, config: dict) -> bool:
        """Whether ``config`` meets every constraint of variant ``i``'s space."""
        space = self.space(i)
        if space is None or set(space.names) != set(config):
            return False
        if i not in self._checkers:
            self._checkers[i] = solver.checker(space)
        try:
            return not self._checkers[i](config)
        except LiftError:
            return False

    def sample(self, i: int, n: int, seed: int) -> list[dict]:
        c = self.counted(i)
        if c is None:
            return []
        return solver.sample(c, min(n, c.size.valid), seed=seed)

    def screen(self, i: int, n: int, seed: int) -> list[tuple[dict, object]]:
        """``n`` configurations of variant ``i`` drawn with ``seed``, each with the analytical model's
        prediction (finite ones only): cached on disk, since solving and modelling are most of what a
        resumed search does before its first run."""
        def compute():
            configs = self.sample(i, n, seed)
            if not configs:
                return []
            model = self.model(i)
            out = []
            for c in configs:
                p = model.predict(c)
                if math.isfinite(p.seconds):
                    out.append((c, p))
            return out

        if (i, n, seed) not in self._screens:
            self._screens[(i, n, seed)] = memo("screens", self._screen_key(i, n, seed), compute, SCREEN_CODE)
        return self._screens[(i, n, seed)]

    def _screen_key(self, i: int, n: int, seed: int) -> str:
        return f"{self._key(i)}|{n}|{seed}"

    def prefetch_screens(self, draws) -> None:
        """``screen`` of many variants at once, (variant, n, seed) each, on the workers of ``use_workers``
        (nothing without them): a fresh problem's first proposal screens a chunk of variants, each its space
        inferred and solved and its probe lowered (0.8 s a convolution tiling on this project's 2-core
        machine: VGG-16 layer 24's 40 tiled variants took 33 s in the driver process, and some 15 s of a
        guided search on the H100 host, where fifteen compile workers sat idle).  A worker's spaces and model
        come back with its screen, so that the proposal does not infer them again."""
        if self._workers is None:
            return
        todo = []
        for i, n, seed in draws:
            if (i, n, seed) in self._screens:
                continue
            found = recall("screens", self._screen_key(i, n, seed), SCREEN_CODE)
            if found is not None:
                self._screens[(i, n, seed)] = found
            else:
                todo.append((i, n, seed))
        if len(todo) < 2:
            return
        args = [(self.variants[i], self._variant_key(i), self.sizes, self.profile, self.seed, n, seed) for i, n, seed in todo]
        for (i, n, seed), (ok, value) in zip(todo, self._workers[0](_screen_of, args)):
            if not ok:
                continue  # a failed worker: screened here when asked
            space, code, screened = value
            self._made_elsewhere(i, space, code)
            self._screens[(i, n, seed)] = screened

    def prefetch_models(self, indices) -> None:
        """The spaces and models of many variants at once, on the workers of ``use_workers`` (nothing without
        them), those not known here or on disk: expanding a fast point of a search over thousands of variants
        meets tens of siblings and reduced forms never screened (1.1 s each on this project's 2-core machine:
        their space inferred and solved, their probe lowered), which the proposal then only reads."""
        if self._workers is None:
            return
        todo = []
        for i in dict.fromkeys(indices):
            if i in self._models or (i in self._spaces and self._spaces[i] is None):
                continue  # (known, or known to have no space)
            probe = recall("probes", self._key(i), SCREEN_CODE)
            if (recall("spaces", self._key(i), SCREEN_CODE) is None or probe is None
                    or recall("models", self._model_key(i, self.sizes, probe), SCREEN_CODE) is None):
                todo.append(i)
        if len(todo) < 2:
            return
        args = [(self.variants[i], self._variant_key(i), self.sizes, self.profile, self.seed) for i in todo]
        for i, (ok, value) in zip(todo, self._workers[0](_model_of, args)):
            if ok:  # (a failed worker: made here when asked)
                self._made_elsewhere(i, *value)

    def _made_elsewhere(self, i: int, space, code) -> None:
        """Variant ``i``'s space and model code as a worker process made them (the model None without code)."""
        self._spaces.setdefault(i, space)
        if code is not None:
            self._models.setdefault(i, VariantModel(code, self.variants[i].params, self.machine))

    def access(self, i: int, config: dict) -> tuple | None:
        """How the reads of each kernel of variant ``i`` are served at ``config`` itself (coalescing and bank
        conflicts, ``liftpy.model.access``), or on a CPU device (no warps) the operations its code executes
        there (``liftpy.model.operations``); None where the emitter refuses the point.  A variant's model
        otherwise uses what its probe measured, and the coalescing of one tiled variant ranges from 2 to 31
        over its configurations.  Kept on disk: a resumed search re-ranks the candidates and relearns the
        points it measured."""
        key = (i, config_key(config))
        if key not in self._access:
            self._access[key] = memo("access", self._access_key(i, config), lambda: _access_of(self._access_task(i, config)),
                                     SCREEN_CODE)
        return self._access[key]

    def prefetch_access(self, points, jobs: int = 1) -> None:
        """``access`` of many points (variant, configuration) at once, in ``jobs`` processes (on the workers of
        ``use_workers`` where there are): what ranking hundreds of measured points asks (a benchmark's
        held-out points), at some 0.1 s of code generation each for a convolution tiling."""
        todo, asked = [], set()
        for i, config in points:
            key = (i, config_key(config))
            if key in self._access or key in asked:
                continue
            asked.add(key)
            found = recall("access", self._access_key(i, config), SCREEN_CODE)
            if found is not None:
                self._access[key] = found
            else:
                todo.append((i, dict(config)))
        if not todo:
            return
        args = [self._access_task(i, c) for i, c in todo]
        if self._workers is not None and len(todo) > 1:
            done = self._workers[0](_access_of, args)
            todo = [point for point, (ok, _) in zip(todo, done) if ok]  # a failed worker: computed here when asked
            found = [value for ok, value in done if ok]
        elif jobs > 1 and len(todo) > 1:
            with ProcessPoolExecutor(min(jobs, len(todo)), mp_context=quiet_context()) as pool:
                found = list(pool.map(_access_of, args, chunksize=max(1, len(todo) // (4 * jobs))))
        else:
            found = [_access_of(a) for a in args]
        for (i, config), value in zip(todo, found):
            self._access[(i, config_key(config))] = value
            remember("access", self._access_key(i, config), value, SCREEN_CODE)

    def predict(self, i: int, config: dict):
        """The analytical model's prediction for one point, how its reads are served measured at the point
        itself: what a search asks of the few candidates it is about to measure and of what it measured."""
        return self.model(i).predict(config, self.access(i, config))

    def prefetch_at(self, points, jobs: int = 1) -> None:
        """``predict_at`` of many points of other problems (variant, sizes, configuration) at once, their
        models made in ``jobs`` processes: each costs a code generation at its own sizes the first time (0.1-0.3
        s for a convolution tiling), and a search learns up to ``liftpy.explore.transfer.TRANSFER_POINTS`` of them before its
        first proposal."""
        todo, asked = [], set()
        for i, sizes, config in points:
            key = self._elsewhere_key(i, sizes, config)
            if key in asked or key in self._elsewhere:
                continue
            found = recall("elsewhere", key, SCREEN_CODE)
            if found is not None:  # read once: predict_at takes it from here
                self._elsewhere[key] = found
                continue
            asked.add(key)
            todo.append((key, i, dict(sizes), dict(config)))
        warm = self._workers is not None  # the exploration's workers, started already (``use_workers``)
        if len(todo) < (2 if warm else PREFETCH_AT_MIN) or (jobs < 2 and not warm):
            return  # predict_at makes them one by one: fewer than starting the processes costs
        args = [(self.variants[i].program, sizes, self.variants[i].params, config, self.variants[i].placement_map, self.cpu)
                for _, i, sizes, config in todo]
        if warm:
            # A network's layers learn from the layers before them, each layer's new points: new processes
            # for each (their imports: seconds) cost more than the models.
            codes = [code if ok else None for ok, code in self._workers[0](_model_code_of, args)]
        else:
            # Spawned, not forked: a resumed search rebuilds its strategy in a thread beside the main one, and a
            # fork copies whatever lock another thread holds at that moment.
            with ProcessPoolExecutor(min(jobs, len(todo)), mp_context=quiet_context("spawn")) as pool:
                codes = list(pool.map(_model_code_of, args, chunksize=max(1, len(todo) // (4 * jobs))))
        for (key, i, sizes, config), code in zip(todo, codes):
            if code is None:
                continue  # predict_at meets the refusal itself, as it would have
            remember("models", self._model_key(i, sizes, config), code, SCREEN_CODE)
            # Kept here too, so that they serve without a disk cache (``LIFTPY_CACHE_DIR=off``).
            self._models[self._model_slot(i, sizes, config)] = VariantModel(code, self.variants[i].params, self.machine)

    def predict_at(self, i: int, sizes: dict, config: dict):
        """The analytical model's prediction for a point of variant ``i`` at other ``sizes`` (another problem's
        point, measured there), how its reads are served measured at ``config`` itself.  Kept on disk: a
        search learns up to ``liftpy.explore.transfer.TRANSFER_POINTS`` such points before its first proposal
        (``ModelSearch.learn_elsewhere``); each has a model of its own (its configuration is the probe), and
        rebuilding those from their disk cache took 1 ms a point on a 2-core machine, this cache 0.07 ms."""
        key = self._elsewhere_key(i, sizes, config)
        if key not in self._elsewhere:
            self._elsewhere[key] = memo("elsewhere", key, lambda: self.model(i, sizes, config).predict(config), SCREEN_CODE)
        return self._elsewhere[key]

    def _elsewhere_key(self, i: int, sizes: dict, config: dict) -> str:
        problem = f"{self._variant_key(i)}|{sorted(dict(sizes).items())}|{self._profile_text()}"
        return f"{hashlib.sha1(problem.encode()).hexdigest()}|{config_key(config)}"

    def _access_key(self, i: int, config: dict) -> str:
        """Point (``i``, ``config``) at these sizes on this device: what its code depends on (not the seed)."""
        problem = f"{self._variant_key(i)}|{self._problem_text()}"
        return f"{hashlib.sha1(problem.encode()).hexdigest()}|{config_key(config)}"

    def _access_task(self, i: int, config: dict) -> tuple:
        v = self.variants[i]
        return v.program, {**self.sizes, **config}, self.cpu, v.placement_map

    def _variant_key(self, i: int) -> str:
        if self.keys is not None:
            return self.keys[i]
        if i not in self._texts:  # printing a tiled variant takes some 10 ms
            self._texts[i] = variant_text(self.variants[i])
        return self._texts[i]

    def _key(self, i: int) -> str:
        text = self._variant_key(i)
        return hashlib.sha1(f"{text}|{self._problem_text()}|{self.seed}".encode()).hexdigest()

    def problem_key(self) -> str:
        """These sizes, this device profile and this seed, as a digest: with the variants, what every draw
        of points depends on (a uniform search's plan, kept on disk by the exploration loop)."""
        return hashlib.sha1(f"{self._problem_text()}|{self.seed}".encode()).hexdigest()

    def _problem_text(self) -> str:
        """These sizes and this device profile, as the disk caches' keys name them."""
        return f"{sorted(self.sizes.items())}|{self._profile_text()}"

    def _profile_text(self) -> str:
        if self._profile_key is None:
            self._profile_key = json.dumps(self.profile.record(), sort_keys=True, default=str)
        return self._profile_key

    @property
    def machine(self):
        """The numbers of the device the analytical model uses (``liftpy.model.Machine``)."""
        if self._machine is None:
            self._machine = Machine.from_profile(self.profile)
        return self._machine

    @property
    def cpu(self) -> bool:
        """Whether the model measures the operations of a point's code (a CPU device) rather than how its
        reads are served (``liftpy.model.analytical.measure_at``)."""
        return not self.machine.is_gpu

    def _probe(self, i: int) -> dict | None:
        """The configuration at which the model of variant ``i`` measures how its reads coalesce (on a CPU
        device, which has no warps, the operations of its code: ``model_code``): one drawn from its valid
        space with the search's seed (None when it has none)."""
        def draw():
            configs = self.sample(i, 1, self.seed)
            return dict(configs[0]) if configs else None

        # Kept on disk like the spaces: a resumed search finds its models without solving any space first.
        return memo("probes", self._key(i), draw, SCREEN_CODE)

    def model(self, i: int, sizes: dict | None = None, config: dict | None = None):
        """The analytical model of variant ``i`` at this problem's sizes (or at other ``sizes``, where
        ``config``, a configuration valid there, is the probe of how its reads are served)."""
        key = i if sizes is None else self._model_slot(i, sizes, config)
        if key not in self._models:
            v = self.variants[i]
            at = self.sizes if sizes is None else dict(sizes)
            probe = self._probe(i) if sizes is None else (dict(config) if config is not None else None)
            # The expressions are kept on disk (by variant, sizes and probe): a resumed search meets the
            # same variants.
            code = memo("models", self._model_key(i, at, probe),
                        lambda: model_code(v.program, at, v.params, probe, v.placement_map, self.cpu), SCREEN_CODE)
            self._models[key] = VariantModel(code, v.params, self.machine)
        return self._models[key]

    @staticmethod
    def _model_slot(i: int, sizes: dict, config: dict | None) -> tuple:
        """Where ``model`` keeps the model of variant ``i`` at other sizes, probed at ``config``."""
        return (i, tuple(sorted(sizes.items())), tuple(sorted((config or {}).items())))

    def _model_key(self, i: int, sizes: dict, probe: dict | None) -> str:
        device = "cpu" if self.cpu else "gpu"  # what the probe measures (``model_code``)
        return f"{self._variant_key(i)}|{sorted(sizes.items())}|{sorted((probe or {}).items())}|{device}"


def _model_code_of(args):
    """``model_code`` of a variant at other sizes with a configuration as its probe, None where it cannot be
    made (a worker process's task: ``Spaces.prefetch_at``)."""
    program, sizes, params, probe, placements, cpu = args
    try:
        return model_code(program, sizes, params, probe, placements, cpu)
    except LiftError:
        return None


def _screen_of(args):
    """``Spaces.screen`` of one variant in a worker process, with the variant's space and model code
    (``Spaces.prefetch_screens``); what it computes is also kept in the disk caches, under the same keys."""
    variant, key, sizes, profile, seed, n, draw = args
    spaces = Spaces([variant], sizes, profile, seed, keys=[key])
    screened = spaces.screen(0, n, draw)
    model = spaces._models.get(0)  # made by the screening where the variant has configurations
    return spaces.space(0), model.code if model is not None else None, screened


def _model_of(args):
    """The space and model code of one variant in a worker process (``Spaces.prefetch_models``), the model None
    where the space is; what it computes is also kept in the disk caches, under the same keys."""
    variant, key, sizes, profile, seed = args
    spaces = Spaces([variant], sizes, profile, seed, keys=[key])
    space = spaces.space(0)
    return space, spaces.model(0).code if space is not None else None


def _access_of(args):
    """``measure_at`` of one point (a worker process's task)."""
    program, bindings, cpu, placements = args
    return measure_at(program, bindings, placements, cpu)
