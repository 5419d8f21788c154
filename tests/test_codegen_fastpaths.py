"""Speed-ups of code generation outside the index algebra, each compared with the code it replaces: the
header's program text (printed with a length budget for the one-line attempts, against the printer that
rendered every attempt in full), the type checker's comparison of sizes (integers and monomials
decided without sympy, against expanding and cancelling their difference; its divisibility conditions
memoised across programs, against sympy's), the memo of parsed size names, statements and reads that an expression rewrite
leaves unchanged kept as the same objects (against rebuilding every container and every image or lane
read), the reads of a copy's source memoised per source (against the view's access), the hashes IR
nodes remember (against their keys' hashes), a trial split's substitution and simplification in one
walk (against two), the combined vector loads asked about by buffer first, and the emitter's types kept
across configurations (against a memo per kernel).  Generated sources must not change when code generation gets faster, so each
shortcut must answer exactly as its slow path."""

from fractions import Fraction
from unittest import mock

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.ir import printer
from liftpy.ir import sizes as T
from liftpy.ir.expr import Call, Lambda, Literal, Var
from liftpy.ir.primitives import Get, Index, Primitive
from liftpy.ir.types import size_str
from liftpy.ir.userfun import UserFun

from test_text_roundtrip import TARGETED, programs


class _FullPrinter(printer.Printer):
    """The printer before budgets: every one-line attempt rendered in full, then measured."""

    def _render(self, node, indent, budget=None):
        assert budget is None
        if isinstance(node, Var):
            return self.env.get(node.name, node.name)
        if isinstance(node, Literal):
            from liftpy.ir.types import ScalarType

            if not isinstance(node.type, ScalarType) or node.type.name == "half":  # (a half literal says its type)
                return f"value({printer.format_value(node.value, node.type)}, {node.type})"
            return printer.format_value(node.value, node.type)
        if isinstance(node, Lambda):
            eta = printer._eta_name(node)
            if eta is not None:
                return eta
            saved = dict(self.env)
            names = []
            for p in node.params:
                n = self.names.fresh(p)
                self.env[p.name] = n
                names.append(n)
            head = f"fun({', '.join(names)}) =>"
            snapshot = (dict(self.names.counts), set(self.names.used))
            body = self._render(node.body, None)
            if indent is None or indent + len(head) + 1 + len(body) <= printer.WIDTH:
                out = f"{head} {body}"
            else:
                self.names.counts, self.names.used = snapshot
                out = f"{head}\n{' ' * (indent + 2)}{self._render(node.body, indent + 2)}"
            self.env = saved
            return out
        if isinstance(node, Call):
            fn = node.fn
            if isinstance(fn, Primitive) and isinstance(fn, Get):
                return f"{self._render(node.args[0], indent)}._{fn.index}"
            if isinstance(fn, Index):
                return f"{self._render(node.args[0], indent)}[{size_str(fn.index)}]"
            if isinstance(fn, Primitive):
                head = fn.text_name
                statics = [self._static(v) if not isinstance(v, Lambda) else v for _, v in fn.static_args()]
            elif isinstance(fn, UserFun):
                head, statics = fn.text_name, []
            elif isinstance(fn, Lambda):
                head, statics = f"({self._render(fn, None)})", []
            else:
                head, statics = getattr(fn, "text_name", repr(fn)), []
            items = statics + list(node.args)
            if indent is None:
                parts = [x if isinstance(x, str) else self._render(x, None) for x in items]
                return f"{head}({', '.join(parts)})"
            snapshot = (dict(self.names.counts), set(self.names.used))
            one = f"{head}({', '.join(x if isinstance(x, str) else self._render(x, None) for x in items)})"
            if indent + len(one) <= printer.WIDTH:
                return one
            self.names.counts, self.names.used = snapshot
            inner = indent + 2
            lead = [x for x in items if isinstance(x, str)]
            rest = [self._render(x, inner) for x in items if not isinstance(x, str)]
            first = f"{head}(" + "".join(f"{x}, " for x in lead).rstrip()
            return first + "\n" + ",\n".join(" " * inner + p for p in rest) + ")"
        raise TypeError(f"cannot print {node!r}")


def _both(p):
    fast = printer.show_program(p)
    with mock.patch.object(printer, "Printer", _FullPrinter):
        full = printer.show_program(p)
    return fast, full


# Narrow widths break small programs over lines at every depth, names of bound variables included.
@settings(max_examples=150)
@given(programs(), st.sampled_from([10, 25, 40, 60, 100]))
def test_budgeted_printing_prints_what_full_rendering_prints(p, width):
    with mock.patch.object(printer, "WIDTH", width):
        fast, full = _both(p)
    assert fast == full


@pytest.mark.parametrize("name", sorted(TARGETED))
@pytest.mark.parametrize("width", [0, 20, 50, 100, 200])
def test_budgeted_printing_of_targeted_programs(name, width):
    with mock.patch.object(printer, "WIDTH", width):
        fast, full = _both(TARGETED[name]())
    assert fast == full


# --------------------------------------------------------------------------------------------------
# sizes_equal

