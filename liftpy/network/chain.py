"""One forward pass of a network as a program runs it: every layer's kernels enqueued back to back on buffers
that stay on the device, timed by the host's clock from the first enqueue to the queue's end.

``run_network`` times each layer on its own (kernel time from profiling events, its inputs uploaded and its
output read back around it), which is what a search compares.  A user's forward pass pays more than the sum
of those kernel times: a launch per kernel, the gaps between them, copies of activations into images where
a layer reads its input through one.  ``chained_run`` measures that wall time.  Activations are never copied
to the host between layers: each layer's output buffer is the next one's input (a layer reads a tensor
flattened or as ``[H][W][C]``, the same contiguous bytes), and an input placed in an image is filled from
that buffer on the device (``pack_image``'s layout, RGBA texels of four channels, is the buffer's byte order).
Weights are uploaded once, before the timing.  Every tensor has its own buffer (the arena of
``liftpy.network.memory`` is a plan of the bytes, not what is timed here).

The chained output is compared with the layer-by-layer run's: the same kernels on the same inputs, so a
difference means the chaining is wrong, and the wall time is then not reported as valid."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from ..errors import LiftError
from ..host.device import _cl
from ..host.kernel import CompiledPipeline, pack_image, scratch_buffers
from ..ir.types import ArrayType, substitute_sizes
from .graph import Network


@dataclass(frozen=True)
class ChainedRun:
    wall_ms: float  # median wall time of one forward pass (enqueue of the first kernel to the queue's end)
    walls_ms: tuple[float, ...]
    launches: int  # kernels (and device-side image fills) enqueued per pass
    output: np.ndarray


def _image_extent(param_type, bindings) -> tuple[int, int, int]:
    """(H, W, C) of an activation an image holds: its type's three dimensions at the layer's sizes."""
    dims = []
    t = param_type
    while isinstance(t, ArrayType):
        dims.append(int(substitute_sizes(t.size, bindings)))
        t = t.elem
    if len(dims) != 3 or dims[2] % 4:
        raise LiftError(f"an image input must be [H][W][C] with C a multiple of 4, got dimensions {dims}")
    return dims[0], dims[1], dims[2]


def chained_run(net: Network, layers: dict, weights: dict, image: np.ndarray, device, repeat: int = 10,
                warmup: int = 2) -> ChainedRun:
    """Time ``repeat`` forward passes of ``net`` (after ``warmup``).  ``layers``: each node's key -> its
    ``CompiledPipeline`` (``run_network``'s compiled layers); ``weights``: node name -> its weight arrays, in
    the order of the layer's parameters after its activations."""
    cl = _cl()
    ctx, queue = device.context, device.queue
    mf = cl.mem_flags
    tensors = {"input": cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(image, np.float32))}
    steps = []  # (kind, payload): what one pass enqueues, in order
    for node in net.nodes:
        layer = layers[node.key]
        if not isinstance(layer, CompiledPipeline):
            raise LiftError(f"layer {node.name}: chaining takes compiled pipelines, got {type(layer).__name__}")
        bindings = layer.kernels[0][0].ks.bindings  # (the sizes the layer's kernels were generated for)
        params = list(zip((p.name for p in layer.program.params), layer.program.param_types))
        acts, rest = params[:len(node.inputs)], params[len(node.inputs):]
        ws = weights[node.name]
        if len(ws) != len(rest):
            raise LiftError(f"layer {node.name}: {len(ws)} weight arrays for the {len(rest)} parameters after its activations")
        buffers: dict = {}
        for (name, t), source in zip(acts, node.inputs):
            if layer.placements.get(name) == "image":
                h, w, c = _image_extent(t, bindings)
                img = cl.create_image(ctx, mf.READ_ONLY, cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT),
                                      shape=(w * c // 4, h))
                steps.append(("fill", (img, tensors[source], (w * c // 4, h))))
                buffers[name] = img
            else:
                buffers[name] = tensors[source]
        for (name, _), arr in zip(rest, ws):
            arr = np.ascontiguousarray(arr, np.float32)
            buffers[name] = (cl.image_from_array(ctx, pack_image(arr), num_channels=4, mode="r")
                             if layer.placements.get(name) == "image" else
                             cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr))
        for k, out in layer.kernels:
            nbytes = max(k.ks.output.nbytes, 1)
            if out == "out":
                if k.ks.output.nbytes != 4 * math.prod(node.shape):
                    raise LiftError(f"layer {node.name} writes {k.ks.output.nbytes} bytes; its tensor {node.shape} has "
                                    f"{4 * math.prod(node.shape)}")
                tensors[node.name] = buffers[out] = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
            else:  # the layer's workspace (partial sums, a padded copy)
                buffers[out] = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
            steps.append(("kernel", (k, [buffers[n] for n in k.ks.input_names] + scratch_buffers(k.ks, ctx) + [buffers[out]])))

    def one_pass() -> float:
        t = time.perf_counter()
        for kind, payload in steps:
            if kind == "kernel":
                k, args = payload
                k.kernel(queue, k.ks.launch.global_size, k.ks.launch.local_size, *args)
            else:
                img, buf, region = payload
                cl.enqueue_copy(queue, img, buf, offset=0, origin=(0, 0), region=region)
        queue.finish()
        return (time.perf_counter() - t) * 1e3

    try:
        for _ in range(warmup):
            one_pass()
        walls = tuple(one_pass() for _ in range(max(1, repeat)))
        out = np.empty(net.output.shape, np.float32)
        cl.enqueue_copy(queue, out, tensors[net.output.name]).wait()
    except cl.Error as e:
        raise LiftError(f"{net.name}: the chained run failed on {device.info.name}: {e}") from None
    return ChainedRun(float(statistics.median(walls)), walls, len(steps), out)
