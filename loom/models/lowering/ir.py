"""Small IR helpers every layer's lowering shares: constants, buffers, affine maps, element-wise and reducing
``linalg.generic``s, copies into windows, comparisons and ``scf`` loop nests."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (Float16Type, FloatAttr, IndexType, IntegerAttr, IntegerType, MemRefType, f32, f64,
                                   i1, i8, i16, i32, i64)
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from loom import linalg
from loom.models.bit_floats import FORMATS
from loom.models.graph import BOOL, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64


# bool: one byte (C's bool, numpy's); unsigned integers are the signed type of their width, converted as unsigned
# (the runtime passes a uint8 array as int8, ...)
ELEMENT = {np.dtype(np.float32): f32, F64: f64, I64: i64, I32: i32, BOOL: i1, F16: Float16Type(), I8: i8, U8: i8,
            I16: i16, U16: i16, U32: i32, U64: i64,
            **{d: i16 if f.width == 16 else i8 for d, f in FORMATS.items()}}  # (bfloat16 / float8: their bits)


def memref_type(shape: Sequence[int], dtype) -> MemRefType:
    return MemRefType(ELEMENT[np.dtype(dtype)], list(shape))


def float_const(value: float, element=f32) -> SSAValue:
    return arith.ConstantOp(FloatAttr(float(value), element)).result


def const_like(x: SSAValue, value: float) -> SSAValue:
    """A constant of ``x``'s type: f32 or f64, or an integer (int32 layers: ``value`` is integral)."""
    if isinstance(x.type, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), x.type)).result
    return float_const(value, x.type)


def fill_for(buffer: SSAValue, value: float) -> float | int:
    """``value`` as ``linalg.fill`` takes it for the buffer's element type."""
    return int(value) if isinstance(buffer.type.element_type, IntegerType) else value


def index_const(value: int) -> SSAValue:
    return arith.ConstantOp.from_int_and_width(value, IndexType()).result


def dim_exprs(n: int) -> list[AffineExpr]:
    return [AffineDimExpr(i) for i in range(n)]


def identity_map(rank: int) -> AffineMap:
    return AffineMap(rank, 0, tuple(dim_exprs(rank)))


def broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> AffineMap:
    """numpy broadcasting as an indexing map: leading dims dropped, size-1 dims read at 0."""
    rank, lead = len(out_shape), len(out_shape) - len(in_shape)
    d = dim_exprs(rank)
    results = tuple(AffineConstantExpr(0) if size == 1 and out_shape[lead + k] != 1 else d[lead + k]
                    for k, size in enumerate(in_shape))
    return AffineMap(rank, 0, results)


def alloc(shape: Sequence[int], element=f32) -> SSAValue:
    return memref.AllocOp.get(element, shape=list(shape)).memref


def free(*buffers: SSAValue) -> None:
    for b in buffers:
        memref.DeallocOp.get(b)


def elementwise(ins: Sequence[SSAValue], out: SSAValue, body: Callable[..., SSAValue]) -> None:
    """out[...] = body(ins broadcast to out's shape...)."""
    out_shape = out.type.get_shape()
    maps = [broadcast_map(v.type.get_shape(), out_shape) for v in ins] + [identity_map(len(out_shape))]
    linalg.generic(list(ins), [out], maps, ["parallel"] * len(out_shape), lambda *a: body(*a[:-1]))


def reduce_into(x: SSAValue, acc: SSAValue, axes: Sequence[int], combine: Callable[..., SSAValue],
                 value: Callable[..., SSAValue] | None = None, extra: Sequence[SSAValue] = ()) -> None:
    """acc[kept dims] = combine(acc, value(x, *extra)) over ``axes`` of x; ``extra`` operands have
    acc's shape (statistics computed earlier)."""
    rank = len(x.type.get_shape())
    d = dim_exprs(rank)
    kept = tuple(d[k] for k in range(rank) if k not in axes)
    acc_map = AffineMap(rank, 0, kept)
    iterators = ["reduction" if k in axes else "parallel" for k in range(rank)]

    def body(*a):
        xv, rest, accv = a[0], a[1:-1], a[-1]
        return combine(accv, value(xv, *rest) if value else xv)

    linalg.generic([x, *extra], [acc], [identity_map(rank), *([acc_map] * len(extra)), acc_map], iterators, body)


