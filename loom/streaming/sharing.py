"""Compute sharing (thesis §5): identical kernels time-multiplexed on one hardware kernel.

``root.compute_share_root(level)`` and ``f.compute_share(root)`` (``loom.frontends.pipeline``)
form a share group; ``share_group(acc)`` reads it off the extracted accelerator and checks
what the thesis requires: the members are stages of this accelerator, form a chain
(each member reads only the previous one) and have identical kernels (their ``ubuf.kernel``
regions match op for op). ``build_shared_design`` schedules it (thesis §5.2):

- pixel interleaving (``_pixel_schedule``) streams a pixel every p cycles (the smallest p that
  works) and fires each member a fixed number of cycles after its window completes, in a
  residue class of the cycles no other member's meets (a pyramid's levels on the unslowed
  stream, cascade's two stages on even and odd cycles);
- line and block: the coarse-grain loops of every stage are fused and split so each coarse
  iteration computes one row of the last member (``line``, a stage reducing by 2 per level
  computes 2, 4, ... rows per iteration: the split of Code 5.5) or the whole block (``block``);
- in every iteration each member gets one contiguous slot: the first member fires as
  its window arrives from the host stream (its slot is the stream's), every later member
  sweeps its producer's rows (the shared stencil registers are refilled each row, so a
  row of a 3x3 stage over a 62-wide producer takes 62 cycles); with line interleaving a
  later member takes the first idle run of the first member's slot long enough for it
  (gap filling, §5.4), else a slot after the others; the period is the sum of the slots
  that do not fit in gaps, and the host stream waits for it;
- each member starts the fewest coarse iterations late that let every value it reads be
  written first (the stencil delay at coarse granularity), dedicated stages before and
  after the group fire as soon as their inputs arrive.

Capacities are the exact live values of these schedules. ``design.sharing`` (a
``SharedKernel``) records the period and slots; ``to_ubuf`` writes it as ``ubuf.share``
and the simulator checks from it that no two members fire in one cycle.
Not modelled: kernels with latency, several pixels per cycle and reductions iterated in time.
These rules give Table 5.1's cascade line (64 rows of 64 + 62 cycles) and block (4096 + 60 rows of 62)
as the thesis derives them; docs/pipelines.md, "Compute sharing", derives every cell by hand and
shows why loom does not meet the others (the pixel rows' memory, the pyramid's pixel, line
and block latencies): each needs a rule that breaks another cell or that the text does not give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from loom.dialects.ubuf import INTERLEAVINGS
from loom.errors import LoomError

from .extract import Accelerator
from .live_count import sorted_unique
from .unified_buffer import CycleSchedule


@dataclass
class ShareGroup:
    root: str
    members: list  # stage names, producers first (the root last)
    interleave: str  # "pixel" | "line" | "block"


@dataclass
class SharedKernel:
    """The time-multiplexed hardware kernel of a design: its stages, interleaving, period and slots."""

    name: str
    stages: list
    interleave: str
    period: int  # cycles of one coarse iteration (0: one block, no repetition)
    slots: dict = field(default_factory=dict)  # stage -> [(start within the period, length), ...]


def _where(f) -> str:
    return f"Func '{f.name}'"


def share_group(acc: Accelerator) -> ShareGroup | None:
    """The accelerator's share group (None without compute_share), checked."""
    stage_funcs = {n.source.name: n.source for n in acc.stages.values() if n.kind == "compute"}
    roots, members = [], {}
    for f in acc.pipe.funcs:
        s = f.schedule
        if s.share_level is not None:
            roots.append(f)
        elif s.share_root is not None:
            members[f.name] = f
    if not roots and not members:
        return None
    if not roots:
        f = next(iter(members.values()))
        root = f.schedule.share_root
        raise LoomError(f"compute_share({root.name}) names a Func that is not the root of a share group; call "
                        f"{root.name}.compute_share_root(level) (level: its x, its y or {acc.xo})", where=_where(f),
                        construct="compute_share", **_location(f, "compute_share"))
    if len(roots) != 1:
        names = ", ".join(f.name for f in roots) or "none"
        raise LoomError(f"compute sharing needs exactly one compute_share_root per accelerator, found {names}",
                        where=f"Func '{acc.func.name}'", construct="compute_share_root")
    root = roots[0]
    _refuse_members_outside_the_pipeline(acc, root)
    for f in [root, *members.values()]:
        if f.name not in stage_funcs:
            raise LoomError(f"shares a kernel but is not a buffered stage of the accelerator; schedule it "
                            f"compute_at({acc.func.name}, {acc.xo})", where=_where(f), construct="compute_share")
    for f in members.values():
        if f.schedule.share_root is not root:
            raise LoomError(f"compute_share({f.schedule.share_root.name}) names a Func that is not the "
                            f"share group's root '{root.name}'", where=_where(f), construct="compute_share")
    order = [n for n in acc.stages if n in members or n == root.name]
    if len(order) < 2:
        raise LoomError("compute_share_root makes a share group, but no other stage of the accelerator calls "
                        f"compute_share({root.name}); a shared kernel needs at least 2 stages",
                        where=_where(root), construct="compute_share_root", **_location(root, "compute_share_root"))
    if order[-1] != root.name:
        raise LoomError(f"the root of a share group must be its last stage (it consumes the others); "
                        f"'{order[-1]}' comes after it", where=_where(root), construct="compute_share_root")
    return ShareGroup(root.name, order, _interleaving(acc, root))


