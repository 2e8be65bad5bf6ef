"""PE and MEM counts of a scheduled streaming design (thesis Tables 5.3, 6.1 and 6.6).

``count_resources(design)`` counts, per compute stage, the PEs of its kernel (``kernel_netlist``:
one per operator after constant folding, identities and common subexpressions; a buffered reduction
places an init and an update kernel, see ``stage_kernels``) times its copies
(pixels per cycle x dimensions unrolled in space; the copies in one lane share equal subexpressions,
``lane_copies``), and the memory tiles of the design's memory mapping (``memory_map``: line delays,
addressed and accumulation memories) plus one ROM tile per lookup table (a ROM is a memory tile
addressed by data, thesis §3.5). Shift registers are counted as the memory mapping places them. A stage
whose kernel needs no PE (a cast, a copy) is a wire.

``resource_report(design, optimization)`` gives thesis Table 5.3's columns for a design whose stages
may share a kernel (``compute_share``): compute kernels (the members of a share group count once),
shift registers, muxes and MEMs, after one of the thesis's implementations of the multiplexing
(§5.3), each reusing the one before:

=========================  ===================================================================
``none``                   no sharing: every stage has its own kernel and registers
``muxes``                  every member keeps its stencil registers; one mux per kernel input
                           plus the one-hot select (10 for a shared 3x3 kernel)
``shared shift registers`` row or block interleaving: the members' input buffers feed one set of
                           stencil registers (the largest set of any member)
``memory chaining``        the chain inputs of the memory tiles select between buffers: no muxes
``memory sharing``         the members' input buffers share memory tiles: their words added up,
                           at most ``buffers_per_tile`` buffers per tile (the address generator
                           of the thesis's CGRA runs two affine loop nests); their slots never
                           overlap, so the ports never conflict
=========================  ===================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loom.errors import LoomError

from .kernel_ir import constant_contents, kernel_regions, stored_init_update
from .kernel_netlist import KernelNetlist, kernel_netlist, space_copies
from .memory_map import MemoryMap, map_memories
from .memory_tile import AMBER_MEMORY_TILE, MemoryTile
from .scheduler import Design


@dataclass
class StageResources:
    name: str
    pes_per_copy: int
    copies: int  # hardware copies: lanes x extents of the dimensions unrolled in space
    rom_reads: int = 0
    netlist: KernelNetlist | None = None  # one copy's
    lanes: int = 1
    lane_pes: int | None = None  # PEs of one lane's copies (dims unrolled in space) sharing what they compute alike
    lane_netlist: KernelNetlist | None = None

    @property
    def pes(self) -> int:
        return self.pes_per_copy * self.copies if self.lane_pes is None else self.lane_pes * self.lanes


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
        rows = [("stage", "PEs/copy", "copies", "PEs/lane", "PEs")]
        for s in self.stages.values():
            lane = "" if s.lane_pes is None else str(s.lane_pes)
            rows.append((s.name, str(s.pes_per_copy), str(s.copies), lane, str(s.pes)))
        rows.append(("total", "", "", "", str(self.pes)))
        w = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]
        roms = "".join(f", ROM {n} {t}" for n, t in self.rom_tiles.items())
        ponds = f"; ponds: {self.memory.ponds}" if self.memory.ponds else ""
        lines.append(f"MEMs: {self.mems} (buffers {self.memory.mem_tiles}{roms}); "
                     f"shift registers: {self.shift_registers}{ponds}; kernels: {self.kernels}")
        return "\n".join(lines)


def stage_copies(design: Design, name: str) -> int:
    """Hardware copies of a stage: its pixels per cycle times the extents it computes in space."""
    plan = design.stages[name]
    n = plan.schedule.lanes
    for k in range(len(plan.schedule.strides)):
        if k:
            n *= plan.schedule.copies(k, plan.extents[k])
        elif plan.schedule.in_space(0):
            n *= plan.extents[0]
    return n


def _lanes_and_rows(schedule) -> int:
    """Points a stage computes per step along its time dims: lanes along x times rows of a block along y."""
    n = schedule.lanes
    for k in range(1, len(schedule.strides)):
        n *= schedule.blocked(k)
    return n


def stage_kernels(design: Design, tables: dict | None = None) -> dict:
    """Compute stage -> (init region, update region (empty if none), whether the update adds to a stored init).

    A buffered reduction whose updates are all merged into one kernel is placed as Clockwork places it: an
    init kernel (its pure definition, often a constant: no PE) and an update kernel adding every term to the
    stored value (``stored_init_update``), so a 3x3 sum takes 9 adders, not 8 (thesis Tables 6.1 and 6.7)."""
    acc = design.acc
    tables = constant_contents(acc, design.regions) if tables is None else tables
    out = {}
    for name, node in acc.stages.items():
        if node.kind == "stream":
            continue
        init, update = kernel_regions(acc, node, tables)
        stored = None if update.blocks else stored_init_update(acc, node, tables)
        if stored is not None:
            init, update = stored
        out[name] = (init, update, stored is not None)
    return out


def lane_copies(design: Design, name: str, block, accumulators=()) -> list | None:
    """The copies one lane of stage ``name`` places for its dims unrolled in space, as ``kernel_netlist``
    copies of ``block`` (coordinates first, read ports last); None if it unrolls none.

    Each copy binds the unrolled coordinates to its constants; the reads whose index uses them and the
    ``accumulators`` (argument positions) hold a different value in each copy. What the copies then compute
    alike (a channel-independent subexpression: the demosaic's green and its direction tests) is one PE."""
    plan = design.stages[name]
    space = {k: range(plan.mins[k], plan.mins[k] + plan.extents[k])
             for k in range(len(plan.schedule.strides)) if plan.schedule.in_space(k)}
    if not space:
        return None
    return space_copies(plan.node.dims, plan.node.reads, space, block, accumulators)


def count_resources(design: Design, memory_map: MemoryMap | None = None, *,
                    tile: MemoryTile = AMBER_MEMORY_TILE) -> Resources:
    """PEs, MEMs and shift registers of ``design`` (mapped with ``tile`` unless ``memory_map`` is given).

    A stage's copies in one lane (dims unrolled in space) share equal subexpressions (``lane_copies``)."""
    stages = {}
    tables = constant_contents(design.acc, design.regions)
    read = set()  # tables some placed kernel reads as a ROM
    for name, (init_r, update_r, stored) in stage_kernels(design, tables).items():
        # a stage iterated in time places its update kernel (the MACs); its init is a constant load.
        # A buffered reduction places both kernels (its init is usually a constant: no PE)
        init = kernel_netlist(init_r.block, tables=tables)
        update = kernel_netlist(update_r.block, tables=tables) if update_r.blocks else None
        net = update if update is not None else init
        pes = net.pes + (init.pes if stored else 0)
        res = StageResources(name, pes, stage_copies(design, name), net.rom_reads, net,
                             lanes=_lanes_and_rows(design.stages[name].schedule))
        block = (update_r if update is not None else init_r).block
        n = len(design.stages[name].node.dims)
        acc_arg = n if stored else n + len(design.stages[name].node.time_reduction)  # the partial sum
        copies = lane_copies(design, name, block, () if update is None else (acc_arg,))
        if copies is not None:
            res.lane_netlist = kernel_netlist(block, copies, tables)
            res.lane_pes = res.lane_netlist.pes
            if stored:
                res.lane_pes += kernel_netlist(init_r.block, lane_copies(design, name, init_r.block), tables).pes
        read |= (res.lane_netlist or net).rom_tables() | (init.rom_tables() if stored else set())
        stages[name] = res
    mm = memory_map if memory_map is not None else map_memories(design, tile=tile)
    roms = {}
    for name, (kind, entries, depth) in design.roms.items():
        if kind in ("ROM", "tap memory") and name in read:  # a table every copy reads at constant addresses folds
            roms[name] = tile.tiles_for(depth)
    return Resources(stages, mm, roms)


# compute sharing (thesis Table 5.3) ------------------------------------------------------------

OPTIMIZATIONS = ("none", "muxes", "shared shift registers", "memory chaining", "memory sharing")


@dataclass
class ResourceReport:
    optimization: str
    kernels: int
    shift_registers: int
    muxes: int
    mems: int

    def row(self) -> tuple:
        return (self.optimization, self.kernels, self.shift_registers, self.muxes, self.mems)


def compute_kernels(design: Design, resources: Resources | None = None) -> int:
    """Hardware compute kernels: stages with PEs (copies included), a share group counted once."""
    res = resources if resources is not None else count_resources(design)
    shared = set(design.sharing.stages) if design.sharing else set()
    n = sum(s.copies for name, s in res.stages.items() if s.pes_per_copy and name not in shared)
    return n + (1 if shared else 0)


def resource_report(design: Design, optimization: str | None = None, *, tile: MemoryTile = AMBER_MEMORY_TILE,
                    buffers_per_tile: int = 2) -> ResourceReport:
    """Kernels, shift registers, muxes and MEMs of ``design`` (default: "none"; for a shared design "memory
    chaining", or "muxes" at pixel interleaving, the one optimization it allows)."""
    shared = design.sharing
    if optimization is None:
        optimization = "none" if not shared else "muxes" if shared.interleave == "pixel" else "memory chaining"
    if optimization not in OPTIMIZATIONS:
        raise LoomError(f"unknown optimization '{optimization}': expected one of {', '.join(OPTIMIZATIONS)}",
                        where="resource_report", construct="compute_share")
    if shared is None and optimization != "none":
        raise LoomError(f"'{optimization}' counts a shared kernel, but the design shares none "
                        "(schedule compute_share_root/compute_share)", where="resource_report",
                        construct="compute_share")
    if shared is not None and optimization == "none":
        raise LoomError("a shared design multiplexes its kernel: pick one of "
                        + ", ".join(OPTIMIZATIONS[1:]), where="resource_report", construct="compute_share")
    res = count_resources(design, tile=tile)
    mm = res.memory
    kernels = compute_kernels(design, res)
    if shared is None:
        return ResourceReport(optimization, kernels, res.shift_registers, 0, res.mems)
    if shared.interleave == "pixel" and optimization != "muxes":
        raise LoomError(f"'{optimization}' needs line or block interleaving: at pixel interleaving every "
                        "member's stencil registers hold values across its slots (thesis §5.3)",
                        where="resource_report", construct="compute_share")
    inputs = [design.stages[m].node.reads[0].producer for m in shared.stages]  # the buffers feeding the kernel
    registers = res.shift_registers
    if optimization != "muxes":  # one set of stencil registers serves every member in turn
        own = sum(mm.buffers[b].shift_registers for b in inputs)
        registers = registers - own + max(mm.buffers[b].shift_registers for b in inputs)
    ports = len(design.stages[shared.stages[0]].node.reads)
    muxes = ports + 1 if optimization in ("muxes", "shared shift registers") else 0
    mems = res.mems
    if optimization == "memory sharing":
        words = sum(design.buffers[b].capacity for b in inputs)
        own = sum(mm.buffers[b].mem_tiles for b in inputs)
        mems = mems - own + max(tile.tiles_for(words), -(-len(inputs) // buffers_per_tile))
    return ResourceReport(optimization, kernels, registers, muxes, mems)


__all__ = ["Resources", "StageResources", "count_resources", "stage_copies", "stage_kernels", "lane_copies",
           "OPTIMIZATIONS", "ResourceReport", "resource_report", "compute_kernels"]
