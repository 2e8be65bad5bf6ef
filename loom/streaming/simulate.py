"""Cycle-accurate simulation of a scheduled accelerator.

Kernels fire on their scheduled cycles and buffers hold exactly their
computed capacity. A value occupies its buffer from its write cycle until the
last cycle one of the ports actually reads it (address generators know that
cycle statically); a value read in the cycle it is written is forwarded (a
wire). Each read of every port, at its cycle, must find its value written,
else ``LoomError`` (read before write). When more values must be held than
the capacity, the one needed soonest is lost, and its read raises
``LoomError`` (read after eviction). The checks are vectorised over all cycles
of a port; each stage's values are computed from its producers' buffer
contents only (host streams are cut to the streamed region, so a read
outside a buffer's domain fails as well). A stage whose reduction is iterated
in time reads its inputs on the cycles of its reduction loops, and its
accumulation buffer is checked the same way: every partial sum must be
written before the next iteration reads it back and must survive, within the
accumulator's capacity, until then.
The values are the simulator's own: every stage's ``ubuf.kernel`` (the IR the
path prints) is evaluated on the values its read ports take out of the buffers,
at the indices the IR's access maps give (``stage_values``), so a wrong access map
or kernel gives a wrong pixel. Only the host part of the pipeline (and the
contents of constant tables) is realised with the reference evaluator.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from loom.core.compare import bits_differ
from loom.errors import LoomError
from loom.frontends.pipeline.bounds import infer_bounds
from loom.frontends.pipeline.evaluate import Realization, crop, _input_realization, output_region, realize_func
from loom.frontends.pipeline.func import with_bound_inputs
from loom.frontends.pipeline.graph import FuncGraph, validate_schedules
from loom.frontends.pipeline.param import params_of, refuse_unknown_inputs
from loom.frontends.pipeline.schedule import TailStrategy

from .extract import Accelerator
from .ir_reader import IrDesign
from .ir_consistency import check_fixed_fields
from .ir_timing import timed_design
from .sharing import check_exclusive
from .stage_values import stage_values
from .to_ubuf import design_to_ir
from .unified_buffer import _names
from loom.dialects.ubuf import parse_ir
from .scheduler import (Design, StagePlan, accelerator_regions, accumulator_times, affine_index, build_design,
                        tile_extents)


class SimulationStats:
    def __init__(self):
        self.tiles = 0
        self.cycles_per_tile = 0
        self.reads_checked = 0
        self.pixels = 0


def simulate(output, inputs: dict, size, *, capacities: dict | None = None, design: Design | None = None,
             stats: SimulationStats | None = None, on_tile=None, ir=None) -> np.ndarray:
    """Run the pipeline with its accelerator simulated; returns ``output`` over ``size``.

    The accelerator's values come from its ``ubuf`` IR (``design_to_ir(design)``, or ``ir``: a module or
    its printed text, e.g. edited by hand): kernels evaluated on what the read ports deliver. A given ``ir``
    also sets the timing checked (``ir_timing.timed_design``: its capacities, schedules, latencies, accesses).

    ``on_tile(design, buffers, write_times, ir)``, if given, sees every invocation's buffer contents
    (name -> Realization over the stage's domain), write cycles and ``IrDesign`` (used by ``simulate_mapped``);
    an array it returns replaces the invocation's output (``loom.jit.streaming_rtl``'s RTL values)."""
    acc = design.acc if design is not None else Accelerator(output)
    pipe = acc.pipe
    validate_schedules(pipe)
    inputs = with_bound_inputs(pipe.params, inputs)
    shapes = {k: np.asarray(v).shape for k, v in inputs.items()}
    refuse_unknown_inputs(inputs, pipe.params, params_of(pipe.funcs))
    _check_configured_params(params_of(pipe.funcs), inputs)
    _check_configured_buffers(acc, inputs)
    for p in pipe.params:
        if p.name not in inputs:
            raise LoomError(f"no input array given", where=f"ImageParam '{p.name}'")
    region = output_region(pipe.output, size)
    if any(hi < lo for lo, hi in region):  # an empty output (as evaluate and Halide give): no invocation runs
        return np.zeros(tuple(reversed(tuple(size))), dtype=pipe.output.type.dtype)
    regions = infer_bounds(pipe, region, shapes, round_up=True)
    realized = {id(p): _input_realization(p, inputs[p.name]) for p in pipe.params}
    inside = _inside_funcs(acc)
    for f in pipe.funcs:
        if f is acc.func:
            realized[id(f)] = _run_accelerator(acc, regions[id(f)], realized, capacities, design, stats, on_tile,
                                               ir)
        elif id(f) not in inside:
            realize_func(f, regions[id(f)], realized)
    return crop(realized[id(pipe.output)], output_region(pipe.output, size))


def _check_configured_params(params, inputs: dict):
    """The accelerator takes a Param as a configuration constant, its value when the design is built; a value
    in ``inputs`` that differs would be ignored, so it is refused."""
    for p in params:
        if p.name not in inputs:
            continue
        given = p.check(inputs[p.name])
        if p.value is None or given != p.value:
            raise LoomError(f"the accelerator takes it as a configuration constant, its value when the design is "
                            f"built ({'none' if p.value is None else p.value.item()}), but the inputs give "
                            f"{given.item()}: {p.name}.set({given.item()}) before building the design",
                            where=f"Param '{p.name}'")


def _check_configured_buffers(acc: Accelerator, inputs: dict):
    """A Buffer the accelerator reads is an initialized memory holding its contents when the design is built;
    other contents in ``inputs`` would be ignored, so they are refused."""
    for name, table in acc.constants.items():
        p = table.func
        if not getattr(p, "from_buffer", False):
            continue
        given = np.asarray(inputs[name])
        if given.shape != p.bound.shape or bits_differ(given, p.bound).any():
            raise LoomError("the accelerator holds this Buffer's contents when the design is built as an initialized "
                            "memory, but the inputs give another array: build the design from a Buffer of those "
                            "contents", where=f"Buffer '{name}'")


_IR_OF = weakref.WeakKeyDictionary()


def _design_ir(design: Design) -> IrDesign:
    """The design's ubuf IR, read once per design (simulations of one design with other capacities reuse it)."""
    ir = _IR_OF.get(design)
    if ir is None:
        ir = _IR_OF[design] = IrDesign(design_to_ir(design))
    return ir