def other_rate_error(acc: Accelerator, fast) -> LoomError:
    """The refusal of a stage ``fast`` computing another number of pixels per cycle than the output in an
    accelerator with a share group (the shared schedule is one pixel per cycle on one grid), naming the
    ``unroll(x, n)`` call that sets the faster rate and what works instead."""
    node = fast if fast.lanes > acc.lanes else acc.stages[acc.func.name]
    f = node.source
    call = f"{f.name}.unroll({node.dims[0]}, {node.lanes})"
    filename, line = f.pure.schedule.locations.get("unroll", (None, None))
    what = ("an input memory at its own rate" if fast.own_rate else
            "a producer of an up- or down-sampling at another rate than its reader")
    return LoomError(f"compute sharing schedules every stage at one pixel per cycle on the shared kernel's grid, "
                     f"and {call} runs '{f.name}' at {node.lanes} ({what}); drop that unroll (the shared design then "
                     "streams one pixel per cycle), or keep it and drop compute_share_root/compute_share",
                     where=f"Func '{fast.name}'", construct="unroll", filename=filename, line=line)


def _refuse_members_outside_the_pipeline(acc: Accelerator, root) -> None:
    """A Func that called compute_share(root) but that the output does not read would share nothing; it is
    refused rather than dropped from the group (it usually means the wrong Func was named)."""
    in_pipeline = {id(f) for f in acc.pipe.funcs}
    for f in root.schedule.share_callers:
        if f.schedule.share_root is root and id(f) not in in_pipeline:
            raise LoomError(f"calls compute_share({root.name}), but the output '{acc.pipe.output.name}' does not "
                            f"read it, so it has no stage to share '{root.name}''s kernel with; remove the call or "
                            "share a Func of the pipeline", where=_where(f), construct="compute_share",
                            **_location(f, "compute_share"))


def _interleaving(acc: Accelerator, root) -> str:
    """The interleaving ``compute_share_root(level)`` names: the root's x (pixel), its y (line) or the accelerator's
    tile loop (block). Any other loop (a loop inside the tile, another tile loop, a channel) has no interleaving."""
    level = root.schedule.share_level
    dims = [d.name for d in root.dims]
    if level == dims[0]:
        return "pixel"
    if len(dims) > 1 and level == dims[1]:
        return "line"
    if level == acc.xo:
        return "block"
    choices = f"by pixel compute_share_root({dims[0]})" + (f", by line compute_share_root({dims[1]})" if len(dims) > 1
                                                          else "")
    raise LoomError(f"compute_share_root({level}) names no interleaving; share {choices} ('{root.name}''s Vars) or "
                    f"by block compute_share_root({acc.xo}) (the loop '{acc.func.name}' runs the accelerator at)",
                    where=_where(root), construct="compute_share_root", **_location(root, "compute_share_root"))


def _location(f, primitive) -> dict:
    """Where the user called ``primitive`` on ``f`` (LoomError's filename and line)."""
    filename, line = f.schedule.locations.get(primitive, (None, None))
    return {"filename": filename, "line": line}


