"""The index algebra's shortcuts around sympy (``liftpy.views.arith``) build exactly the expressions
sympy builds, argument order included: the generated OpenCL is printed from them, and must not change
when code generation gets faster.  Each shortcut is compared with the sympy construction it replaces,
on random conditions and indices of the kind views and unrolling produce (the passes' shortcuts against
the sympy code they replace).  Also the other speed-ups with a contract: code generation pauses the
garbage collector and restores it as it was, the cached hashes of reads and buffers are their dataclass
hashes and stay out of pickles, and the address-calculation pass's memo of what each subtree holds
answers as a walk of the subtree does."""

import gc
import importlib
from fractions import Fraction
from types import SimpleNamespace

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from unittest import mock

from liftpy.codegen.passes.privatize import _split_of
from liftpy.codegen.passes.vectorize import _split_lane, is_multiple
from liftpy.views import arith
from liftpy.views.arith import CDiv, CMod, _ordered, floor_of, make_and, relation, simplify, substitute

SYMS = sympy.symbols("i j k")
vectorize = importlib.import_module("liftpy.codegen.passes.vectorize")
REL = [sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt, sympy.Eq, sympy.Ne]


@st.composite
def affine(draw, divisions=True):
    terms = [draw(st.integers(-3, 4)) * s for s in SYMS[: draw(st.integers(1, 3))]]
    terms.append(sympy.Integer(draw(st.integers(-20, 20))))
    if divisions and draw(st.booleans()):
        inner = sympy.Add(*[draw(st.integers(1, 4)) * s for s in SYMS[:2]])
        d = draw(st.sampled_from([2, 3, 4]))
        node = sympy.floor(inner / d, evaluate=False) if draw(st.booleans()) else sympy.Mod(inner, d, evaluate=False)
        terms.append(draw(st.integers(1, 3)) * node)
    return sympy.Add(*terms)


@st.composite
def comparisons(draw):
    rel = draw(st.sampled_from(REL))
    return rel(draw(affine()), draw(st.integers(-5, 5)), evaluate=False)


@st.composite
def conditions(draw):
    """Comparisons (some repeated, some negations of others, as padding conditions are), the constants
    ``true`` and ``false``, and conjunctions of them."""
    base = draw(st.lists(comparisons(), min_size=1, max_size=3))
    pool = list(base) + [c.negated for c in base] + [sympy.true, sympy.false]
    if len(base) > 1:
        pool.append(sympy.And(*base[:2]))
    return draw(st.lists(st.sampled_from(pool), min_size=0, max_size=5))


def same(a, b) -> bool:
    """Equal and printed alike: the same tree with the same argument order."""
    return a == b and type(a) is type(b) and str(a) == str(b) and a.args == b.args


@settings(max_examples=300, deadline=None)
@given(conditions())
@pytest.mark.slow
def test_make_and_is_sympys_and(args):
    assert same(make_and(args), sympy.And(*args)), args


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(comparisons(), affine()), min_size=0, max_size=6, unique=True))
def test_ordered_is_sympys_ordered(items):
    assert _ordered(items) == list(sympy.ordered(items))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(comparisons(), affine()), min_size=1, max_size=3), st.integers(-6, 9), st.integers(-6, 9),
       st.integers(-6, 9))
def test_substituted_numbers_fold_as_sympy_folds(exprs, a, b, c):
    """An unrolled copy's counters become numbers: sums, products, floors, moduli and comparisons of
    them are what sympy's evaluation gives."""
    mapping = dict(zip(SYMS, map(sympy.Integer, (a, b, c))))
    for e in exprs:
        assert same(substitute(e, mapping), e.xreplace(mapping)), e


@settings(max_examples=200, deadline=None)
@given(affine(divisions=False), st.integers(-6, 9), st.booleans())
def test_sums_with_numbers_substituted_are_sympys_sums(e, a, second):
    """Some counters replaced by numbers, the other terms kept: the constant is folded in, the terms
    keep sympy's canonical order."""
    mapping = {SYMS[1] if second else SYMS[0]: sympy.Integer(a)}
    assert same(substitute(e, mapping), e.xreplace(mapping)), e


