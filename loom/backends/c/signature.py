"""What the runtime needs to know about each emitted C function.

Calling convention (also documented in ``__init__``): memref parameters are
pointers to MLIR-layout descriptors, scalars are passed by value; one result is
the C return value, several results are written through out-pointers appended
after the parameters, in order.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.backends.c.c_types import MemRefInfo, ScalarType


@dataclass(frozen=True)
class ParamSpec:
    index: int
    memref: MemRefInfo | None  # set for memref parameters
    scalar: ScalarType | None  # set for scalar parameters
    may_write: bool = False  # the function may store through this memref


@dataclass(frozen=True)
class FuncSignature:
    mlir_name: str
    c_name: str
    params: tuple[ParamSpec, ...]
    results: tuple[ScalarType, ...]
    public: bool
