"""The one table of scalar types.

Every view of a scalar type in loom (the kernel language's ``F32``/``I32``, the
pipeline language's ``UInt8``, the C backend's C and ctypes types, the oracle's
element dtypes) reads its facts here, so widths, dtypes, C names and value
ranges cannot disagree.

``kind`` is one of ``int`` (signless or signed integer; arithmetic reads it as
signed), ``uint``, ``float``, ``bool`` (``i1``) and ``index``.

bfloat16 has no numpy dtype without ml_dtypes, which loom does not depend on:
a ``bf16`` value is held in a float32 whose low 16 bits are zero
(``stored_as == "f32"``: dtype, C type and ctypes type are float32's; ``bits``
is the 16 bits of the value). Code that needs a real 2-byte bf16 buffer (the
oracle) does not offer bf16.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from loom.errors import LoomError

KINDS = ("int", "uint", "float", "bool", "index")


@dataclass(frozen=True)
class Scalar:
    mlir: str  # MLIR spelling: "i32", "ui8", "f32", "bf16", "index", "i1"
    kind: str  # see KINDS
    bits: int  # bits of the value (index: the target's pointer width)
    dtype: np.dtype  # numpy dtype of the in-memory representation
    ctype: str  # C type holding a value
    utype: str  # unsigned C twin (integers: for wrapping arithmetic), else ctype
    ctypes_type: type  # ctypes type of a scalar argument / result
    stored_as: str | None = None  # MLIR spelling of the storage type when it is wider (bf16 -> "f32")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_int_like(self) -> bool:
        """Integer, index or bool: values are exact integers."""
        return self.kind in ("int", "uint", "index", "bool")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("int", "index")

    @property
    def min_value(self):
        if self.kind in ("uint", "bool"):
            return 0
        if self.kind in ("int", "index"):
            return -(1 << (self.bits - 1))
        return -float("inf")

    @property
    def max_value(self):
        if self.kind == "bool":
            return 1
        if self.kind == "uint":
            return (1 << self.bits) - 1
        if self.kind in ("int", "index"):
            return (1 << (self.bits - 1)) - 1
        return float("inf")

    @property
    def literal_range(self) -> tuple[int, int]:
        """Integer literals a value of this type may be written with.

        Signless ``iN`` accepts both readings of its bits (``-2**(N-1)`` .. ``2**N - 1``),
        as MLIR does for ``arith.constant``; the others their own range.
        """
        if not self.is_int_like:
            raise LoomError(f"{self.mlir} is not an integer type; it has no integer literal range")
        if self.kind == "int" and self.mlir.startswith("i"):
            return self.min_value, (1 << self.bits) - 1
        return self.min_value, self.max_value

    def can_represent(self, value) -> bool:
        """Whether ``value`` (a Python/numpy number) is a value of this type without change."""
        if self.is_int_like:
            if isinstance(value, (bool, np.bool_)):
                return self.kind == "bool" or int(value) <= self.max_value
            return isinstance(value, (int, np.integer)) and self.min_value <= value <= self.max_value
        return isinstance(value, (int, float, np.integer, np.floating))

    def to_xdsl(self):
        """The xDSL builtin type of this scalar."""
        from xdsl.dialects import builtin

        if self.kind == "index":
            return builtin.IndexType()
        if self.is_float:
            return {"f16": builtin.Float16Type, "bf16": builtin.BFloat16Type, "f32": builtin.Float32Type,
                    "f64": builtin.Float64Type}[self.mlir]()
        signedness = {"s": builtin.Signedness.SIGNED, "u": builtin.Signedness.UNSIGNED}.get(self.mlir[0])
        return builtin.IntegerType(self.bits, signedness or builtin.Signedness.SIGNLESS)

    def __repr__(self) -> str:
        return self.mlir


_POINTER_BITS = 8 * ctypes.sizeof(ctypes.c_void_p)


def _table() -> dict[str, Scalar]:
    rows = [
        Scalar("i1", "bool", 1, np.dtype(np.bool_), "bool", "bool", ctypes.c_bool),
        Scalar("index", "index", _POINTER_BITS, np.dtype(np.intp), "intptr_t", "uintptr_t", ctypes.c_ssize_t),
        Scalar("f16", "float", 16, np.dtype(np.float16), "_Float16", "_Float16", ctypes.c_uint16),
        Scalar("bf16", "float", 16, np.dtype(np.float32), "float", "float", ctypes.c_float, stored_as="f32"),
        Scalar("f32", "float", 32, np.dtype(np.float32), "float", "float", ctypes.c_float),
        Scalar("f64", "float", 64, np.dtype(np.float64), "double", "double", ctypes.c_double),
    ]
    for bits in (8, 16, 32, 64):
        signed, unsigned = f"int{bits}", f"uint{bits}"
        s_ct, u_ct = getattr(ctypes, f"c_int{bits}"), getattr(ctypes, f"c_uint{bits}")
        rows += [
            Scalar(f"i{bits}", "int", bits, np.dtype(signed), f"{signed}_t", f"{unsigned}_t", s_ct),
            Scalar(f"si{bits}", "int", bits, np.dtype(signed), f"{signed}_t", f"{unsigned}_t", s_ct),
            Scalar(f"ui{bits}", "uint", bits, np.dtype(unsigned), f"{unsigned}_t", f"{unsigned}_t", u_ct),
        ]
    return {s.mlir: s for s in rows}


SCALARS: dict[str, Scalar] = _table()
"""Every scalar type loom knows, by MLIR spelling."""


def scalar(mlir: str, where: str | None = None) -> Scalar:
    """The scalar of an MLIR spelling (``"f32"``), or a LoomError listing the known ones."""
    found = SCALARS.get(mlir)
    if found is None:
        raise LoomError(f"unknown scalar type {mlir!r} (known: {', '.join(SCALARS)})", where=where)
    return found


def scalar_of_xdsl(attr, where: str | None = None, *, signless: bool = False) -> Scalar:
    """The scalar of an xDSL builtin type; ``signless=True`` reads ``si8``/``ui8`` as ``i8``."""
    from xdsl.dialects import builtin

    if isinstance(attr, builtin.IntegerType):
        prefix = {builtin.Signedness.SIGNED: "si", builtin.Signedness.UNSIGNED: "ui"}.get(
            attr.signedness.data, "i")
        width = attr.width.data
        name = f"i{width}" if signless or width == 1 else f"{prefix}{width}"
        if name in SCALARS:
            return SCALARS[name]
    elif isinstance(attr, builtin.IndexType):
        return SCALARS["index"]
    else:
        for name, cls in (("f16", builtin.Float16Type), ("bf16", builtin.BFloat16Type),
                          ("f32", builtin.Float32Type), ("f64", builtin.Float64Type)):
            if isinstance(attr, cls):
                return SCALARS[name]
    raise LoomError(f"unsupported scalar type '{attr}' (known: {', '.join(SCALARS)})", where=where)


def scalar_of_dtype(dtype, where: str | None = None) -> Scalar:
    """The scalar whose values a numpy dtype holds (signed ints as ``iN``, float32 as ``f32``)."""
    dtype = np.dtype(dtype)
    for name in ("i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "f32", "f64"):
        if SCALARS[name].dtype == dtype:
            return SCALARS[name]
    raise LoomError(f"numpy dtype {dtype} is not a loom scalar type", where=where)
