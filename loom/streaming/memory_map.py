"""Memory mapping of scheduled unified buffers (thesis §4.5, §5.3): wires, shift registers, memory tiles.

A read port whose delay (read cycle minus the write cycle of the value it
reads) is the same for every iteration is a tap on a delay line. A delay line
advances when its producer writes, so a tap sits at the number of values (words,
at several pixels per cycle) the producer writes in its delay (``value_delay``:
the delay in cycles when the producer writes every cycle; a ninth of it when a
reduction iterated in time makes every stage write once per 9 cycles). The
distinct tap positions of a buffer, in increasing order, become one chain: gaps
of at most ``max_shift`` values are shift registers, longer gaps are line delays
held in memory tiles (a 3x3 window: 2 line delays + 2x3 shift registers). A memory tile
has ``tile_out_ports`` read ports and ``tile_words`` words; line delays that do
not fit are chained over several tiles. A stage computing an nx x ny block a step
(``unroll(x, nx)``, ``unroll(y, ny)``) writes its block as one vector: ny interleaved row delay lines of nx words
that shift together, a vector delay line nx x ny words wide (``steps``, ``_lane_delays``: each consumer lane reads
a fixed lane of the producer's block a fixed delay back when the reads' blocks are whole producer blocks and the
steps keep pace, which covers equal blocks, 2 x 2 pooling of 2n x 2ny blocks at n x ny and reading (x / 2, y / 2)
at 2 x 2); its line delays take an input and an output port per lane, as parallel lanes do. A buffer read with
delays that vary (reuse across time, a read whose rows are not whole blocks of the producer's) needs a memory
with address generators (the reason is in its ``note``): ceil(capacity / tile_words) tiles, and at most
``max_loop_levels`` loop levels. A buffer with capacity 0 and all taps at delay 0 is a wire.
Parallel lanes (dimensions unrolled in space) widen every register and word.
The accumulation buffer of a reduction iterated in time (read-modify-write of
one partial sum per point in flight) is an accumulation register when it holds
at most ``max_shift`` values, else an accumulation memory in tiles; ``store_in(Pond)`` on its Func puts
it in a pond (``_accumulator_loops``), ``store_in(Register)`` in registers whatever its size.

The tile is a ``memory_tile.MemoryTile`` (Amber/Lake: 2,048 words, 4-word fetch, 2 in / 2 out ports,
6 loop levels, chaining of at most 4 tiles): each line delay takes an input and an output port per
lane, so a delay line needs ceil(line delays x lanes / 2) tiles for its ports, ceil(words / 2048) for
its values, and a line delay longer than a tile is chained (at most ``max_chain`` tiles, else a
``LoomError`` naming the buffer). An addressed memory is banked for its ports (values read and written
per cycle) and chained for its capacity; its address generators need at most ``loop_levels`` loops.
A buffer stored in the global buffer (``store_in(MemoryType.GLB)``) takes no memory tile; it must fit
the GLB. ``store_in`` overrides the mapping as the thesis has it (§6.4, a user decision over the
analysis): ``Register`` holds a delay line in shift registers whatever its gaps (a buffer mapped to an
addressed memory cannot be, whatever the reason in its ``note``), ``Pond`` in a processing element's register file (it must fit one:
``MemoryTile.check_pond``); ``MemoryTile`` is the analysis above (short gaps stay shift registers).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from loom.errors import LoomError
from loom.frontends.pipeline.schedule import MemoryType

from .live_count import sorted_unique
from .memory_tile import AMBER_MEMORY_TILE, MemoryTile
from .scheduler import Design, StagePlan


@dataclass
class MappedBuffer:
    name: str
    kind: str  # "wire" | "delay line" | "addressed memory" | "accumulation register" | "accumulation memory"
    #            | "accumulation pond" | "pond" | "global buffer"
    taps: list = field(default_factory=list)  # distinct tap positions in values written (see value_delay)
    shift_registers: int = 0
    line_delays: list = field(default_factory=list)  # words per line delay held in memory
    mem_tiles: int = 0
    width: int = 1  # values per cycle (spatial lanes)
    note: str = ""
    ponds: int = 0
    tap_cycles: list = field(default_factory=list)  # the taps' delays in cycles
    shift_on: str = "write"  # a delay line advances on its producer's writes, or on every "cycle" (taps in cycles)


@dataclass
class MemoryMap:
    buffers: dict

    @property
    def shift_registers(self) -> int:
        return sum(b.shift_registers for b in self.buffers.values())

    @property
    def mem_tiles(self) -> int:
        return sum(b.mem_tiles for b in self.buffers.values())

    @property
    def ponds(self) -> int:
        return sum(b.ponds for b in self.buffers.values())

    def table(self) -> str:
        rows = [("buffer", "kind", "taps", "shift regs", "line delays", "MEMs")]
        for b in self.buffers.values():
            distinct = sorted(set(b.taps))  # a channel block rereading a value adds a tap cycle, not a position
            taps = ",".join(map(str, distinct)) if len(distinct) <= 9 else f"{len(distinct)} taps"
            rows.append((b.name, b.kind, taps, str(b.shift_registers), ",".join(map(str, b.line_delays)) or "-",
                         str(b.mem_tiles)))
        rows.append(("total", "", "", str(self.shift_registers), "", str(self.mem_tiles)))
        w = [max(len(r[i]) for r in rows) for i in range(6)]
        return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows)


def steps(plan: StagePlan):
    """Per dimension of ``plan``: (values a step B, cycles a step). A step computes a block: ``lanes`` values of x,
    ``m`` rows of a dimension advancing in blocks (``unroll(y, m)``), all of a dimension unrolled in space (B = its
    extent, 0 cycles); p_k = B P_k + l_k, P_k the step and l_k the lane. Compute sharing's split loops (a floor term
    on a dimension with a stride) are not blocks: None."""
    s = plan.schedule
    if any(s.strides[k] for k, _m, _c in s.floors):
        return None
    return [dim_step(plan, k) for k in range(len(plan.extents))]


def dim_step(plan: StagePlan, k: int) -> tuple:
    """``steps``' (values a step, cycles a step) of dimension k (not one split by compute sharing)."""
    s, e = plan.schedule, plan.extents[k]
    if k == 0 and s.lanes > 1:
        return min(s.lanes, e), s.strides[0]
    if s.in_blocks(k):
        return min(s.blocked(k), e), next(c for j, _m, c in s.floors if j == k)
    return (e, 0) if s.in_space(k) else (1, s.strides[k])


