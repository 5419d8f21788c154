"""The exploration engine's operators (issue 12): a program and its sizes checked, its expected output computed
once for every point it checks, the rule filter, variant ids and the variant cache.  No exploration runs here."""

import numpy as np
import pytest

from engine_helpers import MATMUL, twice_matmul
from liftpy.explore.operator import ProgramOperator, compare, load_program, parse_sizes


def test_rule_filter_alternatives_need_one_known_rule():
    """``A|B`` keeps the variants that use either; an alternative no variant uses is allowed beside a used
    one (one filter for plain and grouped convolutions), an entry none of whose rules any variant uses is
    an error naming the rules there are."""
    from liftpy.errors import TuningError
    from liftpy.explore.operator import program_operator
    from liftpy.search import select_variants

    every = program_operator(str(MATMUL), "M=64,N=64,K=64").variants()
    tiled = select_variants(every, ["tile2DReduce"])
    assert tiled and len(tiled) < len(every)
    assert select_variants(every, ["tile2DReduce|groupsOut"]) == tiled
    with pytest.raises(TuningError, match="no variant uses the rule.s. groupsOut, tileTypo; the variants use: .*tile2DReduce"):
        select_variants(every, ["tile2DReduce", "groupsOut|tileTypo"])


def test_a_program_operator_computes_its_expected_output_once_for_all_the_points_it_checks():
    """``prepare`` (what the measuring worker keeps for a problem) computes the reference once; its check
    gives every output the verdict ``compare`` gives, a wrong element named."""
    calls = []

    def reference(a, b):
        calls.append(1)
        return a.astype(np.float64) @ b.astype(np.float64)

    op = ProgramOperator.of(twice_matmul(), {"M": 8, "N": 8, "K": 8}, reference=lambda a, b: 2 * reference(a, b))
    inputs, check = op.prepare(0)
    exp = 2 * (inputs[0].astype(np.float64) @ inputs[1].astype(np.float64))
    assert len(calls) == 1
    good, bad = exp.astype(np.float32), exp.astype(np.float32)
    bad[2, 3] += 1.0
    for out in (good, bad, good):
        assert check(out) == compare(out, exp)
    assert len(calls) == 1
    assert check(good).ok and not check(bad).ok and "(2, 3)" in check(bad).message


def test_wrong_kernel_is_caught_by_the_operator_check():
    exp = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert compare(exp + 1e-6, exp).ok
    bad = exp.copy()
    bad[1, 2] += 1.0
    v = compare(bad, exp)
    assert not v.ok and "(1, 2)" in v.message


def test_sizes_and_programs_are_checked():
    from liftpy.errors import InputError

    with pytest.raises(InputError, match="positive integer"):
        parse_sizes("M=-3")
    with pytest.raises(InputError, match="NAME=VALUE"):
        parse_sizes("M")
    with pytest.raises(InputError, match="needs a value for"):
        ProgramOperator.of(load_program(str(MATMUL)), {"M": 8})
    with pytest.raises(InputError, match="has no size Q; its sizes are K, M, N"):
        ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8, "K": 8, "Q": 8})
    # a size is a whole number, never truncated; the command line's form is read as well
    with pytest.raises(InputError, match="size N of matmul must be a positive integer, got 8.5"):
        ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8.5, "K": 8})
    with pytest.raises(InputError, match="must be a mapping"):
        ProgramOperator.of(load_program(str(MATMUL)), [("M", 8)])
    assert ProgramOperator.of(load_program(str(MATMUL)), "M=8,N=4,K=2").sizes() == {"M": 8, "N": 4, "K": 2}
    assert ProgramOperator.of(load_program(str(MATMUL)), {"M": np.int64(8), "N": 4, "K": 2}).size_values == (
        ("K", 2), ("M", 8), ("N", 4))
    with pytest.raises(InputError, match="cannot read"):
        load_program("missing.lift")


def test_variant_cache_skips_derivation(tmp_path, monkeypatch):
    from liftpy.results import cache

    monkeypatch.setenv("LIFTPY_CACHE_DIR", str(tmp_path / "cache"))
    op = ProgramOperator.of(load_program(str(MATMUL)), {"M": 8, "N": 8, "K": 8})
    first = cache.cached_variants(op)
    calls = []
    monkeypatch.setattr(ProgramOperator, "variants", lambda self: calls.append(1) or ())
    second = cache.cached_variants(op)
    assert not calls and len(second) == len(first) and second[0].program == first[0].program
    # Read back without sympy's evaluation, the programs are the same expressions, hashes included.
    assert second == first and [hash(v.program) for v in second] == [hash(v.program) for v in first]
    monkeypatch.setenv("LIFTPY_CACHE_DIR", "off")
    assert cache.cached_variants(op) == () and calls


def test_conv_problem_sizes_are_those_of_layers_with_the_same_kernel():
    from liftpy.explore.conv import ConvOperator
    from liftpy.operators.conv import get_layer

    op = ConvOperator.of(get_layer("vgg16:5"))
    assert op.problem_sizes(get_layer("vgg16:7").spec) == {"C": 128, "H": 112, "W": 112, "M": 128}
    assert op.problem_sizes("3,224,224,64,7,2,3") is None  # another kernel: other variants
    assert op.problem_sizes("not a layer") is None


def test_find_variant_by_id():
    from liftpy.explore.operator import program_operator
    from liftpy.search import find_variant, variant_id

    variants = program_operator(str(MATMUL), "M=16,N=16,K=16").variants()
    for v in variants[:: max(1, len(variants) // 8)]:
        assert find_variant(variants, variant_id(v)) is v
    vid = variant_id(variants[0])
    assert find_variant(variants, vid.split("#")[0] + "#0000000000") is None


def test_variant_ids_stay_those_stores_hold():
    """A store keys each point by its variant's id, a digest of the variant's program text (bound names'
    hints included): a change to a rule that renames or reorders anything gives every affected variant a new
    id, and resumed explorations silently re-measure those points.  The ids of the high-level matmul are
    pinned; change the digest only together with a note that older stores' points of those variants are
    measured again."""
    import hashlib

    from liftpy.explore.operator import program_operator
    from liftpy.search import variant_id

    ids = sorted(variant_id(v) for v in program_operator(str(MATMUL), "M=16,N=16,K=16").variants())
    assert len(ids) == 124
    assert "db+glb+splitK+stage+tiled+unroll-item+wrg#e38601c611" in ids
    assert hashlib.sha1("\n".join(ids).encode()).hexdigest()[:16] == "501e2818375154d9"
