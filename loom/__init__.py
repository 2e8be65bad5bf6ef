"""loom: a Python-native compiler for custom hardware accelerators.

Front doors:
  * ``@loom.kernel``: Python functions -> MLIR (func/scf/affine/memref/arith/linalg)
  * ``loom.linalg``: linalg ops (matmul, conv, pooling, generic, einsum) usable inside kernels

Everything is imported lazily so that ``import loom`` (and the CLI) stays fast.
"""

from __future__ import annotations

import importlib

from loom.errors import LoomError

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "kernel": "loom.jit",
    "Kernel": "loom.jit",
    "compile_cpu": "loom.jit",
    "run_cpu": "loom.jit",
    "realize": "loom.jit",
    "MemRef": "loom.frontends.kernel",
    "Dim": "loom.frontends.kernel",
    "dim": "loom.frontends.kernel",
    "F32": "loom.frontends.kernel",
    "F64": "loom.frontends.kernel",
    "I1": "loom.frontends.kernel",
    "Bool": "loom.frontends.kernel",
    "I8": "loom.frontends.kernel",
    "I16": "loom.frontends.kernel",
    "U8": "loom.frontends.kernel",
    "U16": "loom.frontends.kernel",
    "U32": "loom.frontends.kernel",
    "U64": "loom.frontends.kernel",
    "I32": "loom.frontends.kernel",
    "I64": "loom.frontends.kernel",
    "Index": "loom.frontends.kernel",
    "parallel": "loom.frontends.kernel",
    "alloc": "loom.frontends.kernel",
    "alloca": "loom.frontends.kernel",
    "cast": "loom.frontends.kernel",
    "Pipeline": "loom.passes",
    "compile_in_format": "loom.jit.formats",
    "compile_base2": "loom.jit.formats",
}

_SUBMODULES = {"linalg": "loom.linalg", "math": "loom.math", "ekl": "loom.ekl"}

__all__ = ["LoomError", *_LAZY, *_SUBMODULES]


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = importlib.import_module(_SUBMODULES[name])
    elif name in _LAZY:
        module = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'loom' has no attribute {name!r}")
    globals()[name] = module
    return module