@st.composite
def index_term(draw):
    """A term of an index sum: an integer, a counter, a division or modulus of a sum, a product of an
    integer and one of those, a product of two counters, or a sum of such terms."""
    kind = draw(st.sampled_from(["int", "sym", "node", "times", "pair", "sum"]))
    if kind == "int":
        return sympy.Integer(draw(st.integers(-9, 9)))
    if kind == "sym":
        return draw(st.sampled_from(SYMS))
    if kind == "node":
        inner = sympy.Add(*[draw(st.integers(1, 4)) * s for s in SYMS[:2]], draw(st.integers(0, 5)))
        cls = draw(st.sampled_from([CDiv, CMod, sympy.floor, sympy.Mod]))
        d = draw(st.sampled_from([2, 4, 7]))
        if cls is sympy.floor:
            return sympy.floor(inner / d, evaluate=False)
        return cls(inner, d, evaluate=False) if cls is sympy.Mod else cls(inner, d)
    if kind == "times":
        return draw(st.sampled_from([-3, -1, 2, 64])) * draw(index_term())
    if kind == "pair":
        return SYMS[0] * draw(st.sampled_from(SYMS[1:])) * draw(st.sampled_from([1, 3]))
    return sympy.Add(*draw(st.lists(index_term(), min_size=2, max_size=3)))


@settings(max_examples=400, deadline=None)
@given(st.lists(index_term(), min_size=1, max_size=5))
@pytest.mark.slow
def test_integer_sums_and_products_are_sympys(terms):
    """``int_sum`` and ``int_product`` build what ``Add`` and ``Mul`` build, argument order included,
    where they build anything; nested sums are flattened and like terms collected to zero and beyond."""
    terms = terms + [-t for t in terms[:1]] if len(terms) == 3 else terms  # a term that cancels
    got = _uncached(lambda: arith.int_sum(terms))
    if got is not None:
        assert same(got, sympy.Add(*terms)), terms
        assert arith.int_sum(terms) is got  # the same node again, as sympy's cache gives
    pair = [sympy.Integer(len(terms) - 2), terms[0]]
    got = _uncached(lambda: arith.int_product(pair))
    if got is not None:
        assert same(got, sympy.Mul(*pair)), pair


@settings(max_examples=300, deadline=None)
@given(index_term(), index_term(), st.sampled_from([-1, 0, 1, 3, 64]))
@pytest.mark.slow
def test_scaled_and_affine_indices_are_sympys(e, f, k):
    """``times`` (``e * k``, distributed over a sum as sympy does), ``affine`` (``e * k + f``, a split's
    index) and ``rebuild`` (a node from new arguments) build what sympy's operators and constructors build."""
    assert same(_uncached(lambda: arith.times(e, k)), e * k), (e, k)
    assert same(_uncached(lambda: arith.affine(e, k, f)), e * k + f), (e, k, f)
    for node in (e, f):
        if node.args:
            args = tuple(reversed(node.args)) if node.is_Add or node.is_Mul else node.args
            assert same(_uncached(lambda: arith.rebuild(node, args)), node.func(*args)), node


@settings(max_examples=300, deadline=None)
@given(index_term(), st.sampled_from([Fraction(1, 3), Fraction(1, 256), Fraction(-2, 3), -1, 2, 7]), st.booleans())
def test_products_of_a_rational_rebuilt_are_sympys(e, r, number_first):
    """``rebuild`` of a product whose arguments became a rational and a term (a substituted ``2*i`` with
    ``i = 2*q + r``, a floor's ``floor(x)/3`` with ``x`` a quotient): what ``Mul`` builds, distributed over
    a sum as sympy does."""
    c = sympy.Rational(r.numerator, r.denominator) if isinstance(r, Fraction) else sympy.Integer(r)
    node = sympy.Mul(c, sympy.Symbol("z"), evaluate=False)
    args = (c, e) if number_first else (e, c)
    assert same(_uncached(lambda: arith.rebuild(node, args)), sympy.Mul(*args)), (c, e)


