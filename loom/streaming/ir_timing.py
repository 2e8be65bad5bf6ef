"""The timing a (possibly hand-edited) ``ubuf`` IR states, as the design the simulator checks.

``timed_design(design, ir)`` takes the design the IR was printed from and returns it with every timing fact
the IR holds: buffer capacities, each stage's write schedule (its ``in`` port) and kernel latency, and the
read ports' access maps. The ports that follow from those (a stage's read ports fire on its iteration's
cycles: its write schedule less its reductions in time and its latency; the accumulators' ports; the host's
read of the output) are rebuilt the way the scheduler builds them and must then equal the IR's, else a
``LoomError`` names the port and both schedules: the IR is one design, so an edit that contradicts another
part of it is refused rather than half-applied. The fields that follow from the pipeline (domains, types,
the ports' stages, ...) are checked before, by ``ir_consistency.check_fixed_fields``. A design the IR does not
change comes back as it is.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from loom.dialects.ubuf import BufferOp
from loom.errors import LoomError

from .extract import accumulator_name
from .ir_reader import IrDesign, _frac
from .scheduler import Design, _accumulator, _buffers
from .unified_buffer import CycleSchedule, Port


def _isl(text: str, where: str):
    try:
        return isl.Map(text) if "->" in text else isl.Set(text)
    except isl.Error as e:
        raise LoomError(f"{text!r} is not valid isl ({e})", where=where) from None


class _NotCanonical(Exception):
    """isl printed the schedule in another form than offset + sum s_k p_k + sum c floor(p_k / m)."""


def _ir_schedule(op, port: Port, lanes: int, where: str) -> CycleSchedule:
    """The IR port's schedule as offset + sum s_k p_k + sum c floor(p_k / m) (dim 0 by lanes when ``lanes`` > 1)."""
    m = _isl(op.schedule.data, where)
    pieces = m.as_pw_multi_aff().get_pw_aff(0).get_pieces() if m.dim(isl.dim_type.out) == 1 else []
    form = "a cycle t = offset + sum s_k p_k + sum c floor(p_k / m)"
    if len(pieces) != 1:
        raise LoomError(f"schedule {op.schedule.data!r} is not {form}", where=where)
    (_, aff), = pieces
    try:
        offset, strides, floors = _decoded(aff, len(port.extents))
    except _NotCanonical:  # isl rewrites 32y + 448 floor(y/2) as 256y - 224 (y mod 2): read it off its values
        offset, strides, floors = _fitted(aff, port)
        candidate = replace(port, schedule=CycleSchedule(offset, tuple(strides), 1, tuple(floors)))
        if not candidate.schedule_map.is_equal(m.intersect_domain(port.domain)):
            raise LoomError(f"schedule {op.schedule.data!r} is not {form}", where=where) from None
    if lanes > 1:  # dim 0 advances a step per `lanes` points: its stride sits on floor(x / lanes)
        lane = next((f for f in floors if f[0] == 0 and f[1] == lanes), None)
        if lane is None or strides[0]:
            raise LoomError(f"schedule {op.schedule.data!r} must step dim 0 by floor({port.loop_names()[0]}/{lanes}) "
                            f"(the design's {lanes} lanes)", where=where)
        floors.remove(lane)
        strides[0] = lane[2]
    return CycleSchedule(offset, tuple(strides), lanes, tuple(floors))


def _decoded(aff, n: int):
    """(offset, strides, floors) read off the affine form as isl holds it."""
    def integer(v: isl.Val) -> int:  # exact: get_num_si wraps beyond int64 (a stride 2**64 + 8 read as 8)
        if v.get_den_val().to_python() != 1:
            raise _NotCanonical
        return v.to_python()

    strides = [integer(aff.get_coefficient_val(isl.dim_type.in_, k)) for k in range(n)]
    floors = []
    for i in range(aff.dim(isl.dim_type.div)):
        c = integer(aff.get_coefficient_val(isl.dim_type.div, i))
        if not c:
            continue
        inner = aff.get_div(i)
        coef = [inner.get_coefficient_val(isl.dim_type.in_, k) for k in range(n)]
        used = [k for k, v in enumerate(coef) if not v.is_zero()]
        if len(used) != 1 or not inner.get_constant_val().is_zero() or _frac(coef[used[0]]).numerator != 1:
            raise _NotCanonical
        floors.append((used[0], _frac(coef[used[0]]).denominator, c))
    return integer(aff.get_constant_val()), strides, floors


def _fitted(aff, port: Port):
    """(offset, strides, floors) fitted to the schedule's values along each loop from the origin: per loop a
    stride s and at most one floor term c floor(p / m) (steps of s, and of s + c where p + 1 is a multiple of m).
    The caller checks the fit against the whole map."""
    space = aff.get_domain_space()

    def at(k, v):
        point = isl.Point.zero(space)
        if v:
            point = point.set_coordinate_val(isl.dim_type.set, k, isl.Val.int_from_si(space.get_ctx(), v))
        return aff.eval(point).to_python()

    offset, strides, floors = at(0, 0), [], []
    for k, extent in enumerate(port.extents):
        values = [at(k, v) for v in range(min(extent, 4096))]
        steps = [b - a for a, b in zip(values, values[1:])]
        s = steps[0] if steps else 0
        jump = next((q for q, d in enumerate(steps) if d != s), None)
        strides.append(s)
        if jump is not None:
            floors.append((k, jump + 1, steps[jump] - s))
    return offset, strides, floors


