"""``dma-inline-copies``: textual runtime-level IR in -> IR out (runtime_calls_8x8.mlir, written by hand), and
drivers built with it checked against numpy and against the analytic transfer counts of their flow."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import f32
from xdsl.parser import Parser

from loom.dialects import context
from loom.driver.compile import compile_driver
from loom.oracle import mlir
from loom.passes import Pipeline
from tests.accel_flow.accel_flow_helpers import (
    conv_case,
    desc,
    f32_description,
    matmul_arrays,
    matmul_module,
    matmul_reference,
)

HERE = Path(__file__).parent
RUNTIME_COPIES = ("copy_to_inbuffer_padded_i32", "copy_from_outbuffer_padded_acc_i32", "write_literal")


def run(text: str):
    module = Parser(context(), text).parse_module()
    Pipeline.parse("dma-inline-copies").run(module)
    return module


def fixture() -> str:
    return (HERE / "runtime_calls_8x8.mlir").read_text()


def calls(module, name: str) -> list[func.CallOp]:
    return [c for c in module.walk() if isinstance(c, func.CallOp) and c.callee.root_reference.data == name]


def guard_of(call: func.CallOp) -> scf.IfOp | None:
    """The scf.if whose else-branch holds ``call`` (None: not guarded)."""
    parent = call.parent_op()
    if isinstance(parent, scf.IfOp) and call.parent_region() is parent.false_region:
        return parent
    return None


def timing_report(guard: scf.IfOp) -> tuple[int, int]:
    """(direction, words) of the one ``loom_timing_driver_copied`` call of ``guard``'s then-branch, after
    every copy or store of the branch (only the offset to yield is computed after it)."""
    ops = list(guard.true_region.block.ops)
    (hook,) = [o for o in ops if isinstance(o, func.CallOp)]
    assert hook.callee.root_reference.data == "loom_timing_driver_copied"
    assert all(isinstance(o, (arith.ConstantOp, arith.AddiOp, scf.YieldOp)) for o in ops[ops.index(hook) + 1:])
    moves = [o for o in ops if isinstance(o, (memref.CopyOp, scf.ForOp)) or
             (isinstance(o, memref.StoreOp) and o.memref.type.get_shape() != (1,))]  # not the tally cell
    assert moves and all(ops.index(o) < ops.index(hook) for o in moves)
    direction, words = (v.owner.value.value.data for v in hook.operands)
    return direction, words


def test_full_tiles_and_words_are_staged_by_the_driver_itself():
    m = run(fixture())
    drive = next(f for f in m.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == "drive")
    top = list(drive.body.blocks[0].ops)
    init = calls(m, "dma_init")[0]
    # the windows: one call each, right after dma_init
    (inv,), (outv,) = calls(m, "loom_dma_in_view_i32"), calls(m, "loom_dma_out_view_i32")
    assert top.index(init) < top.index(inv) < top.index(outv) < top.index(init) + 12
    # every runtime copy after dma_init now sits in the else-branch of a guard...
    early, *later = calls(m, "copy_to_inbuffer_padded_i32")
    assert guard_of(early) is None  # before dma_init: left alone
    guarded = later + calls(m, "copy_from_outbuffer_padded_acc_i32") + calls(m, "write_literal")
    assert len(guarded) == 4 and all(guard_of(c) is not None for c in guarded)
    # ...whose then-branch does the copy: a 4x4 block at the offset of the window
    for c in later:
        then = list(guard_of(c).true_region.walk())
        (copy,) = [o for o in then if isinstance(o, memref.CopyOp)]
        src, dst = copy.operands
        assert src.type.get_shape() == (4, 4) and src.type.layout.get_strides() == (8, 1)
        assert isinstance(dst.owner, memref.ReinterpretCastOp) and dst.owner.source is inv.results[0]
        assert dst.type.get_shape() == (4, 4) and dst.type.layout.get_strides() == (4, 1)
    (acc,) = calls(m, "copy_from_outbuffer_padded_acc_i32")
    body = list(guard_of(acc).true_region.walk())
    assert sum(isinstance(o, scf.ForOp) for o in body) == 2 and any(isinstance(o, arith.AddiOp) for o in body)
    (cast,) = [o for o in body if isinstance(o, memref.ReinterpretCastOp)]
    assert cast.source is outv.results[0]
    (lit,) = calls(m, "write_literal")
    (store,) = [o for o in guard_of(lit).true_region.walk() if isinstance(o, memref.StoreOp)]
    assert store.operands[1] is inv.results[0]
    # the dynamic-row tile is inline only when it has 4 rows
    dynamic = guard_of(later[-1])
    conds = [o for o in drive.walk() if isinstance(o, arith.CmpiOp) and o.predicate.value.data == 0]  # eq
    assert len(conds) == 1 and conds[0].lhs.owner.__class__ is memref.DimOp
    assert dynamic is not None
    # each then-branch reports its words to the timeline right after the copy (direction, words)
    assert [timing_report(guard_of(c)) for c in later + [acc, lit]] == [(0, 16)] * len(later) + [(1, 16), (0, 1)]
    # tallies before dma_free: A sent (direction 0), C received (1), each once
    free = calls(m, "dma_free")[0]
    tallies = calls(m, "loom_operand_tally_add")
    assert len(tallies) == 2 and all(top.index(t) < top.index(free) for t in tallies)
    directions = {t.operands[0].owner.source.name_hint: t.operands[1].owner.value.value.data for t in tallies}
    assert directions == {"A": 0, "C": 1}


@pytest.mark.mlir
def test_output_verifies_in_upstream_mlir():
    mlir.verify(run(fixture()))


def with_double_buffering(text: str, where: str = "    scf.for %i") -> str:
    text = text.replace(where, "    %on = arith.constant 1 : i32\n"
                        "    %dbr = func.call @loom_dma_set_double_buffering(%on) : (i32) -> i32\n" + where, 1)
    return text.replace("  func.func private @dma_free", "  func.func private @loom_dma_set_double_buffering(i32) "
                        "-> i32\n  func.func private @dma_free")


def test_double_buffered_sends_address_the_half_being_filled():
    m = run(with_double_buffering(fixture()))
    top = list(next(f for f in m.walk() if isinstance(f, func.FuncOp)).body.blocks[0].ops)
    switch = calls(m, "loom_dma_set_double_buffering")[0]
    (whole,) = calls(m, "loom_dma_in_buffer_view_i32")
    assert not calls(m, "loom_dma_in_view_i32") and top.index(whole) > top.index(switch)
    # the half's start: read once after the switch, then again after the (one) dma_start_send
    bases = calls(m, "loom_dma_in_half_base")
    (send,) = calls(m, "dma_start_send")
    assert len(bases) == 2 and top.index(bases[0]) > top.index(switch)
    assert bases[1] is send.next_op
    # sends and literals are inline at (offset + half start); the receive stays a runtime call
    for c in calls(m, "copy_to_inbuffer_padded_i32")[1:] + calls(m, "write_literal"):
        assert guard_of(c) is not None
    (acc,) = calls(m, "copy_from_outbuffer_padded_acc_i32")
    assert guard_of(acc) is None
    (lit,) = calls(m, "write_literal")
    (store,) = [o for o in guard_of(lit).true_region.walk() if isinstance(o, memref.StoreOp)]
    assert isinstance(store.indices[0].owner, arith.AddiOp)
    # staging is reported where it happens: before the send that carries it, not after its wait
    sends = calls(m, "copy_to_inbuffer_padded_i32")[1:]
    assert [timing_report(guard_of(c)) for c in sends + [lit]] == [(0, 16)] * len(sends) + [(0, 1)]
    (hook,) = [d for d in m.body.block.ops if isinstance(d, func.FuncOp) and d.sym_name.data ==
               "loom_timing_driver_copied"]
    assert hook.is_declaration and [str(t) for t in hook.function_type.inputs.data] == ["i32", "i64"]


@pytest.mark.mlir
def test_double_buffered_output_verifies_in_upstream_mlir():
    mlir.verify(run(with_double_buffering(fixture())))


def test_switches_it_cannot_follow_and_unknown_pads_are_left_alone():
    # double buffering switched inside a loop: the half is not known where the copies run
    m = run(with_double_buffering(fixture(), where="      %o1 = func.call @write_literal"))
    assert not calls(m, "loom_dma_in_buffer_view_i32") and all(
        guard_of(c) is None for n in RUNTIME_COPIES for c in calls(m, n))
    # a pad that is not a constant: that call keeps its runtime copy
    text = fixture().replace("%rows: index)", "%rows: index, %pad: i64)")
    text = text.replace("(%ue, %zero, %p4, %p4", "(%ue, %zero, %pad, %p4")
    m = run(text)
    kept = [c for c in calls(m, "copy_to_inbuffer_padded_i32") if c.operands[2].owner.__class__ is not arith.ConstantOp]
    assert len(kept) == 1 and guard_of(kept[0]) is None


# ------------------------------------------------------------------ drivers, end to end
def check_transfers(drv, arrays, problem):
    want = drv.summary.expected_transfers(problem)  # analytic, from the flow and the tile sizes
    got = drv.last_run.transfers
    assert (got.sends, got.recvs, got.words_sent, got.words_received) == \
        (want.sends, want.recvs, want.words_sent, want.words_received)
    assert got.operand_words_sent == want.operand_words_sent
    assert got.operand_words_received == want.operand_words_received


@pytest.mark.sanitize
@pytest.mark.parametrize("file,acc,flow", [("matmul_v3.json", "v3_8", "Cs"), ("matmul_v3.json", "v3_8", "As"),
                                           ("matmul_v2.json", "v2_4", "Bs"), ("matmul_v1.json", "v1_8", "Ns"),
                                           ("matmul_v4.json", None, "Ns")])
@pytest.mark.parametrize("shape", [(32, 24, 16), (20, 12, 36)])  # full tiles only / edge tiles too
def test_matmul_drivers_match_numpy_and_the_analytic_transfers(file, acc, flow, shape):
    M, N, K = shape
    drv = compile_driver(matmul_module(), desc(file), acc, flow)
    # row copies: for rows of up to 256 bytes AVX moves (64 bytes or more, where the CPU has AVX) or memcpy
    # the C compiler expands inline, the C library's above (through a pointer read once per tile)
    assert "loom_dma_in_view_i32(&" in drv.c_source and ("memcpy(&" in drv.c_source or "= loomh_memcpy_long;" in drv.c_source)
    A, B, C = matmul_arrays(M, N, K)
    expected = matmul_reference(A, B, C)
    drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.int32))
    check_transfers(drv, (A, B, C), {"m": M, "n": N, "k": K})


@pytest.mark.sanitize
@pytest.mark.parametrize("acc,row_words", [("v4_16", 32), ("v4_16_m32n16k64", 64), ("v3_8", 8)])
@pytest.mark.parametrize("flow", ["Ns", "As", "Bs", "Cs"])
def test_inline_row_copies_match_numpy_on_every_flow(acc, row_words, flow):
    # 128- and 256-byte rows (v4's A tiles) move with 32-byte AVX moves where the CPU has them, else as
    # constant-size memcpys the C compiler expands inline; v3_8's 32-byte rows inline only; odd sizes add
    # the edge tiles the runtime pads
    file = "matmul_v3.json" if acc.startswith("v3") else "matmul_v4.json"
    for coalesce, double_buffer in [(False, False), (True, True)]:
        drv = compile_driver(matmul_module(), desc(file), acc, flow, coalesce=coalesce, double_buffer=double_buffer)
        assert re.search(rf"(?<![\w>])memcpy\(&[^;]*\(size_t\)\({row_words}\) \* sizeof\(int32_t\)\);", drv.c_source)
        assert "= loomh_memcpy_long;" not in drv.c_source
        assert (f"loomh_rows_{row_words * 4}(" in drv.c_source) == (row_words * 4 >= 64)
        for M, N, K in [(67, 45, 99), (64, 32, 128)]:
            A, B, C = matmul_arrays(M, N, K)
            expected = matmul_reference(A, B, C)
            drv(A, B, C)
            np.testing.assert_array_equal(C, expected.astype(np.int32))


@pytest.mark.sanitize
@pytest.mark.parametrize("flow", ["Cs", "As"])
def test_double_buffered_drivers_match_numpy_and_the_analytic_transfers(flow):
    drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_8", flow, coalesce=True, double_buffer=True)
    assert "loom_dma_in_half_base()" in drv.c_source and "copy_from_outbuffer_deferred_acc_i32" in drv.c_source
    A, B, C = matmul_arrays(20, 12, 36)
    expected = matmul_reference(A, B, C)
    drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.int32))
    want = drv.summary.expected_transfers({"m": 20, "n": 12, "k": 36})
    got = drv.last_run.transfers
    assert (got.words_sent, got.words_received) == (want.words_sent, want.words_received)
    assert (got.operand_words_sent, got.operand_words_received) == (want.operand_words_sent,
                                                                     want.operand_words_received)


@pytest.mark.sanitize
def test_coalesced_f32_driver_matches_numpy(tmp_path):
    drv = compile_driver(matmul_module(elem=f32), f32_description(tmp_path, "matmul_v3.json"), "v3_4", "Cs",
                         coalesce=True)
    assert "loom_dma_in_view_f32(&" in drv.c_source and "loom_dma_in_view_i32(&" in drv.c_source  # tiles, opcodes
    A, B, C = matmul_arrays(18, 8, 12, dtype=np.float32)
    expected = matmul_reference(A, B, C)
    drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.float32))
    check_transfers_sent = drv.summary.expected_transfers({"m": 18, "n": 8, "k": 12})
    assert drv.last_run.transfers.operand_words_sent == check_transfers_sent.operand_words_sent


@pytest.mark.sanitize
@pytest.mark.parametrize("stride", [1, 2])
def test_static_conv_driver_stages_filters_and_windows_inline(stride):
    from xdsl.dialects.builtin import i32

    from loom.examples.accel_kernels import BUILTINS
    dims = {"B": 2, "C": 3, "F": 2, "H": 9, "W": 9, "R": 3, "S": stride}
    drv = compile_driver(BUILTINS["conv2d"].build(dims, i32), desc("conv2d.json"), coalesce=True)
    # the filter slice (contiguous: one memcpy of 27 words) and the window (rows of 3) are inline
    assert "(size_t)(27) * sizeof(int32_t)" in drv.c_source and "(size_t)(3) * sizeof(int32_t)" in drv.c_source
    I, W, O, want = conv_case(stride)  # noqa: E741
    o = O.shape[-1]
    drv(I, W, O)
    assert np.array_equal(O, want)
    t = drv.last_run.transfers
    assert t.operand_words_sent == {"I": 2 * 2 * o * o * 3 * 9, "W": 2 * 2 * 3 * 9}
    assert t.operand_words_received == {"O": 2 * 2 * o * o}


@pytest.mark.sanitize
@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("stride", [1, 2])
def test_double_buffered_1x1_conv_gathers_its_windows_unrolled(stride, coalesce):
    """A 1x1 window is one word per channel, a gather from the channel planes: its loop is unrolled
    (C backend, copies of at most 16 bytes per iteration); 13 channels leave a remainder of the unroll
    by 8, H = W = 11 with stride 2 an odd output. Checked against numpy's einsum over the strided input."""
    from xdsl.dialects.builtin import i32

    from loom.examples.accel_kernels import BUILTINS
    dims = {"B": 2, "C": 13, "F": 3, "H": 11, "W": 11, "R": 1, "S": stride}
    drv = compile_driver(BUILTINS["conv2d"].build(dims, i32), desc("conv2d.json"), coalesce=coalesce,
                         double_buffer=True)
    source = drv.c_source
    loop = source[source.index("#pragma GCC unroll 8"):].splitlines()[1]
    assert loop.strip().startswith("for (intptr_t") and " < 13; " in loop
    rng = np.random.default_rng(5)
    I = rng.integers(-9, 9, (2, 13, 11, 11)).astype(np.int32)  # noqa: E741
    W = rng.integers(-9, 9, (3, 13, 1, 1)).astype(np.int32)
    o = (11 - 1) // stride + 1
    O = rng.integers(-9, 9, (2, 3, o, o)).astype(np.int32)  # noqa: E741
    want = O + np.einsum("fc,nchw->nfhw", W[:, :, 0, 0], I[:, :, ::stride, ::stride])
    drv(I, W, O)
    assert np.array_equal(O, want)
    assert drv.last_run.transfers.operand_words_sent["I"] == 2 * 3 * o * o * 13


def test_inline_copies_can_be_switched_off():
    drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_8", "Cs", build=False, inline_copies=False)
    assert "loom_dma_in_view" not in drv.c_source and "dma-inline-copies" not in drv.stages[-1][1]
