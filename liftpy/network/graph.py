"""Networks as graphs of library operators, with the shapes of every tensor.

A node names an operator of the library (``liftpy.operators``) with its parameters and sizes, and the
nodes whose outputs are its activation inputs (the operator's first parameters; the rest are its weights).
Tensors are kept channels-innermost (``[H][W][C]``), the layout of ``conv2d``; an elementwise or fully
connected layer reads them flattened, which costs nothing (they are contiguous).  ``Builder`` computes the
output shapes as layers are added, so a model is written as in a framework.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from ..operators import parse_spec


@dataclass(frozen=True)
class Node:
    name: str
    op: str  # a library spec: "conv2d:k=3,stride=1,pad=1,groups=1,relu=1"
    sizes: tuple[tuple[str, int], ...]
    inputs: tuple[str, ...]  # names of the nodes (or "input") feeding its activation parameters
    shape: tuple[int, ...]  # of its output

    @property
    def size_map(self) -> dict[str, int]:
        return dict(self.sizes)

    @property
    def key(self) -> tuple:
        """Nodes with equal keys are the same problem: explored once."""
        return self.op, self.sizes


@dataclass(frozen=True)
class Network:
    name: str
    input_shape: tuple[int, ...]
    nodes: tuple[Node, ...]

    @property
    def output(self) -> Node:
        return self.nodes[-1]


def _with(op: str, **changes) -> str:
    """The spec ``op`` with its parameters ``changes`` set (the others written as they were)."""
    name, _, rest = op.partition(":")
    items = [item for item in (i.strip() for i in rest.split(",")) if item and item.split("=")[0] not in changes]
    return name + ":" + ",".join(items + [f"{k}={v}" for k, v in changes.items()])


def _fusable(op: str) -> bool:
    """A convolution whose result a residual add may join: no activation or residual of its own."""
    entry, params = parse_spec(op)
    return entry.name == "conv2d" and params["relu"] == 0 and params["residual"] == 0


def fuse_residuals(net: Network) -> Network:
    """``add(conv(x), s)`` (and its ReLU) as one convolution that adds ``s`` to each result before its
    activation (``conv2d:...,residual=1``, whose tiles write the sum out): a kernel and a tensor fewer per
    residual connection, as frameworks' graph compilers fuse it.  Fused where the convolution has no
    activation of its own and nothing else reads its output; the fused node takes the add's place in the
    order (the shortcut may be computed after the convolution) and the convolution's name."""
    readers: dict[str, int] = {}
    for n in net.nodes:
        for x in n.inputs:
            readers[x] = readers.get(x, 0) + 1
    by_name = {n.name: n for n in net.nodes}
    fused_into: dict[str, Node] = {}  # the add's name -> the fused convolution
    for n in net.nodes:
        entry, add = parse_spec(n.op)
        if entry.name != "add":
            continue
        for i, x in enumerate(n.inputs):
            conv = by_name.get(x)
            if conv is None or readers.get(conv.name) != 1 or not _fusable(conv.op):
                continue
            shortcut = n.inputs[1 - i]
            op = _with(conv.op, relu=add["relu"], residual=1)
            fused_into[n.name] = Node(conv.name, op, conv.sizes, (conv.inputs[0], shortcut), conv.shape)
            break
    if not fused_into:
        return net
    rename = {add: f.name for add, f in fused_into.items()}
    gone = set(rename.values())
    nodes = []
    for n in net.nodes:
        if n.name in gone:
            continue
        n = fused_into.get(n.name, n)
        nodes.append(Node(n.name, n.op, n.sizes, tuple(rename.get(x, x) for x in n.inputs), n.shape))
    return Network(net.name, net.input_shape, tuple(nodes))


class Builder:
    """Adds layers and tracks shapes: ``b.conv(x, 64)`` returns the new node's name."""

    def __init__(self, name: str, h: int, w: int, c: int):
        self.name = name
        self.input_shape = (h, w, c)
        self.nodes: list[Node] = []

    def shape(self, x: str) -> tuple[int, ...]:
        return self.input_shape if x == "input" else next(n.shape for n in self.nodes if n.name == x)

    def _add(self, kind: str, op: str, sizes: dict, inputs: tuple, shape: tuple) -> str:
        if min(shape) < 1:
            raise InputError(f"{self.name}: layer {len(self.nodes)} ({op}) would have shape {shape}; use a larger input")
        name = f"{len(self.nodes):02d}_{kind}"
        self.nodes.append(Node(name, op, tuple(sorted(sizes.items())), inputs, shape))
        return name

    def conv(self, x, m: int, k: int = 3, stride: int = 1, pad: int | None = None, groups: int = 1, relu: int = 1) -> str:
        h, w, c = self.shape(x)
        pad = k // 2 if pad is None else pad
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        op = f"conv2d:k={k},stride={stride},pad={pad},groups={groups},relu={relu}"
        kind = "dwconv" if groups > 1 and groups == c == m else "conv"
        return self._add(kind, op, {"C": c, "H": h, "W": w, "M": m}, (x,), (oh, ow, m))

    def maxpool(self, x, k: int = 2, stride: int = 2, pad: int = 0) -> str:
        h, w, c = self.shape(x)
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        return self._add("maxpool", f"maxpool_hwc:k={k},stride={stride},pad={pad}", {"H": h, "W": w, "C": c}, (x,), (oh, ow, c))

    def add(self, a, b, relu: int = 0) -> str:
        if self.shape(a) != self.shape(b):
            raise InputError(f"{self.name}: adding tensors of shapes {self.shape(a)} and {self.shape(b)}")
        return self._add("add", f"add:relu={relu}", {"N": math.prod(self.shape(a))}, (a, b), self.shape(a))

    def global_avgpool(self, x) -> str:
        h, w, c = self.shape(x)
        return self._add("avgpool", "global_avgpool", {"H": h, "W": w, "C": c}, (x,), (c,))

    def fc(self, x, m: int, relu: int = 1) -> str:
        n = math.prod(self.shape(x))
        return self._add("fc", f"fully_connected:relu={relu}", {"B": 1, "M": m, "N": n}, (x,), (1, m))

    def build(self) -> Network:
        return Network(self.name, self.input_shape, tuple(self.nodes))
