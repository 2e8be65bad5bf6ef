"""What may travel on a channel of a given element type, checked at every push.

Integers must lie in the channel type's range (``ui8`` 0..255, signless and signed
two's complement): an item pushed from Python outside it is refused, naming the node,
channel, value and type; items the graph's own IR arithmetic computes wrap, as MLIR's
integer ops do. ``index`` is 64-bit; ``i1`` takes bools (and 1/0). Floats are normalised to
Python floats holding a value of the channel's type (an ``f32`` item is rounded to f32; a
finite value beyond its range is refused from Python, an infinity from the IR),
memrefs must be numpy arrays of the element dtype and the static dims. A wrong item
is a ``LoomError`` naming the node and the channel.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
)
from xdsl.ir import Attribute

from loom.errors import LoomError

_FLOAT_DTYPES = {16: np.float16, 32: np.float32, 64: np.float64}


def numpy_dtype(elem: Attribute) -> np.dtype:
    if isinstance(elem, IntegerType):
        w = elem.width.data
        if w == 1:
            return np.dtype(np.bool_)
        if w not in (8, 16, 32, 64):
            raise LoomError(f"no numpy dtype for {elem}")
        unsigned = elem.signedness.data == Signedness.UNSIGNED
        return np.dtype(f"{'u' if unsigned else ''}int{w}")
    if isinstance(elem, IndexType):
        return np.dtype(np.int64)
    if isinstance(elem, AnyFloat):
        return np.dtype(_FLOAT_DTYPES[elem.bitwidth])
    raise LoomError(f"no numpy dtype for {elem}")


def zeros_for(elem: Attribute, where: str) -> np.ndarray:
    """A fresh zero item of a static memref type (outputs of kernels and accelerators)."""
    if not isinstance(elem, MemRefType) or any(d < 0 for d in elem.get_shape()):
        raise LoomError(f"cannot allocate an output item of type {elem}: a static memref type is needed", where=where)
    return np.zeros(elem.get_shape(), numpy_dtype(elem.element_type))


def _is_int(elem: Attribute) -> bool:
    return isinstance(elem, IndexType) or isinstance(elem, IntegerType) and elem.width.data > 1


def int_range(elem: Attribute) -> tuple[int, int]:
    """The integers a channel of type ``elem`` holds: ``ui8`` 0..255, signless and signed two's complement,
    ``index`` as i64 (what the C backend stores it in)."""
    if isinstance(elem, IndexType):
        return -(1 << 63), (1 << 63) - 1
    bits = elem.width.data
    if elem.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def wrap_int(value: int, elem: Attribute) -> int:
    """``value`` modulo the width of ``elem``, in its range: what MLIR's integer arithmetic computes (the
    graph's own IR ops are evaluated on unbounded Python ints, so their results are wrapped at the push)."""
    lo, hi = int_range(elem)
    return (int(value) - lo) % (hi - lo + 1) + lo


def ir_value(value, elem: Attribute):
    """A value the graph's IR computed (on Python ints and doubles), as its type holds it: integers wrapped,
    f32/f16 rounded (an overflow is an infinity, as the hardware's arithmetic gives)."""
    if _is_int(elem) and isinstance(value, int) and not isinstance(value, bool):
        return wrap_int(value, elem)
    if isinstance(elem, AnyFloat) and elem.bitwidth < 64 and isinstance(value, float):
        with np.errstate(over="ignore"):
            return float(_FLOAT_DTYPES[elem.bitwidth](value))
    return value


