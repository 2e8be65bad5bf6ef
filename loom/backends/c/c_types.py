"""MLIR types as C, numpy and ctypes types, and the static facts of memref types.

One table keeps the three views of a scalar type in step, so the emitter, the
argument checker and the result converter never disagree about a type.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    UnrankedMemRefType,
)
from xdsl.ir import Attribute

from loom.errors import LoomError


@dataclass(frozen=True)
class ScalarType:
    """A scalar type as seen by C (``ctype``), numpy and ctypes."""

    mlir: str  # "i32", "index", "f32"...
    ctype: str  # signed C type used for values of this type
    utype: str  # unsigned twin (integers) used for wrapping / unsigned ops
    bits: int
    is_float: bool
    np_dtype: np.dtype
    ct: type  # ctypes type

    @property
    def is_bool(self) -> bool:
        return self.mlir == "i1"

    @property
    def suffix(self) -> str:
        """Short name used in generated helper and struct names."""
        return self.mlir


_SCALARS = {
    "i1": ScalarType("i1", "bool", "bool", 1, False, np.dtype(np.bool_), ctypes.c_bool),
    "i8": ScalarType("i8", "int8_t", "uint8_t", 8, False, np.dtype(np.int8), ctypes.c_int8),
    "i16": ScalarType("i16", "int16_t", "uint16_t", 16, False, np.dtype(np.int16), ctypes.c_int16),
    "i32": ScalarType("i32", "int32_t", "uint32_t", 32, False, np.dtype(np.int32), ctypes.c_int32),
    "i64": ScalarType("i64", "int64_t", "uint64_t", 64, False, np.dtype(np.int64), ctypes.c_int64),
    "index": ScalarType(
        "index", "intptr_t", "uintptr_t", 8 * ctypes.sizeof(ctypes.c_void_p), False,
        np.dtype(np.intp), ctypes.c_ssize_t,
    ),
    "f32": ScalarType("f32", "float", "float", 32, True, np.dtype(np.float32), ctypes.c_float),
    "f64": ScalarType("f64", "double", "double", 64, True, np.dtype(np.float64), ctypes.c_double),
    "f16": ScalarType("f16", "_Float16", "_Float16", 16, True, np.dtype(np.float16), ctypes.c_uint16),
}


def scalar_type(ty: Attribute, where: str = "") -> ScalarType:
    """The ScalarType for an MLIR scalar type, or a LoomError naming it."""
    if isinstance(ty, IndexType):
        return _SCALARS["index"]
    if isinstance(ty, IntegerType) and f"i{ty.width.data}" in _SCALARS:
        return _SCALARS[f"i{ty.width.data}"]
    if isinstance(ty, Float32Type):
        return _SCALARS["f32"]
    if isinstance(ty, Float64Type):
        return _SCALARS["f64"]
    if isinstance(ty, Float16Type):
        return _SCALARS["f16"]
    raise LoomError(f"unsupported type '{ty}' in C backend", where=where or None)


def is_memref(ty: Attribute) -> bool:
    return isinstance(ty, (MemRefType, UnrankedMemRefType))


@dataclass(frozen=True)
class MemRefInfo:
    """What the type of a memref says statically. ``None`` marks a dynamic value."""

    elem: ScalarType
    shape: tuple[int | None, ...]
    strides: tuple[int | None, ...]
    offset: int | None
    identity: bool  # no layout attribute: row-major, offset 0
    unranked: bool = False  # memref<*xT>: only as a parameter of external functions (see emitter)

    @property
    def rank(self) -> int:
        return len(self.shape)


def memref_info(ty: Attribute, where: str = "") -> MemRefInfo:
    if isinstance(ty, UnrankedMemRefType):
        return MemRefInfo(scalar_type(ty.element_type, where), (), (), None, False, unranked=True)
    if not isinstance(ty, MemRefType):
        raise LoomError(f"expected a memref type, got '{ty}'", where=where or None)
    elem = scalar_type(ty.get_element_type(), where)
    shape = tuple(None if d == DYNAMIC_INDEX or d < 0 else d for d in ty.get_shape())
    layout = ty.layout
    if isinstance(layout, NoneAttr):
        strides: list[int | None] = []
        running: int | None = 1
        for dim in reversed(shape):
            strides.append(running)
            running = None if (running is None or dim is None) else running * dim
        return MemRefInfo(elem, shape, tuple(reversed(strides)), 0, True)
    if isinstance(layout, StridedLayoutAttr):
        st = tuple(None if s is None else int(s) for s in layout.get_strides())
        off = layout.get_offset()
        return MemRefInfo(elem, shape, st, None if off is None else int(off), False)
    raise LoomError(f"unsupported memref layout '{layout}' in C backend", where=where or None)


def descriptor_struct_name(elem: ScalarType, rank: int) -> str:
    return f"loomd_memref_{elem.suffix}_{rank}d"


def descriptor_struct_c(elem: ScalarType, rank: int) -> str:
    """The MLIR descriptor layout as a C struct (rank 0 has no size/stride arrays)."""
    name = descriptor_struct_name(elem, rank)
    arrays = f" intptr_t sizes[{rank}]; intptr_t strides[{rank}];" if rank else ""
    return (
        f"typedef struct {{ {elem.ctype} *allocated; {elem.ctype} *aligned; intptr_t offset;"
        f"{arrays} }} {name};"
    )


_DESCRIPTOR_CLASSES: dict[tuple[str, int], type] = {}


def descriptor_ctypes(elem: ScalarType, rank: int) -> type:
    """A ctypes Structure with the same layout as ``descriptor_struct_c``."""
    key = (elem.mlir, rank)
    cls = _DESCRIPTOR_CLASSES.get(key)
    if cls is None:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_ssize_t)]
        if rank:
            fields += [("sizes", ctypes.c_ssize_t * rank), ("strides", ctypes.c_ssize_t * rank)]
        cls = type(f"MemRef_{elem.mlir}_{rank}d", (ctypes.Structure,), {"_fields_": fields})
        _DESCRIPTOR_CLASSES[key] = cls
    return cls
