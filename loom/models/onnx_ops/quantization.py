"""Linear quantization: QuantizeLinear / DequantizeLinear (per tensor or per axis), DynamicQuantizeLinear, the
integer products MatMulInteger / ConvInteger (int32 results) and QLinearMatMul / QLinearConv (int32 products
requantized), as onnx's reference computes them: quantizing rounds half to even after dividing by the scale, then
adds the zero point in int32 and saturates; requantizing multiplies the int32 product by the float32 scales' ratio
in float64 (numpy's int32 x float32), rounds and saturates."""

from __future__ import annotations

import numpy as np

from loom.models.graph import F32, F64, I8, I16, I32, U8, U16, Tensor
from loom.models.onnx_ops.convolution import convolve
from loom.models.onnx_ops.node import Node

# the integer types a quantized tensor may have, with the range a result saturates to
_RANGES = {U8: (0, 255), I8: (-128, 127), U16: (0, 65535), I16: (-32768, 32767)}


def _quantized_dtype(n: Node, k: int, default) -> np.dtype:
    """The dtype of input k as the model gives it (before any widening), or ``default`` when it is omitted."""
    v = n.inputs[k] if k < len(n.inputs) else None
    dtype = np.dtype(default) if v is None else np.dtype(v.dtype)
    if dtype not in _RANGES:
        raise n.error(f"input {k} is {dtype}; quantized tensors are {', '.join(map(str, _RANGES))} here")
    return dtype


