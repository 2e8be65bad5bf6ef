"""Cycle-accurate affine scheduling of an extracted accelerator (thesis §4.2, §5.2).

Every stage runs on its own affine time grid (n-dimensional schedules, thesis
§5.2): ``t_s(p) = D_s + sum_k s_k p_k`` over its index-shifted domain (p_0
replaced by floor(p_0 / lanes)). Strides follow the stages' rates
(``stage_time_strides``): a stage reading its producer at ``2x`` (down-sampling)
steps twice as slowly, one reading it at ``x / 2`` (up-sampling, a quasi-affine
floor division) twice as fast; when all rates are equal the strides are the
common grid, products of the largest time extent of the inner dimensions. Along an
outer dimension only stages a read relates there pace each other: a stage whose rows
no read ties to the output's (a gemm's B, its rows the reduction's) has its own row grid.
Dimensions fully unrolled are computed in space (stride 0). A stage computing ny rows a step (``unroll(y, ny)``,
``StageNode.rows``) has y as floor(y / ny) in its schedule (a ``floors`` term, stride 0 on y): its row stride is
per block of ny rows, its row rate times ny. An input memory unrolled beyond the output's
rate (``StageNode.own_rate``) and its host stream fill x on their own grid (``own_rate_grid``: at least n pixels
per output step), their rows on the common one; so does a producer read through an up- or down-sampling whose
lanes cannot follow its consumer step for step (a 1-wide input under a 4-wide ``x / 2`` output, a 3-wide one under
a 2-wide ``2 x``). A stage filled whole per invocation (``StageNode.fill``: a DNN layer's weights or depthwise
stage off the output's loop structure) fills in its own loop order (``_fill_schedule``); a stage wider
than the output and read by it step for step fits only its own reduction in its stride. Host streams start at
D = 0. A stage's offset is the smallest D for which every value it reads has been written by the cycle it reads it:
D_c = max over read ports of (D_p + max_p (t_p(access(p)) - t_c(p) + D_c - D_p)),
with kernels of latency 0. A stage whose reduction is iterated in time
(``StageNode.time_reduction``, R_s cycles per point) runs its reduction loops
innermost (stride 1) and every stage's pixel stride becomes R = max R_s, so
the whole accelerator produces one output every R cycles; such a stage starts a
point at D_s + t(p), reads its inputs on the cycles of its reduction loops
(``StagePlan.iteration``), keeps the partial sums in an accumulation buffer
(``Design.accumulators``: a write port and a read port on the update's domain,
each iteration reads the sum the previous one wrote) and writes its buffer on
the last iteration, at D_s + R_s - 1 + t(p). Nothing here depends on the outermost image extent,
so the schedule is closed form. Capacities (maximum live values) come from
an exact liveness sweep over a proxy design whose outermost dimension is
clipped to a few windows, which gives the same maximum as the full image
when every access is a (possibly scaled: strided or quasi-affine) translation of the same dimension; otherwise the
full domain is swept. Such designs' capacities are affine in the width beyond the halos: a design at least
``EXTRAPOLATE_FROM_WIDTH`` wide takes them from four narrow proxies when those agree on a line
(``_width_extrapolated``), so the build time depends on neither image dimension.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from loom.errors import LoomError
from loom.frontends.pipeline.bounds import infer_bounds
from loom.frontends.pipeline.evaluate import refuse_non_integers
from loom.frontends.pipeline.func import Func
from loom.frontends.pipeline.graph import FuncGraph
from loom.frontends.pipeline.schedule import MemoryType

from loom.frontends.pipeline.index_forms import FloorDiv
from .extract import (Accelerator, MemoryClass, StageNode, accumulator_name, outer_reductions, split_leaves,
                      time_dims)
from .last_read import projection_last_read
from .live_count import max_live
from .unified_buffer import CycleSchedule, Port, UnifiedBuffer, format_table


@dataclass
class StagePlan:
    name: str
    node: StageNode
    mins: tuple  # global coordinates of the domain's first point (index shifting)
    extents: tuple
    schedule: CycleSchedule
    time_dims: tuple = ()  # dims iterated in time, innermost first (the rest are unrolled in space)
    red_extents: tuple = ()  # trip counts of the reduction loops iterated in time, innermost first
    latency: int = 0  # cycles from a firing's reads to its write (the kernel's pipeline depth)
    span: int = 0  # cycles from its first firing's first reads to its first write (reductions, latency)
    red_time: tuple = ()  # cycles between a reduction loop's iterations when not ``red_strides`` (loop outside)

    @property
    def offset(self):
        """Cycle at which the stage writes its first point (after its last reduction iteration)."""
        return self.schedule.offset

    @property
    def red_strides(self) -> tuple:
        out, s = [], 1
        for e in self.red_extents:
            out.append(s)
            s *= e
        return tuple(out)

    @property
    def reduction_cycles(self) -> int:
        """R_s: cycles of one point's reduction (1 when nothing is iterated in time)."""
        n = 1
        for e in self.red_extents:
            n *= e
        return n

    def iteration(self) -> "StagePlan":
        """The stage's iteration domain: its dims plus the reduction loops, scheduled on the cycles it reads."""
        if not self.red_extents and not self.latency:
            return self
        s = self.schedule
        red = self.red_time or self.red_strides
        sched = CycleSchedule(s.offset - sum((e - 1) * st for e, st in zip(self.red_extents, red)) - self.latency,
                              tuple(s.strides) + red, s.lanes, s.floors)
        n = len(self.extents)
        return StagePlan(self.name, self.node, tuple(self.mins) + (0,) * len(self.red_extents),
                         tuple(self.extents) + tuple(self.red_extents), sched,
                         tuple(self.time_dims) + tuple(range(n, n + len(self.red_extents))))

    def grids(self, extents=None):
        ext = extents or self.extents
        nd = len(ext)
        out = []
        for k, e in enumerate(ext):
            shape = [1] * nd
            shape[nd - 1 - k] = e
            out.append(np.arange(e, dtype=np.int64).reshape(shape))
        return out


