"""Resize (nearest, linear, cubic; loom.models.resize) and the older Upsample."""

from __future__ import annotations

import numpy as np

from loom.models import resize
from loom.models.graph import Tensor
from loom.models.onnx_ops.node import Node, choice, text


def _resize(n: Node):
    """Nearest, linear or cubic resizing of any axes by constant scales or sizes (loom.models.resize)."""
    if n.opset < 11:
        raise n.error(f"Resize of opset {n.opset} is not supported (opset 11 and later)")
    mode = choice(n, "mode", "nearest", resize.MODES)
    coordinates = choice(n, "coordinate_transformation_mode", "half_pixel", resize.COORDINATE_MODES)
    nearest = choice(n, "nearest_mode", "round_prefer_floor", resize.NEAREST_MODES)
    policy = choice(n, "keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller"))
    x = n.tensor(0)
    rank = len(x.shape)
    axes = [n.b.axis(n.op, a, rank) for a in n.ints("axes", list(range(rank)))]
    scales, sizes = n.const(2, "scales"), n.const(3, "sizes")
    for what, given in (("scales", scales), ("sizes", sizes)):
        if given is not None and given.size and given.size != len(axes):
            raise n.error(f"{what} has {given.size} values for {len(axes)} axes")
    full_scales, full_sizes = [1.0] * rank, list(x.shape)
    if sizes is not None and sizes.size:
        for a, size in zip(axes, sizes.reshape(-1), strict=True):
            full_sizes[a], full_scales[a] = int(size), int(size) / x.shape[a]
        if policy != "stretch":  # one scale for every axis, the output rounded half up (the reference's)
            scale = (min if policy == "not_larger" else max)(full_scales[a] for a in axes)
            for a in axes:
                full_scales[a], full_sizes[a] = scale, int(scale * x.shape[a] + 0.5)
    elif scales is not None and scales.size:
        for a, scale in zip(axes, scales.reshape(-1), strict=True):
            full_scales[a] = float(scale)
        # the reference's output size: the (float32) scales times the shape in float64, truncated
        full_sizes = [int(v) for v in (np.array(full_scales) * np.array(x.shape)).astype(int)]
    else:
        raise n.error("needs constant scales or sizes")
    roi = None
    if coordinates == "tf_crop_and_resize":
        given = n.const(1, "roi")
        if given is None or given.size != 2 * len(axes):
            raise n.error("tf_crop_and_resize needs a constant roi of (starts, ends) for the resized axes")
        roi = [(0.0, 1.0)] * rank
        for k, a in enumerate(axes):
            roi[a] = (float(given.reshape(-1)[k]), float(given.reshape(-1)[len(axes) + k]))
    if min(full_sizes) < 1:
        raise n.error(f"scales {full_scales} give the empty output shape {full_sizes}")
    return resize.resize(n.b, x, full_sizes, full_scales, mode, coordinates, nearest,
                         float(n.attrs.get("cubic_coeff_a", -0.75)), bool(n.attrs.get("exclude_outside", 0)),
                         bool(n.attrs.get("antialias", 0)) and mode != "nearest", roi,
                         float(n.attrs.get("extrapolation_value", 0.0)), "Resize")


def _upsample(n: Node):
    """Upsample (opsets 7-9, as torch.onnx.export writes F.interpolate there): Resize's asymmetric / floor."""
    mode = text(n.attrs.get("mode", "nearest"))
    if mode != "nearest":
        raise n.error(f"mode {mode!r} is not supported (nearest only)")
    scales = n.attrs.get("scales") if n.opset < 9 else n.const(1, "scales")
    return _upsample_by(n, n.tensor(0), None if scales is None else np.asarray(scales, np.float32), None)


def _upsample_by(n: Node, x: Tensor, scales: np.ndarray | None, sizes: np.ndarray | None) -> Tensor:
    """Nearest upsampling by the whole-number factors that ``sizes`` or ``scales`` give each axis."""
    if sizes is not None and sizes.size:
        ratios = [int(o) / i for o, i in zip(sizes.reshape(-1), x.shape)]
    elif scales is not None and scales.size:
        ratios = [float(s) for s in scales.reshape(-1)]
    else:
        raise n.error("needs constant scales or sizes")
    if len(ratios) != len(x.shape) or ratios[:2] != [1.0, 1.0] or \
            any(r < 1 or not r.is_integer() for r in ratios[2:]):
        raise n.error(f"scales {ratios} of input {list(x.shape)}: only whole-number upscaling of the axes after "
                      "N and C is supported (scales [1, 1, 2, 2], ...)")
    return n.b.upsample_nearest(x, [int(r) for r in ratios[2:]])


OPS = {"Resize": _resize, "Upsample": _upsample}