def kernel_signature(region) -> tuple:
    """The ops of a kernel region with operands numbered by position: equal for identical kernels."""
    ids = {}
    block = region.block
    for i, a in enumerate(block.args):
        ids[a] = ("arg", i)
    sig = []
    for k, op in enumerate(block.ops):
        for j, r in enumerate(op.results):
            ids[r] = ("op", k, j)
        props = tuple(sorted((n, str(v)) for n, v in op.properties.items()))
        attrs = tuple(sorted((n, str(v)) for n, v in op.attributes.items()))
        sig.append((op.name, tuple(ids.get(o, "?") for o in op.operands), props, attrs,
                    tuple(str(r.type) for r in op.results)))
    return tuple(sig)


def check_identical_kernels(acc: Accelerator, group: ShareGroup, regions: dict):
    """The thesis shares exactly matching kernels only: compare the members' ``ubuf.kernel`` bodies."""
    from .kernel_ir import constant_contents, kernel_regions

    tables = constant_contents(acc, regions)
    ref = None
    for name in group.members:
        node = acc.stages[name]
        init, update = kernel_regions(acc, node, tables)
        if update.blocks:
            raise LoomError("compute sharing of a stage that iterates a reduction in time is not supported; "
                            "unroll its reduction", where=f"Func '{name}'", construct="compute_share")
        sig = (len(node.reads), kernel_signature(init))
        if ref is None:
            ref = (name, sig)
        elif sig != ref[1]:
            raise LoomError(f"its kernel differs from '{ref[0]}''s; compute_share time-multiplexes identical "
                            "kernels only (thesis §5: exact matching), e.g. give every level the same "
                            "weights, normalisation and types", where=f"Func '{name}'", construct="compute_share")


# schedules ------------------------------------------------------------------
# A schedule over (x, y) is (D, sx, R, F, m): t = D + sx*x + R*y + F*floor(y/m) (m = 1: no floor term).

def _cycle(sched) -> CycleSchedule:
    d, sx, r, f, m = sched
    floors = ((1, m, f),) if m > 1 and f else ()
    return CycleSchedule(int(d), (int(sx), int(r)), 1, floors)


def _in_dims(sched: CycleSchedule, plan) -> CycleSchedule:
    """An (x, y) schedule over all of the stage's dims: a stream's channels, delivered in space, get stride 0."""
    if len(plan.extents) == 2 or len(plan.time_dims) != 2:
        return sched
    strides = [0] * len(plan.extents)
    for k, d in enumerate(plan.time_dims):
        strides[d] = sched.strides[k]
    floors = tuple((plan.time_dims[k], m, c) for k, m, c in sched.floors)
    return CycleSchedule(sched.offset, tuple(strides), sched.lanes, floors)


def _tied(prod, read, name: str):
    """Stage ``name`` firing as soon as its last input arrives from a producer on schedule ``prod``."""
    d, sx, r, f, m = prod
    (ax, bx), (ay, by) = read
    if m == 1:
        return (d + sx * bx + r * by, sx * ax, r * ay, 0, 1)
    if m % ay or not 0 <= by < ay:
        raise LoomError(f"line interleaving computes its producer {m} rows per coarse iteration, and this stage's "
                        f"window reads producer row {ay}y + {by}, beyond the {ay} row(s) of its own step (a window taller than "
                        "its stride); interleave by pixel or block", where=f"Func '{name}'",
                        construct="compute_share")
    m2 = m // ay
    if m2 == 1:  # floor(y / 1) = y
        return (d + sx * bx + r * by, sx * ax, r * ay + f, 0, 1)
    return (d + sx * bx + r * by, sx * ax, r * ay, f, m2)


def _shift(sched, cycles):
    d, sx, r, f, m = sched
    return (d + cycles, sx, r, f, m)


