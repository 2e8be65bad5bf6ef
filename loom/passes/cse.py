"""``loom-cse``: xDSL's ``cse`` (same scopes, same op equivalence, same erasures) with the effect checks of
``loom.passes.effects``, which stop at the first effect that decides.

Matches: every op, as xDSL's pass does. Produces: the IR xDSL's ``cse`` produces.
Why: xDSL 0.74 asks three effect questions of every loop, each walking its whole body (the pipelines' loop nests:
over half of cse's time), and decides whether a read may reuse an earlier equal one by walking every op between
them, asking each for its effects (quadratic in a block's length: two thirds of cse's time on camera_pipeline).
Here each block counts the ops that may write as the driver passes them, in order, and a read may reuse an earlier
one of the same block when the count has not moved since (the same answer: no op in between may write).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, MemoryEffectKind
from xdsl.transforms.common_subexpression_elimination import CSEDriver

from loom.passes.effects import effects_only, is_side_effect_free, is_trivially_dead, only_reads


def _may_write(op: Operation) -> bool:
    """xDSL's test for an op between two reads: its effects are unknown or include a write."""
    return not effects_only(op, lambda e: e.kind is not MemoryEffectKind.WRITE)


@dataclass
class _CSEDriver(CSEDriver):
    _writes: dict[Block, int] = field(default_factory=dict)  # ops that may write, passed so far per block
    _read_at: dict[Operation, int] = field(default_factory=dict)  # a known read: its block's count then

    def _simplify_operation(self, op: Operation):
        block = op.parent_block()
        self._simplify_one(op, block, self._writes.get(block, 0))
        if _may_write(op):
            self._writes[block] = self._writes.get(block, 0) + 1

    def _simplify_one(self, op: Operation, block: Block | None, writes: int):  # xDSL's, with loom's checks
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
            if (existing := self._known_ops.get(op)) and block is existing.parent_block() \
                    and self._read_at.get(existing) == writes:
                self._replace_and_delete(op, existing)
                return
            self._known_ops[op] = op
            self._read_at[op] = writes
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
