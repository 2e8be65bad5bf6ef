"""``loom-specialize-dims``: IR in, IR out on textual .mlir."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from loom.dialects import context
from loom.errors import LoomError
from loom.passes.pipeline import Pipeline

SOURCE = """
builtin.module {
  func.func @scale(%A: memref<?x?xf32> {loom.dims = ["M", "N"]}, %B: memref<?x4xf32> {loom.dims = ["M", "K"]}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m = memref.dim %A, %c0 : memref<?x?xf32>
    %n = memref.dim %A, %c1 : memref<?x?xf32>
    scf.for %i = %c0 to %m step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %x = memref.load %A[%i, %j] : memref<?x?xf32>
        memref.store %x, %B[%i, %c0] : memref<?x4xf32>
      }
    }
    func.return
  }
}
"""

EXPECTED = """builtin.module {
  func.func @scale(%A: memref<8x3xf32> {loom.dims = ["M", "N"]}, %B: memref<8x4xf32> {loom.dims = ["M", "K"]}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m = arith.constant 8 : index
    %n = arith.constant 3 : index
    scf.for %i = %c0 to %m step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %x = memref.load %A[%i, %j] : memref<8x3xf32>
        memref.store %x, %B[%i, %c0] : memref<8x4xf32>
      }
    }
    func.return
  }
}"""


def parse(text: str):
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def test_named_dims_become_static_and_dim_ops_constants():
    out = Pipeline.parse('loom-specialize-dims{dims="M=8,N=3"}').run(parse(SOURCE))
    out.verify()
    assert str(out) == EXPECTED


def test_unknown_names_leave_the_module_alone():
    out = Pipeline.parse('loom-specialize-dims{dims="Q=8"}').run(parse(SOURCE))
    assert str(out) == str(parse(SOURCE))


def test_contradicting_a_static_axis_is_an_error():
    with pytest.raises(LoomError, match=r"K=5 but axis 1 of argument 1 of @scale is 4"):
        Pipeline.parse('loom-specialize-dims{dims="K=5"}').run(parse(SOURCE))


@pytest.mark.parametrize("text", ["M", "M=0", "M=-2", "=4", "M=4,,N=x", "1M=3"])
def test_bad_dims_text_names_the_item(text):
    with pytest.raises(LoomError, match="bad dims entry"):
        Pipeline.parse(f'loom-specialize-dims{{dims="{text}"}}').run(parse(SOURCE))


CALLER = SOURCE.replace("    func.return\n  }\n}", """    func.return
  }
  func.func @caller(%A: memref<?x?xf32> {loom.dims = ["M", "N"]}, %B: memref<?x4xf32> {loom.dims = ["M", "K"]}) {
    func.call @scale(%A, %B) : (memref<?x?xf32>, memref<?x4xf32>) -> ()
    func.return
  }
}""")


def test_a_caller_and_its_callee_naming_their_axes_alike_are_specialized_together():
    """It was refused (any function called inside the module); scale_rows calling scale_row could not reach HLS."""
    out = Pipeline.parse('loom-specialize-dims{dims="M=8,N=3"}').run(parse(CALLER))
    out.verify()
    text = str(out)
    assert "func.func @caller(%A: memref<8x3xf32>" in text and "func.func @scale(%A: memref<8x3xf32>" in text
    assert "func.call @scale(%A, %B) : (memref<8x3xf32>, memref<8x4xf32>) -> ()" in text


def test_a_call_from_a_caller_without_names_is_refused_naming_both():
    text = CALLER.replace('%A: memref<?x?xf32> {loom.dims = ["M", "N"]}, %B: memref<?x4xf32> {loom.dims = ["M", "K"]}) '
                          '{\n    func.call', '%A: memref<?x?xf32>, %B: memref<?x4xf32>) {\n    func.call')
    assert text != CALLER
    with pytest.raises(LoomError, match=r"@caller passes memref<\?x\?xf32> as argument 0 of @scale, which now takes "
                                        r"memref<8x\?xf32>"):
        Pipeline.parse('loom-specialize-dims{dims="M=8"}').run(parse(text))
