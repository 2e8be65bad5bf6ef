"""Indexing by positions: Gather (a take, an embedding, or positions known at run time), GatherElements,
ScatterElements and TopK."""

from __future__ import annotations

import numpy as np

from loom.models.graph import I64, Tensor
from loom.models.onnx_ops.node import Node, all_const, choice, const_values


def _gather(n: Node):
    data, ids = n.inputs[0], n.inputs[1]
    axis = int(n.attrs.get("axis", 0))
    if all_const(n):
        return np.take(*const_values(n), axis=axis)
    if isinstance(data, Tensor) and not n.b.is_constant(data) and (
            isinstance(ids, np.ndarray) or n.b.is_constant(ids)):
        return n.b.take(n.tensor(0), n.const(1, "indices"), axis, "Gather")
    table, idx = n.tensor(0), n.tensor(1)
    if axis == 0 and n.b.is_constant(table) and len(table.shape) == 2 and table.dtype.kind == "f" and \
            idx.dtype == I64:
        return n.b.embedding(table, idx)  # (a constant table's rows: an embedding)
    return n.b.take_positions(table, idx, axis, True, "Gather")  # positions known when the model runs


def _gather_elements(n: Node):
    return n.b.gather_elements(n.tensor(0), n.tensor(1), int(n.attrs.get("axis", 0)), True, "GatherElements")


def _scatter_elements(n: Node):
    reduction = choice(n, "reduction", "none", ("none", "add", "mul", "max", "min"))
    return n.b.scatter_elements(n.tensor(0), n.tensor(1), n.tensor(2), int(n.attrs.get("axis", 0)), reduction, True,
                                n.op)


def _topk(n: Node):
    """TopK: the k largest (or smallest) along the axis, equal values in position order (the specification's);
    the output is sorted whatever ``sorted`` says."""
    k = n.const(1, "k") if n.opset >= 10 else np.array(n.attrs["k"])
    if k is None or k.size != 1:
        raise n.error("needs a constant one-element k")
    return n.b.topk(n.tensor(0), int(k.reshape(-1)[0]), int(n.attrs.get("axis", -1)), bool(n.attrs.get("largest", 1)))


OPS = {
    "Gather": _gather, "GatherElements": _gather_elements, "ScatterElements": _scatter_elements,
    "Scatter": _scatter_elements, "TopK": _topk,
}
