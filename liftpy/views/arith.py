"""Simplification of index expressions with the ranges of loop variables, and their C form.

Views produce indices such as ``floor((4*i + j)/4)`` and ``Mod(4*i + j, 4)``.  Knowing that ``j`` ranges
over ``[0, 4)`` turns these into ``i`` and ``j``: that is what makes split/join, slide and vectorized
accesses cost nothing at run time.  The rules are the ones Lift's arithmetic library applies in its smart
constructors: a dividend is split into the terms whose coefficients the divisor divides and a remainder;
if the remainder's range lies in ``[0, d)`` it vanishes from the quotient and is the whole modulus.

Every index is an integer expression over loop variables (sympy Symbols with integer ranges) and
integers; ranges are inclusive ``(lo, hi)`` pairs.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from functools import reduce as _fold
from math import gcd
from typing import Mapping

import sympy
from sympy.core.add import _addsort
from sympy.core.operations import AssocOp
from sympy.logic.boolalg import as_Boolean

Ranges = Mapping[sympy.Symbol, tuple[int, int]]


class CDiv(sympy.Function):
    """``a / d`` in C for a dividend the simplifier proved non-negative (so truncation is floor).
    Opaque to sympy: sympy would otherwise renormalize the dividend (``floor((2 - j)/2)`` becomes
    ``floor(-j/2) + 1``) into something C's truncating division gets wrong."""

    nargs = 2
    is_integer = True


class CMod(sympy.Function):
    """``a % d`` in C for a dividend the simplifier proved non-negative."""

    nargs = 2
    is_integer = True


class CLoad(sympy.Function):
    """``buffer[index]``: an index read from memory (a gather's index array).  Opaque to the simplifier,
    whose bounds of it are those of the array it indexes (``length``): a gather's indices must lie in it."""

    nargs = 3  # (buffer name as a Symbol, index, length of the indexed dimension)
    is_integer = True


class Memo:
    """A table of results of a pure function of immutable expressions, emptied when it grows past
    ``limit`` entries (a long search generates millions of distinct indices).  Code generation asks the
    same questions of the same index terms thousands of times: every unrolled copy, every pass."""

    instances: list = []  # every memo made, for ``clear_memos``

    def __init__(self, limit: int = 200_000):
        self.table: dict = {}
        self.limit = limit
        Memo.instances.append(self)

    def get(self, key, compute):
        hit = self.table.get(key)
        if hit is None:
            if len(self.table) > self.limit:
                self.table.clear()
            hit = self.table[key] = compute()
        return hit


def clear_memos() -> None:
    """Empty every memo.  Code generation does when it has generated a program's kernels: what a
    kernel's passes ask is mostly about its own indices (of the simplifier's hits on a VGG-16 layer,
    one in 25 was of an earlier configuration), and tables that kept every configuration's indices up
    to their limit made each lookup slower and each collection of the cyclic collector longer (code
    generation 5-10% faster per point when emptied after each)."""
    for m in Memo.instances:
        m.table.clear()


_EXPANDED, _SYMBOLS, _DIVMODS, _SIMPLIFIED, _CONDITIONS = Memo(), Memo(), Memo(), Memo(), Memo()


def _sympify(e):
    """``sympy.sympify(e)``, skipping sympify's dispatch for what is already a sympy object (nearly every
    call: the passes hand indices around as sympy expressions)."""
    return e if isinstance(e, sympy.Basic) else sympy.sympify(e)


def _is_expanded(e) -> bool:
    """Whether ``sympy.expand`` would leave ``e`` as it is: no product or power of a sum anywhere
    (checking is far cheaper than expanding, which was a third of the simplifier's time)."""
    hit = _EXPANDED.table.get(e)
    if hit is not None:  # looked up before building the closure: most calls are hits
        return hit

    def compute():
        if not e.args:
            return True
        if e.is_Mul or e.is_Pow:
            return not any(a.is_Add for a in e.args) and all(_is_expanded(a) for a in e.args)
        return all(_is_expanded(a) for a in e.args)

    return _EXPANDED.get(e, compute)


def expand_index(e) -> sympy.Expr:
    """``sympy.expand(e)``, skipped where it would change nothing (most indices)."""
    e = _sympify(e)
    return e if _is_expanded(e) else sympy.expand(e)


_DIFFERENCES = Memo()


def difference(a, b) -> sympy.Expr:
    """``expand_index(a - b)``, memoised: the vectorizer compares each address of a run of stores or
    lanes with the first for every width it tries."""
    key = (a, b)
    hit = _DIFFERENCES.table.get(key)
    return hit if hit is not None else _DIFFERENCES.get(key, lambda: _difference(a, b))


def _terms_and_constant(e) -> tuple[tuple, int]:
    """The terms of a sum other than its integer constant (sympy keeps it first), and the constant."""
    if e.is_Integer:
        return (), int(e)
    if e.is_Add and e.args[0].is_Integer:
        return e.args[1:], int(e.args[0])
    return sympy.Add.make_args(e), 0


def _difference(a, b) -> sympy.Expr:
    """``expand_index(a - b)``; for two sums with the same terms but the constant (the addresses of a
    vector's lanes), the difference of the constants without building ``a - b``: sympy cancels the
    equal terms and is left with that integer."""
    a, b = _sympify(a), _sympify(b)
    ta, ca = _terms_and_constant(a)
    tb, cb = _terms_and_constant(b)
    if ta == tb:
        return sympy.Integer(ca - cb)
    out = int_sum((a, times(b, -1)))
    return expand_index(a - b if out is None else out)


def _symbols(e) -> frozenset:
    """``e.free_symbols`` (which sympy recomputes on every call, over the whole tree)."""
    hit = _SYMBOLS.table.get(e)
    if hit is not None:
        return hit

    def compute():
        if e.is_Symbol:
            return frozenset((e,))
        return frozenset().union(*(_symbols(a) for a in e.args)) if e.args else frozenset()

    return _SYMBOLS.get(e, compute)


def free_symbols(e) -> frozenset:
    """The symbols of an index expression (memoised; passes ask for them of every node)."""
    return _symbols(_sympify(e))


DIVMOD = (sympy.floor, sympy.Mod, CDiv, CMod)  # the nodes that divide


def divmod_nodes(e) -> tuple:
    """The divisions and moduli in ``e`` (floor, Mod, CDiv, CMod), outermost first."""
    e = _sympify(e)
    hit = _DIVMODS.table.get(e)
    if hit is not None:
        return hit

    def compute():
        inner = tuple(n for a in e.args for n in divmod_nodes(a))
        return ((e,) + inner) if isinstance(e, DIVMOD) else inner

    return _DIVMODS.get(e, compute)


