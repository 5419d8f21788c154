"""The tuning-space solver (issue 4): domains, order, counting, uniform sampling, enumeration, conflicts.

The reference for every property is brute force over the declared candidates, with each predicate
evaluated by sympy itself (``xreplace`` with integers), so nothing here shares code with the compiled
predicates or the search it checks.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import sys
from functools import lru_cache
from pathlib import Path

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from liftpy.constraints import (
    Constraint,
    Parameter,
    Space,
    count_space,
    decode,
    derive_domains,
    enumerate_valid,
    explain,
    format_space,
    plan_space,
    power_of_two,
    sample,
    solve,
    violated,
)
from liftpy.constraints.compile import compile_predicate, pow2_imageset
from liftpy.constraints.solver import _random_walk
from liftpy.errors import ConstraintError
from liftpy.ir.types import size_var

ROOT = Path(__file__).resolve().parents[1]


# -- the reference: sympy's own evaluation, brute force over declared values --------------------------


@lru_cache(maxsize=None)
def _holds(pred: sympy.Basic, items: tuple) -> bool:
    if isinstance(pred, sympy.Contains) and pow2_imageset(pred.args[1]):
        v = pred.args[0].xreplace({sympy.Symbol(k, integer=True, positive=True): sympy.Integer(x) for k, x in items})
        v = int(v)
        return v > 0 and v & (v - 1) == 0
    subs = {s: sympy.Integer(dict(items)[s.name]) for s in pred.free_symbols}
    try:
        r = pred.xreplace(subs)
    except (TypeError, ZeroDivisionError):
        return False  # an undefined value (x/0, x % 0) never satisfies a condition
    if r is sympy.true or r is sympy.false:
        return bool(r)
    try:
        return bool(r.doit() if hasattr(r, "doit") else r)
    except TypeError:
        return False


def holds(c: Constraint, cfg: dict) -> bool:
    return _holds(c.predicate, tuple(sorted((n, cfg[n]) for n in c.names)))


def declared_values(p: Parameter) -> list[int]:
    if p.domain is not None:
        return [v for v in p.domain if (p.lo is None or v >= p.lo) and (p.hi is None or v <= p.hi)]
    return list(range(1 if p.lo is None else p.lo, p.hi + 1))


def brute_force(space: Space, constraints=None) -> set[tuple]:
    cons = space.constraints if constraints is None else constraints
    names = space.names
    out = set()
    for values in itertools.product(*(declared_values(p) for p in space.parameters)):
        cfg = dict(zip(names, values))
        if all(holds(c, cfg) for c in cons):
            out.add(values)
    return out


def as_tuple(space: Space, cfg: dict) -> tuple:
    return tuple(cfg[n] for n in space.names)


# -- random small spaces --------------------------------------------------------------------------------

NAMES = ("a", "b", "c", "d")
S = {n: size_var(n) for n in NAMES}


@st.composite
def parameters(draw, name):
    kind = draw(st.sampled_from(["range", "range", "set"]))
    if kind == "range":
        lo = draw(st.integers(0, 3))
        return Parameter(name, lo=lo, hi=lo + draw(st.integers(0, 11)))
    return Parameter(name, domain=tuple(draw(st.sets(st.integers(0, 30), min_size=1, max_size=8))))


@st.composite
def constraints(draw, names):
    x, y = (S[n] for n in draw(st.permutations(names))[:2]) if len(names) > 1 else (S[names[0]], S[names[0]])
    z = S[draw(st.sampled_from(names))]
    k = draw(st.integers(1, 12))
    limit = draw(st.integers(0, 60))  # a random "device limit"
    form = draw(st.sampled_from([
        "divides", "divides_shift", "divides_const", "product", "product3", "ratio", "linear", "ge",
        "contains", "pow2", "ne", "floor", "or", "tiling",
    ]))
    pred, prim, kind = {
        "divides": (sympy.Eq(sympy.Mod(x, y), 0), "split", "algorithmic"),
        "divides_shift": (sympy.Eq(sympy.Mod(x + k, y), 0), "split", "algorithmic"),
        "divides_const": (sympy.Eq(sympy.Mod(k * 6, y), 0), "split", "algorithmic"),
        "product": (x * y <= limit, "device:max_work_group_size", "hardware"),
        "product3": (x * y * z <= 4 * limit, "device:local_mem_bytes", "hardware"),
        "ratio": (x / y <= k, "device:max_work_item_sizes", "hardware"),
        "linear": (2 * x + 3 * y <= limit, "range", "range"),
        "ge": (x >= y + k - 6, "range", "range"),
        "contains": (sympy.Contains(x, sympy.FiniteSet(1, 2, 4, 8, k)), "asVector", "range"),
        "pow2": (power_of_two(x), "asVector", "range"),
        "ne": (sympy.Ne(x, y), "range", "range"),
        "floor": (sympy.floor(x / (y + 1)) >= 1, "range", "range"),
        "or": (sympy.Or(x <= k, sympy.Eq(sympy.Mod(x, 2), 0)), "range", "range"),
        "tiling": (sympy.Eq(sympy.Mod(k + 10 + x - y, y - 2), 0), "slideStrict", "algorithmic"),
    }[form]
    return Constraint(pred, f"{form} #{draw(st.integers(0, 99))}: {pred}", prim, kind)


@st.composite
def spaces(draw, max_params=4, min_constraints=0, max_constraints=5):
    n = draw(st.integers(1, max_params))
    names = NAMES[:n]
    params = tuple(draw(parameters(nm)) for nm in names)
    cons = tuple(draw(st.lists(constraints(names), min_size=min_constraints, max_size=max_constraints)))
    return Space(params, cons)


PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


# -- properties ---------------------------------------------------------------------------------------


@PROPERTY
@given(spaces())
@pytest.mark.slow
def test_enumeration_and_count_equal_brute_force(space):
    truth = brute_force(space)
    counted = solve(space)
    assert counted.size.exact
    assert counted.size.valid == len(truth)
    listed = [as_tuple(space, c) for c in enumerate_valid(counted)]
    assert len(listed) == len(set(listed)), "enumeration repeats a configuration"
    assert set(listed) == truth, f"missed {truth - set(listed)}, extra {set(listed) - truth}"
    assert counted.size.raw >= counted.size.valid
    assert [as_tuple(space, decode(counted, i)) for i in range(len(truth))] == listed


@PROPERTY
@given(spaces(), st.integers(1, 40), st.integers(0, 2**32))
@pytest.mark.slow
def test_samples_are_distinct_and_valid(space, n, seed):
    counted = solve(space, seed=seed % 7)
    got = sample(counted, n, seed)
    assert len(got) == min(n, counted.size.valid)
    assert len({as_tuple(space, c) for c in got}) == len(got), "samples repeat"
    for cfg in got:
        assert all(holds(c, cfg) for c in space.constraints), cfg
        assert violated(space, cfg) == ()
        for p in space.parameters:
            assert cfg[p.name] in declared_values(p)


@PROPERTY
@given(st.one_of(spaces(max_params=3), spaces(max_params=3, min_constraints=4, max_constraints=8)))
@pytest.mark.slow
def test_impossible_spaces_get_a_minimal_explanation(space):
    truth = brute_force(space)
    why = explain(space)
    event("satisfiable" if truth else f"conflict of {len(why.constraints) if why else 0}")
    if truth:
        assert why is None
        return
    assert why is not None and why.constraints, why
    core = list(why.constraints)
    assert all(any(c is x for x in space.constraints) for c in core)
    for c in core:
        assert c.origin in why.text
    # A conflict among constraints linking parameters is stated over each parameter's candidates, i.e.
    # together with the constraints on single parameters; a conflict on one parameter stands alone.
    context = [] if all(len(c.names) <= 1 for c in core) else [c for c in space.constraints if len(c.names) == 1]
    assert not brute_force(space, context + core), "the reported constraints do hold together"
    if not why.unproven_minimal:
        for c in core:
            rest = [x for x in core if x is not c]
            assert brute_force(space, context + rest), f"not minimal: the set without '{c.origin}' still conflicts"


def _chi_square_p(observed: list[int], expected: float) -> float:
    stat = sum((o - expected) ** 2 / expected for o in observed)
    dof = len(observed) - 1
    return float(mpmath.gammainc(dof / 2, stat / 2, regularized=True))  # upper tail: P(X >= stat)


def _unbalanced_space() -> Space:
    # 88 valid points; a = 1 has 36 completions and a = 6 only 6, so a sampler that is uniform per level
    # (each a, then each b) over-weights the sparse sub-trees by up to a factor of 88/36.
    a, b = S["a"], S["b"]
    return Space(
        (Parameter("a", lo=1, hi=6), Parameter("b", lo=1, hi=36)),
        (Constraint(sympy.Eq(sympy.Mod(b, a), 0), "split(a) of [float]b needs b % a == 0", "split", "algorithmic"),),
    )


def test_sampler_is_uniform_chi_square():
    space = _unbalanced_space()
    counted = solve(space)
    points = sorted(brute_force(space))
    assert counted.size.valid == len(points) == 88
    index = {p: i for i, p in enumerate(points)}
    rng = random.Random(20260422)
    draws = 22_000  # 250 expected per point: the chi-square approximation is sound, the test strong

    single = [0] * len(points)
    for _ in range(draws):
        (cfg,) = sample(counted, 1, rng)
        single[index[as_tuple(space, cfg)]] += 1
    p_single = _chi_square_p(single, draws / len(points))

    # Distinct draws: every point must be included equally often.
    included = [0] * len(points)
    for _ in range(draws // 8):
        for cfg in sample(counted, 8, rng):
            included[index[as_tuple(space, cfg)]] += 1
    p_distinct = _chi_square_p(included, draws / len(points))

    # The same test rejects a per-level uniform random walk (Lift's backtracking sampler): it has power.
    walk = [0] * len(points)
    for _ in range(draws):
        cfg: dict = {}
        assert _random_walk(counted.plan.groups[0], rng, cfg)
        walk[index[as_tuple(space, cfg)]] += 1
    p_walk = _chi_square_p(walk, draws / len(points))

    assert p_single > 1e-3, f"counting sampler looks biased (p = {p_single:.2e})"
    assert p_distinct > 1e-3, f"distinct sampler looks biased (p = {p_distinct:.2e})"
    assert p_walk < 1e-9, f"the test cannot tell a biased sampler (p = {p_walk:.2e})"


# -- cycles, groups, domains ----------------------------------------------------------------------------


def test_cycles_are_condensed_and_counted():
    a, b, c = S["a"], S["b"], S["c"]
    space = Space(
        (Parameter("a", lo=1, hi=30), Parameter("b", lo=1, hi=30), Parameter("c", lo=1, hi=30)),
        (
            Constraint(sympy.Eq(sympy.Mod(b, a), 0), "a divides b", "split", "algorithmic"),
            Constraint(sympy.Eq(sympy.Mod(c, b), 0), "b divides c", "split", "algorithmic"),
            Constraint(sympy.Eq(sympy.Mod(a + 30, c), 0), "c divides a + 30", "split", "algorithmic"),
            Constraint(sympy.Eq(sympy.Mod(a, b), 0), "b divides a", "split", "algorithmic"),
        ),
    )
    counted = solve(space)
    (group,) = counted.plan.groups
    assert group.order.cycles and set(group.order.cycles[0]) == {"a", "b", "c"}
    truth = brute_force(space)
    assert counted.size.valid == len(truth)
    assert {as_tuple(space, x) for x in enumerate_valid(counted)} == truth
    assert "cycle" in format_space(space, counted)


def test_independent_groups_multiply_and_group_order_is_seeded():
    a, b, c, d = (S[n] for n in NAMES)
    space = Space(
        tuple(Parameter(n, lo=1, hi=12) for n in NAMES),
        (
            Constraint(sympy.Eq(sympy.Mod(12, a * b), 0), "a*b divides 12", "split", "algorithmic"),
            Constraint(c + d <= 9, "c + d <= 9", "range", "range"),
        ),
    )
    orders = {solve(space, seed=s).plan.order for s in range(8)}
    assert len(orders) > 1, "groups are not placed in a random order"
    for s in range(3):
        counted = solve(space, seed=s)
        assert [len(g.params) for g in sorted(counted.plan.groups, key=lambda g: g.params)] == [2, 2]
        assert counted.size.valid == len(brute_force(space)) == 18 * 36


def test_domains_from_constraints_on_one_parameter():
    t, s, v, p, r = (size_var(n) for n in ("t", "s", "v", "p", "r"))
    space = Space(
        (Parameter("t", lo=3), Parameter("s"), Parameter("v"), Parameter("p", lo=0), Parameter("r", lo=0)),
        (
            Constraint(t <= 2 * 114, "tile at most twice the padded input", "range", "range"),
            Constraint(sympy.Eq(sympy.Mod(112, s), 0), "split(s) of [float]112 needs 112 % s == 0", "split", "algorithmic"),
            Constraint(sympy.Contains(v, sympy.FiniteSet(1, 2, 4, 8, 16)), "vector widths", "asVector", "range"),
            Constraint(power_of_two(p), "p is a power of two", "range", "range"),
            Constraint(4 * p * p <= 4096, "4 B * p * p <= 4 KiB", "device:local_mem_bytes", "hardware"),
            Constraint(r <= t - 3, "padding below the tile", "range", "range"),
        ),
    )
    d = derive_domains(space)
    assert tuple(d["t"].values) == tuple(range(3, 229))
    assert tuple(d["s"].values) == (1, 2, 4, 7, 8, 14, 16, 28, 56, 112)
    assert tuple(d["v"].values) == (1, 2, 4, 8, 16)
    assert tuple(d["p"].values) == (1, 2, 4, 8, 16, 32)
    assert tuple(d["r"].values) == tuple(range(0, 226)), "bound implied through t's bound"


def test_unbounded_parameter_is_a_clear_error():
    x, y = S["a"], S["b"]
    space = Space(
        (Parameter("a", lo=1, hi=8), Parameter("b")),
        (Constraint(y >= x, "b at least a", "range", "range"),),
    )
    with pytest.raises(ConstraintError, match=r"parameter b has no finite set of candidate values"):
        plan_space(space)


def test_unknown_symbol_is_rejected():
    with pytest.raises(ConstraintError, match="not a parameter"):
        Space((Parameter("a", hi=3),), (Constraint(S["a"] <= S["b"], "a <= b", "range", "range"),))


def test_compiled_predicates_are_integer_exact():
    a, b = S["a"], S["b"]
    big = 10**17
    # In floats (big*a + 1)/a == big for a = 3; exactly it is just above, so the relation is false.
    f = compile_predicate((big * a + 1) / a <= big, ["a"])
    assert f(3) is False and f(1) is False
    g = compile_predicate(sympy.floor((big * a + 1) / b) >= big, ["a", "b"])
    assert g(3, 3) is True and g(3, 4) is False
    h = compile_predicate(sympy.Eq(sympy.Mod(a, b), 0), ["a", "b"])
    assert h(6, 0) is False, "division by zero must violate, not crash"


def test_count_budget_falls_back_to_an_estimate():
    a, b, c = S["a"], S["b"], S["c"]
    space = Space(
        (Parameter("a", lo=1, hi=40), Parameter("b", lo=1, hi=40), Parameter("c", lo=1, hi=40)),
        (Constraint(a * b * c <= 4000, "a*b*c <= 4000", "device:max_work_group_size", "hardware"),
         Constraint(a + b >= c, "a + b >= c", "range", "range")),
    )
    exact = solve(space).size.valid
    est = count_space(plan_space(space), max_nodes=5)
    assert not est.size.exact and not est.uniform
    assert abs(est.size.valid - exact) / exact < 0.15, (est.size, exact)
    got = sample(est, 20, 3)
    assert len(got) == 20 and all(violated(space, g) == () for g in got)
    with pytest.raises(ConstraintError):
        list(enumerate_valid(est))


# -- explanations and printing --------------------------------------------------------------------------


def _work_group_space(max_wg: int, max_s: int | None = None) -> Space:
    s, v = S["a"], S["b"]
    cons = [
        Constraint(sympy.Eq(sympy.Mod(64, s), 0), "split(a) of [float]64 needs 64 % a == 0", "split", "algorithmic"),
        Constraint(sympy.Eq(sympy.Mod(s, v), 0), "asVector(b) of [float]a needs a % b == 0", "asVector", "algorithmic"),
        Constraint(64 / s <= max_wg, f"work-group size 64/a <= {max_wg}", "device:max_work_group_size", "hardware"),
    ]
    if max_s is not None:
        cons.append(Constraint(s <= max_s, f"a <= {max_s} (tile range)", "range", "range"))
    return Space((Parameter("a"), Parameter("b", domain=(1, 2, 4, 8, 16))), tuple(cons))


def test_device_too_small_is_explained_by_its_limit():
    space = _work_group_space(0)
    why = explain(space)
    assert why is not None
    assert [c.primitive for c in why.constraints] == ["device:max_work_group_size"]
    assert "work-group size 64/a <= 0" in why.text and "can never hold" in why.text


def test_two_constraint_conflict_names_both_origins():
    space = _work_group_space(8, max_s=4)  # 64/a <= 8 needs a >= 8, the range allows a <= 4
    why = explain(space)
    assert why is not None
    assert {c.primitive for c in why.constraints} == {"device:max_work_group_size", "range"}
    assert "64/a <= 8" in why.text and "a <= 4 (tile range)" in why.text
    assert solve(_work_group_space(8, max_s=8)).size.valid > 0
    text = format_space(space, solve(space), explanation=why)
    assert "valid: 0" in text and "cannot hold together" in text


def test_conflict_on_one_parameter():
    a = S["a"]
    space = Space(
        (Parameter("a", domain=(3, 5, 6)),),
        (Constraint(sympy.Eq(sympy.Mod(112, a), 0), "split(a) of [float]112 needs 112 % a == 0", "split", "algorithmic"),
         Constraint(a <= 10, "a <= 10", "range", "range")),
    )
    why = explain(space)
    assert why is not None and [c.origin for c in why.constraints] == ["split(a) of [float]112 needs 112 % a == 0"]


def test_format_space_lists_everything():
    space = _work_group_space(16)
    counted = solve(space)
    text = format_space(space, counted)
    for needle in ("Parameters (2)", "split(a) of [float]64", "device:max_work_group_size", "Dependency order",
                   "a -> b", f"valid: {counted.size.valid}", "raw (cross product"):
        assert needle in text, needle
    assert counted.size.valid == len(brute_force(dataclasses.replace(space, parameters=(
        Parameter("a", lo=1, hi=64), Parameter("b", domain=(1, 2, 4, 8, 16))))))


# -- the convolution space the benchmark samples ----------------------------------------------------------


@pytest.mark.slow
def test_conv_space_samples_satisfy_every_constraint(monkeypatch):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from space_sampling import MALI_G72, conv_space
    finally:
        sys.path.pop(0)
    from liftpy.explore import conv
    from liftpy.operators.conv import get_layer
    from liftpy.results.cache import cached_variants

    layer = get_layer("vgg16:7")
    # The benchmark derives the layer's variants (``conv_variants``: 26 s); the run's derivation cache
    # (conftest.py) holds the same ones, derived once for every test of a 3 x 3 layer.
    derive = conv.conv_variants
    monkeypatch.setattr(conv, "conv_variants", lambda *args, **kw: cached_variants(conv.ConvOperator.of(layer))
                        if args == (layer.K, layer.stride, layer.pad) and not kw else derive(*args, **kw))
    _, space, _ = conv_space(layer, MALI_G72)
    counted = solve(space)
    assert counted.size.exact and counted.size.valid > 1000
    got = sample(counted, 50, 7)
    assert len({as_tuple(space, c) for c in got}) == 50
    for cfg in got:
        bad = [c.origin for c in space.constraints if not holds(c, cfg)]
        assert not bad, (cfg, bad)


def test_shifted_divisor_with_negative_divisors():
    # theta - 2 divides 11 + rho - theta; with theta = 1 the modulus is -1, which divides everything.
    rho, theta = S["a"], S["b"]
    space = Space(
        (Parameter("a", lo=0, hi=4), Parameter("b", lo=0, hi=9)),
        (Constraint(sympy.Eq(sympy.Mod(11 + rho - theta, theta - 2), 0), "tiling", "slideStrict", "algorithmic"),),
    )
    counted = solve(space)
    assert {as_tuple(space, c) for c in enumerate_valid(counted)} == brute_force(space)
    assert (0, 1) in brute_force(space)


def test_constraints_are_tidied_inside_minima():
    """A pipeline stage's occupancy limit held its result length as a sum of fractions over powers of
    ``t - 2`` (what substituting the sizes into the stage's type leaves); the solver evaluates every
    term of it exactly, for every candidate.  Tidied, it is one fraction, and the same condition."""
    from liftpy.constraints.compile import compile_predicate
    from liftpy.constraints.infer import _tidy

    p, t, w = sympy.symbols("p0 t0 w0")
    length = 589824 * (p + 56) ** 2 / w
    messy = sympy.Add(*[term / (t**2 - 4 * t + 4) for term in sympy.expand(length * (t - 2) ** 2).args])
    pred = sympy.Ge(256 * t**2 * (p + 56) ** 2 / (t - 2), sympy.Min(4224, messy))
    tidy = _tidy(pred)
    assert tidy.rhs == sympy.Min(4224, length)
    names = ["p0", "t0", "w0"]
    before, after = compile_predicate(pred, names), compile_predicate(tidy, names)
    grid = itertools.product(range(0, 9), range(3, 12), range(1, 40))
    assert all(before(*g) == after(*g) for g in grid)


@pytest.mark.timeout(60)  # each took minutes: the candidates of a size-long range visited one by one
def test_a_parameter_ranging_over_a_billion_values_is_narrowed_to_divisors_without_visiting_them():
    a, b = sympy.symbols("a b", integer=True, positive=True)
    big = 2_000_000_000
    space = Space((Parameter("a", lo=1, hi=12), Parameter("b", lo=1, hi=big)),
                  (Constraint(sympy.Eq(sympy.Mod(a, b), 0), "b divides a", "split", "algorithmic"),))
    counted = solve(space)
    assert counted.size.valid == sum(len([d for d in range(1, 13) if x % d == 0]) for x in range(1, 13))
    assert counted.plan.search_domains["b"].values == tuple(range(1, 13))
    # A constraint that no value can meet (a buffer too large for 32-bit indices, say) empties the space
    # before any narrowing, and is the one named.
    never = Constraint(sympy.Lt(big * big, 2**31), "the buffer has too many elements", "codegen:int_index", "hardware")
    empty = dataclasses.replace(space, constraints=space.constraints + (never,))
    assert solve(empty).size.valid == 0
    assert "too many elements" in str(explain(empty))


def test_relations_cross_processes_unevaluated_and_unchanged():
    """A space's relations, moduli, floors and extrema are pickled to be rebuilt unevaluated (sympy's own pickling constructs them again
    and asks their assumptions whether they hold: 13 s of a network exploration's main process): what comes
    back prints and compares as what sympy's way gives, and holds where the original holds."""
    import copyreg
    import pickle

    import sympy
    from sympy.core import relational
    from sympy.sets.contains import Contains

    from liftpy.constraints import space as space_module

    r0, r1, n = sympy.symbols("r0 r1 N", positive=True, integer=True)
    relations = [sympy.Le(56 * (r1 + 128), 4194304, evaluate=False), sympy.Ge(r0 * r1, n), sympy.Eq(sympy.Mod(n, r0), 0),
                 sympy.Ne(r0, r1), sympy.Lt(r0, 2 * r1), sympy.Gt(r1, 3), Contains(r0, sympy.FiniteSet(2, 4)),
                 sympy.Mod(4 * r0 + r1, 4), sympy.floor((r0 + 3) / 4), sympy.ceiling(n / r0), sympy.Min(r0, 256, n),
                 sympy.Max(1, r1 - 2)]
    ours = pickle.loads(pickle.dumps(relations))
    assert all(pickle.dumps(r)[:200].count(b"_unevaluated") for r in relations)
    classes = [c for c in copyreg.dispatch_table if copyreg.dispatch_table[c] is space_module._reduce_unevaluated]
    saved = {c: copyreg.dispatch_table.pop(c) for c in classes}
    try:
        theirs = pickle.loads(pickle.dumps(relations))
    finally:
        copyreg.dispatch_table.update(saved)
    assert [str(r) for r in ours] == [str(r) for r in theirs] and ours == theirs
    for values in ({r0: 2, r1: 64, n: 128}, {r0: 4, r1: 4, n: 7}):
        assert [r.subs(values) for r in ours] == [r.subs(values) for r in relations]
