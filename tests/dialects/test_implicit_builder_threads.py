"""xDSL's implicit builder used on several threads at once (parsing linalg named ops builds their bodies with it).

xDSL 0.74 hooks op creation process-wide while its builder is per thread; without
``loom.dialects.implicit_builder`` most of these failed (ParseError at a linalg op, "Can't add to a block an
operation already attached to a block", an empty matmul body).
"""

from __future__ import annotations

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Block
from xdsl.parser import Parser

from loom.dialects import context
from tests.threads import run_together

TEXT = """
func.func @mm(%a: memref<4x3xi32>, %b: memref<3x5xi32>, %c: memref<4x5xi32>) {
  linalg.matmul ins(%a, %b : memref<4x3xi32>, memref<3x5xi32>) outs(%c : memref<4x5xi32>)
  linalg.matmul ins(%a, %b : memref<4x3xi32>, memref<3x5xi32>) outs(%c : memref<4x5xi32>)
  func.return
}
"""


def test_threads_parse_linalg_ops_as_one_thread_does():
    expected = str(Parser(context(), TEXT).parse_module())

    def parse(t: int, r: int) -> None:
        module = Parser(context(), TEXT).parse_module()
        module.verify()
        assert str(module) == expected, "differs from the one-thread parse"

    failures = run_together(parse)
    assert not failures, f"{len(failures)} parses failed; first: {failures[0][:300]}"


def test_each_thread_builds_into_its_own_block():
    def build(t: int, r: int) -> None:
        block = Block()
        with ImplicitBuilder(block):
            ops = [arith.ConstantOp(IntegerAttr(k, i32)) for k in range(20)]
        assert list(block.ops) == ops  # each op once, in this thread's block

    failures = run_together(build)
    assert not failures, f"{len(failures)} blocks wrong; first: {failures[0][:300]}"