def _along(n: Node, k: int, shape: tuple[int, ...], axis: int, what: str, block: int = 0) -> Tensor | None:
    """Input k (a scale or zero point) broadcast to ``shape``: one value as a one-element tensor; one per index of
    ``axis`` as a view along that axis; with a ``block`` size, one per block of ``block`` indices of ``axis`` (the
    last block shorter), the other axes ``shape``'s, each value repeated over its block. None when omitted."""
    t = n.optional(k)
    if t is None:
        return None
    rank = len(shape)
    if t.size == 1 and not block:
        return n.b.view(t, (1,) * max(rank, 1))
    axis = n.b.axis(n.op, axis, rank)
    if block:
        blocks = tuple(-(-d // block) if a == axis else d for a, d in enumerate(shape))
        if t.shape != blocks:
            raise n.error(f"the {what} (input {k}) has shape {list(t.shape)}: blocks of {block} along axis {axis} "
                          f"of the input {list(shape)} need {list(blocks)}")
        return n.b.take(t, np.arange(shape[axis]) // block, axis, n.op)
    if len(t.shape) != 1 or t.shape[0] != shape[axis]:
        raise n.error(f"the {what} (input {k}) has shape {list(t.shape)}: one value, or one per index of axis "
                      f"{axis} ({shape[axis]}) of the input {list(shape)}")
    return n.b.view(t, tuple(shape[axis] if a == axis else 1 for a in range(rank)))


def _scale_and_zero(n: Node, shape: tuple[int, ...]) -> tuple[Tensor, Tensor | None]:
    """(Quantize|Dequantize)Linear's scale and zero point (inputs 1, 2) along ``axis``, blocked by ``block_size``."""
    axis, block = int(n.attrs.get("axis", 1)), int(n.attrs.get("block_size", 0))
    if block < 0:
        raise n.error(f"block_size={block} must be positive (or 0: per tensor or per axis)")
    return _along(n, 1, shape, axis, "scale", block), _along(n, 2, shape, axis, "zero point", block)


def _saturated(n: Node, values: Tensor, dtype: np.dtype) -> Tensor:
    """Integral values (float or int32) clamped to ``dtype``'s range and stored as ``dtype``."""
    lo, hi = _RANGES[dtype]
    return n.b.cast(n.b.clamp(values, float(lo), float(hi)), dtype, n.op)


def _quantize_linear(n: Node):
    x = n.tensor(0)
    if x.dtype != F32:
        raise n.error(f"the input is {x.dtype}; QuantizeLinear takes float32 (or float16) here")
    given = n.attrs.get("output_dtype")
    default = U8
    if given:
        from onnx import helper

        default = np.dtype(helper.tensor_dtype_to_np_dtype(int(given)))
    dtype = _quantized_dtype(n, 2, default)
    scale, zero = _scale_and_zero(n, x.shape)
    b = n.b
    # rint(x / scale) as int32 (out of range: int32's MIN, as numpy on x86), plus the zero point in int32
    q = b.cast(b.unary("round", b.binary("div", x, scale)), I32, n.op)
    if zero is not None:
        q = b.binary("add", q, zero)
    return _saturated(n, q, dtype)


def _dequantize_linear(n: Node):
    x = n.tensor(0)
    if x.dtype != I32:
        raise n.error(f"the input is {x.dtype}; DequantizeLinear takes int8, uint8, int16, uint16 or int32 here")
    scale, zero = _scale_and_zero(n, x.shape)
    b = n.b
    y = b.cast(x, F32, n.op)
    if zero is not None:
        y = b.binary("sub", y, b.cast(zero, F32, n.op))
    return b.binary("mul", y, scale)


def _dynamic_quantize_linear(n: Node):
    """uint8 over the range of x widened to include 0: scale (max - min) / 255, zero point rint(-min / scale)
    saturated; the scale and zero point are one-element outputs."""
    x = n.tensor(0)
    if x.dtype != F32:
        raise n.error(f"the input is {x.dtype}; DynamicQuantizeLinear takes float32 here")
    b, axes = n.b, list(range(len(x.shape)))
    top = b.binary("max", b.reduce("max", x, axes, True), 0.0)
    bottom = b.binary("min", b.reduce("min", x, axes, True), 0.0)
    span = b.binary("sub", top, bottom)
    span = b.select(b.compare("eq", span, 0.0), 1.0, span)
    scale = b.binary("div", span, 255.0)
    zero = b.unary("round", b.clamp(b.binary("sub", 0.0, b.binary("div", bottom, scale)), 0.0, 255.0))
    y = b.clamp(b.binary("add", b.unary("round", b.binary("div", x, scale)), zero), 0.0, 255.0)
    return b.cast(y, U8, n.op), b.view(scale, ()), b.view(b.cast(zero, U8, n.op), ())


def _centred(n: Node, k: int, zero_k: int, axis_of: int | None) -> Tensor:
    """Input k (int8 / uint8, computed in int32) less its zero point (input ``zero_k``): one value, or one per index
    of axis ``axis_of`` of input k."""
    _quantized_dtype(n, k, U8)
    t = n.tensor(k)
    zero = _along(n, zero_k, t.shape, axis_of, "zero point") if axis_of is not None else n.optional(zero_k)
    if zero is not None and axis_of is None and zero.size != 1:
        raise n.error(f"the zero point (input {zero_k}) has shape {list(zero.shape)}: one value is supported")
    return t if zero is None else n.b.binary("sub", t, zero)


def _matmul_integer(n: Node):
    a, bm = n.tensor(0), n.tensor(1)  # (rank checks first: the zero points' axes are the matrices' rows, columns)
    if len(a.shape) < 2 or len(bm.shape) < 2:
        raise n.error(f"needs matrices (rank 2 or more), got {list(a.shape)} and {list(bm.shape)}")
    return n.b.matmul(_centred(n, 0, 2, -2), _centred(n, 1, 3, -1))


def _conv_integer(n: Node):
    return convolve(n, _centred(n, 0, 2, None), _centred(n, 1, 3, 0), None)


def _requantized(n: Node, product: Tensor, scale: Tensor, y_scale: Tensor, y_zero: Tensor | None,
                 dtype: np.dtype) -> Tensor:
    """rint(product * (scale / y_scale) + y_zero) saturated to ``dtype``; the ratio in float32, the rest in float64."""
    b = n.b
    ratio = b.cast(b.binary("div", scale, y_scale), F64, n.op)
    y = b.binary("mul", b.cast(product, F64, n.op), ratio)
    if y_zero is not None:
        y = b.binary("add", y, b.cast(y_zero, F64, n.op))
    return _saturated(n, b.unary("round", y), dtype)


def _qlinear_matmul(n: Node):
    a, bm = n.tensor(0), n.tensor(3)
    if len(a.shape) < 2 or len(bm.shape) < 2:
        raise n.error(f"needs matrices (rank 2 or more), got {list(a.shape)} and {list(bm.shape)}")
    product = n.b.matmul(_centred(n, 0, 2, -2), _centred(n, 3, 5, -1))
    scale = n.b.binary("mul", _along(n, 1, a.shape, -2, "a_scale"), _along(n, 4, bm.shape, -1, "b_scale"))
    dtype = _quantized_dtype(n, 7, n.inputs[0].dtype)
    return _requantized(n, product, scale, _along(n, 6, product.shape, -1, "y_scale"), n.optional(7), dtype)


def _qlinear_conv(n: Node):
    x, w = _centred(n, 0, 2, None), _centred(n, 3, 5, 0)
    bias = n.optional(8)
    if bias is not None and bias.dtype != I32:
        raise n.error(f"the bias (input 8) is {bias.dtype}; QLinearConv's bias is int32")
    product = convolve(n, x, w, bias)
    w_scale = n.optional(4)
    if w_scale.size != 1:  # one scale per output channel
        w_scale = _along(n, 4, product.shape, 1, "w_scale")
    scale = n.b.binary("mul", n.tensor(1), w_scale)
    dtype = _quantized_dtype(n, 7, n.inputs[0].dtype)
    return _requantized(n, product, scale, n.tensor(6), n.optional(7), dtype)


OPS = {
    "QuantizeLinear": _quantize_linear, "DequantizeLinear": _dequantize_linear,
    "DynamicQuantizeLinear": _dynamic_quantize_linear, "MatMulInteger": _matmul_integer,
    "ConvInteger": _conv_integer, "QLinearMatMul": _qlinear_matmul, "QLinearConv": _qlinear_conv,
}