X, Y, Z = T.sizes("X Y Z")
PLAIN = sympy.Symbol("p")  # no assumptions
ATOMS = [X, Y, Z, PLAIN]


@st.composite
def monomials(draw):
    """Monomials and near-monomials: products of a coefficient and powers of symbols, some unevaluated
    (a zero power, a zero coefficient, a symbol times its inverse: constants in disguise)."""
    coeff = draw(st.sampled_from([1, -1, 2, 3, sympy.Rational(1, 2), sympy.Rational(-3, 4), 0]))
    factors = [sympy.Pow(draw(st.sampled_from(ATOMS)), draw(st.integers(-2, 2)), evaluate=False)
               for _ in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        return sympy.Mul(coeff, *factors, evaluate=False)
    return sympy.Mul(coeff, *factors)


def sizes():
    ints = st.integers(-5, 70).map(lambda n: sympy.Integer(n) if n % 2 else n)
    other = st.sampled_from([X + 1, X * Y - Y, sympy.floor(X / 2), sympy.Mod(X, 4), (X + 1) ** 2 - X ** 2 - 2 * X,
                             sympy.Float(2.0), sympy.Rational(5, 2), X / X])
    return st.one_of(ints, monomials(), other)


@settings(max_examples=600)
@given(sizes(), sizes())
def test_sizes_equal_shortcut_answers_as_sympy(a, b):
    quick = T._number_against_monomial(a, b)
    if quick is not T._UNKNOWN:
        assert quick is T._sizes_equal_by_sympy(a, b)


def test_sizes_equal_shortcut_takes_the_type_checkers_questions():
    n0, r1 = T.sizes("n0 r1")
    assert T._number_against_monomial(64, n0 / r1) is None
    assert T._number_against_monomial(sympy.Integer(4), n0) is None
    assert T._number_against_monomial(sympy.Integer(4), 4) is True
    assert T._number_against_monomial(sympy.Integer(4), sympy.Integer(5)) is False
    assert T._number_against_monomial(sympy.Mul(n0, 1 / n0, evaluate=False), 1) is T._UNKNOWN
    assert T._number_against_monomial(sympy.Pow(n0, 0, evaluate=False), 1) is T._UNKNOWN
    assert T._number_against_monomial(n0 + 1, 1) is T._UNKNOWN


def test_parsed_sizes_are_the_parsers_and_errors_stay_errors():
    from liftpy.errors import LiftTypeError

    import re

    # sympy's parser is the oracle here, on texts the test wrote: liftpy itself never sympifies text.
    for text in ["N", "2*N + 1", "N/4", "H*W*C", "s0", "(N - 3)/2 + 1", "floor(N/2) - Max(M, 3)", "-(-N)"]:
        expected = sympy.sympify(text, locals={n: T.size_var(n) for n in re.findall(r"[A-Za-z_]\w*", text)
                                               if n not in ("floor", "Max")})
        assert T.as_size(text) == expected and T.as_size(text) == expected
        assert all(s.is_integer and s.is_positive for s in T.as_size(text).free_symbols)
    for _ in range(2):
        with pytest.raises(LiftTypeError):
            T.as_size("N +* 2")
    for bad in ["__import__('os').getcwd()", "N / 0", "(" * 500 + "N" + ")" * 500, "2**64", "N.real",
                "lambda: 1", "N; M", "", "1" * 30, "true", "sqrt(N)", "Mod(N)", "N)"]:
        with pytest.raises(LiftTypeError) as e:
            T.as_size(bad)
        assert "\n" not in str(e.value) and len(str(e.value)) < 400


# --------------------------------------------------------------------------------------------------
# Index expressions of the tests below

from liftpy import arith  # noqa: E402

I, J, K = arith.var("i"), arith.var("j"), arith.var("k")


# --------------------------------------------------------------------------------------------------
# Unchanged statements and reads kept as they are

from types import SimpleNamespace  # noqa: E402


def _old_map_exprs(s, fn):
    """``stmt.map_exprs`` before it kept unchanged containers (every block, loop and condition rebuilt)."""
    from liftpy.codegen import stmt as S

    if isinstance(s, S.Block):
        return S.Block(tuple(_old_map_exprs(x, fn) for x in s.items))
    if isinstance(s, S.If):
        return S.If(fn(s.cond), _old_map_exprs(s.body, fn))
    if isinstance(s, S.Loop):
        return S.with_body(s, _old_map_exprs(s.body, fn))
    return S.map_exprs(s, fn)


@st.composite
def statement_trees(draw):
    from liftpy.codegen import stmt as S
    from liftpy.ir.levels import Level
    from liftpy.views import view as V

    buf = SimpleNamespace(name="b")
    img = SimpleNamespace(name="im")
    expr = lambda: draw(st.sampled_from([I, J, K, I + 2 * J, 4 * K + 1, arith.floordiv(J + K, 4), arith.const(2),  # noqa: E731
                                         arith.cmod(arith.cdiv(I + J, 4), 3) + K,
                                         # a counter divided alone beside other terms (a tile's 4 x 2 block)
                                         arith.floordiv(K, 2) * 8 + arith.mod(K, 2) * 3 + I - 9,
                                         arith.cdiv(J, 3) * 5 + arith.cmod(J, 3) + K - 12]))
    # conditions: one comparison, a range as a padded view's (a conjunction of two), or outside one
    guard = lambda: draw(st.sampled_from([arith.rel(">=", expr(), 0), arith.in_bounds(expr(), 5),  # noqa: E731
                                          arith.disj((arith.rel("<", expr(), 0), arith.rel(">=", expr(), 5)))]))
    stores = []
    for _ in range(draw(st.integers(1, 4))):
        value = V.FunCall("f", (V.MemRead(buf, expr(), 1), V.ImageRead(img, expr(), expr(), draw(st.sampled_from([None, K, arith.ONE]))),
                                V.LaneRead(V.MemRead(buf, expr(), 4), expr())))
        stores.append(S.Store(buf, expr(), V.CondRead(guard(), value, V.ConstRead(0.0, None))))
    inner = S.Loop(K, 4, Level.SEQ, 0, S.Block(tuple(stores)))
    cond = S.If(arith.rel("<", expr(), 3), S.Block((stores[-1],)))
    return S.Block((S.Loop(J, 6, Level.SEQ, 0, S.Block((inner, S.IndexDef(arith.var("t"), expr())))), cond))


def _same_tree_fields(a, b):
    return a == b and type(a) is type(b)


@settings(max_examples=200, deadline=None)
@given(statement_trees(), st.sampled_from([I, J, K]), st.integers(0, 3))
def test_substitution_keeps_what_it_does_not_change(top, var, value):
    from liftpy.codegen import stmt as S

    mapping = {var: value}
    fn = lambda e: arith.substitute(e, mapping)  # noqa: E731
    new = S.map_exprs(top, fn)
    old = _old_map_exprs(top, lambda e: arith.substitute(e, mapping))
    assert _same_tree_fields(new, old)
    for before, after in zip(S.walk(top), S.walk(new)):
        exprs = [e for x in S.walk(before) for e in _exprs(x)]
        if not any(var in e.free_vars for e in exprs):
            assert after is before  # untouched subtrees are the same objects
    assert S.map_exprs(top, lambda e: e) is top


def _exprs(x):
    from liftpy.codegen import stmt as S

    if isinstance(x, S.Store):
        yield x.index
        for r in S.reads(x.value):
            found = []
            r.map_exprs(lambda e: found.append(e) or e)
            yield from found
    elif isinstance(x, S.IndexDef):
        yield x.value
    elif isinstance(x, S.If):
        yield x.cond


def test_image_and_lane_reads_are_kept_when_their_expressions_are():
    from liftpy.views import view as V

    buf = SimpleNamespace(name="b")
    img = SimpleNamespace(name="im")
    for r in (V.ImageRead(img, I, J + 1, None), V.ImageRead(img, I, J, K), V.LaneRead(V.MemRead(buf, I, 4), J)):
        assert r.map_exprs(lambda e: e) is r
        moved = r.map_exprs(lambda e: arith.substitute(e, {J: J + 1}))
        fields = {f: getattr(r, f) for f in r.__dataclass_fields__ if not f.startswith("_")}
        assert moved == type(r)(**{f: arith.substitute(v, {J: J + 1}) if isinstance(v, arith.Expr) else v for f, v in fields.items()})
        assert moved is not r


# --------------------------------------------------------------------------------------------------
# No reference cycles from the passes' recursive helpers

def _conv_program():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "conv_highlevel.py"
    spec = importlib.util.spec_from_file_location("conv_highlevel", path)
    conv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conv)
    return conv.conv_lowered(3, 2, 1, True)


