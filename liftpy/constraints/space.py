"""The data a tuning space is made of: parameters, constraints with their origins, and the space itself.

Constraint inference produces a ``Space``; everything else in this package (domains, ordering, counting,
sampling, explanations, printing) consumes one.  Predicates are sympy booleans over the parameters'
symbols only: sizes of the program are already substituted, so a space is a closed problem.

Symbols are matched to parameters by *name*, not by sympy identity: inference creates them with
``size_var`` (integer, positive), tests and tools may create them differently, and a name is what a user
reads in an explanation anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import copyreg

import sympy
from sympy.core import relational
from sympy.sets.contains import Contains

from ..errors import ConstraintError
from ..ir.types import size_var


def _unevaluated(cls, args):
    return cls(*args, evaluate=False)


def _reduce_unevaluated(e):
    return _unevaluated, (type(e), e.args)


# A space's constraints and a model's expressions cross processes (a worker's screen comes back with its
# space) and the disk cache pickled.  sympy rebuilds a relation, a modulus, a floor or an extremum by
# constructing it again, which asks its assumptions what it is: 21,000 relations unpickled took 13 s of a
# 205 s network exploration's main process on the 2-core machine.  What was pickled is what evaluating made
# of it, so it is rebuilt as it was, unevaluated: the same text (590 spaces and models of two convolution
# kinds compared), five times faster to unpickle.  (Not sums and products: sympy pickles an unevaluated
# product as one it evaluates again, and keeping it unevaluated would change the constraints' text.)
for _cls in (relational.GreaterThan, relational.LessThan, relational.StrictGreaterThan, relational.StrictLessThan,
             relational.Equality, relational.Unequality, Contains, sympy.Mod, sympy.floor, sympy.ceiling, sympy.Min,
             sympy.Max):
    copyreg.pickle(_cls, _reduce_unevaluated)

KINDS = ("algorithmic", "hardware", "range")


@dataclass(frozen=True)
class Constraint:
    """One condition the parameters must meet, and where it comes from.

    ``origin`` is the sentence an explanation shows ("split(s1) of [float]112 needs 112 % s1 == 0");
    ``primitive`` names the rule or device limit ('split', 'device:max_work_group_size', 'range');
    ``kind`` says whether breaking it gives wrong results ('algorithmic'), a kernel that cannot run
    ('hardware'), or a value outside the range a rule explores ('range').
    """

    predicate: sympy.Basic
    origin: str
    primitive: str
    kind: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ConstraintError(f"constraint kind must be one of {', '.join(KINDS)}, not {self.kind!r} ({self.origin})")
        pred = sympy.sympify(self.predicate)
        if not isinstance(pred, sympy.logic.boolalg.Boolean):
            raise ConstraintError(f"the predicate of '{self.origin}' is not a condition: {pred}")
        object.__setattr__(self, "predicate", pred)

    @cached_property
    def names(self) -> frozenset[str]:
        """Names of the parameters the predicate mentions."""
        return frozenset(str(s) for s in self.predicate.free_symbols)

    def __str__(self) -> str:
        return f"[{self.kind}] {self.origin}"


@dataclass(frozen=True)
class Parameter:
    """A tuning parameter.  Its candidate values are ``domain`` when given, else integers in
    ``[lo, hi]``; ``lo`` defaults to 1 (parameters are positive sizes unless stated otherwise) and a
    missing ``hi`` must be implied by the constraints (see ``domains.derive_domains``)."""

    name: str
    domain: tuple[int, ...] | None = None
    lo: int | None = None
    hi: int | None = None
    doc: str = ""

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ConstraintError(f"parameter name {self.name!r} is not an identifier")
        if self.domain is not None:
            values = tuple(sorted({_as_int(v, self.name) for v in self.domain}))
            object.__setattr__(self, "domain", values)
        for bound in ("lo", "hi"):
            v = getattr(self, bound)
            if v is not None:
                object.__setattr__(self, bound, _as_int(v, self.name))

    @property
    def symbol(self) -> sympy.Symbol:
        return size_var(self.name)


@dataclass(frozen=True)
class Space:
    """Parameters and the constraints on them.  Every symbol of every predicate must be a parameter."""

    parameters: tuple[Parameter, ...]
    constraints: tuple[Constraint, ...]

    def __post_init__(self):
        object.__setattr__(self, "parameters", tuple(self.parameters))
        object.__setattr__(self, "constraints", tuple(self.constraints))
        names = [p.name for p in self.parameters]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConstraintError(f"parameters declared more than once: {', '.join(dupes)}")
        known = set(names)
        for c in self.constraints:
            unknown = sorted(c.names - known)
            if unknown:
                raise ConstraintError(
                    f"'{c.origin}' mentions {', '.join(unknown)}, which {'is' if len(unknown) == 1 else 'are'} "
                    f"not a parameter of this space (parameters: {', '.join(names) or 'none'}); "
                    "substitute program sizes before building the space"
                )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise ConstraintError(f"no parameter named {name!r} (parameters: {', '.join(self.names)})")

    def with_constraints(self, constraints) -> "Space":
        return Space(self.parameters, tuple(constraints))


def power_of_two(symbol: sympy.Symbol) -> sympy.Basic:
    """The predicate "``symbol`` is a power of two" (1, 2, 4, ...), which domain derivation reads as a
    candidate rule rather than a filter."""
    k = sympy.Dummy("k", integer=True, nonnegative=True)
    return sympy.Contains(symbol, sympy.ImageSet(sympy.Lambda(k, 2**k), sympy.S.Naturals0), evaluate=False)


def _as_int(v, name: str) -> int:
    if isinstance(v, bool):
        raise ConstraintError(f"parameter {name}: {v!r} is not an integer value")
    try:
        iv = int(v)
    except (TypeError, ValueError):
        raise ConstraintError(f"parameter {name}: {v!r} is not an integer value") from None
    if iv != v:
        raise ConstraintError(f"parameter {name}: {v!r} is not an integer value")
    return iv
