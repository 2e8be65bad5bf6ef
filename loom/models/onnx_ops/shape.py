"""Layout ops: reshapes and transposes (views where possible), slicing, splitting, concatenation, tiling,
depth / space blocks, triangles and padding; of constants folded with numpy (shape arithmetic)."""

from __future__ import annotations

import math

import numpy as np

from loom.models.composite import pad_by_positions
from loom.models.graph import broadcast_shapes
from loom.models.onnx_ops.node import Node, all_const, choice, const_values


def _flatten(n: Node):
    x = n.tensor(0) if not isinstance(n.inputs[0], np.ndarray) else n.inputs[0]
    axis = int(n.attrs.get("axis", 1))
    axis = axis + len(x.shape) if axis < 0 else axis
    shape = (math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
    return x.reshape(shape) if isinstance(x, np.ndarray) else n.b.view(x, shape)


def _reshape(n: Node):
    x = n.inputs[0]
    shape = [int(d) for d in n.const(1, "shape")]
    if not n.attrs.get("allowzero", 0):
        shape = [x.shape[k] if d == 0 else d for k, d in enumerate(shape)]
    if isinstance(x, np.ndarray):
        return x.reshape(shape)
    return n.b.view(x, shape)


def _transpose(n: Node):
    x = n.inputs[0]
    perm = n.ints("perm", list(reversed(range(len(x.shape)))))
    return np.transpose(x, perm) if isinstance(x, np.ndarray) else n.b.transpose(x, perm)


def _axes(n: Node) -> list[int] | None:
    axes = n.ints("axes")
    if axes is None and len(n.inputs) > 1 and n.inputs[1] is not None:
        axes = [int(v) for v in n.const(1, "axes")]
    return axes


def _squeeze(n: Node):
    x, axes = n.inputs[0], _axes(n)
    rank = len(x.shape)
    axes = [k for k, d in enumerate(x.shape) if d == 1] if axes is None else [a % rank for a in axes]
    shape = [d for k, d in enumerate(x.shape) if k not in axes]
    return x.reshape(shape) if isinstance(x, np.ndarray) else n.b.view(x, shape)


def _unsqueeze(n: Node):
    x, axes = n.inputs[0], _axes(n)
    rank = len(x.shape) + len(axes)
    axes = sorted(a % rank for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return x.reshape(shape) if isinstance(x, np.ndarray) else n.b.view(x, shape)


def _expand(n: Node):
    x, shape = n.tensor(0), [int(d) for d in n.const(1, "shape")]
    target = broadcast_shapes(x.shape, shape)  # ONNX Expand broadcasts both ways
    if target is None:
        raise n.error(f"cannot broadcast {list(x.shape)} with {shape}")
    return n.b.expand(x, target)


def _slice(n: Node):
    x = n.tensor(0)
    if n.opset < 10:
        starts, ends, axes, steps = n.ints("starts"), n.ints("ends"), n.ints("axes"), None
    else:
        starts, ends = [int(v) for v in n.const(1, "starts")], [int(v) for v in n.const(2, "ends")]
        a, st = n.const(3, "axes"), n.const(4, "steps")
        axes, steps = (None if a is None else [int(v) for v in a]), (None if st is None else [int(v) for v in st])
    axes = axes or list(range(len(starts)))
    steps = steps or [1] * len(starts)
    if all_const(n):  # shape arithmetic (torch.onnx reverses F.pad's pads with step -1): numpy's slicing
        return _slice_constant(n, const_values(n)[0], axes, starts, ends, steps)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        if step < 1:
            raise n.error(f"step {step} is not supported (positive steps only)")
        x = n.b.slice(x, axis, max(min(start, 2**62), -2**62), max(min(end, 2**62), -2**62), step)
    return x


def _slice_constant(n: Node, data: np.ndarray, axes, starts, ends, steps) -> np.ndarray:
    """ONNX's Slice clamps starts and ends as Python's slices do, negative steps included."""
    index = [slice(None)] * data.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        if step == 0:
            raise n.error("step 0 is not a slice")
        index[n.b.axis("Slice", axis, data.ndim)] = slice(start, end, step)
    return np.ascontiguousarray(data[tuple(index)])


def _split(n: Node):
    """Slices along ``axis``: sizes from the ``split`` attribute (opset < 13) or input, else equal
    parts (the last one smaller, as opset 18's ``num_outputs`` gives)."""
    x = n.tensor(0)
    axis = n.b.axis("Split", int(n.attrs.get("axis", 0)), len(x.shape))
    sizes = n.ints("split") if n.opset < 13 else n.const(1, "split")
    length = x.shape[axis]
    if sizes is None:
        parts = int(n.attrs.get("num_outputs", len(n.proto.output)))
        step = -(-length // parts)
        sizes = [min(step, length - k * step) for k in range(parts)]
    sizes = [int(v) for v in sizes]
    if sum(sizes) != length or min(sizes, default=0) < 0:
        raise n.error(f"split sizes {sizes} must not be negative and must add up to {length}, the size of axis "
                      f"{axis}")
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(n.b.slice(x, axis, int(start), int(start) + size) if size else _empty(x, axis)
                 for start, size in zip(starts, sizes))


def _empty(x, axis: int) -> np.ndarray:
    """An empty part (a split of size 0, as exporters write for the features a rotation leaves): a constant a
    Concat drops; any other use of it is refused where a tensor is built from it."""
    return np.zeros([0 if k == axis else d for k, d in enumerate(x.shape)], x.dtype)


def _concat(n: Node):
    axis = int(n.attrs["axis"])
    parts = [v for v in n.inputs if not (isinstance(v, np.ndarray) and v.size == 0)] or n.inputs[:1]
    if all_const(n):
        return np.concatenate([v for v in const_values(n) if v.size] or const_values(n)[:1], axis=axis)
    return n.b.concat([n.b.constant("part", v) if isinstance(v, np.ndarray) else v for v in parts], axis)


def _tile(n: Node):
    repeats = [int(v) for v in n.const(1, "repeats")]
    if all_const(n):
        return np.tile(const_values(n)[0], repeats)
    return n.b.repeat(n.tensor(0), repeats)


def _depth_to_space(n: Node):
    """(N, C * r * r, H, W) -> (N, C, H * r, W * r): DCR (depth, column, row: the default) or CRD order of the
    channels' blocks, as views and one transpose."""
    x, r = n.tensor(0), int(n.attrs["blocksize"])
    if len(x.shape) != 4 or x.shape[1] % (r * r):
        raise n.error(f"needs (N, C, H, W) with C divisible by blocksize^2 = {r * r}, got {list(x.shape)}")
    b_, c, h, w = x.shape
    if choice(n, "mode", "DCR", ("DCR", "CRD")) == "CRD":
        y = n.b.transpose(n.b.view(x, (b_, c // (r * r), r, r, h, w)), (0, 1, 4, 2, 5, 3))
    else:
        y = n.b.transpose(n.b.view(x, (b_, r, r, c // (r * r), h, w)), (0, 3, 4, 1, 5, 2))
    return n.b.view(y, (b_, c // (r * r), h * r, w * r))


def _space_to_depth(n: Node):
    x, r = n.tensor(0), int(n.attrs["blocksize"])
    if len(x.shape) != 4 or x.shape[2] % r or x.shape[3] % r:
        raise n.error(f"needs (N, C, H, W) with H and W divisible by blocksize {r}, got {list(x.shape)}")
    b_, c, h, w = x.shape
    crd = choice(n, "mode", "DCR", ("DCR", "CRD")) == "CRD"  # (opset 25's mode)
    perm = (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4)
    y = n.b.transpose(n.b.view(x, (b_, c, h // r, r, w // r, r)), perm)
    return n.b.view(y, (b_, c * r * r, h // r, w // r))


def _trilu(n: Node):
    """The upper (or lower) triangle of the last two axes from diagonal k: folded for constants, else a select of
    a constant mask."""
    upper, k = bool(n.attrs.get("upper", 1)), n.const(1, "k")
    k = 0 if k is None else int(k.reshape(-1)[0])
    if all_const(n):
        x = const_values(n)[0]
        return (np.triu if upper else np.tril)(x, k)
    x = n.tensor(0)
    if len(x.shape) < 2:
        raise n.error(f"needs a rank 2 or higher input, got {list(x.shape)}")
    keep = (np.triu if upper else np.tril)(np.ones(x.shape[-2:], bool), k)
    return n.b.select(n.b.constant(f"{n.proto.name or 'trilu'}_mask", keep), x, 0.0)


def _pad(n: Node):
    """Constant, reflect, edge or wrap padding of every axis, or of the axes input's (opset 18) only."""
    mode = choice(n, "mode", "constant", ("constant", "reflect", "edge", "wrap"))
    x = n.tensor(0)
    rank = len(x.shape)
    pads = n.ints("pads") if n.opset < 11 else [int(v) for v in n.const(1, "pads")]
    given = n.const(3, "axes") if n.opset >= 18 else None
    axes = list(range(rank)) if given is None else [n.b.axis(n.op, int(a), rank) for a in given.reshape(-1)]
    if len(pads) != 2 * len(axes):
        raise n.error(f"{len(pads)} pads for {len(axes)} axes: one before and one after each")
    before, after = [0] * rank, [0] * rank
    for k, axis in enumerate(axes):
        before[axis], after[axis] = pads[k], pads[len(axes) + k]
    if mode != "constant":  # a take of the positions numpy's pad gives each axis (onnx's reference is np.pad)
        return pad_by_positions(n.b, x, before, after, mode, "Pad")
    value = float(n.attrs.get("value", 0.0)) if n.opset < 11 else float(
        (n.const(2, "value") if len(n.inputs) > 2 and n.inputs[2] is not None else np.zeros(1)).reshape(-1)[0])
    return n.b.pad(x, before, after, value)


OPS = {
    "Flatten": _flatten, "Reshape": _reshape, "Transpose": _transpose, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze,
    "Expand": _expand, "Slice": _slice, "Concat": _concat, "Split": _split, "Tile": _tile,
    "DepthToSpace": _depth_to_space, "SpaceToDepth": _space_to_depth, "Trilu": _trilu, "Pad": _pad,
}