@settings(max_examples=300, deadline=None)
@given(index_term(), st.sampled_from([1, 2, 3, 4, 12, 256]), st.sampled_from([1, 2, 3]))
def test_divided_indices_and_their_floors_are_sympys(e, n, k):
    """``times`` by a fraction (a view's dividend over its divisor, the fraction distributed over a sum as sympy
    does, rational coefficients collected), and the unevaluated floor and modulus a join writes, are
    sympy's; so are sums with rational terms."""
    e = e if k == 1 else e / k  # rational coefficients in the dividend too
    assert same(_uncached(lambda: arith.times(e, Fraction(1, n))), e / n), (e, n)
    if not e.is_Integer and n > 1:
        for got, want in ((_uncached(lambda: arith.floor_div(e, n)), sympy.floor(e / n, evaluate=False)),
                          (_uncached(lambda: arith.floor_mod(e, n)), sympy.Mod(e, n, evaluate=False))):
            assert same(got, want) and got.nargs == want.nargs, (e, n)
    terms = [e, sympy.Rational(1, n), e / (n + 1)]
    got = _uncached(lambda: arith.int_sum(terms))
    if got is not None:
        assert same(got, sympy.Add(*terms)), terms


@settings(max_examples=200, deadline=None)
@given(affine(), st.integers(-6, 9))
def test_rebuilt_nodes_are_sympys_unevaluated_nodes(e, a):
    """Floors, moduli, comparisons and our opaque functions rebuilt by substitution are the nodes their
    constructors make unevaluated: equal, hashed alike, printed alike."""
    for node in list(sympy.preorder_traversal(e)) + [sympy.Ge(e, 0, evaluate=False), CDiv(e, 4), CMod(e, 8)]:
        if not isinstance(node, (sympy.floor, sympy.Mod, sympy.Ge, CDiv, CMod)):
            continue
        args = tuple(x.xreplace({SYMS[0]: sympy.Integer(a)}) for x in node.args)
        got = _uncached(lambda: arith._unevaluated(node, args))
        want = node.func(*args, evaluate=False)
        assert same(got, want) and hash(got) == hash(want), (node, args)
        assert getattr(got, "nargs", None) == getattr(want, "nargs", None), (node, args)  # what sympy's functions carry


def _uncached(fn):
    """``fn()`` with the index algebra's memo tables emptied first (a result memoised by the other path
    would be returned as it is)."""
    for table in vars(arith).values():
        if isinstance(table, arith.Memo):
            table.table.clear()
    return fn()


@settings(max_examples=300, deadline=None)
@given(affine(), st.lists(st.tuples(st.integers(-4, 6), st.integers(0, 5), st.booleans()), min_size=3, max_size=3))
def test_sums_simplified_to_numbers_are_sympys_sums(e, spans):
    """Simplifying a sum where counters have a single value or the ranges decide a division: the terms
    that became numbers are folded into the constant without ``Add``, giving what ``Add`` gives."""
    ranges = {x: (lo, lo if single else lo + w) for x, (lo, w, single) in zip(SYMS, spans)}
    fast = _uncached(lambda: simplify(e, ranges))
    with mock.patch.object(arith, "_add_of_numbers", lambda e, args: None):
        slow = _uncached(lambda: simplify(e, ranges))
    assert same(fast, slow), (e, ranges)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-9, 9), st.sampled_from([1, 2, 3, 4, 8, 256])), min_size=1, max_size=3),
       st.integers(-9, 9), st.sampled_from([1, 2, 4, 256]), st.booleans())
def test_floor_of_is_sympys_floor(coeffs, num, den, integer_symbol):
    """Floors of sums of rational multiples of counters, as a division without known bounds makes
    them (and of a symbol sympy knows is an integer, which takes sympy's own evaluation)."""
    syms = list(SYMS)
    if integer_symbol:
        syms[0] = sympy.Symbol("n", integer=True)
    arg = sympy.Add(*[sympy.Rational(c, d) * x for (c, d), x in zip(coeffs, syms)]) + sympy.Rational(num, den)
    assert same(floor_of(arg), sympy.floor(arg)), arg


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(REL), st.lists(st.tuples(st.integers(-3, 3), st.sampled_from([1, 2, 4])), min_size=1, max_size=3),
       st.lists(st.sampled_from(["cdiv", "cmod", "int", "const"]), max_size=2), st.integers(-5, 5))
