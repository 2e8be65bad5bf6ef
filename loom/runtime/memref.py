"""MLIR memref descriptors for numpy arrays, for calling the C runtime.

``memref_descriptor(array)`` returns a ctypes structure with MLIR's layout
``{T *allocated; T *aligned; intptr_t offset; intptr_t sizes[R]; intptr_t strides[R]}``
describing any (strided, possibly negative-stride) numpy view of 4-byte
elements; the structure keeps the array alive.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

import numpy as np

from loom.errors import LoomError

SUPPORTED_DTYPES = (np.dtype(np.int32), np.dtype(np.float32))


@lru_cache(maxsize=None)
def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a rank-``rank`` memref descriptor."""
    return type(
        f"MemRefDescriptor{rank}D",
        (ctypes.Structure,),
        {
            "_fields_": [
                ("allocated", ctypes.c_void_p),
                ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_ssize_t),
                ("sizes", ctypes.c_ssize_t * rank),
                ("strides", ctypes.c_ssize_t * rank),
            ]
        },
    )


def memref_descriptor(array: np.ndarray) -> ctypes.Structure:
    """Describe ``array`` (int32 or float32, rank >= 1) without copying it."""
    if not isinstance(array, np.ndarray) or array.dtype not in SUPPORTED_DTYPES:
        raise LoomError(
            f"memref_descriptor: expected an int32 or float32 numpy array, got "
            f"{getattr(array, 'dtype', type(array).__name__)}"
        )
    if array.ndim < 1:
        raise LoomError("memref_descriptor: expected an array of rank >= 1, got a scalar")
    item = array.itemsize
    if any(s % item for s in array.strides):
        raise LoomError(f"memref_descriptor: strides {array.strides} are not multiples of {item} bytes")
    desc = descriptor_type(array.ndim)()
    base = array.ctypes.data  # address of element (0, ..., 0), also for negative strides
    desc.allocated = desc.aligned = base
    desc.offset = 0
    for d in range(array.ndim):
        desc.sizes[d] = array.shape[d]
        desc.strides[d] = array.strides[d] // item
    desc._keepalive = array  # the C side only holds a raw pointer
    return desc


def descriptor_pointer(desc: ctypes.Structure) -> ctypes.c_void_p:
    return ctypes.cast(ctypes.pointer(desc), ctypes.c_void_p)
