"""The two-level memory hierarchy of thesis Code 3.6: a global-buffer (GLB) tile feeding fabric tiles.

Matches: ``F = G.in_()`` scheduled ``hw_accelerate(xi, xo)`` (one invocation = one GLB tile), ``G`` computed
at ``(F, xo)`` and tiled again, with the fabric's stages computed at one of G's loops ``(G, gxo)``, and copy
stages (``in_()``) of the inputs computed at ``(F, xo)`` (stored in the GLB). The fabric is then the
streaming accelerator: ``G`` its output, ``gxo`` its tile loop, the GLB copies its input streams; the
GLB only stores (the copies) and the host loop over GLB tiles encloses the loop over fabric tiles.
Output-side levels (thesis Code 3.8, 6.4): when ``G`` is itself a copy of a fabric stage ``M`` (``M.in_()``,
``M`` computed at ``(G, gxo)``), the output passes memory tile (``M``, one fabric tile) -> GLB (``G``, one GLB
tile) -> host (``F``); ``output_levels`` lists them. Rejects, naming the Func: a GLB-level Func that computes
(not a copy), ``F`` not a copy of ``G``, stages at two different loops of ``G``, more than one Func at the GLB
level holding fabric stages, a GLB tile smaller than the fabric tile it holds, and levels out of order (the
Func holding a GLB tile stored in a memory tile, the output's memory-tile level stored in the GLB).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loom.errors import LoomError
from loom.frontends.pipeline.func import Func
from loom.frontends.pipeline.schedule import MemoryType


@dataclass
class GlobalBufferLevel:
    func: Func  # the hw_accelerate Func: its tile is one GLB tile, it copies G back to the host
    xi: str
    xo: str
    fabric: Func  # G: the fabric's output, stored in the GLB
    fabric_xi: str
    fabric_xo: str  # the fabric's tile loop (the stages' compute_at level)
    buffers: list = field(default_factory=list)  # GLB copies feeding the fabric (computed at (func, xo))

    def output_levels(self) -> list:
        """(Func, level, memory type) of the output from the fabric out, innermost first: the memory-tile level
        when the fabric output copies a fabric stage, then the GLB, then the host."""
        out = []
        m = self.fabric.wrapped
        if isinstance(m, Func) and _at(m, self.fabric, self.fabric_xo):
            out.append((m, "memory tile", m.schedule.memory_type or MemoryType.MemoryTile))
        out.append((self.fabric, "GLB", MemoryType.GLB))
        out.append((self.func, "host", None))
        return out

    def is_buffer(self, f) -> bool:
        return any(f is b for b in self.buffers)

    def glb_tile(self, size) -> tuple:
        """Extents of one GLB tile for an output of ``size`` (the hw_accelerate split, clipped to the image)."""
        from .scheduler import loop_tile_extents

        return tuple(min(t, n) for t, n in zip(loop_tile_extents(self.func, self.xo, size), size))

    def contents(self, glb_tile, leaves) -> dict:
        """Name -> extents each GLB buffer (and the fabric output, stored in the GLB) holds for one GLB tile."""
        from loom.frontends.pipeline.bounds import infer_bounds
        from loom.frontends.pipeline.graph import FuncGraph

        regions = infer_bounds(FuncGraph(self.fabric), [(0, e - 1) for e in glb_tile], leaves=leaves)
        out = {b.name: tuple(hi - lo + 1 for lo, hi in regions[id(b)]) for b in self.buffers if id(b) in regions}
        out[self.fabric.name] = tuple(glb_tile)
        return out


def _at(f, func, loop=None) -> bool:
    lvl = f.schedule.compute_level if isinstance(f, Func) else None
    return isinstance(lvl, tuple) and lvl[0] is func and (loop is None or lvl[1] == loop)


def find_global_buffer_level(funcs, func: Func, xo: str) -> GlobalBufferLevel | None:
    """The GLB level under ``func`` (hw_accelerate at ``xo``), or None for a single-level accelerator."""
    at_glb = [f for f in funcs if _at(f, func, xo)]
    fabrics = [g for g in at_glb if any(_at(h, g) for h in funcs)]
    if not fabrics:
        return None
    if len(fabrics) > 1:
        raise LoomError("more than one Func at the global-buffer level has stages computed inside it ("
                        + ", ".join(g.name for g in fabrics) + "); one fabric output per GLB tile is supported",
                        where=f"Func '{func.name}'", construct="compute_at")
    g = fabrics[0]
    if func.wrapped is not g:
        raise LoomError(f"the accelerator output '{func.name}' holds the fabric output '{g.name}' in the global "
                        f"buffer, so it must be its copy: {g.name}.in_().hw_accelerate(xi, xo) (thesis Code 3.6)",
                        where=f"Func '{func.name}'", construct="hw_accelerate")
    levels = sorted({h.schedule.compute_level[1] for h in funcs if _at(h, g)})
    if len(levels) > 1:
        raise LoomError(f"the fabric's stages are computed at different loops of '{g.name}' ({', '.join(levels)}); "
                        "compute them all at its tile loop", where=f"Func '{g.name}'", construct="compute_at")
    gxo = levels[0]
    loops = g.pure.schedule.loops
    if gxo not in loops:  # a loop of an update of g (graph.loop_stage)
        raise LoomError(f"the fabric's stages are computed at '{gxo}', a loop of an update of '{g.name}', not of its "
                        "pure definition; a fabric tile is a loop of the pure definition: compute them at its tile "
                        "loop", where=f"Func '{g.name}'", construct="compute_at")
    if loops.index(gxo) == 0:
        raise LoomError(f"the fabric's stages are computed at '{gxo}', the innermost loop of '{g.name}'; tile it "
                        f"(tile(x, y, xo, yo, xi, yi, w, h)) and compute them at the tile loop",
                        where=f"Func '{g.name}'", construct="compute_at")
    buffers = [f for f in at_glb if f is not g]
    for b in buffers:
        if b.wrapped is None:
            raise LoomError(f"is computed at the global-buffer level (compute_at({func.name}, {xo})) but is not a "
                            f"copy: the GLB stores, it does not compute. Use a copy stage (in_()) there and "
                            f"compute '{b.name}' in the fabric (compute_at({g.name}, {gxo})) or on the host",
                            where=f"Func '{b.name}'", construct="compute_at")
    _check_output_levels(g, gxo)
    _check_tiles(func, xo, g, gxo)
    xi, _ = func.schedule.hw_accelerate
    return GlobalBufferLevel(func, xi, xo, g, loops[0], gxo, buffers)


def _check_output_levels(g, gxo):
    """The output's levels go memory tile -> GLB -> host; any other order cannot be built."""
    kind = g.schedule.memory_type
    if kind not in (None, MemoryType.GLB):
        raise LoomError(f"holds one GLB tile of the output (computed at the accelerator's tile loop) but is stored "
                        f"in {kind}; a level holding fabric tiles must be the GLB: store_in(MemoryType.GLB)",
                        where=f"Func '{g.name}'", construct="store_in")
    m = g.wrapped
    if isinstance(m, Func) and _at(m, g, gxo) and m.schedule.memory_type == MemoryType.GLB:
        raise LoomError(f"is the output's level inside the fabric (computed at ({g.name}, {gxo})), which its GLB "
                        f"level '{g.name}' copies, but is stored in the GLB: the levels would go GLB -> GLB; store it "
                        "in a memory tile (store_in(MemoryType.MemoryTile)) or drop the copy",
                        where=f"Func '{m.name}'", construct="store_in")


def _check_tiles(func, xo, g, gxo):
    """Each GLB tile holds whole fabric tiles: a fabric tile larger than the GLB tile cannot be computed in it."""
    from .scheduler import loop_tile_extents

    unbounded = (1 << 40,) * len(func.dims)
    glb = loop_tile_extents(func, xo, unbounded)
    fabric = loop_tile_extents(g, gxo, unbounded)
    dims = [d.name for d in func.dims]
    for d, a, b in zip(dims, glb, fabric):
        if b > a:
            show = lambda t: "x".join("whole" if v == unbounded[0] else str(v) for v in t)  # noqa: E731
            raise LoomError(f"its tile {show(fabric)} (the fabric tile) is larger than the GLB tile "
                            f"{show(glb)} of '{func.name}' it is computed in (dimension '{d}'); the GLB level must "
                            "hold whole fabric tiles: make the GLB tile a multiple of the fabric tile",
                            where=f"Func '{g.name}'", construct="tile")


__all__ = ["GlobalBufferLevel", "find_global_buffer_level"]
