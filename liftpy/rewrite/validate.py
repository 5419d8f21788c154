"""Checking explored variants end to end: parameter values from the constraint solver, OpenCL on a
device, comparison with the reference interpreter.

For each variant, configurations (a problem size and values of the variant's tuning parameters) are
drawn uniformly from the valid space of each size in turn until enough are found; each is compiled, run,
and compared with the interpreter's result for the original program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..constraints import sample, solve
from ..constraints.infer import variant_space
from ..errors import LiftError
from ..host.kernel import compile_program
from ..ir.expr import Program
from ..ir.interpreter import evaluate
from .variant import Variant


@dataclass(frozen=True)
class ConfigCheck:
    sizes: dict
    params: dict
    ok: bool
    max_error: float
    message: str = ""


@dataclass(frozen=True)
class VariantCheck:
    variant: Variant
    checks: tuple[ConfigCheck, ...] = field(default_factory=tuple)
    feasible: bool = True  # False: no valid parameter value for any of the sizes tried

    @property
    def ok(self) -> bool:
        return self.feasible and bool(self.checks) and all(c.ok for c in self.checks)

    def summary(self) -> str:
        rules = ", ".join(dict.fromkeys(s.rule for s in self.variant.trace)) or "(no rules)"
        if not self.feasible:
            return f"infeasible for these sizes  | {rules}"
        marks = " ".join(f"{'ok' if c.ok else 'FAIL'}{c.params or ''}" for c in self.checks)
        return f"{marks}  | {rules}"


def configurations(variant: Variant, size_list: Sequence[Mapping], count: int, profile=None, seed: int = 0) -> list[tuple[dict, dict]]:
    """Up to ``count`` (sizes, parameter values) pairs, preferring distinct values on the first sizes."""
    out: list[tuple[dict, dict]] = []
    for sizes in size_list:
        space = variant_space(variant, sizes, profile)
        counted = solve(space, seed=seed)
        if counted.size.valid == 0:
            continue
        for params in sample(counted, min(count - len(out), counted.size.valid), seed=seed):
            out.append((dict(sizes), params))
        if len(out) >= count:
            break
    return out


def check_variant(
    variant: Variant,
    program: Program,
    size_list: Sequence[Mapping],
    make_inputs: Callable[[Mapping], list[np.ndarray]],
    count: int = 3,
    device=None,
    profile=None,
    rtol: float = 1e-4,
    atol: float = 1e-4,
) -> VariantCheck:
    """Compile and run ``variant`` for ``count`` configurations; compare with the interpreter on ``program``."""
    configs = configurations(variant, size_list, count, profile)
    if not configs:
        return VariantCheck(variant, (), feasible=False)
    checks = []
    expected_cache: dict = {}
    for sizes, params in configs:
        key = tuple(sorted(sizes.items()))
        if key not in expected_cache:
            inputs = make_inputs(sizes)
            expected_cache[key] = (inputs, evaluate(program, *inputs, sizes=sizes))
        inputs, expected = expected_cache[key]
        try:
            kernel = compile_program(variant.program, {**sizes, **params}, device=device, placements=variant.placement_map)
            got = kernel.run(*inputs).output
        except LiftError as e:
            checks.append(ConfigCheck(sizes, params, False, float("inf"), str(e).splitlines()[0]))
            continue
        got = got.reshape(expected.shape) if got.size == expected.size else got
        ok = got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))
        err = float(np.max(np.abs(got - expected))) if got.shape == expected.shape and got.size else float("inf")
        checks.append(ConfigCheck(sizes, params, ok, err))
    return VariantCheck(variant, tuple(checks))
