"""The convolution layer as liftpy explores it: the high-level program (Listing 3 of the Lift paper),
its variants, its inputs in the program's layouts, and the expected result.

Layouts of the program: input ``[[[float]C]W]H`` (channels innermost), weights ``[[[[float]C]K]K]M``,
biases ``[float]M``; the result is ``[[[[float]1]M]OW]OH``.  The references (``liftpy.tuning.references``)
use x[C][H][W], w[M][C][K][K] and out[M][OH][OW]; ``to_reference_layout`` converts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..ir.dsl import join, make_program, map, map2D, pad2D, reduce, slide2D, zip
from ..ir.expr import Program
from ..ir.types import Array, Float, sizes
from ..ir.userfun import BUILTINS
from .layers import Layer, get_layer
from ..explore.operator import Operator, Reference
from .references import Expectation, expectation, validate

C, H, W, M = sizes("C H W M")
_MAS = BUILTINS["multAndSumUp"]
_RELU = BUILTINS["relu"]


def conv_program(k: int, stride: int, pad: int, relu: bool = False) -> Program:
    """The high-level convolution for k x k kernels: pad2D, slide2D, then for every window and every
    (weights, bias) pair a reduction of the flattened window against the flattened weights; with ``relu``
    a ReLU after each reduction (a network's layer: the tilings apply it as they write results out)."""
    return make_program(
        "conv_relu" if relu else "conv",
        [("weights", Array(Float, M, k, k, C)), ("biases", Array(Float, M)), ("input", Array(Float, H, W, C))],
        lambda weights, biases, input: map2D(
            lambda window: map(
                (lambda kb: map(_RELU, _dot(window, kb))) if relu else (lambda kb: _dot(window, kb)),
                zip(weights, biases),
            ),
            slide2D(k, stride, pad2D(pad, pad, pad, pad, 0.0, input)),
        ),
    )


def _dot(window, kb):
    """A window flattened, against one output channel's flattened weights, starting from its bias."""
    return reduce(lambda acc, xw: _MAS(acc, xw[0], xw[1]), kb[1], zip(join(join(window)), join(join(kb[0]))))


def layer_sizes(layer: Layer) -> dict[str, int]:
    return {"C": layer.C, "H": layer.H, "W": layer.W, "M": layer.M}


def layer_inputs(layer: Layer, seed: int = 0) -> tuple[list[np.ndarray], Expectation]:
    """Random inputs in the program's layouts, and what a correct result is (bias included)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((layer.C, layer.H, layer.W)).astype(np.float32)
    w = (rng.standard_normal((layer.M, layer.C, layer.K, layer.K)) / np.sqrt(layer.C * layer.K * layer.K)).astype(np.float32)
    b = rng.standard_normal(layer.M).astype(np.float32)
    exp = expectation(x, w, layer.stride, layer.pad)
    bias = b.astype(np.float64)[:, None, None]
    exp = Expectation(exp.expected + bias, exp.magnitude + np.abs(bias), exp.terms + 1)
    program_inputs = [np.ascontiguousarray(w.transpose(0, 2, 3, 1)), b, np.ascontiguousarray(x.transpose(1, 2, 0))]
    return program_inputs, exp


def to_reference_layout(out: np.ndarray, layer: Layer) -> np.ndarray:
    """[OH][OW][M][1] -> [M][OH][OW]."""
    return np.ascontiguousarray(out.reshape(layer.out_h, layer.out_w, layer.M).transpose(2, 0, 1))


@lru_cache(maxsize=16)
def conv_variants(k: int, stride: int, pad: int, images: bool = True, pad_k: bool = False, relu: bool = False):
    """The explored variants of the convolution: single-kernel ones and multi-kernel pipelines; with
    ``pad_k`` also the tiled ones whose reduction is padded with zeros (for C*k*k no k step divides)."""
    from ..rewrite.explore import ExploreOptions, dedup, explore

    program = conv_program(k, stride, pad, relu)
    single = explore(program, ExploreOptions(images=images, pad_k=pad_k))
    pipelines = explore(program, ExploreOptions(images=images, pipeline=True))
    return tuple(dedup(single + pipelines))


@dataclass(frozen=True)
class ConvOperator(Operator):
    """The direct convolution of a layer, as the engine explores it: the paper's program, the layer's sizes,
    inputs in the program's layouts validated against the float64 convolution, the single-kernel and
    pipeline variants, and cuDNN / im2col + GEMM as references."""

    layer: Layer
    images: bool = True
    relu: bool = False  # a ReLU after the bias: the layer as a network runs it

    @classmethod
    def of(cls, layer, images: bool = True, relu: bool = False) -> "ConvOperator":
        return cls(get_layer(layer), images, relu)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.layer.name + (RELU_SUFFIX if self.relu else "")

    @property
    def problem(self) -> str:  # the layer's spec: stores written before operators existed stay valid
        return self.layer.spec + (RELU_SUFFIX if self.relu else "")

    def problem_sizes(self, problem: str) -> dict[str, int] | None:
        """The sizes of another layer of this operator's kernel, stride and padding (and ReLU or not), from
        its spec."""
        from ..errors import LiftError
        from .layers import get_layer

        if problem.endswith(RELU_SUFFIX) != self.relu:
            return None
        try:
            other = get_layer(problem.removesuffix(RELU_SUFFIX))
        except (LiftError, ValueError):
            return None
        same = (other.K, other.stride, other.pad) == (self.layer.K, self.layer.stride, self.layer.pad)
        return layer_sizes(other) if same else None

    def program(self) -> Program:
        return conv_program(self.layer.K, self.layer.stride, self.layer.pad, self.relu)

    def sizes(self) -> dict[str, int]:
        return layer_sizes(self.layer)

    def prepare(self, seed: int = 0):
        inputs, exp = layer_inputs(self.layer, seed)
        exp = _after_relu(exp) if self.relu else exp
        return inputs, lambda output: validate(to_reference_layout(output, self.layer), exp)

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        return layer_inputs(self.layer, seed)[0]

    def check(self, output, inputs):
        exp = expectation_of(self.layer, inputs)
        exp = _after_relu(exp) if self.relu else exp
        return validate(to_reference_layout(output, self.layer), exp)

    def flops(self) -> float:
        return self.layer.flops

    @property
    def pad_k(self) -> bool:
        """Whether the reduction's C*K*K terms are no multiple of a float4 (a first layer's 27): then the
        variants include those that pad it with zeros."""
        return (self.layer.C * self.layer.K * self.layer.K) % 4 != 0

    def variants(self) -> tuple:
        return conv_variants(self.layer.K, self.layer.stride, self.layer.pad, self.images, self.pad_k, self.relu)

    def variant_key(self) -> str:
        return (f"conv|{self.layer.K},{self.layer.stride},{self.layer.pad}|images={self.images}"
                + ("|padK" if self.pad_k else "") + ("|relu" if self.relu else ""))

    def references(self) -> tuple[Reference, ...]:
        from .references import NO_EPILOGUE, available_references, measure_reference, random_epilogue, random_inputs

        def measure(name):
            def run(seed: int):
                x, w = random_inputs(self.layer, seed)
                # With a ReLU, the vendor runs the whole layer too: its bias, then the ReLU.
                epilogue = random_epilogue(self.layer, seed) if self.relu else NO_EPILOGUE
                return measure_reference(name, x, w, self.layer.stride, self.layer.pad, epilogue=epilogue)

            return run

        return tuple(Reference(name, measure(name)) for name in available_references())


RELU_SUFFIX = "+relu"  # of a problem (and a name) whose convolution a ReLU follows


def _after_relu(exp: Expectation) -> Expectation:
    """What a correct result is after a ReLU: the rounding bounds of the convolution still hold, since
    max(x, 0) moves no value further from an exact one than x was."""
    return Expectation(np.maximum(exp.expected, 0.0), exp.magnitude, exp.terms)


def expectation_of(layer: Layer, inputs) -> Expectation:
    """The expected result for inputs in the program's layouts (weights, biases, input)."""
    w, b, x = inputs
    exp = expectation(np.ascontiguousarray(x.transpose(2, 0, 1)), np.ascontiguousarray(w.transpose(0, 3, 1, 2)), layer.stride, layer.pad)
    bias = np.asarray(b, dtype=np.float64)[:, None, None]
    return Expectation(exp.expected + bias, exp.magnitude + np.abs(bias), exp.terms + 1)


def explore_layer(layer, samples: int = 100, relu: bool = False, **kw):
    """Explore the direct convolution of ``layer`` (a name like ``vgg16:7``, a spec ``C,H,W,M,K,stride,pad``
    or a ``Layer``), with a ReLU after it where ``relu``: ``engine.explore_operator`` of its ``ConvOperator``,
    whose keywords it takes; returns the ``Exploration``."""
    from ..explore.loop import explore_operator

    return explore_operator(ConvOperator.of(layer, relu=relu), samples=samples, **kw)