def test_code_generation_leaves_no_cycles_of_its_recursive_helpers():
    """A recursive closure is a reference cycle, garbage only the cyclic collector frees, with all it
    holds (a loop split on trial and its body): the passes' recursive helpers are module-level, or let go
    of themselves when done.  So is an index node that holds itself (its coefficient split ``(1, t)``,
    once half of generation's garbage): of the index nodes only variables, which are their own set of
    variables, may be left to the collector."""
    import gc

    from liftpy import arith as A
    from liftpy.codegen.kernel import generate_kernel

    prog = _conv_program()
    generate_kernel(prog, {"C": 4, "H": 10, "W": 10, "M": 3})  # first-use caches
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        generate_kernel(prog, {"C": 8, "H": 12, "W": 12, "M": 3})
        gc.collect()
        names = {o.__qualname__ for o in gc.garbage if callable(o) and hasattr(o, "__qualname__")}
        nodes = [o for o in gc.garbage if isinstance(o, A.Expr) and not o.is_var]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not names and not nodes, (names, nodes[:5])


# --------------------------------------------------------------------------------------------------
# The divmod pass's count of a statement's divisions

def _old_own(x):
    """``divmod._own`` before: expressions through the generator, nodes and symbols asked separately."""
    import importlib

    D = importlib.import_module("liftpy.codegen.passes.divmod")
    exprs = tuple(D.own_exprs(x))
    return tuple(n for e in exprs for n in arith.divmod_nodes(e)), frozenset().union(*(e.free_vars for e in exprs))


