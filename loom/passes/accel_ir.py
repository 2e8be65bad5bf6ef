"""Shared vocabulary of the accelerator passes: attribute names and IR helpers.

The accel passes talk to each other through discardable attributes (``accel.*``),
so every stage prints as plain MLIR and verifies in upstream ``mlir-opt``:

on the matched ``linalg.generic`` (``convert-linalg-to-accel``)
    ``accel.accelerator``, ``accel.flow``, ``accel.description`` (file path)
    ``accel.dims``         accelerator dim name of each op loop
    ``accel.tile_sizes``   accelerator tile per op loop (0: "full", no tile loop)
    ``accel.cache_tiles``  outer (CPU cache) tile per op loop (0: no cache loop)
    ``accel.permutation``  tile-loop order, outer first, as op loop indices
after ``accel-tile``: the tile loops carry ``accel.loop = "<dim>"`` (accelerator
tile loops) or ``accel.cache_loop = "<dim>"``, the generic on the tiles carries
``accel.tiled``.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from loom.accel.description import AcceleratorDescription, load_description
from loom.errors import LoomError

ACCELERATOR = "accel.accelerator"
FLOW = "accel.flow"
DESCRIPTION = "accel.description"
DIMS = "accel.dims"
TILE_SIZES = "accel.tile_sizes"
CACHE_TILES = "accel.cache_tiles"
PERMUTATION = "accel.permutation"
LOOP = "accel.loop"
CACHE_LOOP = "accel.cache_loop"
TILED = "accel.tiled"
PADDED_SHAPE = "accel.padded_shape"  # on accel.send / accel.recv: shape of the full tile (-1: as is)
DYNAMIC = DYNAMIC_INDEX


@lru_cache(maxsize=32)
def _load(path: str):
    return load_description(path)


def accelerator_of(op: Operation) -> AcceleratorDescription:
    """The accelerator an annotated op names (description loaded once per path)."""
    path = op.attributes[DESCRIPTION].data  # type: ignore[attr-defined]
    name = op.attributes[ACCELERATOR].data  # type: ignore[attr-defined]
    return _load(path).accelerator(name)


def i64_array(values) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def ints(attr: Attribute) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())  # type: ignore[attr-defined]


def strings(values) -> ArrayAttr:
    return ArrayAttr([StringAttr(v) for v in values])


def string_list(attr: Attribute) -> tuple[str, ...]:
    return tuple(a.data for a in attr.data)  # type: ignore[attr-defined]


class Emitter:
    """Appends ops before a fixed op (or at the end of a block) and returns their results."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block, self.before = block, before

    def op(self, new: Operation) -> Operation:
        if self.before is None:
            self.block.add_op(new)
        else:
            self.block.insert_op_before(new, self.before)
        return new

    def __call__(self, new: Operation) -> SSAValue:
        return self.op(new).results[0]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def i32(self, value: int) -> SSAValue:
        if value >= 2**31:
            value -= 2**32  # a 32-bit word: same bits
        return self(arith.ConstantOp(IntegerAttr(value, i32)))

    def dim(self, value: SSAValue, k: int) -> SSAValue:
        return self(memref.DimOp(value, self.index(k)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MuliOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MinSIOp(a, b))


def padded_shape(op: Operation) -> list[int]:
    """The ``accel.padded_shape`` of a send / recv (empty when absent: every dim as is)."""
    return list(ints(op.attributes[PADDED_SHAPE])) if PADDED_SHAPE in op.attributes else []


def padded_words(em: Emitter, tile: SSAValue, padded: list[int]) -> SSAValue:
    """The words of ``tile`` padded to ``padded`` (one entry per dim; -1: the tile's own size), as i32."""
    total: SSAValue | None = None
    for k, p in enumerate(padded):
        size = em.index(p) if p > 0 else em.dim(tile, k)
        total = size if total is None else em.mul(total, size)
    return em(arith.IndexCastOp(total if total is not None else em.index(1), i32))


def subview(em: Emitter, source: SSAValue, offsets: list[SSAValue], sizes: list[SSAValue]) -> SSAValue:
    rank = len(offsets)
    result = memref.SubviewOp.infer_result_type(source.type, offsets, sizes, [1] * rank)  # type: ignore[arg-type]
    return em(memref.SubviewOp.get(source, offsets, sizes, [1] * rank, result))


def operand_extent_source(maps, dim: int) -> tuple[int, int] | None:
    """(operand, subscript) whose subscript is exactly loop ``dim``, to read its extent with memref.dim."""
    from loom.accel.matching import linear_form

    for n, amap in enumerate(maps):
        for r, expr in enumerate(amap.results):
            form = linear_form(expr)
            if form is not None and form[0] == {dim: 1} and form[1] == 0:
                return n, r
    return None


def loop_extents(em: Emitter, operands: list[SSAValue], maps) -> list[SSAValue]:
    """The extent of every loop of a linalg op, read from its operands' sizes."""
    extents = []
    for d in range(maps[0].num_dims):
        src = operand_extent_source(maps, d)
        if src is None:
            raise LoomError(f"cannot tell the extent of loop d{d}: no operand is indexed by d{d} alone")
        extents.append(em.dim(operands[src[0]], src[1]))
    return extents