def test_relation_is_sympys_relation(rel, coeffs, extras, rhs):
    """Comparisons as the hoisting pass rebuilds them: counters (plain, or known integers), hoisted
    divisions, constants."""
    syms = [SYMS[0], SYMS[1], sympy.Symbol("n", integer=True)]
    terms = [sympy.Rational(c, d) * x for (c, d), x in zip(coeffs, syms)]
    for k, extra in enumerate(extras):
        terms.append({"cdiv": CDiv(SYMS[2] + k, 4), "cmod": 3 * CMod(SYMS[2], 4 + k),
                      "int": sympy.Symbol("m", integer=True), "const": sympy.Integer(7)}[extra])
    lhs = sympy.Add(*terms)
    assert same(relation(rel, lhs, rhs), rel(lhs, rhs)), (rel, lhs, rhs)


def test_generation_leaves_the_collector_as_it_found_it():
    from liftpy import Array, Float, id, mapGlb, program, sizes, toGlobal
    from liftpy.codegen.kernel import generate_kernel

    N, = sizes("N")

    @program
    def copy(xs: Array(Float, N)):
        return mapGlb(0, lambda x: toGlobal(id(x)), xs)

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            generate_kernel(copy, {"N": 16})
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


def test_reads_and_buffers_hash_once_and_pickle_without_the_hash():
    """Their cached hash equals the dataclass hash, and stays out of pickles: another process hashes
    strings differently."""
    import dataclasses
    import pickle

    from liftpy.codegen.memory import Buffer
    from liftpy.ir.types import ArrayType, Float
    from liftpy.views import view as V

    buf = Buffer("x", "global", Float, 16, sympy.Integer(16), "input", ArrayType(Float, 16))
    read = V.CondRead(sympy.Ge(SYMS[0], 1), V.MemRead(buf, SYMS[0] + 1, 1), V.ConstRead(0.0, Float))
    for obj in (buf, read):
        first = hash(obj)
        assert first == hash(obj) == hash(tuple(getattr(obj, f.name) for f in dataclasses.fields(obj)))
        state = pickle.dumps(obj)
        assert b"_hash" not in state
        back = pickle.loads(state)
        assert back == obj and hash(back) == first


def _split_lane_by_sympy(index):
    """The vectorizer's ``_split_lane`` as it was written with sympy's sums."""
    e = arith.expand_index(index)
    c = 0
    for term in sympy.Add.make_args(e):
        if term.is_Integer:
            c = int(term)
    rest = arith.expand_index(e - c)
    if not is_multiple(rest, 4) and rest != 0:
        return None
    return arith.expand_index(rest + (c - c % 4)), c % 4


@settings(max_examples=300, deadline=None)
@given(affine(), st.integers(-9, 9), st.booleans())
def test_lane_split_is_sympys(e, k, scaled):
    """A vector index split into a multiple of four and a lane, its constant term replaced without
    ``Add``: the same sums as sympy's, for indices with and without a constant, scaled by four (the
    split succeeds) or not (it may fail)."""
    index = 4 * e + k if scaled else e
    vectorize._LANES.table.clear()
    vectorize._MULTIPLES.table.clear()
    got = _split_lane(index)
    assert (got is None) == (_split_lane_by_sympy(index) is None), index
    if got is not None:
        want = _split_lane_by_sympy(index)
        assert same(got[0], want[0]) and got[1] == want[1], index
    if index.is_Add and index.args[0].is_Integer:
        assert same(arith.plus_constant(index, k - int(index.args[0])), index - index.args[0] + k), index


@settings(max_examples=300, deadline=None)
@given(affine(), affine(), st.integers(-9, 9), st.integers(-9, 9), st.sampled_from(["shifted", "same", "other"]))
def test_differences_are_sympys(e, f, j, k, kind):
    """The difference of two addresses (a lane's and the first lane's): of the same terms with other
    constants it is the constants' difference, computed without ``a - b``; of other sums sympy's."""
    a, b = {"shifted": (e + j, e + k), "same": (e, e), "other": (e + j, f + k)}[kind]
    for x, y in ((a, b), (b, a)):
        assert same(_uncached(lambda: arith.difference(x, y)), arith.expand_index(x - y)), (x, y)


def _split_of_by_sympy(index, loops):
    """The privatization's ``_split_of`` as it was written with sympy's sums."""
    e = arith.expand_index(index)
    coeffs = {}
    for lp in loops:
        c = e.coeff(lp.var)
        if c == 0:
            continue
        if not c.is_Integer:
            return None
        coeffs[lp.dim] = (int(c), lp.extent)
        e = arith.expand_index(e - c * lp.var)
    if any(e.has(lp.var) for lp in loops):
        return None
    return coeffs, e