@settings(max_examples=200, deadline=None)
@given(statement_trees())
def test_divmod_statement_counts_are_the_generators(top):
    import importlib

    from liftpy.codegen import stmt as S

    D = importlib.import_module("liftpy.codegen.passes.divmod")
    D._OWN.clear()
    try:
        for x in S.walk(top):
            assert D._own(x) == _old_own(x)
    finally:
        D._OWN.clear()


# --------------------------------------------------------------------------------------------------
# Privatization's coefficients of the local ids

@st.composite
def index_sums(draw):
    """An expanded index as privatization meets them: integer multiples of counters, products of two,
    powers, rationals, divisions and moduli holding counters, and a constant."""
    def term():
        s = draw(st.sampled_from([I, J, K]))
        c = draw(st.integers(-6, 6))
        kind = draw(st.sampled_from(["lin", "lin", "lin", "prod", "pow", "frac", "cmod", "floor"]))
        if kind == "lin":
            return s * c
        if kind == "prod":
            return s * draw(st.sampled_from([I, J, K])) * c
        if kind == "pow":
            return s * s * c
        if kind == "frac":
            return arith.scale(s, Fraction(c, 2))
        if kind == "cmod":
            return arith.cmod(s + draw(st.sampled_from([I, J, K])), 4) * c
        return arith.floordiv(s, 3) * c

    return arith.add([term() for _ in range(draw(st.integers(0, 5)))] + [draw(st.integers(-9, 9))])


@settings(max_examples=500, deadline=None)
@given(index_sums(), st.sampled_from([I, J, K]))
def test_linear_parts_are_sympys_coefficients(e, x):
    """What privatization and unrolling read off an index for a counter (``arith.linear_in``): sympy's
    integer coefficient and the rest, or None exactly where the counter is left in the rest (under a
    division or a modulus) or its coefficient is no integer."""
    from liftpy.arith.bridge import from_sympy, to_sympy

    found = arith.linear_in(e, x)
    es, xs = to_sympy(e), to_sympy(x)
    c = es.coeff(xs)
    rest = sympy.expand(es - c * xs) if c.is_Integer else None
    if found is None:
        assert rest is None or rest.has(xs), e
    else:
        assert c.is_Integer and found[1] == int(c) and found[0] is from_sympy(rest) and not rest.has(xs), e


# --------------------------------------------------------------------------------------------------
# Index memos emptied after each generation

def test_generation_empties_the_memos_and_generates_what_warm_memos_generate():
    from liftpy.codegen import kernel as Kn
    from liftpy.codegen.kernel import generate_kernel, generate_pipeline
    from liftpy.codegen.memo import Memo

    prog = _conv_program()
    configs = [{"C": 4, "H": 10, "W": 10, "M": 3}, {"C": 8, "H": 12, "W": 12, "M": 3}, {"C": 4, "H": 14, "W": 10, "M": 5}]
    with mock.patch.object(Kn, "clear_memos", lambda: None):  # memos kept from one generation to the next
        warm = [generate_kernel(prog, c).source for c in configs]
    assert any(m.table for m in Memo.instances)
    cold = []
    for c in configs:
        cold.append(generate_kernel(prog, c).source)
        assert not any(m.table for m in Memo.instances)
    assert cold == warm
    generate_pipeline(prog, configs[0])  # the outermost generation empties them, not the kernels within
    assert not any(m.table for m in Memo.instances)


def test_the_emitters_types_are_kept_across_configurations_and_generate_the_same_kernels():
    """The emitter types subexpressions with symbolic sizes, the same at every configuration of a program
    (``typecheck.type_in``): a second configuration asks the type checker nothing, and generates what a
    fresh memo generates."""
    from liftpy.codegen.kernel import generate_kernel
    from liftpy.ir import typecheck as Tc

    prog = _conv_program()
    configs = [{"C": 4, "H": 10, "W": 10, "M": 3}, {"C": 8, "H": 12, "W": 12, "M": 3}]
    Tc.forget_typings()
    asked = []
    real = Tc.type_of
    with mock.patch.object(Tc, "type_of", lambda e, env, bindings=None: asked.append(e) or real(e, env, bindings)):
        first = generate_kernel(prog, configs[0]).source
        typed = len(asked)
        second = generate_kernel(prog, configs[1]).source
    assert typed > 0 and len(asked) == typed
    Tc.forget_typings()
    assert generate_kernel(prog, configs[1]).source == second and generate_kernel(prog, configs[0]).source == first


_DIV_SIZES = [sympy.Integer(2304), sympy.Integer(4), sympy.Symbol("n0"), sympy.Symbol("r1"),
              sympy.Symbol("n0", positive=True, integer=True), sympy.Symbol("n0") / 4, sympy.Symbol("n0") / sympy.Symbol("r1"),
              sympy.Symbol("N") - 2, sympy.Symbol("S") + 1, 4, 3, 12]