class _Chain:
    """The accelerator as a chain host stream -> dedicated stages -> members -> dedicated stages."""

    def __init__(self, acc: Accelerator, base, group: ShareGroup):
        self.acc, self.base, self.group = acc, base, group
        streams = [n for n, node in acc.stages.items() if node.kind == "stream"]
        if len(streams) != 1:
            raise LoomError(f"compute sharing needs one host stream into the accelerator, found {len(streams)}",
                            where=f"Func '{acc.func.name}'", construct="compute_share")
        self.stream = streams[0]
        _check_chain(base.reads, base.stages, group)
        self.reads = {}  # consumer -> (producer, ((ax, bx_max), (ay, by_max)))
        self.offsets = {}  # consumer -> [(bx, by) of each read]
        for name, plan in base.stages.items():
            if plan.node.kind == "stream":
                continue  # a host stream follows the stages' rate
            why = (f"it computes {plan.schedule.lanes} pixels per cycle (rate or unroll(x, n))"
                   if plan.schedule.lanes != 1 else "it iterates a reduction in time" if plan.red_extents
                   else _not_two_dimensional(plan, name in group.members))
            if why:
                raise LoomError(f"compute sharing schedules two-dimensional stages at one pixel per cycle without "
                                f"reductions iterated in time, and {why}", where=f"Func '{name}'",
                                construct="compute_share")
        for producer, consumer, matrix, offs, divs in base.reads:
            if set(divs) != {1}:
                raise self._up_sampling_error(producer, consumer, divs)
            (ax, bx), (ay, by) = self._xy_read(producer, consumer, matrix, offs)
            scale = [ax, ay]
            self.offsets.setdefault(consumer, []).append((bx, by))
            prev = self.reads.get(consumer)
            if prev is not None and prev[0] != producer:
                raise LoomError(f"reads both '{prev[0]}' and '{producer}'; compute sharing schedules a chain of "
                                "stages, each reading one producer", where=f"Func '{consumer}'",
                                construct="compute_share")
            if prev is not None and tuple(a for a, _ in prev[1]) != tuple(scale):
                raise LoomError(f"reads '{producer}' at different scales", where=f"Func '{consumer}'",
                                construct="compute_share")
            bmax = tuple(max(o, prev[1][j][1]) if prev else o for j, o in enumerate((bx, by)))
            self.reads[consumer] = (producer, tuple(zip(scale, bmax)))
        self.order = list(base.stages)
        members = group.members
        first = self.order.index(members[0])
        if self.order[first:first + len(members)] != members:
            raise LoomError("the stages of a share group must follow each other in the pipeline",
                            where=f"Func '{group.root}'", construct="compute_share")

    def _up_sampling_error(self, producer, consumer, divs) -> LoomError:
        """A read through ``x / k`` (up-sampling) anywhere in the accelerator: a stage firing k times per producer
        value has no place in the shared schedule, which streams the input at most once per cycle."""
        root = self.acc.stages[self.group.root].source
        call = f"{root.name}.compute_share_root({root.schedule.share_level})"
        ks = " and ".join(f"/ {d}" for d in divs if d != 1)
        return LoomError(f"reads '{producer}' up-sampled ({ks}); compute sharing ({call}) schedules stages on the "
                         "host stream's grid or coarser (down-sampling) only: drop compute_share_root/compute_share (the "
                         "design without sharing runs it, a kernel per stage), or up-sample outside the accelerator",
                         where=f"Func '{consumer}'", construct="compute_share", **_location(root, "compute_share_root"))

    def _xy_read(self, producer, consumer, matrix, offs):
        """((ax, bx), (ay, by)): the read takes the producer's x at ax x + bx and its y at ay y + by, x and y being
        each stage's dimensions iterated in time (channels first or last). A producer dimension computed in space
        (a channel) may be read at a constant or by the consumer's own channels: it does not move the schedule."""
        px, cx = self._time_dims(producer), self._time_dims(consumer)
        for j, row in enumerate(matrix):
            if j not in px and any(row[k] for k in cx):
                raise LoomError(f"reads a channel of '{producer}' at an index that moves with x or y; compute sharing "
                                "needs every read to scale and shift x and y", where=f"Func '{consumer}'",
                                construct="compute_share")
        out = []
        for j, k in zip(px, cx):
            row = matrix[j]
            if any(row[i] for i in cx if i != k) or row[k] <= 0:
                raise LoomError(f"reads '{producer}' at a transposed or mirrored index; compute sharing "
                                "needs every read to scale and shift x and y", where=f"Func '{consumer}'",
                                construct="compute_share")
            out.append((row[k], offs[j]))
        return tuple(out)

    def _time_dims(self, name) -> tuple:
        return self.base.stages[name].time_dims or (0, 1)

    def extents(self, name):
        """The extents of the stage's x and y (a stream's channels, delivered in space, left out)."""
        plan = self.base.stages[name]
        return tuple(plan.extents[d] for d in plan.time_dims) if plan.time_dims else plan.extents

    def producer(self, name):
        return self.reads[name][0]

    def scale(self, name):
        return tuple(a for a, _ in self.reads[name][1])