def item_checker(elem: Attribute, where: str, wrap: bool = False):
    """A function item -> normalised item that raises LoomError on a wrong item. An integer outside the
    channel type's range is refused (a Python node's ``300`` into ``i8`` is a bug, not a value), unless
    ``wrap``: values of the graph's IR arithmetic, modular by definition."""
    if _is_int(elem):
        lo, hi = int_range(elem)

        def check_int(item):
            if isinstance(item, np.ndarray) and item.ndim == 0:
                item = item[()]
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
                raise LoomError(f"expected an integer item ({elem}), got {type(item).__name__} {item!r:.60}",
                                where=where)
            v = int(item)
            if lo <= v <= hi:
                return v
            if wrap:
                return wrap_int(v, elem)
            raise LoomError(f"integer {v} does not fit {elem} ({lo}..{hi}); convert it explicitly (e.g. "
                            f"v % {hi - lo + 1} to wrap, or min(max(v, {lo}), {hi}) to saturate)", where=where)

        return check_int
    if isinstance(elem, IntegerType) and elem.width.data == 1:
        def check_bool(item):
            if isinstance(item, np.ndarray) and item.ndim == 0:
                item = item[()]
            if isinstance(item, (bool, np.bool_)) or isinstance(item, (int, np.integer)) and item in (0, 1):
                return bool(item)
            raise LoomError(f"expected a bool item (i1: True/False, 1/0), got {type(item).__name__} {item!r:.60}",
                            where=where)

        return check_bool
    if isinstance(elem, AnyFloat):
        narrow = _FLOAT_DTYPES[elem.bitwidth] if elem.bitwidth < 64 else None
        if narrow is not None:  # values from here on round to infinity: max + half an ulp of it
            info = np.finfo(narrow)
            limit = float(info.max) + 2.0 ** (info.maxexp - 2 - info.nmant)

        def check_float(item):
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, float, np.integer, np.floating)):
                raise LoomError(f"expected a float item ({elem}), got {type(item).__name__} {item!r:.60}",
                                where=where)
            v = float(item)
            if narrow is None:
                return v
            # an f32 channel carries f32 values: rounded as a store would, but a finite value beyond the
            # type's range is refused rather than turned into an infinity
            if abs(v) >= limit and math.isfinite(v):
                raise LoomError(f"float {v!r} is beyond the range of {elem} (largest {float(info.max)!r})",
                                where=where)
            return float(narrow(v))

        return check_float
    if isinstance(elem, MemRefType):
        try:
            dtype = numpy_dtype(elem.element_type)
        except LoomError as e:
            raise LoomError(f"{e.message}: items of {elem} cannot be numpy arrays", where=where) from None
        shape = elem.get_shape()

        static = tuple(shape) if all(d >= 0 for d in shape) else None

        def check_array(item):
            # fast path (the common case: an array of exactly the channel's type; builtin dtypes are singletons)
            if type(item) is np.ndarray and item.dtype is dtype and item.shape == static:
                return item
            if not isinstance(item, np.ndarray):
                raise LoomError(f"expected a numpy array for {elem}, got {type(item).__name__}", where=where)
            if item.dtype != dtype:
                raise LoomError(f"expected dtype {dtype} for {elem}, got {item.dtype}", where=where)
            if item.ndim != len(shape) or any(d >= 0 and d != n for d, n in zip(shape, item.shape)):
                raise LoomError(f"expected shape {tuple('?' if d < 0 else d for d in shape)} for {elem}, "
                                f"got {item.shape}", where=where)
            return item

        return check_array
    return None  # other types travel unchecked


def batch_checker(elem: Attribute, where: str):
    """Like ``item_checker`` for a whole batch (``Port.push_many``): a sequence -> list of checked items.

    A 1-D numpy array whose dtype already is the channel's (``int32`` for ``i32``, ``uint32`` for
    ``ui32``) holds only normalised values, so it converts without a per-item check: this is what
    lets a C node move millions of scalar items per second.
    """
    check = item_checker(elem, where)
    exact = None  # an array of this dtype holds only values of the channel's type (index: int64, i1: bool)
    if isinstance(elem, IntegerType | IndexType):
        try:
            exact = numpy_dtype(elem)
        except LoomError:
            exact = None
    floating = _FLOAT_DTYPES[elem.bitwidth] if isinstance(elem, AnyFloat) else None
    block = None  # a memref channel: an array whose first axis counts the items is checked once
    if isinstance(elem, MemRefType) and all(d >= 0 for d in elem.get_shape()):
        block = (numpy_dtype(elem.element_type), tuple(elem.get_shape()))

    def check_batch(items) -> list:
        if isinstance(items, np.ndarray) and items.ndim == 1:
            if exact is not None and items.dtype == exact:
                return items.tolist()
            if floating and items.dtype.kind in "fiu":
                with np.errstate(over="ignore"):
                    rounded = items.astype(floating, copy=False)
                if not np.isinf(rounded).any():  # else item by item: the first out of range is refused
                    return rounded.astype(np.float64, copy=False).tolist()
        if block is not None and isinstance(items, np.ndarray) and items.dtype == block[0] \
                and items.shape[1:] == block[1]:
            return list(items)  # views of the rows: the producer hands the whole array over
        if check is None:
            return list(items)
        return [check(item) for item in items]

    return check_batch


def as_result(value, elem: Attribute):
    """A value handed back to Python callers: integers of unsigned types as non-negative ints."""
    if _is_int(elem) and isinstance(value, int) and not isinstance(value, bool):
        return wrap_int(value, elem)
    return value
