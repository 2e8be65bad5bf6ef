"""Resizing (ONNX Resize, torch's interpolate) as separable taps: along each resized axis every output position
reads ``n`` source positions with constant weights (nearest 1, linear 2, cubic 4), so the axis becomes n gathers
of constant positions, each scaled by its weights and summed. Positions and weights are computed here at import,
in float64, as onnx's reference computes them (``onnx.reference.ops.op_resize``: source coordinate per
coordinate_transformation_mode, neighbours of an edge-padded axis, i.e. clamped positions)."""

from __future__ import annotations

import math

import numpy as np

from loom.models.graph import FLOATS, GraphBuilder, Tensor

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
MODES = ("nearest", "linear", "cubic")


def source_coordinates(mode: str, size: int, out: int, scale: float, roi: tuple[float, float] = (0.0, 1.0)
                       ) -> np.ndarray:
    """The input coordinate each output position samples (ONNX's coordinate_transformation_mode; ``roi``: the
    axis's (start, end) as fractions of the input, for tf_crop_and_resize)."""
    y = np.arange(out, dtype=np.float64)
    length = scale * size  # ONNX's "output_width": the unrounded output length
    if mode == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            return np.full(out, (end - start) * (size - 1) / 2 + start * (size - 1))
        return y * (end - start) * (size - 1) / (length - 1) + start * (size - 1)
    if mode == "align_corners":
        return np.zeros(out) if length == 1 else y * (size - 1) / (length - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if length == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = size / 2 * (1 - out / length)
        return offset + (y + 0.5) / scale - 0.5
    raise ValueError(f"coordinate_transformation_mode {mode!r}")


def torch_linear_coordinates(size: int, out: int, align_corners: bool, factor: float | None) -> np.ndarray:
    """PyTorch's source coordinate of each output position for linear modes, in float32 as its CPU kernels compute
    it (area_pixel_compute_source_index): (i + 0.5) * s - 0.5 clamped at 0, s = 1 / factor when a scale factor is
    given, else size / out; with align_corners i * (size - 1) / (out - 1)."""
    i = np.arange(out, dtype=np.float32)
    if align_corners:
        return (i * np.float32((size - 1) / (out - 1) if out > 1 else 0.0)).astype(np.float64)
    s = np.float32(1.0 / factor) if factor else np.float32(size) / np.float32(out)
    return np.maximum(s * (i + np.float32(0.5)) - np.float32(0.5), np.float32(0)).astype(np.float64)


def taps(mode: str, coords: np.ndarray, size: int, scale: float = 1.0, nearest: str = "round_prefer_floor",
         cubic_a: float = -0.75, exclude_outside: bool = False, antialias: bool = False
         ) -> tuple[np.ndarray, np.ndarray]:
    """(positions, weights), each (out, n): the n neighbours of each coordinate, clamped into [0, size) (edge
    padding), and their weights. A coordinate on an integer has ratio 1 (the left neighbour preferred).
    ``antialias`` (downscaling only): the kernel stretched by 1 / scale, more taps, weights normalised."""
    floor = np.floor(coords)
    ratio = np.where(coords == floor, 1.0, coords - floor)
    if mode == "nearest":  # one neighbour of the two around the coordinate
        pick = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": ratio == 1.0,
                "ceil": np.ones_like(ratio, bool)}[nearest]
        chosen = np.floor(coords).astype(np.int64) + pick - (coords == floor)  # the right neighbour if picked
        return np.clip(chosen, 0, size - 1)[:, None], np.ones((len(coords), 1))
    weights = _weights(mode, ratio, min(scale, 1.0) if antialias else 1.0, cubic_a)
    n = weights.shape[1]
    # the reference's window: the n positions nearest the coordinate, the smaller one on a tie
    # (n is even for every kernel here: a window of n // 2 on each side, the left one on an integer coordinate)
    start = floor - (n // 2 - 1) - (coords == floor)
    positions = start.astype(np.int64)[:, None] + np.arange(n)[None, :]
    if exclude_outside:
        weights = np.where((positions < 0) | (positions >= size), 0.0, weights)
        total = weights.sum(1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(positions, 0, size - 1), weights


def _weights(mode: str, ratio: np.ndarray, scale: float, a: float) -> np.ndarray:
    """Linear or cubic (Keys, coefficient ``a``) weights of the taps around each ratio; ``scale`` < 1 stretches the
    kernel over more taps and normalises them (antialiasing), as onnx's reference does."""
    if mode == "linear":
        first = int(np.floor(-1 / scale) + 1)
        offsets = np.arange(first, 2 - first)
        weights = np.clip(1 - np.abs((offsets[None, :] - ratio[:, None]) * scale), 0, 1)
    elif scale == 1.0:  # the reference's closed form (the same kernel, other rounding)
        r, s = ratio, 1 - ratio
        return np.stack([((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                         ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
                         ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a], 1)
    else:
        first = int(np.floor(-2 / scale) + 1)
        t = np.abs(scale * (np.arange(first, 2 - first)[None, :] - ratio[:, None]))
        weights = np.where(t <= 1, (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1,
                           np.where(t < 2, a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a, 0.0))
    return weights / weights.sum(1, keepdims=True) if scale != 1.0 else weights


def interpolate(b: GraphBuilder, x: Tensor, axis: int, positions: np.ndarray, weights: np.ndarray,
                op: str = "resize", outside: np.ndarray | None = None, fill: float = 0.0) -> Tensor:
    """sum over taps k of x[..., positions[:, k], ...] * weights[:, k] along ``axis`` (weights rounded to x's dtype,
    which ``resize`` checks is a float, where nearest gathers any dtype); taps whose
    weights are all 0 are left out, and a tap of weight 1 everywhere is the gather alone (nearest). Output
    positions where ``outside`` holds are ``fill`` (their weights are zeroed, ``fill`` added)."""
    shape = (-1,) + (1,) * (len(x.shape) - axis - 1)
    if outside is not None and outside.any():
        weights = np.where(outside[:, None], 0.0, weights)
        total = interpolate(b, x, axis, positions, weights, op)
        return b.binary("add", total, b.constant(f"{op}_fill", np.where(outside, fill, 0).astype(x.dtype)
                                                 .reshape(shape)))
    total = None
    for k in range(positions.shape[1]):
        w = weights[:, k].astype(x.dtype if x.dtype in FLOATS else np.float32)
        if not w.any():
            continue
        term = b.take(x, positions[:, k], axis, op)
        if not np.all(w == 1):
            term = b.binary("mul", term, b.constant(f"{op}_weights", w.reshape(shape)))
        total = term if total is None else b.binary("add", total, term)
    return total


def resize(b: GraphBuilder, x: Tensor, sizes: list[int], scales: list[float], mode: str, coordinates: str,
           nearest: str = "round_prefer_floor", cubic_a: float = -0.75, exclude_outside: bool = False,
           antialias: bool = False, roi=None, fill: float = 0.0, op: str = "resize") -> Tensor:
    """``x`` resized to ``sizes`` with the per-axis ``scales`` its coordinates use, one axis after the other (axes
    of scale 1, unchanged size and whole region are left as they are). ``roi``: (start, end) per axis for
    tf_crop_and_resize, whose coordinates outside the input give ``fill``."""
    if (mode != "nearest" or coordinates == "tf_crop_and_resize") and x.dtype not in FLOATS:
        raise b.error(op, f"{x.name} has dtype {x.dtype}; {mode} resizing computes in float32 or float64")
    roi = roi or [(0.0, 1.0)] * len(x.shape)
    for axis, (size, out, scale, region) in enumerate(zip(x.shape, sizes, scales, roi)):
        if out == size and math.isclose(scale, 1.0) and (coordinates != "tf_crop_and_resize" or np.allclose(
                region, (0.0, 1.0))):
            continue
        coords = source_coordinates(coordinates, size, out, scale, region)
        positions, weights = taps(mode, coords, size, scale, nearest, cubic_a, exclude_outside, antialias)
        outside = (coords < 0) | (coords > size - 1) if coordinates == "tf_crop_and_resize" else None
        x = interpolate(b, x, axis, positions, weights, op, outside, fill)
    return x