def _not_two_dimensional(plan, member: bool) -> str:
    """Why a stage is not an x, y stage compute sharing can schedule ('' when it is one). A stage outside the
    group may compute channels in space (its x, y schedule leaves them out); a member computes one point a firing."""
    if len(plan.time_dims) == 2 and (len(plan.extents) == 2 or not member):
        return ""
    dims = [d.name for d in plan.node.source.dims]
    space = [d for k, d in enumerate(dims) if k not in plan.time_dims]
    if len(plan.time_dims) == 2 and space:
        return (f"it computes {', '.join(space)} in space (unrolled); a shared kernel computes one x, y point of one "
                f"member a firing: share stages over x and y only (channels may be combined before the group, e.g. "
                f"a luma[x, y] of hw[x, y, c], or computed after it)")
    return "it is not two-dimensional"


def _check_chain(reads, stages, group: ShareGroup):
    """Each member after the first reads the member before it and nothing else (thesis §5: a chain of stages on one
    kernel); checked first, so stages read side by side (sobel's gx and gy) are named as members, not by their
    consumer."""
    producers = {}
    for producer, consumer, *_ in reads:
        producers.setdefault(consumer, set()).add(producer)
    for a, b in zip(group.members, group.members[1:]):
        if producers.get(b, set()) != {a}:
            got = sorted(producers.get(b, ()))
            copies = [p for p in got if _copied(stages, p) == a]
            if copies:
                why = (f"'{copies[0]}' is a copy of '{a}' ({a}.in_()); the shared kernel reads its members' own "
                       "buffers: drop the copy stage")
            elif producers.get(a, set()) & set(got):
                why = "stages read side by side, like two gradients of one input, each need their own kernel"
            else:
                why = "share consecutive stages of one chain only"
            raise LoomError(f"reads {', '.join(repr(p) for p in got) or 'no stage'}, not only the previous member "
                            f"'{a}' of its share group; compute sharing time-multiplexes a chain of stages, each "
                            f"member reading the one before ({why})", where=f"Func '{b}'", construct="compute_share")


def _copied(stages, name):
    """The name of the Func stage ``name`` is an in_() copy of (None if it is not a copy)."""
    wrapped = getattr(stages[name].node.source, "wrapped", None) if name in stages else None
    return getattr(wrapped, "name", None)


def _times(sched, extents):
    """Cycle of every point (numpy, storage order y, x)."""
    return np.asarray(_cycle(sched).times([np.arange(extents[0])[None, :], np.arange(extents[1])[:, None]]))


def _late_reads(chain: _Chain, name, sched, scheds) -> int:
    """How many cycles too early the stage reads some value (<= 0: every read comes after its write)."""
    prod, ((ax, bx), (ay, by)) = chain.reads[name]
    ext = chain.extents(name)
    tc = _times(sched, ext)
    worst = None
    for ox, oy in chain.offsets[name]:
        xs = ax * np.arange(ext[0]) + ox
        ys = ay * np.arange(ext[1]) + oy
        tp = _cycle(scheds[prod]).times([xs[None, :], ys[:, None]])
        late = int(np.max(tp - tc))
        worst = late if worst is None else max(worst, late)
    return worst


def _with_coarse_delay(chain, name, make, scheds, step_limit=1 << 16) -> tuple:
    """``make(dy)`` for the smallest dy >= 0 whose reads all come after their writes."""
    for dy in range(step_limit):
        s = make(dy)
        if _late_reads(chain, name, s, scheds) <= 0:
            return s
    raise LoomError("no coarse delay makes the shared schedule read after write", where=f"Func '{name}'",
                    construct="compute_share")