@pytest.mark.parametrize("m", _DIV_SIZES)
@pytest.mark.parametrize("n", _DIV_SIZES)
def test_memoised_divisibility_is_sympys_and_remembered(n, m):
    """The type checker's divisibility conditions, memoised across programs, are those sympy builds for
    the pair asked (not for an equal-looking pair asked before: a symbol with assumptions, a Python
    int), and a second question is answered from the memo; two integers are decided by Python."""
    from liftpy.ir.prims.base import _divisible, divisible
    from liftpy.ir.types import is_integer_size

    if sympy.sympify(m) == 0:
        return
    try:
        want = sympy.Eq(sympy.Mod(n, m), 0)
    except RecursionError:
        want = sympy.Eq(sympy.Mod(n, m, evaluate=False), 0, evaluate=False)
    got = divisible(n, m)
    assert got == want and str(got) == str(want), (n, m)
    if is_integer_size(n) and is_integer_size(m):
        assert got is (sympy.true if int(n) % int(m) == 0 else sympy.false)
        return
    hits = _divisible.cache_info().hits
    assert divisible(n, m) is got
    assert _divisible.cache_info().hits == hits + 1


def test_copy_source_reads_are_the_views_and_remembered_per_source():
    """A copy's source read at a path (memoised for the copy's plan, pipelining and lowering) is what
    the source view reads there, for that source: two copies of different arrays at the same path
    read their own buffers, an equal path is a memo hit, and generation leaves the memo empty."""
    from liftpy.codegen.memory import Buffer
    from liftpy.codegen.passes import copies
    from liftpy.codegen.stmt import CoopCopy
    from liftpy.ir.types import ScalarType
    from liftpy.views import view as V
    from liftpy.codegen.memo import clear_memos

    f32 = ScalarType("float")
    a, b, dest = (Buffer(n, sp, f32, 64, sympy.Integer(64), role, None)
                  for n, sp, role in (("a", "global", "input"), ("b", "global", "input"), ("t", "local", "temporary")))
    ca = CoopCopy(V.TransposeView(V.MemView(a, (8, 8))), dest, (8, 8))
    cb = CoopCopy(V.SplitView(4, V.MemView(b, (64,))), dest, (16, 4))
    path = copies.element_path(ca)
    assert path == copies.element_path(cb)
    clear_memos()
    ra, rb = copies.source_read(ca, path), copies.source_read(cb, path)
    assert ra == ca.source.access(path) and rb == cb.source.access(path)
    assert (ra.buffer, rb.buffer) == (a, b)
    again = tuple(arith.var(s.name) for s in path)  # an equal path, built again
    assert copies.source_read(ca, again) is ra and copies.source_read(cb, again) is rb
    clear_memos()
    assert not copies._READS.table


@settings(max_examples=60)
@given(programs())
def test_remembered_hashes_of_programs_and_nodes_are_their_keys_hashes(p):
    """Programs and IR nodes remember their hash (the emitter and type checker key memos by them): it
    is the hash of their structural key, so a node alpha-equivalent to another, built apart, hashes
    alike; and a pickle carries neither hash nor key (string hashes differ between processes)."""
    import pickle

    for x in (p, p.body):
        assert hash(x) == hash(x.key)
        assert x.__dict__["_hash"] == hash(x.key)
        assert "_hash" not in x.__getstate__()
        back = pickle.loads(pickle.dumps(x))
        assert "_hash" not in back.__dict__ and back == x and hash(back) == hash(x)
    body = p.body
    if isinstance(body, Call) and body.args:
        params = tuple(Var(f"q{k}") for k in range(2))
        a = Lambda(params, Call(body.fn, tuple(params[0] for _ in body.args)))
        other = tuple(Var(f"r{k}") for k in range(2))
        b = Lambda(other, Call(body.fn, tuple(other[0] for _ in body.args)))
        assert a == b and hash(a) == hash(b)


@settings(max_examples=200, deadline=None)
@given(statement_trees(), st.sampled_from([I, J, K]), st.sampled_from([2, 3, 4]), st.integers(0, 12))
def test_split_statements_substituted_and_simplified_in_one_walk_as_in_two(top, var, d, extent):
    """A trial split of the address-calculation pass substitutes its counter and simplifies each
    statement in one walk (``simplify_substituted``): the same statements, conditions decided alike
    and padding reads resolved alike, as substituting the statement and then simplifying it."""
    import importlib

    from liftpy.codegen import stmt as S

    simp = importlib.import_module("liftpy.codegen.passes.simplify")
    q, r = arith.var("q"), arith.var("r")
    mapping = {var: d * q + r}
    ranges = {I: (0, 7), J: (0, 5), K: (0, 3), q: (0, extent), r: (0, d - 1)}

    def one_walk(s, scope):
        return simp.simplify_substituted(s, mapping, scope)

    def two_walks(s, scope):
        return simp._stmt(S.substitute(s, mapping, {}), scope)

    from liftpy.views import view as V

    buf = SimpleNamespace(name="b")
    guarded = S.Store(buf, var, V.CondRead(arith.rel("<", var + J - 4, 0), V.MemRead(buf, 2 * var, 1),
                                           V.ConstRead(0.0, None)))
    top = S.Block(top.items + (guarded,))
    fused, twice = S.map_stmts(top, one_walk, ranges), S.map_stmts(top, two_walks, ranges)
    assert fused == twice
    assert [type(x) for x in S.walk(fused)] == [type(x) for x in S.walk(twice)]


