"""``convert-accel-to-runtime``: accel ops -> calls of the C DMA runtime (``loom/runtime/dma_runtime.h``).

Matches: every ``accel.*`` op. Reads only the ops, their operands and properties
(``padded_shape`` of send / recv, ``mode`` of recv, ``dim`` of send_dim): no
accelerator description is needed at this stage.
Produces: ``func.call`` to body-less ``func.func private`` declarations added to
the module (the C backend emits them as ``extern`` calls, linked with the runtime):

=====================================  ====================================================
accel op                               runtime call
=====================================  ====================================================
init_dma(addr, in, in_size, out, sz)   dma_init(i64 x5) -> i32 (sizes converted bytes -> words)
free_dma                               dma_free() -> i32
send_literal(v, off)                   write_literal(v, off) -> off'
send(tile, off) padded [..]           copy_to_inbuffer_padded_<t>(memref<*xT>, off, p0..p3: i64) -> off'
send_dim(tile, off) {dim}              write_literal(index_cast(memref.dim tile, dim), off)
send_idx(i, off)                       write_literal(index_cast(i), off)
flush_send(len)                        dma_start_send(len, 0); dma_wait_send(); yields 0
start_send(len) / wait_send            dma_start_send(len, 0) / dma_wait_send()
start_recv(len) / wait_recv            dma_start_recv(len, 0) / dma_wait_recv()
recv(tile, off) mode padded [..]      copy_from_outbuffer_padded[_acc]_<t>(memref<*xT>, off, p0..p3)
=====================================  ====================================================

Option ``double-buffer=true`` (``compile_driver(..., double_buffer=True)``) overlaps the
host's staging with the transfers and computes of the previous transaction:

=====================================  ====================================================
init_dma                               dma_init(..); loom_dma_set_double_buffering(1)
flush_send(len) / start_send(len)      dma_wait_send() (the previous send: not before the first, a
                                       stack cell set after dma_start_send says one started); dma_start_send(len, 0)
wait_send / wait_recv                  nothing (waited for before the next start / at the end)
start_recv(len)                        loom_dma_start_recv_late(len, 0): starts after the next send starts,
                                       once the receive before it has landed and its copies ran
recv(tile, off)                        copy_from_outbuffer_deferred[_acc]_<t>(..) (copied at the drain)
free_dma                               dma_wait_send(); dma_wait_recv(); loom_dma_drain_recvs(); dma_free()
=====================================  ====================================================

The runtime alternates the input staging halves (offsets stay relative to the half), so
the next transaction is staged while the last one is in flight, and starts a receive only
after the next send, so a send, a compute and a receive can be in flight at once (see
dma_runtime.h).

Tiles are passed as MLIR unranked memrefs (``memref.cast`` to ``memref<*xT>``),
which MLIR's ABI (and loom's C backend) passes as ``(int64_t rank, void *descriptor)``
— the runtime's ``copy_*(rank, descriptor*, offset, ...)`` convention. The padded
shape travels as four i64 (-1 / unused = the tile's own size). Runtime errors do
not trap: the runtime records the first error and turns later calls into no-ops;
the host reads it with ``loom_dma_error_code()`` after the call.
Also drops the ``accel.*`` hand-off attributes left on other ops (the
``#accel.loop`` roles of the tile loops): the result is plain upstream MLIR that
``mlir-opt`` verifies without ``--allow-unregistered-dialect``.
Leaves alone: all other ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    Float32Type,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrankedMemRefType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from loom.dialects import accel
from loom.errors import LoomError
from loom.passes.accel_ir import Emitter, padded_shape


@dataclass(frozen=True)
class ConvertAccelToRuntimePass(ModulePass):
    name = "convert-accel-to-runtime"
    double_buffer: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decls: dict[str, FunctionType] = {}
        sent: dict[Operation, SSAValue] = {}  # double buffering: per init_dma, "a send started"
        for a in [o for o in op.walk() if o.name.startswith("accel.")]:
            _lower(a, decls, self.double_buffer, sent)
        for o in op.walk():
            for key in [k for k in o.attributes if k.startswith("accel.")]:
                del o.attributes[key]
        existing = {f.sym_name.data for f in op.body.block.ops if isinstance(f, func.FuncOp)}
        for name, ftype in decls.items():
            if name not in existing:
                op.body.block.add_op(func.FuncOp.external(name, ftype.inputs.data, ftype.outputs.data))


def _function(op: Operation) -> Operation | None:
    f = op.parent_op()
    while f is not None and not isinstance(f, func.FuncOp):
        f = f.parent_op()
    return f


def _suffix(t: Attribute) -> str:
    if isinstance(t, Float32Type):
        return "f32"
    return "i32"


def _lower(op: Operation, decls: dict[str, FunctionType], double_buffer: bool = False,
           sent: dict[Operation, SSAValue] | None = None) -> None:
    block = op.parent_block()
    assert block is not None
    em = Emitter(block, op)

    def call(name: str, args: list[SSAValue], result: Attribute | None = i32) -> SSAValue | None:
        ftype = FunctionType.from_lists([a.type for a in args], [result] if result else [])
        if name in decls and decls[name] != ftype:
            raise LoomError(f"convert-accel-to-runtime: @{name} called with two signatures")
        decls[name] = ftype
        c = em.op(func.CallOp(name, args, [result] if result else []))
        return c.results[0] if result else None

    def to_i64(v: SSAValue) -> SSAValue:
        return em(arith.ExtUIOp(v, i64))

    def unranked(tile: SSAValue) -> SSAValue:
        ty = tile.type
        assert isinstance(ty, MemRefType)
        return em(memref.CastOp.get(tile, UnrankedMemRefType.from_type(ty.element_type)))

    def pads(o: Operation, tile: SSAValue) -> list[SSAValue]:
        rank = len(tile.type.get_shape())  # type: ignore[attr-defined]
        if rank > 4:
            raise LoomError(f"convert-accel-to-runtime: tiles of rank {rank} (the runtime takes 1..4)")
        values = (padded_shape(o) + [-1] * 4)[:4]
        return [em(arith.ConstantOp(IntegerAttr(v, i64))) for v in values]

    def wait_previous_send() -> None:
        """``dma_wait_send()``, once a send started (the cell of the function's init_dma, if any)."""
        cell = (sent or {}).get(_function(op))
        if cell is None:
            call("dma_wait_send", [])
            return
        one = em(arith.CmpiOp(em(memref.LoadOp.get(cell, [em.index(0)])), em.i32(0), "ne"))
        decls["dma_wait_send"] = FunctionType.from_lists([], [i32])
        em.op(scf.IfOp(one, [], [func.CallOp("dma_wait_send", [], [i32]), scf.YieldOp()]))

    def started() -> None:
        cell = (sent or {}).get(_function(op))
        if cell is not None:
            em.op(memref.StoreOp.get(em.i32(1), cell, [em.index(0)]))

    result: SSAValue | None = None
    if isinstance(op, accel.InitDmaOp):
        four = em.i32(4)
        args = [to_i64(op.dma_address), to_i64(op.input_address), to_i64(em(arith.DivUIOp(op.input_size, four))),
                to_i64(op.output_address), to_i64(em(arith.DivUIOp(op.output_size, four)))]
        call("dma_init", args)
        if double_buffer:
            call("loom_dma_set_double_buffering", [em.i32(1)])
            if sent is not None:  # no send in flight yet: the first send waits for none
                cell = em(memref.AllocaOp.get(i32, shape=[1]))
                em.op(memref.StoreOp.get(em.i32(0), cell, [em.index(0)]))
                sent[_function(op)] = cell
    elif isinstance(op, accel.FreeDmaOp):
        if double_buffer:  # finish the transfers in flight and the deferred copies
            call("dma_wait_send", [])
            call("dma_wait_recv", [])
            call("loom_dma_drain_recvs", [])
        call("dma_free", [])
    elif isinstance(op, accel.SendLiteralOp):
        result = call("write_literal", [op.value, op.offset])
    elif isinstance(op, accel.SendOp):
        t = _suffix(op.tile.type.element_type)  # type: ignore[attr-defined]
        result = call(f"copy_to_inbuffer_padded_{t}", [unranked(op.tile), op.offset, *pads(op, op.tile)])
    elif isinstance(op, accel.SendDimOp):
        size = em.dim(op.tile, op.dim.value.data)
        result = call("write_literal", [em(arith.IndexCastOp(size, i32)), op.offset])
    elif isinstance(op, accel.SendIdxOp):
        result = call("write_literal", [em(arith.IndexCastOp(op.index, i32)), op.offset])
    elif isinstance(op, accel.FlushSendOp) and double_buffer:
        wait_previous_send()  # this one stays in flight
        call("dma_start_send", [op.length, em.i32(0)])
        started()
        result = em.i32(0)
    elif isinstance(op, accel.FlushSendOp):
        call("dma_start_send", [op.length, em.i32(0)])
        call("dma_wait_send", [])
        result = em.i32(0)
    elif isinstance(op, accel.StartSendOp):
        if double_buffer:
            wait_previous_send()
        call("dma_start_send", [op.length, em.i32(0)])
        if double_buffer:
            started()
    elif isinstance(op, accel.WaitSendOp):
        if not double_buffer:
            call("dma_wait_send", [])
    elif isinstance(op, accel.StartRecvOp):
        # double-buffered: started after the next send (send i + 1 streams before the host waits
        # for receive i - 1); the receive before it lands and its deferred copies run then
        call("loom_dma_start_recv_late" if double_buffer else "dma_start_recv", [op.length, em.i32(0)])
    elif isinstance(op, accel.WaitRecvOp):
        if not double_buffer:
            call("dma_wait_recv", [])
    elif isinstance(op, accel.RecvOp):
        t = _suffix(op.tile.type.element_type)  # type: ignore[attr-defined]
        kind = "padded_acc" if op.mode.data == "accumulate" else "padded"
        if double_buffer:
            kind = "deferred_acc" if op.mode.data == "accumulate" else "deferred"
        result = call(f"copy_from_outbuffer_{kind}_{t}", [unranked(op.tile), op.offset, *pads(op, op.tile)])
    else:
        raise LoomError(f"convert-accel-to-runtime: no lowering for {op.name}")
    if op.results:
        assert result is not None
        op.results[0].replace_all_uses_with(result)
    op.detach()
    op.erase()
