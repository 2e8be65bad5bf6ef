"""Memory mapping of scheduled unified buffers (thesis §4.5, §5.3): wires, shift registers, memory tiles.

A read port whose delay (read cycle minus the write cycle of the value it
reads) is the same for every iteration is a tap on a delay line. A delay line
advances when its producer writes, so a tap sits at the number of values the
producer writes in its delay (``value_delay``: the delay in cycles when the
producer writes every cycle; a ninth of it when a reduction iterated in time
makes every stage write once per 9 cycles). The distinct tap positions of a
buffer, in increasing order, become one chain: gaps of at most ``max_shift``
values are shift registers, longer gaps are line delays held in memory tiles
(a 3x3 window: 2 line delays + 2x3 shift registers). A memory tile
has ``tile_out_ports`` read ports and ``tile_words`` words; line delays that do
not fit are chained over several tiles. A buffer read with delays that vary
(reuse across time, several pixels per cycle) needs a memory with address
generators: ceil(capacity / tile_words) tiles, and at most ``max_loop_levels``
loop levels. A buffer with capacity 0 and all taps at delay 0 is a wire.
Parallel lanes (dimensions unrolled in space) widen every register and word.
The accumulation buffer of a reduction iterated in time (read-modify-write of
one partial sum per point in flight) is an accumulation register when it holds
at most ``max_shift`` values, else an accumulation memory in tiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .scheduler import Design, StagePlan


@dataclass
class MappedBuffer:
    name: str
    kind: str  # "wire" | "delay line" | "addressed memory" | "accumulation register" | "accumulation memory"
    taps: list = field(default_factory=list)  # distinct tap positions in values (see value_delay)
    shift_registers: int = 0
    line_delays: list = field(default_factory=list)  # words per line delay held in memory
    mem_tiles: int = 0
    width: int = 1  # values per cycle (spatial lanes)
    note: str = ""
    tap_cycles: list = field(default_factory=list)  # the taps' delays in cycles


@dataclass
class MemoryMap:
    buffers: dict

    @property
    def shift_registers(self) -> int:
        return sum(b.shift_registers for b in self.buffers.values())

    @property
    def mem_tiles(self) -> int:
        return sum(b.mem_tiles for b in self.buffers.values())

    def table(self) -> str:
        rows = [("buffer", "kind", "taps", "shift regs", "line delays", "MEMs")]
        for b in self.buffers.values():
            taps = ",".join(map(str, b.taps)) if len(b.taps) <= 9 else f"{len(b.taps)} taps"
            rows.append((b.name, b.kind, taps, str(b.shift_registers), ",".join(map(str, b.line_delays)) or "-",
                         str(b.mem_tiles)))
        rows.append(("total", "", "", str(self.shift_registers), "", str(self.mem_tiles)))
        w = [max(len(r[i]) for r in rows) for i in range(6)]
        return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows)


def _constant_delay(design: Design, producer: str, consumer: str, matrix, offs, divs=None):
    """The tap delay of a read port, or None when it varies over the iteration domain."""
    if divs and set(divs) != {1}:
        return None  # up-sampling: the delay repeats with the divisor, an addressed memory
    prod, cons = design.stages[producer], design.stages[consumer].iteration()
    if prod.schedule.lanes > 1 or cons.schedule.lanes > 1:
        return None
    sp, sc = prod.schedule.strides, cons.schedule.strides
    used = set()
    delay = cons.schedule.offset - prod.schedule.offset
    for j, (row, c) in enumerate(zip(matrix, offs)):
        nz = [(k, a) for k, a in enumerate(row) if a]
        if len(nz) > 1 or (nz and nz[0][1] != 1):
            return None
        if nz:
            k = nz[0][0]
            if sc[k] != sp[j]:
                return None
            used.add(k)
        delay -= sp[j] * c
    if any(sc[k] for k in range(len(sc)) if k not in used):
        return None  # the consumer rereads the same values over a time loop
    return delay


def value_delay(plan: StagePlan, cycles: int) -> int:
    """Most values ``plan``'s stage writes in the ``cycles`` cycles after one of its writes.

    A value read ``cycles`` after its write sits that many values deep in a delay line that shifts on
    writes. The write pattern repeats along the outermost time dimension, so windows starting in its
    first row, over the rows a window can reach, cover every case."""
    if cycles <= 0:
        return 0
    s = plan.schedule
    dims = [k for k, st in enumerate(s.strides) if st]
    if not dims:
        return 0  # every value is written in one cycle
    outer = max(dims, key=lambda k: s.strides[k])
    ext = [plan.extents[k] if k != outer else min(plan.extents[k], cycles // s.strides[k] + 2) for k in dims]
    times = np.zeros(1, np.int64)
    for k, e in zip(dims, ext):
        times = (times[:, None] + s.strides[k] * np.arange(e, dtype=np.int64)[None, :]).ravel()
    times = np.unique(times)
    starts = times[times < s.strides[outer]] if plan.extents[outer] > 1 else times
    counts = np.searchsorted(times, starts + cycles, "right") - np.searchsorted(times, starts, "right")
    return int(counts.max())


def map_memories(design: Design, *, max_shift: int = 4, tile_words: int = 2048, tile_out_ports: int = 2,
                 max_loop_levels: int = 6) -> MemoryMap:
    out = {}
    for name, buf in design.buffers.items():
        plan = design.stages[name]
        width = 1
        for k, s in enumerate(plan.schedule.strides):
            if s == 0:
                width *= plan.extents[k]
        ports = [(c, m, o, d) for p, c, m, o, d in design.reads if p == name]
        delays = [_constant_delay(design, name, c, m, o, d) for c, m, o, d in ports]
        if name == design.acc.func.name:
            delays.append(0)  # the host takes the output as it is produced
        if any(d is None for d in delays):
            tiles = -(-buf.capacity // tile_words) if buf.capacity else 0
            note = ""
            if len(plan.time_dims) > max_loop_levels:
                note = f"needs {len(plan.time_dims)} loop levels; the address generators have {max_loop_levels}"
            out[name] = MappedBuffer(name, "addressed memory", [], 0, [], max(tiles, 1 if buf.capacity else 0),
                                     width, note)
            continue
        tap_cycles = sorted(set(delays))
        if tap_cycles == [0] or not tap_cycles:
            out[name] = MappedBuffer(name, "wire", tap_cycles, 0, [], 0, width, tap_cycles=tap_cycles)
            continue
        taps = sorted({value_delay(plan, d) for d in tap_cycles})
        regs, lines, prev = 0, [], 0
        for d in taps:
            gap = d - prev
            if 0 < gap <= max_shift:
                regs += gap
            elif gap > max_shift:
                lines.append(gap)
            prev = d
        words = sum(lines) * width
        tiles = max(-(-len(lines) // tile_out_ports), -(-words // tile_words)) if lines else 0
        out[name] = MappedBuffer(name, "delay line", taps, regs * width, lines, tiles, width, tap_cycles=tap_cycles)
    for name, buf in design.accumulators.items():
        cap = buf.capacity or 0
        if cap <= max_shift:
            out[name] = MappedBuffer(name, "accumulation register", [], cap, [], 0, 1)
        else:
            out[name] = MappedBuffer(name, "accumulation memory", [], 0, [], -(-cap // tile_words), 1)
    return MemoryMap(out)