def _schedule(chain: _Chain, group: ShareGroup):
    members = group.members
    scheds, slots = {}, {}
    xi, yi = chain.extents(chain.stream)
    stream_cycles = xi * yi
    mode = group.interleave
    pre = chain.order[1:chain.order.index(members[0])]
    post = chain.order[chain.order.index(members[-1]) + 1:]
    # rows of each member per coarse iteration (line): 1 for the last member, times each level's y scale
    rows = {members[-1]: 1}
    for a, b in zip(reversed(members[:-1]), reversed(members[1:])):
        rows[a] = rows[b] * chain.scale(b)[1]
    head = members[0]
    stream_rows = _stream_rows(chain, head, rows[head])
    if mode == "pixel":
        return _pixel_schedule(chain, group, pre, post)
    # slot lengths: the head's slot is the stream's share of one iteration; later members sweep producer rows
    if mode == "line":
        lengths = {head: stream_rows * xi}
        for n in members[1:]:
            lengths[n] = rows[n] * chain.extents(chain.producer(n))[0]
    else:
        lengths = {head: stream_cycles}
        for n in members[1:]:
            lengths[n] = chain.extents(n)[1] * chain.extents(chain.producer(n))[0]
    starts, t = {}, 0
    if mode == "line":  # gap filling: later members go into the head's idle cycles where a slot fits
        starts, t = _fill_gaps(chain, pre, head, members, lengths, stream_rows, xi)
    else:
        for n in members:
            starts[n], t = t, t + lengths[n]
    period = 0 if mode == "block" else t
    # the host stream waits for the period
    if mode == "line":
        scheds[chain.stream] = ((0, 1, xi, period - stream_rows * xi, stream_rows) if stream_rows > 1
                                else (0, 1, period, 0, 1))
    else:
        scheds[chain.stream] = (0, 1, xi, 0, 1)
    for name in pre:
        scheds[name] = _tied(scheds[chain.producer(name)], chain.reads[name][1], name)
    scheds[head] = _tied(scheds[chain.producer(head)], chain.reads[head][1], head)
    for n in members[1:]:
        p = chain.producer(n)
        (ax, bx), (ay, by) = chain.reads[n][1]
        if mode == "line":
            w, m = lengths[n] // rows[n], rows[n]

            def make(dy, w=w, m=m, n=n, ax=ax, bx=bx):
                d = period * dy + starts[n] + bx
                return (d, ax, w, period - m * w, m) if m > 1 else (d, ax, period, 0, 1)
            scheds[n] = _with_coarse_delay(chain, n, make, scheds)
        else:
            w = chain.extents(p)[0]
            s = (starts[n] + bx, ax, w, 0, 1)
            if _late_reads(chain, n, s, scheds) > 0:
                raise LoomError("a block slot reads values its producer has not written",
                                where=f"Func '{n}'", construct="compute_share")
            scheds[n] = s
    if mode == "block":  # the head's slot lasts until its last firing (at least the stream)
        end = int(_times(scheds[head], chain.extents(head)).max()) + 1
        if end > stream_cycles:
            raise LoomError("the first member of a block-interleaved group outlasts the stream",
                            where=f"Func '{head}'", construct="compute_share")
    for name in post:
        scheds[name] = _tied(scheds[chain.producer(name)], chain.reads[name][1], name)
    for n in members:
        slots[n] = [(starts[n], lengths[n])]
    return scheds, SharedKernel(group.root, list(members), mode, period, slots)


def _stream_rows(chain: _Chain, head, head_rows: int) -> int:
    """Host stream rows per coarse iteration (line): those ``head_rows`` rows of the group's first member read,
    through each dedicated stage before it (one reducing y by 2 reads 2 rows of its producer per row)."""
    rows, name = head_rows, head
    while name != chain.stream:
        rows *= chain.scale(name)[1]
        name = chain.producer(name)
    return rows


def _step_gcd(sched) -> int:
    """The gcd of a schedule's steps: every cycle of the stage is congruent to its offset modulo it."""
    d, sx, r, f, m = sched
    return math.gcd(sx, r, f if m > 1 else 0)


def _pixel_schedule(chain: _Chain, group: ShareGroup, pre, post):
    """Pixel interleaving on the row-major host stream (thesis §5.1, Figure 5.1).

    The stream delivers a pixel every ``p`` cycles, the smallest ``p`` that works. The first member
    fires as its window arrives; each later member fires a fixed number of cycles after its window is
    complete (its producer's last value), the fewest that put its cycles in a residue class (modulo the
    gcd of its schedule's steps) no earlier member's class meets. So no two members ever fire together
    and the kernel's input multiplexer follows a fixed period: the lcm of the classes' moduli. Stages
    that reduce the grid fire on a fraction of the cycles, so a pyramid shares one kernel on the
    unslowed stream (p = 1); equal-rate stages need p = the number of members (cascade: 2)."""
    members, head = group.members, group.members[0]
    xi = chain.extents(chain.stream)[0]
    for p in range(1, len(members) + 1):  # p = len(members) always succeeds: each member has p classes
        scheds = {chain.stream: (0, p, p * xi, 0, 1)}
        for name in [*pre, head]:
            scheds[name] = _tied(scheds[chain.producer(name)], chain.reads[name][1], name)
        classes = {head: (scheds[head][0] % _step_gcd(scheds[head]), _step_gcd(scheds[head]))}
        for n in members[1:]:
            ready = _tied(scheds[chain.producer(n)], chain.reads[n][1], n)
            g = _step_gcd(ready)
            shift = next((s for s in range(g) if all((ready[0] + s - a) % math.gcd(g, h)
                                                       for a, h in classes.values())), None)
            if shift is None:
                break
            scheds[n] = _shift(ready, shift)
            classes[n] = ((ready[0] + shift) % g, g)
        else:
            period = math.lcm(*(g for _, g in classes.values()))
            slots = {n: [(k, 1) for k in range(a, period, g)] for n, (a, g) in classes.items()}
            for name in post:
                scheds[name] = _tied(scheds[chain.producer(name)], chain.reads[name][1], name)
            return scheds, SharedKernel(group.root, list(members), "pixel", period, slots)
    raise AssertionError("p = len(members) leaves every member a free residue class")


