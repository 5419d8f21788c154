"""What the rule property tests share (tests/test_rules*.py): hypothesis settings, random inputs, the check
of a rule against the interpreter, and which file tests which library rules.

Each file keeps its own record of the rules it checked and ends with a test that every rule of its family
met its property test: pytest-xdist gives each file to one worker (``--dist loadfile``), so a record shared
between files would see only its worker's.  ``test_every_library_rule_has_a_family`` (tests/test_rules.py)
checks that the families cover every rule of the library, so a new rule fails until some file tests it.
"""

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from liftpy import Array, Int, add, make_program, mult, multAndSumUp, reduce, sizes, sub, zip
from liftpy.rewrite.checks import check_rule

RULE_SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
N, M, K, H, W = sizes("N M K H W")


def checker(tested: set):
    """A ``checked(rule, program, inputs, sizes=None, **kw)`` that records the rule in ``tested``, applies it at
    every position where it applies and asserts that it applied and that no result changed."""

    def checked(rule, program, inputs, sizes=None, **kw):
        tested.add(rule.name)
        results = check_rule(rule, program, inputs, sizes, **kw)
        assert results, f"{rule.name} did not apply to\n{program}"
        bad = [r for r in results if not r.ok]
        assert not bad, f"{rule.name} changed the result: {bad[:3]}\n{program}"
        return results

    return checked


def after_rewrite(strategy, program, sizes_):
    """``program`` rewritten by ``strategy`` and a valid value of each parameter the rewrite introduced: a
    program to apply the next rule to."""
    from liftpy.constraints import sample, solve
    from liftpy.constraints.infer import variant_space
    from liftpy.rewrite.explore import Variant

    v = strategy(Variant(program))[0]
    counted = solve(variant_space(v, sizes_))
    assert counted.size.valid, v.text()
    return v.program, {**sizes_, **sample(counted, 1, seed=1)[0]}


INT_UNARY = [
    lambda v: add(v, 1),
    lambda v: mult(v, 3),
    lambda v: mult(v, v),
    lambda v: sub(v, 2),
]


def ints(rng, shape):
    return rng.integers(-5, 6, size=shape).astype(np.int32)


def floats(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@st.composite
def two_d(draw, lo=1, hi=8):
    return draw(st.integers(lo, hi)), draw(st.integers(lo, hi))


def whole_reduction(n: int, dot: bool, init: int, seed: int):
    """A dot product or a sum of squares over a whole array, and integer inputs for it."""
    rng = np.random.default_rng(seed)
    if dot:
        prog = make_program("p", [("a", Array(Int, N)), ("b", Array(Int, N))],
                            lambda a, b: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), init, zip(a, b)))
        return prog, [ints(rng, (n,)), ints(rng, (n,))]
    prog = make_program("p", [("a", Array(Int, N))], lambda a: reduce(lambda acc, x: add(acc, mult(x, x)), init, a))
    return prog, [ints(rng, (n,))]


# The library's rules each file tests (its last test checks them).
FAMILIES = {
    "test_rules.py": {
        "coalesce", "fuseText", "joinSplit", "joinZip", "letPrivate", "localStage", "mapFission", "mapFusion",
        "mapGlb0", "mapGlb1", "mapGlb2", "mapIdentity", "mapLcl0", "mapLcl1", "mapLcl2", "mapSeq", "mapWrg0", "mapWrg1",
        "mapWrg2", "partialReduce", "privateAccumulator", "reduceLcl", "reduceSeq", "splitJoin", "splitJoinText",
        "splitOfJoin", "splitStrided", "splitZip", "tileAllPairs", "transposeText", "transposeTwice", "unrollInItem",
        "unrollMapSeq", "unrollReduceSeq", "vectorizeMap", "vectorizeReduce", "vectorizeSum",
        "vectorizeSumWide",
    },
    "test_rules_tiling.py": {
        "cropKernel", "doubleBuffer", "flattenMap2D", "groupsOut", "letGlobal", "materializeInput", "padK", "padOpt",
        "fuseLastGroup", "reduceGroup", "reduceKernels", "registerBlock2D", "splitK", "splitKGroups", "splitPartialKernels", "stageTiles",
        "splitRuns", "stageTilesT", "tile2D", "tile2DReduce", "tile2DReduceStrided",
    },
    "test_rules_normal.py": {
        "dotAccumulator", "dotFission", "dotFusion", "joinSingletons", "letEpilogue", "letInvariant", "letOperand",
        "letView", "padK", "registerBlock2D", "splitColumns", "splitK", "tile2DReduce", "tile2DReduceStrided",
        "zip2DFusion", "zipFlatten", "zipMapFusion", "zipPrune", "zipViewFusion",
    },
    "test_rules_rows.py": {
        "dealRows", "dealRowsVector", "groupLetLocal", "groupLetPrivate", "letInline", "letShares", "reduceLclShared",
        "reduceMapFusion", "splitRows",
    },
}


def missing(family: str, tested: set) -> list[str]:
    """The rules of ``family`` (a file name of FAMILIES) that met no property test in it."""
    return sorted(FAMILIES[family] - tested)
