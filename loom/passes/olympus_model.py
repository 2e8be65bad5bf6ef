"""Analyses of an olympus system: resource and bandwidth utilisation, and a throughput model.

Model (one *iteration* = every kernel instance fires once):
- a kernel instance needs ``ii`` cycles at the platform clock per firing; all run in parallel;
- a channel moves ``n`` elements per firing (``depth``; for ``complex`` channels depth is
  bytes, so ``8 * depth / width``); on a memory pseudo-channel (PC) of W bits a plain
  channel takes one beat per element (``ceil(width / W)`` if wider); a widened channel
  (L lanes, L kernels) carries one element of every lane per beat; a bundle packs its
  channels' bits densely: ``ceil(bits / W)`` beats;
- time per iteration = max(kernel time, busiest PC's beats / memory clock);
- throughput (items/s) = instances of the original kernel x iterations/s; bandwidth
  efficiency of a PC = useful bits / (beats x W).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from xdsl.dialects.builtin import ModuleOp

from loom.dialects.olympus import BundleOp, ChannelOp, KernelOp, PcOp, RESOURCES


@dataclass
class SystemReport:
    resources: dict[str, tuple[int, int]]          # used, available
    pcs: dict[int, tuple[int, int, int]]           # id -> beats per iteration, useful bits, width
    kernel_seconds: float
    pc_seconds: float
    items_per_second: float
    bottleneck: str

    def utilization(self, r: str) -> float:
        used, avail = self.resources[r]
        if not avail:  # a platform without this resource (uram: 0): any use of it cannot fit
            return float("inf") if used else 0.0
        return used / avail

    def efficiency(self) -> float:
        beats = sum(b * w for b, _, w in self.pcs.values())
        return sum(u for _, u, _ in self.pcs.values()) / beats if beats else 1.0

    def rows(self) -> list[list[object]]:
        rows = [[f"resource {r}", f"{self.resources[r][0]}/{self.resources[r][1]}", f"{100 * self.utilization(r):.1f}%"]
                for r in RESOURCES]
        for pc, (beats, bits, w) in sorted(self.pcs.items()):
            rows.append([f"PC {pc} bandwidth efficiency", f"{beats} beats x {w} b", f"{100 * bits / (beats * w):.1f}%"])
        rows.append(["bus efficiency (all PCs)", "", f"{100 * self.efficiency():.1f}%"])
        rows.append(["predicted items/s", self.bottleneck, f"{self.items_per_second:.4g}"])
        return rows


def elements(ch: ChannelOp) -> int:
    n = ch.depth.value.data
    return ceil(8 * n / ch.width) if ch.paramType.data == "complex" else n


def element_bits(ch: ChannelOp) -> int:
    return ch.width // ch.n_lanes


BRAM_BITS = 18 * 1024


def brams(ch: ChannelOp) -> int:
    return ceil(ch.depth.value.data * ch.width / BRAM_BITS)


def plm_brams(module: ModuleOp) -> int:
    """BRAMs of the ``small`` channels (on-chip buffers); a sharing group counts once, as its largest member."""
    groups: dict = {}
    total = 0
    for ch in (o for o in module.walk() if isinstance(o, ChannelOp) and o.paramType.data == "small"):
        if ch.share is None:
            total += brams(ch)
        else:
            g = ch.share.value.data
            groups[g] = max(groups.get(g, 0), brams(ch))
    return total + sum(groups.values())


def pcs(module: ModuleOp) -> list[PcOp]:
    return [op for op in module.walk() if isinstance(op, PcOp)]


def kernels(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.walk() if isinstance(op, KernelOp)]


def analyse(module: ModuleOp, platform) -> SystemReport:
    ks = kernels(module)
    used = {r: sum(k.resources()[r] for k in ks) for r in RESOURCES}
    used["bram"] += plm_brams(module)
    W = platform.memory_width_bits
    loads: dict[int, list[int]] = {}
    for pc in pcs(module):
        src = pc.channel.owner
        if isinstance(src, BundleOp):
            bits = sum(elements(c.owner) * element_bits(c.owner) * c.owner.n_lanes for c in src.channels)
            beats = ceil(bits / W)
        else:  # one beat carries one element of every lane
            n = elements(src)
            beats, bits = n * ceil(src.width / W), n * src.width
        load = loads.setdefault(pc.id.value.data, [0, 0])
        load[0] += beats
        load[1] += bits
    kernel_s = max((k.ii.value.data for k in ks), default=0) / (platform.clock_mhz * 1e6)
    pc_s = max((b for b, _ in loads.values()), default=0) / (platform.memory_clock_mhz * 1e6)
    per_iter = max(kernel_s, pc_s)
    instances = _instances(ks)
    rate = instances / per_iter if per_iter else 0.0
    if pc_s > kernel_s:
        pc_id = max(loads, key=lambda i: loads[i][0])
        bottleneck = f"memory channel {pc_id}"
    else:
        slow = max(ks, key=lambda k: k.ii.value.data)
        bottleneck = f"kernel {slow.callee.data} (ii {slow.ii.value.data})"
    return SystemReport(dict((r, (used[r], platform.resources[r])) for r in RESOURCES),
                        {i: (b, u, W) for i, (b, u) in loads.items()}, kernel_s, pc_s, rate, bottleneck)


def _instances(ks: list[KernelOp]) -> int:
    """How many copies of the original kernel exist (replicas x lanes): items per iteration."""
    if not ks:
        return 0
    first = ks[0].callee.data
    return sum(1 for k in ks if k.callee.data == first)
