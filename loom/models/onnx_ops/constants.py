"""Constants and conversions: Constant, ConstantOfShape, Shape, Size, Range (folded at import), Cast, CastLike,
Identity, Dropout (inference)."""

from __future__ import annotations

import math

import numpy as np

from loom.models.bit_floats import FORMATS, encode_now
from loom.models.onnx_ops.node import Node, read_array


def _shape(n: Node):
    v = n.inputs[0]
    shape = np.array(v.shape, dtype=np.int64)
    start, end = n.attrs.get("start", 0), n.attrs.get("end", None)
    return shape[start:end]


def _constant(n: Node):
    for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
        if key in n.attrs:
            v = n.attrs[key]
            if key == "value":
                return read_array(n.b, v)
            return np.asarray(v, dtype=np.float32 if "float" in key else np.int64)
    raise n.error(f"only tensor/float/int values are supported, got {sorted(n.attrs)}")


def _constant_of_shape(n: Node):
    shape = n.const(0, "shape")
    value = read_array(n.b, n.attrs["value"]) if "value" in n.attrs else np.zeros(1, np.float32)
    return np.full([int(d) for d in shape], value.reshape(-1)[0], dtype=value.dtype)


def _cast(n: Node):
    from onnx import helper

    return _convert(n, np.dtype(helper.tensor_dtype_to_np_dtype(int(n.attrs["to"]))))


def _cast_like(n: Node):
    return _convert(n, n.inputs[1].dtype)


def _convert(n: Node, to: np.dtype):
    """Input 0 as ``to``; a float8 result saturates (values past its largest finite one give it) unless the node's
    ``saturate`` is 0, as ONNX's Cast says."""
    saturate = to in FORMATS and FORMATS[to].width == 8 and bool(n.attrs.get("saturate", 1))
    x = n.inputs[0]
    if isinstance(x, np.ndarray):
        return encode_now(x, to, saturate) if to in FORMATS and x.dtype != to else x.astype(to)
    return n.b.cast(x, to, n.op, saturate)


def _range(n: Node):
    # (its length is the output's shape: each must be known at import, or a model input's example value)
    start, limit, delta = (n.const(k, what).reshape(()) for k, what in enumerate(("start", "limit", "delta")))
    return np.arange(start, limit, delta, dtype=start.dtype)


def _eye_like(n: Node):
    """Ones on diagonal k of a matrix of the input's shape (a constant: the shape is static)."""
    from onnx import helper

    x = n.inputs[0]
    if len(x.shape) != 2:
        raise n.error(f"needs a 2-d input, got {list(x.shape)}")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(int(n.attrs["dtype"]))) if "dtype" in n.attrs else x.dtype
    return np.eye(*x.shape, k=int(n.attrs.get("k", 0)), dtype=dtype)


def _identity(n: Node):
    return n.inputs[0]


def _dropout(n: Node):
    """Inference: the input as it is, and an all-true mask. Training mode (input 2 true, from opset 12) drops
    elements at random unless the ratio is 0: refused, never computed as the identity."""
    training = n.const(2, "training_mode") if n.opset >= 12 else None
    if training is not None and bool(training.reshape(-1)[0]):
        ratio = n.const(1, "ratio")
        if ratio is None or float(ratio.reshape(-1)[0]) != 0.0:
            raise n.error("training_mode=true drops elements at random; loom compiles inference (training_mode "
                          "false, or a ratio of 0)")
    x = n.inputs[0]
    return (x, np.ones(x.shape, np.bool_))


OPS = {
    "Constant": _constant, "ConstantOfShape": _constant_of_shape, "Shape": _shape, "Cast": _cast,
    "CastLike": _cast_like, "Range": _range, "Identity": _identity, "Dropout": _dropout,
    "EyeLike": _eye_like,
    "Size": lambda n: np.array(math.prod(n.inputs[0].shape), np.int64),
}
