"""``loom-cse``: IR in, IR out on textual .mlir; xDSL's ``cse`` is the reference."""

from __future__ import annotations

from xdsl.parser import Parser

from loom.dialects import context
from loom.passes.pipeline import Pipeline
from tests.passes.lowered_apps import lowered_app_text

# equal loads with no store between (merged), a load after a store to the same buffer (kept), equal pure ops
# (merged), a read-only loop (dead), an equal constant in the same scope (merged)
SOURCE = """
builtin.module {
  func.func @f(%A: memref<4xi32>, %B: memref<4xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %A[%i] : memref<4xi32>
      %b = memref.load %A[%i] : memref<4xi32>
      %s = arith.addi %a, %b : i32
      %t = arith.addi %a, %b : i32
      memref.store %s, %A[%i] : memref<4xi32>
      %c = memref.load %A[%i] : memref<4xi32>
      %u = arith.muli %t, %c : i32
      memref.store %u, %B[%i] : memref<4xi32>
    }
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %B[%j] : memref<4xi32>
    }
    %c0_1 = arith.constant 0 : index
    %d = memref.load %B[%c0_1] : memref<4xi32>
    memref.store %d, %A[%c0] : memref<4xi32>
    func.return
  }
}
"""

EXPECTED = """builtin.module {
  func.func @f(%A: memref<4xi32>, %B: memref<4xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %A[%i] : memref<4xi32>
      %s = arith.addi %a, %a : i32
      memref.store %s, %A[%i] : memref<4xi32>
      %c = memref.load %A[%i] : memref<4xi32>
      %u = arith.muli %s, %c : i32
      memref.store %u, %B[%i] : memref<4xi32>
    }
    %d = memref.load %B[%c0] : memref<4xi32>
    memref.store %d, %A[%c0] : memref<4xi32>
    func.return
  }
}"""


def run(spec: str, text: str) -> str:
    return str(Pipeline.parse(spec).run(Parser(context(), text).parse_module()))


def test_merges_equal_values_keeps_reads_after_writes_drops_dead_loops():
    assert run("loom-cse", SOURCE) == EXPECTED


def test_same_ir_as_xdsl_cse():
    assert run("loom-cse", SOURCE) == run("cse", SOURCE)


def test_same_ir_as_xdsl_cse_on_a_lowered_pipeline():
    """camera_pipeline at 16x16 with the accelerator schedule, canonicalized first as lower_to_c does."""
    text = run("loom-canonicalize", lowered_app_text("camera_pipeline"))
    assert run("loom-cse", text) == run("cse", text)


# reads separated by a loop that writes (kept), by a read-only loop and an unrelated pure op (merged), by a call
# whose effects are unknown (kept), and an equal read in a nested block (not merged across blocks)
BETWEEN = """
builtin.module {
  func.func private @g() -> ()
  func.func @f(%A: memref<4xi32>, %B: memref<4xi32>, %v: i32) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.load %A[%c0] : memref<4xi32>
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %v, %B[%i] : memref<4xi32>
    }
    %b = memref.load %A[%c0] : memref<4xi32>
    %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %v) -> (i32) {
      %x = memref.load %B[%j] : memref<4xi32>
      %y = memref.load %A[%c0] : memref<4xi32>
      %s = arith.addi %x, %y : i32
      scf.yield %s : i32
    }
    %c = memref.load %A[%c0] : memref<4xi32>
    func.call @g() : () -> ()
    %d = memref.load %A[%c0] : memref<4xi32>
    %t0 = arith.addi %a, %b : i32
    %t1 = arith.addi %t0, %c : i32
    %t2 = arith.addi %t1, %d : i32
    %t3 = arith.addi %t2, %r : i32
    func.return %t3 : i32
  }
}
"""


def test_reads_across_loops_and_calls_as_xdsl_cse():
    out = run("loom-cse", BETWEEN)
    assert out == run("cse", BETWEEN)
    body = out.split("func.func @f", 1)[1]
    # %a, %b (after the writing loop), %y (its own block), %d (after the call): 4 loads of A; %c merged into %b
    assert body.count("memref.load %A") == 4, out
