"""Scalar types of the pipeline language and their numpy realisation.

Type rules (Halide's):
- Integer arithmetic wraps around modulo 2**bits (u8, u16, u32, u64, i8, i16, i32, i64).
- Operands of different types are cast to one (``expr.promoted``, Halide's
  match_types): a float beats an integer, the wider of one signedness wins, a
  signed with an unsigned integer gives the signed type of the wider width, a
  bool is a 1-bit unsigned integer. A shift takes its left operand's
  signedness at the wider width (``expr.shifted``). A Python int literal takes
  the type of the other operand and must be representable in it (0 and 1 beside
  a bool are bools) when it fits in i32; a larger one is an i64 constant that
  promotes as any operand (u8 + 2**40 is i64), one beyond i64 a float literal. A
  Python float literal is f32, then promoted (f64 * 0.1 multiplies by 0.1 rounded
  to f32), as in Halide's Python bindings.
  ``select`` branches keep one type. Every index is cast to i32.
- Integer division rounds toward negative infinity and x / 0 == 0; x % y is
  Euclidean (never negative) and x % 0 == 0.
- ``>>`` on signed types is arithmetic. Comparisons produce ``bool``.
- ``abs`` of a signed integer returns the unsigned type of the same width.
- bfloat16 values are held as float32 whose low 16 bits are zero; every
  bfloat16 operation is computed in float32 and rounded to nearest even.
- Casts between integer types wrap; float -> integer truncates toward zero.
- f64 and the 64-bit integers are CPU-path types: the streaming accelerator (a
  16-bit fabric) refuses them.
Variables (``Var``, ``RVar``) are i32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from loom.core.scalars import SCALARS, Scalar


@dataclass(frozen=True)
class Type:
    """A type of the pipeline language: a Halide-style name over one core scalar.

    The facts (bits, signedness, numpy dtype, range) live in ``loom.core.scalars``.
    """

    name: str
    core: Scalar

    @property
    def kind(self) -> str:  # "uint" | "int" | "float" | "bfloat" | "bool"
        return "bfloat" if self.core.mlir == "bf16" else self.core.kind

    @property
    def bits(self) -> int:
        return self.core.bits

    @property
    def is_int(self) -> bool:
        return self.core.kind in ("uint", "int")

    @property
    def is_float(self) -> bool:
        return self.core.is_float

    @property
    def is_signed(self) -> bool:
        return self.core.kind == "int"

    @property
    def dtype(self) -> np.dtype:
        return self.core.dtype  # bf16: float32 storage, see round_to_bf16

    @property
    def min_value(self):
        return self.core.min_value

    @property
    def max_value(self):
        return self.core.max_value

    def can_represent(self, value) -> bool:
        return self.core.can_represent(value) if self.core.is_int_like else True

    def __repr__(self) -> str:
        return self.name


UInt8 = Type("u8", SCALARS["ui8"])
UInt16 = Type("u16", SCALARS["ui16"])
UInt32 = Type("u32", SCALARS["ui32"])
UInt64 = Type("u64", SCALARS["ui64"])
Int8 = Type("i8", SCALARS["i8"])
Int16 = Type("i16", SCALARS["i16"])
Int32 = Type("i32", SCALARS["i32"])
Int64 = Type("i64", SCALARS["i64"])
Float32 = Type("f32", SCALARS["f32"])
Float64 = Type("f64", SCALARS["f64"])
BFloat16 = Type("bf16", SCALARS["bf16"])
Bool = Type("bool", SCALARS["i1"])

ALL_TYPES = (UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64, Float32, Float64, BFloat16, Bool)


def type_of_dtype(dtype) -> Type:
    dtype = np.dtype(dtype)
    for t in ALL_TYPES:
        if t != BFloat16 and t.dtype == dtype:  # bf16 has no dtype of its own (float32 storage)
            return t
    raise KeyError(dtype)


def integer_type(signed: bool, bits: int) -> Type | None:
    """The integer type of a signedness and width (None for a width the language lacks)."""
    for t in (Int8, Int16, Int32, Int64) if signed else (UInt8, UInt16, UInt32, UInt64):
        if t.bits == bits:
            return t
    return None


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
                f = np.trunc(v.astype(np.float64))
                f = np.where(np.isfinite(f), f, 0)
                v = np.clip(f, -(2.0**63), 2.0**63 - 1).astype(np.int64)  # beyond: x86's 0x8000... pattern
                if dst == UInt64:  # [2**63, 2**64) is in u64's range: exact
                    high = (f >= 2.0**63) & (f < 2.0**64)
                    v = np.where(high, np.where(high, f, 0).astype(np.uint64), v.view(np.uint64))
        else:
            v = v.astype(np.int64)
        return v.astype(dst.dtype)  # two's complement wrap
    if dst.kind == "float":  # one rounding, to nearest even (beyond f32's range: inf)
        with np.errstate(over="ignore"):
            return v.astype(dst.dtype)
    # bfloat16: through f32 (an f64 is rounded twice, as Halide does)
    return round_to_bf16(v.astype(np.float32))
