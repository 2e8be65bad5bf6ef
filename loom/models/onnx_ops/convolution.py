"""Convolutions (1-d, 2-d and 3-d, plain and transposed) and pooling: ONNX's pads, auto_pad and ceil_mode onto
the builder's symmetric-padding layers (3-d ones: loom.models.volumetric)."""

from __future__ import annotations

import numpy as np

from loom.models.graph import Tensor
from loom.models.onnx_ops.node import Node, choice, text
from loom.models.volumetric import conv3d, conv_transpose3d, pool3d


def _spatial(n: Node, x: Tensor, what: str) -> int:
    rank = len(x.shape)
    if rank not in (3, 4, 5):
        raise n.error(f"only 1-d, 2-d and 3-d {what} (rank 3, 4 or 5 input) are supported, got rank {rank}")
    choice(n, "auto_pad", "NOTSET", ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"))
    return rank - 2


def _pads(n: Node, spatial: int, sizes=(), kernel=(), strides=(), dilations=()) -> tuple[list[int], list[int]]:
    """The explicit pads, none for VALID, or SAME_UPPER / SAME_LOWER's: the output ceil(size / stride) long, the
    padding that needs split in two halves, the odd one after (UPPER) or before (LOWER)."""
    auto_pad = text(n.attrs.get("auto_pad", "NOTSET"))
    if auto_pad.startswith("SAME"):
        total = [max((-(-d // s) - 1) * s + (k - 1) * dl + 1 - d, 0)
                 for d, k, s, dl in zip(sizes, kernel, strides, dilations)]
        before = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
        return before, [t - b for t, b in zip(total, before)]
    pads = n.ints("pads", [0] * (2 * spatial)) if auto_pad == "NOTSET" else [0] * (2 * spatial)
    return pads[:spatial], pads[spatial:]


def _conv(n: Node):
    return convolve(n, n.tensor(0), n.tensor(1), n.optional(2))


def convolve(n: Node, x: Tensor, w: Tensor, bias: Tensor | None) -> Tensor:
    """The convolution a Conv-like node's attributes (pads, auto_pad, strides, dilations, group) give (Conv,
    ConvInteger, QLinearConv)."""
    s = _spatial(n, x, "convolutions")
    strides, dilations = n.ints("strides", [1] * s), n.ints("dilations", [1] * s)
    before, after = _pads(n, s, x.shape[2:], w.shape[2:], strides, dilations)
    group = int(n.attrs.get("group", 1))
    if s == 3:
        return conv3d(n.b, x, w, bias, strides, before, after, dilations, group)
    if before != after:  # asymmetric: pad first, then an unpadded convolution
        x = n.b.pad(x, [0, 0, *before], [0, 0, *after])
        before = after = [0] * s
    if s == 1:
        return n.b.conv1d(x, w, bias, strides[0], before[0], dilations[0], group)
    return n.b.conv2d(x, w, bias, strides, before, dilations, group)


def _conv_transpose(n: Node):
    """ConvTranspose (1-d and 2-d): explicit pads (output_padding adds to the end), an output_shape, or auto_pad
    SAME_UPPER / SAME_LOWER (the padding split as onnx's reference splits it: SAME_UPPER puts the smaller half first).
    Groups are each group's channels as the specification gives them (onnx's reference evaluator gets grouped
    transposed convolutions wrong; torch is the reference there)."""
    x, w, bias = n.tensor(0), n.tensor(1), n.optional(2)
    rank = len(x.shape)
    if rank not in (3, 4, 5):
        raise n.error(f"only 1-d, 2-d and 3-d transposed convolutions (rank 3, 4 or 5 input) are supported, got "
                      f"rank {rank}")
    s = rank - 2
    strides, dilations = n.ints("strides", [1] * s), n.ints("dilations", [1] * s)
    extra = n.ints("output_padding", [0] * s)
    kernel = n.ints("kernel_shape", list(w.shape[2:]))
    if kernel != list(w.shape[2:]):
        raise n.error(f"kernel_shape {kernel} differs from the weight's {list(w.shape[2:])}")
    auto_pad = text(n.attrs.get("auto_pad", "NOTSET"))
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise n.error(f"auto_pad={auto_pad!r} is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)")
    target = n.ints("output_shape")
    full = [st * (d - 1) + (k - 1) * dl + 1 for st, d, k, dl in zip(strides, x.shape[2:], kernel, dilations)]
    if auto_pad.startswith("SAME"):  # the padding that gives output_shape (or input * stride), split as the reference
        target = [d * st for d, st in zip(x.shape[2:], strides)] if target is None else target[-s:]
        total = [f + e - t for f, e, t in zip(full, extra, target)]
        before = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
    else:
        pads = n.ints("pads", [0] * (2 * s)) if auto_pad == "NOTSET" else [0] * (2 * s)
        before = pads[:s]
        # an output_shape: the output from the pads on, extended at the end like output_padding (the reference's);
        # else the end pads, less output_padding
        target = None if target is None else target[-s:]
        if target is not None and any(f - b - p > t for f, b, p, t in zip(full, before, pads[s:], target)):
            raise n.error(f"output_shape {target} is smaller than the output {list(x.shape)} gives with pads "
                          f"{pads}: give the pads that crop it (the specification and onnx's reference differ here)")
    after = [p - e for p, e in zip(pads[s:], extra)] if target is None else \
        [f - b - t for f, b, t in zip(full, before, target)]
    group = int(n.attrs.get("group", 1))
    if s == 3:
        return conv_transpose3d(n.b, x, w, bias, strides, before, after, dilations, group)
    if s == 1:
        x, w = (n.b.view(t, (*t.shape[:2], 1, t.shape[2])) for t in (x, w))
        strides, dilations, before, after = [1, *strides], [1, *dilations], [0, *before], [0, *after]
    y = n.b.conv_transpose2d(x, w, bias, strides, before, after, dilations, group)
    return n.b.view(y, (y.shape[0], y.shape[1], y.shape[3])) if s == 1 else y


def _pool_window(n: Node):
    """A pooling node's input, spatial rank, kernel, strides, dilations and pads before / after."""
    x = n.tensor(0)
    s = _spatial(n, x, "pooling")
    kernel = n.ints("kernel_shape")
    strides, dilations = n.ints("strides", [1] * s), n.ints("dilations", [1] * s)
    before, after = _pads(n, s, x.shape[2:], kernel, strides, dilations)
    return x, s, kernel, strides, dilations, before, after


def _pool(kind: str):
    def build(n: Node):
        x, s, kernel, strides, dilations, before, after = _pool_window(n)
        if n.attrs.get("storage_order", 0):
            raise n.error("storage_order=1 is not supported")
        ceil = bool(n.attrs.get("ceil_mode", 0))
        include = bool(n.attrs.get("count_include_pad", 0))
        if s == 3:
            return (pool3d(n.b, kind, x, kernel, strides, before, after, dilations, ceil, include), None)
        wide = any(2 * p > k for p, k in zip(before + after, kernel + kernel))
        if (before != after or wide) and (kind == "max" or include) and not ceil:
            # padding first (-inf, or zeros counted in the average), then an unpadded pooling
            x = n.b.pad(x, [0, 0, *before], [0, 0, *after], float("-inf") if kind == "max" else 0.0)
            before = after = [0] * s
            wide = False
        if (before != after or wide) and not ceil and kind == "avg":
            # an average of the real elements: the padded sums' average over the average of ones padded alike (each
            # window's share of real elements)
            if s == 1:
                x = n.b.view(x, (*x.shape[:2], 1, x.shape[2]))
                kernel, strides, before, after, dilations = ([1, *v] for v in (kernel, strides, before, after,
                                                                               dilations))
                before[0] = after[0] = 0
            ones = n.b.constant(f"{n.proto.name or 'pool'}_ones", np.ones((1, 1, *x.shape[2:]), x.dtype))
            pools = [n.b.pool2d("avg", n.b.pad(t, [0, 0, *before], [0, 0, *after]), kernel, strides, (0, 0),
                                dilations, False, True) for t in (x, ones)]
            y = n.b.binary("div", *pools)
            return (n.b.view(y, (y.shape[0], y.shape[1], y.shape[3])) if s == 1 else y, None)
        if before != after:
            raise n.error(f"asymmetric pads {before + after} with ceil_mode are not supported (average pooling "
                          "without count_include_pad)")
        if s == 1:
            x = n.b.view(x, (*x.shape[:2], 1, x.shape[2]))
            kernel, strides, before, dilations = [1, *kernel], [1, *strides], [0, *before], [1, *dilations]
        y = n.b.pool2d(kind, x, kernel, strides, before, dilations, ceil, include)
        if s == 1:
            y = n.b.view(y, (y.shape[0], y.shape[1], y.shape[3]))
        return (y, None)  # MaxPool's optional indices are not computed
    return build


def _lp_pool(n: Node):
    """(sum over the window of |x|^p)^(1/p): an unpadded average pooling of |x|^p padded with zeros, times the
    window's size."""
    b = n.b
    x, s, kernel, strides, dilations, before, after = _pool_window(n)
    if n.attrs.get("ceil_mode", 0):
        raise n.error("ceil_mode=1 is not supported")
    p = float(n.attrs.get("p", 2))
    powered = b.binary("mul", x, x) if p == 2 else b.binary("pow", b.unary("abs", x), p)
    padded = b.pad(powered, [0, 0, *before], [0, 0, *after])
    if s == 3:
        means = pool3d(b, "avg", padded, kernel, strides, [0] * 3, [0] * 3, dilations, False, True)
    else:
        flat = padded if s == 2 else b.view(padded, (*padded.shape[:2], 1, padded.shape[2]))
        lift = (lambda v: v) if s == 2 else (lambda v: [1, *v])
        means = b.pool2d("avg", flat, lift(kernel), lift(strides), (0, 0), lift(dilations), False, True)
        means = means if s == 2 else b.view(means, (*means.shape[:2], means.shape[3]))
    total = b.binary("mul", means, float(np.prod(kernel)))
    return b.unary("sqrt", total) if p == 2 else b.binary("pow", total, 1.0 / p)


def _global_pool(op: str):
    def build(n: Node):
        x = n.tensor(0)
        return n.b.reduce(op, x, list(range(2, len(x.shape))), True)
    return build


OPS = {
    "Conv": _conv, "ConvTranspose": _conv_transpose, "MaxPool": _pool("max"), "AveragePool": _pool("avg"),
    "GlobalAveragePool": _global_pool("mean"), "GlobalMaxPool": _global_pool("max"), "LpPool": _lp_pool,
}
