"""Convolution layers: their shapes, derived sizes, and a catalogue of the layers the paper evaluates.

A layer is one image (no batch dimension) of ``C`` channels of ``H`` x ``W`` pixels, convolved with ``M`` kernels
of ``C`` x ``K`` x ``K`` weights at the given stride, after zero-padding ``pad`` pixels on every side; there is no
bias.  Output pixels are ``OH = (H + 2 pad - K) // stride + 1`` by ``OW`` likewise; windows that would run past
the padded input are dropped, as in PyTorch (AlexNet's first layer covers its input exactly, VGG's do too).

Names (``get_layer``):

* ``vgg16:N`` for VGG-16's convolutional layers by their index in the model's feature list, as in Table 3 of
  the paper (nine unique shapes; 14 is 12, 21 is 19, 26 and 28 are 24);
* ``alexnet:0`` for AlexNet's first layer (3x227x227, 96 11x11 kernels, stride 4, no padding);
* ``C,H,W,M,K,stride,pad`` for any other layer (``stride`` and ``pad`` may be left out: 1 and 0).

A layer's identity in records is its ``spec`` (the seven numbers), not its name, so ``vgg16:12`` and
``vgg16:14`` share results.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...errors import TuningError


@dataclass(frozen=True)
class Layer:
    name: str
    C: int  # input channels
    H: int  # input height
    W: int  # input width
    M: int  # number of kernels (output channels)
    K: int  # kernel height and width
    stride: int = 1
    pad: int = 0

    def __post_init__(self) -> None:
        for field_name in ("C", "H", "W", "M", "K", "stride"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TuningError(f"layer {self.name!r}: {field_name} must be a positive integer, got {value!r}")
        if not isinstance(self.pad, int) or isinstance(self.pad, bool) or self.pad < 0:
            raise TuningError(f"layer {self.name!r}: pad must be a non-negative integer, got {self.pad!r}")
        if self.K > min(self.H, self.W) + 2 * self.pad:
            raise TuningError(
                f"layer {self.name!r}: a {self.K}x{self.K} kernel does not fit a {self.H}x{self.W} input padded by "
                f"{self.pad}; use a smaller K or more padding"
            )

    @property
    def out_h(self) -> int:
        return (self.H + 2 * self.pad - self.K) // self.stride + 1

    @property
    def out_w(self) -> int:
        return (self.W + 2 * self.pad - self.K) // self.stride + 1

    @property
    def input_shape(self) -> tuple[int, int, int]:
        return (self.C, self.H, self.W)

    @property
    def weight_shape(self) -> tuple[int, int, int, int]:
        return (self.M, self.C, self.K, self.K)

    @property
    def output_shape(self) -> tuple[int, int, int]:
        return (self.M, self.out_h, self.out_w)

    @property
    def input_elems(self) -> int:
        return self.C * self.H * self.W

    @property
    def weight_elems(self) -> int:
        return self.M * self.C * self.K * self.K

    @property
    def output_elems(self) -> int:
        return self.M * self.out_h * self.out_w

    @property
    def flops(self) -> int:
        """Floating-point operations of the direct convolution: one multiply and one add per weight use."""
        return 2 * self.output_elems * self.C * self.K * self.K

    @property
    def min_bytes(self) -> int:
        """fp32 bytes of input, weights and output: what any implementation must hold."""
        return 4 * (self.input_elems + self.weight_elems + self.output_elems)

    @property
    def spec(self) -> str:
        """The canonical ``C,H,W,M,K,stride,pad`` string: the layer's identity in records."""
        return ",".join(str(v) for v in (self.C, self.H, self.W, self.M, self.K, self.stride, self.pad))

    def __str__(self) -> str:
        return (
            f"{self.name}: {self.C}x{self.H}x{self.W} * {self.M}x{self.C}x{self.K}x{self.K}"
            f" (stride {self.stride}, pad {self.pad}) -> {self.M}x{self.out_h}x{self.out_w}"
        )

    def reduced(self, spatial: int = 16, channels: int = 8, kernels: int = 8) -> "Layer":
        """A smaller layer for tests: height and width at most ``spatial``, ``C`` at most ``channels``, ``M`` at
        most ``kernels``; ``K``, ``stride`` and ``pad`` are kept.

        Sizes never shrink below what the kernel needs, and the reduced height and width leave the same
        remainder ``(H + 2 pad - K) % stride`` as the original, so a layer whose windows cover its input exactly
        (AlexNet's first) still does: that is the case the partial-window code paths differ on.
        """
        if spatial < 1 or channels < 1 or kernels < 1:
            raise TuningError(f"reduced sizes must be positive, got spatial={spatial}, channels={channels}, kernels={kernels}")

        def shrink(n: int) -> int:
            if n <= spatial:
                return n
            remainder = (n + 2 * self.pad - self.K) % self.stride
            smallest = max(1, self.K - 2 * self.pad)

            def fits(m: int) -> bool:
                return m >= smallest and (m + 2 * self.pad - self.K) % self.stride == remainder

            below = next((m for m in range(spatial, 0, -1) if fits(m)), None)
            # A cap below what one window needs is raised to the smallest size that works (n itself at worst).
            return below if below is not None else next(m for m in range(spatial + 1, n + 1) if fits(m))

        h, w = shrink(self.H), shrink(self.W)
        c, m = min(self.C, channels), min(self.M, kernels)
        if (h, w, c, m) == (self.H, self.W, self.C, self.M):
            return self
        return dataclasses.replace(self, name=f"{self.name}@{c}x{h}x{w}/{m}", C=c, H=h, W=w, M=m)


