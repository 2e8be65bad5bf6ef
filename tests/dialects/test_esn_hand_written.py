"""Hand-written esn IR (xdsl-opt -p convert-esn-to-linalg): what elaboration guarantees for EKL is checked by the
verifier, with messages naming the index and the axis, instead of a crash or a silently different lowering."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import VerifyException

from loom.dialects import context
from loom.dialects.parsing import text_parser
from loom.passes import Pipeline


def _let(target: int, extent: int, position: int, subscript: str) -> str:
    return f"""func.func @f(%T: memref<3x5xf64>, %o: memref<{target}xf64>) {{
  %0 = arith.constant {extent} : index
  %1 = arith.constant 3 : index
  "esn.let"(%0, %1, %o) <{{kind = "+", operandSegmentSizes = array<i32: 2, 1>}}> ({{
  ^bb0(%3: index):
    %4 = esn.reduction {position} : i64
    %6 = esn.subscript %T[{subscript}] : memref<3x5xf64> -> f64
    esn.yield %6 : f64
  }}, {{
  ^bb0(%7: f64, %8: f64):
    %9 = arith.addf %7, %8 : f64
    esn.yield %9 : f64
  }}) : (index, index, memref<{target}xf64>) -> ()
  func.return
}}"""


def test_a_consistent_let_lowers_to_a_column_sum():
    module = text_parser(context(), _let(5, 5, 0, "%4, %3")).parse_module()
    module.verify()
    Pipeline.parse("convert-esn-to-linalg").run(module)
    assert "linalg.generic" in str(module)


@pytest.mark.parametrize("target, extent, position, subscript, message", [
    # position 4 crashed the lowering with IndexError; -1 read Python's last slot and lowered to other IR
    (5, 5, 4, "%4, %3", r"reduction positions \[4\]: expected each of 0..0 once"),
    (5, 5, -1, "%4, %3", r"reduction positions \[-1\]"),
    # an extent of 7 for an axis of 5 lowered silently over 5
    (5, 7, 0, "%4, %3", r"bound index 0 has extent 7 but indexes axis 0 of size 5 \(the target"),
    (4, 4, 0, "%4, %3", r"bound index 0 has extent 4 but indexes axis 1 of size 5 \(esn.subscript"),
    (5, 5, 0, "%3, %4", r"bound index 0 has extent 5 but indexes axis 0 of size 3 \(esn.subscript"),
])
def test_inconsistent_lets_are_refused_by_the_verifier(target, extent, position, subscript, message):
    module = text_parser(context(), _let(target, extent, position, subscript)).parse_module()
    with pytest.raises(VerifyException, match=message):
        module.verify()