@settings(max_examples=300, deadline=None)
@given(affine(), st.lists(st.sampled_from(SYMS), min_size=1, max_size=3, unique=True), st.integers(-3, 3))
def test_private_index_splits_are_sympys(e, counters, extra):
    """An index split into the terms of the local ids and the rest, each term taken out without
    ``Add`` (``linear_in``): the same rests as sympy's, also when a counter appears in a division or with
    another counter's term of the same coefficient."""
    loops = [SimpleNamespace(var=x, dim=k, extent=4) for k, x in enumerate(counters)]
    index = e + extra * counters[0]
    got, want = _split_of(index, loops), _split_of_by_sympy(index, loops)
    assert (got is None) == (want is None), index
    if got is not None:
        assert got[0] == want[0] and same(got[1], want[1]), index


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 300), st.sampled_from(SYMS + (sympy.Symbol("n", integer=True),))),
                min_size=1, max_size=3), st.integers(-5, 300), st.sampled_from([2, 3, 4, 12, 64, 256]))
@pytest.mark.slow
def test_unbounded_moduli_are_sympys(terms, const, d):
    """A modulus whose dividend has no known bounds (counters of enclosing loops), as the simplifier
    leaves it: sums of multiples of counters and a constant, some with a common factor with the
    divisor, some coefficients multiples of it or negative, a symbol sympy knows is an integer."""
    num = sympy.Add(*[c * x for c, x in terms]) + const
    assert same(arith.mod_of(num, d), sympy.Mod(num, d)), (num, d)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(-9, 9), st.sampled_from([1, 2, 3, 4, 16, 256])), min_size=1, max_size=3),
       st.integers(-9, 9), st.sampled_from([1, 2, 4, 256]), st.sampled_from([2, 3, 4, 5, 12, 64, 256]),
       st.sampled_from(["floor", "symbol", "integer symbol", "integer floor", "even symbol", "even floor"]))
def test_unbounded_moduli_of_counters_and_floors_are_sympys(coeffs, num, den, d, kind):
    """A modulus of a counter alone, or of the floor of a sum of rational multiples of counters (a
    window row a copy's plan asks about, no bounds known), as sympy's Mod makes it; with a symbol sympy
    knows is an integer or even (sympy's own evaluation, not the shortcut: ``Mod(e, 2)`` is 0) in the
    same places."""
    syms = list(SYMS)
    if kind.startswith("integer"):
        syms[0] = sympy.Symbol("n", integer=True)
    elif kind.startswith("even"):
        syms[0] = sympy.Symbol("e", even=True)
    if kind.endswith("symbol"):
        x = syms[0]
    else:
        arg = sympy.Add(*[sympy.Rational(c, q) * s for (c, q), s in zip(coeffs, syms)]) + sympy.Rational(num, den)
        if not arg.free_symbols:
            return
        x = sympy.floor(arg, evaluate=False)
    assert same(arith.mod_of(x, d), sympy.Mod(x, d)), (x, d)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(affine(), affine(), affine()), min_size=1, max_size=4), st.booleans())
def test_divmod_pass_counts_subtrees_as_a_walk_does(rows, share):
    """The address-calculation pass memoises what each statement and its subtree hold (divisions,
    their set, symbols) by identity: the same answers as walking the subtree, for nested loops whose
    stores read through conditions and user functions, with statements shared between loops."""
    from liftpy.codegen import stmt as S
    from liftpy.codegen.passes import divmod as D
    from liftpy.ir.levels import Level
    from liftpy.views import view as V
    from test_codegen_fastpaths import _exprs as exprs

    buf = SimpleNamespace(name="b")
    stores = [S.Store(buf, a, V.CondRead(sympy.Ge(b, 0, evaluate=False), V.MemRead(buf, c, 1),
                                         V.FunCall("f", (V.MemRead(buf, a + b, 1),))))
              for a, b, c in rows]
    inner = S.Loop(SYMS[2], 4, Level.SEQ, 0, S.Block(tuple(stores)))
    outer = S.Loop(SYMS[1], 6, Level.SEQ, 0, S.Block((inner, S.IndexDef(sympy.Symbol("t"), rows[0][0]))
                                                       + ((stores[0],) if share else ())))
    top = S.Block((outer, S.If(sympy.Lt(rows[-1][1], 3, evaluate=False), S.Block((stores[-1],)))))

    D._clear()
    try:
        for s in S.walk(top):
            es = [e for x in S.walk(s) for e in exprs(x)]
            nodes = [n for e in es for n in arith.divmod_nodes(e)]
            for x in SYMS:
                assert D._count_using(s, {x}) == len([n for n in nodes if x in arith.free_symbols(n)])
            assert D._divmods(s) == frozenset(nodes)
            for x in SYMS:
                assert D._uses(s, x) == any(x in arith.free_symbols(e) for e in es)
    finally:
        D._clear()


