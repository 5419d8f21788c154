"""VGG-16, ResNet-18 and MobileNetV2 written with the operator library, at full size or reduced.

``width`` scales every channel count (at least 4, a multiple of 4), ``resolution`` the input image;
``classes`` the last layer.  The reduced forms (``--reduced``: 32 x 32 images, an eighth of the channels,
10 classes) keep every layer kind and connection of the full network, at sizes PoCL runs in minutes.
"""

from __future__ import annotations

from ..errors import InputError
from .graph import Builder, Network, fuse_residuals


def _ch(c: int, width: float) -> int:
    return max(4, int(round(c * width / 4)) * 4)


def vgg16(resolution: int = 224, width: float = 1.0, classes: int = 1000) -> Network:
    b = Builder("vgg16", resolution, resolution, 3)
    x = "input"
    for block in ((64, 64), (128, 128), (256, 256, 256), (512, 512, 512), (512, 512, 512)):
        for c in block:
            x = b.conv(x, _ch(c, width))
        x = b.maxpool(x)
    x = b.fc(x, _ch(4096, width))
    x = b.fc(x, _ch(4096, width))
    b.fc(x, classes, relu=0)
    return b.build()


def resnet18(resolution: int = 224, width: float = 1.0, classes: int = 1000) -> Network:
    b = Builder("resnet18", resolution, resolution, 3)
    x = b.conv("input", _ch(64, width), k=7, stride=2, pad=3)
    x = b.maxpool(x, k=3, stride=2, pad=1)
    for stage, c in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = b.conv(x, _ch(c, width), stride=stride)
            y = b.conv(y, _ch(c, width), relu=0)
            shortcut = b.conv(x, _ch(c, width), k=1, stride=stride, pad=0, relu=0) if stride != 1 or b.shape(x) != b.shape(y) else x
            x = b.add(y, shortcut, relu=1)
    x = b.global_avgpool(x)
    b.fc(x, classes, relu=0)
    return b.build()


def mobilenet_v2(resolution: int = 224, width: float = 1.0, classes: int = 1000) -> Network:
    b = Builder("mobilenet_v2", resolution, resolution, 3)
    x = b.conv("input", _ch(32, width), stride=2, relu=6)
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            cin = b.shape(x)[2]
            hidden = cin * t
            y = b.conv(x, hidden, k=1, pad=0, relu=6) if t != 1 else x
            y = b.conv(y, hidden, k=3, stride=stride, groups=hidden, relu=6)  # depthwise
            y = b.conv(y, _ch(c, width), k=1, pad=0, relu=0)  # linear bottleneck
            x = b.add(y, x) if stride == 1 and cin == b.shape(y)[2] else y
    x = b.conv(x, _ch(1280, width), k=1, pad=0, relu=6)
    x = b.global_avgpool(x)
    b.fc(x, classes, relu=0)
    return b.build()


MODELS = {"vgg16": vgg16, "resnet18": resnet18, "mobilenet_v2": mobilenet_v2}
REDUCED = {"resolution": 32, "width": 0.125, "classes": 10}


def get_model(name: str, reduced: bool = False, fuse: bool = True, **kw) -> Network:
    """The network ``name``; with ``fuse``, each residual add fused into the convolution it adds to
    (``graph.fuse_residuals``), as a graph compiler runs it."""
    if name not in MODELS:
        raise InputError(f"unknown network {name!r}; choose one of {', '.join(MODELS)}")
    net = MODELS[name](**({**REDUCED, **kw} if reduced else kw))
    return fuse_residuals(net) if fuse else net
