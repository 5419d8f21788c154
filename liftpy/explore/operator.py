"""Operators: what the exploration engine needs to know about a problem, and nothing more.

An operator is a high-level program together with the sizes of one problem, how to make its inputs, what
a correct output is, and (optionally) the vendor or library implementations to compare with.  The engine
(``liftpy.explore.loop``) derives the program's variants, samples or searches their configurations,
runs each point in a worker process and keeps the records; it never looks inside the operator, so a
convolution, a matrix product, a pooling or a stencil written by a user are explored the same way.

``ProgramOperator`` is the operator of any program: deterministic random inputs, and validation against
the reference interpreter (or a numpy function the user supplies, for sizes where the interpreter is too
slow).  The convolution (``liftpy.explore.conv.ConvOperator``) adds its layer catalogue, its layouts and
cuDNN.  Operators travel to worker processes by pickling, so everything they hold must be picklable: the
program (user functions included, see ``liftpy.ir.userfun``), sizes, and module-level reference functions.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from ..cli_args import parse_sizes as parse_size_text
from ..cli_args import read_program
from ..errors import InputError
from ..ir.analysis import refuse_missing_sizes, refuse_unknown_sizes
from ..ir.compare import Comparison, Validation, compare  # noqa: F401 - operators validate with them
from ..ir.expr import Program
from ..ir.inputs import input_shapes, least_traffic, random_inputs  # noqa: F401 - the operators' inputs
from ..ir.interpreter import evaluate
from ..ir.types import size_var, whole_number
from ..model.counts import count
from ..operators import check_sizes as check_library_sizes
from ..operators import parse_spec, reference_of
from ..rewrite.explore import ExploreOptions, explore
from ..operators.precision import with_precision


@dataclass(frozen=True)
class Reference:
    """A measured implementation to compare with: ``run(seed) -> ReferenceResult``."""

    name: str
    run: Callable


@dataclass(frozen=True)
class ReferenceResult:
    """What a ``Reference`` run gives: its output, its time and the memory it needs (with a breakdown)."""

    name: str
    output: np.ndarray = field(repr=False)  # on the host, in the program's output layout or the reference's
    time_ms: float  # on a GPU the median of the runs, on the CPU the fastest (``liftpy.host.timing``)
    times_ms: tuple[float, ...]
    bytes: int
    breakdown: Mapping[str, int]  # the parts of ``bytes``, by buffer
    device: str  # where it ran, in words


class Operator(ABC):
    """The protocol the engine uses: a subclass gives the program, its sizes and the check of an output,
    and overrides whatever else differs from the defaults."""

    name: str = "operator"

    @abstractmethod
    def program(self) -> Program:
        """The high-level program whose variants are explored."""

    @abstractmethod
    def sizes(self) -> dict[str, int]:
        """The values of the program's size variables."""

    @property
    def problem(self) -> str:
        """The identity of the problem in the results store (program and sizes)."""
        text = self.program().text()
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        sizes = ",".join(f"{k}={v}" for k, v in sorted(self.sizes().items()))
        return f"{self.program().name}#{digest}:{sizes}"

    def problem_sizes(self, problem: str) -> dict[str, int] | None:
        """The sizes of another problem of this operator's program, from its name in the store (the inverse of
        ``problem``); None when ``problem`` is not one of this program's."""
        head, _, sizes = problem.rpartition(":")
        if head != self.problem.rpartition(":")[0]:
            return None
        try:
            return {k: int(v) for k, v in (kv.split("=") for kv in sizes.split(",") if kv)}
        except ValueError:
            return None

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        return random_inputs(self.program(), self.sizes(), seed)

    @abstractmethod
    def check(self, output: np.ndarray, inputs: list[np.ndarray]) -> Validation:
        """Whether ``output`` is right for ``inputs``."""

    def prepare(self, seed: int = 0):
        """(inputs, check) for a seed: the worker keeps them while it measures points of this problem."""
        inputs = self.inputs(seed)
        return inputs, lambda output: self.check(output, inputs)

    def flops(self) -> float | None:
        return None

    def min_bytes(self) -> int | None:
        """The least traffic an implementation needs: the inputs read once, the output written once."""
        return least_traffic(self.program(), self.sizes())

    def explore_options(self):
        return ExploreOptions()

    def variants(self) -> tuple:
        return tuple(explore(self.program(), self.explore_options()))

    def variant_key(self) -> str:
        """What the variants depend on (the cache key of their derivation, with the rule-set version)."""
        return f"{type(self).__name__}|{self.program().text()}|{self.explore_options()!r}"

    def references(self) -> tuple[Reference, ...]:
        return ()


