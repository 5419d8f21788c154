"""The folds: ``reduce`` and its lowered forms, sequential (``reduceSeq``) and a work-group's tree
(``reduceLcl``), and the prefix fold ``scanSeq``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import sympy

from ..expr import Lambda
from ..levels import Level
from ..types import ArrayType, Type, types_equal
from ..values import BV, at_axis, fill_batch, lift
from .base import Primitive, check_dim, expect_array


class Fold(Primitive):
    """What the primitives that carry an accumulator along an array share: ``f(acc, x)``, an initial value
    and the array, ``fold(f, init, xs)``; the accumulator's type is the initial value's."""

    nargs: ClassVar[int] = 2
    fun_arity: ClassVar[int] = 2
    f: Lambda

    def fun_param_types(self, field, arg_types):
        return [arg_types[0], arg_types[1].elem]

    def accumulator_type(self, args, tc) -> Type:
        """The accumulator's type, once ``f`` is checked to keep it."""
        init, xs = args[0], expect_array(tc, args[1], f"an array to {self.kind}")
        out = tc.apply(self.f, [init, xs.elem])
        same = types_equal(out, init)
        if same is False:
            tc.fail(f"the function returns {out} but the accumulator (init) has type {init}")
        if same is None:
            tc.require_types_equal(out, init, "the function's result and the accumulator")
        return init

    @staticmethod
    def element(xs, i: int):
        """Element ``i`` of the batched array ``xs``."""
        return at_axis(xs, lambda a, _ax: a[(slice(None),) * _ax + (i,)])


class ReduceLike(Fold):
    """Shared type rule and semantics of reductions."""

    kind: ClassVar[str] = "reduce"

    def typecheck(self, args, tc):
        return ArrayType(self.accumulator_type(args, tc), sympy.Integer(1))

    def evaluate(self, args, ev):
        acc, xs = args
        for i in range(xs.length()):
            acc = lift(ev.call(self.f, [acc, self.element(xs, i)], xs.batch), xs.batch)
        return at_axis(acc, lambda a, _ax: np.expand_dims(a, _ax))


@dataclass(frozen=True, eq=True)
class Reduce(ReduceLike):
    """``reduce(f, init, xs)``: fold f over xs from the left, starting at init.  ``[T]n -> [U]1`` for
    ``f: (U, T) -> U``."""

    f: Lambda
    name: ClassVar[str] = "reduce"


@dataclass(frozen=True, eq=True)
class ReduceSeq(ReduceLike):
    """A reduction performed sequentially by one work-item, in its accumulator's memory."""

    f: Lambda
    unroll: bool = False
    name: ClassVar[str] = "reduceSeq"
    text_forms: ClassVar[dict] = {"reduceSeq": {"unroll": False}, "reduceSeqUnroll": {"unroll": True}}
    level: ClassVar[Level] = Level.SEQ


@dataclass(frozen=True, eq=True)
class ReduceLcl(ReduceLike):
    """A reduction performed by the work-items of a group together, as a tree in local memory (Lift's
    parallel reduction): the array, already in local memory, is halved in place, each step adding its
    second half onto its first with the work-items spread over dimension ``dim`` and a barrier between
    steps, until one value is left, which is combined with ``init``.  The function must be associative
    and commutative, ``(T, T) -> T`` (a sum, a maximum); the tree is the order the interpreter follows
    too, so it computes what the kernel does, rounding included."""

    dim: int
    f: Lambda
    name: ClassVar[str] = "reduceLcl"
    level: ClassVar[Level] = Level.LCL  # the group's work-items, spread over ``dim``

    def typecheck(self, args, tc):
        check_dim(tc, self.dim)
        out = super().typecheck(args, tc)  # args[1] is an array from here on
        if types_equal(args[1].elem, args[0]) is False:
            tc.fail(f"a tree reduction combines elements with each other: their type {args[1].elem} must be the "
                    f"accumulator's {args[0]}")
        return out

    def evaluate(self, args, ev):
        acc, xs = args
        items = [at_axis(xs, lambda a, _ax, i=i: a[(slice(None),) * _ax + (i,)]) for i in range(xs.length())]
        while len(items) > 1:
            half = (len(items) + 1) // 2
            items = [lift(ev.call(self.f, [items[i], items[i + half]], xs.batch), xs.batch) if i + half < len(items)
                     else items[i] for i in range(half)]
        if items:
            acc = lift(ev.call(self.f, [acc, items[0]], xs.batch), xs.batch)
        return at_axis(acc, lambda a, _ax: np.expand_dims(a, _ax))


@dataclass(frozen=True, eq=True)
class ScanSeq(Fold):
    """``scanSeq(f, init, xs)``: the inclusive prefix fold, element ``i`` of the result is
    ``f(...f(f(init, xs[0]), xs[1])..., xs[i])``.  ``[T]n -> [U]n`` for ``f: (U, T) -> U`` and ``init: U``;
    computed sequentially by one work-item, in a private accumulator stored after every step."""

    f: Lambda
    name: ClassVar[str] = "scanSeq"
    kind: ClassVar[str] = "scan"
    level: ClassVar[Level] = Level.SEQ

    def typecheck(self, args, tc):
        return ArrayType(self.accumulator_type(args, tc), args[1].size)

    def evaluate(self, args, ev):
        acc, xs = args
        steps = []
        for i in range(xs.length()):
            acc = fill_batch(lift(ev.call(self.f, [acc, self.element(xs, i)], xs.batch), xs.batch))
            steps.append(acc.data)
        return BV(_stack(steps, xs.axis), xs.batch)


def _stack(steps: list, axis: int):
    """The values of ``steps`` (trees of arrays of one shape) as one tree, a new array axis at ``axis``."""
    if isinstance(steps[0], tuple):
        return tuple(_stack([s[k] for s in steps], axis) for k in range(len(steps[0])))
    return np.stack(steps, axis=axis)
