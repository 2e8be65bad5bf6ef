"""``arith.remf``, which xDSL 0.74's arith dialect lacks: the float remainder with the sign of the dividend (C's
``fmod``; LLVM's ``frem``). The kernel frontend builds Python's float ``%`` and ``//`` on it (an exact remainder:
``a - floor(a / b) * b`` gave ``1.0 % 0.1 == 0.0`` where Python gives 0.0999...); the C backend emits ``fmod``,
upstream MLIR has the op natively."""

from __future__ import annotations

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    name = "arith.remf"

    traits = traits_def(Pure())
