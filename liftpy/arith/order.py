"""The orders of sympy's canonical forms, on index expressions (beside ``expr``'s rank, the order of sympy's
``Basic.compare`` in which a sum keeps its terms and a product its factors): ``sort_key`` (sympy's
``default_sort_key``, the order in which the C printer writes a sum's terms and in which a conjunction,
a disjunction or an extremum keeps its arguments), with ``node_count`` and ``ordered`` (sympy's
``ordered``).

They exist for one reason: kernels generated with this algebra are byte-identical to those generated
with the sympy one it replaced, and the printed order of terms, conditions and arguments is sympy's.
Each node is compared as the sympy object it stands for (``sympy_args``): a floor division
``floor(num / d)`` as ``floor`` of the rational sum ``num / d``, a constant as the sympy number of its
value (``Zero``, ``One``, ``Integer``, ``Rational``... are distinct classes there).  The property tests
hold both orders against sympy's on random expressions.
"""

from __future__ import annotations

from . import expr as E
from .expr import class_name, sympy_args


def node_count(e: E.Expr) -> int:
    """sympy's ``_node_count`` (the first key of ``ordered``), once per node."""
    n = e._count
    if n is None:
        inner = _quotient_count(e.args[0], e.args[1].value) if isinstance(e, E.FloorDiv) else None
        if inner is None:
            inner = sum(map(node_count, sympy_args(e)))
        n = e._count = 1 + inner
    return n


def _quotient_count(num: E.Expr, d: int):
    """``node_count(num / d)``, a floor division's content (``expr._quotient_rank``), without building that
    sum; None for a dividend with a power."""
    r = E.Fraction(1, d)
    n = 0
    for t in E.terms_of(num):
        if t.is_const:
            n += 1
            continue
        if t.is_pow or (t.is_mul and any(f.is_pow for f in t.args)):
            return None
        c, rest = E.coeff_and_rest(t)
        if c * r == 1:
            n += node_count(rest)
        else:  # the coefficient and the factors of the rest, in one product
            n += 2 + sum(map(node_count, E.factors_of(rest)))
    return n + 1 if num.is_add else n


def ordered(items: list) -> list:
    """sympy's ``ordered`` for distinct items: by node count, then by ``sort_key``, ties kept.

    The node count and the first part of the sort key (the class's, ``_head``) are compared first: where
    they tell every two items apart, they give the order the whole keys give, without computing the
    rest of them.  A fresh condition's sort key holds those of its sides, and the sort key of a sum those of
    its terms, in sympy's order of terms: a padded view's bounds ``0 <= j < n``, two comparisons of the same
    index, are told apart by their kinds, and building the sort key of ``j`` cost a tenth of a millisecond."""
    if len(items) < 2:
        return list(items)
    keys = [(node_count(x), _head(x)) for x in items]
    if len(set(keys)) == len(keys):
        return [x for _, x in sorted(zip(keys, items), key=_first)]
    return sorted(items, key=lambda x: (node_count(x), sort_key(x)))


def _first(pair):
    return pair[0]


def _head(e: E.Expr) -> tuple:
    """The first item of ``sort_key(e)``, without the rest."""
    if e.is_const:
        return _NUMBER_CLASS
    if e.is_var:
        return _CLASS_KEYS["Symbol"]
    if e.is_cond:
        return _class_key(e)
    rest = E.coeff_and_rest(e)[1]
    return _class_key(rest.args[0] if rest.is_pow else rest)


def _number_key(v) -> tuple:
    return ((1, 0, "Number"), (0, ()), (), v)


_ONE_KEY = _number_key(1)
_NUMBER_CLASS = _ONE_KEY[0]
_CLASS_KEYS = {"Add": (3, 1, "Add"), "Mul": (3, 0, "Mul"), "Pow": (3, 2, "Pow"), "Symbol": (2, 0, "Symbol")}


def _class_key(e: E.Expr) -> tuple:
    name = class_name(e)
    hit = _CLASS_KEYS.get(name)
    if hit is not None:
        return hit
    if isinstance(e, (E.FloorDiv, E.Mod, E.CDiv, E.CMod, E.CLoad)):
        return (4, 10000, name)  # sympy functions with a fixed number of arguments
    return (5, 0, name)


def sort_key(e: E.Expr) -> tuple:
    """sympy's ``default_sort_key`` (once per node)."""
    k = e._key
    if k is None:
        k = e._key = _sort_key(e)
    return k


def _sort_key(e: E.Expr) -> tuple:
    if e.is_const:
        return _number_key(e.value)
    if e.is_var:
        return (_CLASS_KEYS["Symbol"], (1, (e.name,)), _ONE_KEY, 1)
    if e.is_cond:  # Basic.sort_key
        args = tuple(sort_key(a) for a in e.args)
        return (_class_key(e), (len(args), args), _ONE_KEY, 1)
    coeff, rest = E.coeff_and_rest(e)  # Expr.sort_key
    exp = _ONE_KEY
    if rest.is_pow:
        rest, exp = rest.args[0], _number_key(rest.args[1].value)
    if rest.is_var:
        args = (rest.name,)
    else:
        if rest.is_add:
            parts = ordered_terms(rest)
        elif rest.is_mul:
            parts = sorted(rest.args, key=sort_key)
        else:
            parts = sympy_args(rest)
        args = tuple(sort_key(a) for a in parts)
    return (_class_key(rest), (len(args), args), exp, coeff)


def ordered_terms(e: E.Expr) -> list:
    """sympy's ``Add.as_ordered_terms()``: by the lexicographic order of the terms' monomials over the
    generators (the factors, in ``sort_key`` order), higher powers first, then by coefficient."""
    terms = list(e.args)
    if len(terms) == 2 and terms[0].is_const and terms[0].value > 0 and terms[1].is_mul:
        c = terms[1].args[0]
        if c.is_const and c.value < 0:  # sympy's special case: 3 - 2*x stays in that order
            return terms
    split = []
    gens = set()
    for t in terms:
        if t.is_const:
            split.append((t.value, {}))
            continue
        coeff, rest = E.coeff_and_rest(t)
        powers = {}
        for f in E.factors_of(rest):
            base, k = (f.args[0], f.args[1].value) if f.is_pow else (f, 1)
            powers[base] = k
            gens.add(base)
        split.append((coeff, powers))
    index = {g: k for k, g in enumerate(sorted(gens, key=sort_key))}

    def key(item):
        coeff, powers = item[1]
        monom = [0] * len(index)
        for base, k in powers.items():
            monom[index[base]] = -k
        return tuple(monom), (), ((False, 0.0), (float(coeff), 0.0))

    return [t for t, _ in sorted(zip(terms, split), key=key)]


# Extremums keep their arguments in sympy's order (``ordered``), so they are built here.
def _extremum(cls, args) -> E.Expr:
    flat = []
    for a in map(E.as_expr, args):
        flat.extend(a.args if isinstance(a, cls) else (a,))
    numbers = [a.value for a in flat if a.is_const]
    if len(numbers) == len(flat):
        return E.const(max(numbers) if cls is E.Max else min(numbers))
    kept = ordered(list(dict.fromkeys(flat)))
    return kept[0] if len(kept) == 1 else E._intern(cls, tuple(kept))


def maximum(args) -> E.Expr:
    return _extremum(E.Max, args)


def minimum(args) -> E.Expr:
    return _extremum(E.Min, args)
