"""``loom-cse``: xDSL's ``cse`` (same scopes, same op equivalence, same erasures) with the effect checks of
``loom.passes.effects``, which stop at the first effect that decides.

Matches: every op, as xDSL's pass does. Produces: the IR xDSL's ``cse`` produces.
Why: xDSL 0.74 asks three effect questions of every loop, each walking its whole body (the pipelines' loop nests:
over half of cse's time).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator
from xdsl.transforms.common_subexpression_elimination import CSEDriver, has_other_side_effecting_op_in_between

from loom.passes.effects import is_side_effect_free, is_trivially_dead, only_reads


class _CSEDriver(CSEDriver):
    def _simplify_operation(self, op: Operation):  # xDSL's, with loom's checks
        if op.has_trait(IsTerminator):
            return
        if is_trivially_dead(op):
            self._mark_erasure(op)
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        if not is_side_effect_free(op):
            if not only_reads(op):
                return
            # a read: replaceable by an earlier one in the same block with no write in between
            if (existing := self._known_ops.get(op)) and op.parent_block() is existing.parent_block() \
                    and not has_other_side_effecting_op_in_between(existing, op):
                self._replace_and_delete(op, existing)
                return
            self._known_ops[op] = op
            return
        if existing := self._known_ops.get(op):
            self._replace_and_delete(op, existing)
            return
        self._known_ops[op] = op


@dataclass(frozen=True)
class LoomCSEPass(ModulePass):
    name = "loom-cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _CSEDriver().simplify(op)
