"""olympus-bus-packing: interleave several memory channels on one bus (Iris-style, §5.4.2).

Matches: plain (one-lane) channels that have an ``olympus.pc``, grouped by PC id and
direction (kernel inputs / kernel outputs), when a group has two or more channels.
Produces: one ``olympus.bundle`` of the group's channels, as wide as the bus, whose
``layout`` lists one period: the elements of each channel per group (their per-firing
counts reduced by their gcd), packed back to back, elements split across beats where
needed, so a period fills whole beats; one ``olympus.pc`` (the group's id) on the bundle
replaces the members' PCs. Leaves alone: channels with lanes, kernel-to-kernel
channels, groups of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd, lcm
from functools import reduce

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from loom.dialects.olympus import BundleOp, ChannelOp, KernelOp, PcOp
from loom.passes.olympus_common import platform_of
from loom.passes.olympus_model import elements, pcs


def layout(chans: list[ChannelOp], bus: int) -> str:
    counts = [elements(c) for c in chans]
    g = reduce(gcd, counts)
    per_group = [n // g for n in counts]
    group_bits = sum(n * c.width for n, c in zip(per_group, chans))
    period_bits = lcm(group_bits, bus)
    parts = ", ".join(f"{c.result.name_hint or f'ch{k}'}:{n}x{c.width}b" for k, (n, c) in
                      enumerate(zip(per_group, chans)))
    return f"{period_bits // group_bits} x [{parts}] in {period_bits // bus} beats of {bus} b"


def _direction(ch: ChannelOp) -> str | None:
    for u in ch.result.uses:
        if isinstance(u.operation, KernelOp):
            return "in" if ch.result in u.operation.inputs else "out"
    return None


@dataclass(frozen=True)
class OlympusBusPackingPass(ModulePass):
    name = "olympus-bus-packing"
    platform: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bus = platform_of(self.platform, self.name).memory_width_bits
        groups: dict[tuple[int, str], list[tuple[PcOp, ChannelOp]]] = {}
        for pc in pcs(op):
            ch = pc.channel.owner
            if isinstance(ch, ChannelOp) and ch.n_lanes == 1 and ch.width < bus:
                d = _direction(ch)
                if d is not None:
                    groups.setdefault((pc.id.value.data, d), []).append((pc, ch))
        for (pc_id, _), members in groups.items():
            if len(members) < 2:
                continue
            order = {o: n for n, o in enumerate(op.body.block.ops)}
            chans = sorted((c for _, c in members), key=lambda c: order.get(c, 0))  # declaration order
            last = members[-1][0]
            bundle = BundleOp([c.result for c in chans], bus, layout(chans, bus))
            Rewriter.insert_op([bundle, PcOp(bundle.result, pc_id)], InsertPoint.after(last))
            for pc, _ in members:
                Rewriter.erase_op(pc)
