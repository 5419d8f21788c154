"""The same network in PyTorch (when it is installed), from the same weights: the independent end-to-end
reference.  Tensors are converted at each layer between liftpy's channels-innermost layout and PyTorch's
NCHW; everything runs in float64 on the CPU."""

from __future__ import annotations

import numpy as np

from .graph import Network


def available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def forward(net: Network, image: np.ndarray, weights: dict[str, list[np.ndarray]]) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    from ..operators import parse_spec
    from ..operators.conv import parse_pads, parse_pair

    def hwc_to_nchw(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)).permute(2, 0, 1)[None]

    def nchw_to_hwc(t):
        return t[0].permute(1, 2, 0).numpy()

    values = {"input": image.astype(np.float64)}
    with torch.no_grad():
        for node in net.nodes:
            entry, p = parse_spec(node.op)
            ins = [values[x] for x in node.inputs]
            ws = [torch.from_numpy(w.astype(np.float64)) for w in weights[node.name]]
            if entry.name == "conv2d":
                (sh, sw), (dh, dw) = parse_pair(p["stride"], "stride"), parse_pair(p["dilation"], "dilation")
                top, bottom, left, right = parse_pads(p["pad"])
                x = F.pad(hwc_to_nchw(ins[0]), (left, right, top, bottom))
                y = F.conv2d(x, ws[0].permute(0, 3, 1, 2), ws[1], stride=(sh, sw), dilation=(dh, dw), groups=p["groups"])
                y = y.clamp(0, 6) if p["relu"] == 6 else (F.relu(y) if p["relu"] else y)
                out = nchw_to_hwc(y)
            elif entry.name == "maxpool_hwc":
                out = nchw_to_hwc(F.max_pool2d(hwc_to_nchw(ins[0]), p["k"], p["stride"], padding=p["pad"]))
            elif entry.name == "global_avgpool":
                out = ins[0].mean(axis=(0, 1))
            elif entry.name == "add":
                out = ins[0] + ins[1]
                out = np.maximum(out, 0.0) if p["relu"] else out
            elif entry.name == "fully_connected":
                y = F.linear(torch.from_numpy(ins[0].reshape(1, -1)), ws[0], ws[1])
                out = (F.relu(y) if p["relu"] else y).numpy()
            else:  # pragma: no cover - every operator the models use is above
                raise NotImplementedError(entry.name)
            values[node.name] = np.asarray(out).reshape(node.shape)
    return values[net.output.name]
