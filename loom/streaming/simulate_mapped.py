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
A delay line several lanes wide (dimensions unrolled in space) carries one
value per lane per cycle; a tap reads the lane of the index it wants.
Addressed memories are not replayed (they keep the unified-buffer semantics,
which the capacity check already covers), nor are designs at several pixels
per cycle, which ``map_memories`` maps to addressed memories.
"""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError

from .memory_map import MemoryMap, _constant_delay, map_memories
from .simulate import _gather, _read_grid, simulate


class MappedSimulation:
    """What ``simulate_mapped`` checked: reads replayed per buffer, and the memory map used."""

    def __init__(self):
        self.memory_map: MemoryMap | None = None
        self.replayed_reads: dict[str, int] = {}


def simulate_mapped(output, inputs: dict, size, *, design=None, memory_map: MemoryMap | None = None,
                    report: MappedSimulation | None = None, **map_options) -> np.ndarray:
    """``simulate`` with every delay-line and wire buffer replayed through its taps."""
    report = report if report is not None else MappedSimulation()

    def on_tile(d, buffers, write_times):
        if report.memory_map is None:
            report.memory_map = memory_map or map_memories(d, **map_options)
        _replay(d, report.memory_map, buffers, write_times, report)

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
        if mb is None or mb.kind not in ("wire", "delay line") or design.stages[producer].schedule.lanes > 1 \
                or design.stages[producer].schedule.floors:
            continue  # n pixels per cycle: vector wires and delay lines are not replayed
        _check_chain(mb)
        prod, cons = design.stages[producer], design.stages[consumer].iteration()
        delay = _constant_delay(design, producer, consumer, matrix, offs, divs)
        if delay is None or delay not in (mb.tap_cycles or mb.taps or [0]):
            raise LoomError(f"port of '{consumer}' needs a tap at {delay} cycles but the mapped delay line "
                            f"has taps at {mb.tap_cycles or mb.taps} cycles", where=f"buffer '{producer}'")
        t_write = write_times[producer]
        values = buffers[producer].array
        lanes = [j for j, st in enumerate(prod.schedule.strides) if st == 0]  # dims laid out in space
        n_lanes = int(np.prod([prod.extents[j] for j in lanes])) if lanes else 1
        grids = prod.grids()
        lane_of_point = _lane(lanes, prod.extents, [np.broadcast_to(g, t_write.shape) for g in grids])
        stream = np.zeros((int(t_write.max()) + 1, n_lanes), values.dtype)
        written = np.zeros(stream.shape, bool)
        stream[t_write.ravel(), lane_of_point.ravel()] = values.ravel()
        written[t_write.ravel(), lane_of_point.ravel()] = True
        if written.sum() != t_write.size:
            raise LoomError("two values are written in the same cycle into the same lane of a delay line",
                            where=f"buffer '{producer}'")
        tc, idx = _read_grid(prod, cons, matrix, offs)
        src = tc - delay
        lane = _lane(lanes, prod.extents, idx)
        want = np.broadcast_to(_gather(values, prod, cons, matrix, offs, idx), tc.shape)
        ok = (src >= 0) & (src < stream.shape[0])
        safe = np.where(ok, src, 0)
        ok &= written[safe, lane]
        writes_by = np.cumsum(written.any(axis=1))  # cycles with a write, up to and including each cycle
        depth = writes_by[np.minimum(tc, len(writes_by) - 1)] - writes_by[safe]
        tap = _tap_depth(mb, delay) if mb.shift_on == "write" else delay
        off = ok & (depth != tap) if mb.shift_on == "write" else np.zeros_like(ok)
        if off.any():
            pos = np.unravel_index(np.argmax(off), off.shape)
            raise LoomError(f"tap {delay} cycles = {tap} values deep, but at cycle {int(tc[pos])} the value read "
                            f"was written {int(depth[pos])} writes earlier; a chain shifting on writes would "
                            "deliver the wrong value", where=f"buffer '{producer}'")
        got = stream[safe, lane]
        bad = ~ok | (got != want)
        if bad.any():
            pos = np.unravel_index(np.argmax(bad), bad.shape)
            q = tuple(int(ix[pos]) for ix in idx)
            raise LoomError(f"tap {delay} of the delay line delivers, at cycle {int(tc[pos])}, the value written at "
                            f"cycle {int(src[pos])} instead of {producer}{q} read by '{consumer}'",
                            where=f"buffer '{producer}'")
        report.replayed_reads[producer] = report.replayed_reads.get(producer, 0) + int(tc.size)


def _lane(lanes, extents, coords):
    """Flat lane number of each point from its coordinates in the dims laid out in space."""
    lane = np.zeros(np.shape(coords[0]) if coords else (), np.int64)
    for j in lanes:
        lane = lane * extents[j] + coords[j]
    return lane
