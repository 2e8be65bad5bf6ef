"""What the runtime needs to know about each emitted C function.

Shared dimensions: ``ParamSpec.dim_names`` comes from the function's ``loom.dims``
argument attributes (``loom.dialects.dims``); axes with the same name must agree
at call time, which ``runtime.CFunction`` checks before C runs.

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
    dim_names: tuple[str | None, ...] | None = None  # memrefs: name of each axis (``loom.dims``), None: unnamed
    name: str | None = None  # the argument's name in the IR (for messages)

    @property
    def label(self) -> str:
        return f"argument {self.index}" + (f" ({self.name})" if self.name else "")


@dataclass(frozen=True)
class FuncSignature:
    mlir_name: str
    c_name: str
    params: tuple[ParamSpec, ...]
    results: tuple[ScalarType, ...]
    public: bool
    # external functions only: one memref result, written through a descriptor pointer passed
    # first (MLIR's C-interface convention for memref results)
    memref_result: MemRefInfo | None = None

    @property
    def named_dims(self) -> dict[str, tuple[tuple[int, int], ...]]:
        """Dim name -> the (argument, axis) pairs it names: all of them must have one size at call time."""
        groups: dict[str, list[tuple[int, int]]] = {}
        for spec in self.params:
            for axis, name in enumerate(spec.dim_names or ()):
                if name is not None:
                    groups.setdefault(name, []).append((spec.index, axis))
        return {name: tuple(places) for name, places in groups.items()}
