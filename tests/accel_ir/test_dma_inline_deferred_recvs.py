"""``dma-inline-deferred-recvs``: textual double-buffered runtime IR in -> IR out (deferred_recvs_8x8.mlir,
written by hand), and double-buffered drivers built with it checked against numpy and the analytic
transfer counts of their flow."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerType, f32
from xdsl.parser import Parser

from loom.dialects import context
from loom.driver.compile import compile_driver
from loom.oracle import mlir
from loom.passes import Pipeline
from tests.accel_flow.accel_flow_helpers import (conv_case, desc, f32_description, matmul_arrays, matmul_module,
                                                 matmul_reference)

HERE = Path(__file__).parent
DEFERRED = "copy_from_outbuffer_deferred_acc_i32"
BASE = "loom_dma_out_recv_base"


def run(text: str):
    module = Parser(context(), text).parse_module()
    Pipeline.parse("dma-inline-deferred-recvs").run(module)
    return module


def fixture() -> str:
    return (HERE / "deferred_recvs_8x8.mlir").read_text()


def calls(module, name: str) -> list[func.CallOp]:
    return [c for c in module.walk() if isinstance(c, func.CallOp) and c.callee.root_reference.data == name]


def test_the_deferred_tile_is_recorded_and_added_by_the_driver_at_each_drain():
    m = run(fixture())
    drive = next(f for f in m.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == "drive")
    top = list(drive.body.blocks[0].ops)
    # the deferred call stays only as the fallback (else-branch) of a guard
    (deferred,) = calls(m, DEFERRED)
    guard = deferred.parent_op()
    assert isinstance(guard, scf.IfOp) and deferred.parent_region() is guard.false_region
    then = list(guard.true_region.block.ops)
    assert not [o for o in then if isinstance(o, (func.CallOp, memref.CopyOp, scf.ForOp))]  # records only
    stored = [o for o in then if isinstance(o, memref.StoreOp)]
    assert stored[0].value.name_hint == "i"  # the tile's dynamic row offset, then the staging offset, the flag
    assert len(stored) == 3
    # the guard: nothing pending (2 cells), the dynamic dim fills the block, the words inside the window
    eqs = [o for o in drive.walk() if isinstance(o, arith.CmpiOp) and o.predicate.value.data == 0
           and o.parent_op() is not None and o in list(deferred.parent_block().ops) + list(guard.parent_block().ops)]
    assert any(isinstance(o.lhs.owner, memref.DimOp) for o in eqs)
    # both drains: the runtime call survives only inside an scf.if (the fallback left it a copy)
    drains = calls(m, "loom_dma_drain_recvs")
    assert len(drains) == 2 and all(isinstance(d.parent_op(), scf.IfOp) for d in drains)
    # before each: an inline add of the recorded 4x4 tile from the output window, then the timing hook
    (outv,) = calls(m, "loom_dma_out_view_i32")
    adds = [o for o in drive.walk()
            if isinstance(o, scf.IfOp) and any(isinstance(x, scf.ForOp) for x in o.true_region.block.ops)]
    assert len(adds) == 2
    for add in adds:
        body = list(add.true_region.walk())
        (view,) = [o for o in body if isinstance(o, memref.SubviewOp)]
        assert view.source is drive.body.blocks[0].args[1] and view.result.type.get_shape() == (4, 4)
        (cast,) = [o for o in body if isinstance(o, memref.ReinterpretCastOp)]
        assert cast.source is outv.results[0] and cast.result.type.get_shape() == (4, 4)
        assert sum(isinstance(o, scf.ForOp) for o in body) == 2 and any(isinstance(o, arith.AddiOp) for o in body)
        (hook,) = [o for o in body if isinstance(o, func.CallOp) and o.callee.root_reference.data != BASE]
        assert hook.callee.root_reference.data == "loom_timing_driver_copied"
        assert [v.owner.value.value.data for v in hook.operands] == [1, 16]
    # the words added inline are tallied for C (direction 1) before dma_free
    (free,) = calls(m, "dma_free")
    (tally,) = calls(m, "loom_operand_tally_add")
    assert top.index(tally) < top.index(free) and tally.operands[1].owner.value.value.data == 1
    assert tally.operands[0].owner.source is drive.body.blocks[0].args[1]


@pytest.mark.mlir
def test_output_verifies_in_upstream_mlir():
    mlir.verify(run(fixture()))


def unchanged(text: str) -> bool:
    m = run(text)
    return not calls(m, "loom_dma_out_view_i32") and all(not isinstance(c.parent_op(), scf.IfOp)
                                                         for c in calls(m, DEFERRED) + calls(m, "loom_dma_drain_recvs"))


def test_what_it_cannot_order_is_left_to_the_runtime():
    assert not unchanged(fixture())
    # a send of C: the runtime drains the receives into C before it reads C
    send = ("      %s = func.call @copy_to_inbuffer_padded_i32(%u, %zero, %p4, %p4, %none, %none) : "
            "(memref<*xi32>, i32, i64, i64, i64, i64) -> i32\n      scf.yield")
    assert unchanged(fixture().replace("      scf.yield", send, 1))
    # two deferred receives between drains (a coalesced receive of several tiles)
    twice = ("      %o2 = func.call @copy_from_outbuffer_deferred_acc_i32(%u, %n16, %p4, %p4, %none, %none) : "
             "(memref<*xi32>, i32, i64, i64, i64, i64) -> i32\n      scf.yield")
    assert unchanged(fixture().replace("      scf.yield", twice, 1))
    # dma_free without a drain before it (its own drain would not see the recorded tile)
    assert unchanged(fixture().replace("    %d2 = func.call @loom_dma_drain_recvs() : () -> i32\n", ""))
    # no double buffering
    assert unchanged(fixture().replace("    %dbr = func.call @loom_dma_set_double_buffering(%on) : (i32) -> i32\n", ""))
    # late receives the runtime may start over the same words: the length is not a constant, it
    # exceeds one output half, or a plain dma_start_recv resets the halves
    assert unchanged(late().replace("func.call @loom_dma_start_recv_late(%n16,", "func.call @loom_dma_start_recv_late(%n,"))
    assert unchanged(late().replace("%words = arith.constant 1024", "%words = arith.constant 24"))
    plain = "    %r0 = func.call @dma_start_recv(%n16, %zero) : (i32, i32) -> i32\n    scf.for"
    assert unchanged(late().replace("    scf.for", plain, 1).replace(
        "  func.func private @dma_free", "  func.func private @dma_start_recv(i32, i32) -> i32\n  func.func private @dma_free"))


def late() -> str:
    """The fixture with the late receive convert-accel-to-runtime emits (its copies run when the next
    receive starts, in the other output half: 16 words, halves of 512)."""
    text = fixture().replace("func.call @dma_start_recv(", "func.call @loom_dma_start_recv_late(")
    text = text.replace("func.func private @dma_start_recv(", "func.func private @loom_dma_start_recv_late(")
    return text.replace("    %words = arith.constant 1024 : i64\n",
                        "    %words = arith.constant 1024 : i64\n    %n = arith.index_cast %rows : index to i32\n")


def test_late_receives_are_added_from_the_half_they_landed_in_one_receive_later():
    m = run(late())
    drive = next(f for f in m.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == "drive")
    # the request: written into the runtime's slot (no call) when it is free, has room and the runtime
    # holds no deferred copy; else the call
    (call,) = calls(m, "loom_dma_start_recv_late")
    rl = call.parent_op()
    assert isinstance(rl, scf.IfOp) and call.parent_region() is rl.false_region
    (slot,) = calls(m, "loom_dma_recv_request_view_i32")
    assert slot.parent_block() is drive.body.blocks[0]
    written = list(rl.true_region.block.ops)
    assert not [o for o in written if isinstance(o, func.CallOp)]
    stores = [o for o in written if isinstance(o, memref.StoreOp)]
    assert all(o.memref is slot.results[0] for o in stores)
    # length and offset (the call's operands), no runtime copies, then queued
    assert [o.indices[0].owner.value.value.data for o in stores] == [1, 2, 3, 0]
    assert [o.value for o in stores[:2]] == list(call.operands)
    assert [o.value.owner.value.value.data for o in stores[2:]] == [0, 1]
    tested = {o.indices[0].owner.value.value.data for o in rl.parent_block().ops
              if isinstance(o, memref.LoadOp) and o.memref is slot.results[0]}
    assert tested == {0, 4}  # queued, room
    ops = list(rl.parent_block().ops)
    after = ops[ops.index(rl) + 1:]
    ifs = [o for o in after if isinstance(o, scf.IfOp)]
    # right after the request: the older tile is added (its receive landed: the next one started)...
    add_old = ifs[0]
    body = list(add_old.true_region.walk())
    assert any(isinstance(o, scf.ForOp) for o in body) and any(isinstance(o, arith.AddiOp) for o in body)
    (cast,) = [o for o in body if isinstance(o, memref.ReinterpretCastOp)]
    (start,) = cast.offsets
    at = start.owner.input.owner  # staging offset + recorded landing base
    assert isinstance(at, arith.AddiOp) and all(isinstance(v.owner, memref.LoadOp) for v in at.operands)
    # ...then the newest becomes the older one, with the base its receive (now started) lands at
    move = ifs[1]
    moved = list(move.true_region.block.ops)
    (base,) = [o for o in moved if isinstance(o, func.CallOp)]
    assert base.callee.root_reference.data == BASE
    assert ops.index(add_old) < ops.index(move) < ops.index(calls(m, DEFERRED)[0].parent_op())
    # each drain (after dma_wait_recv: all landed): older tile, newest tile (at the runtime's base), runtime
    for d in calls(m, "loom_dma_drain_recvs"):
        guard = d.parent_op()
        blk = list(guard.parent_block().ops)
        adds = [o for o in blk[:blk.index(guard)] if isinstance(o, scf.IfOp)
                and any(isinstance(x, scf.ForOp) for x in o.true_region.walk())]
        assert len(adds) >= 2
        newest = [c for c in adds[-1].true_region.walk() if isinstance(c, func.CallOp)]
        assert BASE in [c.callee.root_reference.data for c in newest]
    assert any(isinstance(o, func.FuncOp) and o.sym_name.data == BASE for o in m.body.block.ops)
    mlir.verify(m)
    assert drive is not None


def sized_by_tile(rows: str) -> str:
    """late(), the receive's length computed as a conv driver's plane is: the product of its tile's dims
    (``memref.dim`` of the subview, whose row count is ``rows``), the subview made before the request."""
    text = late()
    tile = "      %t = memref.subview %C[%i, 0] [%rows, 4] [1, 1] : memref<8x8xi32> to memref<?x4xi32, strided<[8, 1], offset: ?>>\n"
    assert tile in text
    text = text.replace(tile, "")
    sized = (f"      %h = {rows}\n" + tile.replace("[%rows, 4]", "[%h, 4]")
             + "      %k1 = arith.constant 1 : index\n"
               "      %d0 = memref.dim %t, %c0 : memref<?x4xi32, strided<[8, 1], offset: ?>>\n"
               "      %d1 = memref.dim %t, %k1 : memref<?x4xi32, strided<[8, 1], offset: ?>>\n"
               "      %len = arith.muli %d0, %d1 : index\n"
               "      %plane = arith.index_cast %len : index to i32\n")
    late_call = "      %r = func.call @loom_dma_start_recv_late(%n16, %zero)"
    assert late_call in text
    return text.replace(late_call, sized + late_call.replace("%n16", "%plane"))


def test_a_late_receive_sized_by_its_tiles_constant_dims_is_inlined():
    """A conv plane's length: dims of the output tile, each a constant (8 - 4 rows, 4 columns in the
    type), multiplied: provably one output half or less, so the request and the add are the driver's."""
    m = run(sized_by_tile("arith.subi %c8, %c4 : index"))
    (call,) = calls(m, "loom_dma_start_recv_late")
    rl = call.parent_op()
    assert isinstance(rl, scf.IfOp) and call.parent_region() is rl.false_region
    assert call.operands[0].name_hint == "plane"
    # the room test uses the length the IR computes (16 words at offset 0)
    ends = [o for o in rl.parent_block().ops if isinstance(o, arith.ConstantOp)
            and o.value.type == IntegerType(32) and o.value.value.data == 16]
    assert ends
    (deferred,) = calls(m, DEFERRED)
    assert isinstance(deferred.parent_op(), scf.IfOp)
    assert calls(m, "loom_dma_out_view_i32")
    mlir.verify(m)
    # a dynamic row count, or a difference that would be negative, leaves the runtime its receive
    assert unchanged(sized_by_tile("arith.addi %rows, %c0 : index"))
    assert unchanged(sized_by_tile("arith.subi %c4, %c8 : index"))