@dataclass(frozen=True)
class ProgramOperator(Operator):
    """Any high-level program at given sizes, validated against the interpreter (or ``reference``, a
    module-level function from the inputs to the expected output, in the program's output layout)."""

    prog: Program
    size_values: tuple[tuple[str, int], ...]
    reference: Callable | None = None
    flop_count: float | None = None
    rtol: float = 1e-3
    options: object = field(default=None, compare=False)

    def __post_init__(self):
        # A size the program never mentions is a typo or the wrong program: taken silently it would only
        # rename the problem in the store (a new key, nothing resumed).  Said first: a misspelt size (m for M)
        # is also a missing one, and the misspelling is what to fix.
        refuse_unknown_sizes(self.prog, dict(self.size_values))
        refuse_missing_sizes(self.prog, dict(self.size_values))
        for k, v in self.size_values:
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InputError(f"size {k} of {self.prog.name} must be a positive integer, got {v!r}")

    @classmethod
    def of(cls, program: Program, sizes: Mapping[str, int] | str, **kw) -> "ProgramOperator":
        """``sizes``: a mapping of whole numbers, or the command line's ``M=1024,N=512``."""
        if isinstance(sizes, str):
            sizes = parse_sizes(sizes)
        if not isinstance(sizes, Mapping):
            raise InputError(f"the sizes of {program.name} must be a mapping such as {{'M': 1024}} or a string such "
                             f"as 'M=1024,N=1024', got {type(sizes).__name__}")
        return cls(program, tuple(sorted((str(k), _whole(program, k, v)) for k, v in sizes.items())), **kw)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.prog.name

    def program(self) -> Program:
        return self.prog

    def sizes(self) -> dict[str, int]:
        return dict(self.size_values)

    def expected(self, inputs: list[np.ndarray]) -> np.ndarray:
        if self.reference is not None:
            return np.asarray(self.reference(*inputs))
        out = evaluate(self.prog, *inputs, sizes=self.sizes())
        return out if isinstance(out, tuple) else np.asarray(out)  # (a tuple: several results, compared one by one)

    def check(self, output, inputs) -> Validation:
        return compare(output, self.expected(inputs), self.rtol)

    def prepare(self, seed: int = 0):
        """(inputs, check), the expected output computed once: the measuring worker checks every point of the
        problem against it (computed again for each, a float64 SGEMM 1024 took longer than the point's runs)."""
        if type(self).check is not ProgramOperator.check:  # a subclass's own check decides
            return super().prepare(seed)
        inputs = self.inputs(seed)
        return inputs, Comparison.of(self.expected(inputs), self.rtol)

    def flops(self) -> float | None:
        """The FLOPs given, else those counted on the program (user-function applications, a multiply-add
        two), for the GFLOP/s of its points."""
        if self.flop_count is not None:
            return self.flop_count
        counted = count(self.prog).operations.subs({size_var(k): v for k, v in self.size_values})
        return float(counted) if counted.is_number and counted > 0 else None

    def explore_options(self):
        return self.options if self.options is not None else ExploreOptions()


# ------------------------------------------------------------------------------------------ loading


def load_program(spec: str) -> Program:
    """A high-level program in any form the commands take (``cli_args.read_program``): a ``.lift`` text file,
    a ``file.py:function`` or a ``module:function``."""
    return read_program(spec)


def _whole(program: Program, name, value) -> int:
    """``value`` as an int (numpy's integers too, ``ir.types.whole_number``); any float or a string is refused."""
    whole = None if isinstance(value, float) else whole_number(value)
    if whole is None:
        raise InputError(f"size {name} of {program.name} must be a positive integer, got {value!r}")
    return whole


def parse_sizes(text: str | None) -> dict[str, int]:
    """``M=1024,N=512`` -> {'M': 1024, 'N': 512}; positive integers only."""
    return parse_size_text(text or "")


def program_operator(spec: str, sizes: Mapping[str, int] | str) -> ProgramOperator:
    return ProgramOperator.of(load_program(spec), sizes)


def library_operator(spec: str, sizes: Mapping[str, int], precision: str = "fp32") -> ProgramOperator:
    """The operator of a library entry (``NAME[:KEY=VALUE,...]``, see ``liftpy.operators``) at given sizes,
    validated against its numpy reference; ``precision``: fp32, fp16-storage or fp16 (``operators.precision``)."""
    entry, params = parse_spec(spec)
    check_library_sizes(entry, sizes, params)
    return with_precision(ProgramOperator.of(entry.program(sizes, params), sizes, reference=reference_of(entry, params),
                                             flop_count=entry.flops(dict(sizes), params)), precision)
