"""The convolution layers of the Lift paper as the engine explores them: ``ConvOperator`` (the paper's program,
``liftpy.operators.conv.paper``, at a layer's sizes; its single-kernel and multi-kernel pipeline variants; cuDNN
and im2col + GEMM as references, ``vendor``) and ``explore_layer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import LiftError
from ..ir.expr import Program
from ..operators.conv.layers import Layer, get_layer
from ..operators.conv.paper import after_relu, conv_program, expectation_of, layer_inputs, layer_sizes, to_reference_layout
from ..operators.conv.direct import NO_EPILOGUE, random_epilogue, validate
from ..operators.conv.direct import random_inputs as random_layer_inputs
from ..rewrite.explore import ExploreOptions, explore
from ..rewrite.strategy import dedup
from .loop import explore_operator
from .operator import Operator, Reference
from .vendor import available_references, measure_reference

RELU_SUFFIX = "+relu"  # of a problem (and a name) whose convolution a ReLU follows


@lru_cache(maxsize=16)
def conv_variants(k: int, stride: int, pad: int, images: bool = True, pad_k: bool = False, relu: bool = False):
    """The explored variants of the convolution: single-kernel ones and multi-kernel pipelines; with
    ``pad_k`` also the tiled ones whose reduction is padded with zeros (for C*k*k no k step divides)."""
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
        exp = after_relu(exp) if self.relu else exp
        return inputs, lambda output: validate(to_reference_layout(output, self.layer), exp)

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        return layer_inputs(self.layer, seed)[0]

    def check(self, output, inputs):
        exp = expectation_of(self.layer, inputs)
        exp = after_relu(exp) if self.relu else exp
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
        def measure(name):
            def run(seed: int):
                x, w = random_layer_inputs(self.layer, seed)
                # With a ReLU, the vendor runs the whole layer too: its bias, then the ReLU.
                epilogue = random_epilogue(self.layer, seed) if self.relu else NO_EPILOGUE
                return measure_reference(name, x, w, self.layer.stride, self.layer.pad, epilogue=epilogue)

            return run

        return tuple(Reference(name, measure(name)) for name in available_references())


def explore_layer(layer, options=None, *, relu: bool = False, **changes):
    """Explore the direct convolution of ``layer`` (a name like ``vgg16:7``, a spec ``C,H,W,M,K,stride,pad``
    or a ``Layer``), with a ReLU after it where ``relu``: ``explore_operator`` of its ``ConvOperator``, whose
    options and keywords it takes; returns the ``Exploration``."""
    return explore_operator(ConvOperator.of(layer, relu=relu), options, **changes)
