"""The emitter's sizes with values (``Emitter.conc``): computed with Python's exact arithmetic where it can
(``typecheck.evaluated``), they must be what substituting the values with sympy gives, and a size that
does not come out a whole number must still be refused."""

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from liftpy.codegen import emit
from liftpy.codegen.emit import Emitter
from liftpy.errors import CodegenError
from liftpy.ir import sizes as T
from liftpy.ir.types import substitute_sizes

X, Y, Z = T.sizes("X Y Z")
PLAIN = sympy.Symbol("p")  # no assumptions, and no value: left to sympy


def _leaf():
    return st.one_of(st.sampled_from([X, Y, Z, PLAIN]), st.integers(-4, 9).map(sympy.Integer),
                     st.sampled_from([sympy.Rational(1, 2), sympy.Rational(-3, 4)]))


def _extend(children):
    divisor = st.one_of(st.sampled_from([X, Y, Z]), st.integers(1, 8).map(sympy.Integer))
    return st.one_of(
        st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
        st.tuples(children, children).map(lambda ab: ab[0] * ab[1]),
        st.tuples(children, divisor).map(lambda ab: ab[0] / ab[1]),
        st.tuples(children, divisor).map(lambda ab: sympy.floor(ab[0] / ab[1])),
        st.tuples(children, divisor).map(lambda ab: sympy.Mod(ab[0], ab[1])),
        st.tuples(children, st.integers(0, 3)).map(lambda ab: ab[0] ** ab[1]),
    )


SIZES = st.recursive(_leaf(), _extend, max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(SIZES, st.integers(1, 64), st.integers(1, 64), st.integers(1, 64))
def test_concrete_sizes_are_sympys(size, x, y, z):
    bindings = {X: x, Y: y, Z: z}
    slow = substitute_sizes(size, bindings)
    fast = emit._concrete(size, bindings)
    if isinstance(fast, int):
        assert slow.is_Integer and fast == int(slow)
    if slow.is_Integer:
        assert Emitter(bindings).conc(size) == int(slow)
    else:
        with pytest.raises(CodegenError):
            Emitter(bindings).conc(size)