def _vgg(index: int, c: int, hw: int, m: int) -> Layer:
    return Layer(f"vgg16:{index}", c, hw, hw, m, 3, 1, 1)


# Table 3 of the paper: the nine unique shapes, named by their first index in VGG-16's feature list.
VGG16: tuple[Layer, ...] = (
    _vgg(0, 3, 224, 64),
    _vgg(2, 64, 224, 64),
    _vgg(5, 64, 112, 128),
    _vgg(7, 128, 112, 128),
    _vgg(10, 128, 56, 256),
    _vgg(12, 256, 56, 256),
    _vgg(17, 256, 28, 512),
    _vgg(19, 512, 28, 512),
    _vgg(24, 512, 14, 512),
)
ALEXNET0 = Layer("alexnet:0", 3, 227, 227, 96, 11, 4, 0)

CATALOGUE: dict[str, Layer] = {layer.name: layer for layer in VGG16 + (ALEXNET0,)}
# The paper's other names for the same shapes (Table 3 groups them); they resolve to the first name.
ALIASES: dict[str, str] = {
    "vgg16:14": "vgg16:12",
    "vgg16:21": "vgg16:19",
    "vgg16:26": "vgg16:24",
    "vgg16:28": "vgg16:24",
}
NETWORKS: dict[str, tuple[Layer, ...]] = {"vgg16": VGG16, "alexnet": (ALEXNET0,)}


def layer_names() -> list[str]:
    """Every name ``get_layer`` accepts, aliases included."""
    return sorted(set(CATALOGUE) | set(ALIASES), key=lambda n: (n.split(":")[0], int(n.split(":")[1])))


def network_layers(network: str) -> tuple[Layer, ...]:
    """The unique layers of a network in the catalogue (``vgg16``: nine, ``alexnet``: the first)."""
    try:
        return NETWORKS[network.strip().lower()]
    except KeyError:
        raise TuningError(f"unknown network {network!r}; known networks: {', '.join(sorted(NETWORKS))}") from None


def parse_layer_spec(spec: str, name: str | None = None) -> Layer:
    """A layer from ``C,H,W,M,K[,stride[,pad]]``."""
    parts = [p.strip() for p in spec.split(",")]
    if not 5 <= len(parts) <= 7:
        raise TuningError(
            f"layer spec {spec!r} has {len(parts)} fields; expected C,H,W,M,K,stride,pad (for example "
            "64,56,56,128,3,1,1; stride and pad may be left out)"
        )
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise TuningError(f"layer spec {spec!r}: every field of C,H,W,M,K,stride,pad must be an integer") from None
    values += [1, 0][len(values) - 5 :]
    c, h, w, m, k, stride, pad = values
    return Layer(name or ",".join(str(v) for v in values), c, h, w, m, k, stride, pad)


def get_layer(spec: "str | Layer") -> Layer:
    """A layer by catalogue name (``vgg16:7``, ``alexnet:0``) or ``C,H,W,M,K,stride,pad`` spec."""
    if isinstance(spec, Layer):
        return spec
    text = spec.strip()
    if "," in text:
        return parse_layer_spec(text)
    key = text.lower()
    key = ALIASES.get(key, key)
    if key in CATALOGUE:
        return CATALOGUE[key]
    raise TuningError(
        f"unknown layer {spec!r}; known names: {', '.join(layer_names())}; or give C,H,W,M,K,stride,pad "
        "(for example 64,56,56,128,3,1,1)"
    )