@settings(max_examples=100, deadline=None)
@given(st.lists(comparisons(), min_size=2, max_size=3, unique=True))
def test_hoisted_conditions_are_sympys_conjunctions(parts):
    """Hoisting names the divisions of a padding condition read in a loop and rebuilds the conjunction
    with ``make_and``: the same kernel as rebuilding it with sympy's ``And``."""
    import importlib

    from liftpy.codegen import stmt as S
    from liftpy.ir.levels import Level
    from liftpy.views import view as V

    H = importlib.import_module("liftpy.codegen.passes.hoist")  # (the package exports the function as hoist)
    buf = SimpleNamespace(name="b", space="global")
    cond = sympy.And(*parts)
    if not isinstance(cond, sympy.And):
        return
    value = V.CondRead(cond, V.MemRead(buf, SYMS[2], 1), V.ConstRead(0.0, None))
    loop = S.Loop(SYMS[2], 4, Level.SEQ, 0, S.Block((S.Store(buf, SYMS[2], value),)))
    kernel = S.Kernel("k", (), (), S.Block((loop,)))
    fast = H.hoist(kernel)
    with mock.patch.object(H, "make_and", lambda args: sympy.And(*args)):
        slow = H.hoist(kernel)
    assert fast == slow and str(fast.body) == str(slow.body), cond


@settings(max_examples=400, deadline=None)
@given(st.lists(index_term(), min_size=1, max_size=4), st.sampled_from(SYMS), st.integers(-9, 9))
def test_linear_parts_and_shifted_copies_are_sympys(terms, x, k):
    """``linear_in(e, x)`` splits an index whose counter appears only in terms ``x`` or ``c*x`` into the
    rest and the coefficient, and says None where the counter is under a division, a modulus or a
    product with another symbol; ``plus_constant`` adds a number as sympy's sum would (what unrolling
    makes of such an index for its copy ``k``)."""
    from liftpy.views.arith import linear_in, plus_constant

    e = sympy.Add(*terms)
    found = linear_in(e, x)
    outside = [t for t in sympy.Add.make_args(e) if t != x and not (t.is_Mul and t.args[1:] == (x,) and t.args[0].is_Integer)]
    if found is None:
        assert any(x in t.free_symbols for t in outside), e
        return
    rest, c = found
    assert x not in rest.free_symbols and sympy.expand(rest + c * x - e) == 0, (e, rest, c)
    assert same(plus_constant(rest, c * k), e.xreplace({x: sympy.Integer(k)})), (e, k)


@settings(max_examples=500, deadline=None)
@given(st.lists(index_term(), min_size=2, max_size=4), st.integers(1, 9))
@pytest.mark.slow
def test_equal_sums_built_apart_are_one_object(terms, k):
    """Sums built by the fast constructors from different starting points (terms in another order, a
    constant added to a sum or the sum built with it) are one object, so the tables keyed by them find
    them by identity."""
    from liftpy.views.arith import int_product, int_sum, plus_constant

    a, b = int_sum(terms), int_sum(list(reversed(terms)))
    if a is None or b is None:
        return
    assert a is b
    for t in terms:  # an integer multiple of a term, built as a product or as a sum of copies of it
        if not t.is_Number and int_product((sympy.Integer(2), t)) is not None:
            assert int_product((sympy.Integer(2), t)) is int_sum([t, t])
    with_k = int_sum(list(terms) + [sympy.Integer(k)])
    shifted = plus_constant(a, k)
    if with_k is not None:
        assert same(with_k, shifted) and with_k is shifted


def _c_by_sorting(e) -> str:
    """A sum printed as the printer does it without setting its constant apart: every term sorted, the
    constant last."""
    terms = sorted(e.args, key=arith._term_order)
    return arith._term(terms[0], first=True) + "".join(arith._term(t, first=False) for t in terms[1:])


