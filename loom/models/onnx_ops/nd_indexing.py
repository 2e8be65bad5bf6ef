"""Indexing by tuples of positions: GatherND and ScatterND (each index row names a slice of the data by its first k
positions), and OneHot.

GatherND and ScatterND become a position into the data viewed as rows: each of the k components is wrapped
(negative ones count from the end, as ONNX says) and checked against its own axis by a gather from that axis's
positions (``take_positions`` of ``arange(d)``: an out-of-range component is refused when the model runs, naming the
node, where a combined row number could land inside the data), then the row number is their row-major sum, and the
rows are gathered (``take_positions``) or scattered (``scatter_elements``)."""

from __future__ import annotations

import math

import numpy as np

from loom.models.graph import COMPUTE_DTYPE, Tensor
from loom.models.onnx_ops.node import Node, all_const, choice, const_values


def _rows(n: Node, dims: tuple[int, ...], idx: Tensor, batch: tuple[int, ...]) -> Tensor:
    """The row of ``data`` viewed as (prod(batch) * prod(dims), rest) that each index tuple (idx's last axis, of
    len(dims) positions into ``dims``) names; idx's leading ``len(batch)`` axes pick the batch."""
    b = n.b
    idx = b._positions(n.op, idx)
    row = None
    for j, d in enumerate(dims):
        part = b.view(b.slice(idx, -1, j, j + 1), idx.shape[:-1])
        part = b.take_positions(b.constant(f"{n.op}_axis{j}", np.arange(d, dtype=np.int64)), part, 0, True, n.op)
        stride = math.prod(dims[j + 1:])
        part = part if stride == 1 else b.binary("mul", part, float(stride))
        row = part if row is None else b.binary("add", row, part)
    if batch:  # each batch's rows follow the previous batch's
        first = np.arange(math.prod(batch), dtype=np.int64).reshape(*batch, *[1] * (len(idx.shape) - 1 - len(batch)))
        row = b.binary("add", row, b.constant(f"{n.op}_batch", first * math.prod(dims)))
    return row


def _index_depth(n: Node, data: Tensor, idx: Tensor, batch_dims: int) -> int:
    k = idx.shape[-1] if idx.shape else 0
    if not idx.shape or not 1 <= k <= len(data.shape) - batch_dims or \
            tuple(idx.shape[:batch_dims]) != tuple(data.shape[:batch_dims]):
        raise n.error(f"the indices {list(idx.shape)} must end with a dimension k of 1..{len(data.shape) - batch_dims}"
                      f" (the data {list(data.shape)} less its {batch_dims} batch dims) and start with the data's "
                      f"batch dims")
    return k


def _gather_nd(n: Node):
    batch_dims = int(n.attrs.get("batch_dims", 0))
    if all_const(n):
        return _gather_nd_now(n, *const_values(n)[:2], batch_dims)
    data, idx = n.tensor(0), n.tensor(1)
    if not 0 <= batch_dims < min(len(data.shape), len(idx.shape)):
        raise n.error(f"batch_dims={batch_dims} must lie in [0, {min(len(data.shape), len(idx.shape))})")
    k = _index_depth(n, data, idx, batch_dims)
    batch, dims, rest = data.shape[:batch_dims], data.shape[batch_dims:batch_dims + k], data.shape[batch_dims + k:]
    rows = _rows(n, dims, idx, batch)
    flat = n.b.view(data, (math.prod(batch) * math.prod(dims), *rest))
    return n.b.take_positions(flat, rows, 0, False, n.op)


def _gather_nd_now(n: Node, data: np.ndarray, idx: np.ndarray, batch_dims: int) -> np.ndarray:
    """GatherND of constants (shape arithmetic), the same positions' rules."""
    k = idx.shape[-1]
    batch, dims = data.shape[:batch_dims], data.shape[batch_dims:batch_dims + k]
    if np.any(idx < -np.array(dims)) or np.any(idx >= np.array(dims)):
        raise n.error(f"constant indices out of range of the data's axes {list(dims)}")
    idx = np.where(idx < 0, idx + np.array(dims), idx)
    flat = data.reshape(math.prod(batch), *data.shape[batch_dims:])
    rows = idx.reshape(math.prod(batch), -1, k)
    out = np.stack([flat[i][tuple(np.moveaxis(rows[i], -1, 0))] for i in range(len(flat))])
    return out.reshape(*idx.shape[:-1], *data.shape[batch_dims + k:])


def _scatter_nd(n: Node):
    reduction = choice(n, "reduction", "none", ("none", "add", "mul", "max", "min"))
    data, idx, updates = n.tensor(0), n.tensor(1), n.tensor(2)
    k = _index_depth(n, data, idx, 0)
    dims, rest = data.shape[:k], data.shape[k:]
    if tuple(updates.shape) != (*idx.shape[:-1], *rest):
        raise n.error(f"the updates {list(updates.shape)} must have the shape {[*idx.shape[:-1], *rest]} (the "
                      f"indices' but the last, then the data's after the first {k})")
    count, width = math.prod(idx.shape[:-1]), math.prod(rest)
    rows = n.b.view(_rows(n, dims, idx, ()), (count, 1))
    if width > 1:  # every element of a row goes to that row
        rows = n.b.expand(rows, (count, width))
    flat = n.b.scatter_elements(n.b.view(data, (math.prod(dims), width)), rows, n.b.view(updates, (count, width)), 0,
                                reduction, False, n.op)
    return n.b.view(flat, data.shape)


def _one_hot(n: Node):
    """out[..., i, ...] = on where the index (negative ones counting from the end) is i, off elsewhere: an index
    outside [-depth, depth) gives a row of off values (the specification's)."""
    depth = n.const(1, "depth")
    if depth is None or depth.size != 1 or float(depth.reshape(-1)[0]) < 1:
        raise n.error(f"the depth must be one positive number, got {depth}")
    depth = int(depth.reshape(-1)[0])
    values = n.tensor(2)  # (first: a float16 / int8 value pair sets the dtype the output is narrowed back to)
    if values.size != 2:
        raise n.error(f"the values must be [off, on], got {list(values.shape)}")
    values = n.b.view(values, (2,))
    idx = n.inputs[0] if isinstance(n.inputs[0], Tensor) else n.b.constant(f"{n.op}_indices", n.inputs[0])
    if idx.dtype in COMPUTE_DTYPE:  # (widened here: the output is the values' dtype, not the indices')
        idx = n.b.cast(idx, COMPUTE_DTYPE[idx.dtype], n.op)
    rank = len(idx.shape)
    axis = int(n.attrs.get("axis", -1))
    if not -rank - 1 <= axis <= rank:
        raise n.error(f"axis={axis} must lie in [{-rank - 1}, {rank}] for indices of rank {rank}")
    axis = axis + rank + 1 if axis < 0 else axis
    wrapped = n.b.select(n.b.compare("lt", idx, 0.0), n.b.binary("add", idx, float(depth)), idx)
    wrapped = n.b.view(wrapped, (*idx.shape[:axis], 1, *idx.shape[axis:]))
    positions = np.arange(depth).astype(idx.dtype).reshape(*[1] * axis, depth, *[1] * (rank - axis))
    hit = n.b.compare("eq", wrapped, n.b.constant(f"{n.op}_positions", positions))
    return n.b.select(hit, n.b.slice(values, 0, 1, 2), n.b.slice(values, 0, 0, 1))


OPS = {"GatherND": _gather_nd, "ScatterND": _scatter_nd, "OneHot": _one_hot}
