"""The Python kernel frontend (nelli-style): ``@kernel`` functions -> func/scf/affine/memref/arith IR.

The ``@kernel`` decorator and the callable ``Kernel`` live one layer up, in ``loom.jit``
(they compile and run); this package only reads Python and builds IR.

The kernel's source is read with ``inspect`` and its AST interpreted (never
executed), see ``tracer.py`` for the scoping rules and ``values.py`` for the
typing rules.
"""

from loom.frontends.kernel.intrinsics import alloc, alloca, cast, parallel
from loom.frontends.kernel.signature import KernelSignature, ParamSig
from loom.frontends.kernel.kernel_types import (
    F32,
    F64,
    I1,
    I8,
    I16,
    U8,
    U16,
    U32,
    U64,
    I32,
    I64,
    Bool,
    Dim,
    Index,
    MemRef,
    ScalarType,
    dim,
)
from loom.frontends.kernel import math  # noqa: E402  (loom.math namespace)

__all__ = [
    "KernelSignature", "ParamSig", "MemRef", "Dim", "dim", "ScalarType",
    "F32", "F64", "I1", "Bool", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "Index",
    "parallel", "alloc", "alloca", "cast", "math",
]
