"""PyTorch's quantization ops in an exported program: ``quantized_decomposed``'s quantize / dequantize per tensor
and per channel (what PT2E quantization leaves in the graph) and the fake quantization of quantization-aware
training (``torch.fake_quantize_per_{tensor,channel}_affine``, exported as their ``_cachemask`` forms).

Each computes as PyTorch's CPU kernels do: quantizing multiplies by the reciprocal scale (1 / scale rounded to the
scale's precision), rounds half to even, adds the zero point and clamps to [quant_min, quant_max]; dequantizing
subtracts the zero point and multiplies by the scale.
"""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError
from loom.models.graph import F32, F64, I8, I16, I32, U8, GraphBuilder, Tensor


def _storage(dtype) -> np.dtype:
    import torch

    table = {torch.int8: I8, torch.uint8: U8, torch.int16: I16, torch.int32: I32}
    if dtype not in table:
        raise LoomError(f"quantized dtype {dtype} is not supported (int8, uint8, int16, int32)")
    return table[dtype]


def _channels(b: GraphBuilder, x: Tensor, values: Tensor, axis: int) -> Tensor:
    """Per-channel parameters (one per index of ``axis``) as a view broadcasting along that axis of ``x``."""
    axis = b.axis("quantize_per_channel", axis, len(x.shape))
    if values.shape != (x.shape[axis],):
        raise b.error("quantize_per_channel", f"{len(values.shape)}-d parameters {list(values.shape)} for axis "
                                              f"{axis} of {list(x.shape)}: one per channel expected")
    return b.view(values, tuple(x.shape[axis] if k == axis else 1 for k in range(len(x.shape))))


def _reciprocal(b: GraphBuilder, scale: Tensor | float, single: bool) -> Tensor | float:
    """1 / scale: ``single`` rounds the scale to float32 before dividing (the fake-quantize kernels' 1.0f / scale),
    else divides in the scale's precision (decomposed quantize's 1.0 / scale) and rounds the result to float32."""
    if isinstance(scale, Tensor):
        if not b.is_constant(scale):
            return b.binary("div", 1.0, scale)
        values = b.value(scale)
        inverse = np.float32(1) / values.astype(np.float32) if single else (1.0 / values).astype(values.dtype)
        return b.constant(f"{scale.name}_inverse", inverse)
    return float(np.float32(1) / np.float32(scale)) if single else float(np.float32(1.0 / float(scale)))


def _quantized(b: GraphBuilder, x: Tensor, inverse, zero, lo: int, hi: int) -> Tensor:
    """clamp(round(x * inverse) + zero, lo, hi), as floats of x's precision (or the per-channel scales')."""
    if isinstance(inverse, Tensor) and inverse.dtype == F64 and x.dtype == F32:
        x = b.cast(x, F64, "quantize")  # (a float32 input times float64 scales: float64, as PyTorch promotes)
    if isinstance(zero, Tensor):
        zero = b.cast(zero, x.dtype, "quantize")
    y = b.binary("add", b.unary("round", b.binary("mul", x, inverse)), zero)
    return b.clamp(y, float(lo), float(hi))


def _float(dtype) -> np.dtype:
    """A dequantized result's dtype: ``out_dtype``, float32 when not given."""
    import torch

    if dtype not in (None, torch.float32, torch.float64):
        raise LoomError(f"dequantizing to {dtype} is not supported (float32, float64)")
    return F64 if dtype == torch.float64 else F32


def quantize_per_tensor(b, x, scale, zero_point, quant_min, quant_max, dtype):
    q = _quantized(b, x, _reciprocal(b, scale, False), float(zero_point), quant_min, quant_max)
    return b.cast(q, _storage(dtype), "quantize_per_tensor")


def dequantize_per_tensor(b, q, scale, zero_point, quant_min, quant_max, dtype, out_dtype=None):
    dtype = _float(out_dtype)
    y = b.binary("sub", b.cast(q, dtype, "dequantize_per_tensor"), float(zero_point))
    return b.binary("mul", y, float(scale if dtype == F64 else np.float32(scale)))


def quantize_per_channel(b, x, scales, zero_points, axis, quant_min, quant_max, dtype):
    inverse = _channels(b, x, _reciprocal(b, scales, False), axis)
    q = _quantized(b, x, inverse, _channels(b, x, zero_points, axis), quant_min, quant_max)
    return b.cast(q, _storage(dtype), "quantize_per_channel")


def dequantize_per_channel(b, q, scales, zero_points, axis, quant_min, quant_max, dtype, out_dtype=None):
    scales = _channels(b, q, scales, axis)
    y = b.cast(q, scales.dtype, "dequantize_per_channel")
    if zero_points is not None:
        y = b.binary("sub", y, b.cast(_channels(b, q, zero_points, axis), scales.dtype, "dequantize_per_channel"))
    return b.cast(b.binary("mul", y, scales), _float(out_dtype), "dequantize_per_channel")  # (float64 scales too)


def fake_quantize_per_tensor(b, x, scale, zero_point, quant_min, quant_max):
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        raise b.error("fake_quantize_per_tensor_affine", "scale and zero point must be numbers")
    q = _quantized(b, x, _reciprocal(b, scale, True), float(zero_point), quant_min, quant_max)
    return b.binary("mul", b.binary("sub", q, float(zero_point)), float(np.float32(scale)))


def fake_quantize_per_channel(b, x, scales, zero_points, axis, quant_min, quant_max):
    inverse = _channels(b, x, _reciprocal(b, scales, True), axis)
    zero = b.cast(_channels(b, x, zero_points, axis), F32, "fake_quantize_per_channel_affine")
    q = _quantized(b, x, inverse, zero, quant_min, quant_max)
    return b.binary("mul", b.binary("sub", q, zero), b.cast(_channels(b, x, scales, axis), F32, "fake_quantize"))
