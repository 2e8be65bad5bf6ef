"""MLIR types as C, numpy and ctypes types, and the static facts of memref types.

The scalar facts come from the one core table (``loom.core.scalars``), so the
emitter, the argument checker and the result converter never disagree about a type.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    UnrankedMemRefType,
)
from xdsl.ir import Attribute

from loom.core.scalars import SCALARS, Scalar, scalar_of_xdsl
from loom.errors import LoomError


@dataclass(frozen=True)
class ScalarType:
    """A scalar type as the C backend names it: a view over one core scalar.

    The facts (C type, unsigned twin, bits, numpy dtype, ctypes type) live in
    ``loom.core.scalars``; this keeps the backend's short attribute names.
    """

    core: Scalar

    mlir = property(lambda self: self.core.mlir)  # "i32", "index", "f32"...
    ctype = property(lambda self: self.core.ctype)  # signed C type used for values of this type
    utype = property(lambda self: self.core.utype)  # unsigned twin used for wrapping / unsigned ops
    bits = property(lambda self: self.core.bits)
    is_float = property(lambda self: self.core.is_float)
    is_bool = property(lambda self: self.core.is_bool)
    np_dtype = property(lambda self: self.core.dtype)
    ct = property(lambda self: self.core.ctypes_type)  # ctypes type

    @property
    def suffix(self) -> str:
        """Short name used in generated helper and struct names."""
        return self.mlir


# The types the C backend emits. Integers are signless here (an unsigned or
# signed integer type is its signless twin), bf16 is not a C type of its own.
_SCALARS = {name: ScalarType(SCALARS[name]) for name in ("i1", "i8", "i16", "i32", "i64", "index", "f32", "f64", "f16")}


def scalar_type(ty: Attribute, where: str = "") -> ScalarType:
    """The ScalarType for an MLIR scalar type, or a LoomError naming it."""
    try:
        found = _SCALARS.get(scalar_of_xdsl(ty, signless=True).mlir)
    except LoomError:
        found = None
    if found is None:
        raise LoomError(f"unsupported type '{ty}' in C backend", where=where or None)
    return found


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


def memref_info(ty: Attribute, where: str = "", types=None) -> MemRefInfo:
    """``types``: the element-type resolver (default ``scalar_type``; the HLS backend passes its own)."""
    types = types or scalar_type
    if isinstance(ty, UnrankedMemRefType):
        return MemRefInfo(types(ty.element_type, where), (), (), None, False, unranked=True)
    if not isinstance(ty, MemRefType):
        raise LoomError(f"expected a memref type, got '{ty}'", where=where or None)
    elem = types(ty.get_element_type(), where)
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
