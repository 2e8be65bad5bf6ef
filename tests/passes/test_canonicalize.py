"""``loom-canonicalize``: IR in, IR out on textual .mlir; xDSL's ``canonicalize`` is the reference."""

from __future__ import annotations

from xdsl.parser import Parser

from loom.dialects import context
from loom.passes.pipeline import Pipeline
from tests.passes.lowered_apps import lowered_app_text

# a loop nest that only reads (dead), one whose store sits below pure ops and a one-trip loop (live), a constant
# expression inside a loop (folded and hoisted), an unused subtraction (dead)
SOURCE = """
builtin.module {
  func.func @f(%A: memref<4x4xi32>, %B: memref<4x4xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %x = memref.load %A[%i, %j] : memref<4x4xi32>
        %y = arith.addi %x, %x : i32
      }
    }
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %k = arith.constant 3 : i32
        %two = arith.constant 2 : i32
        %five = arith.addi %k, %two : i32
        %x = memref.load %A[%i, %j] : memref<4x4xi32>
        %y = arith.muli %x, %five : i32
        %unused = arith.subi %x, %k : i32
        scf.for %k1 = %c0 to %c1 step %c1 {
          memref.store %y, %B[%i, %j] : memref<4x4xi32>
        }
      }
    }
    func.return
  }
}
"""

EXPECTED = """builtin.module {
  func.func @f(%A: memref<4x4xi32>, %B: memref<4x4xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %five = arith.constant 5 : i32
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %x = memref.load %A[%i, %j] : memref<4x4xi32>
        %y = arith.muli %x, %five : i32
        memref.store %y, %B[%i, %j] : memref<4x4xi32>
      }
    }
    func.return
  }
}"""


def run(spec: str, text: str) -> str:
    module = Parser(context(), text).parse_module()
    return str(Pipeline.parse(spec).run(module))


def test_dead_loops_erased_live_ones_kept_constants_folded():
    assert run("loom-canonicalize", SOURCE) == EXPECTED


def test_same_ir_as_xdsl_canonicalize():
    assert run("loom-canonicalize", SOURCE) == run("canonicalize", SOURCE)


def test_same_ir_as_xdsl_canonicalize_on_a_lowered_pipeline():
    """harris at 16x16 with the accelerator schedule: nests of depth 5, unrolled 3x3 windows, allocas."""
    text = lowered_app_text("harris")
    assert run("loom-canonicalize", text) == run("canonicalize", text)