def _inside_funcs(acc: Accelerator):
    ids = set()
    for node in acc.stages.values():
        if node.kind == "compute":
            ids.add(id(node.source))
            ids.update(id(g) for g in node.kernel_funcs)
    return ids


def _run_accelerator(acc, region, realized, capacities, design, stats, on_tile=None, ir=None):
    size = tuple(hi - lo + 1 for lo, hi in region)
    # a tile larger than the image shrinks to it; a tile that does not divide the image follows the
    # tail strategy of its split: ShiftInwards (Auto) shifts the last invocation inward (it overlaps the
    # one before and rewrites a few outputs with the same values, so every invocation has one design);
    # GuardWithIf runs a smaller design for the last tiles; RoundUp never meets a tail (bounds inference
    # rounded the accelerator's region up to whole tiles, and the inputs must cover them)
    scheduled = tuple(tile_extents(acc, size))
    tile = tuple(min(t, n) for t, n in zip(scheduled, size))
    guarded = [tail == TailStrategy.GuardWithIf for tail in _tile_tails(acc)]
    if design is None:
        design = build_design(acc, tile, tuple(lo for lo, _ in region))
    elif design.size != tile:
        why = f" (the image is smaller than the tile {scheduled})" if tile != scheduled else ""
        raise LoomError(f"the design was scheduled for an invocation of size {design.size} but this run "
                        f"needs tiles of {tile}{why}; build the design for them (build_design({acc.func.name}, "
                        f"{tile})) or simulate without design=", where=f"Func '{acc.func.name}'")
    edited = ir is not None
    if ir is None:
        ir = _design_ir(design)
    else:  # the user's (edited) IR: what follows from the pipeline must be as printed; its timing is used too
        # parse_ir: a LoomError at the line; a module is read back from its printed text, so it is verified
        # as an edited text is (an unverified one reached the evaluator: a use before its definition was a
        # KeyError), its errors at lines of str(module)
        ir = IrDesign(parse_ir(ir if isinstance(ir, str) else str(ir)))
        check_fixed_fields(design, _design_ir(design), ir)
        design = timed_design(design, ir)
    caps = {n: b.capacity for n, b in list(design.buffers.items()) + list(design.accumulators.items())}
    for name, cap in (capacities or {}).items():
        if name not in caps:
            raise LoomError(f"no buffer named '{name}' (buffers: {', '.join(caps)})", where=f"buffer '{name}'")
        caps[name] = cap
    out = np.zeros(tuple(reversed(size)), dtype=acc.func.type.dtype)
    if acc.glb is None:
        outer = [(region, realized)]
    else:  # thesis Code 3.6: the host loops over GLB tiles, each holding what its fabric tiles read
        outer = [(sub, _glb_contents(acc, sub, realized)) for sub in _tiles(region, acc.glb.glb_tile(size))]
    partial = {}  # GuardWithIf: the design of each smaller tile shape; x / k at another phase: of each phase
    own = design.tile_reads(design.regions)
    for sub, held in outer:
        for reg in _tiles(sub, tuple(min(t, hi - lo + 1) for t, (lo, hi) in zip(tile, sub)), guarded):
            origin = tuple(lo for lo, _ in reg)
            shape = tuple(hi - lo + 1 for lo, hi in reg)
            # a tile that reads through x / k at another phase than the design's needs its own configuration
            regions = accelerator_regions(acc, origin, shape)
            key = design.tile_reads(regions)
            if key == own:
                values = _run_tile(acc, design, origin, tile, held, caps, stats, on_tile, ir, regions)
            else:
                if edited:  # the IR describes one invocation's design; this tile runs another
                    if shape != tile:
                        why, fix = "GuardWithIf cuts it short", "simulate an image the design's tiles cover whole"
                    elif key[2] != own[2]:  # other multiplexer inputs (``Design.tile_reads``)
                        why = "its multiplexers select other inputs than the design's first tile"
                        fix = "simulate without ir= (each tile then gets its own configuration)"
                    else:  # name the dimension: a tile height not a multiple of k shifts y / k, not x / k
                        reads = design.phase_reads(regions)
                        why = ("it reads through " + ", ".join(reads) + " at another phase than" if reads else
                               "its stages' extents differ from") + " the design's first tile"
                        fix = ("every tile reads at one phase when the tile and image extents along that dimension "
                               "are multiples of the divisor")
                    raise LoomError(f"the tile at {origin} of size {shape} needs its own design ({why}), which the "
                                    f"given ubuf IR does not describe; {fix}", where=f"Func '{acc.func.name}'")
                if key not in partial:
                    d = build_design(acc, shape, origin)
                    partial[key] = (d, _design_ir(d), {n: b.capacity for n, b in
                                                      list(d.buffers.items()) + list(d.accumulators.items())})
                d, d_ir, d_caps = partial[key]
                values = _run_tile(acc, d, origin, shape, held, d_caps, stats, on_tile, d_ir, regions)
            sl = tuple(slice(o - lo, o - lo + t) for (lo, _), o, t in zip(region, origin, shape))
            out[tuple(reversed(sl))] = values
    if stats is not None:
        stats.cycles_per_tile = design.latency
        stats.pixels += int(np.prod(size))
    return Realization(acc.func.name, out, [lo for lo, _ in region])


