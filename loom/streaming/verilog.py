"""A scheduled streaming design as SystemVerilog: one invocation (tile) of the accelerator, cycle for cycle.

``design_verilog(design, ir)`` writes the module ``loom_stream_top`` from the ``ubuf`` IR's kernels and access
maps and the design's cycle schedules and memory map:

- a global cycle counter; per stage, the counters of its loops iterated in time (the thesis's address generator:
  its steps, its reductions iterated in time, compute sharing's split coarse loops) firing the stage when the
  cycle reaches its next iteration's read time;
- per stage and lane (dimensions unrolled in space, x lanes, rows a step), the ``ubuf.kernel`` as
  combinational logic (arith ops on the same bit patterns as ``kernel_eval``), then ``latency`` registers; a
  reduction iterated in time keeps its partial sums in an accumulator memory; stages sharing a kernel (thesis
  §5) get one copy of its logic with their operands multiplexed;
- per buffer the memory map makes a delay line, its chain: registers, and a circular-buffer memory per line
  delay, shifting on its producer's writes; a read port is a fixed entry of it, found by replaying every read of
  the invocation (constant per lane, and one of the memory map's taps: a cross-check of ``map_memories``);
- per buffer the memory map addresses, a circular memory over the addresses held at once (its whole domain when
  that is no smaller), read at the access map's index;
- an input port per stream and lane (the host's words, one a cycle it asserts ``ready``), ports for the tile's
  origin where a kernel reads its coordinates, and the output's words with ``out_valid``.

A last block past a dimension's extent (lanes that do not divide it) has idle lanes: their values are never read
and never written to a memory. f32 kernels compute with ``verilog_float``'s IEEE functions (one
combinational cycle, as integer kernels). Refused by name: other float types and ops this emitter does not know, schedules whose
iterations do not fire in their loops' order, shared stages with other kernels, lanes or reductions in time. ``verilog_ops`` writes the kernels' ops; ``verilog_harness.verilog_harness(rtl)`` is the C++ driver the
co-simulation (``loom.jit.streaming_rtl``) Verilates with it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from loom.errors import LoomError

from .ir_reader import IrDesign
from .kernel_eval import KernelEvaluator
from .live_count import live_address_span
from .verilog_float import FORMATS, float_functions, prefix
from .verilog_address import WrappingAddress, counter_bits
from .verilog_ops import KernelOps, address_bits, value_bits
from .memory_map import dim_step, map_memories
from .scheduler import Design, StagePlan, affine_index, last_reads

TOP = "loom_stream_top"
MAX_SHIFT = 4  # the memory map's default: longer gaps between taps are line delays in memory
_DELAY_KINDS = ("wire", "delay line", "vector delay line")
# a wrapping address costs about three times its flip-flops: per bit the register, the step's adder and the wrap's
# compare-and-subtract (Yosys on the bench's six designs with circular memories, every one wrapping: 400 more
# coarse cells and 247 more flip-flop bits for 3,088 fewer memory bits)
COUNTER_COST = 3


class Loop(NamedTuple):
    """A loop of a stage's address generator: ``dim`` advances by ``scale`` an iteration (a block of B values, or
    m values for the outer loop of a compute-sharing split), ``extent`` iterations of ``cycles`` each; ``key``
    names its counter."""
    dim: int
    extent: int
    cycles: int
    scale: int
    key: str


@dataclass
class RtlStage:
    """One stage's hardware: its loops (iterated in time, innermost first: the steps of its dims, and its
    reductions iterated in time, dims >= len(blocks)), lanes, taps. A stage reads at every iteration and writes a
    step after its last reduction iteration and ``latency`` cycles."""
    name: str
    kind: str  # "stream" | "compute"
    width: int  # bits of one value
    blocks: tuple  # values a step per dim (B_k)
    loops: list  # Loop, innermost (fewest cycles) first
    read_offset: int  # cycle of the first iteration's reads
    write_offset: int  # cycle of the first step's write
    latency: int
    lanes: list  # block offsets of each lane, in ``lane_of`` order
    extents: tuple = ()
    taps: dict = field(default_factory=dict)  # port index -> ("delay", [(producer lane, depth, writing) per lane])
    #                                           or ("address", rows, offsets, divisors, forwarded lanes)
    mins_used: list = field(default_factory=list)  # dims whose coordinate the kernel reads
    addressed: bool = False  # a consumer reads it through an addressed memory (circular over the buffer's domain)
    n_reductions: int = 0

    @property
    def write_loops(self) -> list:
        return [lp for lp in self.loops if lp.dim < len(self.blocks)]

    @property
    def reduction_loops(self) -> list:
        return [lp for lp in self.loops if lp.dim >= len(self.blocks)]

    @property
    def n_steps(self) -> int:
        return int(np.prod([lp.extent for lp in self.write_loops], dtype=np.int64))

    def points(self, loops) -> np.ndarray:
        """Every point (its dims, x first, then the reduction loops') of ``loops``'s iterations in firing order,
        lanes within an iteration."""
        nd, width = len(self.blocks), len(self.blocks) + self.n_reductions
        pts = []
        for outer in itertools.product(*[range(lp.extent) for lp in reversed(loops)]):  # outermost first
            it = [0] * width
            for lp, v in zip(reversed(loops), outer):
                it[lp.dim] += lp.scale * v
            for lane in self.lanes:
                pts.append([it[k] + lane[k] for k in range(nd)] + it[nd:])
        return np.asarray(pts, np.int64).reshape(-1, width)

    def step_index(self, idx) -> np.ndarray:
        """The write step (in firing order) holding each point ``idx`` (per dim arrays)."""
        step, stride = np.zeros(np.shape(idx[0]), np.int64), 1
        for lp in self.write_loops:
            step = step + ((idx[lp.dim] // lp.scale) % lp.extent) * stride
            stride *= lp.extent
        return step

    def lane_of(self, idx) -> np.ndarray:
        """The lane (``memory_map.lane_of``'s mixed radix over the blocks, x first) of each point."""
        lane = np.zeros(np.shape(idx[0]), np.int64)
        for b, g in zip(self.blocks, idx):
            lane = lane * b + g % b
        return lane

    def write_points(self) -> np.ndarray:
        """Every lane's point of every step, in firing order (idle lanes of a last block past the extent too)."""
        return self.points(self.write_loops)[:, :len(self.blocks)]

    def valid(self, pts) -> np.ndarray:
        """Which of ``points``' points lie in the stage's domain (not an idle lane of a partial block)."""
        return np.all(pts[:, :len(self.blocks)] < np.asarray(self.extents), axis=1)

    @property
    def partial(self) -> bool:
        return any(e % b for e, b in zip(self.extents, self.blocks))

    def read_times(self) -> np.ndarray:
        return _times(self.read_offset, self.loops)

    def write_times(self) -> np.ndarray:
        return _times(self.write_offset, self.write_loops)


def _times(offset: int, loops) -> np.ndarray:
    t = np.zeros(1, np.int64) + offset
    for lp in reversed(loops):  # outermost first
        t = (t[:, None] + lp.cycles * np.arange(lp.extent, dtype=np.int64)[None, :]).ravel()
    return t


@dataclass
class RtlDesign:
    verilog: str
    stages: dict  # name -> RtlStage, in the design's order
    streams: list  # stream stage names, in port order
    output: str
    width: int  # bits of an output value
    cycles: int  # the invocation's latency (the design's)
    chains: dict = field(default_factory=dict)  # delay-line buffer -> (registers, [words of each line delay memory])
    memories: dict = field(default_factory=dict)  # addressed buffer -> words of its circular memory
    rounded_memories: dict = field(default_factory=dict)  # addressed buffer -> words rounded to a power of two
    float_widths: tuple = ()  # the float formats its kernels compute in (bits): their functions are in the module


@dataclass
class _SharedKernel:
    name: str
    stages: list
    width: int
    lanes: int
    operands: dict  # stage -> per lane (coordinates, read wires)


def _check_sharing(design: Design, ir: IrDesign, rtl: dict):
    """The stages of a shared kernel compute one kernel (the same ops on the same operand positions) on lanes alike,
    with nothing iterated in time: one copy of its logic then serves each of them in its slots."""
    sh = design.sharing
    if sh is None:
        return
    where = f"shared kernel '{sh.name}'"
    shapes = {st: _region_shape(ir.kernel(st).init.block) for st in sh.stages}
    first = sh.stages[0]
    for st in sh.stages[1:]:
        if shapes[st] != shapes[first]:
            raise LoomError(f"stages '{first}' and '{st}' share it but their kernels differ; the RTL shares one "
                            "kernel's logic", where=where)
        if len(rtl[st].lanes) != len(rtl[first].lanes) or rtl[st].width != rtl[first].width:
            raise LoomError(f"stages '{first}' and '{st}' share it with other lanes or value widths", where=where)
    for st in sh.stages:
        if design.stages[st].red_extents:
            raise LoomError(f"stage '{st}' shares it and iterates a reduction in time, which has no shared RTL "
                            "form yet", where=where)


def _region_shape(block) -> list:
    """A kernel region up to the names of its values: each op, its properties and where its operands come from."""
    index = {a: ("arg", a.index) for a in block.args}
    shape = []
    for i, op in enumerate(block.ops):
        shape.append((op.name, tuple(index[o] for o in op.operands), tuple(str(r.type) for r in op.results),
                      str(op.properties), str(op.attributes)))
        index.update({r: ("op", i, j) for j, r in enumerate(op.results)})
    return shape


def _stage(plan: StagePlan, width: int) -> RtlStage:
    where = f"stage '{plan.name}'"
    s = plan.schedule
    split = {k: (m, c) for k, m, c in s.floors if s.strides[k]}  # compute sharing's coarse loops
    if split and s.lanes > 1:
        raise LoomError("split coarse loops with several pixels a cycle have no RTL form yet", where=where)
    blocks, loops = [], []
    for k, e in enumerate(plan.extents):
        if k in split:  # p = m q + r: r every stride cycles, q every m strides plus the coarse step's c
            m, c = split[k]
            if e % m:
                raise LoomError(f"dimension {k} has {e} values in coarse steps of {m}; the RTL needs whole steps",
                                where=where)
            blocks.append(1)
            loops += [Loop(k, m, s.strides[k], 1, f"{k}"), Loop(k, e // m, s.strides[k] * m + c, m, f"{k}q")]
            continue
        b, c = dim_step(plan, k)  # a last block past the extent has idle lanes (``valid``)
        blocks.append(b)
        loops.append(Loop(k, -(-e // b), c, b, f"{k}"))
    nd = len(plan.extents)
    it = plan.iteration()
    loops += [Loop(nd + j, e, c, 1, f"{nd + j}") for j, (e, c) in
              enumerate(zip(plan.red_extents, it.schedule.strides[nd:]))]
    lanes = [tuple(v) for v in itertools.product(*(range(b) for b in blocks))]
    rs = RtlStage(plan.name, plan.node.kind if plan.node.kind == "stream" else "compute", width, tuple(blocks),
                  sorted((lp for lp in loops if lp.extent > 1), key=lambda lp: lp.cycles), it.schedule.offset,
                  plan.offset, plan.latency, lanes, tuple(plan.extents), n_reductions=len(plan.red_extents))
    for what, times in (("iterations", rs.read_times()), ("steps", rs.write_times())):
        if np.any(np.diff(times) <= 0):
            raise LoomError(f"its {what} do not fire in the order of its loops (interleaved schedules have no RTL "
                            "form yet)", where=where)
    return rs


def _derive_taps(design: Design, ir: IrDesign, rtl: dict, mm) -> None:
    """Per compute stage and read port: the (producer lane, depth in writes) each lane reads, constant over the
    invocation, else refused naming the buffer."""
    for name, rs in rtl.items():
        if rs.kind == "stream":
            continue
        kernel = ir.kernel(name)
        pts = rs.points(rs.loops)
        t_read = np.repeat(rs.read_times(), len(rs.lanes))
        lane_ids = np.tile(np.arange(len(rs.lanes)), len(pts) // len(rs.lanes))
        live = rs.valid(pts)  # an idle lane reads nothing the design holds: its taps follow the live ones
        pts, t_read, lane_ids = pts[live], t_read[live], lane_ids[live]
        for i, (buf, port) in enumerate(kernel.read_ports()):
            where = f"buffer '{buf}', port '{port}' of '{name}'"
            mb = mm.buffers.get(buf)
            if buf not in rtl:
                raise LoomError(f"reads @{buf}, which is not a stage of the design", where=where)
            prod = rtl[buf]
            rows, offs, divs = ir.access(buf, port)
            if any(len(r) != pts.shape[1] for r in rows):
                raise LoomError(f"its access map takes {len(rows[0]) if rows else 0} loop dimensions; the stage "
                                f"iterates {pts.shape[1]}", where=where)
            grids = [pts[:, k] for k in range(pts.shape[1])]
            idx = [affine_index(r, c, grids, d) for r, c, d in zip(rows, offs, divs)]
            ptimes = prod.write_times()  # write cycles of the producer's steps
            t_write = ptimes[prod.step_index(idx)]
            if np.any(t_write > t_read):
                raise LoomError("a read comes before the value's write", where=where)
            plane = prod.lane_of(idx)
            if mb is not None and (mb.kind not in _DELAY_KINDS or mb.shift_on != "write"):
                # an addressed memory: the read's address from the consumer's coordinates, as its access map says;
                # forwarded from the producer's lanes that write a word in the cycle it is read
                for r, c in zip(rows, offs):
                    if np.any(sum(a * g for a, g in zip(r, grids)) + c < 0):
                        raise LoomError("an index's numerator goes below 0 (the RTL divides unsigned)", where=where)
                rs.taps[i] = ("address", rows, offs, divs, sorted(set(plane[t_write == t_read].tolist())))
                prod.addressed = True
                continue
            depth = np.searchsorted(ptimes, t_read, "right") - np.searchsorted(ptimes, t_write, "right")
            writing = np.isin(t_read, ptimes)
            taps = []
            for lane in range(len(rs.lanes)):
                sel = lane_ids == lane
                pairs = set(zip(plane[sel].tolist(), depth[sel].tolist()))
                if not pairs:  # a lane idle in every step (a block wider than the extent)
                    taps.append((0, 0, True))
                    continue
                if len(pairs) != 1:
                    raise LoomError(f"lane {lane} reads {len(pairs)} different (lane, delay) pairs of the producer: "
                                    "the memory map made it a delay line, which cannot serve it", where=where)
                now = set(writing[sel].tolist())
                taps.append((*pairs.pop(), now.pop() if len(now) == 1 else None))
            if mb is not None and mb.taps:
                wrong = sorted({d for _l, d, _w in taps} - set(mb.taps) - {0})
                if wrong:
                    raise LoomError(f"taps at depths {wrong} are not among the memory map's {mb.taps}", where=where)
            rs.taps[i] = ("delay", taps)


def design_verilog(design: Design, ir: IrDesign) -> RtlDesign:
    """The SystemVerilog of one invocation of ``design`` (kernels and accesses from ``ir``)."""
    mm = map_memories(design)
    rtl = {}
    for name, plan in design.stages.items():
        width = _stage_bits(plan, ir)
        rtl[name] = _stage(plan, width)
    _derive_taps(design, ir, rtl, mm)
    _check_sharing(design, ir, rtl)
    out = design.acc.func.name
    for name, rs in rtl.items():
        if rs.kind == "compute":
            blocks = [r.block for r in (ir.kernel(name).init, ir.kernel(name).update) if r.blocks]
            rs.mins_used = [k for k in range(len(rs.blocks)) if any(b.args[k].uses for b in blocks)]
    emitter = _Emitter(design, ir, rtl, mm)
    text = emitter.module()
    streams = [n for n, rs in rtl.items() if rs.kind == "stream"]
    return RtlDesign(text, rtl, streams, out, rtl[out].width, design.latency, emitter.chains, emitter.memories,
                     emitter.rounded, tuple(sorted(emitter.float_widths)))


def _counter_bits(lp: Loop) -> int:
    """Bits of a loop's counter: its last value."""
    return max(1, (lp.extent - 1).bit_length())


def _stage_bits(plan: StagePlan, ir: IrDesign) -> int:
    where = f"stage '{plan.name}'"
    if plan.node.kind == "stream":
        dt = np.dtype(plan.node.source.type.dtype)
        if dt.kind not in "iub" and dt != np.float32:
            raise LoomError(f"streams of {dt} have no RTL form here (integers and f32 only)", where=where)
        return 1 if dt.kind == "b" else 8 * dt.itemsize
    kernel = ir.kernel(plan.name)
    yields = [op for op in kernel.init.block.ops if op.name == "ubuf.yield"] if kernel.init.blocks else []
    if not yields:
        raise LoomError("the kernel has no ubuf.yield in its init region", where=f"ubuf.kernel '{plan.name}'")
    return value_bits(yields[0].operands[0].type, where)


def _write_address_bits(rs: RtlStage) -> int:
    """Bits of a write address of ``rs``'s memory: one more word (an idle lane's nowhere) for partial blocks."""
    return address_bits(int(np.prod(rs.extents)) + rs.partial)


class _Emitter:
    def __init__(self, design, ir, rtl, mm):
        self.design, self.ir, self.rtl, self.mm = design, ir, rtl, mm
        self.lines: list[str] = []
        self.decls: list[str] = []  # buffers' registers and memories: declared before the stages that read them
        self.n = 0
        self.chains: dict = {}  # buffer -> (registers, [words of each line delay's memory])
        self.memories: dict = {}  # addressed buffer -> words of its memory
        self.rounded: dict = {}  # addressed buffer -> its words at the power of two at or above its span
        self.shares: dict = {}  # name -> _SharedKernel
        self.share_of: dict = {}  # stage -> its _SharedKernel
        self.float_widths: set[int] = set()  # the float formats the kernels compute in (32)
        self._evaluator = None
        if design.sharing is not None:
            sh = design.sharing
            group = _SharedKernel(f"share_{sh.name}", list(sh.stages), rtl[sh.stages[0]].width,
                                  len(rtl[sh.stages[0]].lanes), {st: [] for st in sh.stages})
            self.shares[sh.name] = group
            self.share_of.update({st: group for st in sh.stages})

    def evaluator(self) -> KernelEvaluator:
        """``kernel_eval``'s evaluator over the IR's tables: the RTL folds constants with the simulator's bits."""
        if self._evaluator is None:
            self._evaluator = KernelEvaluator(self.ir.tables, f"RTL of '{self.design.acc.func.name}'")
        return self._evaluator

    @property
    def cycle_bits(self) -> int:
        """Bits of the cycle counter and the stages' firing times: past the latency by the drivers' 64 cycles of
        grace, so it never wraps while a driver waits for the output."""
        return (self.design.latency + 64).bit_length()

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"{stem}_{self.n}"

    def float_format(self, bits: int) -> str:
        """The name prefix of the functions of ``bits``-bit floats, written into the module."""
        self.float_widths.add(bits)
        return prefix(FORMATS[bits])

    def float_functions(self) -> list[str]:
        return [float_functions(FORMATS[bits]) for bits in sorted(self.float_widths)]

    def module(self) -> str:
        ports = ["input  logic clk", "input  logic rst"]
        for name, rs in self.rtl.items():
            if rs.kind == "stream":
                ports += [f"input  logic [{rs.width - 1}:0] s_{name}_{l}" for l in range(len(rs.lanes))]
                ports.append(f"output logic s_{name}_ready")
            for k in rs.mins_used:
                ports.append(f"input  logic signed [31:0] min_{name}_{k}")
        out = self.rtl[self.design.acc.func.name]
        ports += [f"output logic [{out.width - 1}:0] out_{l}" for l in range(len(out.lanes))]
        ports.append("output logic out_valid")
        head = [f"// loom: one invocation of the streaming design for '{self.design.acc.func.name}', "
                f"{self.design.latency} cycles", f"module {TOP} (\n  " + ",\n  ".join(ports) + "\n);",
                f"  logic [{self.cycle_bits - 1}:0] cycle;",
                "  always_ff @(posedge clk) cycle <= rst ? '0 : cycle + 1'b1;"]
        for group in self.shares.values():
            self.decls += [f"  wire [{group.width - 1}:0] {group.name}_out_{l};" for l in range(group.lanes)]
        for name, rs in self.rtl.items():
            self.stage(name, rs)
        for group in self.shares.values():
            self.shared_kernel(group)
        for name, rs in self.rtl.items():
            self.delay_line(name, rs)
        oname = self.design.acc.func.name
        for l in range(len(out.lanes)):
            self.lines.append(f"  assign out_{l} = {oname}_wv_{l};")
        self.lines.append(f"  assign out_valid = {oname}_we;")
        self.lines.append("endmodule")
        return "\n".join(head + self.float_functions() + self.decls + self.lines) + "\n"

    def counter(self, name, rs, k) -> str:
        """Loop dimension k's value from its counters (0 without one: a single iteration)."""
        terms = [f"{lp.scale} * 32'({name}_P{lp.key})" if lp.scale != 1 else f"32'({name}_P{lp.key})"
                 for lp in rs.loops if lp.dim == k]
        return " + ".join(terms) if terms else "32'd0"

    def coordinate(self, name, rs, k, lane) -> str:
        """The point's coordinate k in the stage's domain (the access maps' frame)."""
        return f"{lane[k]} + {self.counter(name, rs, k)}"

    def stage(self, name: str, rs: RtlStage):
        L = self.lines
        L.append(f"  // stage {name}: {rs.n_steps} steps of {len(rs.lanes)} lane(s)" +
                 (f", {len(rs.reduction_loops)} reduction loop(s) in time" if rs.reduction_loops else "") +
                 f", first read at cycle {rs.read_offset}, latency {rs.latency}")
        L.append(f"  logic {name}_fin, {name}_rd, {name}_we;")
        terms = [str(rs.read_offset)]
        for lp in rs.loops:
            L.append(f"  logic [{_counter_bits(lp) - 1}:0] {name}_P{lp.key};")
            terms.append(f"{lp.cycles} * 32'({name}_P{lp.key})")
        L.append(f"  wire [{self.cycle_bits - 1}:0] {name}_t = {self.cycle_bits}'(" + " + ".join(terms) + ");")
        L.append(f"  assign {name}_rd = !rst && !{name}_fin && cycle == {name}_t;")
        # the odometer (an address generator's loops): innermost first, a carry into the next when it wraps
        L.append("  always_ff @(posedge clk) begin")
        L.append(f"    if (rst) begin {name}_fin <= 1'b0;" +
                 "".join(f" {name}_P{lp.key} <= '0;" for lp in rs.loops) + " end")
        L.append(f"    else if ({name}_rd) begin")
        for i, lp in enumerate(rs.loops):
            counter = f"{name}_P{lp.key}"
            inner_last = " && ".join(self.at_last(name, q) for q in rs.loops[:i]) or "1'b1"
            L.append(f"      if ({inner_last}) {counter} <= {self.at_last(name, lp)} ? '0 : {counter} + 1'b1;")
        last = " && ".join(self.at_last(name, lp) for lp in rs.loops) or "1'b1"
        L.append(f"      if ({last}) {name}_fin <= 1'b1;")
        L.append("    end")
        L.append("  end")
        values = self.stream_values(name, rs) if rs.kind == "stream" else self.kernel_values(name, rs)
        self.pipeline(name, rs, values)

    def stream_values(self, name, rs):
        self.lines.append(f"  assign s_{name}_ready = {name}_rd;")
        return [f"s_{name}_{l}" for l in range(len(rs.lanes))]

    def pipeline(self, name, rs, values):
        """``latency`` registers between a step's reads and its write (with the write addresses of a memory)."""
        L, W = self.lines, rs.width
        signals = [(W, v) for v in values]
        names = [f"{name}_wv_{l}" for l in range(len(values))]
        if rs.addressed and self.wrapping(name, rs):  # addresses modulo the words, as the loops advance
            words, nd = self.memory_words(name, rs), len(rs.blocks)
            strides = [int(np.prod(rs.extents[:k], dtype=np.int64)) for k in range(nd)]
            rows = [[int(j == k) for j in range(nd + rs.n_reductions)] for k in range(nd)]
            for l, lane in enumerate(rs.lanes):
                reg = f"{name}_wm{l}"
                WrappingAddress(self.lines, reg, rs.loops, lambda lp: self.at_last(name, lp), f"{name}_rd", rows,
                                [0] * nd, [1] * nd, strides, list(lane) + [0] * rs.n_reductions, words)
                signals.append((address_bits(words), reg))
                names.append(f"{name}_wa_{l}")
                inside = [f"({self.coordinate(name, rs, k, lane)}) < {e}"
                          for k, e in enumerate(rs.extents) if e % rs.blocks[k]]
                if inside:  # an idle lane of a partial block writes nowhere
                    signals.append((1, " && ".join(inside)))
                    names.append(f"{name}_wi_{l}")
        elif rs.addressed:  # each lane's word in the buffer's memory: its point's index, x fastest
            for l, lane in enumerate(rs.lanes):
                terms, stride = [], 1
                inside = []  # an idle lane of a partial block writes nowhere: its address is one past the memory
                for k, e in enumerate(rs.extents):
                    terms.append(f"({self.coordinate(name, rs, k, lane)}) * {stride}")
                    if e % rs.blocks[k]:
                        inside.append(f"({self.coordinate(name, rs, k, lane)}) < {e}")
                    stride *= e
                bits = _write_address_bits(rs)
                addr = f"{bits}'(" + " + ".join(terms) + ")"
                signals.append((bits, f"({' && '.join(inside)}) ? {addr} : {bits}'d{stride}" if inside else addr))
                names.append(f"{name}_wa_{l}")
        valid = f"{name}_rd"
        if rs.reduction_loops:  # a step is written after its last reduction iteration
            valid = f"({name}_rd && {self.last_iteration(name, rs)})"
        for s in range(rs.latency):
            L.append(f"  logic {name}_v{s};")
            regs = []
            for j, (w, _v) in enumerate(signals):
                r = f"{name}_p{s}_{j}"
                L.append(f"  logic [{w - 1}:0] {r};")
                regs.append(r)
            L.append(f"  always_ff @(posedge clk) begin {name}_v{s} <= rst ? 1'b0 : {valid};" +
                     "".join(f" {r} <= {v};" for r, (_w, v) in zip(regs, signals)) + " end")
            valid, signals = f"{name}_v{s}", [(w, r) for (w, _v), r in zip(signals, regs)]
        L.append(f"  assign {name}_we = {valid};")
        for wire, (w, v) in zip(names, signals):
            L.append(f"  wire [{w - 1}:0] {wire} = {v};")

    def delay_line(self, name, rs):
        mb = self.mm.buffers.get(name)
        L = self.lines
        if rs.addressed:
            size = int(np.prod(rs.extents))
            words, wrapping = self.memory_words(name, rs), self.wrapping(name, rs)
            index = f"[{address_bits(words) - 1}:0]" if words < size and not wrapping else ""  # the low bits
            how = "its addresses modulo its words, wrapping counters" if wrapping else "the address's low bits"
            shape = (f"of its whole domain, {size} words" if words == size else
                     f"of {words} words, circular over its domain of {size} (indexed by {how})")
            L.append(f"  // buffer {name}: an addressed memory {shape} (the memory map's "
                     f"{mb.kind if mb else 'buffer'}: {mb.mem_tiles if mb else 0} MEM(s))")
            self.decls.append(f"  logic [{rs.width - 1}:0] {name}_mem [0:{words - 1}];")
            L.append(f"  always_ff @(posedge clk) if ({name}_we) begin" + "".join(
                f" if ({self.written(name, rs, l)}) {name}_mem[{name}_wa_{l}{index}] <= {name}_wv_{l};"
                if rs.partial else f" {name}_mem[{name}_wa_{l}{index}] <= {name}_wv_{l};"
                for l in range(len(rs.lanes))) + " end")
        entries = set()  # the chain entries read: depth - 1 in a writing cycle, depth otherwise, both for a mux
        for other in self.rtl.values():
            for port, tap in other.taps.items():
                if tap[0] == "delay" and self.ir.kernel(other.name).read_ports()[port][0] == name:
                    for _l, d, w in tap[1]:
                        entries.update({d - 1, d} if w is None else {d - (w is True)})
        entries.discard(-1)  # the value written in this cycle: a wire
        if not entries:  # no reader, or every read takes the value in the cycle it is written
            return
        word = rs.width * len(rs.lanes)
        note = (f"{mb.kind}: {mb.shift_registers} shift register(s), line delays {mb.line_delays or '-'}, "
                f"{mb.mem_tiles} MEM(s)") if mb is not None else "wire"
        L.append(f"  // buffer {name}: a chain of {max(entries) + 1} entries shifting on its writes ({note})")
        L.append(f"  wire [{word - 1}:0] {name}_word = {{" +
                 ", ".join(f"{name}_wv_{l}" for l in reversed(range(len(rs.lanes)))) + "};")
        self.chain(name, word, sorted(entries))

    def memory_words(self, name: str, rs) -> int:
        """Words of an addressed memory: the span of addresses it holds at once (a circular buffer over
        wrapping address counters, ``verilog_address``) when its saved bits outweigh the counters' cost,
        else the power of two at or above it (indexed by the address's low bits), or its whole domain when that
        is no larger. Over wrapping addresses, a buffer a read takes from its producer's write in the same cycle
        (forwarded) holds a value through its last read's cycle too: then the address a lane writes equals, modulo
        the words, no other value's address read in that cycle (the power of two compares whole addresses)."""
        if name not in self.memories:
            size = int(np.prod(rs.extents))
            tw, last = last_reads(self.design.buffers[name])
            readers = self.readers(name)
            whole = tw.shape != tuple(reversed(rs.extents))

            def span(through: bool) -> int:  # at least 2: a memory of one word has no address bit to index it
                return size if whole else min(size, max(2, live_address_span(tw, last + through, np.arange(size))))

            plain = min(size, 1 << (span(False) - 1).bit_length())  # full addresses compared: no hold needed
            exact = span(any(tap[4] for _st, tap in readers))
            counters = len(rs.lanes) * (counter_bits(exact, ()) + rs.partial) + \
                sum(len(st.lanes) * counter_bits(exact, tap[3]) for st, tap in readers)
            self.rounded[name] = plain
            self.memories[name] = exact if exact < plain and (plain - exact) * rs.width > COUNTER_COST * counters \
                else plain
        return self.memories[name]

    def wrapping(self, name: str, rs) -> bool:
        """Whether ``name``'s memory is addressed modulo its words (not a power of two, not its whole domain)."""
        words = self.memory_words(name, rs)
        return words < int(np.prod(rs.extents)) and words & (words - 1) != 0

    def readers(self, name: str) -> list:
        """(consumer stage, its address tap) of every read port reading ``name`` through its memory."""
        return [(st, tap) for st in self.rtl.values() for port, tap in st.taps.items()
                if tap[0] == "address" and self.ir.kernel(st.name).read_ports()[port][0] == name]

    def written(self, name: str, rs, lane: int) -> str:
        """The condition that lane ``lane``'s write lands (an idle lane of a partial block writes nowhere)."""
        if self.wrapping(name, rs):
            return f"{name}_wi_{lane}"
        return f"{name}_wa_{lane} < {int(np.prod(rs.extents))}"

    def chain(self, name: str, word: int, entries: list):
        """From the value written (entry -1) to each entry read: registers across gaps of at most ``MAX_SHIFT``
        entries, a line delay across a longer one: a memory of gap - 1 words (a circular buffer) and the register
        of the entry after it, as the memory map counts them."""
        L = self.lines
        regs, moves, rams, prev = [], [], [], -1

        def at(e):
            return f"{name}_word" if e < 0 else f"{name}_e{e}"

        for e in entries:
            gap = e - prev
            if gap - 1 <= MAX_SHIFT:
                for j in range(prev + 1, e + 1):
                    regs.append(j)
                    moves.append(f"{at(j)} <= {at(j - 1)};")
            else:
                ram, ptr, n = f"{name}_ld{e}", f"{name}_ld{e}_ptr", gap - 1
                L.append(f"  // line delay: entries {prev + 1}..{e - 1} in a memory of {n} words")
                self.decls.append(f"  logic [{word - 1}:0] {ram} [0:{n - 1}];")
                self.decls.append(f"  logic [{max(n - 1, 1).bit_length() - 1}:0] {ptr};")
                L.append(f"  always_ff @(posedge clk) if (rst) {ptr} <= '0; else if ({name}_we) "
                         f"{ptr} <= ({ptr} == {n - 1}) ? '0 : {ptr} + 1'b1;")
                regs.append(e)
                rams.append(n)
                moves += [f"{at(e)} <= {ram}[{ptr}];", f"{ram}[{ptr}] <= {at(prev)};"]
            prev = e
        self.chains[name] = (len(regs), rams)
        self.decls.append(f"  logic [{word - 1}:0] " + ", ".join(at(j) for j in regs) + ";")
        L.append(f"  always_ff @(posedge clk) if ({name}_we) begin " + " ".join(moves) + " end")

    def read_address(self, producer: str, rows, offs, divs, forwarded, coords, reader) -> str:
        """The word of ``producer``'s memory a consumer point reads (index j = floor((row_j . p + c_j) / d_j), x
        fastest), forwarded from the producer's write when it writes that word in this cycle. ``reader``: the
        consuming (stage name, RtlStage, lane), whose loops advance a wrapping address."""
        p = self.rtl[producer]
        words = self.memory_words(producer, p)
        strides = [int(np.prod(p.extents[:j], dtype=np.int64)) for j in range(len(p.extents))]
        if self.wrapping(producer, p):
            name, rs, lane = reader
            a = self.fresh(f"{producer}_rm")
            WrappingAddress(self.lines, a, rs.loops, lambda lp: self.at_last(name, lp), f"{name}_rd", rows, offs,
                            divs, strides, list(lane) + [0] * rs.n_reductions, words)
            value = f"{producer}_mem[{a}]"
            for l in forwarded:  # equal modulo the words only when equal (``memory_words``)
                hit = f"{producer}_we && {producer}_wa_{l} == {a}"
                value = f"({hit}{f' && {producer}_wi_{l}' if p.partial else ''}) ? {producer}_wv_{l} : {value}"
            return value
        addr = []
        for row, c, d, stride in zip(rows, offs, divs, strides):
            num = " + ".join([f"{a} * {coords[k]}" for k, a in enumerate(row) if a] + [str(c)])
            ix = f"(({num}) / {d})" if d != 1 else f"({num})"
            addr.append(f"{ix} * {stride}")
        size = int(np.prod(p.extents))
        a, bits = self.fresh(f"{producer}_ra"), address_bits(size)
        self.lines.append(f"  wire [{bits - 1}:0] {a} = {bits}'(" + " + ".join(addr) + ");")
        value = f"{producer}_mem[{a}" + (f"[{address_bits(words) - 1}:0]]" if words < size else "]")
        for l in forwarded:
            value = (f"({producer}_we && {producer}_wa_{l} == {_write_address_bits(p)}'({a})) ? "
                     f"{producer}_wv_{l} : {value}")
        return value

    def tap(self, producer: str, lane: int, depth: int, writing: bool | None) -> str:
        """The value ``depth`` writes back: the chain's entry depth - 1 in a cycle the producer writes (its new
        value at depth 0), entry ``depth`` in one it does not; a multiplexer when the lane's reads see both."""
        W = self.rtl[producer].width
        now = f"{producer}_wv_{lane}" if depth == 0 else f"{producer}_e{depth - 1}[{lane * W + W - 1}:{lane * W}]"
        before = f"{producer}_e{depth}[{lane * W + W - 1}:{lane * W}]"
        if writing is None:
            return f"({producer}_we ? {now} : {before})"
        return now if writing else before

    def last_iteration(self, name, rs) -> str:
        return " && ".join(self.at_last(name, lp) for lp in rs.reduction_loops)

    @staticmethod
    def at_last(name: str, lp: Loop) -> str:
        return f"{name}_P{lp.key} == {_counter_bits(lp)}'d{lp.extent - 1}"

    def kernel_values(self, name, rs):
        """Per lane, the kernel's value at this iteration. A reduction iterated in time: ``init`` at its first
        iteration, then ``update`` on the partial sum, kept per step in an accumulator memory between
        iterations (read-modify-write in the iteration's cycle)."""
        kernel = self.ir.kernel(name)
        nd, nr = len(rs.blocks), len(self.design.stages[name].red_extents)
        out = []
        if nr:
            n = rs.n_steps
            terms, stride = [], 1
            for lp in rs.write_loops:
                terms.append(f"32'({name}_P{lp.key}) * {stride}")
                stride *= lp.extent
            bits = address_bits(n)
            self.lines.append(f"  wire [{bits - 1}:0] {name}_step = {bits}'(" + (" + ".join(terms) or "0") + ");")
            first = " && ".join(f"{name}_P{lp.key} == '0" for lp in rs.reduction_loops)
        group = self.share_of.get(name)
        for l, lane in enumerate(rs.lanes):
            coords, reads = self.operands(name, rs, lane, l, nr)
            if group is not None:  # the shared kernel computes it (``shared_kernel``), on this stage's operands
                group.operands[name].append((coords, reads))
                out.append(f"{group.name}_out_{l}")
                continue
            init = self.region(name, kernel.init.block, coords, [], reads)
            if not nr:
                out.append(init)
                continue
            acc = f"{name}_acc_{l}"
            self.lines.append(f"  logic [{rs.width - 1}:0] {acc} [0:{n - 1}];")
            prev = self.fresh(f"{name}_prev")
            self.lines.append(f"  wire [{rs.width - 1}:0] {prev} = ({first}) ? {init} : {acc}[{name}_step];")
            loops = [f"32'({self.counter(name, rs, nd + j)})" for j in range(nr)]  # a loop's value
            new = self.region(name, kernel.update.block, coords, loops + [prev], reads)
            self.lines.append(f"  always_ff @(posedge clk) if ({name}_rd) {acc}[{name}_step] <= {new};")
            out.append(new)
        return out

    def operands(self, name, rs, lane, l, nr) -> tuple[list, list]:
        """A lane's kernel operands: its coordinates (expressions) and a wire per read port."""
        kernel = self.ir.kernel(name)
        nd = len(rs.blocks)
        coords, local = [], []
        for k in range(nd):
            c = f"({self.coordinate(name, rs, k, lane)})"
            local.append(c)
            coords.append(f"min_{name}_{k} + {c}")
        local += [self.counter(name, rs, nd + j) for j in range(nr)]
        reads = []
        for i, (buf, _port) in enumerate(kernel.read_ports()):
            tap = rs.taps[i]
            value = self.tap(buf, *tap[1][l]) if tap[0] == "delay" else \
                self.read_address(buf, *tap[1:], local, (name, rs, lane))
            v = self.fresh(f"{name}_r{i}")
            w = value_bits(kernel.init.block.args[nd + i].type, f"ubuf.kernel '{name}'")
            self.lines.append(f"  wire [{w - 1}:0] {v} = {value};")
            reads.append(v)
        return coords, reads

    def shared_kernel(self, group):
        """Compute sharing (thesis §5): one copy of the kernel per lane, its operands multiplexed from the stage
        firing in this cycle (the stages' slots never overlap)."""
        first = group.stages[0]
        block = self.ir.kernel(first).init.block
        self.lines.append(f"  // shared kernel {group.name}: stages {', '.join(group.stages)}")
        for l in range(group.lanes):
            def mux(pick):
                expr = pick(group.stages[-1])
                for st in reversed(group.stages[:-1]):
                    expr = f"({st}_rd ? {pick(st)} : {expr})"
                return expr
            ops = group.operands
            coords = [mux(lambda st, k=k: f"({ops[st][l][0][k]})") for k in range(len(ops[first][l][0]))]
            reads = []
            for i in range(len(ops[first][l][1])):
                v = self.fresh(f"{group.name}_a{i}")
                w = value_bits(block.args[len(coords) + i].type, f"ubuf.kernel '{first}'")
                self.lines.append(f"  wire [{w - 1}:0] {v} = {mux(lambda st, i=i: ops[st][l][1][i])};")
                reads.append(v)
            self.lines.append(f"  assign {group.name}_out_{l} = {self.region(group.name, block, coords, [], reads)};")

    def region(self, name, block, coords, extra, reads) -> str:
        """One copy of a kernel region: its coordinate arguments (when used), ``extra`` (loops, the partial sum),
        then its read ports."""
        env = {}
        for k, expr in enumerate(coords):
            arg = block.args[k]
            if arg.uses:
                w = value_bits(arg.type, f"ubuf.kernel '{name}'")
                v = self.fresh(f"{name}_c{k}")
                self.lines.append(f"  wire [{w - 1}:0] {v} = {w}'({expr});")
                env[arg] = v
        for arg, v in zip(block.args[len(coords):], extra + reads):
            env[arg] = v
        return KernelOps(self, name, env).run(block)


__all__ = ["Loop", "RtlDesign", "RtlStage", "design_verilog", "TOP"]
