"""olympus-channel-reassignment: spread memory traffic over the platform's memory channels.

Matches: ``olympus.pc`` ops (in order). Produces: distinct ids 0, 1, 2, ... (round robin
when there are more PCs than the platform's ``memory.channels``); replicas of one PC
(same id before, created by replication) move together. Leaves alone: kernels, channels.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass

from loom.passes.olympus_common import platform_of
from loom.passes.olympus_model import pcs


@dataclass(frozen=True)
class OlympusChannelReassignmentPass(ModulePass):
    name = "olympus-channel-reassignment"
    platform: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        n = platform_of(self.platform, self.name).memory_channels
        for k, pc in enumerate(pcs(op)):
            pc.id = IntegerAttr(k % n, 64)
