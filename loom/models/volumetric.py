"""3-d convolution (plain and transposed) and pooling of (N, C, D, H, W) tensors as the 2-d layers over depth slices, for both importers.

The input is padded explicitly (its pads, and for pooling with ceil_mode the last windows' overhang), moved to
(N, D, C, H, W) once, and each depth tap k of the window takes the slice of depths k * dilation, stepping by the
stride: an (N * D_out, C, H, W) batch for one 2-d layer. A convolution sums the taps' 2-d convolutions by the
weight's k-th (KH, KW) plane; max pooling takes their maximum; average pooling sums the taps' window sums and
divides by each window's count of elements (real ones, or real and padding with count_include_pad), computed at
import: a window's count is the product of its per-axis counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.models.graph import GraphBuilder, Tensor


def _out_size(size: int, kernel: int, stride: int, before: int, after: int, dilation: int, ceil: bool) -> int:
    span = size + before + after - dilation * (kernel - 1) - 1
    n = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (n - 1) * stride >= size + before:  # the last window must start inside the input or its front pad
        n -= 1
    return n


def _check(b: GraphBuilder, op: str, x: Tensor, *params: Sequence[int]) -> None:
    if len(x.shape) != 5:
        raise b.error(op, f"needs an (N, C, D, H, W) input, got {list(x.shape)}")
    if any(len(p) != 3 for p in params):
        raise b.error(op, f"needs 3 values per parameter (depth, height, width), got {[list(p) for p in params]}")


def _taps(b: GraphBuilder, x: Tensor, kernel: int, out: int, stride: int, dilation: int) -> list[Tensor]:
    """Per depth tap of the window: the (N * out, C, H, W) batch of the depths it reads, of the padded x."""
    n, c, _, h, w = x.shape
    moved = b.transpose(x, (0, 2, 1, 3, 4))
    taps = []
    for k in range(kernel):
        start = k * dilation
        depths = b.slice(moved, 1, start, start + (out - 1) * stride + 1, stride)
        taps.append(b.view(depths, (n * out, c, h, w)))
    return taps


def _restore(b: GraphBuilder, y: Tensor, n: int, depth: int) -> Tensor:
    """(N * D, C, H, W) -> (N, C, D, H, W)."""
    _, c, h, w = y.shape
    return b.transpose(b.view(y, (n, depth, c, h, w)), (0, 2, 1, 3, 4))


def conv3d(b: GraphBuilder, x: Tensor, w: Tensor, bias: Tensor | None, stride: Sequence[int],
           before: Sequence[int], after: Sequence[int], dilation: Sequence[int], groups: int = 1) -> Tensor:
    op = "conv3d"
    _check(b, op, x, stride, before, after, dilation)
    if len(w.shape) != 5:
        raise b.error(op, f"needs an (F, C / groups, KD, KH, KW) weight, got {list(w.shape)}")
    x = b.pad(x, [0, 0, *before], [0, 0, *after])
    f, kd = w.shape[0], w.shape[2]
    out = _out_size(x.shape[2], kd, stride[0], 0, 0, dilation[0], False)
    if out < 1:
        raise b.error(op, f"a depth {kd} kernel (dilation {dilation[0]}) does not fit the padded depth {x.shape[2]}")
    total = None
    for k, tap in enumerate(_taps(b, x, kd, out, stride[0], dilation[0])):
        plane = b.view(b.slice(w, 2, k, k + 1), (f, w.shape[1], *w.shape[3:]))
        y = b.conv2d(tap, plane, None, stride[1:], (0, 0), dilation[1:], groups)
        total = y if total is None else b.binary("add", total, y)
    if bias is not None:
        total = b.binary("add", total, b.view(bias, (f, 1, 1)))
    return _restore(b, total, x.shape[0], out)


def conv_transpose3d(b: GraphBuilder, x: Tensor, w: Tensor, bias: Tensor | None, stride: Sequence[int],
                     before: Sequence[int], after: Sequence[int], dilation: Sequence[int], groups: int = 1) -> Tensor:
    """The transposed convolution as the convolution it equals (GraphBuilder.conv_transpose2d's construction in 3-d):
    stride - 1 zeros between the input's elements, dilation * (k - 1) - before padding before and ... - after after
    (``after``: the end pads less output_padding; negative: a crop), then a stride-1 convolution by the weight with
    its taps reversed and its two channel axes swapped per group."""
    op = "conv_transpose3d"
    _check(b, op, x, stride, before, after, dilation)
    n, c, *sizes = x.shape
    if len(w.shape) != 5 or w.shape[0] != c or groups < 1 or c % groups:
        raise b.error(op, f"the weight {list(w.shape)} must be (C, F / groups, KD, KH, KW) for {c} input channels in "
                          f"{groups} group(s)")
    if any(s > 1 for s in stride):  # stride - 1 zeros after each element, none after the last
        spread = b.pad(b.view(x, (n, c, sizes[0], 1, sizes[1], 1, sizes[2], 1)), [0] * 8,
                       [0, 0, 0, stride[0] - 1, 0, stride[1] - 1, 0, stride[2] - 1])
        x = b.view(spread, (n, c, *(d * s for d, s in zip(sizes, stride))))
        for axis, (d, s) in enumerate(zip(sizes, stride), start=2):
            x = b.slice(x, axis, 0, (d - 1) * s + 1)
    kernel = w.shape[2:]
    low = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, before)]
    high = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, after)]
    x = b.pad(x, [0, 0, *(max(v, 0) for v in low)], [0, 0, *(max(v, 0) for v in high)])
    for axis, (lo, hi) in enumerate(zip(low, high), start=2):  # padding beyond the kernel's reach: a crop
        if lo < 0 or hi < 0:
            x = b.slice(x, axis, max(-lo, 0), x.shape[axis] - max(-hi, 0))
    g, per_group = groups, w.shape[1]
    flipped = b.flip(w, (2, 3, 4))
    wt = b.view(b.transpose(b.view(flipped, (g, c // g, per_group, *kernel)), (0, 2, 1, 3, 4, 5)),
                (g * per_group, c // g, *kernel))
    return conv3d(b, x, wt, bias, (1, 1, 1), (0, 0, 0), (0, 0, 0), dilation, groups)


def pool3d(b: GraphBuilder, kind: str, x: Tensor, kernel: Sequence[int], stride: Sequence[int],
           before: Sequence[int], after: Sequence[int], dilation: Sequence[int], ceil: bool = False,
           include_pad: bool = False) -> Tensor:
    """Max or average pooling of 3-d windows; padding is -inf for max, and counted by average pooling only with
    ``include_pad`` (never the overhang of ceil_mode's last windows)."""
    op = f"{kind}_pool3d"
    _check(b, op, x, kernel, stride, before, after, dilation)
    sizes = x.shape[2:]
    outs = [_out_size(*v, ceil) for v in zip(sizes, kernel, stride, before, after, dilation)]
    if min(outs) < 1:
        raise b.error(op, f"a {list(kernel)} window does not fit the input {list(x.shape)}")
    # the overhang past the end pad that the last window reads
    extra = [max((o - 1) * s + d * (k - 1) + 1 - (n + p + q), 0)
             for o, s, d, k, n, p, q in zip(outs, stride, dilation, kernel, sizes, before, after)]
    fill = float("-inf") if kind == "max" else 0.0
    x = b.pad(x, [0, 0, *before], [0, 0, *(q + e for q, e in zip(after, extra))], fill)
    total = None
    for tap in _taps(b, x, kernel[0], outs[0], stride[0], dilation[0]):
        y = b.pool2d("max" if kind == "max" else "avg", tap, kernel[1:], stride[1:], (0, 0), dilation[1:], False,
                     True)
        total = y if total is None else b.binary("max" if kind == "max" else "add", total, y)
    y = _restore(b, total, x.shape[0], outs[0])
    if kind == "max":
        return y
    # the taps' averages are window sums over KH * KW; each window's count of counted elements, per axis
    counts = [_window_counts(*v, include_pad) for v in zip(sizes, kernel, stride, before, after, dilation, outs)]
    divisor = np.einsum("i,j,k->ijk", *counts)
    factor = (kernel[1] * kernel[2] / divisor).astype(x.dtype)
    return b.binary("mul", y, b.constant(f"{op}_factor", factor[None, None]))


def _window_counts(size: int, kernel: int, stride: int, before: int, after: int, dilation: int, out: int,
                   include_pad: bool) -> np.ndarray:
    """How many counted positions (real, or real and padding) each output's window covers along one axis."""
    counted = np.zeros(before + size + after + (out - 1) * stride + dilation * (kernel - 1) + 1)
    counted[(0 if include_pad else before):before + size + (after if include_pad else 0)] = 1
    taps = np.arange(kernel) * dilation
    return np.array([counted[o * stride + taps].sum() for o in range(out)])
