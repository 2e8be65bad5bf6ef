"""``convert-linalg-to-loops`` (loom's, replacing xDSL's of the same name).

Matches: every linalg structured op with buffer (memref) semantics.
Produces: a perfect ``scf.for`` nest per op (one loop per iterator, bounds from
the operand shapes) of ``memref.load`` / scalar body / ``memref.store``,
with ``affine.apply`` for non-trivial indices (strides, dilations), exactly as
xDSL's pass does, after first rewriting ``linalg.pooling_nchw_max`` with
``loom-linalg-generalize-pooling`` (xDSL's hidden body for it is wrong).
Leaves alone: non-linalg ops; ops with tensor results make the pass fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass as _XdslLoops

from loom.passes.linalg_generalize_pooling import LinalgGeneralizePoolingPass


@dataclass(frozen=True)
class ConvertLinalgToLoopsPass(ModulePass):
    name = "loom-convert-linalg-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LinalgGeneralizePoolingPass().apply(ctx, op)
        _XdslLoops().apply(ctx, op)