def test_the_request_slot_words_are_the_runtime_headers():
    from loom.passes import dma_inline_deferred_recvs as p
    header = (Path(p.__file__).parents[1] / "runtime" / "dma_runtime.h").read_text()
    names = re.search(r"enum \{([^}]*LOOM_RECV_REQUEST_WORDS[^}]*)\}", header).group(1)
    order = [n.strip().removeprefix("LOOM_RECV_REQUEST_") for n in names.split(",")]
    assert order == ["QUEUED", "LENGTH", "OFFSET", "COPIES", "ROOM", "WORDS"]
    assert [p._QUEUED, p._LENGTH, p._OFFSET, p._COPIES, p._ROOM, p._REQUEST_WORDS] == list(range(6))


# ------------------------------------------------------------------ drivers, end to end
def run_against_numpy(drv, M, N, K):
    """Runs the driver on seeded operands, asserts numpy's result; (transfers made, analytic transfers)."""
    A, B, C = matmul_arrays(M, N, K)
    expected = matmul_reference(A, B, C)
    drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.int32))
    return drv.last_run.transfers, drv.summary.expected_transfers({"m": M, "n": N, "k": K})


@pytest.mark.sanitize
@pytest.mark.parametrize("file,acc,flow", [("matmul_v3.json", "v3_8", "Ns"), ("matmul_v3.json", "v3_8", "Cs"),
                                           ("matmul_v2.json", "v2_4", "Bs"), ("matmul_v1.json", "v1_8", "Ns"),
                                           ("matmul_v4.json", None, "As")])
