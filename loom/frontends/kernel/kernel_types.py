"""Annotation objects of the kernel language: scalar types, ``MemRef[...]`` and ``Dim``.

These are plain Python objects the user writes in annotations and casts
(``MemRef[(M, 4), F32]``, ``F64(x)``).  The frontend never evaluates
annotations with Python: it reads them from the AST (see ``signature.py``),
so undeclared dim names and ``from __future__ import annotations`` both work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from loom.errors import LoomError


class ScalarType:
    """A scalar element type (``F32``, ``I32``, ``Index``...).

    Calling it inside a kernel is a cast (``F64(x)``); calling it in plain
    Python returns the matching numpy scalar, so helpers stay usable outside.
    """

    def __init__(self, name: str, xdsl_type: Attribute, dtype, kind: str, width: int):
        self.name = name
        self.xdsl = xdsl_type
        self.dtype = np.dtype(dtype)
        self.kind = kind  # "float" | "int" | "index" | "bool"
        self.width = width

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int_like(self) -> bool:
        return self.kind in ("int", "index", "bool")

    def __call__(self, value):
        return self.dtype.type(value)

    def __repr__(self) -> str:
        return self.name


F32 = ScalarType("F32", f32, np.float32, "float", 32)
F64 = ScalarType("F64", f64, np.float64, "float", 64)
I1 = ScalarType("I1", i1, np.bool_, "bool", 1)
Bool = I1
I8 = ScalarType("I8", i8, np.int8, "int", 8)
I16 = ScalarType("I16", i16, np.int16, "int", 16)
I32 = ScalarType("I32", i32, np.int32, "int", 32)
I64 = ScalarType("I64", i64, np.int64, "int", 64)
Index = ScalarType("Index", IndexType(), np.int64, "index", 64)

SCALAR_TYPES = (F32, F64, I1, I8, I16, I32, I64, Index)


def scalar_of(attr: Attribute) -> ScalarType:
    """The ScalarType of an xDSL element type (error for anything else)."""
    if isinstance(attr, IndexType):
        return Index
    if isinstance(attr, Float32Type):
        return F32
    if isinstance(attr, Float64Type):
        return F64
    if isinstance(attr, IntegerType):
        for t in (I1, I8, I16, I32, I64):
            if t.width == attr.width.data:
                return t
    raise LoomError(f"unsupported element type {attr} (expected one of F32, F64, I1, I8, I16, I32, I64, Index)")


def scalar_of_numpy(value) -> ScalarType | None:
    """The ScalarType of a numpy scalar (``np.float32(1)`` -> F32), else None."""
    if isinstance(value, np.generic):
        for t in (F32, F64, I1, I8, I16, I32, I64):
            if value.dtype == t.dtype:
                return t
    return None


class Dim:
    """A named dynamic dimension: ``M = Dim("M")`` then ``MemRef[(M, 4), F32]``."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise LoomError(f"Dim name must be an identifier, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"Dim({self.name!r})"


def dim(name: str) -> Dim:
    """Declare a dynamic dimension symbol (same as ``Dim(name)``)."""
    return Dim(name)


@dataclass(frozen=True)
class MemRefSpec:
    """The value of ``MemRef[(dims...), T]``: dims are ints (static) or names (dynamic)."""

    dims: tuple  # of int | str
    element: ScalarType

    def __repr__(self) -> str:
        return f"MemRef[{self.dims}, {self.element}]"


class _MemRefFactory:
    """``MemRef[(4, "N"), F32]``.

    Python evaluates annotations when the ``def`` runs, so this never raises:
    the frontend re-reads annotations from the AST and reports bad ones with
    the kernel's file and line.
    """

    def __getitem__(self, item):
        dims, element = item if isinstance(item, tuple) and len(item) == 2 else ((), item)
        if not isinstance(dims, tuple):
            dims = (dims,)
        return MemRefSpec(tuple(d.name if isinstance(d, Dim) else d for d in dims), element)

    def __repr__(self) -> str:
        return "MemRef"


MemRef = _MemRefFactory()
