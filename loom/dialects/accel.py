"""The ``accel`` dialect: host-side accelerator transactions (paper Fig. 9).

Ops stage data into the DMA input buffer and read it back from the output buffer.
Staging ops take the current word offset in the buffer (``i32``) and return the
offset after what they wrote, so several sends batch into one DMA transaction;
``flush_send`` starts that transaction and waits for it.

=====================  ==========================================================
op                     meaning
=====================  ==========================================================
``init_dma``           (dma_address, in_addr, in_size, out_addr, out_size : i32) set
                       up the engine and staging buffers; sizes in bytes; once per
                       application, paired with ``free_dma``
``free_dma``           release the engine and buffers
``send_literal``       (value, offset : i32) -> offset': one literal word
``send``               (tile : memref<i32|f32>, offset) -> offset': copy a (strided) tile
``send_dim``           (tile : memref, offset) {dim} -> offset': the size of ``dim``
``send_idx``           (index : index, offset) -> offset': one index as a word
``flush_send``         (length : i32) -> 0 : send ``length`` staged words, wait
``start_send``/``wait_send``   split form of ``flush_send`` (for overlap)
``start_recv``         (length : i32): receive ``length`` words into the output buffer
``wait_recv``          wait for the receive started by ``start_recv``
``recv``               (tile, offset) {mode} -> offset': copy words from the output
                       buffer at ``offset`` into the tile; ``mode`` = "accumulate"
                       (tile += words) or "replace" (tile = words). Runs after the
                       ``start_recv``/``wait_recv`` pair that brought the words in.
=====================  ==========================================================

Printed in generic form (``Printer(print_generic_format=True)``) a module using
these ops parses in upstream ``mlir-opt --allow-unregistered-dialect``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I32,
    I64,
    Float32Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

RECV_MODES = ("accumulate", "replace")


def _check_tile(op: Operation, value: SSAValue) -> None:
    """Tiles are memrefs of 32-bit words (i32 or f32), the unit the DMA moves."""
    ty = value.type
    if not isinstance(ty, MemRefType):
        raise VerifyException(f"{op.name}: expected a memref tile, got {ty}")
    elem = ty.element_type
    if not (isinstance(elem, Float32Type) or (isinstance(elem, IntegerType) and elem.width.data == 32)):
        raise VerifyException(f"{op.name}: tile elements must be i32 or f32 (32-bit words), got {elem}")


class _OffsetOp(IRDLOperation):
    """Common shape: consumes an offset (i32), produces the next offset (i32)."""

    def _build(self, operands: list[SSAValue | Operation], properties: dict[str, Attribute] | None = None):
        super().__init__(operands=operands, result_types=[i32], properties=properties or {})


@irdl_op_definition
class InitDmaOp(IRDLOperation):
    name = "accel.init_dma"
    dma_address = operand_def(I32)
    input_address = operand_def(I32)
    input_size = operand_def(I32)
    output_address = operand_def(I32)
    output_size = operand_def(I32)

    def __init__(self, dma_address, input_address, input_size, output_address, output_size):
        super().__init__(operands=[dma_address, input_address, input_size, output_address, output_size])


@irdl_op_definition
class FreeDmaOp(IRDLOperation):
    name = "accel.free_dma"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class SendLiteralOp(_OffsetOp):
    name = "accel.send_literal"
    value = operand_def(I32)
    offset = operand_def(I32)
    new_offset = result_def(I32)

    def __init__(self, value: SSAValue | Operation, offset: SSAValue | Operation):
        self._build([value, offset])


@irdl_op_definition
class SendOp(_OffsetOp):
    name = "accel.send"
    tile = operand_def(MemRefType)
    offset = operand_def(I32)
    new_offset = result_def(I32)

    def __init__(self, tile: SSAValue | Operation, offset: SSAValue | Operation):
        self._build([tile, offset])

    def verify_(self) -> None:
        _check_tile(self, self.tile)


@irdl_op_definition
class SendDimOp(_OffsetOp):
    name = "accel.send_dim"
    tile = operand_def(MemRefType)
    offset = operand_def(I32)
    new_offset = result_def(I32)
    dim = prop_def(IntegerAttr[I64])

    def __init__(self, tile: SSAValue | Operation, dim: int, offset: SSAValue | Operation):
        self._build([tile, offset], {"dim": IntegerAttr(dim, i64)})

    def verify_(self) -> None:
        _check_tile(self, self.tile)
        rank = len(self.tile.type.get_shape())
        d = self.dim.value.data
        if not 0 <= d < rank:
            raise VerifyException(f"accel.send_dim: dim {d} is out of range for a rank-{rank} tile (0..{rank - 1})")


@irdl_op_definition
class SendIdxOp(_OffsetOp):
    name = "accel.send_idx"
    index = operand_def(IndexType)
    offset = operand_def(I32)
    new_offset = result_def(I32)

    def __init__(self, index: SSAValue | Operation, offset: SSAValue | Operation):
        self._build([index, offset])


@irdl_op_definition
class RecvOp(_OffsetOp):
    name = "accel.recv"
    tile = operand_def(MemRefType)
    offset = operand_def(I32)
    new_offset = result_def(I32)
    mode = prop_def(StringAttr)

    def __init__(self, tile: SSAValue | Operation, offset: SSAValue | Operation, mode: str = "accumulate"):
        self._build([tile, offset], {"mode": StringAttr(mode)})

    def verify_(self) -> None:
        _check_tile(self, self.tile)
        if self.mode.data not in RECV_MODES:
            raise VerifyException(f"accel.recv: mode must be one of {', '.join(RECV_MODES)}, got {self.mode.data!r}")


@irdl_op_definition
class FlushSendOp(IRDLOperation):
    """Send the ``length`` staged words as one DMA transaction and wait; yields offset 0."""

    name = "accel.flush_send"
    length = operand_def(I32)
    new_offset = result_def(I32)

    def __init__(self, length: SSAValue | Operation):
        super().__init__(operands=[length], result_types=[i32])


@irdl_op_definition
class StartSendOp(IRDLOperation):
    name = "accel.start_send"
    length = operand_def(I32)

    def __init__(self, length: SSAValue | Operation):
        super().__init__(operands=[length])


@irdl_op_definition
class WaitSendOp(IRDLOperation):
    name = "accel.wait_send"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class StartRecvOp(IRDLOperation):
    name = "accel.start_recv"
    length = operand_def(I32)

    def __init__(self, length: SSAValue | Operation):
        super().__init__(operands=[length])


@irdl_op_definition
class WaitRecvOp(IRDLOperation):
    name = "accel.wait_recv"

    def __init__(self):
        super().__init__()


Accel = Dialect(
    "accel",
    [
        InitDmaOp,
        FreeDmaOp,
        SendLiteralOp,
        SendOp,
        SendDimOp,
        SendIdxOp,
        RecvOp,
        FlushSendOp,
        StartSendOp,
        WaitSendOp,
        StartRecvOp,
        WaitRecvOp,
    ],
    [],
)
