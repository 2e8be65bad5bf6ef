"""``loom-linalg-generalize-pooling``: named pooling ops -> ``linalg.generic``.

Matches: ``linalg.pooling_nchw_max`` (the only pooling op xDSL 0.74 defines).
Produces: a ``linalg.generic`` with the op's indexing maps and iterator types
whose body is ``out = max(out, in)`` (``arith.maximumf`` / ``arith.maxsi``),
the body MLIR defines. xDSL's own hidden region for this op combines the input
with the *window* operand instead of the output, so its
``linalg-generalize-named-ops`` / ``convert-linalg-to-loops`` give wrong
numbers; run this pass before them.
Leaves alone: every other op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, MemRefType, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as lops
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


class _GeneralizePoolingMax(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lops.PoolingNchwMaxOp, rewriter: PatternRewriter) -> None:
        types = [
            v.type.get_element_type() if isinstance(v.type, MemRefType | TensorType) else v.type
            for v in op.operands
        ]
        block = Block(arg_types=types)
        maximum = arith.MaximumfOp if isinstance(types[-1], AnyFloat) else arith.MaxSIOp
        with ImplicitBuilder(block) as (value, _window, acc):
            lops.YieldOp(maximum(acc, value).result)
        generic = lops.GenericOp(
            op.inputs, op.outputs, Region(block),
            op.get_indexing_maps(), op.get_iterator_types(), op.result_types,
        )
        rewriter.replace(op, generic)


@dataclass(frozen=True)
class LinalgGeneralizePoolingPass(ModulePass):
    name = "loom-linalg-generalize-pooling"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_GeneralizePoolingMax(), apply_recursively=False).rewrite_module(op)