@pytest.mark.parametrize("guarded", [False, True])
def test_combined_loads_swap_the_lanes_of_loaded_buffers_only(guarded):
    """Four lanes of a buffer read in a block become one vector load whose temporary every read of
    those lanes then takes, a read under a padding condition too; the reads of other buffers (asked
    about first by their buffer) are left as they are."""
    import importlib
    import itertools

    from liftpy.codegen import stmt as S
    from liftpy.codegen.memory import Buffer
    from liftpy.ir.types import ScalarType
    from liftpy.views import view as V

    vec = importlib.import_module("liftpy.codegen.passes.vectorize")
    f32 = ScalarType("float")
    b = Buffer("b", "global", f32, 64, sympy.Integer(64), "input", None)
    acc = Buffer("acc", "private", f32, 8, sympy.Integer(8), "accumulator", None)
    out = Buffer("o", "global", f32, 64, sympy.Integer(64), "output", None)
    items = []
    for t in range(4):
        lane = V.MemRead(b, 4 * I + t, 1)
        other = V.MemRead(acc, arith.const(t), 1)
        value = V.FunCall("f", (other, lane))
        if guarded and t == 3:
            value = V.CondRead(arith.rel("<", I, 3), V.FunCall("f", (other, V.MemRead(b, 4 * I + 1, 1))), value)
        items.append(S.Store(out, 8 * I + t, value))
    combined = vec._combine_loads(tuple(items), itertools.count())
    reads = [r for x in combined if isinstance(x, S.Store) for r in V.walk_reads(x.value) if isinstance(r, V.MemRead)]
    assert not [r for r in reads if r.buffer == b and r.width == 1]
    assert [r.index for r in reads if r.buffer == b] == [4 * I]
    before = [r for x in items for r in V.walk_reads(x.value) if isinstance(r, V.MemRead) and r.buffer == acc]
    assert [r for r in reads if r.buffer == acc] == before


def _unrolled_by_substitution(s):
    """The unrolling pass's reference: every unrolled loop replaced by its copies, substituted only."""
    from liftpy.codegen import stmt as S

    if isinstance(s, S.Block):
        out = []
        for x in s.items:
            x = _unrolled_by_substitution(x)
            if isinstance(x, S.Loop) and x.unroll:
                out.extend(S.substitute(x.body, {x.var: k}) for k in range(x.extent))
            else:
                out.append(x)
        return S.Block(S.flatten(out))
    return S.descend(s, _unrolled_by_substitution)


@settings(max_examples=200, deadline=None)
@given(statement_trees(), st.booleans(), st.booleans(), st.sampled_from([None, 1, 4]))
def test_unrolled_copies_are_the_substituted_kernel_simplified(top, outer, inner, use):
    """Unrolling simplifies only what a copy changes: the inner loops' copies first, then of the outer
    loop's copies only the expressions with its counter (those where it is only a term of the sum
    without a walk) and those with an index definition computed from it.  The result is the kernel
    with every unrolled loop replaced by its substituted copies, simplified as a whole afterwards (every
    loop copied by liftpy: the unrolling policy ``none``)."""
    import importlib

    from liftpy.codegen import stmt as S
    from liftpy.ir.levels import Level
    from liftpy.views import view as V

    P = importlib.import_module("liftpy.codegen.passes")
    unroll = importlib.import_module("liftpy.codegen.passes.unroll")
    (loop_j, cond) = top.items
    (loop_k, define) = loop_j.body.items
    extra = ()
    if use is not None:  # a store whose index is computed from the index definition of the counter
        t = define.var
        extra = (S.Store(SimpleNamespace(name="b"), arith.floordiv(t + use, 4), V.MemRead(SimpleNamespace(name="b"), t * 2, 1)),)
    loop_k = S.Loop(K, loop_k.extent, Level.SEQ, 0, loop_k.body, unroll=inner)
    loop_j = S.Loop(J, loop_j.extent, Level.SEQ, 0, S.Block((loop_k, define) + extra), unroll=outer)
    kernel = S.Kernel("k", (), (), S.Block((loop_j, cond)))
    start = P.simplify(kernel)  # the passes before unrolling leave every index simplified
    expected = P.simplify(start.replace(body=_unrolled_by_substitution(start.body)))
    default, unroll.COMPILER_UNROLLS = unroll.COMPILER_UNROLLS, "none"
    try:
        got = P.unroll(start)
    finally:
        unroll.COMPILER_UNROLLS = default
    assert got.body == expected.body
    assert [type(x) for x in S.walk(got.body)] == [type(x) for x in S.walk(expected.body)]


