"""Hardware reports of a scheduled design in the form of thesis Tables 6.1, 6.6 and 6.7.

``design_report(design)`` gathers: PEs and MEMs (``resources``), placed compute kernels and unified buffers,
the compute kernels and memories Table 6.6 counts (``clockwork_counts``),
the largest buffer held in a memory tile (bytes per bank, Table 6.6 "MEM (B)") and the accelerator's
output tile per output stream (Table 6.6 "GLB (kB)", which the thesis sizes from the output tile), the
latency of one invocation, and the compute occupancy: ideal cycles (``ideal_cycles``: the busiest
kernel computing a useful value every cycle) over the scheduled latency. PE and MEM use are fractions
of the Amber CGRA: a 16 x 32 array, a quarter of it memory tiles (thesis §2.3): 384 PEs and 128 MEMs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .extract import first_dim_unroll
from .memory_tile import AMBER_MEMORY_TILE, MemoryTile
from .resources import Resources, compute_kernels, count_resources, stage_copies
from .scheduler import Design

AMBER_PES = 384
AMBER_MEMS = 128


@dataclass
class DesignReport:
    name: str
    pes: int
    mems: int
    kernels: int
    buffers: int  # unified buffers holding values (wires excluded)
    mem_bytes: int  # largest buffer in memory tiles, per bank
    glb_bytes: int  # output tile per output stream
    latency: int
    ideal: int
    resources: Resources | None = None
    clockwork: ClockworkCounts | None = None  # Table 6.6's "# Compute Kernels" and "# Memories"
    notes: tuple = ()  # why the design is slow, when the report can tell (``input_bound_note``)

    @property
    def occupancy(self) -> float | None:
        """Ideal over actual cycles; None without a PE (nothing computes: the thesis prints N/A)."""
        return self.ideal / self.latency if self.pes else None

    @property
    def pe_use(self) -> float:
        return self.pes / AMBER_PES

    @property
    def mem_use(self) -> float:
        return self.mems / AMBER_MEMS


@dataclass(frozen=True)
class ClockworkCounts:
    kernels: int
    memories: int


def _defined(f) -> int:
    """Definitions of a Func: its pure one and each update (an update counts once however its reduction runs)."""
    return 1 + len(getattr(f, "updates", ()))


def clockwork_counts(design: Design) -> ClockworkCounts:
    """Thesis Table 6.6's "# Compute Kernels" and "# Memories", counted as the thesis counts them (§6.5).

    "We count each of the compute kernels that are provided to Clockwork. This counts all duplicated compute
    kernels based on the output rate as well as simple compute kernels used for initialization": every
    definition (the pure one, each update) of every Func the accelerator computes, copies included (the GLB
    and memory-tile copies of an input, the GLB output's copy to the host), once per hardware copy (lanes x
    dimensions unrolled in space; a Func streamed with ``stream_to_accelerator`` has Halide's copy of it on
    the accelerator). Memories: one unified buffer per such Func (a wire included), plus one per host buffer
    an input stream reads. Constant tables (weights, ROMs) are neither. Applied by hand to the
    Halide-to-Hardware schedules the thesis ran, this gives all twelve rows (gaussian 16 x 7 = 112 kernels
    and 7 memories: hw_input's GLB and memory-tile copies, blur_unnormalized init and update, blur,
    hw_output and its host copy; host buffer hw_input), so loom's figure is the thesis's where its schedule
    realises the same Funcs (docs/pipelines.md)."""
    acc, glb = design.acc, design.acc.glb
    kernels, memories, hosts = 0, 0, set()
    for name, node in acc.stages.items():
        src, defined = node.source, _defined(node.source)
        if node.kind == "stream" and not (glb is not None and glb.is_buffer(src)):
            hosts.add(id(src))  # the host's buffer itself
            if not getattr(src, "schedule", None) or not src.schedule.stream_to_accelerator:
                continue
            defined = 1  # Halide wraps a streamed Func in a copy on the accelerator (its ``in()``)
        elif node.kind == "stream":  # a GLB copy: its kernel fills the GLB from the host buffer it copies
            hosts.add(id(src.wrapped))
            # unrolled as its own schedule says, whatever rate the memory-tile copy reads it at
            kernels += defined * stage_copies(design, name) * first_dim_unroll(src) // design.stages[name].schedule.lanes
            memories += 1
            continue
        kernels += defined * stage_copies(design, name)
        memories += 1
    if glb is not None:  # the GLB output's copy to the host (thesis hw_output.in())
        kernels += stage_copies(design, acc.func.name)
        memories += 1
    return ClockworkCounts(kernels, memories + len(hosts))


def ideal_cycles(design: Design, resources: Resources | None = None) -> int:
    """Cycles if the busiest kernel computed a useful value every cycle (thesis §6.5, "compute occupancy").

    A stage's useful values are those the output's points depend on, halos aside (``useful_extents``: for
    the first level of a 2 x 2 pyramid, twice the output's extent along x and y), times the cycles of a
    reduction iterated in time, shared among its copies (lanes, dimensions in space). A stage unrolled
    beyond the rate it needs idles, and is not counted busier."""
    useful = useful_extents(design)
    resources = resources if resources is not None else count_resources(design)
    name = design.acc.func.name
    shared = set(design.sharing.stages) if design.sharing else set()
    work = {}
    for s, used in resources.stages.items():
        if not used.pes_per_copy and s != name:  # a cast or copy computes nothing
            continue
        w = Fraction(design.stages[s].reduction_cycles, stage_copies(design, s))  # a point's reduction cycles
        for e in useful.get(s, design.stages[s].extents):
            w *= e
        key = "shared" if s in shared else s  # a shared kernel does all its members' work
        work[key] = work.get(key, 0) + w
    return math.ceil(max(work.values()))


def useful_extents(design: Design) -> dict:
    """Stage -> per dimension, the extent the output's points need, halos aside: the output's extents carried
    back through the reads (``f(2x, y)`` doubles the extent along x, ``f(x / 2, y)`` halves it, the largest
    over the consumers); a dimension only loops iterated in time or constants index is needed whole."""
    out = design.acc.func.name
    need = {out: tuple(Fraction(e) for e in design.stages[out].extents)}
    for _ in range(len(design.stages)):  # consumers before producers: settles within as many passes
        changed = False
        for prod, cons, matrix, _offs, divs in design.reads:
            if cons not in need:
                continue
            per, whole = need[cons], design.stages[prod].extents
            new = []
            for row, d, e in zip(matrix, divs, whole):
                n = sum((abs(a) * per[k] for k, a in enumerate(row) if k < len(per)), Fraction(0)) / d
                new.append(min(n, Fraction(e)) if n else Fraction(e))
            old = need.get(prod)
            merged = tuple(new) if old is None else tuple(max(a, b) for a, b in zip(old, new))
            if merged != old:
                need[prod], changed = merged, True
        if not changed:
            break
    return need


def design_report(design: Design, name: str = "", *, tile: MemoryTile = AMBER_MEMORY_TILE) -> DesignReport:
    res = count_resources(design, tile=tile)
    out = design.stages[design.acc.func.name]
    streams = stage_copies(design, out.name)
    points = 1
    for e in out.extents:
        points *= e
    mem_words = 0
    for mb in res.memory.buffers.values():
        if mb.mem_tiles:  # a lane's line delays (one value per cycle each), or an addressed memory per tile
            if mb.line_delays:  # one lane's delays, split over the tiles they chain through when longer than one
                lane = sum(mb.line_delays)
                words = -(-lane // -(-lane // tile.words))
            else:
                words = -(-design_capacity(design, mb.name) // mb.mem_tiles)
            mem_words = max(mem_words, words)
    held = sum(1 for b in list(design.buffers.values()) + list(design.accumulators.values()) if b.capacity)
    pes = res.pes
    if design.sharing:  # the members' identical kernels are one in hardware
        members = [res.stages[m].pes for m in design.sharing.stages if m in res.stages]
        pes -= sum(members) - max(members, default=0)
    report = DesignReport(name or design.acc.func.name, pes, res.mems, compute_kernels(design, res), held,
                          mem_words * tile.word_bytes, -(-points // streams) * tile.word_bytes, design.latency,
                          ideal_cycles(design, res), res, clockwork_counts(design))
    note = input_bound_note(design, report)
    report.notes = (note,) if note else ()
    return report


def input_bound_note(design: Design, report: DesignReport) -> str:
    """Why a design computes less than half the time, when a host stream is the cause: the longest stream
    delivers fewer than one value every 1.5 cycles and spans at least half the latency. Its input memory
    filled at its own rate (``unroll`` beyond the output's rate) takes a value a cycle."""
    if report.occupancy is None or report.occupancy >= 0.5:
        return ""
    spans = []
    for name, plan in design.stages.items():
        if plan.node.kind == "stream":
            # from its first value (a stream read only where it is copied arrives when read, not at cycle 0)
            first = int(plan.schedule.times([np.int64(0) for _ in plan.extents]))
            last = int(plan.schedule.times([np.int64(e - 1) for e in plan.extents]))
            spans.append((last - first + 1, math.prod(plan.extents), name))
    if not spans:
        return ""
    span, values, stream = max(spans)
    if 2 * span < design.latency or 2 * span < 3 * values:
        return ""
    memory = design.acc.stages[next(c for p, c, *_ in design.reads if p == stream)]
    lanes = memory.lanes * math.ceil(span / values)  # its pixels per step now, times the cycles per value
    return (f"{report.name}: input-bound: host stream '{stream}' delivers {values} values over {span} of the "
            f"{design.latency} cycles (one every {span / values:.1f}); fill its input memory at its own rate, "
            f"e.g. {memory.name}.unroll({memory.dims[0]}, {lanes})")


def glb_summary(design: Design, size, *, tile: MemoryTile = AMBER_MEMORY_TILE) -> str:
    """The GLB level of a two-level design (thesis Code 3.6) for an output of ``size``: what one GLB tile holds,
    the fabric tiles it feeds and its cycles (fabric tiles run back to back); empty for one level."""
    glb = design.acc.glb
    if glb is None:
        return ""
    gt = glb.glb_tile(size)
    leaves = [n.source for n in design.acc.stages.values() if n.kind == "stream"]
    held = glb.contents(gt, leaves)
    fabric = 1
    for g, t in zip(gt, design.size):
        fabric *= -(-g // t)
    lines = [f"GLB tile {'x'.join(map(str, gt))}: {fabric} fabric tiles of {'x'.join(map(str, design.size))}, "
             f"{fabric * design.latency} cycles"]
    for name, ext in held.items():
        words = math.prod(ext)
        fits = "" if words * tile.word_bytes <= tile.glb_bytes else f" (more than the {tile.glb_bytes // 1024} kB GLB)"
        lines.append(f"  {name}: {'x'.join(map(str, ext))} = {words} words, "
                     f"{words * tile.word_bytes / 1024:.1f} kB{fits}")
    return "\n".join(lines + _output_levels(design, glb, gt, fabric, tile))


def _output_levels(design: Design, glb, gt, fabric: int, tile: MemoryTile) -> list:
    """The output's way out, fabric to host (thesis Code 3.8): what each level holds, its MEMs and cycles."""
    from .memory_map import map_memories

    out = ["output levels, fabric to host:"]
    for f, level, _ in glb.output_levels():
        if level == "memory tile":
            b, mb = design.buffers[f.name], map_memories(design, tile=tile).buffers[f.name]
            out.append(f"  {f.name} (memory tile, per fabric tile): {b.capacity} words held ({mb.kind}), "
                       f"{mb.mem_tiles} MEMs, written cycles {design.stages[f.name].offset}..{design.latency - 1}")
        elif level == "GLB":
            words = math.prod(gt)
            out.append(f"  {f.name} (GLB, per GLB tile): {'x'.join(map(str, gt))} = {words} words, "
                       f"{words * tile.word_bytes / 1024:.1f} kB, complete after {fabric} fabric tiles = "
                       f"{fabric * design.latency} cycles")
        else:
            out.append(f"  {f.name} (host): copies each GLB tile out once it is complete")
    return out


def design_capacity(design: Design, name: str) -> int:
    b = design.buffers.get(name) or design.accumulators.get(name)
    return (b.capacity or 0) if b is not None else 0


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def format_reports(rows, thesis: dict | None = None) -> str:
    """Tables 6.6 and 6.7 side by side for ``rows`` (DesignReports); ``thesis`` name -> published figures
    (keys: pe_use, mem_use, occupancy, latency, kernels, memories, mem_bytes, glb_kb) printed alongside.
    "kernels" and "memories" are Table 6.6's (``clockwork_counts``); "placed": kernels with a PE, copies
    included (``Resources.kernels``)."""
    thesis = thesis or {}
    head = ("app", "PEs", "MEMs", "kernels", "memories", "placed", "MEM (B)", "GLB (kB)", "% PEs", "% MEMs",
            "occupancy", "latency")
    lines = [head]
    for r in rows:
        cw = r.clockwork
        lines.append((r.name, str(r.pes), str(r.mems), str(cw.kernels) if cw else "", str(cw.memories) if cw else "",
                      str(r.kernels), str(r.mem_bytes),
                      f"{r.glb_bytes / 1024:.2f}", _pct(r.pe_use), _pct(r.mem_use),
                      _pct(r.occupancy) if r.occupancy is not None else "N/A",
                      str(r.latency)))
        t = thesis.get(r.name)
        if t:
            lines.append(("  thesis", "", "", str(t.get("kernels", "")), str(t.get("memories", "")), "",
                          str(t.get("mem_bytes", "")), str(t.get("glb_kb", "")),
                          _pct(t["pe_use"]) if "pe_use" in t else "", _pct(t["mem_use"]) if "mem_use" in t else "",
                          _pct(t["occupancy"]) if t.get("occupancy") else "N/A", str(t.get("latency", ""))))
    notes = [f"{r.name}: {r.pes} PEs and {r.mems} MEMs do not fit one Amber CGRA ({AMBER_PES} PEs, {AMBER_MEMS} "
             "MEMs): lower the output rate or unrolling, or take smaller tiles"
             for r in rows if r.pes > AMBER_PES or r.mems > AMBER_MEMS]
    notes += [note for r in rows for note in r.notes]
    return "\n".join([format_rows(lines[0], lines[1:])] + notes)


def format_rows(head, rows) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    lines = [tuple(head)] + [tuple(r) for r in rows]
    w = [max(len(line[i]) for line in lines) for i in range(len(head))]
    text = ["  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(line)).rstrip() for line in lines]
    text.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(text)


__all__ = ["AMBER_MEMS", "AMBER_PES", "ClockworkCounts", "DesignReport", "clockwork_counts", "design_report",
           "format_reports", "format_rows", "glb_summary", "ideal_cycles", "useful_extents"]