def _tiles(region, tile, guarded=()):
    """Regions of ``tile`` covering ``region``; the last one along a dimension shifted inward (ShiftInwards),
    or cut short where ``guarded`` (GuardWithIf)."""
    size = [hi - lo + 1 for lo, hi in region]
    counts = [-(-n // t) for n, t in zip(size, tile)]
    guarded = list(guarded) or [False] * len(tile)
    for idx in itertools.product(*[range(c) for c in counts]):
        origin = [lo + (i * t if g else min(i * t, n - t))
                  for (lo, _), i, t, n, g in zip(region, idx, tile, size, guarded)]
        yield [(o, min(o + t, lo + n) - 1) for (lo, _), o, t, n in zip(region, origin, tile, size)]


def _tile_tails(acc: Accelerator) -> list:
    """Per dimension of the accelerator output, the tail strategy of the split that makes its tile."""
    sched = acc.func.pure.schedule
    loops = sched.loops
    xo_index = loops.index(acc.xo)
    origin = {d.name: d.name for d in acc.func.dims}
    for sp in sched.splits:
        origin[sp.outer] = origin[sp.inner] = origin.get(sp.old, sp.old)
    tails = []
    for d in acc.func.dims:
        tail = TailStrategy.ShiftInwards
        for sp in sched.splits:
            if origin.get(sp.old) == d.name and sp.inner in loops and sp.outer in loops and \
                    loops.index(sp.inner) < xo_index <= loops.index(sp.outer):
                tail = TailStrategy.resolve(sp.tail, True)
        tails.append(tail)
    return tails


def _glb_contents(acc, glb_region, host):
    """What one GLB tile holds: each GLB buffer's values over the region its fabric tiles read (a copy)."""
    leaves = [n.source for n in acc.stages.values() if n.kind == "stream"]
    regions = infer_bounds(FuncGraph(acc.func), glb_region, leaves=leaves)
    held = dict(host)
    for b in acc.glb.buffers:
        if id(b) in regions:
            reg = regions[id(b)]
            held[id(b)] = Realization(b.name, crop(host[id(b)], reg), [lo for lo, _ in reg])
    return held


def _run_tile(acc, design: Design, origin, tile, host, caps, stats, on_tile=None, ir=None, regions=None):
    regions = regions or accelerator_regions(acc, origin, tile)
    buffers: dict[str, Realization] = {}
    write_times, last_read = {}, {}
    dtype = _time_dtype(design)
    for name, plan in design.stages.items():
        node = plan.node
        reg = regions[id(node.source)]
        mins = [lo for lo, _ in reg]
        if tuple(hi - lo + 1 for lo, hi in reg) != plan.extents:
            raise LoomError(f"tile at {origin} needs a domain of a different shape than the "
                            "scheduled one", where=f"Func '{name}'")
        write_times[name] = _write_times(plan, dtype)
        last_read[name] = write_times[name].copy()
        if node.kind == "stream":
            src = host[id(node.source)]
            held = [(m, m + e - 1) for m, e in zip(src.mins, reversed(src.array.shape))]
            if any(lo < a or hi > b for (lo, hi), (a, b) in zip(reg, held)):
                raise LoomError(f"the tile at {origin} reads {[tuple(r) for r in reg]} but its source holds only "
                                f"{held} (a GLB tile smaller than its fabric tiles' reads?)", where=f"stream '{name}'")
            sl = tuple(slice(lo - m, hi - m + 1) for (lo, hi), m in zip(reg, src.mins))
            buffers[name] = Realization(name, src.array[tuple(reversed(sl))], mins)
            continue
        it, t_iter, ports = plan.iteration(), None, {}
        for producer, consumer, matrix, offs, divs in design.reads:
            if consumer == name:
                k = ports[producer] = ports.get(producer, -1) + 1
                prod = design.stages[producer]
                if t_iter is None:  # every port of the stage reads on the same cycles
                    # a stage without reductions in time or latency reads on the cycles it writes
                    t_iter = write_times[name] if it is plan else _iteration_times(it, dtype)
                tc, idx = _read_grid(prod, it, matrix, offs, divs, t_iter, f"{name}#{k}")
                if _reads_after_write_proven(prod, it, matrix, offs, divs):
                    if stats is not None:
                        stats.reads_checked += tc.size
                else:  # not provable (or violated): the per-read check finds the first early read
                    _check_reads_after_write(prod, it, matrix, offs, tc, idx, write_times[producer], stats, divs)
                _accumulate_last_read(last_read[producer], prod, it, matrix, offs, tc, idx, divs)
        buffers[name] = Realization(name, stage_values(ir, plan, mins, buffers), mins)
    for share in ir.shares.values():  # compute sharing: one firing per cycle, each inside its stage's slot
        _check_shared_slots(share, write_times)
    # the host reads the output as it is produced
    for name in design.stages:
        _check_capacity(design.stages[name], write_times[name], last_read[name], caps[name])
    for name, acc_buf in design.accumulators.items():
        _check_accumulator(acc_buf, caps[name], stats)
    if stats is not None:
        stats.tiles += 1
    if on_tile is not None:  # it may stand in for the accelerator's output (the RTL co-simulation's)
        replaced = on_tile(design, buffers, write_times, ir)
        if replaced is not None:
            return replaced
    return buffers[acc.func.name].array


def _check_shared_slots(share, write_times):
    """Every firing of a stage on a shared kernel lies in one of its slots of the period, and no two coincide."""
    where = f"ubuf.share @{share.sym_name.data}"
    period = share.period.value.data
    for stage, runs in share.slots().items():
        if stage not in write_times:
            raise LoomError(f"names stage '{stage}', which the design does not have", where=where)
        t = write_times[stage].ravel().astype(np.int64)
        phase = t % period if period else t
        bad = np.ones(t.shape, bool)
        for start, length in runs:
            bad &= (phase < start) | (phase >= start + length)
        if bad.any():
            k = int(np.argmax(bad))
            spans = ", ".join(f"[{a}, {a + n})" for a, n in runs)
            raise LoomError(f"stage '{stage}' fires at cycle {int(t[k])}, outside its slot{'s' * (len(runs) > 1)} "
                            f"{spans} of a {period or 'one-block'}-cycle period (the kernel's inputs would be "
                            "multiplexed from another stage)", where=where)
    check_exclusive({n: write_times[n] for n in share.slots()}, where)


def _cycle_bound(plan: StagePlan) -> int:
    """A bound on |cycle| over the plan's domain (exact Python integers)."""
    s = plan.schedule
    return (abs(s.offset) + sum(abs(st) * (e - 1) for st, e in zip(s.strides, plan.extents))
            + sum(abs(c) * ((plan.extents[k] - 1) // m) for k, m, c in s.floors))


def _time_dtype(design: Design):
    """int32 cycle numbers when every cycle of every stage fits (half the memory traffic), else int64; a stage
    whose cycles int64 cannot hold (an edited schedule) is refused rather than wrapped around."""
    bound = 0
    for name, plan in design.stages.items():
        b = max(_cycle_bound(plan), _cycle_bound(plan.iteration()))
        if b > np.iinfo(np.int64).max:
            schedule = plan.schedule.text(_names(len(plan.extents)))
            raise LoomError(f"the stage's cycles run up to {b} in magnitude (schedule [{schedule}], "
                            f"kernel latency {plan.latency}), beyond the 64-bit cycle numbers the simulation counts in",
                            where=f"ubuf.port 'in' of @{name}")
        bound = max(bound, b)
    return np.int32 if bound < np.iinfo(np.int32).max // 2 else np.int64


def _times(plan: StagePlan, dtype=np.int64):
    """The cycle of every point of ``plan``'s domain, as one contiguous array built in one pass."""
    shape = plan.extents[::-1]
    t = plan.schedule.times([g.astype(dtype, copy=False) for g in plan.grids()])
    t = np.asarray(t, dtype=dtype)
    if t.shape != shape:
        t = np.broadcast_to(t, shape)
    return np.ascontiguousarray(t)


def _iteration_times(cons: StagePlan, dtype=np.int64):
    return _times(cons, dtype)


def _read_grid(prod: StagePlan, cons: StagePlan, matrix, offs, divs=None, tc=None, port=None):
    """Consumer cycles and the producer index each read of a port (``port``: its name) touches."""
    grids = cons.grids()
    tc = _iteration_times(cons) if tc is None else tc
    divs = divs or (1,) * len(offs)
    idx = [np.broadcast_to(affine_index(row, c, grids, d), tc.shape) for row, c, d in zip(matrix, offs, divs)]
    used = _translation(matrix, len(cons.extents), divs)
    for j, (ix, e) in enumerate(zip(idx, prod.extents)):
        if used is not None:  # a translation: the range is its offset plus the consumer's extent
            lo = offs[j]
            hi = lo + (cons.extents[used[j]] - 1 if j in used else 0)
        else:
            lo, hi = ix.min(), ix.max()
        if lo < 0 or hi >= e:
            raise LoomError(f"port {repr(port) + ' ' if port else ''}of '{cons.name}' reads indices {lo}..{hi} in "
                            f"dimension {j}, outside the buffer's domain 0..{e - 1}", where=f"buffer '{prod.name}'")
    return tc, idx


def _accumulate_last_read(last, prod, cons, matrix, offs, tc, idx, divs=None):
    """last[q] = max(last[q], cycle of every read of q by this port)."""
    nd_c = len(cons.extents)
    used = _translation(matrix, nd_c, divs)
    if used is None:
        flat = np.ravel_multi_index(tuple(i.ravel() for i in reversed(idx)), last.shape)
        np.maximum.at(last.reshape(-1), flat, tc.ravel())
        return
    # slicing instead of scatter: reduce unused consumer axes, then align axes with the producer's
    unused_axes = tuple(nd_c - 1 - k for k in range(nd_c) if k not in used.values())
    red = tc.max(axis=unused_axes, keepdims=True) if unused_axes else tc
    red = red.reshape([red.shape[nd_c - 1 - k] for k in reversed(range(nd_c)) if k in used.values()] or [1])
    kept = [k for k in reversed(range(nd_c)) if k in used.values()]  # consumer dims in red's axis order
    index, order = [], []
    nd_p = len(prod.extents)
    for j in reversed(range(nd_p)):  # producer storage order
        if j in used:
            k = used[j]
            index.append(slice(offs[j], offs[j] + cons.extents[k]))
            order.append(kept.index(k))
        else:
            index.append(offs[j])
    view = red.transpose(order) if order else red.reshape(())
    if not order:  # one element (every index constant, e.g. an unrolled tap of a weight): no view to write into
        last[tuple(index)] = max(last[tuple(index)], view)
        return
    target = last[tuple(index)]
    np.maximum(target, view, out=target)


def _write_times(plan: StagePlan, dtype=np.int64):
    return _times(plan, dtype)


def _reads_after_write_proven(prod: StagePlan, cons: StagePlan, matrix, offs, divs=None) -> bool:
    """True when every read of a translation port provably comes at or after its value's write.

    For ``q = p[used] + offs`` and affine schedules, ``t_write(q) - t_read(p)`` is affine in ``p``; its
    maximum over the consumer's box is at a corner, so one number decides all reads. False when the
    port is not a translation, a schedule packs lanes, or the maximum is positive (some read may come
    early): the caller then checks every read, which names the first early one."""
    used = _translation(matrix, len(cons.extents), divs)
    sp, sc = prod.schedule, cons.schedule
    if used is None or sp.lanes != 1 or sc.lanes != 1 or sp.floors or sc.floors:
        return False
    coef = [-s for s in sc.strides]
    const = sp.offset - sc.offset
    for j, s in enumerate(sp.strides):
        const += s * offs[j]
        if j in used:
            coef[used[j]] += s
    worst = const + sum(max(0, c) * (e - 1) for c, e in zip(coef, cons.extents))
    return worst <= 0


def _translation(matrix, nd_c, divs=None):
    """{producer dim: consumer dim} when every producer index is a consumer Var plus a constant."""
    if divs and set(divs) != {1}:
        return None
    used = {}
    for j, row in enumerate(matrix):
        nz = [(k, a) for k, a in enumerate(row) if a]
        if len(nz) > 1 or (nz and nz[0][1] != 1) or (nz and nz[0][0] in used.values()):
            return None
        if nz:
            used[j] = nz[0][0]
    return used


def _gather(array, prod, cons, matrix, offs, idx, divs=None):
    """Producer values at the index each consumer point reads (slices when the access is a translation)."""
    used = _translation(matrix, len(cons.extents), divs)
    if used is None:
        return array[tuple(reversed(idx))]
    nd_c, nd_p = len(cons.extents), len(prod.extents)
    index, src_dims = [], []
    for j in reversed(range(nd_p)):
        if j in used:
            index.append(slice(offs[j], offs[j] + cons.extents[used[j]]))
            src_dims.append(used[j])
        else:
            index.append(offs[j])
    sub = array[tuple(index)]
    # axes of sub follow src_dims; put them in consumer storage order, with 1s for unused consumer dims
    target = sorted(src_dims, reverse=True)
    sub = sub.transpose([src_dims.index(k) for k in target]) if len(src_dims) > 1 else sub
    shape = [cons.extents[k] if k in src_dims else 1 for k in reversed(range(nd_c))]
    return sub.reshape(shape)


def _check_reads_after_write(prod, cons, matrix, offs, tc, idx, t_write, stats, divs=None):
    t_read_of = _gather(t_write, prod, cons, matrix, offs, idx, divs)
    early = t_read_of > tc
    if stats is not None:
        stats.reads_checked += tc.size
    if early.any():
        early = np.broadcast_to(early, tc.shape)
        t_read_of = np.broadcast_to(t_read_of, tc.shape)
        pos = np.unravel_index(np.argmin(np.where(early, tc, np.iinfo(tc.dtype).max)), tc.shape)
        p = tuple(int(i) for i in reversed(pos))
        q = tuple(int(ix[pos]) for ix in idx)
        raise LoomError(f"'{cons.name}' at {p} reads {prod.name}{q} at cycle {int(tc[pos])} but it is written "
                        f"at cycle {int(t_read_of[pos])} (read before write)", where=f"buffer '{prod.name}'")


class _Named:
    def __init__(self, name):
        self.name = name


def _check_accumulator(buf, capacity, stats):
    """Partial sums: iteration i + 1 of a point reads back what iteration i wrote, within the capacity."""
    tw, tr = accumulator_times(buf)
    if stats is not None:
        stats.reads_checked += tr.size
    early = tr < tw
    if early.any():
        pos = np.unravel_index(np.argmax(early), early.shape)
        q = tuple(int(i) for i in reversed(pos))
        raise LoomError(f"iteration {q[-1] + 1} of {buf.write_ports[0].stage}{q[:-1]} reads its partial sum at cycle "
                        f"{int(tr[pos])} but iteration {q[-1]} writes it at cycle {int(tw[pos])} "
                        "(read before write)", where=f"buffer '{buf.name}'")
    _check_capacity(_Named(buf.name), tw, tr, capacity)


def _write_histogram(schedule, extents, base, span):
    """Writes per cycle without reading the write cycles, when the schedule gives every point its own cycle.

    With lanes 1 and positive strides that, sorted, each exceed the span of the dims below them (a
    mixed-radix numbering), ``t(p)`` is injective: the histogram is 1 exactly on a strided box of cycles,
    filled through a strided view. Otherwise None (the caller counts the cycles)."""
    if schedule is None or schedule.lanes != 1 or schedule.floors or len(schedule.strides) != len(extents):
        return None
    dims = sorted((s, e) for s, e in zip(schedule.strides, extents) if e > 1)
    reach = 0
    for s, e in dims:
        if s <= reach:
            return None
        reach += s * (e - 1)
    start = schedule.offset - base
    if start < 0 or start + reach >= span:
        return None
    hist = np.zeros(span, np.intp)
    item = hist.itemsize
    view = np.lib.stride_tricks.as_strided(hist[start:], shape=[e for _, e in dims] or [1],
                                           strides=[s * item for s, _ in dims] or [item])
    view[...] = 1
    return hist


def _live_per_cycle(prod, t_write, last, base: int, span: int):
    """Values held after each cycle from ``base`` on (``span`` cycles): one counter per cycle."""
    # no mask of held values: one read at its write cycle adds and removes itself at the same cycle
    live = _write_histogram(getattr(prod, "schedule", None), getattr(prod, "extents", None), base, span)
    if live is None:
        live = np.bincount(np.subtract(t_write.ravel(), base, dtype=np.intp), minlength=span)
    live -= np.bincount(np.subtract(last.ravel(), base, dtype=np.intp), minlength=span)
    return np.cumsum(live, out=live)


def _live_at_events(t_write, last):
    """(cycles, values held after each): only the cycles where a value is written or last read, the count
    changing nowhere else."""
    events = np.concatenate([t_write.ravel(), last.ravel()])
    cycles, at = np.unique(events, return_inverse=True)
    n = t_write.size
    delta = np.bincount(at[:n], minlength=cycles.size) - np.bincount(at[n:], minlength=cycles.size)
    return cycles, np.cumsum(delta)


def _check_capacity(prod: StagePlan, t_write, last, capacity):
    """Values stay from their write to their last read; more than ``capacity`` at once evicts one."""
    base = int(t_write.min())
    span = int(last.max()) - base + 1
    if span <= 8 * t_write.size + 4096:
        cycles, live = None, _live_per_cycle(prod, t_write, last, base, span)
    else:  # cycles far apart (an edited schedule with a huge stride): a counter per cycle would not fit in memory
        cycles, live = _live_at_events(t_write, last)
    over = np.nonzero(live > capacity)[0]
    if not over.size:
        return
    held = last > t_write
    t_over = int(over[0]) + base if cycles is None else int(cycles[over[0]])
    # the victim: of the values live after cycle t_over, the one needed soonest is the one lost
    live_mask = held & (t_write <= t_over) & (last > t_over)
    cand = np.where(live_mask, last, np.iinfo(last.dtype).max)
    pos = np.unravel_index(np.argmin(cand), cand.shape)
    q = tuple(int(i) for i in reversed(pos))
    raise LoomError(f"{prod.name}{q}, written at cycle {int(t_write[pos])}, is read at cycle {int(last[pos])} "
                    f"but was evicted at cycle {t_over}, when {int(live[over[0]])} values had to be held in a "
                    f"buffer of capacity {capacity} (read after eviction)", where=f"buffer '{prod.name}'")
