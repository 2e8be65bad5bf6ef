"""PE and MEM counts of a scheduled streaming design (thesis Tables 5.3, 6.1 and 6.6).

``count_resources(design)`` counts, per compute stage, the PEs of its kernel (``kernel_netlist``:
one per operator after constant folding, identities and common subexpressions) times its copies
(pixels per cycle x dimensions unrolled in space), and the memory tiles of the design's memory
mapping (``memory_map``: line delays, addressed and accumulation memories) plus one ROM tile per
lookup table (a ROM is a memory tile addressed by data, thesis §3.5). Shift registers are counted
as the memory mapping places them. A stage whose kernel needs no PE (a cast, a copy) is a wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kernel_ir import constant_contents, kernel_regions
from .kernel_netlist import KernelNetlist, kernel_netlist
from .memory_map import MemoryMap, map_memories
from .memory_tile import AMBER_MEMORY_TILE, MemoryTile
from .scheduler import Design


@dataclass
class StageResources:
    name: str
    pes_per_copy: int
    copies: int  # hardware copies: lanes x extents of the dimensions unrolled in space
    rom_reads: int = 0
    netlist: KernelNetlist | None = None

    @property
    def pes(self) -> int:
        return self.pes_per_copy * self.copies


@dataclass
class Resources:
    stages: dict  # compute stage name -> StageResources
    memory: MemoryMap
    rom_tiles: dict = field(default_factory=dict)  # constant table -> memory tiles

    @property
    def pes(self) -> int:
        return sum(s.pes for s in self.stages.values())

    @property
    def kernels(self) -> int:
        """Compute kernels placed in hardware (copies included; stages without a PE are wires)."""
        return sum(s.copies for s in self.stages.values() if s.pes_per_copy)

    @property
    def mems(self) -> int:
        return self.memory.mem_tiles + sum(self.rom_tiles.values())

    @property
    def shift_registers(self) -> int:
        return self.memory.shift_registers

    def table(self) -> str:
        rows = [("stage", "PEs/copy", "copies", "PEs")]
        for s in self.stages.values():
            rows.append((s.name, str(s.pes_per_copy), str(s.copies), str(s.pes)))
        rows.append(("total", "", "", str(self.pes)))
        w = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]
        roms = "".join(f", ROM {n} {t}" for n, t in self.rom_tiles.items())
        lines.append(f"MEMs: {self.mems} (buffers {self.memory.mem_tiles}{roms}); "
                     f"shift registers: {self.shift_registers}; kernels: {self.kernels}")
        return "\n".join(lines)


def stage_copies(design: Design, name: str) -> int:
    """Hardware copies of a stage: its pixels per cycle times the extents it computes in space."""
    plan = design.stages[name]
    n = plan.schedule.lanes
    for k, s in enumerate(plan.schedule.strides):
        if s == 0:
            n *= plan.extents[k]
    return n


def stage_netlists(design: Design) -> dict:
    """Compute stage -> (init netlist, update netlist or None)."""
    acc = design.acc
    tables = constant_contents(acc, design.regions)
    out = {}
    for name, node in acc.stages.items():
        if node.kind == "stream":
            continue
        init, update = kernel_regions(acc, node, tables)
        out[name] = (kernel_netlist(init.block), kernel_netlist(update.block) if update.blocks else None)
    return out


def count_resources(design: Design, memory_map: MemoryMap | None = None, *,
                    tile: MemoryTile = AMBER_MEMORY_TILE) -> Resources:
    """PEs, MEMs and shift registers of ``design`` (mapped with ``tile`` unless ``memory_map`` is given)."""
    stages = {}
    for name, (init, update) in stage_netlists(design).items():
        # a stage iterated in time places its update kernel (the MACs); its init is a constant load
        net = update if update is not None else init
        stages[name] = StageResources(name, net.pes, stage_copies(design, name), net.rom_reads, net)
    mm = memory_map if memory_map is not None else map_memories(design, tile=tile)
    roms = {}
    for name, (kind, entries, depth) in design.roms.items():
        if kind in ("ROM", "tap memory"):
            roms[name] = tile.tiles_for(depth)
    return Resources(stages, mm, roms)


__all__ = ["Resources", "StageResources", "count_resources", "stage_copies", "stage_netlists"]