def _same(ir_text: str, ir_domain: str, port: Port, where: str) -> bool:
    try:
        m = _isl(ir_text, where).intersect_domain(_isl(ir_domain, where))
        return m.is_equal(port.schedule_map)
    except isl.Error:  # spaces differ: a renamed tuple or another loop count
        raise LoomError(f"schedule {ir_text!r} and domain {ir_domain!r} are not over the same loops as the "
                        f"port's {port.isl_space_name()}[{', '.join(port.loop_names())}]", where=where) from None


def _port_ops(op: BufferOp) -> dict:
    return {p.port.data: p for p in op.ports()}


def _norm(read) -> tuple:
    producer, consumer, matrix, offs, divs = read
    return producer, consumer, tuple(map(tuple, matrix)), tuple(offs), tuple(divs)


def timed_design(design: Design, ir: IrDesign) -> Design:
    """``design`` with the capacities, write schedules, kernel latencies and read accesses ``ir`` states."""
    bufs = dict(ir.buffers)
    expected = list(design.buffers) + list(design.accumulators)
    extra = sorted(set(bufs) - set(expected))
    missing = [n for n in expected if n not in bufs]
    if missing or extra:
        raise LoomError(f"the ubuf IR's buffers differ from the design's (missing: {missing or 'none'}; not in the "
                        f"design: {extra or 'none'}); buffers follow from the pipeline", where="ubuf.design")
    plans = {}
    for name, plan in design.stages.items():
        where = f"ubuf.port 'in' of @{name}"
        pop = _port_ops(bufs[name]).get("in")
        if pop is None:
            raise LoomError("the buffer has no write port 'in'", where=f"ubuf.buffer @{name}")
        port = design.buffers[name].write_ports[0]
        if not _same(pop.schedule.data, pop.domain.data, port, where):
            plan = replace(plan, schedule=_ir_schedule(pop, port, plan.schedule.lanes, where))
        if plan.node.kind != "stream":
            k = ir.kernel(name)
            if k.offset.value.data != plan.offset:
                raise LoomError(f"the kernel's offset {k.offset.value.data} differs from the cycle its write port "
                                f"'in' of @{name} starts at ({plan.offset}); move both",
                                where=f"ubuf.kernel '{name}'")
            if k.latency.value.data != plan.latency:
                if k.latency.value.data < 0:
                    raise LoomError(f"latency {k.latency.value.data} is negative", where=f"ubuf.kernel '{name}'")
                plan = replace(plan, latency=k.latency.value.data)
        plans[name] = plan
    counts, reads = {}, []
    for producer, consumer, matrix, offs, divs in design.reads:
        k = counts.get((producer, consumer), 0)
        counts[(producer, consumer)] = k + 1
        reads.append((producer, consumer, *ir.access(producer, f"{consumer}#{k}")))
    unchanged = all(plans[n] is design.stages[n] for n in plans) and \
        all(_norm(r) == _norm(d) for r, d in zip(reads, design.reads))
    if unchanged:
        buffers, accumulators = design.buffers, design.accumulators
    else:
        buffers = _buffers(design.acc, plans, reads)
        accumulators = {accumulator_name(n): _accumulator(p) for n, p in plans.items() if p.red_extents}
    for name, b in list(buffers.items()) + list(accumulators.items()):
        ops = _port_ops(bufs[name])
        for port in b.ports:
            where = f"ubuf.port '{port.name}' of @{name}"
            pop = ops.get(port.name)
            if pop is None:
                raise LoomError("the port is missing from the IR", where=where)
            if not _same(pop.schedule.data, pop.domain.data, port, where):
                raise LoomError(f"the port fires on {pop.schedule.data!r} but its stage '{port.stage}' "
                                f"{'writes' if port.direction == 'in' else 'reads'} on [{port.schedule_text()}] "
                                "(from the stage's write port 'in', less its reductions in time and its kernel "
                                "latency): edit a stage's write port, read ports and kernel offset together",
                                where=where)
    latency = ir.op.latency.value.data
    out_plan = plans[design.acc.func.name]
    after_last = int(out_plan.schedule.times([e - 1 for e in out_plan.extents])) + 1  # as Design.latency
    if latency != after_last:
        raise LoomError(f"latency {latency} differs from the cycle after the output's last write ({after_last}, "
                        f"from its write port 'in' of @{design.acc.func.name})", where="ubuf.design")
    caps = {n: bufs[n].capacity.value.data for n in expected}
    if all(b.capacity == caps[n] for n, b in list(design.buffers.items()) + list(design.accumulators.items())) \
            and unchanged:
        return design
    buffers = {n: replace(b, capacity=caps[n]) for n, b in buffers.items()}
    accumulators = {n: replace(b, capacity=caps[n]) for n, b in accumulators.items()}
    out = Design(design.acc, design.size, design.origin, design.regions, plans, buffers, reads, accumulators)
    out.sharing = design.sharing
    return out


__all__ = ["timed_design"]