class Design:
    """A scheduled accelerator: stage plans, unified buffers, latency."""

    def __init__(self, acc, size, origin, regions, stages, buffers, reads, accumulators=None):
        self.acc = acc
        self.accumulators: dict[str, UnifiedBuffer] = accumulators or {}  # stage_acc -> RMW buffer
        self.size = tuple(size)
        self.origin = tuple(origin)
        self.regions = regions
        self.stages: dict[str, StagePlan] = stages
        self.buffers: dict[str, UnifiedBuffer] = buffers
        self.reads = reads  # (producer, consumer, matrix, offsets, divisors): floor((matrix . p + offs) / divs)
        self.sharing = None  # sharing.SharedKernel when stages time-multiplex one kernel (compute_share)
        self.swept: frozenset = frozenset()  # stages sweeping at their own pace (``swept_stages``)
        out = stages[acc.func.name]
        last = out.schedule.times([np.int64(e - 1) for e in out.extents])
        self.latency = int(last) + 1

    def tile_reads(self, regions) -> tuple:
        """The extents and reads (as ``reads``) of an invocation over ``regions`` (``accelerator_regions``), in
        index-shifted coordinates: equal to this design's when one hardware configuration serves both. A read
        through ``x / k`` at another phase (a tile origin not a multiple of k) shifts its offsets."""
        ext, mins = {}, {}
        for name, plan in self.stages.items():
            reg = regions[id(plan.node.source)]
            ext[name] = tuple(hi - lo + 1 for lo, hi in reg)
            mins[name] = [lo - m for (lo, _), m in zip(reg, plan.mins)]
        reads = tuple((prod, cons, matrix, tuple(c + sum(a * m for a, m in zip(row, mins[cons])) - d * mins[prod][j]
                                                  for j, (row, c, d) in enumerate(zip(matrix, offs, divs))), divs)
                      for prod, cons, matrix, offs, divs in self.reads)
        return tuple(ext.items()), reads, tuple(sorted(self.acc.unselected(regions).items()))

    def phase_reads(self, regions) -> list:
        """The reads an invocation over ``regions`` makes at another phase than this design's (where
        ``tile_reads`` differs), as "y / 2 ('output' reads 'blur')", naming the consumer's dimension."""
        own = self.tile_reads(self.regions)[1]
        out = []
        for (prod, cons, matrix, offs, divs), (*_, other, _d) in zip(own, self.tile_reads(regions)[1]):
            dims = self.stages[cons].node.dims
            for j, (row, d) in enumerate(zip(matrix, divs)):
                if offs[j] == other[j]:
                    continue
                index = " + ".join(f"{'' if a == 1 else a}{v}" for a, v in zip(row, dims) if a) or "0"
                text = f"{index} / {d} ('{cons}' reads '{prod}')"
                if text not in out:
                    out.append(text)
        return out

    @property
    def offsets(self) -> dict:
        return {n: p.offset for n, p in self.stages.items()}

    @property
    def capacities(self) -> dict:
        return {n: b.capacity for n, b in self.buffers.items()}

    @property
    def reduction_cycles(self) -> int:
        """R: cycles per output point (the longest reduction iterated in time; 1 when none is)."""
        return max(p.reduction_cycles for p in self.stages.values())

    def table(self) -> str:
        return format_table(list(self.buffers.values()) + list(self.accumulators.values())) + f"\nlatency: {self.latency} cycles"

    @property
    def roms(self) -> dict:
        """Constant tables: name -> (kind, entries, depth); ROM depth rounded up to a multiple of 4."""
        out = {}
        for name, c in self.acc.constants.items():
            region = self.regions.get(id(c.func))
            entries = 1
            for lo, hi in region or []:
                entries *= hi - lo + 1
            depth = -(-entries // 4) * 4 if c.kind == "ROM" else entries
            out[name] = (c.kind, entries, depth)
        return out

    def memory_classes(self) -> dict:
        """Thesis Table 4.3 class of every memory; zero-capacity buffers are wires."""
        out = {}
        for name, m in self.acc.memory.items():
            kind = m.kind
            buf = self.buffers.get(name) or self.accumulators.get(name)
            if buf is not None and buf.capacity == 0:
                kind = "wire"
            out[name] = MemoryClass(m.usage, m.index_pattern, kind)
        return out

    def __repr__(self):
        return f"Design({self.acc.func.name}, size={self.size}, latency={self.latency})"


def tile_extents(acc: Accelerator, size):
    """Per-invocation extents of the accelerator output.

    A dimension whose loops all lie inside ``xo`` is covered whole; one split
    into an inner loop inside and an outer loop outside gives tiles of the
    split factor; a dimension whose loops are all outside is iterated by the
    host, one index per invocation.
    """
    return loop_tile_extents(acc.func, acc.xo, size)


def loop_tile_extents(f: Func, xo: str, size):
    """Extents of ``f`` covered by one iteration of its loop ``xo`` (see ``tile_extents``)."""
    sched = f.pure.schedule
    loops = sched.loops
    xo_index = loops.index(xo)
    origin = {d.name: d.name for d in f.dims}
    for sp in sched.splits:
        origin[sp.outer] = origin[sp.inner] = origin.get(sp.old, sp.old)
    ext = list(size)
    for k, d in enumerate(f.dims):
        mine = [v for v in loops if origin.get(v) == d.name]
        # fully unrolled loops are hardware copies: part of the accelerator wherever they sit
        inside = [v for v in mine if loops.index(v) < xo_index or sched.unrolled.get(v, 0) is None]
        if len(inside) == len(mine):
            continue
        if not inside:
            ext[k] = 1
            continue
        factor = 1
        for sp in sched.splits:
            if origin.get(sp.old) == d.name and sp.inner in inside and sp.outer not in inside:
                factor = sp.factor
                # loops nested below this split's inner var belong to the same tile
                break
        else:
            raise LoomError(f"cannot tell the accelerator tile of dimension '{d.name}' from its splits",
                            where=f"Func '{f.name}'", construct="hw_accelerate")
        ext[k] = factor
    return tuple(ext)


def accelerator_regions(acc: Accelerator, origin, size):
    """Bounds of every stage for one invocation whose output covers origin..origin+size."""
    sub = FuncGraph(acc.func)
    leaves = [n.source for n in acc.stages.values() if n.kind == "stream"]
    region = [(o, o + e - 1) for o, e in zip(origin, size)]
    return infer_bounds(sub, region, leaves=leaves)


def build_design(output: Func | Accelerator, size, origin=None, *, exact_capacity: bool = False,
                 op_latency: dict | None = None) -> Design:
    """Schedule the accelerator of ``output`` for one invocation of ``size`` (hw_accelerate Func dims).

    ``op_latency`` (op name -> cycles, e.g. ``kernel_latency.PIPELINED``): each kernel writes its value
    that many cycles after its reads, its critical path through the kernel IR; a ``kernel_netlist.PELatency``
    (e.g. ``AMBER``): the critical path through the kernel's PEs; None: kernels take 0 cycles."""
    acc = output if isinstance(output, Accelerator) else Accelerator(output)
    size = tuple(size)
    if len(size) != len(acc.func.dims):
        raise LoomError(f"size {size} does not match its {len(acc.func.dims)} dimensions",
                        where=f"Func '{acc.func.name}'")
    refuse_non_integers(acc.func, size, "size")
    if min(size) < 1:  # an invocation computes at least one point (it failed inside bounds inference)
        raise LoomError(f"size {size}: an invocation's extents must be positive", where=f"Func '{acc.func.name}'")
    origin = tuple(origin or (0,) * len(size))
    refuse_non_integers(acc.func, origin, "origin")
    if any(r.guard for n in (acc.full_stages or acc.stages).values() for r in n.reads):
        acc = acc.for_regions(accelerator_regions(acc, origin, size))  # multiplexers: the inputs this tile selects
    from .sharing import build_shared_design, other_rate_error, share_group  # compute_share (thesis §5)

    group = share_group(acc)
    if group is not None:
        if op_latency:
            raise LoomError("compute sharing is scheduled with kernels of latency 0; drop op_latency",
                            where=f"Func '{acc.func.name}'", construct="compute_share")
        if acc.rows > 1:
            raise LoomError(f"compute sharing schedules one row at a time; unroll(y, {acc.rows}) (rows a step) is "
                            "not supported with it", where=f"Func '{acc.func.name}'", construct="unroll")
        blocked = next((n for n in acc.stages.values() if n.kind == "compute" and n.blocks), None)
        if blocked is not None:
            k, n = next(iter(blocked.blocks.items()))
            raise LoomError(f"compute sharing schedules a stage's point a firing; unroll({blocked.dims[k]}, {n}) "
                            f"(channels a cycle) is not supported with it: unroll({blocked.dims[k]}) computes them "
                            "in space", where=f"Func '{blocked.name}'", construct="unroll")
        fast = next((n for n in acc.stages.values() if n.kind == "compute" and (n.own_rate or n.lanes != acc.lanes)),
                    None)
        if fast is not None:
            raise other_rate_error(acc, fast)
        return build_shared_design(acc, size, origin, group)
    design = _schedule(acc, size, origin, op_latency)
    if swept_stages(acc):  # tied to its readers' pace, or sweeping at its own: the one finishing sooner
        own_pace = _schedule(acc, size, origin, op_latency, swept_stages(acc))
        design = own_pace if own_pace.latency < design.latency else design
    _fill_capacities(design, exact_capacity)
    return design


def _time_dims(node: StageNode, n_time: int, acc: Accelerator | None = None):
    """Dims iterated in time: the not unrolled ones; a host stream's are its one reader's when that reader reads
    it dim for dim (``hw[c, x, y] = input[c, x, y]`` with c unrolled: c arrives in parallel), else its first
    ones (the rest arrive in parallel)."""
    if node.kind != "stream":
        return time_dims(node)
    reader = acc.dim_for_dim_reader(node) if acc is not None else None
    if reader is not None:
        dims = time_dims(reader)
        if len(dims) == n_time:
            return dims
    return list(range(min(n_time, len(node.dims))))


def swept_stages(acc: Accelerator) -> frozenset:
    """Stages that may sweep at their own pace: keeping their tile's partial sums across sweeps (an output
    stationary layer's accumulator) and wider than their readers, which read only the last sweep's values."""
    return frozenset(n for n, node in acc.stages.items() if node.reduction_outer and acc.wider_than_its_readers(node))


def _schedule(acc: Accelerator, size, origin, op_latency=None, swept=frozenset()) -> Design:
    regions = accelerator_regions(acc, origin, size)
    latencies = _kernel_latencies(acc, regions, op_latency) if op_latency else {}
    out_node = acc.stages[acc.func.name]
    n_time = len(_time_dims(out_node, len(out_node.dims)))
    lanes = acc.lanes
    # domains (index shifting: each stage's domain starts at 0)
    doms = {}
    fills = tile_fills(acc)
    for name, node in acc.stages.items():
        reg = regions.get(id(node.source))
        if reg is None:
            raise LoomError(f"not needed by the accelerator output", where=f"Func '{name}'")
        tdims = _time_dims(node, len(node.dims) if name in fills else n_time, acc)
        if len(tdims) != n_time and name not in fills:
            raise LoomError(f"unsupported pattern (dimension change): the stage iterates "
                            f"{len(tdims)} dimensions in time but the accelerator output iterates {n_time}; "
                            "stages must share the loop structure (unroll extra dimensions fully)",
                            where=f"Func '{name}'", construct="dimension change")
        doms[name] = ([lo for lo, _ in reg], [hi - lo + 1 for lo, hi in reg], tdims)
    red = {name: tuple(e for _, e in node.time_reduction) for name, node in acc.stages.items()}
    # cycles per point: a reduction's iterations in time, or the output's channel blocks one after another (the
    # other stages' blocks fit between its pixels: ``_block_floors``)
    slot = max(max(_point_cycles(node, doms[name][1]) for name, node in acc.stages.items()),
               _block_count(out_node, doms[acc.func.name][1]))
    # slot becomes the cycles per output step, which an input memory at its own rate fills against
    tstrides, slot = stage_time_strides(acc, doms, n_time, lanes, slot, fills, swept)
    # a stage's reduction loop outside its pixels steps once per sweep of its tile, or once per refill of the
    # slowest memory computed at that loop if longer; those memories refill a channel tile per step
    levels = {name: _refill_level(acc, name) for name in fills}
    period = {}  # stage -> {outer loop: the slowest natural refill of a memory computed at it}
    for name, lv in levels.items():
        if lv is not None:
            g, loop = lv
            natural = _fill_schedule(acc, acc.stages[name], doms[name][1], _refill(g, loop, 0))[2]
            period.setdefault(g.name, {})[loop] = max(period.get(g.name, {}).get(loop, 0), natural)
    red_times = {}
    for gname, loops in period.items():
        g = acc.stages[gname]
        red_times[gname] = _outer_red_time(g, _stage_sweep(g, doms, tstrides, slot) + _reduction_cycles(g) - 1,
                                           loops)
    fill_schedules = {}
    for name, lv in levels.items():
        refill = None
        if lv is not None:
            g, loop = lv
            refill = _refill(g, loop, red_times[g.name][[v for v, _ in g.time_reduction].index(loop)])
        fill_schedules[name] = _fill_schedule(acc, acc.stages[name], doms[name][1], refill)[:2]
    plans: dict[str, StagePlan] = {}
    reads = []
    earliest = {}  # (producer, consumer) -> the consumer's earliest first-point start the read allows
    for name, node in acc.stages.items():
        mins, ext, tdims = doms[name]
        strides = [0] * len(ext)
        for j, k in enumerate(tdims):
            strides[k] = tstrides[name][j] if name not in fills else 0
        n_lanes = stage_lanes(node, slot)
        if tdims and tdims[0] != 0 and node.lanes > 1:
            raise LoomError(f"the innermost dimension must be the one unrolled for rate {node.lanes}",
                            where=f"Func '{name}'", construct="unroll")
        start = 0
        floors = ()
        if node.rows > 1:  # rows a step: y enters the schedule as floor(y / rows)
            if len(tdims) < 2 or tdims[1] != 1:
                raise LoomError(f"unroll(y, {node.rows}) needs y (the dimension after x) iterated in time",
                                where=f"Func '{name}'", construct="unroll")
            floors = ((1, node.rows, strides[1]),)
            strides[1] = 0
        floors += _block_floors(node, ext, strides[tdims[0]] if tdims else 0, _reduction_cycles(node))
        if name in fills:
            strides, floors = fill_schedules[name]
        plan = StagePlan(name, node, tuple(mins), tuple(ext), CycleSchedule(0, tuple(strides), n_lanes, floors),
                         tuple(tdims), red[name])
        if node.reduction_outer:  # each outer iteration sweeps the whole tile: its stride is at least one sweep
            plan.red_time = red_times.get(name) or _outer_red_time(node, _sweep(plan.schedule, ext) +
                                                                   _reduction_cycles(node) - 1)
        plan.latency = latencies.get(name, 0)
        span = sum((e - 1) * st for e, st in zip(plan.red_extents, plan.red_time or plan.red_strides)) + plan.latency
        plan.schedule = CycleSchedule(span, tuple(strides), n_lanes, floors)  # iteration() then starts at cycle 0
        it = plan.iteration()
        memo = {}
        names = list(node.dims) + [loop for loop, _ in node.time_reduction]
        for k, r in enumerate(node.reads):
            prod = plans[r.producer]
            matrix, offs, divs = _shifted_access(r, node, it, prod, names)
            delta = _max_delay(it, prod, matrix, offs, divs, memo)
            need = prod.offset + delta
            start = max(start, need)
            earliest[r.producer, name] = max(need, earliest.get((r.producer, name), need))
            reads.append((r.producer, name, matrix, offs, divs))
        plan.schedule = CycleSchedule(start + span, tuple(strides), n_lanes, floors)
        plan.span = span
        plans[name] = plan
    _delay_stream_cones(acc, plans, earliest, set(fills) | set(swept))
    buffers = _buffers(acc, plans, reads)
    accumulators = {accumulator_name(n): _accumulator(p) for n, p in plans.items() if p.red_extents}
    design = Design(acc, size, origin, regions, plans, buffers, reads, accumulators)
    design.swept = frozenset(swept)
    return design


def _delay_stream_cones(acc: Accelerator, plans: dict, earliest: dict, fixed: set) -> None:
    """Host streams arrive when they are needed, not all at cycle 0. A stage whose producers, to the host streams,
    no other stage reads (``hw_b[x, y] = b[x, y]``, or a stage over such copies) has slack when its readers start
    later than it allows; delaying it with that cone of producers keeps every read after its write and every read
    inside the cone as it was, and shrinks what its readers wait for (a wire when read at one point); the output and
    the latency do not move. (Every stream started at cycle 0: a blend of two images by a 3x3 smoothed mask held
    14 values of each image it reads at one point.) Stages closest to the output first, so a cone is delayed
    whole."""
    readers = {}
    for producer, consumer in earliest:
        readers.setdefault(producer, set()).add(consumer)
    for name in reversed(list(plans)):
        if plans[name].node.kind != "compute" or name == acc.func.name or name in fixed or not readers.get(name):
            continue
        cone = _stream_cone(acc, name, readers, fixed)
        if cone is None:
            continue
        slack = min(plans[c].offset - plans[c].span - earliest[name, c] for c in readers[name])
        if slack <= 0:
            continue
        for n in cone:
            sched = plans[n].schedule
            plans[n].schedule = CycleSchedule(sched.offset + slack, sched.strides, sched.lanes, sched.floors)
        for key in [k for k in earliest if k[1] in cone]:
            earliest[key] += slack


def _stream_cone(acc: Accelerator, name: str, readers: dict, fixed: set) -> set | None:
    """``name`` and its producers back to the host streams, if none of them is read outside this set or fixed."""
    cone, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in cone:
            continue
        if n in fixed:
            return None
        cone.add(n)
        todo += [r.producer for r in acc.stages[n].reads]
    if any(not readers.get(n, set()) <= cone for n in cone - {name}):
        return None
    return cone


def _block_count(node: StageNode, ext) -> int:
    """Blocks a point of a stage computing ``unroll(c, n)`` channels a cycle takes (1 without blocks)."""
    return math.prod(-(-ext[k] // n) for k, n in node.blocks.items()) if node.kind == "compute" else 1


def _point_cycles(node: StageNode, ext) -> int:
    """Cycles a point occupies its stage: its reduction in time, once per channel block when it has both (a DNN
    layer's output channels n at a time, each block accumulating over the input channels: ``_block_floors``)."""
    r = _reduction_cycles(node)
    return r * _block_count(node, ext) if node.time_reduction and not node.reduction_outer else r


def _block_floors(node: StageNode, ext, step: int, red: int = 1) -> tuple:
    """``floors`` terms of the dims a stage computes in blocks within each step (``StageNode.blocks``, unroll(c, n):
    n channels a cycle): the blocks spread evenly over the ``step`` cycles between its pixels (the first dim's
    innermost), as a reduction over channel tiles reads them. A stage iterating a reduction in time (``red``
    cycles a point) runs each block's whole reduction before the next block: block b starts b * red cycles
    into the step, so its accumulator holds one block's partial sums."""
    if not node.blocks:
        return ()
    where = f"Func '{node.name}'"
    calls = ", ".join(f"unroll({node.dims[k]}, {n})" for k, n in sorted(node.blocks.items()))
    if node.fill or node.reduction_outer:
        what = "filled whole per invocation" if node.fill else \
            "iterating a reduction outside its pixels (its tile's partial sums per channel would be kept in blocks)"
        raise LoomError(f"{calls} (channels a cycle) is not scheduled for a stage {what}; unroll the dimension "
                        "fully (create_memories after accelerate(..., channels_per_cycle=...) blocks a memory's "
                        "dimension carrying the output's blocked one: compute such a memory with "
                        "compute_at(level).unroll(dim) instead)", where=where, construct="unroll")
    counts = {k: -(-ext[k] // n) for k, n in node.blocks.items()}
    need = math.prod(counts.values()) * (red if node.time_reduction else 1)
    if need > step and node.kind != "stream":  # (a stream's blocks are its reader's call)
        per = f" of {red} reduction cycles" if node.time_reduction and red > 1 else ""
        raise LoomError(f"{calls} computes its channels in {math.prod(counts.values())} blocks{per} a pixel, but the "
                        f"stage has {step} cycle{'s' if step != 1 else ''} per pixel; take more channels a cycle",
                        where=where, construct="unroll")
    out, unit = [], max(red if node.time_reduction else 1, step // math.prod(counts.values()))
    for k in sorted(counts):
        out.append((k, node.blocks[k], unit))
        unit *= counts[k]
    return tuple(out)


def _kernel_latencies(acc, regions, op_latency) -> dict:
    """Stage -> kernel latency: given as numbers (a proxy reuses its design's), or from an op latency table."""
    from .kernel_netlist import PELatency, kernel_netlist, space_copies

    if not isinstance(op_latency, PELatency) and all(isinstance(v, int) and k in acc.stages
                                                     for k, v in op_latency.items()):
        return dict(op_latency)
    from .kernel_ir import constant_contents, kernel_regions
    from .kernel_latency import critical_path

    tables = constant_contents(acc, regions)
    out = {}
    for name, node in acc.stages.items():
        if node.kind == "stream":
            continue
        init, update = kernel_regions(acc, node, tables)
        if isinstance(op_latency, PELatency):  # per PE of the kernel's netlist (constants folded)
            if node.time_reduction:
                out[name] = 0  # an accumulating stage: see kernel_netlist (its latency is not modelled)
                continue
            # its copies for the dims computed in space, each with its coordinates constant (a select on the
            # channel folds, as the PE count folds it): the slowest copy
            reg = regions[id(node.source)]
            space = {k: range(reg[k][0], reg[k][1] + 1) for k, d in enumerate(node.dims) if d in node.unrolled_dims}
            copies = space_copies(node.dims, node.reads, space, init.block) if space else None
            out[name] = kernel_netlist(init.block, copies, tables).latency(op_latency)
            continue
        out[name] = max(critical_path(r.block, op_latency) for r in (init, update) if r.blocks)
        if node.time_reduction and out[name]:
            raise LoomError(f"a kernel of {out[name]} cycles cannot iterate a reduction in time at one iteration per "
                            "cycle (its partial sum would be read back before it is written); unroll the reduction "
                            "or schedule without op_latency", where=f"Func '{name}'", construct="unroll")
    return out


def _shifted_access(r, node, plan, prod, names=None):
    """The access in index-shifted coordinates: index_j = floor((row_j . p + offs_j) / divs_j)."""
    names = names or list(node.dims) + [loop for loop, _ in node.time_reduction]
    matrix, offs, divs = [], [], []
    for j, form in enumerate(r.index):
        num, d = (form.num, form.div) if isinstance(form, FloorDiv) else (form, 1)
        terms = num.terms
        row = tuple(terms.get(n, 0) for n in names)
        c = num.const - d * prod.mins[j]
        for a, m in zip(row, plan.mins):
            if a:
                c += a * m
        if len(terms) > len(row) - row.count(0):
            unknown = set(terms) - set(names)
            raise LoomError(f"access '{r.site}' uses variables {sorted(map(str, unknown))} that are "
                            "not loops of the stage", where=f"Func '{node.name}'")
        matrix.append(row)
        offs.append(c)
        divs.append(d)
    return tuple(matrix), tuple(offs), tuple(divs)


def tile_fills(acc: Accelerator) -> set:
    """Stages filled whole once per invocation in their own loop order (``StageNode.fill``: the memory-tile
    copies computed at the tile loop), their readers waiting for what they read (``_fill_schedule``)."""
    return {name for name, node in acc.stages.items() if node.fill}


def _refill_level(acc: Accelerator, name: str):
    """(stage, time loop) at whose reduction loop a memory (or the stream only it reads) is computed once per
    iteration, or None."""
    node = acc.stages[name]
    if node.kind == "stream":
        readers = {a.consumer for a in acc.buffer_reads(name)}
        node = acc.stages[readers.pop()] if len(readers) == 1 else node
    level = acc.per_iteration.get(id(node.source))
    if level is None:
        return None
    g = acc.stages[level[0].name]
    return g, next(loop for loop, leaf in g.time_reduction_leaves if leaf == level[1])


def _refill(g: StageNode, loop: str, stride: int) -> tuple:
    """A fill's refill: (cycles between its steps, iterations of ``loop``, loops outside the pixels outside it):
    the memory's leaf that many from its outermost loop steps a tile per iteration."""
    outer = outer_reductions(g)
    return stride, dict(g.time_reduction)[loop], len(outer) - 1 - outer.index(loop)


def _stage_sweep(g: StageNode, doms, tstrides, slot) -> int:
    _, ext, tdims = doms[g.name]
    strides = [0] * len(ext)
    for j, k in enumerate(tdims):
        strides[k] = tstrides[g.name][j]
    return _sweep(CycleSchedule(0, tuple(strides), stage_lanes(g, slot)), ext)


def _outer_red_time(node: StageNode, sweep: int, periods=None) -> tuple:
    """Cycles between iterations of each time reduction loop (``node.time_reduction`` order) of a stage whose loops
    outside its pixels (``outer_reductions``) each sweep the tile: the inner loops nest at 1, e0, e0 e1, ... cycles
    (a point's R_inner cycles), the first outer loop ``sweep`` apart (one sweep of the tile, its last point's
    inner iterations included, or a refill if longer), the next ones its extent times that."""
    outer = outer_reductions(node)
    ext = dict(node.time_reduction)
    inner = [loop for loop, _ in node.time_reduction if loop not in outer]
    time, s = {}, 1
    for loop in inner:
        time[loop], s = s, s * ext[loop]
    s = sweep
    for loop in outer:  # at least a refill of the memories computed at it apart
        time[loop] = s = max(s, (periods or {}).get(loop, 0))
        s *= ext[loop]
    return tuple(time[loop] for loop, _ in node.time_reduction)


def _fill_schedule(acc: Accelerator, node: StageNode, ext, refill=None) -> tuple:
    """(strides, floors) of a memory filled whole per invocation: one step (its lanes) a cycle in its Func's loop
    order (innermost first; a stream in its reader's), each loop a split leaf floor(p / w) mod e of its dim,
    written floor(p / w) - e floor(p / (w e)) (a channel tile z_cgra inside the pixels, z_glb outside them)."""
    src = node.source
    if node.kind == "stream":
        readers = [a.consumer for a in acc.buffer_reads(node.name)]
        src = acc.stages[readers[0]].source if len(set(readers)) == 1 else None
    nd = len(ext)
    if not isinstance(src, Func) or len(src.dims) != nd:
        src = None
    sched = src.pure.schedule if src is not None else None
    leaves, at = {}, {}
    for k in range(nd):
        name = src.dims[k].name if src is not None else node.dims[k]
        for leaf, we in (split_leaves(sched, name, ext[k]) if sched is not None else {name: (1, ext[k])}).items():
            leaves[leaf], at[leaf] = we, k
    order = sched.loops if sched is not None else list(leaves)
    strides, floors, s, natural = [0] * nd, [], 1, 0
    names = {src.dims[k].name if src is not None else node.dims[k] for k in range(nd)}  # unsplit loops
    timed = [v for v in order if v in at and not (sched is not None and v in sched.unrolled)
             and leaves[v][1] > 1 and not (at[v] == 0 and leaves[v][0] < node.lanes)]
    for leaf in timed:
        (w, e), k = leaves[leaf], at[leaf]
        if refill and len(timed) > refill[2] and leaf == timed[-1 - refill[2]] and e == refill[1] \
                and (w > 1 or (refill[2] and leaf not in names)):
            # the refill loop: a tile per its step
            natural, s = s, max(s, refill[0])
        if w == 1 or (k == 0 and w == node.lanes):
            strides[k] += s
        else:
            floors.append((k, w, s))
        if w * e < ext[k]:
            floors.append((k, w * e, -s * e))
        s *= -(-e // node.lanes) if (k == 0 and w < node.lanes) else e
    return strides, tuple(floors), natural


def _sweep(schedule: CycleSchedule, ext) -> int:
    """Cycles of one sweep of a stage's domain: its latest point's relative time + 1."""
    return int(schedule.times([np.int64(e - 1) for e in ext])) - schedule.offset + 1


def stage_time_strides(acc: Accelerator, doms, n_time: int, lanes: int, slot: int, fills=frozenset(),
                       swept=frozenset()) -> dict:
    """Each stage's cycle stride per time dimension (innermost first): its own affine time grid.

    A stage reading its producer at ``a * x / d`` along a time dimension advances ``a / d`` producer
    steps per step, so its rate (cycles per pixel) is ``a / d`` times the producer's: a stride-2
    down-sampling stage fires every 2 cycles, an up-sampling ``x / 2`` stage twice as often as its
    producer. Several producers: the slowest rate wins. Along x a firing covers the stage's lanes, so its
    stride is its rate times its lanes; rates are scaled to integers with the fastest stage at ``slot``
    cycles per step (innermost) or per row (outer dims: a row of every stage must fit before its next row
    starts). When every rate is equal this is the common grid: strides ``slot, slot * max row, ...``.

    A producer read through an up-sampling whose lanes cannot follow its consumer step for step (``x / 2``
    read 4 pixels a step from a 1-wide stage: half a cycle per firing), or through a down-sampling by s with lanes
    neither s n nor s n / k (wider: it fills its s rows per consumer row sooner firing every step), is decoupled
    along x: it and the stages feeding it fire every ``slot`` cycles on their own grid, and only their rows keep
    pace with the consumer's (an input row once per 2 output rows), as an input memory at its own rate does
    (``own_rate_grid``); ``_check_decoupled`` refuses an up-sampled producer too slow for that.

    A ``swept`` stage (``swept_stages``) relates to no reader: it sweeps its tile at its own pace and its readers,
    which read only its last sweep's values (the tile's are held anyway), start when those are written."""
    rates: dict[str, list] = {}
    links, decoupled = [], []  # x relations kept step for step; (producer, consumer, x ratio, row ratio)
    outer_links: list[list] = [[] for _ in range(n_time)]  # per outer dimension: (producer, consumer) rate-related
    for name, node in acc.stages.items():
        if name in fills:  # on its own grid (``_fill_schedule``)
            continue
        mins, ext, tdims = doms[name]
        pos = {node.dims[k]: j for j, k in enumerate(tdims)}  # consumer dim name -> time position
        implied: list[list] = [[] for _ in range(n_time)]
        relations = set()  # (producer, time position, a, d): a fully unrolled reduction's taps repeat them
        for r in node.reads:
            if r.producer in fills or r.producer in swept:
                continue
            ptd = doms[r.producer][2]
            for jp, kp in enumerate(ptd):
                form = r.index[kp]
                num, d = (form.num, form.div) if isinstance(form, FloorDiv) else (form, 1)
                used = [(v, a) for v, a in num.terms.items() if v in node.dims]
                if len(used) != 1 or used[0][0] not in pos or pos[used[0][0]] != jp or used[0][1] <= 0:
                    continue  # not a rate relation between the same time dimension of both
                if jp == 0 and acc.stages[r.producer].own_rate:
                    continue  # an input memory's x runs on its own grid; only its rows keep pace
                relations.add((r.producer, jp, used[0][1], d))
        for producer, jp, a, d in relations:
            if jp == 0:
                # producer lanes per pixel the consumer reads a step. Step for step: 1; up-sampling, whole (4 wide
                # under a 4-wide x / 2 fires every other step); down-sampling, 1 / k (k times too narrow: the
                # consumer fires every k steps, as at one pixel a step). Else the producer has its own grid along
                # x: a wider down-sampled one fills its s rows per consumer row sooner firing every step
                ratio = Fraction(d * stage_lanes(acc.stages[producer], slot), a * stage_lanes(node, slot))
                if (ratio.denominator != 1 if a < d else (a > d and ratio.numerator != 1)) and not (
                        a > d and any(p2 == producer and j2 == 0 and a2 == d2 for p2, j2, a2, d2 in relations)):
                    # (a down-sampling the consumer also reads step for step, hw(3 x / 2) + hw(x), stays on the
                    # common grid at the slower rate: decoupled, the other read could not follow)
                    rows = [Fraction(a2, d2) for p2, j2, a2, d2 in relations if p2 == producer and j2 == 1]
                    decoupled.append((producer, name, Fraction(a, d), rows[0] if rows else None))
                    continue
                links.append((producer, name))
            else:
                outer_links[jp].append((producer, name))
            implied[jp].append(rates[producer][jp] * Fraction(a, d))
        rates[name] = [max(v) if v else Fraction(1) for v in implied]
    group = _x_groups(acc, links)
    for producer, consumer, xr, yr in decoupled:
        if group[producer] == group[consumer]:
            kind = "a down-sampling" if xr > 1 else "an up-sampling"
            raise LoomError(f"'{consumer}' reads it through {kind} and, along another path, step for step; "
                            "its pixels per step cannot follow both", where=f"Func '{producer}'", construct="unroll")
        _check_decoupled(acc, producer, consumer, xr, yr, slot)
    strides = {name: [0] * n_time for name in rates}
    out_step = slot
    for j in range(n_time):
        col = {name: r[j] for name, r in rates.items()}
        if j == 0:  # per group, as fast as each stage's reduction allows; an input memory at its own rate
            own = [n for n in col if acc.stages[n].own_rate]
            groups = set(group[n] for n in col if n not in own)
            for g in groups:
                units = {n: f * stage_lanes(acc.stages[n], slot) for n, f in col.items()
                         if group[n] == g and n not in own}
                scale = Fraction(slot) / min(units.values())  # the common grid: the fastest stage a step per slot
                wide = len({stage_lanes(acc.stages[n], slot) for n in units}) > 1
                if not wide and g == group[acc.func.name] and not own and not decoupled:
                    # each stage's stride need only fit its own point (its reduction, its blocks): a stride-2
                    # layer iterating 6 cycles a point takes its input every 3 cycles, not every 6 (half speed)
                    scale = max(Fraction(_step_need(acc, n, doms[n][1]), u) for n, u in units.items())
                if wide:
                    # a stage wider than its readers (an accumulator 8 channels a step under a 1-wide output)
                    # need only fit its own reduction (R_s cycles) in its stride
                    scale = max(Fraction(_reduction_cycles(acc.stages[n]), u) for n, u in units.items())
                step = _integer_step(list(units.values()))
                scale = math.ceil(scale / step) * step
                for name, u in units.items():
                    strides[name][0] = int(u * scale)
                if wide and group[acc.func.name] == g:
                    out_step = max(1, math.floor(scale))  # cycles per output step: no longer ``slot``
                elif group[acc.func.name] == g:
                    out_step = int(min(units.values()) * scale)  # the fastest stage's step
            slot = out_step
            for name in own:
                strides[name][0] = own_rate_grid(acc.stages[name].lanes, slot)[1]
            continue
        # every stage's previous-dimension sweep fits in one step of this one; along y a step is a block of
        # ``rows`` rows (unroll(y, n)), so its stride is the rate times the rows. Stages whose dimension j no
        # read relates to the output's (a gemm's B, whose rows are the output's reduction) pace only each other.
        units = {name: f * acc.stages[name].rows if j == 1 else f for name, f in col.items()}
        need = {}
        for name, u in units.items():
            mins, ext, tdims = doms[name]
            e = ext[tdims[j - 1]]
            e = -(-e // stage_lanes(acc.stages[name], slot)) if j == 1 else e
            e = -(-e // acc.stages[name].rows) if j == 2 else e  # a row step covers a block of rows
            need[name] = Fraction(strides[name][j - 1] * e) / u
        tied = _x_groups(acc, outer_links[j])
        for g in set(tied[n] for n in units):
            members = [n for n in units if tied[n] == g]
            scale = max(need[n] for n in members)
            # the smallest scale >= this one giving every stage an integer stride
            step = _integer_step([units[n] for n in members])
            scale = math.ceil(scale / step) * step
            for name in members:
                strides[name][j] = int(units[name] * scale)
    return strides, out_step


def _step_need(acc: Accelerator, name: str, ext) -> int:
    """Cycles a stage needs between its steps: its point's reduction (per block), the output's channel blocks."""
    node = acc.stages[name]
    need = _point_cycles(node, ext)
    return max(need, _block_count(node, ext)) if name == acc.func.name else need


def _reduction_cycles(node: StageNode) -> int:
    """Cycles a point's reduction occupies the stage (1 when its loop is outside the pixels: a sweep each)."""
    outer = outer_reductions(node) if node.reduction_outer else ()
    return math.prod(e for loop, e in node.time_reduction if loop not in outer)


def _x_groups(acc: Accelerator, links) -> dict:
    """Stage -> representative of the stages tied step for step along x (union of ``links``)."""
    parent = {n: n for n in acc.stages}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in links:
        parent[find(a)] = find(b)
    return {n: find(n) for n in acc.stages}


def _check_decoupled(acc: Accelerator, producer: str, consumer: str, x_ratio: Fraction, row_ratio, slot: int):
    """A producer on its own grid along x must still supply, on average, the pixels its consumer reads per step:
    lanes >= consumer lanes x (a/d along x) x (rows read per consumer row)."""
    p, c = acc.stages[producer], acc.stages[consumer]
    kind = "a down-sampling" if x_ratio > 1 else "an up-sampling"
    # an input memory at its own rate (c.own_rate) cannot be the consumer: it reads only host streams, whose x
    # relation ``stage_time_strides`` skips (an own-rate producer runs on its own grid already)
    if p.time_reduction or c.time_reduction:
        who = f"'{producer}'" if p.time_reduction else f"'{consumer}'"
        raise LoomError(f"'{consumer}' reads it through {kind} and {who} iterates a reduction in time; a "
                        "producer on its own grid along x is scheduled only between stages firing once per step "
                        "(unroll the reduction, or unroll the producer so that it follows its consumer step for "
                        "step)", where=f"Func '{producer}'", construct="unroll")
    if row_ratio is None:
        raise LoomError(f"'{consumer}' {kind[:-3]}es it along x ({x_ratio} of its pixels per pixel) but not along "
                        f"a row dimension it keeps pace on; unroll it to {c.lanes * x_ratio} pixels per step",
                        where=f"Func '{producer}'", construct="unroll")
    if x_ratio > 1:  # down-sampling: wider than the pixels read along x (else it is tied); rows pace the rest
        return
    need = c.lanes * x_ratio * row_ratio  # producer pixels per consumer step, on average
    have = stage_lanes(p, slot)
    if have < need:
        raise LoomError(f"it computes {have} pixel{'s' if have > 1 else ''} per step but '{consumer}' "
                        f"({c.lanes} pixels per step) reads {need} of its pixels per step on average "
                        f"({x_ratio} per pixel along x, {row_ratio} of its rows per row); unroll it by at least "
                        f"{math.ceil(need)}", where=f"Func '{producer}'", construct="unroll")


def own_rate_grid(rate: int, slot: int) -> tuple[int, int]:
    """(lanes, cycles per step along x) of an input memory filling at least ``rate`` pixels per ``slot``-cycle
    output step: the fewest lanes, each pixel's channels written in one cycle, the writes spread over the step
    (one pixel every floor(slot / rate) cycles when rate <= slot) so the memory's write ports stay narrow."""
    lanes = -(-rate // slot)
    return lanes, slot * lanes // rate


def stage_lanes(node: StageNode, slot: int) -> int:
    """Pixels a stage computes per firing: its unroll factor, or its own-rate grid's lanes."""
    return own_rate_grid(node.lanes, slot)[0] if node.own_rate else node.lanes


def _candidates(plan: StagePlan, matrix=(), divs=(), prod_schedule=None):
    lanes = plan.schedule.lanes
    cands = []

    def block(s, k):  # values of dim k sharing a step: lanes along x, a block's rows along y (floors)
        if s is None:
            return 1
        return math.lcm(s.lanes if k == 0 else 1, *[m for j, m, _ in s.floors if j == k])

    for k, e in enumerate(plan.extents):
        vals = {0, e - 1}
        if k == 0 and lanes > 1:
            vals |= set(range(min(lanes, e))) | set(range(max(0, e - lanes), e))
        # a producer x at n pixels per cycle enters its time as floor(x / n): periodic in x (y in rows blocks)
        period = math.lcm(block(plan.schedule, k),
                          *[d * block(prod_schedule, j) for j, (row, d) in enumerate(zip(matrix, divs)) if row[k]])
        if period > 1:
            vals |= set(range(min(period, e))) | set(range(max(0, e - period), e))
        cands.append(sorted(vals))
    return cands


def _integer_step(rates) -> Fraction:
    """The smallest s > 0 with every rate * s an integer (lcm of denominators / gcd of numerators)."""
    den = math.lcm(*(f.denominator for f in rates))
    num = math.gcd(*(f.numerator * (den // f.denominator) for f in rates))
    return Fraction(den, num)


def _max_delay(cons: StagePlan, prod: StagePlan, matrix, offs, divs, memo: dict | None = None) -> int:
    """max over consumer points of t_prod(access(p)) - t_cons(p), both without offsets.

    Linear in each coordinate, so the corners decide; a floor division by d adds a term periodic in
    the coordinate, so the first and last d values of a divided dimension are tried too."""
    if cons.schedule.lanes == 1 and prod.schedule.lanes == 1 and set(divs) <= {1} and \
            not cons.schedule.floors and not prod.schedule.floors:
        return _max_delay_linear(cons, prod, matrix, offs, {} if memo is None else memo)
    best = None
    for point in itertools.product(*_candidates(cons, matrix, divs, prod.schedule)):
        q = [(sum(a * p for a, p in zip(row, point)) + c) // d for row, c, d in zip(matrix, offs, divs)]
        for j, (v, e) in enumerate(zip(q, prod.extents)):
            if not 0 <= v < e:
                raise LoomError(f"reads '{prod.name}' at {tuple(q)} outside its domain "
                                f"{prod.extents} (bounds inference inconsistency)", where=f"Func '{cons.name}'")
        tp = _rel_time(prod.schedule, q)
        tc = _rel_time(cons.schedule, point)
        best = tp - tc if best is None else max(best, tp - tc)
    return int(best)


def _max_delay_linear(cons: StagePlan, prod: StagePlan, matrix, offs, memo: dict) -> int:
    """``_max_delay`` of an affine access at one value per cycle: per coordinate, the better end of its range.

    The part that does not depend on the offsets is kept in ``memo`` per matrix: a fully unrolled
    reduction's thousands of taps share it."""
    sp, sc = prod.schedule.strides, cons.schedule.strides
    key = (prod.name, sp, sc, matrix)
    part = memo.get(key)
    if part is None:
        slope = sum(max(0, (sum(st * row[k] for st, row in zip(sp, matrix)) - sc[k]) * (e - 1))
                    for k, e in enumerate(cons.extents))
        spans = [(sum(min(0, a * (e - 1)) for a, e in zip(row, cons.extents)),
                  sum(max(0, a * (e - 1)) for a, e in zip(row, cons.extents))) for row in matrix]
        part = memo[key] = (slope, spans)
    slope, spans = part
    best = slope + sum(st * c for st, c in zip(sp, offs))
    for j, ((lo, hi), c) in enumerate(zip(spans, offs)):  # the access stays inside the producer's domain
        lo, hi = lo + c, hi + c
        if lo < 0 or hi >= prod.extents[j]:
            raise LoomError(f"reads '{prod.name}' at indices {lo}..{hi} of dimension {j}, outside its domain "
                            f"{prod.extents} (bounds inference inconsistency)",
                            where=f"Func '{cons.name}'")
    return int(best)


def _rel_time(s: CycleSchedule, point):
    t = 0
    for k, (st, v) in enumerate(zip(s.strides, point)):
        if st:
            t += st * (v // s.lanes if (k == 0 and s.lanes > 1) else v)
    for k, m, c in s.floors:
        t += c * (point[k] // m)
    return t


def _memory_type(f: Func, streamed: bool) -> str | None:
    """The store_in() kind of a stage's buffer on the accelerator; the kinds that cannot hold one refused."""
    kind = f.schedule.memory_type
    written = "streamed into the accelerator" if streamed else "computed on the accelerator"
    if kind == MemoryType.Host:
        raise LoomError(f"is stored in host memory (store_in(MemoryType.Host)) but {written}, which holds it in "
                        "its own memory; host memory holds stages computed on the host (outside hw_accelerate): "
                        "drop store_in or compute it on the host", where=f"Func '{f.name}'", construct="store_in")
    if kind == MemoryType.ROM:
        raise LoomError(f"is stored in a ROM (store_in(MemoryType.ROM)) but {written} during the run; a ROM holds "
                        "a table of constants (a Func of constants only, which the compiler finds itself): drop "
                        "store_in or store it in a memory tile", where=f"Func '{f.name}'", construct="store_in")
    return kind


def _accumulator_memory_type(f: Func) -> str | None:
    """The store_in() kind that places a reduction's partial sums: a pond or registers (the storage its update
    reads and writes; its final values keep the mapper's choice), else the mapper decides."""
    kind = f.schedule.memory_type
    return kind if kind in (MemoryType.Pond, MemoryType.Register) else None


def _buffers(acc, plans, reads):
    buffers = {}
    for name, plan in plans.items():
        kind = "stream" if plan.node.kind == "stream" else "buffer"
        b = UnifiedBuffer(name, len(plan.extents), plan.extents, kind=kind)
        ident = (tuple(tuple(int(i == j) for j in range(len(plan.extents))) for i in range(len(plan.extents))),
                 (0,) * len(plan.extents))
        writer = "host" if plan.node.kind == "stream" else name
        src = plan.node.source
        b.memory_type = _memory_type(src, kind == "stream") if isinstance(src, Func) else None
        if plan.red_extents and b.memory_type in (MemoryType.Pond, MemoryType.Register):
            b.memory_type = None  # a pond or registers hold the partial sums (_accumulator_memory_type)
        b.write_ports.append(Port("in", "in", writer, plan.extents, ident, plan.schedule))
        buffers[name] = b
    counts = {}
    for producer, consumer, matrix, offs, divs in reads:
        k = counts.get((producer, consumer), 0)
        counts[(producer, consumer)] = k + 1
        cp = plans[consumer].iteration()
        buffers[producer].read_ports.append(Port(f"{consumer}#{k}", "out", consumer, cp.extents,
                                                 (matrix, offs), cp.schedule,
                                                 None if set(divs) <= {1} else tuple(divs)))
    out = plans[acc.func.name]
    ident = buffers[acc.func.name].write_ports[0].access
    buffers[acc.func.name].read_ports.append(Port("host", "out", "host", out.extents, ident, out.schedule))
    return buffers


def _accumulator(plan: StagePlan) -> UnifiedBuffer:
    """The RMW buffer of a stage's partial sums, on the update's domain (dims + its reduction loops in time order,
    loops nested contiguously in time merged into one linear loop: one loop unless some are outside the pixels).

    Iteration i of point p writes the partial sum; iteration i + 1 (one cycle later, or a sweep of the tile when
    the loop is outside the pixels) reads it back. The reads are one port per loop L: the iterations whose
    outermost nonzero loop is L (L >= 1, the loops inside it free), reading what the one before wrote. The last
    iteration's sum goes to the stage's own buffer instead."""
    n = len(plan.extents)
    red = plan.red_time or plan.red_strides
    loops = []  # (stride, extent) in time order, innermost first
    for st, e in sorted(zip(red, plan.red_extents)):
        if loops and loops[-1][0] * loops[-1][1] == st:
            loops[-1] = (loops[-1][0], loops[-1][1] * e)
        else:
            loops.append((st, e))
    start = plan.iteration().schedule.offset
    strides, lanes = tuple(plan.schedule.strides), plan.schedule.lanes
    b = UnifiedBuffer(accumulator_name(plan.name), n, plan.extents, kind="accumulation")
    src = plan.node.source
    b.memory_type = _accumulator_memory_type(src) if isinstance(src, Func) else None

    def access(k):
        return tuple(tuple(int(i == j) for j in range(n + k)) for i in range(n)), (0,) * n

    floors = plan.schedule.floors  # channel blocks: each block's reduction in its own cycles
    b.write_ports.append(Port("in", "in", plan.name, tuple(plan.extents) + tuple(e for _, e in loops),
                              access(len(loops)),
                              CycleSchedule(start, strides + tuple(st for st, _ in loops), lanes, floors)))
    for i, (st, e) in enumerate(loops):
        b.read_ports.append(Port(f"{plan.name}#acc" + (str(i) if i else ""), "out", plan.name,
                                 tuple(plan.extents) + tuple(e2 for _, e2 in loops[:i]) + (e - 1,), access(i + 1),
                                 CycleSchedule(start + st, strides + tuple(s2 for s2, _ in loops[:i + 1]), lanes,
                                               floors)))
    return b


def accumulator_times(buffer: UnifiedBuffer):
    """Write cycle of every partial sum and the cycle it is read back (one per iteration but the last), the
    iterations numbered linearly (innermost loop fastest) on the first axis."""
    (w,) = buffer.write_ports
    n = len(buffer.extents)
    _, tw = port_indices(w)
    pix = tw.shape[len(w.extents) - n:]
    tw = tw.reshape((-1,) + pix)
    tr = np.empty((tw.shape[0] - 1,) + pix, np.int64)
    inner = 1  # iterations of the loops inside read port i's
    for r in buffer.read_ports:
        _, t = port_indices(r)
        e = r.extents[-1]
        pos = inner * (np.arange(e)[:, None] + 1) + np.arange(inner)[None, :] - 1  # the iteration read, minus 1
        tr[pos.ravel()] = t.reshape((e * inner,) + pix)
        inner *= e + 1
    return np.ascontiguousarray(tw[:-1]), tr


def accumulator_capacity(buffer: UnifiedBuffer) -> int:
    """Most partial sums held at once (written, not yet read back).

    Each iteration's sum is read back one cycle after its write, so the sums held in a cycle are those of
    the points whose reduction runs then. When the points' start cycles are at least R - 1 apart (nested
    strides, the smallest >= R - 1) reductions never overlap: the points computed in the same cycle (lanes,
    dimensions in space) are all there is, without sweeping the domain."""
    closed = _accumulator_capacity_closed_form(buffer)
    if closed is not None:
        return closed
    tw, tr = accumulator_times(buffer)
    if tw.size == 0:
        return 0
    held = tr > tw
    if not held.any():
        return 0
    times = np.concatenate([tw[held], tr[held]])
    delta = np.concatenate([np.ones(int(held.sum()), np.int64), -np.ones(int(held.sum()), np.int64)])
    order = np.lexsort((delta, times))  # a read back frees its slot before a write in the same cycle
    return int(np.cumsum(delta[order]).max())


def _accumulator_capacity_closed_form(buffer: UnifiedBuffer) -> int | None:
    (w,) = buffer.write_ports
    steps = w.extents[-1]
    sched, extents = w.schedule, w.extents[:-1]
    if len(buffer.read_ports) != 1 or steps < 2 or sched.strides[-1] != 1:
        return None
    spatial, timed = 1, []
    blocks = {k: (m, c) for k, m, c in sched.floors}
    if len(blocks) != len(sched.floors) or any(sched.strides[k] for k in blocks):
        return None
    for k, (st, e) in enumerate(zip(sched.strides, extents)):
        n = -(-e // sched.lanes) if (k == 0 and sched.lanes > 1) else e
        if k == 0 and sched.lanes > 1:
            spatial *= min(sched.lanes, e)
        if k in blocks:  # channels in blocks: a block's channels in space, the blocks in time
            m, c = blocks[k]
            spatial *= min(m, e)
            if -(-e // m) > 1:
                timed.append((c, -(-e // m)))
        elif st == 0:
            spatial *= e
        elif n > 1:
            timed.append((st, n))
    reach = steps - 1  # cycles a point's partial sums occupy: iterations 0 .. R - 2
    for st, n in sorted(timed):
        if st < reach:
            return None
        reach = st * n
    return spatial


# capacities -----------------------------------------------------------------

def affine_index(row, const, grids, div=1):
    """``floor((const + sum(a * g)) / div)`` over the nonzero coefficients ``row`` of the index grids (broadcast)."""
    v = const
    for a, g in zip(row, grids):
        if a:
            v = v + a * g
    return v // div if div != 1 else v


def port_indices(port: Port):
    """Buffer index arrays (one per buffer dim) and cycles of every operation of a port."""
    nd = len(port.extents)
    grids = []
    for k, e in enumerate(port.extents):
        shape = [1] * nd
        shape[nd - 1 - k] = e
        grids.append(np.arange(e, dtype=np.int64).reshape(shape))
    rows, offs = port.access
    idx = [np.broadcast_to(affine_index(row, c, grids, d), tuple(port.extents[::-1])) if nd
           else np.asarray(affine_index(row, c, grids, d)) for row, c, d in zip(rows, offs, port.divs())]
    times = np.broadcast_to(port.schedule.times(grids), tuple(port.extents[::-1]))
    return idx, times


def last_reads(buffer: UnifiedBuffer):
    """Cycle of the last read of every stored value (write cycle if never read)."""
    (w,) = buffer.write_ports
    _, tw = port_indices(w)
    tw = np.ascontiguousarray(tw)
    last = tw.copy()
    shape = tw.shape
    cache, shared = {}, {}
    for p in buffer.read_ports:
        fast = projection_last_read(p, buffer.extents, cache)
        if fast is not None:  # closed form per dimension (last_read.py)
            slices, cycles = fast
            if cycles is not None and slices is not None:
                shared.setdefault(id(cycles), (cycles, []))[1].append(slices)
            continue
        idx, t = port_indices(p)
        flat = np.ravel_multi_index(tuple(i.ravel() for i in reversed(idx)), shape)
        np.maximum.at(last.reshape(-1), flat, t.ravel())
    for cycles, all_slices in shared.values():
        _apply_last(last, cycles, all_slices)
    return tw, last


def _apply_last(last, cycles, all_slices):
    """``last[s] = max(last[s], cycles)`` for each s; taps differing in one constant index go in one step."""
    first = all_slices[0]
    axes = [a for a in range(len(first)) if any(s[a] != first[a] for s in all_slices)]
    if len(axes) == 1 and all(s[axes[0]].stop - s[axes[0]].start == 1 for s in all_slices):
        index = np.array([s[axes[0]].start for s in all_slices])
        if np.unique(index).size == index.size:
            key = list(first)
            key[axes[0]] = index  # one index array among slices keeps its axis in place
            key = tuple(key)
            last[key] = np.maximum(last[key], cycles)
            return
    for s in all_slices:
        last[s] = np.maximum(last[s], cycles)


def live_capacity(buffer: UnifiedBuffer) -> int:
    """Maximum over cycles of the values written and still to be read (held past their write cycle)."""
    (w,) = buffer.write_ports
    if all(p.access == w.access and p.schedule == w.schedule and tuple(p.extents) == tuple(w.extents)
           and p.divs() == w.divs() for p in buffer.read_ports):
        return 0  # every value is read in the cycle it is written: a wire
    tw, last = last_reads(buffer)
    # a value never read after its write cycle has last == write: it adds and leaves in the same cycle, so
    # all values go in uncopied (millions for a gemm's matrices)
    return max_live(tw.ravel(), last.ravel())


def _is_separable(design: Design) -> bool:
    """Every access reads time dim j of the producer at floor((a * p_j + c) / d), a > 0: a translation, possibly
    scaled (down- or up-sampling), so the live values repeat row after row in the steady state. A dim computed
    in space (channels) may be read at any index of the consumer's dims in space: all of it is written and
    read in the same cycle as a pixel's lanes are."""
    for producer, consumer, matrix, offs, divs in design.reads:
        prod, cons = design.stages[producer], design.stages[consumer]
        ptime = prod.time_dims
        space = {k for k in range(len(cons.extents)) if k not in cons.time_dims}
        for j, row in enumerate(matrix):
            for k, a in enumerate(row):
                if k >= len(cons.extents):
                    continue  # a reduction loop iterated in time: a bounded offset within the consumer's point
                if j in ptime and ((k == j and a <= 0) or (k != j and a != 0)):
                    return False
                if j not in ptime and a != 0 and k not in space:
                    return False
            # rows: a read of row (a y + c) / d must advance as fast as the consumer's rows do, else (y and 2y of
            # one producer: the consumer runs at the slower rate) the live rows grow with y
            if ptime and j == ptime[-1] and j in cons.time_dims and \
                    Fraction(row[j], divs[j]) * _cycles_per_index(prod.schedule, j) != _cycles_per_index(cons.schedule, j):
                return False
    return True


def _cycles_per_index(schedule: CycleSchedule, k: int) -> Fraction:
    """Cycles per index of time dim k: its stride, or c / m when it advances in blocks of m (rows a step)."""
    if schedule.strides[k]:
        return Fraction(schedule.strides[k])
    return next((Fraction(c, m) for j, m, c in schedule.floors if j == k), Fraction(0))


def _rows_per_output_row(plan: StagePlan, out_plan: StagePlan) -> Fraction:
    """How many rows of a stage pass per output row (1 on a common grid; 8 for a pyramid's input)."""
    s = _cycles_per_index(plan.schedule, plan.time_dims[-1])
    return _cycles_per_index(out_plan.schedule, out_plan.time_dims[-1]) / max(s, Fraction(1))


def _fill_capacities(design: Design, exact: bool):
    caps = None if exact else _width_extrapolated(design)
    if caps is None:
        caps = _capacities(design, exact)
    for name, b in design.buffers.items():
        cap = caps[name]
        b.capacity = cap
        if cap == 0 and b.kind == "buffer":
            b.kind = "wire"
        elif cap == 0 and b.kind == "stream":
            b.kind = "wire"
    for name, b in design.accumulators.items():
        b.capacity = accumulator_capacity(b)


def _capacities(design: Design, exact: bool) -> dict:
    """Buffer -> live capacity, swept over a proxy clipped to a few rows when that is exact (see module doc)."""
    size = design.size
    out_plan = design.stages[design.acc.func.name]
    target = design
    if not exact and len(out_plan.time_dims) >= 2 and _is_separable(design):
        outer = out_plan.time_dims[-1]
        s_outer = max(_cycles_per_index(out_plan.schedule, outer), Fraction(1))
        max_delay = max(p.offset for p in design.stages.values())
        window = math.floor(max_delay / s_outer) + 2 + design.acc.rows
        # rows of each stage beyond what the output's rows need, counted in output rows
        halo = 0
        for p in design.stages.values():
            if not p.time_dims:
                continue  # a 0-d stream (a scalar) loaded per invocation: no rows
            ratio = _rows_per_output_row(p, out_plan)
            halo = max(halo, math.ceil((p.extents[p.time_dims[-1]] - out_plan.extents[outer] * ratio) / ratio))
        rows = 2 * (window + halo + 2) + 1
        if size[outer] > rows:
            proxy = _schedule(design.acc, size[:outer] + (rows,) + size[outer + 1:], design.origin, _latencies(design),
                              design.swept)
            same = all(proxy.stages[n].schedule == p.schedule for n, p in design.stages.items())
            if same:
                target = proxy
    return {name: live_capacity(target.buffers[name]) for name in design.buffers}


def _latencies(design: Design) -> dict:
    return {n: p.latency for n, p in design.stages.items()}


WIDTH_PROBES = (0, 1, 2, 5)  # proxy widths: base + k * step
EXTRAPOLATE_FROM_WIDTH = 1024  # narrower designs are swept directly (as fast as the four probes)


def _width_extrapolated(design: Design) -> dict | None:
    """Capacities of a wide design from narrow proxies, so the build time does not grow with the width.

    On a separable design (every access a translation, possibly scaled, of its own dimension) every row
    holds the same pattern, and a buffer's live values are a number of rows plus a few pixels: affine in the
    width once it exceeds the halos. The capacities are computed at the widths ``base + k * step`` for k in
    ``WIDTH_PROBES`` (``step`` a multiple of the lanes and of every access divisor, ``base`` congruent to the
    width modulo ``step``) and extrapolated only when all four are collinear for every buffer; otherwise
    (or for narrow designs) the caller sweeps the real width."""
    out_plan = design.stages[design.acc.func.name]
    if len(out_plan.time_dims) < 2 or not _is_separable(design):
        return None
    inner = out_plan.time_dims[0]
    width = design.size[inner]
    step = math.lcm(2, *(p.schedule.lanes for p in design.stages.values()), *(d for *_, divs in design.reads for d in divs))
    for p in design.stages.values():  # strided stages (pyramids): a step of every level
        if not p.time_dims:
            continue
        ratio = _rows_per_output_row(p, out_plan)
        step = math.lcm(step, ratio.numerator)
    base = 64 + (width - 64) % step
    top = base + WIDTH_PROBES[-1] * step
    if width < max(2 * top, EXTRAPOLATE_FROM_WIDTH):
        return None
    probes = []
    for k in WIDTH_PROBES:
        w = base + k * step
        size = design.size[:inner] + (w,) + design.size[inner + 1:]
        probes.append(_capacities(_schedule(design.acc, size, design.origin, _latencies(design), design.swept), False))
    out = {}
    for name in design.buffers:
        caps = [c[name] for c in probes]
        slope = caps[1] - caps[0]
        if any(c != caps[0] + k * slope for k, c in zip(WIDTH_PROBES, caps)):
            return None
        out[name] = caps[0] + (width - base) // step * slope
    return out