@pytest.mark.parametrize("shape", [(32, 24, 16), (20, 12, 36)])  # full tiles only / edge tiles too
def test_double_buffered_drivers_match_numpy_and_the_analytic_transfers(file, acc, flow, shape):
    M, N, K = shape
    drv = compile_driver(matmul_module(), desc(file), acc, flow, double_buffer=True)
    # the lowering's late receives: the driver adds the full tiles from the half they landed in
    assert "loom_dma_start_recv_late" in drv.c_source and "loom_dma_out_recv_base()" in drv.c_source
    got, want = run_against_numpy(drv, M, N, K)
    assert (got.sends, got.recvs, got.words_sent, got.words_received) == \
        (want.sends, want.recvs, want.words_sent, want.words_received)
    assert (got.operand_words_sent, got.operand_words_received) == (want.operand_words_sent,
                                                                     want.operand_words_received)


@pytest.mark.sanitize
@pytest.mark.parametrize("file,acc", [("matmul_v4.json", "v4_16"), ("matmul_v4.json", "v4_16_pingpong"),
                                      ("matmul_v3.json", "v3_8")])
@pytest.mark.parametrize("flow", ["Ns", "As", "Bs", "Cs"])
@pytest.mark.parametrize("coalesce", [False, True])
def test_every_flow_adds_late_receives_inline_and_matches_numpy_on_odd_sizes(file, acc, flow, coalesce):
    M, N, K = 37, 29, 43  # edge tiles on every dim (the runtime copies those, in order with the inline ones)
    drv = compile_driver(matmul_module(), desc(file), acc, flow, double_buffer=True, coalesce=coalesce)
    # full tiles: requested through the runtime's slot and added inline; edge tiles: the calls
    assert "loom_dma_out_recv_base()" in drv.c_source and "loom_dma_recv_request_view_i32(&" in drv.c_source
    got, want = run_against_numpy(drv, M, N, K)
    assert (got.recvs, got.words_received, got.operand_words_received) == \
        (want.recvs, want.words_received, want.operand_words_received)


