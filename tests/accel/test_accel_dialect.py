"""The accel dialect: verifiers, and generic-form text that upstream mlir-opt accepts."""

from __future__ import annotations

import io
import os
import subprocess

import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import Builtin, IndexType, MemRefType, ModuleOp, f32, i32, i64
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from loom.dialects import accel

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


def build_driver(tile_type=MemRefType(i32, [4, 4])):
    """A tiny A-stationary-like driver using every op."""
    fop = func.FuncOp("drive", ([tile_type, tile_type, IndexType()], []))
    with ImplicitBuilder(fop.body) as (a, c, idx):
        zero = arith.ConstantOp.from_int_and_width(0, 32)
        size = arith.ConstantOp.from_int_and_width(65536, 32)
        lit = arith.ConstantOp.from_int_and_width(34, 32)
        accel.InitDmaOp(zero, zero, size, zero, size)
        o1 = accel.SendLiteralOp(lit, zero)
        o2 = accel.SendOp(a, o1)
        o3 = accel.SendDimOp(a, 1, o2)
        o4 = accel.SendIdxOp(idx, o3)
        accel.FlushSendOp(o4)
        accel.StartSendOp(o4)
        accel.WaitSendOp()
        words = arith.ConstantOp.from_int_and_width(16, 32)
        accel.StartRecvOp(words)
        accel.WaitRecvOp()
        accel.RecvOp(c, zero, "accumulate")
        accel.RecvOp(c, zero, "replace")
        accel.FreeDmaOp()
        func.ReturnOp()
    return ModuleOp([fop])


def generic_text(module) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def test_driver_verifies_and_offsets_thread():
    module = build_driver()
    module.verify()
    ops = list(module.walk())
    send = next(o for o in ops if isinstance(o, accel.SendOp))
    assert send.offset.owner.__class__ is accel.SendLiteralOp  # the offset threads through
    assert send.new_offset.type == i32
    dim = next(o for o in ops if isinstance(o, accel.SendDimOp))
    assert dim.dim.value.data == 1


def test_f32_tiles_are_accepted():
    build_driver(MemRefType(f32, [8, 8])).verify()


def _verify_fails(op_factory, fragment):
    fop = func.FuncOp("f", ([MemRefType(i32, [4, 4]), MemRefType(i64, [4]), IndexType()], []))
    with ImplicitBuilder(fop.body) as (t32, t64, idx):
        zero = arith.ConstantOp.from_int_and_width(0, 32)
        op_factory(t32, t64, idx, zero)
        func.ReturnOp()
    with pytest.raises(VerifyException) as info:
        ModuleOp([fop]).verify()
    assert fragment in str(info.value)


def test_send_rejects_non_word_elements():
    _verify_fails(lambda t32, t64, idx, zero: accel.SendOp(t64, zero), "i32 or f32")


def test_send_dim_rejects_out_of_range_and_negative_dims():
    _verify_fails(lambda t32, t64, idx, zero: accel.SendDimOp(t32, 2, zero), "dim 2 is out of range")
    _verify_fails(lambda t32, t64, idx, zero: accel.SendDimOp(t32, -1, zero), "dim -1 is out of range")


def test_recv_rejects_unknown_mode():
    _verify_fails(lambda t32, t64, idx, zero: accel.RecvOp(t32, zero, "overwrite"), "mode must be one of")


def test_operand_types_are_checked():
    # send_idx takes an index, not an i32
    _verify_fails(lambda t32, t64, idx, zero: accel.SendIdxOp(zero, zero), "index")
    # send_literal takes an i32 word, not an index
    _verify_fails(lambda t32, t64, idx, zero: accel.SendLiteralOp(idx, zero), "i32")


def test_generic_text_reparses_in_xdsl():
    text = generic_text(build_driver())
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(arith.Arith)
    ctx.load_dialect(accel.Accel)
    module = Parser(ctx, text).parse_module()
    module.verify()
    recvs = [o for o in module.walk() if isinstance(o, accel.RecvOp)]
    assert [r.mode.data for r in recvs] == ["accumulate", "replace"]
    assert generic_text(module) == text


@pytest.mark.mlir
@pytest.mark.skipif(not os.path.exists(MLIR_OPT), reason="upstream mlir-opt not installed")
def test_generic_text_parses_in_upstream_mlir_opt():
    text = generic_text(build_driver())
    result = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--mlir-print-op-generic"],
                            input=text, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # upstream kept every accel op, with its properties
    for name in ["init_dma", "send_literal", "send", "send_dim", "send_idx", "flush_send", "start_send",
                 "wait_send", "start_recv", "wait_recv", "recv", "free_dma"]:
        assert f'"accel.{name}"' in out, name
    assert "dim = 1 : i64" in out
    assert 'mode = "accumulate"' in out and 'mode = "replace"' in out
    # and the result types: send ops return the new i32 offset
    assert '"accel.send"(%arg0, %' in out and ": (memref<4x4xi32>, i32) -> i32" in out
