"""Convolutions: two programs, with their shapes, inputs and references.

* ``general``: the library's ``conv2d`` (any kernel shape, stride, padding, dilation and groups; ``liftpy
  explore conv2d:...``), with its numpy reference and FLOP count;
* ``paper``: the direct convolution of the Lift paper (square kernels; ``liftpy explore conv --layer ...``),
  with its inputs and expected results (why it is not the library's program: its module docstring);
* ``layers``: the layers the paper evaluates (``Layer``, ``get_layer("vgg16:7")``);
* ``direct``: the plain float64 convolution that validates the paper's, its random inputs, and the epilogue
  (bias, ReLU) of a network's layer.

The engine's operator of a paper layer is ``liftpy.explore.conv.ConvOperator``; the vendor references it
measures (numpy im2col + GEMM, PyTorch, cuDNN) are ``liftpy.explore.vendor``, where the timing is.
"""

from .general import ConvShape, conv2d, conv2d_check, conv2d_flops, conv2d_reference
from .layers import ALEXNET0, VGG16, Layer, get_layer, layer_names, network_layers, parse_layer_spec
from .paper import conv_program, expectation_of, layer_inputs, layer_sizes, to_reference_layout
from .direct import Epilogue, Expectation, conv2d_direct, expectation, validate

__all__ = [
    "ConvShape", "conv2d", "conv2d_check", "conv2d_flops", "conv2d_reference",
    "ALEXNET0", "VGG16", "Layer", "get_layer", "layer_names", "network_layers", "parse_layer_spec",
    "conv_program", "expectation_of", "layer_inputs", "layer_sizes", "to_reference_layout",
    "Epilogue", "Expectation", "conv2d_direct", "expectation", "validate",
]  # fmt: skip