@pytest.mark.sanitize
def test_double_buffered_f32_driver_matches_numpy(tmp_path):
    drv = compile_driver(matmul_module(elem=f32), f32_description(tmp_path, "matmul_v3.json"), "v3_4", "Ns",
                         double_buffer=True)
    assert "loom_dma_start_recv_late" in drv.c_source and "loom_dma_out_view_f32(&" in drv.c_source
    A, B, C = matmul_arrays(18, 8, 12, dtype=np.float32)
    expected = matmul_reference(A, B, C)
    drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.float32))
    assert drv.last_run.transfers.operand_words_received == \
        drv.summary.expected_transfers({"m": 18, "n": 8, "k": 12}).operand_words_received


@pytest.mark.sanitize
@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("stride", [1, 2])
def test_double_buffered_conv_driver_matches_numpy(stride, coalesce):
    from xdsl.dialects.builtin import i32

    from loom.examples.accel_kernels import BUILTINS
    drv = compile_driver(BUILTINS["conv2d"].build({"B": 2, "C": 3, "F": 2, "H": 9, "W": 9, "R": 3, "S": stride}, i32),
                         desc("conv2d.json"), double_buffer=True, coalesce=coalesce)
    # the plane's receive length is the product of its tile's dims, constants of the static layer: it fits
    # one output half, so the driver adds each plane itself (the runtime call stays as the fallback)
    assert "loom_dma_start_recv_late" in drv.c_source and "loom_dma_out_view_i32(&" in drv.c_source
    I, W, O, want = conv_case(stride)  # noqa: E741
    o = O.shape[-1]
    drv(I, W, O)
    assert np.array_equal(O, want)
    assert drv.last_run.transfers.operand_words_received == {"O": 2 * 2 * o * o}