def test_a_split_that_removes_no_division_of_its_counter_is_not_kept():
    """The address-calculation pass keeps a split only for fewer divisions and moduli of the split
    counter: splitting ``i`` by 64 leaves ``(i + 1) / 64`` a division (of ``r``), and the fold of
    ``(l + 56*s) % 6 % 2`` into ``l % 2`` that simplifying the rewritten statement makes on the way
    is no reason to split."""
    import importlib

    from liftpy.codegen import stmt as S
    from liftpy.ir.levels import Level
    from liftpy.views import view as V

    P = importlib.import_module("liftpy.codegen.passes")
    i, l, s = arith.var("i"), arith.var("l"), arith.var("s")
    buf = SimpleNamespace(name="b")
    index = arith.cmod(arith.cmod(l + 56 * s, 6), 2) + 4 * arith.cdiv(i + 1, 64)
    store = S.Store(buf, index, V.MemRead(buf, arith.cdiv(i + 1, 64), 1))
    loop = S.Loop(i, 128, Level.SEQ, 0, S.Block((store,)))
    nest = S.Loop(s, 2, Level.SEQ, 0, S.Block((S.Loop(l, 4, Level.SEQ, 0, S.Block((loop,))),)))
    out = P.eliminate_divmod(S.Kernel("k", (), (), S.Block((nest,))))
    loops = [x.var.name for x in S.walk(out.body) if isinstance(x, S.Loop)]
    assert loops == ["s", "l", "i"]
    # A split that does remove divisions of the counter is kept: i % 64 and i / 64 become r and q.
    kept = S.Loop(i, 128, Level.SEQ, 0, S.Block((S.Store(buf, arith.cmod(i, 64) + 64 * arith.cdiv(i, 64) * 3, V.ConstRead(0.0, None)),)))
    out = P.eliminate_divmod(S.Kernel("k", (), (), S.Block((kept,))))
    assert [x.var.name for x in S.walk(out.body) if isinstance(x, S.Loop)] == ["iq", "ir"]


@pytest.mark.parametrize("hint", [False, True])
def test_a_split_loop_keeps_the_compilers_unrolling(hint):
    """A loop left for the OpenCL compiler to unroll (``Loop.compiler_unroll``, a copy's steps) that the
    address-calculation pass splits is two such loops: the iterations stay where the mark put them."""
    import importlib

    from liftpy.codegen import stmt as S
    from liftpy.ir.levels import Level
    from liftpy.views import view as V

    P = importlib.import_module("liftpy.codegen.passes")
    i = arith.var("i")
    buf = SimpleNamespace(name="b")
    body = S.Block((S.Store(buf, arith.cmod(i, 4) + 8 * arith.cdiv(i, 4), V.ConstRead(0.0, None)),))
    loop = S.Loop(i, 16, Level.SEQ, 0, body, compiler_unroll=hint)
    out = P.eliminate_divmod(S.Kernel("k", (), (), S.Block((loop,))))
    loops = [x for x in S.walk(out.body) if isinstance(x, S.Loop)]
    assert [x.var.name for x in loops] == ["iq", "ir"]
    assert [x.compiler_unroll for x in loops] == [hint, hint]



def _concrete_verdict(p, bindings):
    """What type-checking with the values says: None when it passes with every requirement decided,
    else the error (or the requirement left open)."""
    from liftpy.errors import LiftTypeError
    from liftpy.ir.typecheck import typecheck as check

    try:
        typing = check(p, bindings=bindings)
    except LiftTypeError as e:
        return str(e)
    return None if not typing.requirements else "open: " + str(typing.requirements[0])


@settings(max_examples=300, deadline=None)
@given(programs(), st.integers(-2, 12), st.integers(-2, 12), st.integers(-2, 12))
@pytest.mark.slow
def test_check_sizes_from_the_symbolic_typing_accepts_only_what_checking_with_values_accepts(p, n, m, k):
    from liftpy.errors import LiftError
    from liftpy.ir import typecheck as tc

    bindings = {"N": n, "M": m, "K": k}
    slow = _concrete_verdict(p, bindings)
    if tc._decided_by_symbolic_typing(p, bindings) is not None:
        assert slow is None, f"the symbolic typing accepted what checking with the values refuses: {slow}"
    try:  # check_sizes as a whole: the verdict of checking with the values, and its error
        tc.check_sizes(p, bindings)
        verdict = None
    except LiftError as e:
        verdict = str(e)
    if slow is None:
        assert verdict is None
    elif not slow.startswith("open: "):
        assert verdict == slow
    else:
        assert verdict is not None


def test_check_sizes_from_the_symbolic_typing_decides_the_commonest_cases():
    """Sizes that make every requirement and length hold are accepted without type-checking again with
    the values; a window larger than its array and sizes below one are left to the check with values,
    whose errors name the primitive."""
    from liftpy.errors import LiftTypeError
    from liftpy.ir import typecheck as tc

    p = TARGETED["stencil (README)"]()
    good = {"H": 8, "W": 5}
    assert tc._decided_by_symbolic_typing(p, good) is not None
    with mock.patch.object(tc, "typecheck", wraps=tc.typecheck) as spy:
        tc.check_sizes(p, good)
    assert all(c.kwargs.get("bindings") is None for c in spy.call_args_list)  # no check with the values
    for bad, named in (({"H": 2, "W": 5}, "slide"), ({"H": 8, "W": 0}, "input data"), ({"H": -1, "W": 5}, "input data")):
        assert tc._decided_by_symbolic_typing(p, bad) is None
        with pytest.raises(LiftTypeError, match=named):
            tc.check_sizes(p, bad)


