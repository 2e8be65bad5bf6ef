"""``accel-coalesce{max-words=0 double-buffer=false}``: merge consecutive DMA sends into one transaction.

Matches: functions holding an ``accel.init_dma`` (what ``accel-place-flow`` builds),
before ``convert-accel-to-runtime``.
Produces: every opcode still writes its words (literals, tiles) into the input
staging buffer, but no longer at offset 0 followed by its own ``accel.flush_send``:
the words are appended after the ones still pending, and the pending words go
out as ONE transaction (``accel.start_send`` + ``accel.wait_send``) only when the
accelerator must have them:

* before every receive (``accel.start_recv``): the output depends on them;
* before a block that would overflow the staging buffer (or ``max-words``);
* before ``accel.free_dma``: nothing may stay behind.

The pending length lives in a one-word stack cell (``memref.alloca``), so it
crosses loop boundaries: e.g. the C-stationary flow ``((s) r)`` sends all the
k-tiles of one (m, n) tile and the ``r`` opcode in one transaction instead of
``K/T + 1``. The word stream the accelerator sees is unchanged, only the
transaction boundaries move; a flush never splits an operand block (the models
require a block inside one transfer). The overflow check is made once per run
of statically sized words (literals, fully padded tiles) and once per tile of
dynamic size (``"full"`` dims, region operands); when every dynamic tile of an
opcode has an upper bound (its subview sizes' clamps), the first check makes room
for the whole opcode, so its words never straddle two transactions (as
``expected_coalesced_sends`` counts and a hand-written driver stages them).

``max-words`` (0 = the staging buffer's size) bounds a transaction: smaller
batches let the accelerator start computing earlier on a timed system.
``double-buffer=true`` (set by ``compile_driver(..., coalesce=True, double_buffer=True)``)
bounds it by half the staging buffer: the double-buffered runtime fills one half
while the other is in flight.
Reads: the ops and the ``padded_shape`` property of ``accel.send`` (the words a tile
occupies); the staging capacity is the ``accel.init_dma`` input-size operand.
Each ``accel.init_dma`` .. ``accel.free_dma`` session (same block) has its own cell and capacity: a
function with several sessions (ops on different accelerators) coalesces each within itself.
Leaves alone: receives (their transactions are unchanged), and functions
without ``accel.init_dma``. ``expected_coalesced_sends`` gives the analytic
transaction count for a ``DriverSummary``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Mapping

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from loom.accel.opcodes import Recv, Send
from loom.dialects import accel
from loom.errors import LoomError
from loom.passes.accel_ir import Emitter, padded_shape, padded_words
from loom.passes.dma_inline_copies import _tile_shape

_CHAIN = (accel.SendLiteralOp, accel.SendOp, accel.SendDimOp, accel.SendIdxOp)


@dataclass(frozen=True)
class AccelCoalescePass(ModulePass):
    name = "accel-coalesce"

    max_words: int = 0
    double_buffer: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_words < 0:
            raise LoomError(f"accel-coalesce: max-words={self.max_words}; expected 0 (staging size) or more",
                            where="accel-coalesce")
        for init in [o for o in op.walk() if isinstance(o, accel.InitDmaOp)]:
            _Coalescer(init, self.max_words, self.double_buffer).run()


class _Coalescer:
    def __init__(self, init: accel.InitDmaOp, max_words: int, double_buffer: bool = False):
        self.init = init
        self.max_words = max_words
        self.double_buffer = double_buffer

    def run(self) -> None:
        block = self.init.parent_block()
        assert block is not None
        after = self.init.next_op
        em = Emitter(block, after)
        self.cell = em(memref.AllocaOp.get(i32, shape=[1]))
        self.zero_index = em.index(0)
        em.op(memref.StoreOp.get(em.i32(0), self.cell, [self.zero_index]))
        # capacity in words: the init's input size is in bytes
        # (double buffering: one transaction must fit one half of the buffer)
        size_words = em(arith.DivUIOp(self.init.input_size, em.i32(8 if self.double_buffer else 4)))
        if self.max_words:
            size_words = em(arith.MinUIOp(size_words, em.i32(self.max_words)))
        self.capacity = size_words
        ops = self.session_ops()
        for flush in [o for o in ops if isinstance(o, accel.FlushSendOp)]:
            self.coalesce_chain(flush)
        for o in ops:
            if isinstance(o, (accel.StartRecvOp, accel.FreeDmaOp)):
                self.flush_before(o)

    def session_ops(self) -> list[Operation]:
        """The ops of this init's DMA session: up to its ``free_dma`` in the same block (a function may hold
        several sessions, one per offloaded op, each on its own accelerator and staging buffer)."""
        ops: list[Operation] = []
        o = self.init.next_op
        while o is not None:
            ops.extend(o.walk())
            if isinstance(o, accel.FreeDmaOp):
                break
            o = o.next_op
        return ops

    # -- one opcode's sends ------------------------------------------------------------------
    def chain_of(self, flush: accel.FlushSendOp) -> list[Operation]:
        chain: list[Operation] = []
        value = flush.length
        while isinstance(value.owner, _CHAIN):
            chain.insert(0, value.owner)
            value = _offset_of(value.owner)
        return chain

    def coalesce_chain(self, flush: accel.FlushSendOp) -> None:
        chain = self.chain_of(flush)
        if not chain:
            return
        block = flush.parent_block()
        assert block is not None
        # segments: runs of statically sized writes share one overflow check
        segments: list[tuple[Operation, int | None]] = []  # (first op, static words or None)
        for o in chain:
            words = _static_words(o)
            if words is not None and segments and segments[-1][1] is not None:
                segments[-1] = (segments[-1][0], segments[-1][1] + words)
            else:
                segments.append((o, words))
        first = chain[0]
        em = Emitter(block, first)
        start = em(memref.LoadOp.get(self.cell, [self.zero_index]))
        _set_offset(first, start)
        # the first check makes room for the whole opcode when its dynamic tiles have bounds: an opcode
        # word never goes out in one transaction and its tile in the next (as expected_coalesced_sends counts)
        bounds = [words if words is not None else _bound_words(op) for op, words in segments]
        whole = sum(bounds) if len(segments) > 1 and None not in bounds else None  # type: ignore[arg-type]
        for k, (op, words) in enumerate(segments):
            em = Emitter(block, op)
            pending = _offset_of(op)
            words = whole if k == 0 and whole is not None else words
            need = em.i32(words) if words is not None else self.dynamic_words(em, op)
            over = em(arith.CmpiOp(em(arith.AddiOp(pending, need)), self.capacity, "ugt"))
            nonempty = em(arith.CmpiOp(pending, em.i32(0), "sgt"))
            split = em(arith.AndIOp(over, nonempty))
            self.emit_flush_if(em, split, pending)
            _set_offset(op, em(arith.SelectOp(split, em.i32(0), pending)))
        em = Emitter(block, flush)
        em.op(memref.StoreOp.get(flush.length, self.cell, [self.zero_index]))
        flush.results[0].replace_all_uses_with(em.i32(0))
        flush.detach()
        flush.erase()

    def dynamic_words(self, em: Emitter, op: Operation) -> SSAValue:
        assert isinstance(op, accel.SendOp)
        rank = len(op.tile.type.get_shape())  # type: ignore[attr-defined]
        return padded_words(em, op.tile, (padded_shape(op) + [-1] * rank)[:rank])

    # -- flushes -------------------------------------------------------------------------------
    def emit_flush_if(self, em: Emitter, cond: SSAValue, length: SSAValue) -> None:
        body = Block()
        body.add_ops([accel.StartSendOp(length), accel.WaitSendOp(), scf.YieldOp()])
        em.op(scf.IfOp(cond, [], Region(body)))

    def flush_before(self, op: Operation) -> None:
        block = op.parent_block()
        assert block is not None
        em = Emitter(block, op)
        pending = em(memref.LoadOp.get(self.cell, [self.zero_index]))
        self.emit_flush_if(em, em(arith.CmpiOp(pending, em.i32(0), "sgt")), pending)
        em.op(memref.StoreOp.get(em.i32(0), self.cell, [self.zero_index]))


def _offset_of(op: Operation) -> SSAValue:
    return op.operands[1]  # every send op is (payload, offset)


def _set_offset(op: Operation, value: SSAValue) -> None:
    op.operands[1] = value


def _static_words(op: Operation) -> int | None:
    if not isinstance(op, accel.SendOp):
        return 1
    return _words(op, op.tile.type.get_shape())  # type: ignore[attr-defined]


def _bound_words(op: Operation) -> int | None:
    """The most words a send of dynamic size occupies (its subview sizes' upper bounds), or None."""
    if not isinstance(op, accel.SendOp) or not isinstance(op.tile.type, MemRefType):
        return None
    return _words(op, _tile_shape(op.tile, op.tile.type))


def _words(op: accel.SendOp, shape) -> int | None:
    """Words of ``op``'s tile with dim sizes ``shape`` (-1: unknown) where the tile is not padded."""
    padded = padded_shape(op)
    words = 1
    for k, size in enumerate(shape):
        p = padded[k] if k < len(padded) else -1
        if p > 0:
            words *= p
        elif size >= 0:
            words *= size
        else:
            return None
    return words


# ------------------------------------------------------------------------------ analytic count
def expected_coalesced_sends(summary, problem: Mapping[str, int], capacity_words: int) -> int:
    """Send transactions of a coalesced driver, by walking the flow's opcode sequence.

    ``summary`` is a ``loom.driver.compile.DriverSummary``. Every opcode appends its
    words (literals + padded tiles); pending words are flushed before a receive,
    before an opcode whose words would overflow ``capacity_words``, and at the end.
    Exact when each opcode's tiles have a static size or no capacity split occurs."""
    placement = summary.placement
    loops = placement.tile_loops
    trips = [ceil(problem[d] / summary.tile_sizes[d]) for d in loops]

    def words_of(placed) -> tuple[int, bool]:
        words, recv = 0, False
        for pa in placed.actions:
            if isinstance(pa.action, Recv):
                recv = True
            elif isinstance(pa.action, Send):
                words += summary._tile_words(pa.action.operand, loops[:placed.level], problem)
            else:
                words += 1
        return words, recv

    info = {id(p): words_of(p) for p in (*placement.init, *placement.opcodes)}
    state = {"pending": 0, "sends": 0}

    def run(placed) -> None:
        words, recv = info[id(placed)]
        if words:
            if state["pending"] and state["pending"] + words > capacity_words:
                state["sends"] += 1
                state["pending"] = 0
            state["pending"] += words
        if recv and state["pending"]:
            state["sends"] += 1
            state["pending"] = 0

    def walk(level: int) -> None:
        if level == len(loops):
            for p in placement.at(level):
                run(p)
            return
        for p in placement.at(level, "before"):
            run(p)
        for _ in range(trips[level]):
            walk(level + 1)
        for p in placement.at(level, "after"):
            run(p)

    for p in placement.init:
        run(p)
    walk(0)
    return state["sends"] + (1 if state["pending"] else 0)


__all__ = ["AccelCoalescePass", "expected_coalesced_sends"]