@pytest.mark.sanitize
@pytest.mark.parametrize("layer", [(5, 11, 3, 1, 2), (4, 10, 5, 3, 2), (3, 7, 4, 2, 1)])
def test_double_buffered_conv_layers_of_odd_sizes_match_numpy(layer):
    """1x1 and 3x3 filters at stride 2 over odd and even images (the last column of windows unused), a
    2x2 filter: every plane added inline, one step late, equals numpy's convolution."""
    from xdsl.dialects.builtin import i32

    from loom.examples.accel_kernels import BUILTINS, conv_reference
    iC, H, oC, f, s = layer
    dims = {"B": 1, "C": iC, "F": oC, "H": H, "W": H, "R": f, "S": s}
    rng = np.random.default_rng(sum(layer))
    I, W, O = (rng.integers(-4, 4, sh).astype(np.int32) for sh in BUILTINS["conv2d"].shapes(dims))  # noqa: E741
    want = conv_reference(I, W, O, s)
    for coalesce in (False, True):
        drv = compile_driver(BUILTINS["conv2d"].build(dims, i32), desc("conv2d.json"), double_buffer=True,
                             coalesce=coalesce)
        assert "loom_dma_out_view_i32(&" in drv.c_source
        out = O.copy()
        drv(I, W, out)
        assert np.array_equal(out, want), (layer, coalesce)
