"""``accel-place-flow``: replace a tiled op by the accelerator transactions of its opcode flow.

Matches: ``linalg.generic {accel.tiled}`` inside the ``#accel.loop`` nest built by
``accel-tile``. Reads the op's ``accel.accelerator`` (opcode map, flows, tiles, DMA
configuration) and ``accel.plan`` (flow, tiles); the enclosing
``#accel.loop<tile "d">`` loops must be the flow's tile loops, in order.
Produces: for each opcode of the flow, at the loop level ``place_flow`` gives it
(``loom.accel.validate``; level 0 = outside all tile loops, ``before``/``after``
the inner loop, ``body`` in the innermost loop), one transaction each way::

    %o1 = accel.send_literal(%c15, %c0)                  send_literal(15)
    %o2 = accel.send %tileA, %o1 padded array<i64: 16, 16> : memref<?x?xi32, strided<..>>
    %z  = accel.flush_send %o2                           one DMA send per opcode
    accel.start_recv %len  accel.wait_recv               if the opcode receives
    %r  = accel.recv %tileC, %c0 "accumulate" padded array<i64: 16, 16> : memref<..>

Tiles are cut (``memref.subview``) at the opcode's level, from the ivs of the
enclosing tile loops only: an opcode of an outer scope is placed outside the
inner loops (hoisting), so e.g. A-stationary sends each A tile once per (m, k).
Region operands (``region_operands``) span the range of the inner loops.
``send_dim`` sends the tile size (a "full" dim: ``memref.dim`` of the operand),
``send_idx`` the tile's start index. ``accel.init_dma`` / ``accel.free_dma`` wrap
the nest and the ``#accel.loop<batch>`` loops around it (independent problems, e.g. the
entries of a batched matmul: one DMA session, so one timeline on which a problem's first
transfers may overlap the previous one's last); ``init_opcodes`` run before the nest, once per problem.

Partial tiles (problem size not a multiple of the tile): every tiled dim of a
sent or received tile is padded to the accelerator tile (the ``padded_shape`` property);
``convert-accel-to-runtime`` zero-fills the rest of the staging block on send and
takes back only the valid part on receive. Zero rows/columns of A and B add
nothing to C, so the valid part of the result is exact. Padding (rather than
running the remainder on the CPU) keeps one code path, keeps the flow's reuse
pattern on the edges and costs only the padded words on the edge tiles.
Flexible tiles (v4): a ``send_literal`` equal to the description's extension word
for the default tiles (10 bits per flexible dim, in dim order) is re-encoded
for the chosen tiles.
Leaves alone: everything else (the ``accel.accelerator`` / ``accel.plan`` attributes
go with the erased op; the accel ops carry what ``accel-coalesce`` and
``convert-accel-to-runtime`` need). Run ``dce`` afterwards to drop the tiled op's
now-unused index arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from loom.accel.description import AcceleratorDescription
from loom.accel.opcodes import Recv, Send, SendDim, SendIdx, SendLiteral
from loom.accel.validate import PlacedOpcode, place_flow
from loom.dialects import accel
from loom.errors import LoomError
from loom.passes.accel_ir import (
    TILED,
    Emitter,
    accelerator_of,
    loop_extents,
    static_loop_extents,
    loop_of,
    padded_words,
    plan_of,
    subview,
)
from loom.accel.matching import linear_form


@dataclass(frozen=True)
class AccelPlaceFlowPass(ModulePass):
    name = "accel-place-flow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for generic in [g for g in op.walk() if isinstance(g, GenericOp) and TILED in g.attributes]:
            _Placer(generic).run()


def flexible_word(acc: AcceleratorDescription, sizes: dict[str, int]) -> int:
    """The v4-style extension word: 10 bits per flexible dim, in dim order."""
    word = 0
    for k, d in enumerate(t.dim for t in acc.tiles.tiles if t.kind == "flexible"):
        word |= (sizes[d] & 0x3FF) << (10 * k)
    return word


class _Placer:
    def __init__(self, generic: GenericOp):
        self.g = generic
        self.acc = accelerator_of(generic)
        plan = plan_of(generic)
        self.names = plan.dim_names
        self.tiles = dict(zip(self.names, plan.tile_sizes))
        flexible = {d: t for d, t in self.tiles.items() if self.acc.tiles[d].kind == "flexible"}
        self.placement = place_flow(self.acc, plan.flow.data, flexible or None)
        self.literal_map: dict[int, int] = {}
        if flexible:
            default = {t.dim: int(t.nominal) for t in self.acc.tiles.tiles if t.kind == "flexible"}
            if default != flexible:
                self.literal_map[flexible_word(self.acc, default)] = flexible_word(self.acc, flexible)
        # the accelerator tile loops, outer first
        loops: list[scf.ForOp] = []
        parent = generic.parent_op()
        while parent is not None:
            role = loop_of(parent) if isinstance(parent, scf.ForOp) else None
            if role is not None and role.role.data != "batch" and role.dim.data not in self.names:
                raise LoomError(f"accel-place-flow: a {role.role.data} loop over dim {role.dim.data!r} encloses "
                                f"the tiled op, whose accelerator {self.acc.name} has dims "
                                f"({', '.join(self.names)})", where="accel-place-flow")
            if role is not None and role.role.data == "tile":
                loops.insert(0, parent)
            parent = parent.parent_op()
        found = tuple(loop_of(lp).dim.data for lp in loops)  # type: ignore[union-attr]
        if found != self.placement.tile_loops:
            raise LoomError(f"accel-place-flow: the op sits in tile loops ({', '.join(found)}) but flow "
                            f"{self.placement.flow} of {self.acc.name} needs ({', '.join(self.placement.tile_loops)}); "
                            "run accel-tile on the annotated op first", where="accel-place-flow")
        self.loops = loops
        top: Operation = loops[0] if loops else generic
        while True:  # the whole nest, cache loops included
            up = top.parent_op()
            role = loop_of(up) if isinstance(up, scf.ForOp) else None
            if role is not None and role.role.data == "cache":
                top = up
            else:
                break
        self.top = top
        session: Operation = top  # one DMA session: around the enclosing batch loops too
        while True:
            up = session.parent_op()
            role = loop_of(up) if isinstance(up, scf.ForOp) else None
            if role is None or role.role.data not in ("batch", "cache"):
                break
            session = up
        self.session = session
        self.loop_of = {loop_of(lp).dim.data: (k, lp) for k, lp in enumerate(loops)}  # type: ignore[union-attr]
        self.sources = []
        for value in generic.operands:
            owner = value.owner
            if not isinstance(owner, memref.SubviewOp):
                raise LoomError("accel-place-flow: the tiled op's operands must be subviews made by accel-tile")
            self.sources.append(owner.source)
        self.maps = [m.data for m in generic.indexing_maps.data]

    # -- where ----------------------------------------------------------------------------
    def emitter(self, level: int, position: str) -> Emitter:
        if level == 0:
            block = self.top.parent_block()
            assert block is not None
            return Emitter(block, self.top if position == "before" else self.after_top)
        n = len(self.loops)
        if level == n:
            return Emitter(self.loops[-1].body.blocks[0], self.g)
        body = self.loops[level - 1].body.blocks[0]
        return Emitter(body, self.loops[level] if position == "before" else body.last_op)

    # -- what -----------------------------------------------------------------------------
    def dim_range(self, em: Emitter, d: int, level: int) -> tuple[SSAValue, SSAValue, int]:
        """(start, size, padded size or -1) of loop dim ``d`` as seen at ``level``."""
        name = self.names[d]
        if name not in self.loop_of:  # "full": the whole extent
            return em.index(0), self.extents[d], -1
        k, loop = self.loop_of[name]
        if k < level:  # enclosing: the current tile
            iv = loop.body.blocks[0].args[0]
            size = em.min(em.index(self.tiles[name]), em.sub(loop.ub, iv))
            return iv, size, self.tiles[name]
        return loop.lb, em.sub(loop.ub, loop.lb), -1  # inner loop: the region it covers

    def tile(self, em: Emitter, n: int, level: int) -> tuple[SSAValue, list[int]]:
        offsets, sizes, padded = [], [], []
        for expr in self.maps[n].results:
            terms, const = linear_form(expr)  # type: ignore[misc]
            start: SSAValue | None = em.index(const) if const else None
            extent: SSAValue | None = None
            pad = 1
            for d, c in terms.items():
                s, z, p = self.dim_range(em, d, level)
                term = s if c == 1 else em.mul(em.index(c), s)
                start = term if start is None else em.add(start, term)
                if len(terms) == 1 and c == 1:
                    extent, pad = z, p
                else:
                    span = em.sub(z, em.index(1))
                    span = span if abs(c) == 1 else em.mul(em.index(abs(c)), span)
                    extent = span if extent is None else em.add(extent, span)
                    if p < 0 and self.names[d] not in self.loop_of:
                        # a "full" dim in a window (ow + fw, fw full): its static extent pads the window
                        # of a partial tile to what the accelerator reads (tow + Fw - 1); a dynamic one
                        # cannot be a static padded size (the driver checks such calls, see
                        # DriverSummary.unpaddable_windows)
                        p = self.static_extents[d]
                    pad = -1 if (p < 0 or pad < 0) else pad + abs(c) * (p - 1)
            if extent is None:
                extent = em.index(1)
            elif not (len(terms) == 1 and next(iter(terms.values())) == 1):
                extent = em.add(extent, em.index(1))
            offsets.append(start if start is not None else em.index(0))
            sizes.append(extent)
            padded.append(pad)
        return subview(em, self.sources[n], offsets, sizes), padded

    def emit_opcode(self, em: Emitter, placed: PlacedOpcode) -> None:
        offset = em.i32(0)
        sent = False
        for pa in placed.actions:
            a = pa.action
            if isinstance(a, SendLiteral):
                value = self.literal_map.get(a.value & 0xFFFFFFFF, a.value)
                offset = em(accel.SendLiteralOp(em.i32(value), offset))
            elif isinstance(a, Send):
                tile, padded = self.tile(em, a.operand, placed.level)
                offset = em(accel.SendOp(tile, offset, padded))
            elif isinstance(a, SendDim):
                tile, padded = self.tile(em, a.operand, placed.level)
                if padded[a.dim] > 0:  # a tiled dim: the accelerator's tile size
                    offset = em(accel.SendLiteralOp(em.i32(padded[a.dim]), offset))
                else:
                    offset = em(accel.SendDimOp(tile, a.dim, offset))
            elif isinstance(a, SendIdx):
                index = self.index_of(em, a.operand, a.dim, placed.level)
                offset = em(accel.SendIdxOp(index, offset))
            else:
                continue
            sent = True
        if sent:
            em(accel.FlushSendOp(offset))
        recvs = [pa for pa in placed.actions if isinstance(pa.action, Recv)]
        if not recvs:
            return
        tiles = [self.tile(em, pa.action.operand, placed.level) for pa in recvs]
        length: SSAValue | None = None
        for tile, padded in tiles:
            w = padded_words(em, tile, padded)
            length = w if length is None else em(arith.AddiOp(length, w))
        em.op(accel.StartRecvOp(length))  # type: ignore[arg-type]
        em.op(accel.WaitRecvOp())
        offset = em.i32(0)
        for pa, (tile, padded) in zip(recvs, tiles):
            offset = em(accel.RecvOp(tile, offset, pa.mode or "accumulate", padded))

    def index_of(self, em: Emitter, n: int, sub: int, level: int) -> SSAValue:
        terms, const = linear_form(self.maps[n].results[sub])  # type: ignore[misc]
        total: SSAValue = em.index(const)
        for d, c in terms.items():
            s, _, _ = self.dim_range(em, d, level)
            total = em.add(total, s if c == 1 else em.mul(em.index(c), s))
        return total

    # -- all ------------------------------------------------------------------------------
    def run(self) -> None:
        block = self.top.parent_block()
        assert block is not None
        self.after_top = self.top.next_op
        if self.after_top is None:
            raise LoomError("accel-place-flow: the tile nest must be followed by a terminator")
        head = Emitter(block, self.top)
        self.extents = loop_extents(head, list(self.sources), self.maps)
        self.static_extents = static_loop_extents(list(self.sources), self.maps)
        dma = self.acc.dma
        # taken before any opcode is placed: with no tile loops ("full" dims only) the flow's opcodes
        # go right after the op, and free_dma must follow them, not the op
        after_session = self.session.next_op
        assert after_session is not None  # a loop or the nest is followed by its block's terminator
        start = Emitter(self.session.parent_block(), self.session)  # type: ignore[arg-type]
        start.op(accel.InitDmaOp(start.i32(dma.dma_address), start.i32(dma.input_address),
                                 start.i32(dma.input_size), start.i32(dma.output_address),
                                 start.i32(dma.output_size)))
        for placed in self.placement.init:
            self.emit_opcode(self.emitter(0, "before"), placed)
        for placed in self.placement.opcodes:
            self.emit_opcode(self.emitter(placed.level, placed.position), placed)
        Emitter(self.session.parent_block(), after_session).op(accel.FreeDmaOp())  # type: ignore[arg-type]
        operands = list(self.g.operands)
        self.g.detach()
        self.g.erase()
        for value in operands:
            owner = value.owner
            if isinstance(owner, memref.SubviewOp) and not owner.results[0].uses:
                owner.detach()
                owner.erase()
