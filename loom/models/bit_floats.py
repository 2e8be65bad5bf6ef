"""Narrow float formats without a C type: bfloat16 and the float8 formats (ml_dtypes' dtypes, which onnx uses).

A model holds them as their bits (an int16 / int8 buffer in C) and computes in float32: ``decode`` and ``encode``
build the conversions from the bits as integer and float32 operations, so the C needs no bfloat16 / float8 type.
``FORMATS`` describes each format; ``encode_now`` is the same conversion of constants in numpy (import-time folds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

try:
    import ml_dtypes
except ImportError:  # (installed with onnx: without it no model holds these formats)
    ml_dtypes = None


@dataclass(frozen=True)
class BitFloat:
    """A sign bit, ``exponent`` bits of bias ``bias`` and ``mantissa`` bits. ``kind``: "ieee" (the top exponent is
    inf / NaN: bfloat16, float8_e5m2), "fn" (no inf, only all ones is NaN: float8_e4m3fn) or "fnuz" (no inf and no
    negative zero: its bits, 0x80, are the one NaN; float8_e4m3fnuz, float8_e5m2fnuz)."""

    name: str
    exponent: int
    mantissa: int
    bias: int
    kind: str

    @property
    def bits(self) -> int:
        return 1 + self.exponent + self.mantissa

    @property
    def largest(self) -> int:
        """The bits of the largest finite value."""
        top = (1 << self.exponent) - (2 if self.kind == "ieee" else 1)
        return top << self.mantissa | ((1 << self.mantissa) - (2 if self.kind == "fn" else 1))

    @property
    def max(self) -> float:
        fraction = self.largest & ((1 << self.mantissa) - 1)
        return float((1 + fraction / (1 << self.mantissa)) * 2.0 ** ((self.largest >> self.mantissa) - self.bias))

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def nan(self) -> int:
        """The bits of the (positive, quiet) NaN ml_dtypes gives."""
        if self.kind == "fnuz":
            return 1 << (self.bits - 1)
        if self.kind == "fn":
            return (1 << (self.bits - 1)) - 1
        return ((1 << self.exponent) - 1) << self.mantissa | 1 << (self.mantissa - 1)


FORMATS: dict[np.dtype, BitFloat] = {}
if ml_dtypes is not None:
    FORMATS = {np.dtype(ml_dtypes.bfloat16): BitFloat("bfloat16", 8, 7, 127, "ieee"),
               np.dtype(ml_dtypes.float8_e4m3fn): BitFloat("float8_e4m3fn", 4, 3, 7, "fn"),
               np.dtype(ml_dtypes.float8_e5m2): BitFloat("float8_e5m2", 5, 2, 15, "ieee"),
               np.dtype(ml_dtypes.float8_e4m3fnuz): BitFloat("float8_e4m3fnuz", 4, 3, 8, "fnuz"),
               np.dtype(ml_dtypes.float8_e5m2fnuz): BitFloat("float8_e5m2fnuz", 5, 2, 16, "fnuz")}


def bits_dtype(dtype: np.dtype) -> np.dtype:
    """The signed integer dtype of the format's width (its C buffer's elements)."""
    return np.dtype(np.int16 if FORMATS[dtype].bits == 16 else np.int8)


def encode_now(values: np.ndarray, dtype: np.dtype, saturate: bool) -> np.ndarray:
    """Constants converted as ``encode`` converts them: ml_dtypes' rounding (to nearest even), values past the
    largest finite one (inf included) giving it where ``saturate`` (ONNX Cast's default for float8)."""
    values = np.asarray(values, np.float32)
    if saturate:
        top = FORMATS[dtype].max
        values = np.where(np.isnan(values), values, np.clip(values, -top, top))
    return values.astype(dtype)