@settings(max_examples=300, deadline=None)
@given(st.lists(index_term(), min_size=1, max_size=4), st.integers(-70, 70))
def test_sums_with_a_constant_print_as_all_their_terms_sorted(terms, c):
    """The C text of ``rest + c`` is the rest's text (shared by the copies of an unrolled index) and then
    the constant, exactly the text of all the terms sorted, the constant last; ``without_constant`` gives
    the rest and the constant back."""
    e = sympy.Add(*terms, c)
    if not e.is_Add:
        return
    rest, k = arith.without_constant(e)
    assert same(rest + k, e) and (k == 0) == (not e.args[0].is_Integer)
    assert _uncached(lambda: arith.to_c(e)) == _c_by_sorting(e)


@settings(max_examples=150, deadline=None)
@given(st.lists(index_term(), min_size=1, max_size=3), st.lists(st.integers(-9, 9), min_size=1, max_size=4))
def test_hoisting_the_copies_of_an_index_names_what_hoisting_each_whole_names(terms, constants):
    """Hoisting names the divisions of ``rest + c`` from the rest, once for all the copies of an unrolled
    index (which differ in the constant): the same kernel as naming them in each whole index."""
    import importlib

    from liftpy.codegen import stmt as S
    from liftpy.ir.levels import Level
    from liftpy.views import view as V

    hoist = importlib.import_module("liftpy.codegen.passes.hoist")
    buf = SimpleNamespace(name="b")
    rest = sympy.Add(*terms)
    stores = tuple(S.Store(buf, rest + c, V.ConstRead(0.0, None)) for c in constants)
    inner = S.Loop(SYMS[2], 4, Level.SEQ, 0, S.Block(stores))
    kernel = S.Kernel("k", (), (), S.Block((S.Loop(SYMS[0], 4, Level.SEQ, 0, S.Block((inner,))),)))
    fast = _uncached(lambda: hoist.hoist(kernel))
    with mock.patch.object(hoist, "without_constant", lambda e: (e, 0)):
        whole = _uncached(lambda: hoist.hoist(kernel))
    assert fast == whole
    assert [str(s) for s in S.walk(fast.body)] == [str(s) for s in S.walk(whole.body)]


@settings(max_examples=400, deadline=None)
@given(conditions(), st.integers(0, 6), st.booleans())
@pytest.mark.slow
def test_conditions_substituted_and_simplified_in_one_walk(parts, k, split):
    """A padding condition of an unrolled copy (a counter replaced by a constant) or of a trial split (by
    ``2*q + r``), substituted and simplified in one walk (``substitute_simplified``): each part decided
    or simplified as ``simplify_condition`` does it after ``substitute``, the conjunction rebuilt alike."""
    i = SYMS[0]
    q, r = sympy.symbols("q r")
    mapping = {i: 2 * q + r} if split else {i: sympy.Integer(k)}
    ranges = {SYMS[1]: (0, 5), SYMS[2]: (1, 3), q: (0, 3), r: (0, 1)}
    for c in parts + ([make_and(parts)] if parts else []):
        want = _uncached(lambda: arith.simplify_condition(substitute(c, mapping), ranges))
        got = _uncached(lambda: arith.substitute_simplified(c, mapping, ranges))
        assert got == want and str(got) == str(want), (c, mapping)


_ranges_st = st.tuples(*[st.tuples(st.integers(-3, 5), st.integers(0, 9)) for _ in SYMS]).map(
    lambda rs: {s: (lo, lo + span) for s, (lo, span) in zip(SYMS, rs)})


@settings(max_examples=300, deadline=None)
@given(index_term(), _ranges_st, _ranges_st)
def test_memoised_bounds_and_node_counts_are_computed_ones(e, first, second):
    """The bounds of a division are memoised under the ranges of its own symbols: asked under other
    ranges, the answer is what an empty memo computes.  The node counts make_and orders by are sympy's."""
    from sympy.core.sorting import _node_count

    fresh = _uncached(lambda: arith.bounds(e, second))
    _uncached(lambda: arith.bounds(e, first))
    assert arith.bounds(e, second) == fresh
    assert arith._node_count(e) == _node_count(e)