def lane_of(plan: StagePlan, coords):
    """The lane (flat, mixed radix over the dimensions, x first) of each point: which word of the step's block."""
    lane = np.zeros(np.shape(coords[0]) if coords else (), np.int64)
    for (b, _c), g in zip(steps(plan), coords):
        lane = lane * b + g % b
    return lane


def _lane_delays(design: Design, producer: str, consumer: str, matrix, offs, divs=None):
    """The tap delay (cycles from write to read) of a read port per consumer lane, or why it varies (a str).

    The rule (a vector delay line): the consumer's point p_k = B_k P_k + l_k reads producer index q_j =
    floor((a p_k + c_j) / d_j) = (a B_k / d_j) P_k + floor((a l_k + c_j) / d_j) when d_j divides a B_k, whose producer
    step is r P_k + const with r = a B_k / (d_j B'_j) when B'_j also divides it. With the consumer's cycles a step
    equal to r times the producer's, the steps cancel in t_read - t_write: each lane reads a fixed lane of the
    producer's block a fixed delay back. A translation at equal blocks (a = d = 1, B = B') is one case; 2 x 2 pooling
    of 2n x 2ny blocks at n x ny (a = 2) and reading half-resolution planes at (x / 2, y / 2) with 2 x 2 blocks
    (d = 2) are others."""
    prod, cons = design.stages[producer], design.stages[consumer].iteration()
    bp, bc = steps(prod), steps(cons)
    if bp is None or bc is None:
        return "split coarse loops (compute sharing): the delay varies"
    divs = divs or (1,) * len(offs)
    plain = all(b == 1 or c == 0 for b, c in bp + bc)  # no lanes, no rows a step on either side
    used = set()
    for j, (row, d) in enumerate(zip(matrix, divs)):
        nz = [(k, a) for k, a in enumerate(row) if a]
        if len(nz) > 1 or (nz and nz[0][1] < 0):
            return f"index {j} mixes or mirrors loops"
        if not nz:
            continue
        k, a = nz[0]
        if k in used:
            return f"loop {k} indexes two dimensions"
        used.add(k)
        (b, c), (b2, c2) = bc[k], bp[j]
        if (a, d) != (1, 1) and plain:
            # the rule holds here too (a 2x2 pool at one pixel a step), but Table 5.2's spatial and line-shared
            # pyramids are counted alike with addressed memories: kept so, mapped only next to blocks
            return "a down- or up-sampling read between stages at one value a step"
        if -(-cons.extents[k] // b) == 1:
            continue  # one step along k: nothing to cancel
        if (a * b) % (d * b2):
            return (f"a step of loop {k} reads {a * b}/{d} values of dimension {j}, not whole blocks of {b2}: the "
                    "delay depends on the step")
        if c != c2 * (a * b) // (d * b2):
            return f"loop {k} steps every {c} cycles, its reads every {c2 * (a * b) // (d * b2)}"
    if any(c and -(-e // b) > 1 and k not in used and not cons.schedule.in_blocks(k)
           for k, ((b, c), e) in enumerate(zip(bc, cons.extents))):
        return "the consumer rereads the same values over a time loop"
    lanes = np.indices([b for b, _c in bc]).reshape(len(bc), -1)  # every lane l at step P = 0
    q = [(sum(a * v for a, v in zip(row, lanes)) + c) // d for row, c, d in zip(matrix, offs, divs)]
    t = cons.schedule.times(list(lanes)) - prod.schedule.times(q)
    order = np.argsort(lane_of(cons, list(lanes)))
    return [int(v) for v in np.broadcast_to(t, lanes.shape[1:])[order]]


def reread_delay(plan: StagePlan, matrix, coords):
    """Cycles after its first block at which a consumer point reads the value its lane reads in its first block: the
    blocks of a dimension computed n at a time (``unroll(c, n)``, a layer's output channels) that the read does not
    index reread one window, block b c * b cycles after block 0 (its floors term (k, n, c)). 0 without such blocks."""
    used = {k for row in matrix for k, a in enumerate(row) if a}
    s = plan.schedule
    return sum(c * (coords[k] // m) for k, m, c in s.floors if s.in_blocks(k) and k not in used) + \
        np.zeros(np.broadcast_shapes(*(np.shape(g) for g in coords)), np.int64)


def reread_offsets(plan: StagePlan, matrix) -> list:
    """The distinct ``reread_delay`` values of a consumer's points: one per block (``[0]`` without rereads)."""
    return sorted(set(np.ravel(reread_delay(plan, matrix, plan.grids())).tolist()))


def value_delay(plan: StagePlan, cycles: int) -> int:
    """Most values (words: one per cycle with a write) ``plan``'s stage writes in the ``cycles`` cycles after one of
    its writes.

    A value read ``cycles`` after its write sits that many values deep in a delay line that shifts on
    writes. The write pattern repeats along the outermost time dimension, so windows starting in its
    first row, over the rows a window can reach, cover every case."""
    if cycles <= 0:
        return 0
    s = plan.schedule
    # (cycles per step, steps) of each time dim; rows in blocks (unroll(y, n)) step once per block
    steps = {k: (st, -(-plan.extents[k] // s.lanes) if (k == 0 and s.lanes > 1) else plan.extents[k])
             for k, st in enumerate(s.strides) if st}
    steps.update({k: (c, -(-plan.extents[k] // m)) for k, m, c in s.floors if s.in_blocks(k)})
    if not steps:
        return 0  # every value is written in one cycle
    outer = max(steps, key=lambda k: steps[k][0])
    times = np.zeros(1, np.int64)
    for k, (st, e) in steps.items():
        if k == outer:
            e = min(e, cycles // st + 2)
        times = (times[:, None] + st * np.arange(e, dtype=np.int64)[None, :]).ravel()
    times = sorted_unique(times)
    starts = times[times < steps[outer][0]] if steps[outer][1] > 1 else times
    counts = np.searchsorted(times, starts + cycles, "right") - np.searchsorted(times, starts, "right")
    return int(counts.max())


def _value_taps(design: Design, name: str, ports, tap_cycles) -> list | None:
    """The taps as positions in values written, when every read finds its value at a fixed depth in writes.

    Checked on the reads of the consumers' first and last rows (the write and read patterns repeat row after row
    in between; at the end a producer that stops writing stops shifting its chain);
    otherwise (a producer writing in bursts, e.g. one line of a shared kernel's slot) None: the taps stay
    in cycles and the delay line shifts every cycle."""
    prod = design.stages[name]
    position = {d: value_delay(prod, d) for d in tap_cycles}
    # two tap cycles at one position: a consumer's channel blocks rereading a value with no write between them
    # (every read's depth is checked below)
    writes = sorted_unique(prod.schedule.times(prod.grids()))
    for consumer, matrix, offs, divs in ports:
        cons = design.stages[consumer].iteration()
        bc = steps(cons)
        ext = list(cons.extents)
        outer = max(range(len(ext)), key=lambda k: bc[k][1])
        # the first and the last 3 steps of the outer loop: the ends, where the producer starts and stops writing
        keep = np.arange(ext[outer])
        keep = keep[(keep < 3 * bc[outer][0]) | (keep >= ext[outer] - 3 * bc[outer][0])]
        ext[outer] = len(keep)
        grids = cons.grids(tuple(ext))
        grids[outer] = keep.reshape(grids[outer].shape)
        t_read = np.broadcast_to(cons.schedule.times(grids), tuple(ext[::-1])).ravel()
        q = [(sum(a * g for a, g in zip(row, grids) if a) + c) // d for row, c, d in zip(matrix, offs, divs)]
        t_write = np.broadcast_to(prod.schedule.times([np.asarray(v) for v in q]), tuple(ext[::-1])).ravel()
        depth = np.searchsorted(writes, t_read, "right") - np.searchsorted(writes, t_write, "right")
        for d in set((t_read - t_write).tolist()):
            if set(depth[(t_read - t_write) == d].tolist()) != {position.get(d, -1)}:
                return None
    return sorted(position.values())


def _reads_per_cycle(design: Design, name: str, ports) -> int:
    """Distinct values the read ports of buffer ``name`` take per cycle: per port, the consumer's copies
    (lanes, dimensions unrolled in space) that read different addresses; copies reading the same value share
    one read (a broadcast)."""
    n = 0
    for consumer, matrix, _offs, _divs in ports:
        plan = design.stages[consumer]
        used = {k for row in matrix for k, a in enumerate(row) if a}
        copies = plan.schedule.lanes if 0 in used else 1
        for k in range(len(plan.schedule.strides)):
            if k and k in used:
                copies *= plan.schedule.copies(k, plan.extents[k])
        n += copies
    return n


def _accumulator_loops(buf) -> int:
    """Loops a pond's address generators walk to read-modify-write the partial sums of accumulator ``buf``: the
    write port's loops in time of more than one iteration (a point's address is its index in the tile, the
    reduction loops' 0), a loop nested contiguously inside another in both time and address merged with it (a
    raster sweep of the points is one loop, as are reduction loops in a row)."""
    port = buf.write_ports[0]
    sched, loops, addr = port.schedule, [], 1
    for k, (st, e) in enumerate(zip(sched.strides, port.extents)):
        n = -(-e // sched.lanes) if k == 0 else e
        if st and n > 1:
            loops.append((st, n, addr if k < buf.dims else 0))
        if k < buf.dims:
            addr *= n
    merged = []
    for st, n, a in sorted(loops):
        if merged and merged[-1][0] * merged[-1][1] == st and merged[-1][2] * merged[-1][1] == a:
            merged[-1] = (merged[-1][0], merged[-1][1] * n, merged[-1][2])
        else:
            merged.append((st, n, a))
    return len(merged)


def map_memories(design: Design, *, max_shift: int = 4, tile_words: int | None = None,
                 tile_out_ports: int | None = None, max_loop_levels: int | None = None,
                 tile: MemoryTile = AMBER_MEMORY_TILE) -> MemoryMap:
    """Map every buffer of ``design`` (``tile_words`` etc. override fields of ``tile``)."""
    overrides = {k: v for k, v in (("words", tile_words), ("out_ports", tile_out_ports),
                                   ("loop_levels", max_loop_levels)) if v is not None}
    if overrides:
        tile = replace(tile, **overrides)
    out = {}
    for name, buf in design.buffers.items():
        plan = design.stages[name]
        width = 1
        for k in range(len(plan.schedule.strides)):
            if plan.schedule.in_space(k):
                width *= plan.extents[k]
            elif k:
                width *= plan.schedule.blocked(k)
        width *= plan.schedule.lanes if plan.node.kind == "compute" else 1
        ports = [(c, m, o, d) for p, c, m, o, d in design.reads if p == name]
        if buf.memory_type == "GLB" and buf.capacity:
            tile.check_glb(name, buf.capacity)
            out[name] = MappedBuffer(name, "global buffer", [], 0, [], 0, width)
            continue
        # loops its address generators walk: a loop of one iteration (a channel unrolled into copies) needs none
        levels = max([sum(1 for e in p.extents if e > 1) for p in buf.ports] or [0])
        if buf.memory_type == MemoryType.Pond:
            tile.check_pond(name, buf.capacity or 0, width, _reads_per_cycle(design, name, ports), levels)
            out[name] = MappedBuffer(name, "pond", [], 0, [], 0, width, "store_in(MemoryType.Pond)", ponds=1)
            continue
        per_port = [_lane_delays(design, name, c, m, o, d) for c, m, o, d in ports]
        why = next((f"port of '{p[0]}': {d}" for p, d in zip(ports, per_port) if isinstance(d, str)), "")
        rereads = [reread_offsets(design.stages[c].iteration(), m) for c, m, _o, _d in ports]
        delays = [] if why else [t + e for d, offsets in zip(per_port, rereads) for t in d for e in offsets]
        if name == design.acc.func.name:
            delays.append(0)  # the host takes the output as it is produced
        registers = buf.memory_type == MemoryType.Register
        if why and registers:
            raise LoomError(f"is stored in registers (store_in(MemoryType.Register)), which hold a delay line, but "
                            f"its reads map to an addressed memory, not to taps of a delay line ({why}); store it "
                            "in a memory tile",
                            where=f"buffer '{name}'", construct="store_in")
        if why:
            if buf.capacity:
                tile.check_loops(name, levels)
            banks = tile.banks(_reads_per_cycle(design, name, ports), width) if buf.capacity else 0
            chained = tile.chain(name, -(-buf.capacity // max(banks, 1))) if buf.capacity else 0
            out[name] = MappedBuffer(name, "addressed memory", [], 0, [], banks * chained, width,
                                     (f"{banks} banks x {chained} chained; " if banks > 1 else "") + why)
            continue
        tap_cycles = sorted(set(delays))
        if tap_cycles == [0] or not tap_cycles:
            out[name] = MappedBuffer(name, "wire", tap_cycles, 0, [], 0, width, tap_cycles=tap_cycles)
            continue
        taps = _value_taps(design, name, ports, tap_cycles)
        if taps is not None and any(len({taps[tap_cycles.index(t + e)] for e in offsets}) > 1
                                    for d, offsets in zip(per_port, rereads) for t in d):
            # a lane's blocks reread a value the chain has shifted between them: a lane reads two taps, which a
            # chain shifting on writes does not give one port (the RTL's delay lines); shift every cycle instead
            taps = None
        shift_on = "write" if taps is not None else "cycle"
        taps = taps if taps is not None else list(tap_cycles)
        regs, lines, prev = 0, [], 0
        longest_shift = taps[-1] if registers else max_shift
        for d in taps:
            gap = d - prev
            if 0 < gap <= longest_shift:
                regs += gap
            elif gap > max_shift:
                lines.append(gap)
            prev = d
        tiles = 0
        if lines:
            chained = [tile.chain(name, line) for line in lines]  # one lane's line delay, chained if long
            by_ports = tile.banks(len(lines) * width, len(lines) * width)
            by_words = tile.tiles_for(sum(lines) * width)
            tiles = max(by_ports, by_words, sum(chained) * width if max(chained) > 1 else 0)
        # an nx x ny block a step: every tap is an nx x ny-word vector (ny interleaved rows of nx words)
        kind = "delay line" if plan.schedule.lanes == 1 and not plan.schedule.floors else "vector delay line"
        out[name] = MappedBuffer(name, kind, taps, regs * width, lines, tiles, width,
                                 "store_in(MemoryType.Register)" if registers else "", tap_cycles=tap_cycles,
                                 shift_on=shift_on)
    for name, buf in design.accumulators.items():
        cap = buf.capacity or 0
        if buf.memory_type == MemoryType.Pond:
            lanes = buf.write_ports[0].schedule.lanes
            tile.check_pond(name, cap, lanes, lanes, _accumulator_loops(buf))
            out[name] = MappedBuffer(name, "accumulation pond", [], 0, [], 0, 1, "store_in(MemoryType.Pond)",
                                     ponds=1)
        elif buf.memory_type == MemoryType.Register:
            out[name] = MappedBuffer(name, "accumulation register", [], cap, [], 0, 1,
                                     "store_in(MemoryType.Register)")
        elif cap <= max_shift:
            out[name] = MappedBuffer(name, "accumulation register", [], cap, [], 0, 1)
        else:
            out[name] = MappedBuffer(name, "accumulation memory", [], 0, [], tile.chain(name, cap), 1)
    return MemoryMap(out)