def _scoped(memo: Memo, e, ranges: Ranges, compute):
    """The result memoised in ``memo`` for ``e`` under the ranges of its own symbols (``compute()`` when
    there is none yet).  A table in two levels: the expression's entry holds its symbols in a fixed
    order and its results by the tuple of their ranges (None for a symbol without one).  The order is
    kept in the entry, so a ranges tuple always means the same ranges.  One flat key (the expression,
    its symbols, their ranges) hashed every symbol and the expression through sympy's Python-level
    ``__hash__`` on every call; here the expression is hashed once and the ranges are tuples of ints
    (a flat key, and a frozenset of (symbol, range) pairs before it, were a tenth of simplifying)."""
    entry = memo.table.get(e)
    if entry is None:
        entry = memo.get(e, lambda: (tuple(_symbols(e)), {}))
    syms, results = entry
    key = tuple([ranges.get(s) for s in syms])
    hit = results.get(key)
    if hit is None:
        hit = results[key] = compute()
    return hit


def _same_if_equal(e, result):
    """``e`` itself when the result equals it: passes keep unchanged statements as the same objects."""
    return e if result == e else result


def substitute(e, mapping: Mapping, seen: dict | None = None):
    """``e`` with symbols replaced (``{i: 3}`` when unrolling, ``{i: 4*q + r}`` when splitting a loop),
    like ``xreplace``, but rebuilding floors, moduli and comparisons without sympy's evaluation (which
    queries assumptions; ``simplify`` decides them from the ranges), except where all operands are
    numbers and the node is folded.  ``seen``: results already computed for this mapping (the indices
    of one statement share most of their terms)."""
    if not isinstance(e, sympy.Basic) or not mapping:
        return e
    return _subst(e, mapping, {} if seen is None else seen)


def _subst(e, mapping, seen: dict):
    if e.is_Symbol:
        return mapping.get(e, e)
    if not e.args:
        return e
    hit = seen.get(e)
    if hit is not None:
        return hit
    if _symbols(e).isdisjoint(mapping):  # (iterates the mapping: a counter or two)
        seen[e] = e
        return e
    args = tuple(_subst(a, mapping, seen) for a in e.args)
    numbers = all(a.is_Number for a in args)
    if isinstance(e, (sympy.floor, sympy.Mod)) or e.is_Relational:
        out = _fold_numbers(e, args) if numbers else _unevaluated(e, args)
    elif isinstance(e, sympy.And):
        out = make_and(args)
    elif isinstance(e, sympy.Or) and not any(isinstance(a, sympy.logic.boolalg.BooleanAtom) for a in args):
        out = e.func(*args, evaluate=False)  # simplify_condition rebuilds it, decided parts dropped
    elif isinstance(e, (CDiv, CMod)) and args[0].is_Integer and args[1].is_Integer and int(args[1]) > 0:
        out = _c_quotient(e, args)
    else:
        out = rebuild(e, args)
    seen[e] = out
    return out


# Nodes built by the constructors below, by their kind and arguments.  sympy's constructors return
# the same object for the same arguments (their cache), and the memos here rely on that: an object's
# hash is computed once, and unchanged parts are recognised by identity.  Built anew each time, the
# same sums were hashed and compared again in every memo they met, and nothing was gained.
_BUILT = Memo()


def _built(key, make):
    """The node memoised for ``key``, or ``make()``'s (None: not one this module builds)."""
    hit = _BUILT.table.get(key)
    if hit is None:
        hit = make()
        if hit is not None:
            _BUILT.table[key] = hit
            if len(_BUILT.table) > _BUILT.limit:
                _BUILT.table.clear()
    return hit


def int_sum(args):
    """``sympy.Add(*args)``, the same expression, for terms that are rational numbers or rational
    multiples of non-numbers (every index sum, and a dividend over its divisor), built without
    ``Add.flatten``'s general machinery (orders, infinities, matrices): the like terms collected with
    Python's integers and fractions, then sympy's own sort of the terms and its constant first.  None
    for any other term (floats, powers, conditions), which the caller builds with sympy.  Rebuilding
    sums whose terms changed (a counter replaced by a sum, a division decided) was a seventh of code
    generation."""
    return _built(("+",) + tuple(args), lambda: _int_sum(args))


def _int_sum(args):
    coeff = 0  # an int while the numbers are integers (nearly always), a Fraction otherwise
    terms: dict = {}
    stack = list(args)
    for o in stack:  # (grows while iterated: a nested sum's terms are appended)
        if o.is_Rational:
            coeff += _number(o)
            continue
        if o.is_Add:
            stack.extend(o.args)
            continue
        split = _coefficient_and_rest(o)
        if split is None:
            return None
        c, rest = split
        hit = terms.get(rest)
        terms[rest] = c if hit is None else hit + c
    seq = []
    for rest, c in terms.items():
        if c == 1:
            seq.append(rest)
        elif c:
            seq.append(_times(c, rest))
    _addsort(seq)
    if coeff:
        seq.insert(0, _rational(coeff))
    if len(seq) < 2:
        return seq[0] if seq else sympy.S.Zero
    return _add(seq)


def _add(terms):
    """The sum of ``terms``, already sympy's canonical terms in its order, one object for each: the sums
    built here from different starting points (a counter's term replaced, a constant added) are the same
    object when they are equal, so the memos and tables keyed by them find them by identity instead of
    comparing them term by term (a tenth of vectorization's time went to such comparisons)."""
    terms = tuple(terms)
    return _built(("Add",) + terms, lambda: sympy.Add._from_args(terms, True))


def without_constant(e) -> tuple[sympy.Expr, int]:
    """``(rest, c)`` with ``e = rest + c`` for a sum with an integer constant (sympy keeps it first), the
    rest one object for its terms (``_add``); ``(e, 0)`` for anything else.  The copies of an unrolled
    index differ in the constant only: what is computed of the rest (its name for a division, its C text)
    is computed once for all of them."""
    if e.is_Add and e.args[0].is_Integer:
        terms = e.args[1:]
        return (terms[0] if len(terms) == 1 else _add(terms)), int(e.args[0])
    return e, 0


def _number(x) -> int | Fraction:
    """A sympy rational as a Python int or Fraction."""
    return x.p if x.q == 1 else Fraction(x.p, x.q)


def _coefficient_and_rest(t):
    """``(c, rest)`` with ``t = c*rest`` for a term of a sum that is not a number or a sum: c its rational
    coefficient (an int or a Fraction), rest what ``Add.flatten`` collects like terms by; None for a
    term the fast constructors leave to sympy (a float coefficient, a power, a condition)."""
    if t.is_Number or t.is_Add or t.is_Pow or not isinstance(t, sympy.Expr):
        return None
    if t.is_Mul and t.args[0].is_Number:
        if not t.args[0].is_Rational:
            return None
        if len(t.args) == 2:
            return _number(t.args[0]), t.args[1]
        rest = t.args[1:]  # a product of several factors, one object for each (like the sums, ``_add``)
        return _number(t.args[0]), _built(("Mul",) + rest, lambda: t._new_rawargs(*rest))
    return 1, t


def _times(c, s):
    """``c*s`` for a rational c (an int or a Fraction) other than 0 and 1 and a non-number s, as
    ``Add.flatten`` builds it; one object for each (like the sums, ``_add``)."""
    return _built((c, s), lambda: _new_times(c, s))


def _new_times(c, s):
    c = _rational(c)
    if s.is_Mul:
        return s._new_rawargs(c, *s.args)
    if s.is_Add:
        return sympy.Mul(c, s, evaluate=False)
    return sympy.Mul._from_args((c, s), True)


