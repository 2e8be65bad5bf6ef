"""olympus-sanitize: make the system description hardware-ready (D4.5 §5.4.2, Sanitize step).

Matches: every ``olympus.channel``; channels touching global memory are those of paramType
``complex``, ``persistent`` ones, and those used by only one kernel (the other end is memory).
Produces: ``lanes = 1`` on every channel without a layout (one element wide, ``depth``
deep), and one ``olympus.pc {id = 0}`` per memory-touching channel that has none (all on
the same physical channel: always implementable).
Leaves alone: kernels, channels between two kernels, channels that already have a PC.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from loom.dialects.olympus import ChannelOp, KernelOp, PcOp


def touches_memory(ch: ChannelOp) -> bool:
    kernel_uses = [u for u in ch.result.uses if isinstance(u.operation, KernelOp)]
    return ch.paramType.data == "complex" or ch.persistent is not None or len(kernel_uses) < 2


@dataclass(frozen=True)
class OlympusSanitizePass(ModulePass):
    name = "olympus-sanitize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for ch in [o for o in op.walk() if isinstance(o, ChannelOp)]:
            if ch.lanes is None:
                ch.lanes = IntegerAttr(1, 64)
            has_pc = any(isinstance(u.operation, PcOp) for u in ch.result.uses)
            if touches_memory(ch) and not has_pc:
                Rewriter.insert_op(PcOp(ch.result, 0), _after_last_use(ch))


def _after_last_use(ch: ChannelOp):
    from xdsl.rewriter import InsertPoint

    users = [u.operation for u in ch.result.uses]
    block = ch.parent_block()
    last = ch
    for op in block.ops:  # type: ignore[union-attr]
        if op in users:
            last = op
    return InsertPoint.after(last)