def _fill_gaps(chain: _Chain, pre, head, members, lengths, stream_rows, xi):
    """Slot starts within the period, and the period, for line interleaving (thesis §5.4: the shared kernel
    "fills the gaps in the original compute pattern").

    The head fires as the stream delivers its windows, on some cycles of the stream's slot (a 2x2
    down-sampling level on one in four). Each later member, in order, takes the first run of idle
    cycles of that slot long enough for its own slot (first fit); a member that fits nowhere gets a
    slot after the stream's, which lengthens the period (the stream then waits)."""
    p0 = lengths[head]
    sched = (0, 1, xi, 0, stream_rows) if stream_rows > 1 else (0, 1, p0, 0, 1)
    for name in [*pre, head]:
        sched = _tied(sched, chain.reads[name][1], name)
    busy = np.zeros(p0, bool)
    phases = _times(sched, chain.extents(head)).ravel() % p0
    busy[phases] = True
    starts, t = {head: 0}, p0
    for n in members[1:]:
        need = lengths[n]
        start = _first_free_run(busy, need)
        if start is None:
            starts[n], t = t, t + need
        else:
            starts[n] = start
            busy[start:start + need] = True
    return starts, t


def _first_free_run(busy, need):
    """Start of the first run of ``need`` idle cycles, or None."""
    run = 0
    for i, b in enumerate(busy):
        run = 0 if b else run + 1
        if run == need:
            return i - need + 1
    return None


def check_exclusive(times: dict, where: str):
    """No two stages of a shared kernel fire in the same cycle (``times``: stage -> cycle array)."""
    seen = {}
    for name, t in times.items():
        flat = np.asarray(t).ravel()
        if sorted_unique(flat).size != flat.size:
            raise LoomError(f"stage '{name}' fires twice in one cycle on the shared kernel", where=where)
        for other, ot in seen.items():
            both = np.intersect1d(flat, ot)
            if both.size:
                raise LoomError(f"stages '{other}' and '{name}' both fire in cycle {int(both[0])} on the "
                                "shared kernel", where=where)
        seen[name] = flat


def build_shared_design(acc: Accelerator, size, origin, group: ShareGroup):
    """The design of an accelerator whose share group time-multiplexes one kernel (thesis §5.2)."""
    from .scheduler import Design, StagePlan, _buffers, _fill_capacities, _schedule as spatial_schedule

    base = spatial_schedule(acc, size, origin)
    check_identical_kernels(acc, group, base.regions)
    chain = _Chain(acc, base, group)
    scheds, shared = _schedule(chain, group)
    plans = {}
    for name, plan in base.stages.items():
        plans[name] = StagePlan(name, plan.node, plan.mins, plan.extents, _in_dims(_cycle(scheds[name]), plan),
                                plan.time_dims)
    check_exclusive({n: _times(scheds[n], chain.extents(n)) for n in group.members},
                    f"share group of '{group.root}'")
    buffers = _buffers(acc, plans, base.reads)
    design = Design(acc, size, origin, base.regions, plans, buffers, base.reads)
    design.sharing = shared
    _fill_capacities(design, True)
    return design


__all__ = ["ShareGroup", "SharedKernel", "share_group", "build_shared_design", "check_exclusive", "other_rate_error",
           "check_identical_kernels", "kernel_signature", "INTERLEAVINGS"]