def int_product(args):
    """``sympy.Mul(*args)`` for an integer times a term that is neither a number, a sum, a product nor a
    power (``64*CMod(i + 3, 7)``), built directly; None for anything else."""
    return _built(("*",) + tuple(args), lambda: _int_product(args))


def _int_product(args):
    if len(args) != 2:
        return None
    c, s = args
    if s.is_Integer:
        c, s = s, c
    if not c.is_Integer or s.is_Number or s.is_Add or s.is_Mul or s.is_Pow or not isinstance(s, sympy.Expr):
        return None
    if c.p == 0:
        return sympy.S.Zero
    return s if c.p == 1 else _times(c.p, s)


def times(e, r) -> sympy.Expr:
    """``e * r`` for a rational ``r`` (an int or a Fraction), the same expression: sympy distributes a
    number over a sum, so the terms are scaled one by one and summed with ``int_sum`` where they allow
    (``e * k`` of a flat index, ``e / n`` of a view's dividend)."""
    e = _sympify(e)
    terms = [_term_times(t, r) for t in sympy.Add.make_args(e)]
    out = None if None in terms else terms[0] if len(terms) == 1 else int_sum(terms)
    return e * _rational(r) if out is None else out


def _term_times(t, r):
    """``t * r`` for a term of a sum, or None where the fast constructors do not apply."""
    if t.is_Rational:
        return _rational(_number(t) * r)
    split = _coefficient_and_rest(t)
    if split is None:
        return None
    c = split[0] * r
    rest = split[1]
    return sympy.S.Zero if c == 0 else rest if c == 1 else _times(c, rest)


def affine(i, n: int, j) -> sympy.Expr:
    """``i * n + j`` (the index a split, a slide or a joined destination computes), the same
    expression, built with the fast constructors where the terms allow."""
    i, j = _sympify(i), _sympify(j)
    ik = times(i, n)
    out = int_sum((ik, j))
    return ik + j if out is None else out


def row_major(path, dims, width: int = 1) -> sympy.Expr:
    """The flat index of element ``path`` of a row-major array of lengths ``dims`` whose elements are
    ``width`` scalars wide: ``sum(path[k] * stride[k])``, built as one sum (adding one term at a time
    flattened and sorted the growing sum again for each)."""
    terms = []
    stride = width
    for idx, d in zip(reversed(path), reversed(dims)):
        terms.append(times(idx, stride))
        stride *= d
    if not terms:
        return sympy.Integer(0)
    out = int_sum(terms)
    return sympy.Add(*terms) if out is None else out


def rebuild(e, args) -> sympy.Expr:
    """``e.func(*args)``, the same expression, through the fast constructors where they apply: a sum
    whose changed terms all became numbers (an unrolled counter, a division the ranges decide) without
    collecting its terms again, other sums, products of numbers or of an integer and a term, and our
    opaque functions."""
    out = None
    if e.is_Add:
        out = _add_of_numbers(e, args)
        if out is None:
            out = int_sum(args)
    elif e.is_Mul:
        out = _product(args) if all(a.is_Number for a in args) else int_product(args)
        if out is None and len(args) == 2:  # a rational times a sum (distributed), a quotient, a product
            a, b = args
            if b.is_Rational:
                a, b = b, a
            if a.is_Rational and not b.is_Number:
                out = times(b, _number(a))
    elif isinstance(e, _OPAQUE):
        out = _unevaluated(e, args)
    return e.func(*args) if out is None else out


_OPAQUE = (CDiv, CMod, CLoad)

# The argument counts sympy's function constructor gives each node it makes (a set built anew for every
# node, most of what the constructor cost): one set per kind here.
_NARGS = {cls: sympy.FiniteSet(n) for cls, n in ((sympy.floor, 1), (sympy.Mod, 2), (CDiv, 2), (CMod, 2), (CLoad, 3))}


def _node(cls, args):
    """The node ``cls(*args, evaluate=False)`` makes for a floor, a modulus, a comparison or one of our
    opaque functions (which have no evaluation), memoised like the sums: ``Basic.__new__``'s, with the
    function's argument counts, without the constructor's checks (a tenth of unrolling's time).  Equal
    to what the constructor returns, hashed and printed alike."""
    args = tuple(args)
    return _built((cls,) + args, lambda: _new_node(cls, args))


def _new_node(cls, args):
    obj = sympy.Basic.__new__(cls, *args)
    nargs = _NARGS.get(cls)
    if nargs is not None:
        obj.nargs = nargs
    return obj


def _unevaluated(e, args):
    """``e.func(*args, evaluate=False)`` for a floor, modulus, comparison or one of our opaque functions."""
    return _node(e.func, args)


def floor_node(arg) -> sympy.Expr:
    """``sympy.floor(arg, evaluate=False)``."""
    return _node(sympy.floor, (arg,))


def mod_node(a, n) -> sympy.Expr:
    """``sympy.Mod(a, n, evaluate=False)``."""
    return _node(sympy.Mod, (a, _sympify(n)))


