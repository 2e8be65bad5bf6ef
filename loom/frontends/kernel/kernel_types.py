"""Annotation objects of the kernel language: scalar types, ``MemRef[...]`` and ``Dim``.

These are plain Python objects the user writes in annotations and casts
(``MemRef[(M, 4), F32]``, ``F64(x)``).  The frontend never evaluates
annotations with Python: it reads them from the AST (see ``signature.py``),
so undeclared dim names and ``from __future__ import annotations`` both work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute

from loom.core.scalars import SCALARS, Scalar, scalar_of_xdsl
from loom.errors import LoomError


class ScalarType:
    """A scalar element type of the kernel language (``F32``, ``I32``, ``Index``...).

    A user-facing name over one entry of the core table (``loom.core.scalars``),
    which holds the facts (bits, dtype, kind). Calling it inside a kernel is a
    cast (``F64(x)``); calling it in plain Python returns the matching numpy
    scalar, so helpers stay usable outside.
    """

    def __init__(self, name: str, core: Scalar):
        self.name = name
        self.core = core
        # unsigned types live in signless iN (arith ops take no other): their ops pick the unsigned variants
        self.xdsl: Attribute = IntegerType(core.bits) if core.kind == "uint" else core.to_xdsl()

    @property
    def dtype(self) -> np.dtype:
        return self.core.dtype

    @property
    def kind(self) -> str:  # "float" | "int" | "index" | "bool"
        return self.core.kind

    @property
    def width(self) -> int:
        return self.core.bits

    @property
    def is_float(self) -> bool:
        return self.core.is_float

    @property
    def is_int_like(self) -> bool:
        return self.core.is_int_like

    def __call__(self, value):
        return self.dtype.type(value)

    def __repr__(self) -> str:
        return self.name


F32 = ScalarType("F32", SCALARS["f32"])
F64 = ScalarType("F64", SCALARS["f64"])
I1 = ScalarType("I1", SCALARS["i1"])
Bool = I1
I8 = ScalarType("I8", SCALARS["i8"])
I16 = ScalarType("I16", SCALARS["i16"])
I32 = ScalarType("I32", SCALARS["i32"])
I64 = ScalarType("I64", SCALARS["i64"])
Index = ScalarType("Index", SCALARS["index"])
U8 = ScalarType("U8", SCALARS["ui8"])
U16 = ScalarType("U16", SCALARS["ui16"])
U32 = ScalarType("U32", SCALARS["ui32"])
U64 = ScalarType("U64", SCALARS["ui64"])

SCALAR_TYPES = (F32, F64, I1, I8, I16, I32, I64, Index)  # reachable from an xDSL type (signless: no U*)
UNSIGNED_TYPES = (U8, U16, U32, U64)
_BY_CORE = {t.core: t for t in SCALAR_TYPES}


def scalar_of(attr: Attribute) -> ScalarType:
    """The ScalarType of an xDSL element type (error for anything else)."""
    try:
        found = _BY_CORE.get(scalar_of_xdsl(attr, signless=True))
    except LoomError:
        found = None
    if found is None:
        raise LoomError(f"unsupported element type {attr} (expected one of F32, F64, I1, I8, I16, I32, I64, Index)")
    return found


def scalar_of_numpy(value) -> ScalarType | None:
    """The ScalarType of a numpy scalar (``np.float32(1)`` -> F32), else None."""
    if isinstance(value, np.generic):
        for t in (F32, F64, I1, I8, I16, I32, I64, *UNSIGNED_TYPES):
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
