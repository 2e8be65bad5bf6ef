"""The memory tile a buffer is mapped to (thesis §2.3, Figure 2.8; Lake's defaults), and the global buffer.

Amber's memory tile (a Physical Unified Buffer) is a single-port SRAM of ``words`` 16-bit words fetched
``fetch_width`` at a time: an aggregator gathers ``fetch_width`` values arriving one per cycle on an input
port before one wide write, a transpose buffer hands a wide read out one value per cycle on an output
port. One wide access per cycle serves at most ``fetch_width`` values, so ``in_ports + out_ports`` may not
exceed it (2 + 2 = 4). Each port's address generator walks at most ``loop_levels`` affine loops. A buffer
larger than one tile is chained over at most ``max_chain`` tiles; one that needs more values per cycle
than a tile's ports deliver is banked over several tiles. The global buffer (GLB) sits between the host
and the fabric: ``banks`` SRAM banks, ``glb_bytes`` in all. A pond is the small register file inside a
processing element (thesis §3.5; its size is not in the thesis: Lake's Pond defaults, ``pond_words``
words, one input and one output port, address generators of ``pond_loop_levels`` loops).
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.errors import LoomError


@dataclass(frozen=True)
class MemoryTile:
    words: int = 2048
    fetch_width: int = 4
    in_ports: int = 2
    out_ports: int = 2
    loop_levels: int = 6
    max_chain: int = 4  # Lake's default chaining limit
    word_bytes: int = 2
    glb_bytes: int = 128 * 1024  # thesis §6.5: "the GLB capacity of 128 kB"
    glb_banks: int = 16
    pond_words: int = 32
    pond_loop_levels: int = 2

    def __post_init__(self):
        for name in ("words", "fetch_width", "in_ports", "out_ports", "loop_levels", "max_chain", "word_bytes",
                     "glb_bytes", "glb_banks", "pond_words", "pond_loop_levels"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise LoomError(f"{name} must be a positive int, got {v!r}", where="MemoryTile")
        if self.in_ports + self.out_ports > self.fetch_width:
            need = self.in_ports + self.out_ports
            raise LoomError(f"{self.in_ports} input + {self.out_ports} output ports need {need} values per cycle, "
                            f"but one wide SRAM access per cycle serves {self.fetch_width}",
                            where="MemoryTile")
        if self.words % self.fetch_width:
            raise LoomError(f"{self.words} words is not a whole number of {self.fetch_width}-word fetches",
                            where="MemoryTile")

    def tiles_for(self, words: int) -> int:
        """Tiles holding ``words`` values (0 for none)."""
        return -(-words // self.words) if words > 0 else 0

    def chain(self, buffer: str, words: int) -> int:
        """Tiles chained to hold ``words`` values in one address space; a LoomError past ``max_chain``."""
        n = self.tiles_for(words)
        if n > self.max_chain:
            raise LoomError(f"cannot be mapped to memory tiles: it holds {words} values, which needs {n} chained "
                            f"tiles of {self.words} words, and tiles chain at most {self.max_chain}; "
                            "use a smaller tile (hw_accelerate's split) or store_in(MemoryType.GLB)",
                            where=f"buffer '{buffer}'")
        return n

    def banks(self, reads_per_cycle: int, writes_per_cycle: int) -> int:
        """Tiles needed for the ports alone (banking for bandwidth)."""
        return max(-(-reads_per_cycle // self.out_ports), -(-writes_per_cycle // self.in_ports), 1)

    def check_loops(self, buffer: str, levels: int):
        if levels > self.loop_levels:
            raise LoomError(f"cannot be mapped to a memory tile: its ports iterate {levels} loop levels and the "
                            f"address generators have {self.loop_levels}; unroll one of them (computed in space) or "
                            "take fewer loop levels (e.g. split a reduction in fewer parts)",
                            where=f"buffer '{buffer}'")

    def check_glb(self, buffer: str, words: int):
        if words * self.word_bytes > self.glb_bytes:
            raise LoomError(f"does not fit the global buffer: {words} values of {self.word_bytes} bytes = "
                            f"{words * self.word_bytes} bytes > {self.glb_bytes}; use a smaller GLB tile",
                            where=f"buffer '{buffer}'")

    def check_pond(self, buffer: str, words: int, writes_per_cycle: int, reads_per_cycle: int, levels: int):
        """A buffer the user stored in a pond (store_in(MemoryType.Pond)) fits one, else a LoomError saying why."""
        why = [f"it holds {words} values and a pond {self.pond_words}" if words > self.pond_words else "",
               f"it takes {writes_per_cycle} values a cycle and a pond has one input port"
               if writes_per_cycle > 1 else "",
               f"its reads take {reads_per_cycle} values a cycle and a pond has one output port"
               if reads_per_cycle > 1 else "",
               f"its ports iterate {levels} loop levels and a pond's address generators {self.pond_loop_levels}"
               if levels > self.pond_loop_levels else ""]
        why = [w for w in why if w]
        if why:
            raise LoomError(f"is stored in a pond (store_in(MemoryType.Pond)) but {'; '.join(why)}; store it in a "
                            "memory tile (store_in(MemoryType.MemoryTile))", where=f"buffer '{buffer}'",
                            construct="store_in")


AMBER_MEMORY_TILE = MemoryTile()

__all__ = ["AMBER_MEMORY_TILE", "MemoryTile"]
