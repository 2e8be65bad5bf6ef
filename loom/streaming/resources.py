"""Hardware components of a scheduled design: compute kernels, shift registers, muxes, memory tiles (thesis Table 5.3).

``resource_report(design, optimization)`` counts them from the design and its memory map
(``map_memories``):

- kernels: compute stages whose kernel computes something (a stage that only copies or
  casts one value, such as ``hw_input = u16(input)`` or ``output = u8(conv2)``, is a wire to
  the PEs); the members of a share group (``design.sharing``) count once;
- shift registers and MEMs: the memory map's stencil registers and memory tiles;
- muxes: what connecting one kernel to several buffers costs (thesis §5.3).

Without sharing, only ``"none"`` applies. A shared design is counted after one of the
thesis's implementations of the multiplexing, each reusing the one before:

=========================  ===================================================================
``muxes``                  every member keeps its stencil registers; one mux per kernel input
                           plus the one-hot select (10 for a shared 3x3 kernel)
``shared shift registers`` row or block interleaving: the members' input buffers feed one set of
                           stencil registers (the largest set of any member)
``memory chaining``        the chain inputs of the memory tiles select between buffers: no muxes
``memory sharing``         the members' input buffers share memory tiles: their words added up,
                           at most ``buffers_per_tile`` buffers per tile (the address generator
                           of the thesis's CGRA runs two affine loop nests), their slots never
                           overlap so the ports never conflict
=========================  ===================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.errors import LoomError

from .memory_map import MemoryMap, map_memories

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


def is_copy(design, stage: str) -> bool:
    """A stage whose kernel passes one read value through, converted at most (no compute tile needed)."""
    from .kernel_ir import constant_contents, kernel_regions

    node = design.stages[stage].node
    if node.kind != "compute" or len(node.reads) != 1:
        return False
    init, update = kernel_regions(design.acc, node, constant_contents(design.acc, design.regions))
    if update.blocks:
        return False
    ops = list(init.block.ops)[:-1]  # the last one is ubuf.yield
    return all(op.name in ("arith.extui", "arith.extsi", "arith.trunci", "arith.index_cast") for op in ops)


def compute_kernels(design) -> int:
    """Hardware compute kernels: computing stages, a share group counted once."""
    shared = set(design.sharing.stages) if design.sharing else set()
    n = sum(1 for name, plan in design.stages.items()
            if plan.node.kind == "compute" and name not in shared and not is_copy(design, name))
    return n + (1 if shared else 0)


def resource_report(design, optimization: str | None = None, *, memory_map: MemoryMap | None = None,
                    tile_words: int = 2048, buffers_per_tile: int = 2) -> ResourceReport:
    """Kernels, shift registers, muxes and MEMs of ``design`` (default: "none", or "memory chaining" if shared)."""
    shared = design.sharing
    if optimization is None:
        optimization = "memory chaining" if shared else "none"
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
    mm = memory_map or map_memories(design, tile_words=tile_words)
    kernels = compute_kernels(design)
    if shared is None:
        return ResourceReport(optimization, kernels, mm.shift_registers, 0, mm.mem_tiles)
    if shared.interleave == "pixel" and optimization != "muxes":
        raise LoomError(f"'{optimization}' needs line or block interleaving: at pixel interleaving every "
                        "member's stencil registers hold values across its slots (thesis §5.3)",
                        where="resource_report", construct="compute_share")
    inputs = [design.stages[m].node.reads[0].producer for m in shared.stages]  # the buffers feeding the kernel
    registers = mm.shift_registers
    if optimization != "muxes":  # one set of stencil registers serves every member in turn
        own = sum(mm.buffers[b].shift_registers for b in inputs)
        registers = registers - own + max(mm.buffers[b].shift_registers for b in inputs)
    ports = len(design.stages[shared.stages[0]].node.reads)
    muxes = ports + 1 if optimization in ("muxes", "shared shift registers") else 0
    mems = mm.mem_tiles
    if optimization == "memory sharing":
        words = sum(design.buffers[b].capacity for b in inputs)
        own = sum(mm.buffers[b].mem_tiles for b in inputs)
        mems = mems - own + max(-(-words // tile_words), -(-len(inputs) // buffers_per_tile))
    return ResourceReport(optimization, kernels, registers, muxes, mems)


__all__ = ["OPTIMIZATIONS", "ResourceReport", "resource_report", "compute_kernels", "is_copy"]