def test_a_stage_is_typed_once_for_splitting_and_checking_and_forgotten_on_request():
    """Splitting a program into kernels types each stage with the typing its size check then reads (it was
    typed twice: for the type of the buffer between stages, then for the check); ``forget_programs``
    forgets the typings, stages and texts, so that a benchmark's points pay their variant's one-time work."""
    from liftpy.codegen.kernel import forget_programs, generate_pipeline
    from liftpy.explore.operator import library_operator
    from liftpy.ir import kernels as K
    from liftpy.ir import typecheck as tc
    from liftpy.rewrite.explore import explore

    op = library_operator("sum", {"N": 4096})
    v = next(v for v in explore(op.program(), op.explore_options()) if K.kernel_count(v.program) == 2)
    sizes = {"N": 4096, **{str(p): 16 for p in v.params}}

    def typings():
        with mock.patch.object(tc, "typecheck", wraps=tc.typecheck) as spy, \
                mock.patch.object(K, "type_of", wraps=K.type_of) as by_type:
            generate_pipeline(v.program, sizes, placements=v.placement_map)
        stages = [st.program for st in K.split_kernels(v.program)]
        return [sum(c.args[0] is st for c in spy.call_args_list) for st in stages], by_type.call_count

    forget_programs()
    assert typings() == ([1, 1], 0)
    assert typings() == ([0, 0], 0)  # remembered across configurations of the variant
    forget_programs()
    assert typings() == ([1, 1], 0)


_SUMS = st.sampled_from([I, J, K, I + 2 * J, 4 * K + 1, arith.floordiv(J + K, 4), arith.const(2), arith.const(-3),
                         arith.cmod(arith.cdiv(I + J, 4), 3) + K, 2 * J + I + 7, I + 2 * J - 1, arith.floordiv(J + K, 4) + 3])


@settings(max_examples=300, deadline=None)
@given(_SUMS, _SUMS, st.integers(-9, 9))
def test_a_stores_offset_is_the_difference_of_the_indices(a, b, k):
    """The vectorization finds runs of stores to consecutive addresses from their indices' constants (not
    the differences built): the offset must be the difference wherever that is a number, None elsewhere."""
    import importlib

    vec = importlib.import_module("liftpy.codegen.passes.vectorize")
    x = arith.plus(a, k)
    d = x - b
    assert vec._offset(x, *arith.without_constant(b)) == (d.value if d.is_const else None)


def test_equal_stage_programs_of_two_variants_are_typed_once():
    """Two variants whose stages are equal programs (vgg16:12's 40 tiled variants have 60 stages, 21 distinct)
    share the stage's typing: the type and the requirements' predicates, which is what the callers read."""
    import copy

    from liftpy.ir import typecheck as tc

    p = TARGETED["stencil (README)"]()
    q = copy.deepcopy(p)
    assert q == p and q is not p
    tc.forget_typings()
    with mock.patch.object(tc, "typecheck", wraps=tc.typecheck) as spy:
        first, second = tc.symbolic_typing(p), tc.symbolic_typing(q)
    assert spy.call_count == 1 and first is second and first is not None
    tc.forget_typings()
    with mock.patch.object(tc, "typecheck", wraps=tc.typecheck) as spy:
        tc.symbolic_typing(q)
    assert spy.call_count == 1


def test_a_subexpressions_type_is_remembered_by_its_variables_types_not_their_names():
    """``type_in`` answers the same node with the same type objects for its variables from its identity
    memo, and a node whose variable has another type (an equal name, another object) is typed again."""
    from liftpy.ir import typecheck as Tc
    from liftpy.ir.parser import parse_program
    from liftpy.ir.types import ArrayType, Float

    body = parse_program("def f(x: [float]N) = split(2, x)").body
    n8, n6 = ArrayType(Float, sympy.Integer(8)), ArrayType(Float, sympy.Integer(6))
    Tc.forget_typings()
    asked, looked_up = [], []
    real, memo = Tc.type_of, Tc._typed
    with mock.patch.object(Tc, "type_of", lambda e, env, bindings=None: asked.append(e) or real(e, env, bindings)), \
            mock.patch.object(Tc, "_typed", lambda e, env: looked_up.append(e) or memo(e, env)):
        first = Tc.type_in(body, {"x": (n8, "a view")})
        again = Tc.type_in(body, {"x": (n8, "another view")})
        other = Tc.type_in(body, {"x": (n6, "a view")})
    assert first is again and len(asked) == 2 and len(looked_up) == 2  # (the second answered by identity)
    assert str(first) == str(Tc.type_of(body, {"x": n8})) and str(other) == str(Tc.type_of(body, {"x": n6}))
    assert str(first) != str(other)
