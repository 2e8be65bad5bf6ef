"""loom.oracle.verify / opt / to_generic_text against upstream mlir-opt."""

from __future__ import annotations

import pytest

from loom.errors import LoomError
from loom.oracle import mlir

pytestmark = pytest.mark.mlir

GOOD = """
func.func @add(%a: f32, %b: f32) -> f32 {
  %c = arith.addf %a, %b : f32
  return %c : f32
}
"""

# Type error on line 3: adding an f32 to an i32.
BAD = """
func.func @add(%a: f32, %b: i32) -> f32 {
  %c = arith.addf %a, %b : f32
  return %c : f32
}
"""

AFFINE_LOOP = """
func.func @fill(%m: memref<8xf32>, %v: f32) {
  affine.for %i = 0 to 8 {
    affine.store %v, %m[%i] : memref<8xf32>
  }
  return
}
"""


def test_verify_accepts_good_ir():
    assert mlir.verify(GOOD) is None


def test_verify_reports_upstream_diagnostic():
    with pytest.raises(LoomError) as info:
        mlir.verify(BAD)
    text = str(info.value)
    assert text.startswith("mlir-opt:")
    assert "<stdin>:3:" in text  # the line of the offending op
    assert "error:" in text and "%b" in text


def test_verify_rejects_a_return_type_mismatch():
    bad = GOOD.replace("return %c : f32", "%z = arith.constant 0 : i32\n  return %z : i32")
    with pytest.raises(LoomError, match="type of return operand"):
        mlir.verify(bad)


def test_opt_runs_passes_given_as_string_or_list():
    for passes in ("--lower-affine", ["lower-affine"]):
        lowered = mlir.opt(AFFINE_LOOP, passes)
        assert "scf.for" in lowered and "affine.for" not in lowered
    both = mlir.opt(AFFINE_LOOP, "lower-affine --convert-scf-to-cf")
    assert "cf.br" in both and "scf.for" not in both


def test_opt_unknown_pass_is_a_loom_error():
    with pytest.raises(LoomError, match="no-such-pass"):
        mlir.opt(GOOD, ["--no-such-pass"])


def _custom_op_module():
    from xdsl.dialects.builtin import ModuleOp, i32
    from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def

    @irdl_op_definition
    class PingOp(IRDLOperation):
        """An op of a dialect upstream MLIR has never heard of."""

        name = "loomtest.ping"
        out = result_def(i32)

    return ModuleOp([PingOp.create(result_types=[i32])])


def test_xdsl_module_with_custom_op_needs_generic_form():
    module = _custom_op_module()
    generic = mlir.to_generic_text(module)
    assert '"loomtest.ping"() : () -> i32' in generic
    assert '"builtin.module"()' in generic
    mlir.verify(module, allow_unregistered=True)
    assert '"loomtest.ping"' in mlir.opt(generic, [], allow_unregistered=True)
    with pytest.raises(LoomError, match="unregistered"):
        mlir.verify(generic)


def test_non_ir_input_is_a_loom_error():
    with pytest.raises(LoomError, match="expected MLIR text or an xDSL operation"):
        mlir.verify(42)
