"""``linalg-generalize-named-ops`` (loom's, replacing xDSL's of the same name).

Matches: linalg named ops (matmul, conv_*, pooling_*, fill, copy, element-wise).
Produces: ``linalg.generic`` with the named op's indexing maps, iterator types
and body: pooling ops via ``loom-linalg-generalize-pooling`` (xDSL's hidden
body for ``pooling_nchw_max`` is wrong), the rest via xDSL's pass.
Leaves alone: ``linalg.generic`` and non-linalg ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass as _XdslGeneralize

from loom.passes.linalg_generalize_pooling import LinalgGeneralizePoolingPass


@dataclass(frozen=True)
class LinalgGeneralizeNamedOpsPass(ModulePass):
    name = "loom-linalg-generalize-named-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LinalgGeneralizePoolingPass().apply(ctx, op)
        _XdslGeneralize().apply(ctx, op)
