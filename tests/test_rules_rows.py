"""The cooperative-row rules (liftpy/rewrite/rows.py, rows_split.py, columns.py) preserve semantics
(hypothesis property tests, as tests/test_rules.py describes)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from liftpy import Array, Int, add, fmax, fmin, join, make_program, map, mult, multAndSumUp, reduce, sub, zip

from rule_checks import K, M, N, RULE_SETTINGS, after_rewrite, checker, ints, missing

TESTED: set[str] = set()
checked = checker(TESTED)


# ----------------------------------------------------------------------------------- cooperative rows


def _row_program(kind: int, op):
    """A map over the rows of [M][N] whose function reduces its row: kind 0 a row's reduction by ``op`` of a
    function of its elements; 1 a dot product with a vector, its initial value from a second input (a bias)
    and a function of the result after it (a ReLU, max(y, 0)); 2 softmax's shape in integers: the row's reduction
    bound by ``let``, an elementwise map of the row bound by ``let``, its sum, and a map of the bound row
    by both; 3 layer norm's: a sum, the centred row bound by ``let``, its sum of squares, then a map."""
    from liftpy.ir.dsl import at, let

    if kind == 0:
        return make_program("p", [("x", Array(Int, M, N))], lambda x: map(lambda r: reduce(
            lambda acc, v: op(acc, mult(v, 3)), 0 if op is add else (-100 if op is fmax else 100), r), x))
    if kind == 1:
        return make_program("p", [("x", Array(Int, M, N)), ("v", Array(Int, N)), ("b", Array(Int, M))], lambda x, v, b: map(
            lambda rb: map(lambda y: fmax(y, 0), reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), rb[1], zip(rb[0], v))),
            zip(x, b)))
    if kind == 2:
        return make_program("p", [("x", Array(Int, M, N))], lambda x: map(lambda r: let(
            lambda top: let(lambda e: let(lambda total: map(lambda y: sub(mult(y, 7), at(0, total)), e), reduce(add, 0, e)),
                            map(lambda y: sub(y, at(0, top)), r)),
            reduce(op if op is not add else fmax, -100, r)), x))
    return make_program("p", [("x", Array(Int, M, N))], lambda x: map(lambda r: let(
        lambda total: let(lambda c: let(lambda sq: map(lambda y: add(mult(y, 2), at(0, sq)), c),
                                        reduce(lambda acc, y: add(acc, mult(y, y)), 0, c)),
                          map(lambda y: sub(mult(y, 5), at(0, total)), r)),
        reduce(add, 0, r)), x))


ROW_CASES = st.tuples(st.integers(1, 3), st.sampled_from([4, 8, 12, 16]), st.integers(0, 3),
                      st.sampled_from(["add", "max", "min"]), st.integers(0, 10**6))


def _row_inputs(kind, m, n, seed):
    rng = np.random.default_rng(seed)
    inputs = [ints(rng, (m, n))]
    if kind == 1:
        inputs += [ints(rng, (n,)), ints(rng, (m,))]
    return inputs


@RULE_SETTINGS
@given(ROW_CASES)
def test_deal_rows(case):
    """Each row's reductions become the combination of L work-items' partial results over their shares
    (elements l, l + L, ...), its maps maps of the shares, written back through the inverse layout: for
    integers, exactly the original's results."""
    from liftpy.rewrite import rows as R

    m, n, kind, op, seed = case
    prog = _row_program(kind, {"add": add, "max": fmax, "min": fmin}[op])
    inputs = _row_inputs(kind, m, n, seed)
    checked(R.deal_rows, prog, inputs)
    if kind != 1:  # asVector reads scalars; a zip's components are dealt one by one
        checked(R.deal_rows_vector, prog, inputs)
    else:
        checked(R.deal_rows_vector, make_program("p", [("x", Array(Int, M, N)), ("v", Array(Int, N))], lambda x, v: map(
            lambda r: reduce(lambda acc, p: multAndSumUp(acc, p[0], p[1]), 0, zip(r, v)), x)), inputs[:2])


@RULE_SETTINGS
@given(ROW_CASES)
def test_rows_lowering_and_memory(case):
    """After dealing, the group's trees (reduceLclShared where the group reads the result), the memory of
    the let-bound shares (private, local), the recomputation of let-bound maps (letInline, then
    reduceMapFusion) and the copy of shares read twice (letShares) keep the results."""
    from liftpy.rewrite import rows as R
    from liftpy.rewrite.strategy import once
    from liftpy.rewrite.lowering import MAP_WRG

    m, n, kind, op, seed = case
    kind = 2 + kind % 2 if kind != 1 else 1  # the shapes with lets, and the dot product with a ReLU after it
    prog = _row_program(kind, {"add": add, "max": fmax, "min": fmin}[op])
    inputs = _row_inputs(kind, m, n, seed)
    if kind != 1:
        checked(R.let_inline, prog, inputs)
        inlined, _ = after_rewrite(once(R.let_inline), prog, {"M": m, "N": n})
        checked(R.reduce_map_fusion, inlined, inputs)
    dealt, values = after_rewrite(once(R.deal_rows), prog, {"M": m, "N": n})
    if kind != 1:  # the row's shares read twice (its reduction, then its map): copied once
        checked(R.let_shares, dealt, inputs, values)
    grouped, values = after_rewrite(once(MAP_WRG[0]), dealt, values)
    checked(R.reduce_lcl_shared, grouped, inputs, values)
    if kind != 1:
        checked(R.group_let_private, grouped, inputs, values)
        checked(R.group_let_local, grouped, inputs, values)


@RULE_SETTINGS
@given(ROW_CASES, st.booleans())
def test_split_rows(case, batch):
    """Every row's reduction cut into chunks: a kernel of the chunks' results, then the program reading
    them (the bias and the function after the reduction applied once there); with a batch around the rows
    (a fully-connected layer's), two levels of maps."""
    from liftpy.rewrite.rows_split import split_rows

    m, n, kind, op, seed = case
    kind = kind % 2
    prog = _row_program(kind, {"add": add, "max": fmax, "min": fmin}[op])
    inputs = _row_inputs(kind, m, n, seed)
    if batch:
        rng = np.random.default_rng(seed)
        prog = make_program("p", [("x", Array(Int, K, N)), ("w", Array(Int, M, N)), ("b", Array(Int, M))], lambda x, w, b: map(
            lambda xb: join(map(lambda wb: map(lambda y: fmax(y, 0), reduce(
                lambda acc, p: multAndSumUp(acc, p[0], p[1]), wb[1], zip(wb[0], xb))), zip(w, b))), x))
        inputs = [ints(rng, (2, n)), ints(rng, (m, n)), ints(rng, (m,))]
    checked(split_rows, prog, inputs)
    if not batch and n % 8 == 0:
        # the chunks of the first kernel are rows of their own, dealt as vectors (a zip's chunk: by component)
        from liftpy.rewrite import rows as R
        from liftpy.rewrite.strategy import once

        split, values = after_rewrite(once(split_rows), prog, {"M": m, "N": n})
        checked(R.deal_rows_vector, split, inputs, values)


def test_every_rule_of_this_file_is_tested():
    """Runs last in this file (pytest keeps file order): each of its rules met its property test."""
    assert not missing("test_rules_rows.py", TESTED), f"rules without a property test run: {missing('test_rules_rows.py', TESTED)}"
