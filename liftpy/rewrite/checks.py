"""Checking that a rewrite rule preserves semantics on a concrete program.

``check_rule`` applies a rule at every position where it applies, gives the parameters the rewrite
introduces values that satisfy the program's requirements (a small brute-force search: programs under
test are small), evaluates the rewritten program with the reference interpreter on the same inputs, and
compares with the original: exactly for integer data, within a float tolerance otherwise.  The property
tests use it with random programs; users can use it on their own text rules.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import sympy

from ..errors import LiftError
from ..ir.expr import Program
from ..ir.interpreter import evaluate, prepare_inputs
from ..ir.typecheck import check_sizes
from .rule import Rewritten, Rule, applications


@dataclass(frozen=True)
class CheckResult:
    rule: str
    where: str
    params: dict
    ok: bool
    max_error: float
    message: str = ""


def valid_assignments(rw: Rewritten, bindings: Mapping, candidates: list[int], limit: int = 3, seed: int = 0) -> list[dict]:
    """Up to ``limit`` assignments of the rewrite's new parameters under which the program type-checks
    and the rule's own requirements hold."""
    names = [p for p in rw.params]
    if not names:
        return [{}]
    combos = list(itertools.product(candidates, repeat=len(names)))
    random.Random(seed).shuffle(combos)
    found = []
    for combo in combos[:4000]:
        values = dict(zip(names, combo))
        full = {**{sympy.Symbol(str(k), integer=True, positive=True) if isinstance(k, str) else k: v for k, v in bindings.items()}, **values}
        try:
            check_sizes(rw.program, full)
        except LiftError:
            continue
        if not all(bool(sympy.sympify(r.predicate).subs(full)) for r in rw.requirements):
            continue
        found.append({str(k): v for k, v in values.items()})
        if len(found) >= limit:
            break
    return found


def check_rule(
    rule: Rule,
    program: Program,
    inputs: list[np.ndarray],
    sizes: Mapping | None = None,
    candidates: list[int] | None = None,
    per_application: int = 2,
    rtol: float = 1e-4,
    atol: float = 1e-4,
) -> list[CheckResult]:
    """Apply ``rule`` everywhere it applies in ``program`` and compare interpreter results."""
    arrays, bindings = prepare_inputs(program, inputs, {}, sizes)
    expected = evaluate(program, *inputs, sizes=sizes)
    exact = np.issubdtype(np.asarray(expected).dtype, np.integer)
    if candidates is None:
        largest = max([int(v) for v in bindings.values()] + [4])
        candidates = list(range(1, min(largest, 32) + 1))
    results = []
    for r, path, rw in applications(program, [rule]):
        for values in valid_assignments(rw, bindings, candidates, per_application):
            got = evaluate(rw.program, *inputs, sizes={**{str(k): v for k, v in bindings.items()}, **values})
            if np.shape(got) != np.shape(expected):
                results.append(CheckResult(rule.name, rw.step.where, values, False, float("inf"), f"shape {np.shape(got)} != {np.shape(expected)}"))
                continue
            if exact:
                ok = bool(np.array_equal(got, expected))
                err = float(np.max(np.abs(got.astype(np.int64) - expected.astype(np.int64)))) if np.size(got) else 0.0
            else:
                ok = bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))
                err = float(np.max(np.abs(got - expected))) if np.size(got) else 0.0
            results.append(CheckResult(rule.name, rw.step.where, values, ok, err))
    return results
