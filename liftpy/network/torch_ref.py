"""The same network in PyTorch (when it is installed), from the same weights: the independent end-to-end
reference.  Tensors are converted at each layer between liftpy's channels-innermost layout and PyTorch's
NCHW; everything runs in float64 on the CPU."""

from __future__ import annotations

import numpy as np

from ..errors import LiftError
from ..operators import parse_spec
from ..operators.conv import ConvShape
from .graph import Network


def available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _hwc_to_nchw(a):
    # torch: optional, imported where a reference needs it (not a liftpy dependency)
    import torch

    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)).permute(2, 0, 1)[None]


def _nchw_to_hwc(t):
    return t[0].permute(1, 2, 0).numpy()


def _conv2d(ins, ws, p):
    # torch: optional, imported where a reference needs it (not a liftpy dependency)
    import torch.nn.functional as F

    cs = ConvShape.of(**p)
    x = F.pad(_hwc_to_nchw(ins[0]), (cs.left, cs.right, cs.top, cs.bottom))
    y = F.conv2d(x, ws[0].permute(0, 3, 1, 2), ws[1], stride=(cs.sh, cs.sw), dilation=(cs.dh, cs.dw), groups=p["groups"])
    if p["residual"]:  # (a residual add fused into the convolution: before its activation)
        y = y + _hwc_to_nchw(ins[1])
    y = y.clamp(0, 6) if p["relu"] == 6 else (F.relu(y) if p["relu"] else y)
    return _nchw_to_hwc(y)


def _maxpool(ins, ws, p):
    # torch: optional, imported where a reference needs it (not a liftpy dependency)
    import torch.nn.functional as F

    return _nchw_to_hwc(F.max_pool2d(_hwc_to_nchw(ins[0]), p["k"], p["stride"], padding=p["pad"]))


def _add(ins, ws, p):
    out = ins[0] + ins[1]
    return np.maximum(out, 0.0) if p["relu"] else out


def _fully_connected(ins, ws, p):
    # torch: optional, imported where a reference needs it (not a liftpy dependency)
    import torch
    import torch.nn.functional as F

    y = F.linear(torch.from_numpy(ins[0].reshape(1, -1)), ws[0], ws[1])
    return (F.relu(y) if p["relu"] else y).numpy()


LAYERS = {"conv2d": _conv2d, "maxpool_hwc": _maxpool, "add": _add, "fully_connected": _fully_connected,
          "global_avgpool": lambda ins, ws, p: ins[0].mean(axis=(0, 1))}


def forward(net: Network, image: np.ndarray, weights: dict[str, list[np.ndarray]]) -> np.ndarray:
    # torch: optional, imported where a reference needs it (not a liftpy dependency)
    import torch

    values = {"input": image.astype(np.float64)}
    with torch.no_grad():
        for node in net.nodes:
            entry, params = parse_spec(node.op)
            layer = LAYERS.get(entry.name)
            if layer is None:
                raise LiftError(f"{net.name}: layer {node.name} ({entry.name}) has no PyTorch form to validate against; "
                                f"the layers that have one: {', '.join(sorted(LAYERS))}")
            ws = [torch.from_numpy(w.astype(np.float64)) for w in weights[node.name]]
            out = layer([values[x] for x in node.inputs], ws, params)
            values[node.name] = np.asarray(out).reshape(node.shape)
    return values[net.output.name]