# add, mul, sub, max and min also take int32 layers' values (wrapping integer ops)
def add(a, b):
    return (arith.AddiOp if isinstance(a.type, IntegerType) else arith.AddfOp)(a, b).result


def mul(a, b):
    return (arith.MuliOp if isinstance(a.type, IntegerType) else arith.MulfOp)(a, b).result


def sub(a, b):
    return (arith.SubiOp if isinstance(a.type, IntegerType) else arith.SubfOp)(a, b).result


def divide(a, b):
    return arith.DivfOp(a, b).result


def maximum(a, b):
    return (arith.MaxSIOp if isinstance(a.type, IntegerType) else arith.MaximumfOp)(a, b).result


def minimum(a, b):
    return (arith.MinSIOp if isinstance(a.type, IntegerType) else arith.MinimumfOp)(a, b).result


def pad_buffer(x: SSAValue, before: Sequence[int], after: Sequence[int], fill_value: float) -> SSAValue:
    """A new buffer: x with ``before``/``after`` elements of ``fill_value`` around its last two dims."""
    shape = list(x.type.get_shape())
    lead = len(shape) - 2
    padded = alloc([*shape[:lead], *(shape[lead + k] + before[k] + after[k] for k in range(2))],
                    x.type.element_type)
    linalg.fill(fill_for(padded, fill_value), padded)
    copy_at(x, padded, [0] * lead + list(before))
    return padded


def copy_at(x: SSAValue, dst: SSAValue, offsets: Sequence[int]) -> None:
    """dst[i + offsets] = x[i] over x's shape: a copy into a subview (an offset indexing map would not
    verify where the offset is 0 and the dims differ)."""
    rank = len(offsets)
    window = memref.SubviewOp.from_static_parameters(dst, dst.type, list(offsets), list(x.type.get_shape()),
                                                     [1] * rank).result
    linalg.generic([x], [window], [identity_map(rank)] * 2, ["parallel"] * rank, lambda v, _o: v)


_FLOAT_COMPARE = {"gt": "ogt", "lt": "olt", "ge": "oge", "le": "ole", "eq": "oeq", "ne": "une"}  # NaN: only != holds


_INT_COMPARE = {"gt": "sgt", "lt": "slt", "ge": "sge", "le": "sle", "eq": "eq", "ne": "ne"}


def compare(op: str, a: SSAValue, b: SSAValue) -> SSAValue:
    if isinstance(a.type, IntegerType):
        return arith.CmpiOp(a, b, _INT_COMPARE[op]).result
    return arith.CmpfOp(a, b, _FLOAT_COMPARE[op]).result


def constant_of(element, value: float) -> SSAValue:
    if isinstance(element, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), element)).result
    return float_const(value, element)


def kept_shape(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    return [d for k, d in enumerate(shape) if k not in axes]


def loop_nest(shape, step: Callable[[list[SSAValue]], object]) -> None:
    """``step(ivs)`` inside loops over every index of ``shape`` (outermost first)."""
    def nest(depth: int, ivs: list[SSAValue]) -> None:
        if depth == len(shape):
            step(ivs)
            return
        for_range(index_const(shape[depth]), lambda iv: nest(depth + 1, [*ivs, iv]))

    nest(0, [])


def for_range(upper: SSAValue, body: Callable[[SSAValue], object]) -> None:
    block = Block(arg_types=[IndexType()])
    with ImplicitBuilder(block):
        body(block.args[0])
        scf.YieldOp()
    scf.ForOp(index_const(0), upper, index_const(1), [], block)
