"""Narrow float formats without a C type: bfloat16 and the float8 formats (ml_dtypes' dtypes, which onnx uses).

A model holds them as their bits (an int16 / int8 buffer in C) and computes in float32: ``decode`` and ``encode``
build the conversions from the bits as integer and float32 operations, so the C needs no bfloat16 / float8 type.
``FORMATS`` describes each format (a ``numformats.FloatFormat``, loom's one description of custom floats);
``encode_now`` is the same conversion of constants in numpy (import-time folds).
"""

from __future__ import annotations

import numpy as np

from loom.core.numformats import FloatFormat

try:
    import ml_dtypes
except ImportError:  # (installed with onnx: without it no model holds these formats)
    ml_dtypes = None


# each format as loom's custom floats describe it (``loom.core.numformats``: the default biases are these dtypes')
FORMATS: dict[np.dtype, FloatFormat] = {}
if ml_dtypes is not None:
    FORMATS = {np.dtype(ml_dtypes.bfloat16): FloatFormat(8, 7),
               np.dtype(ml_dtypes.float8_e4m3fn): FloatFormat(4, 3, special="fn"),
               np.dtype(ml_dtypes.float8_e5m2): FloatFormat(5, 2),
               np.dtype(ml_dtypes.float8_e4m3fnuz): FloatFormat(4, 3, special="fnuz"),
               np.dtype(ml_dtypes.float8_e5m2fnuz): FloatFormat(5, 2, special="fnuz")}


def bits_dtype(dtype: np.dtype) -> np.dtype:
    """The signed integer dtype of the format's width (its C buffer's elements)."""
    return np.dtype(np.int16 if FORMATS[dtype].width == 16 else np.int8)


def encode_now(values: np.ndarray, dtype: np.dtype, saturate: bool) -> np.ndarray:
    """Constants converted as ``encode`` converts them: ml_dtypes' rounding (to nearest even), values past the
    largest finite one (inf included) giving it where ``saturate`` (ONNX Cast's default for float8)."""
    values = np.asarray(values, np.float32)
    if saturate:
        fmt = FORMATS[dtype]
        top = fmt.decode(fmt.max_magnitude)
        values = np.where(np.isnan(values), values, np.clip(values, -top, top))
    return values.astype(dtype)
