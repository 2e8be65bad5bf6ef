"""olympus-buffer-sharing: one on-chip buffer for ``small`` channels with disjoint lifetimes (§5.3, Mnemosyne).

Matches: ``small`` channels written by one kernel and read by a later one. A channel
lives from its producer's position to its consumer's position in the kernels' order
(a topological order of one iteration). Produces: ``share = g`` on every such channel,
channels of one group having pairwise disjoint lifetimes (interval colouring, greedy by
start: the fewest groups); a group needs the BRAM of its largest member only.
Leaves alone: stream and complex channels, small channels without two kernel ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass

from loom.dialects.olympus import ChannelOp, KernelOp
from loom.passes.olympus_model import kernels

def lifetimes(module: ModuleOp) -> dict[ChannelOp, tuple[int, int]]:
    order = {k: n for n, k in enumerate(kernels(module))}
    spans = {}
    for ch in (o for o in module.walk() if isinstance(o, ChannelOp) and o.paramType.data == "small"):
        writers = [order[u.operation] for u in ch.result.uses
                   if isinstance(u.operation, KernelOp) and ch.result in u.operation.outputs]
        readers = [order[u.operation] for u in ch.result.uses
                   if isinstance(u.operation, KernelOp) and ch.result in u.operation.inputs]
        if writers and readers:
            spans[ch] = (min(writers), max(readers))
    return spans


@dataclass(frozen=True)
class OlympusBufferSharingPass(ModulePass):
    name = "olympus-buffer-sharing"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ends: list[int] = []  # last use of each group
        for ch, (start, end) in sorted(lifetimes(op).items(), key=lambda kv: kv[1]):
            for g, last in enumerate(ends):
                if last < start:  # disjoint: the buffer is free again
                    ends[g] = end
                    break
            else:
                g = len(ends)
                ends.append(end)
            ch.share = IntegerAttr(g, 64)
