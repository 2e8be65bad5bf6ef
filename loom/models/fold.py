"""Graph rewrites before code generation: batch norm folded into the convolution that feeds it.

``fold_batch_norms``: a ``channel_affine`` layer (inference batch norm) whose input is the output of a
``conv2d`` with constant weights, used by nothing else, becomes part of that convolution
(w' = w * scale[f], b' = b * scale[f] + shift[f]); the affine layer disappears. Anything else is left
as it is (the affine layer then runs as its own element-wise loop).
"""

from __future__ import annotations

import numpy as np

from loom.models.graph import Graph, Layer, Tensor


def fold_batch_norms(graph: Graph) -> Graph:
    producers = {layer.output.name: layer for layer in graph.layers}
    users = graph.users()
    outputs = {t.name for t in graph.outputs}
    constants = dict(graph.constants)
    replaced: dict[str, Tensor] = {}  # affine output -> the folded convolution's output
    removed: set[int] = set()
    rewritten: dict[int, Layer] = {}  # id(conv layer) -> its folded copy (the input graph is not changed)
    for layer in graph.layers:
        if layer.kind != "channel_affine":
            continue
        x, scale, shift = layer.inputs
        conv = producers.get(x.name)
        if (conv is None or conv.kind != "conv2d" or len(users.get(x.name, [])) != 1 or x.name in outputs
                or not all(t.name in constants for t in conv.inputs[1:])):
            continue
        s, h = constants[scale.name].astype(np.float64), constants[shift.name].astype(np.float64)
        w = constants[conv.inputs[1].name].astype(np.float64) * s[:, None, None, None]
        bias = constants[conv.inputs[2].name].astype(np.float64) if len(conv.inputs) > 2 else 0.0
        w_t = Tensor(f"{conv.inputs[1].name}_folded", conv.inputs[1].shape, conv.inputs[1].dtype)
        b_t = Tensor(f"{conv.output.name}_folded_bias", (w.shape[0],), conv.inputs[1].dtype)
        constants[w_t.name] = np.ascontiguousarray(w, dtype=np.float32)
        constants[b_t.name] = np.ascontiguousarray(bias * s + h, dtype=np.float32)
        rewritten[id(conv)] = Layer(conv.kind, [conv.inputs[0], w_t, b_t], conv.output, conv.attrs,
                                    f"{conv.where} + batch norm", conv.guard)
        replaced[layer.output.name] = conv.output
        removed.add(id(layer))
    if not removed:
        return graph
    layers = []
    for layer in graph.layers:
        if id(layer) in removed:
            continue
        layer = rewritten.get(id(layer), layer)
        layers.append(Layer(layer.kind, [replaced.get(t.name, t) for t in layer.inputs], layer.output,
                            layer.attrs, layer.where, layer.guard))
    outs = [replaced.get(t.name, t) for t in graph.outputs]
    used = {t.name for layer in layers for t in layer.inputs} | {t.name for t in outs}
    constants = {k: v for k, v in constants.items() if k in used}
    return Graph(graph.inputs, outs, layers, constants, graph.source, graph.pinned)
