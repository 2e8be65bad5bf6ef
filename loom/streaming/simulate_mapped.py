"""Simulation of the memory-mapped design: delay-line buffers move data by shifting only.

A buffer that ``map_memories`` turns into a delay line (shift registers and line
delays, no addresses) gives a read port, at cycle t, whatever its producer wrote
d cycles earlier, d being the port's tap on the chain. ``simulate_mapped`` runs
the scheduled simulation and, for every invocation, replays each delay-line or
wire buffer as a stream indexed by cycle (the chain shifts every cycle) and
checks that every tap delivers, at every read cycle, exactly the value the
unified buffer's address-based read returns, so the kernels see the same
operands and the mapped design computes the same image. It also checks the
chain itself: every port's delay is one of the buffer's taps, the shift
registers plus line delays add up to the deepest tap, and a chain that shifts
on writes (sized in values) finds every read's value exactly at its tap: the
producer wrote the tap's number of values between the value's write and its read.
A delay line several lanes wide (dimensions unrolled in space, an nx x ny
block a step) carries one value per lane per step; each consumer lane reads
the lane of the index it wants at its own tap. Addressed memories are not
replayed (they keep the unified-buffer semantics, which the capacity check
already covers), nor are compute sharing's split loops.
"""

from __future__ import annotations

import numpy as np

from loom.core.compare import bits_differ
from loom.errors import LoomError

from .memory_map import MemoryMap, _lane_delays, lane_of, map_memories, reread_delay, reread_offsets, steps
from .simulate import _gather, _read_grid, simulate


class MappedSimulation:
    """What ``simulate_mapped`` checked: reads replayed per buffer, and the memory map used."""

    def __init__(self):
        self.memory_map: MemoryMap | None = None
        self.replayed_reads: dict[str, int] = {}


def simulate_mapped(output, inputs: dict, size, *, design=None, memory_map: MemoryMap | None = None,
                    report: MappedSimulation | None = None, **map_options) -> np.ndarray:
    """``simulate`` with every delay-line and wire buffer replayed through its taps.

    ``memory_map`` is the map of ``design`` (else of the first tile's design); a tile with a design of its own
    (a smaller GuardWithIf tile, a read through x / k at another phase) is replayed through that design's map."""
    report = report if report is not None else MappedSimulation()
    maps = {}  # id(design) -> (design, its map): one map per configuration the tiles use

    def on_tile(d, buffers, write_times, _ir):
        if id(d) not in maps:
            given = memory_map is not None and (d is design or (design is None and not maps))
            maps[id(d)] = (d, memory_map if given else map_memories(d, **map_options))
        mm = maps[id(d)][1]
        if report.memory_map is None:
            report.memory_map = mm
        _replay(d, mm, buffers, write_times, report)

    return simulate(output, inputs, size, design=design, on_tile=on_tile)


def _check_chain(mb):
    regs = mb.shift_registers // max(mb.width, 1)
    length = sum(mb.line_delays) + regs
    if mb.taps and length != max(mb.taps):
        unit = "values" if mb.shift_on == "write" else "cycles"
        raise LoomError(f"the delay line has {regs} shift registers and line delays {mb.line_delays} "
                        f"({length} {unit}) but its deepest tap is {max(mb.taps)} {unit}",
                        where=f"buffer '{mb.name}'")


def _tap_depth(mb, delay: int) -> int:
    """The tap's position in values of the chain for a port ``delay`` cycles behind the write."""
    cycles = mb.tap_cycles or mb.taps or [0]
    return (mb.taps or [0])[cycles.index(delay)]


def _replay(design, mm: MemoryMap, buffers, write_times, report: MappedSimulation):
    for producer, consumer, matrix, offs, divs in design.reads:
        mb = mm.buffers.get(producer)
        if mb is None or mb.kind not in ("wire", "delay line", "vector delay line") \
                or steps(design.stages[producer]) is None:
            continue
        _check_chain(mb)
        prod, cons = design.stages[producer], design.stages[consumer].iteration()
        per_lane = _lane_delays(design, producer, consumer, matrix, offs, divs)
        taps = mb.tap_cycles or mb.taps or [0]
        if isinstance(per_lane, str):
            raise LoomError(f"port of '{consumer}': {per_lane}, but the buffer is mapped to a {mb.kind}",
                            where=f"buffer '{producer}'")
        missing = sorted({t + e for t in per_lane for e in reread_offsets(cons, matrix)} - set(taps))
        if missing:
            raise LoomError(f"port of '{consumer}' needs a tap at {', '.join(map(str, missing))} cycles but the "
                            f"mapped delay line has taps at {taps} cycles", where=f"buffer '{producer}'")
        t_write = write_times[producer]
        values = buffers[producer].array
        n_lanes = int(np.prod([b for b, _c in steps(prod)]))
        lane_of_point = lane_of(prod, [np.broadcast_to(g, t_write.shape) for g in prod.grids()])
        stream = np.zeros((int(t_write.max()) + 1, n_lanes), values.dtype)
        written = np.zeros(stream.shape, bool)
        stream[t_write.ravel(), lane_of_point.ravel()] = values.ravel()
        written[t_write.ravel(), lane_of_point.ravel()] = True
        if written.sum() != t_write.size:
            raise LoomError("two values are written in the same cycle into the same lane of a delay line",
                            where=f"buffer '{producer}'")
        tc, idx = _read_grid(prod, cons, matrix, offs, divs)
        cons_lane = lane_of(cons, [np.broadcast_to(g, tc.shape) for g in cons.grids()])
        delay = np.asarray(per_lane)[cons_lane] + reread_delay(cons, matrix, [np.broadcast_to(g, tc.shape)
                                                                             for g in cons.grids()])
        src = tc - delay
        lane = lane_of(prod, idx)
        want = np.broadcast_to(_gather(values, prod, cons, matrix, offs, idx, divs), tc.shape)
        ok = (src >= 0) & (src < stream.shape[0])
        safe = np.where(ok, src, 0)
        ok &= written[safe, lane]
        if mb.shift_on == "write":
            writes_by = np.cumsum(written.any(axis=1))  # cycles with a write, up to and including each cycle
            depth = writes_by[np.minimum(tc, len(writes_by) - 1)] - writes_by[safe]
            tap = np.vectorize(lambda d: _tap_depth(mb, int(d)), otypes=[np.int64])(delay)
            off = ok & (depth != tap)
            if off.any():
                pos = np.unravel_index(np.argmax(off), off.shape)
                raise LoomError(f"tap {int(delay[pos])} cycles = {int(tap[pos])} values deep, but at cycle "
                                f"{int(tc[pos])} the value read was written {int(depth[pos])} writes earlier; a "
                                "chain shifting on writes would deliver the wrong value", where=f"buffer '{producer}'")
        got = stream[safe, lane]
        bad = ~ok | bits_differ(got, want)
        if bad.any():
            pos = np.unravel_index(np.argmax(bad), bad.shape)
            q = tuple(int(ix[pos]) for ix in idx)
            raise LoomError(f"tap {int(delay[pos])} of the delay line delivers, at cycle {int(tc[pos])}, the value "
                            f"written at cycle {int(src[pos])} instead of {producer}{q} read by '{consumer}'",
                            where=f"buffer '{producer}'")
        report.replayed_reads[producer] = report.replayed_reads.get(producer, 0) + int(tc.size)