def _c_quotient(e, args):
    """``CDiv(n, d)`` or ``CMod(n, d)`` of an integer ``n`` (an unrolled copy's counter) as the integer the
    simplifier makes of it, floor division and modulus (``fdiv`` and ``fmod`` of a constant), so that
    the sums around it lose a term here instead of being simplified again for the constant."""
    n, d = int(args[0]), int(args[1])
    return sympy.Integer(n // d if isinstance(e, CDiv) else n % d)


def _rational(x: int | Fraction) -> sympy.Rational:
    if isinstance(x, int):
        return sympy.Integer(x)
    return sympy.Integer(x.numerator) if x.denominator == 1 else sympy.Rational(x.numerator, x.denominator)


def _product(args):
    """``Mul(*args)`` of rational numbers (a counter's coefficient times its unrolled value)."""
    if not all(a.is_Rational for a in args):
        return None
    out = 1
    for a in args:
        out *= int(a) if a.is_Integer else Fraction(int(a.p), int(a.q))
    return _rational(out)


def _add_of_numbers(e, args):
    """``Add(*args)`` where ``args`` are ``e.args`` with some terms replaced by rational numbers (the
    terms of an unrolled counter), or None for other changes.  The terms left are a subsequence of
    ``e``'s, already in sympy's canonical order and distinct, so the sum is the new constant followed by
    them, built without ``Add.flatten``'s collecting and sorting: what ``Add(*args)`` would return."""
    const = 0  # an int while the numbers are integers (nearly always), a Fraction otherwise
    kept = []
    for old, new in zip(e.args, args):
        if new is old and not old.is_Number:
            kept.append(old)
        elif new.is_Integer:
            const += int(new)
        elif new.is_Rational:
            const += Fraction(int(new.p), int(new.q))
        else:
            return None
    if not kept:
        return _rational(const)
    if const:
        kept.insert(0, _rational(const))
    return kept[0] if len(kept) == 1 else _add(kept)


_LINEAR = Memo()


def linear_in(e, x):
    """``(rest, c)`` with ``e = rest + c*x``, for an integer ``c`` and a ``rest`` without ``x``, when ``x``
    appears in the index ``e`` only as a term ``x`` or ``c*x`` of it (not under a division, a modulus or
    a product with another symbol); None otherwise.  Such an index needs no simplification when ``x``
    becomes a constant: each of its other terms is as simple as before."""
    def compute():
        c, rest = 0, []
        for t in sympy.Add.make_args(e):
            if t is x:
                c += 1
            elif t.is_Mul and len(t.args) == 2 and t.args[1] is x and t.args[0].is_Integer:
                c += int(t.args[0])
            elif x in free_symbols(t):
                return False
            else:
                rest.append(t)
        return _sum(rest), c

    return _LINEAR.get((e, x), compute) or None


def plus_constant(e, k: int) -> sympy.Expr:
    """``e + k`` for an integer ``k``, the same expression, built from ``e``'s terms without collecting
    them again where they allow (the copies of an unrolled index, ``rest + c*k`` for each copy ``k``;
    a shifted dividend)."""
    e = _sympify(e)
    if not k:
        return e
    if e.is_Integer:
        return sympy.Integer(int(e) + k)
    out = _built(("+k", e, k), lambda: _plus_constant(e, k))
    return e + k if out is None else out


def _plus_constant(e, k: int):
    if not e.is_Add:
        return _add((sympy.Integer(k), e))
    if e.args[0].is_Integer:
        return _add_of_numbers(e, (sympy.Integer(int(e.args[0]) + k),) + e.args[1:])
    if e.args[0].is_Number:
        return None  # a rational constant: left to sympy
    return _add((sympy.Integer(k),) + e.args)


_RATIONAL_COMPARISONS = {
    ">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def _fold_numbers(e, args):
    """``e.func(*args)`` for a floor, modulus or comparison of numbers (an unrolled copy's constants),
    computed with Python's exact integers and fractions where sympy's evaluation would get the same
    value after consulting the assumption system."""
    if all(a.is_Rational for a in args):
        fracs = [Fraction(int(a.p), int(a.q)) for a in args]
        if isinstance(e, sympy.floor):
            return sympy.Integer(fracs[0].numerator // fracs[0].denominator)
        if isinstance(e, sympy.Mod):
            if all(a.is_Integer for a in args) and fracs[1] != 0:
                return sympy.Integer(int(fracs[0]) % int(fracs[1]))
        elif e.rel_op in _RATIONAL_COMPARISONS:
            return sympy.true if _RATIONAL_COMPARISONS[e.rel_op](*fracs) else sympy.false
    return e.func(*args)


# sympy's ``And`` sorts its arguments with ``ordered`` (node counts, then ``default_sort_key``) twice
# per construction, and compares their canonical forms: a condition of two comparisons cost a
# millisecond.  Its keys and canonical forms are pure functions of the arguments, so they are memoised.
_SORT_KEYS, _CANONICAL, _NEGATED = Memo(), Memo(), Memo()


def _sort_key(e):
    hit = _SORT_KEYS.table.get(e)
    return hit if hit is not None else _SORT_KEYS.get(e, lambda: sympy.default_sort_key(e))


_NODE_COUNTS = Memo()


def _node_count(e):
    """sympy's ``_node_count`` (the first key of ``ordered``), memoised for every node: the parts of the
    padding conditions of an unrolled body share most of their subtrees."""
    hit = _NODE_COUNTS.table.get(e)
    if hit is not None:
        return hit
    return _NODE_COUNTS.get(e, lambda: 0.5 if e.is_Float else 1 + sum(map(_node_count, e.args)))


def _ordered(items) -> list:
    """``list(sympy.ordered(items))`` for distinct items: by node count, then (only among items of equal
    counts, as there, since it is the costly key) by ``default_sort_key``; ties keep their order."""
    items = list(items)
    if len(items) < 2:
        return items
    groups: dict = {}
    for x in items:
        groups.setdefault(_node_count(x), []).append(x)
    out = []
    for n in sorted(groups):
        group = groups[n]
        if len(group) > 1:
            heads = [_class_head(x) for x in group]
            if None not in heads and len(set(heads)) == len(heads):
                group = [x for _, x in sorted(zip(heads, group), key=lambda hx: hx[0])]
            else:
                group = sorted(group, key=_sort_key)
        out.extend(group)
    return out


def _class_head(x):
    """The first component of ``default_sort_key(x)`` where it is cheap to know: ``x.class_key()`` for
    the objects whose key is ``Basic.sort_key`` (comparisons, conjunctions), None for others.  Two
    comparisons of different kinds are ordered by it alone, without sorting the terms of their sides."""
    if type(x).sort_key is sympy.Basic.sort_key and not x.is_Atom:
        return x.class_key()
    return None


def _canonical(r):
    hit = _CANONICAL.table.get(r)
    return hit if hit is not None else _CANONICAL.get(r, lambda: r.canonical)


def _negated_canonical(c):
    hit = _NEGATED.table.get(c)
    return hit if hit is not None else _NEGATED.get(c, lambda: c.negated.canonical)


def make_and(args):
    """``sympy.And(*args)``, the same expression, built with memoised sort keys and canonical forms: the
    steps of sympy's ``And._new_args_filter`` and ``LatticeOp.__new__`` in their order."""
    flat = []
    for a in args:
        a = as_Boolean(a)
        if a == sympy.false:
            return sympy.false
        if a == sympy.true:
            continue
        if a.func == sympy.And:
            flat.extend(a.args)
        else:
            flat.append(a)
    kept, rel = [], set()
    for x in _ordered(flat):
        if x.is_Relational:
            c = _canonical(x)
            if c in rel:
                continue
            if _negated_canonical(c) in rel:
                kept = [sympy.false]
                break
            rel.add(c)
        kept.append(x)
    argset = frozenset(kept)
    if not argset:
        return sympy.true
    if len(argset) == 1:
        return next(iter(argset))
    obj = super(AssocOp, sympy.And).__new__(sympy.And, *_ordered(argset))
    obj._argset = argset
    return obj


def floor_div(a, n) -> sympy.Expr:
    """``floor(a / n)`` as a view writes it, for an integer ``n > 0``, left unevaluated: sympy's evaluation
    of ``floor`` and ``Mod`` queries the assumptions of every term (a third of code generation's time),
    and ``simplify`` below decides these nodes with the ranges sympy does not know anyway."""
    a = _sympify(a)
    if not (isinstance(n, int) or getattr(n, "is_Integer", False)):
        return sympy.floor(a / n)
    n = int(n)
    if n == 1:
        return a
    if a.is_Integer:
        return sympy.Integer(int(a) // n)
    return floor_node(times(a, Fraction(1, n)))


def floor_mod(a, n) -> sympy.Expr:
    """``a mod n`` (the sign of ``n``), for an integer ``n > 0``, left unevaluated like ``floor_div``."""
    a = _sympify(a)
    if not (isinstance(n, int) or getattr(n, "is_Integer", False)):
        return sympy.Mod(a, n)
    n = int(n)
    if n == 1:
        return sympy.Integer(0)
    if a.is_Integer:
        return sympy.Integer(int(a) % n)
    return mod_node(a, n)


def in_bounds(j, n) -> sympy.Basic:
    """``0 <= j < n`` as a padded view's condition, built unevaluated unless ``j`` is a number (sympy's
    evaluation of a comparison asks the assumption system, which knows nothing of loop ranges;
    ``simplify_condition`` decides it)."""
    j = _sympify(j)
    if j.is_Number:
        return sympy.And(j >= 0, j < n)
    return make_and((sympy.Ge(j, 0, evaluate=False), sympy.Lt(j, n, evaluate=False)))


def _nonneg(num: sympy.Expr, d: int, ranges: Ranges) -> tuple[sympy.Expr, int] | None:
    """``(num + k*d, k)`` with k >= 0 the smallest shift that makes the dividend provably non-negative, or
    None when ``num`` has no known lower bound."""
    b = bounds(num, ranges)
    if b is None:
        return None
    k = 0 if b[0] >= 0 else -((b[0]) // d)
    return expand_index(plus_constant(num, k * d)), k


def bounds(e, ranges: Ranges) -> tuple[int, int] | None:
    """Inclusive integer bounds of ``e``, or None if unknown."""
    e = _sympify(e)
    if e.is_Integer:
        return (int(e), int(e))
    if e.is_Symbol:
        return ranges.get(e)
    if e.is_Add:
        lo = hi = 0
        for a in e.args:
            b = bounds(a, ranges)
            if b is None:
                return None
            lo, hi = lo + b[0], hi + b[1]
        return (lo, hi)
    if e.is_Mul:
        acc = (1, 1)
        for a in e.args:
            if a.is_Rational and not a.is_Integer:
                return None
            b = bounds(a, ranges)
            if b is None:
                return None
            products = [acc[0] * b[0], acc[0] * b[1], acc[1] * b[0], acc[1] * b[1]]
            acc = (min(products), max(products))
        return acc
    if isinstance(e, DIVMOD):
        # Memoised under the ranges of its symbols: the quotients of an unrolled body's indices are shared
        # by its copies, and the simplifier's rules ask about each again (its sign, its split).
        return _scoped(_BOUNDS, e, ranges, lambda: _division_bounds(e, ranges))
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) >= 0:
        b = bounds(e.base, ranges)
        if b is None:
            return None
        k = int(e.exp)
        ends = [b[0] ** k, b[1] ** k]
        if k % 2 == 0 and b[0] <= 0 <= b[1]:
            return (0, max(ends))
        return (min(ends), max(ends))
    if isinstance(e, CLoad):
        n = e.args[2]
        return (0, int(n) - 1) if n.is_Integer else None
    if isinstance(e, (sympy.Max, sympy.Min)):
        bs = [bounds(a, ranges) for a in e.args]
        if any(b is None for b in bs):
            return None
        f = max if isinstance(e, sympy.Max) else min
        return (f(b[0] for b in bs), f(b[1] for b in bs))
    return None


_BOUNDS = Memo()


def _division_bounds(e, ranges: Ranges) -> tuple[int, int] | None:
    """``bounds`` of a floor, a modulus or a C quotient or remainder."""
    if isinstance(e, sympy.floor):
        num, den = _as_fraction(e.args[0])
        if num is None:
            return None
        b = bounds(num, ranges)
        if b is None:
            return None
        return (b[0] // den, b[1] // den)
    if isinstance(e, sympy.Mod):
        # sympy's Mod takes the sign of the divisor; a divisor whose range holds 0 bounds nothing.
        m = bounds(e.args[1], ranges)
        if m is None or m[0] <= 0 <= m[1]:
            return None
        if m[0] < 0:
            return (m[0] + 1, 0)
        b = bounds(e.args[0], ranges)
        if b is not None and 0 <= b[0] and b[1] < m[0]:
            return b
        return (0, m[1] - 1)
    if isinstance(e, CDiv):
        b = bounds(e.args[0], ranges)
        d = int(e.args[1])
        return None if b is None else (b[0] // d, b[1] // d)
    d = int(e.args[1])  # CMod
    b = bounds(e.args[0], ranges)
    if b is not None and 0 <= b[0] and b[1] < d:
        return b
    return (0, d - 1)


def _as_fraction(arg) -> tuple[sympy.Expr | None, int]:
    """Write ``arg`` as ``num / den`` with an integer-coefficient numerator and a positive integer den."""
    arg = expand_index(arg)
    den = 1
    for t in sympy.Add.make_args(arg):
        c = t.as_coeff_Mul()[0]
        if not c.is_Rational:
            return None, 1
        den = den * int(c.q) // gcd(den, int(c.q))
    num = expand_index(times(arg, den))
    for t in sympy.Add.make_args(num):
        c = t.as_coeff_Mul()[0]
        if not c.is_Integer:
            return None, 1
    return num, den


def _split_terms(num: sympy.Expr, d: int) -> tuple[sympy.Expr, sympy.Expr]:
    """``num = d * q + r`` where q collects the terms whose coefficient d divides."""
    q, r = [], []
    for t in sympy.Add.make_args(num):
        c, rest = t.as_coeff_Mul()
        if c.is_Integer and int(c) % d == 0:
            q.append((int(c) // d) * rest)
        else:
            r.append(t)
    return _sum(q), _sum(r)


def _sum(terms: list) -> sympy.Expr:
    """``terms[0] + terms[1] + ...`` as one ``Add`` (sympy's sum does not depend on the grouping;
    adding one term at a time flattened and sorted the growing sum again for each)."""
    if not terms:
        return sympy.Integer(0)
    if len(terms) == 1:
        return terms[0]
    out = int_sum(terms)
    return sympy.Add(*terms) if out is None else out


def fdiv(num: sympy.Expr, d: int, ranges: Ranges) -> sympy.Expr:
    """Floor division of an integer expression by a positive integer, simplified."""
    num = expand_index(num)
    if d == 1:
        return num
    if isinstance(num, sympy.floor):  # floor(floor(x/a)/d) = floor(x/(a*d))
        inner, a = _as_fraction(num.args[0])
        if inner is not None:
            return fdiv(inner, a * d, ranges)
    if isinstance(num, CDiv):  # the same for a quotient already simplified (views nest joins)
        return fdiv(num.args[0], int(num.args[1]) * d, ranges)
    # Split off the terms d divides only when what remains is provably non-negative: the C form of a
    # floor division is C's truncating division, which agrees with floor on non-negative operands only
    # (indices are non-negative as a whole, their parts need not be).
    q, r = _split_terms(num, d)
    b = bounds(r, ranges)
    if b is not None and b[0] // d == b[1] // d:
        return plus_constant(q, b[0] // d)
    if b is not None and b[0] >= 0 and q != 0:
        return _sum([q, fdiv(r, d, ranges)])
    # num = a*X + R with a | d and 0 <= R < a: floor(num/d) = floor(X/(d/a)).  This is what makes
    # the lanes of a vector (4*i + t, t < 4) land in the same window row.
    split = _small_remainder(num, d, ranges)
    if split is not None:
        a, big, _ = split
        return fdiv(times(big, Fraction(1, a)), d // a, ranges)
    terms = sympy.Add.make_args(num)
    coeffs = [t.as_coeff_Mul()[0] for t in terms]
    if all(c.is_Integer for c in coeffs):
        g = _fold(gcd, [int(c) for c in coeffs] + [d])
        if g > 1:  # floor(2*x/4) = floor(x/2)
            return fdiv(times(num, Fraction(1, g)), d // g, ranges)
    shifted = _nonneg(num, d, ranges)
    if shifted is None:
        return floor_of(times(num, Fraction(1, d)))  # printed with a floor-division helper
    a, k = shifted
    return plus_constant(_node(CDiv, (a, sympy.Integer(d))), -k)  # floor((a + k*d)/d) - k = floor(a/d)


def fmod(num: sympy.Expr, d: int, ranges: Ranges) -> sympy.Expr:
    """``num mod d`` for an integer expression and a positive integer, simplified."""
    num = expand_index(num)
    if d == 1:
        return sympy.Integer(0)
    if isinstance(num, (sympy.Mod, CMod)) and num.args[1].is_Integer and int(num.args[1]) % d == 0:
        return fmod(num.args[0], d, ranges)  # (x mod a*d) mod d = x mod d
    _, r = _split_terms(num, d)
    b = bounds(r, ranges)
    if b is not None and b[0] // d == b[1] // d:
        return expand_index(plus_constant(r, -(b[0] // d) * d))
    split = _small_remainder(num, d, ranges)
    if split is not None:  # (a*X + R) mod (a*m) = a*(X mod m) + R
        a, big, small = split
        return expand_index(_sum([times(fmod(times(big, Fraction(1, a)), d // a, ranges), a), small]))
    if b is not None and b[0] >= 0:
        c = r.as_coeff_Add()[0]  # (x + 9) mod 4 = (x + 1) mod 4 while the dividend stays non-negative
        if c.is_Integer and int(c) >= d and b[0] - (int(c) - int(c) % d) >= 0:
            r = plus_constant(r, -(int(c) - int(c) % d))
        return _node(CMod, (r, sympy.Integer(d)))
    shifted = _nonneg(num, d, ranges)
    if shifted is None:
        return mod_of(num, d)  # printed with a floor-modulo helper
    return _node(CMod, (shifted[0], sympy.Integer(d)))  # (a + k*d) mod d = a mod d


def mod_of(num, d: int) -> sympy.Expr:
    """``sympy.Mod(num, d)`` for an integer ``d > 1``, the same expression, without sympy's evaluation
    where its outcome is known: for a sum of positive multiples of plain symbols (none a multiple of
    ``d``) and a constant in ``(0, d)`` whose coefficients have no common factor with ``d``, every
    question it asks (is the sum an integer, even, within ``2d`` of zero) is unknown, no common factor
    comes out, and each term reduced alone would only gain a modulus: the modulus stays as it is.
    That evaluation took milliseconds (a division whose dividend has no known bounds: the counters
    of enclosing loops, for a copy's plan).  A plain counter alone, or the floor of a sum of rational
    multiples of plain counters (the row of a window a copy's plan asks about, ``floor(i/16 + w/4)``),
    stays the same way: sympy knows neither its sign nor its parity, nor a factor it shares with ``d``."""
    if d > 1 and (_is_plain(num) or _plain_floor(num)):
        return mod_node(num, d)
    if not (num.is_Add and d > 1):
        return sympy.Mod(num, d)
    g = d
    for t in num.args:
        if t.is_Integer:
            c = int(t)
            if not 0 < c < d:
                return sympy.Mod(num, d)
        elif _is_plain(t):
            c = 1
        elif _plain_term(t) and t.args[0].is_Integer and int(t.args[0]) > 0 and int(t.args[0]) % d:
            c = int(t.args[0])
        else:
            return sympy.Mod(num, d)
        g = gcd(g, c)
    if g != 1:
        return sympy.Mod(num, d)
    return mod_node(num, d)


def _is_plain(x) -> bool:
    """A symbol created without assumptions (as loop counters are): sympy knows nothing of its values."""
    return x.is_Symbol and x._assumptions0 == _PLAIN


_PLAIN = sympy.Symbol("plain")._assumptions0


def _plain_term(t) -> bool:
    """``x`` or ``c*x`` for a plain symbol ``x`` and a rational ``c``."""
    if t.is_Mul:
        return len(t.args) == 2 and t.args[0].is_Rational and _is_plain(t.args[1])
    return _is_plain(t)


def _plain_floor(x) -> bool:
    """``floor(s)`` for a sum ``s`` of rational multiples of plain symbols and a rational constant, with
    at least one symbol (what ``floor_of`` leaves unevaluated)."""
    if not isinstance(x, sympy.floor):
        return False
    terms = sympy.Add.make_args(x.args[0])
    return any(not t.is_Rational for t in terms) and all(t.is_Rational or _plain_term(t) for t in terms)


_INEQUALITIES = (sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt)


def _has_plain_term(e) -> bool:
    """Whether ``e`` is a plain symbol, or a sum with one among its terms (``x`` or ``c*x``, c rational)
    whose other terms are numbers or integer-valued: sympy cannot know that such a sum is real."""
    if not e.is_Add:
        return _plain_term(e)
    plain = False
    for t in e.args:
        if _plain_term(t):
            plain = True
        elif not (t.is_Rational or _integer_node(t) or (t.is_Mul and len(t.args) == 2 and t.args[0].is_Rational
                                                        and _integer_node(t.args[1]))):
            return False
    return plain


def _integer_node(t) -> bool:
    return isinstance(t, (CDiv, CMod, CLoad))


def relation(cls, lhs, rhs):
    """``cls(lhs, rhs)`` for a comparison class, the same expression, without sympy's evaluation where
    its outcome is known: an inequality with a side sympy cannot prove real (a plain counter in it)
    stays unevaluated, which sympy decided only after a round of assumption queries."""
    lhs, rhs = _sympify(lhs), _sympify(rhs)
    if cls in _INEQUALITIES and (_has_plain_term(lhs) or _has_plain_term(rhs)):
        return cls(lhs, rhs, evaluate=False)
    return cls(lhs, rhs)


def floor_of(arg) -> sympy.Expr:
    """``sympy.floor(arg)``, the same expression, without sympy's evaluation where its outcome is known:
    for a sum of rational multiples of plain symbols and a constant, every assumption it asks about
    (integer, real, imaginary) is unknown, so it keeps the integer constant outside and the rest in an
    unevaluated floor.  That evaluation took milliseconds a call (a copy's contiguity test over the
    indices of a tile makes dozens of them)."""
    terms = sympy.Add.make_args(arg)
    rest = [t for t in terms if not t.is_Rational]
    if len(rest) < len(terms) - 1 or not rest or not all(_plain_term(t) for t in rest):
        return sympy.floor(arg)
    const = [t for t in terms if t.is_Rational]
    if const and const[0].is_Integer:
        return plus_constant(floor_node(_sum(rest)), int(const[0]))
    return floor_node(arg)


def _small_remainder(num: sympy.Expr, d: int, ranges: Ranges):
    """Find a > 1 dividing d such that num = big + small, every coefficient of big a multiple of a and
    small in [0, a).  Returns (a, big, small) for the largest such a, or None."""
    if num == 0:
        return None
    terms = sympy.Add.make_args(num)
    coeffs = [int(c) if c.is_Integer else None for c in (t.as_coeff_Mul()[0] for t in terms)]
    # Each term's bounds once, when a divisor first needs them (the bounds of the small part are the sum
    # of its terms': the terms of a sum are distinct), not again for every divisor tried.
    term_bounds: list = [False] * len(terms)
    for a in _divisors_above_one(d):
        big = [c is not None and c % a == 0 for c in coeffs]
        if all(big) or not any(big):
            continue
        lo = hi = 0
        for k, t in enumerate(terms):
            if big[k]:
                continue
            b = term_bounds[k]
            if b is False:
                b = term_bounds[k] = bounds(t, ranges)
            if b is None:
                break
            lo, hi = lo + b[0], hi + b[1]
        else:
            if lo >= 0 and hi < a:
                return (a, _sum([t for t, x in zip(terms, big) if x]),
                        _sum([t for t, x in zip(terms, big) if not x]))
    return None


@lru_cache(maxsize=4096)
def _divisors_above_one(d: int) -> tuple[int, ...]:
    """The divisors of ``d`` above 1, largest first."""
    return tuple(k for k in range(d, 1, -1) if d % k == 0)


def simplify(e, ranges: Ranges) -> sympy.Expr:
    """Simplify an index expression bottom-up using ``ranges`` (memoised on the expression and the ranges
    of its own symbols)."""
    e = _sympify(e)
    if e.is_Atom:
        return _simplify(e, ranges) if e.is_Symbol else e  # cheaper than the memo's key
    if e.is_Mul and len(e.args) == 2 and e.args[0].is_Integer and e.args[1].is_Symbol:
        r = ranges.get(e.args[1])  # c*x, the commonest term: unchanged unless x has a single value
        if r is None or r[0] != r[1]:
            return e
    return _scoped(_SIMPLIFIED, e, ranges, lambda: _same_if_equal(e, _simplify(e, ranges)))


def _simplify(e, ranges: Ranges) -> sympy.Expr:
    if e.is_Symbol:
        r = ranges.get(e)
        return sympy.Integer(r[0]) if r is not None and r[0] == r[1] else e
    if e.is_Atom:
        return e
    if isinstance(e, sympy.Mod):
        a, m = simplify(e.args[0], ranges), simplify(e.args[1], ranges)
        if m.is_Integer and int(m) > 0:
            return fmod(a, int(m), ranges)
        return sympy.Mod(a, m)
    if isinstance(e, _REBUILT):
        return _from_simplified(e, [simplify(a, ranges) for a in e.args], ranges)
    if isinstance(e, sympy.logic.boolalg.BooleanFunction) or e.is_Relational:
        return simplify_condition(e, ranges)
    if isinstance(e, (sympy.Max, sympy.Min)):
        return extremum(type(e), [simplify(a, ranges) for a in e.args], ranges, e)
    return e


def extremum(cls, args: list, ranges: Ranges, e=None, at_least=None) -> sympy.Expr:
    """``cls(*args)`` (``Max`` or ``Min``) without the arguments the ranges prove never chosen: a padded
    view's clamp ``min(n - 1, max(0, i + 1))`` is ``i + 1`` where ``i + 1`` lies in ``[0, n)``, and costs
    nothing.  ``at_least(x)``: whether ``x >= 0`` is known otherwise too (a guard's facts, ``passes.guards``).
    ``e``: the node the arguments were simplified from, returned when nothing changes."""
    def never(a, b) -> bool:  # a is never the one chosen: b is at least a (at most, for Min)
        d = difference(b, a) if cls is sympy.Max else difference(a, b)
        lo = bounds(d, ranges)
        return (lo is not None and lo[0] >= 0) or (at_least is not None and at_least(d))

    kept = list(args)
    for a in list(args):
        if len(kept) > 1 and any(b is not a and never(a, b) for b in kept):
            kept.remove(a)
    if len(kept) == 1:
        return kept[0]
    if e is not None and len(kept) == len(e.args) and all(a is b for a, b in zip(kept, e.args)):
        return e
    return cls(*kept, evaluate=False)


# The nodes simplified from their arguments' simplified forms (``_from_simplified``): by ``simplify``,
# and by ``substitute_simplified`` without building the substituted node first.
_REBUILT = (CDiv, CMod, sympy.floor, sympy.Add, sympy.Mul)


def _from_simplified(e, args: list, ranges: Ranges) -> sympy.Expr:
    """The simplified form of a quotient, remainder, floor, sum or product whose arguments' simplified
    forms are ``args``."""
    if isinstance(e, CDiv):
        return fdiv(args[0], int(e.args[1]), ranges)
    if isinstance(e, CMod):
        return fmod(args[0], int(e.args[1]), ranges)
    if isinstance(e, sympy.floor):
        num, den = _as_fraction(args[0])
        return sympy.floor(args[0]) if num is None else fdiv(num, den, ranges)
    if all(a is b for a, b in zip(args, e.args)):  # rebuilding from its own arguments gives e back
        return expand_index(e)
    return expand_index(rebuild(e, args))


def _conjunction(parts: list):
    """The conjunction of simplified conditions: false if one is, without the true ones."""
    if any(p is sympy.false for p in parts):
        return sympy.false
    parts = [p for p in parts if p is not sympy.true]
    return make_and(parts) if parts else sympy.true


def substitute_simplified(e, mapping: Mapping, ranges: Ranges, seen: dict | None = None,
                          changed: frozenset | None = None) -> sympy.Expr:
    """``simplify(substitute(e, mapping), ranges)`` for a ``mapping`` of symbols to integers (an unrolled
    copy's counter) or to index expressions (a split loop's ``4*q + r``) whose symbols ``ranges`` bounds,
    in one walk: each sum, product, division and modulus above a replaced symbol is
    simplified from its simplified parts, as ``simplify`` does bottom-up, without first building the
    substituted node only to take it apart again (building it sorted each changed sum once more, and
    this substitution was a fifteenth of code generation); a conjunction's parts are decided or
    simplified, and a comparison's substituted sides compared, as ``simplify_condition`` does, without
    building the substituted condition.  The rest (a modulus by a symbol, a disjunction) goes through
    ``substitute`` and ``simplify`` as it is.  ``seen``: results already computed for this mapping, kept
    by the ranges of each expression's own symbols.  ``changed``: when given, ``e`` was simplified
    already with ``ranges`` but for the symbols of ``changed`` (the mapped ones, and those whose ranges
    were different), so its parts without one of them are their own simplified forms, not asked about
    again (an unrolled copy's indices: the copies of a sum of two quotients, two moduli and three terms
    without the counter took 70 microseconds each instead of 85)."""
    e = _sympify(e)
    return _substituted(e, mapping, ranges, {} if seen is None else seen, changed)


def _substituted(e, mapping, ranges, seen: dict, changed: frozenset | None = None):
    if e.is_Symbol:
        if changed is not None and e not in changed:
            return e
        return simplify(mapping.get(e, e), ranges)
    if not e.args:
        return e
    syms = _symbols(e)
    if changed is not None and syms.isdisjoint(changed):
        return e
    if syms.isdisjoint(mapping):
        return simplify(e, ranges)
    key = (e, tuple([ranges.get(x) for x in syms]))
    hit = seen.get(key)
    if hit is not None:
        return hit
    if isinstance(e, _REBUILT + (sympy.And,)):  # (a conjunction: a padding condition, its parts decided or simplified)
        args = [_substituted(a, mapping, ranges, seen, changed) for a in e.args]
        out = _conjunction(args) if isinstance(e, sympy.And) else _from_simplified(e, args, ranges)
    elif e.is_Relational and e.rel_op in _RATIONAL_COMPARISONS:
        sub: dict = {}
        lhs, rhs = _subst(e.lhs, mapping, sub), _subst(e.rhs, mapping, sub)
        if lhs.is_Number and rhs.is_Number:
            out = simplify_condition(_fold_numbers(e, (lhs, rhs)), ranges)
        else:
            out = _comparison(type(e), lhs, rhs, ranges)
    else:  # a modulus by a symbol, a disjunction, a maximum: substituted, then simplified
        out = simplify(_subst(e, mapping, {}), ranges)
    seen[key] = out
    return out


def simplify_condition(c, ranges: Ranges):
    """Decide a comparison or conjunction where the ranges allow; otherwise simplify its operands
    (memoised like ``simplify``)."""
    c = _sympify(c)
    if c in (sympy.true, sympy.false):
        return c
    return _scoped(_CONDITIONS, c, ranges, lambda: _same_if_equal(c, _simplify_condition(c, ranges)))


def _simplify_condition(c, ranges: Ranges):
    if isinstance(c, sympy.And):
        return _conjunction([simplify_condition(a, ranges) for a in c.args])
    if isinstance(c, sympy.Or):
        parts = [simplify_condition(a, ranges) for a in c.args]
        if any(p is sympy.true for p in parts):
            return sympy.true
        parts = [p for p in parts if p is not sympy.false]
        return sympy.Or(*parts) if parts else sympy.false
    if c.is_Relational:
        return _comparison(type(c), c.lhs, c.rhs, ranges)
    return c


def _comparison(cls, lhs, rhs, ranges: Ranges):
    """``cls(lhs, rhs)`` decided by the ranges, or with its sides simplified as ``lhs - rhs`` against 0."""
    lhs = simplify(lhs if rhs == 0 else difference(lhs, rhs), ranges)  # (x - 0 is x)
    b = bounds(lhs, ranges)
    if b is not None:
        lo, hi = b
        verdict = {
            ">=": (lo >= 0, hi < 0),
            ">": (lo > 0, hi <= 0),
            "<=": (hi <= 0, lo > 0),
            "<": (hi < 0, lo >= 0),
            "==": (lo == hi == 0, lo > 0 or hi < 0),
            "!=": (lo > 0 or hi < 0, lo == hi == 0),
        }[cls.rel_op]
        if verdict[0]:
            return sympy.true
        if verdict[1]:
            return sympy.false
    return _node(cls, (lhs, sympy.S.Zero))  # undecided by the ranges: sympy's evaluation would only ask assumptions


# --------------------------------------------------------------------------------------------------
# C printing


_C_TEXT = Memo()


def to_c(e) -> str:
    """Print an integer index expression (or condition) as OpenCL C (memoised: unrolled copies and the
    kernels of one search print the same terms again and again)."""
    e = _sympify(e)
    hit = _C_TEXT.table.get(e)
    if hit is not None:
        return hit
    return _C_TEXT.get(e, lambda: _to_c(e))


def _to_c(e) -> str:
    if e is sympy.true:
        return "true"
    if e is sympy.false:
        return "false"
    if e.is_Integer:
        return str(int(e))
    if e.is_Symbol:
        return e.name
    if e.is_Add:
        rest, c = without_constant(e)
        if c:  # printed last: the text of the rest, which the copies of an unrolled index share, then it
            return (to_c(rest) if rest.is_Add else _term(rest, first=True)) + _term(e.args[0], first=False)
        terms = sorted(e.args, key=_term_order)
        out = _term(terms[0], first=True)
        for t in terms[1:]:
            out += _term(t, first=False)
        return out
    if e.is_Mul:
        return _term(e, first=True)
    if isinstance(e, CDiv):
        return f"{_operand(e.args[0])} / {int(e.args[1])}"
    if isinstance(e, CMod):
        return f"{_operand(e.args[0])} % {int(e.args[1])}"
    if isinstance(e, CLoad):
        return f"{e.args[0].name}[{to_c(e.args[1])}]"
    if isinstance(e, sympy.floor):
        # No bound was known for the dividend: floor division that is right for negative values too.
        num, den = _as_fraction(e.args[0])
        if num is None:
            raise ValueError(f"cannot print {e} as integer C")
        return f"floordiv_({to_c(num)}, {den})"
    if isinstance(e, sympy.Mod):
        return f"floormod_({to_c(e.args[0])}, {to_c(e.args[1])})"
    if isinstance(e, sympy.And):
        return " && ".join(f"({to_c(a)})" for a in e.args)
    if isinstance(e, sympy.Or):
        return " || ".join(f"({to_c(a)})" for a in e.args)
    if e.is_Relational:
        return f"{to_c(e.lhs)} {e.rel_op} {to_c(e.rhs)}"
    if isinstance(e, (sympy.Max, sympy.Min)):
        f = "max" if isinstance(e, sympy.Max) else "min"
        return _fold(lambda a, b: f"{f}({a}, {b})", [to_c(a) for a in e.args])
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) >= 1:
        # sympy folds x*x into x**2 (a product of two equal moduli, say): C has no power operator.
        return " * ".join([_factor(e.base)] * int(e.exp))
    raise ValueError(f"cannot print {e} ({type(e).__name__}) as C")


C_HELPERS = (
    "int floordiv_(int a, int d) { return (a >= 0 ? a : a - d + 1) / d; }\n"
    "int floormod_(int a, int d) { int r = a % d; return r < 0 ? r + d : r; }\n"
)


def _operand(e) -> str:
    """An operand of / or %: parenthesized unless it is a single name or number."""
    s = to_c(e)
    return s if (e.is_Symbol or (e.is_Integer and int(e) >= 0)) else f"({s})"


def _term_order(t):
    # Variables first in a stable order, the constant last: "wg * 8 + l + 3".
    return (t.is_Integer, _sort_key(t))


def _term(t, first: bool) -> str:
    c, rest = t.as_coeff_Mul()
    if rest == 1:
        v = int(c)
        return str(v) if first else (f" + {v}" if v >= 0 else f" - {-v}")
    factors = [_factor(f) for f in sympy.Mul.make_args(rest)]
    body = " * ".join(factors)
    if not c.is_Integer:
        raise ValueError(f"cannot print the rational coefficient in {t} as integer C")
    c = int(c)
    mag = abs(c)
    text = body if mag == 1 else f"{body} * {mag}"
    if first:
        return text if c > 0 else f"-{text}"
    return f" + {text}" if c > 0 else f" - {text}"


def _factor(f) -> str:
    s = to_c(f)
    if f.is_Add or isinstance(f, DIVMOD + (sympy.Pow,)):
        return f"({s})"
    return s
