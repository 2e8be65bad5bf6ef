"""Scalar types of the pipeline language and their numpy realisation.

Type rules (Halide's, made strict so mistakes surface early):
- Integer arithmetic wraps around modulo 2**bits (u8, u16, u32, i16, i32).
- Both operands of a binary operator must have the same type. A Python int
  literal takes the type of the other operand and must be representable in it;
  a Python float literal needs a float operand (f32 or bfloat16).
- Integer division rounds toward negative infinity and x / 0 == 0; x % y is
  Euclidean (never negative) and x % 0 == 0.
- ``>>`` on signed types is arithmetic. Comparisons produce ``bool``.
- ``abs`` of a signed integer returns the unsigned type of the same width.
- bfloat16 values are held as float32 whose low 16 bits are zero; every
  bfloat16 operation is computed in float32 and rounded to nearest even.
- Casts between integer types wrap; float -> integer truncates toward zero.
Variables (``Var``, ``RVar``) are i32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Type:
    name: str
    kind: str  # "uint" | "int" | "float" | "bfloat" | "bool"
    bits: int

    @property
    def is_int(self) -> bool:
        return self.kind in ("uint", "int")

    @property
    def is_float(self) -> bool:
        return self.kind in ("float", "bfloat")

    @property
    def is_signed(self) -> bool:
        return self.kind == "int"

    @property
    def dtype(self) -> np.dtype:
        return _DTYPES[self.name]

    @property
    def min_value(self):
        if self.kind == "uint" or self.kind == "bool":
            return 0
        if self.kind == "int":
            return -(1 << (self.bits - 1))
        return -float("inf")

    @property
    def max_value(self):
        if self.kind == "bool":
            return 1
        if self.kind == "uint":
            return (1 << self.bits) - 1
        if self.kind == "int":
            return (1 << (self.bits - 1)) - 1
        return float("inf")

    def can_represent(self, value) -> bool:
        if self.is_int or self.kind == "bool":
            return isinstance(value, (int, np.integer)) and self.min_value <= value <= self.max_value
        return True

    def __repr__(self) -> str:
        return self.name


UInt8 = Type("u8", "uint", 8)
UInt16 = Type("u16", "uint", 16)
UInt32 = Type("u32", "uint", 32)
Int16 = Type("i16", "int", 16)
Int32 = Type("i32", "int", 32)
Float32 = Type("f32", "float", 32)
BFloat16 = Type("bf16", "bfloat", 16)
Bool = Type("bool", "bool", 1)

ALL_TYPES = (UInt8, UInt16, UInt32, Int16, Int32, Float32, BFloat16, Bool)

_DTYPES = {
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "f32": np.dtype(np.float32),
    "bf16": np.dtype(np.float32),  # storage of bfloat16 values, see round_to_bf16
    "bool": np.dtype(np.bool_),
}


def type_of_dtype(dtype) -> Type:
    dtype = np.dtype(dtype)
    for t in (UInt8, UInt16, UInt32, Int16, Int32, Float32, Bool):
        if t.dtype == dtype:
            return t
    raise KeyError(dtype)


def round_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 -> nearest bfloat16 (ties to even), returned as float32."""
    f = np.asarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    nan = np.isnan(f)
    rounded = np.where(nan, (bits | 0x00400000) & 0xFFFF0000, rounded)
    return rounded.astype(np.uint32).view(np.float32)


def convert(values: np.ndarray, src: Type, dst: Type) -> np.ndarray:
    """Cast an array of type ``src`` to type ``dst`` with the language's rules."""
    v = np.asarray(values)
    if dst == src:
        return v.astype(dst.dtype, copy=False)
    if dst.kind == "bool":
        return v != 0
    if dst.is_int:
        if src.is_float:
            with np.errstate(invalid="ignore", over="ignore"):
                v = np.trunc(v.astype(np.float64))
                v = np.where(np.isfinite(v), v, 0)
                v = np.clip(v, -(2.0**63), 2.0**63 - 1).astype(np.int64)
        else:
            v = v.astype(np.int64)
        return v.astype(dst.dtype)  # two's complement wrap
    if dst.kind == "float":
        return v.astype(np.float32)
    # bfloat16
    return round_to_bf16(v.astype(np.float32))
