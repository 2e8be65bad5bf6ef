"""olympus-bus-widening: fill a wide memory bus with lanes of narrow data (§5.4.2, [39]).

Matches: each kernel whose memory channels (those with an ``olympus.pc``) all carry w-bit
data with w dividing the platform's bus width W, w < W, and are used by this kernel only.
Produces: L = W / w lanes (fewer if resources would pass the utilisation limit): every
such channel becomes ``!olympus.channel<i(L*w)>`` with ``lanes = L``; L kernels (``lane``
0..L-1) share the widened channels, each using one lane. 64-bit data on a 256-bit bus -> 4.
Leaves alone: kernels with no memory channel, with kernel-to-kernel channels, or with
widths that do not divide W.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from loom.dialects.olympus import RESOURCES, ChannelOp, KernelOp, PcOp
from loom.passes.olympus_common import platform_of
from loom.passes.olympus_model import kernels


def _memory_channels(k: KernelOp) -> list[ChannelOp] | None:
    chans = []
    for v in (*k.inputs, *k.outputs):
        ch = v.owner
        users = [u.operation for u in v.uses]
        if not isinstance(ch, ChannelOp) or not any(isinstance(u, PcOp) for u in users):
            return None
        if sum(isinstance(u, KernelOp) for u in users) != 1:
            return None
        chans.append(ch)
    return chans or None


@dataclass(frozen=True)
class OlympusBusWideningPass(ModulePass):
    name = "olympus-bus-widening"
    platform: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = platform_of(self.platform, self.name)
        W = plat.memory_width_bits
        used = {r: sum(k.resources()[r] for k in kernels(op)) for r in RESOURCES}
        for k in kernels(op):
            chans = _memory_channels(k)
            if chans is None or any(c.n_lanes != 1 or W % c.width or c.width >= W for c in chans):
                continue
            lanes = min(W // c.width for c in chans)
            res = k.resources()
            while lanes > 1 and any(used[r] + (lanes - 1) * res[r] > plat.utilization_limit * plat.resources[r]
                                    for r in RESOURCES):
                lanes -= 1
            if lanes < 2:
                continue
            for c in chans:
                depth = c.depth.value.data * (lanes if c.paramType.data == "complex" else 1)  # complex: bytes of all lanes
                wide = ChannelOp(c.width * lanes, c.paramType.data, depth, lanes)
                wide.persistent = c.persistent
                wide.result.name_hint = c.result.name_hint
                Rewriter.replace_op(c, wide)
            k.lane = IntegerAttr(0, 64)
            for lane in range(1, lanes):
                copy = k.clone()
                copy.lane = IntegerAttr(lane, 64)
                Rewriter.insert_op(copy, InsertPoint.after(k))
            for r in RESOURCES:
                used[r] += (lanes - 1) * res[r]
