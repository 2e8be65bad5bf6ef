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
from xdsl.dialects.builtin import ModuleOp, UnknownLoc
from xdsl.passes import ModulePass
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass as _XdslGeneralize

from loom.passes.linalg_generalize_pooling import LinalgGeneralizePoolingPass


@dataclass(frozen=True)
class LinalgGeneralizeNamedOpsPass(ModulePass):
    name = "loom-linalg-generalize-named-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before = [o.location for o in _structured(op)]
        LinalgGeneralizePoolingPass().apply(ctx, op)
        _XdslGeneralize().apply(ctx, op)
        after = _structured(op)
        if len(after) == len(before):  # one generic per op, in place: keep each op's source location
            for generic, location in zip(after, before):
                if isinstance(generic.location, UnknownLoc):
                    generic.location = location


def _structured(op: ModuleOp) -> list:
    return [o for o in op.walk() if o.name.startswith("linalg.") and o.name not in ("linalg.yield", "linalg.index")]
