"""Index arithmetic: integer expressions over loop variables (``nodes``, built in canonical form by ``expr``)
and conditions on them (``cond``),
their simplification with the variables' ranges (``simplify``), walks over them (``walk``) and their C
form (``printer``); ``order``
keeps sympy's canonical orders, ``bridge`` converts at the boundary with sympy (the constraint solver).

The names below are what code generation uses."""

from .cond import conj, disj, negate, rel
from .expr import (FALSE, ONE, TRUE, ZERO, Add, And, ArithError, CDiv, CLoad, CMod, Cond, Const, Expr, FloorDiv, Max,
                   Min, Mod, Mul, Or, Pow, Rel, Truth, Var, add, as_expr, cdiv, cload, cmod, coeff_and_rest, const,
                   factors_of, floordiv, mod, mul, plus, scale, terms_of, truth, var,
                   without_constant)
from .order import maximum, minimum
from .printer import C_HELPERS, show, to_c
from .simplify import DIVMOD, Ranges, bounds, comparison, difference_bounds, extremum, fdiv, fmod, mod_of, simplify, simplify_condition
from .walk import divmod_nodes, evaluate, linear_in, rebuild, substitute, substitute_simplified

Expr.__repr__ = lambda self: show(self)  # (the printer builds on ``expr``: its text is installed from here)


def affine(i, n: int, j) -> Expr:
    """``i * n + j``: the index a split, a slide or a joined destination computes."""
    return add((mul((i, n)), j))


def row_major(path, dims, width: int = 1) -> Expr:
    """The flat index of element ``path`` of a row-major array of lengths ``dims`` whose elements are
    ``width`` scalars wide."""
    terms, stride = [], width
    for idx, d in zip(reversed(path), reversed(dims)):
        terms.append(mul((idx, stride)))
        stride *= d
    return add(terms)


def in_bounds(j, n) -> Cond:
    """``0 <= j < n``: a padded view's condition."""
    return conj((rel(">=", j, 0), rel("<", j, n)))
