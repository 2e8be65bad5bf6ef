"""``dma-inline-deferred-recvs``: a double-buffered driver's receive of a full tile is added into its
destination by the driver itself, one step late, as a hand-written double-buffered driver does.

``convert-accel-to-runtime{double-buffer=true}`` defers every receive copy to the runtime
(``copy_from_outbuffer_deferred_<acc_>?<t>`` records a validated copy of the tile's descriptor;
``loom_dma_drain_recvs`` runs the recorded copies after the receive completed). That is two
runtime calls, a descriptor validation and a generic copy per tile; ``dma-inline-copies``
leaves them alone. This pass keeps the deferral but not the calls: the deferred call records
the tile's position in stack cells, and each drain (with late receives: the request of the
receive after next) adds the recorded tile inline.

Matches: a function that calls ``dma_init`` then ``loom_dma_set_double_buffering`` (once, both in
its entry block, as ``dma-inline-copies`` requires), has exactly one deferred receive call whose
tile is ``memref.subview`` of a function argument (not rank-reducing, static strides; through a
``memref.cast`` to unranked) with a static staging block (as in ``dma-inline-copies``), sends no
tile of that argument, and calls ``loom_dma_drain_recvs`` (result unused) right after a
``dma_wait_recv`` and before every ``dma_free`` in the same block. With late receives
(``loom_dma_start_recv_late``, what ``convert-accel-to-runtime{double-buffer=true}`` emits): exactly
one, in the deferred call's block before it with no other DMA call between, no ``dma_start_recv``
in the function, and its length and offset constants (casts, +, -, *, / of constants and of
``memref.dim`` of a static dim or of a subview size given by those: a conv plane) with
offset + length <= half of ``dma_init``'s constant output words: every late receive then lands in
the other output half from the one before it, so a tile's words stay until the receive after the
next one starts.
Produces:
* the deferred call becomes ``scf.if``: when the tile fills its block, the words lie inside the
  output window (with late receives: inside one half) and nothing is pending as the newest tile
  nor in the runtime, the subview's dynamic offsets and the staging offset are stored in stack
  cells and the newest-pending flag is set (with late receives, ``loom_timing_driver_deferred(1,
  words)``: the timeline charges them where they are added, not at the next receive); else the
  original call (edge tiles, errors) and a flag saying the runtime holds a deferred copy;
* with late receives, ``loom_dma_start_recv_late`` becomes ``scf.if`` (its result the if's): when the
  runtime's request slot (``loom_dma_recv_request_view_i32``, read once after the switch; words as
  dma_runtime.h's ``LOOM_RECV_REQUEST_*``) holds no request, offset + length <= its room and the
  runtime flag is clear (no deferred copy of earlier receives pending there), the driver writes the
  request into the slot (length, offset, 0 copies, then queued; result 0), as a hand-written driver
  notes its next receive in its own struct, and the runtime starts it at the next send as it starts
  a called one; else the call (one queued: it starts that one; an error: it reports it);
* with late receives, right after that request (the receive before it has started: the slot was
  free, or the call started it; so the one before that has landed): the older pending tile is added (as below, at its
  recorded base), then the newest pending one becomes the older one, recording the base of the
  half its receive lands in (``loom_dma_out_recv_base()``, the receive just started);
* with late receives, right after every ``dma_start_send`` that returned 0 (it starts the queued
  receive, so the one before it has landed): the older pending tile is added, while that receive
  streams (a flow with several sends per receive adds it at the first);
* with late receives, before the ``dma_wait_recv`` of every drain: if an older tile is pending,
  ``loom_dma_start_queued_recv()`` and, when it returned 0, the older tile's add (while the last
  receive streams);
* every ``loom_dma_drain_recvs`` call becomes: the older pending tile (late receives) and the
  newest, each if pending: the recorded tile (the subview rebuilt from the cells with the block's
  static sizes) += (or =) the words of a ``memref.reinterpret_cast`` of the output window at its
  base + staging offset (the newest: ``loom_dma_out_recv_base()``; an ``scf.for`` nest /
  ``memref.copy``), then ``loom_timing_driver_copied(1, words)``; then, if the runtime flag is
  set, the runtime drain. Inline tiles are always older than the runtime's (the runtime path is
  taken until a drain once it was taken), and the runtime runs a late receive's copies only when
  the next receive starts, after the inline add of every older tile, so copies run in call order.
* the words added inline are tallied per operand before ``dma_free`` (``loom_operand_tally_add``).
Leaves alone: every other function and op (several deferred call sites, e.g. a coalesced receive of
several tiles: the runtime keeps them in order; a late receive whose length is not a constant or
does not fit one output half, e.g. a plane sized by a dynamic dim: the runtime may receive
it over the words of the tile before, which only its own copy, run first, reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType, ModuleOp, StridedLayoutAttr, i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from loom.passes.dma_inline_copies import (
    _Builder,
    _Staging,
    _accumulate,
    _block_shape,
    _callee,
    _root_argument,
    _row_major,
    _static_type,
    _tile_shape,
)
from loom.passes.loop_nests import constant_int

_DEFERRED = {f"copy_from_outbuffer_deferred_{m}{t}": m == "acc_" for m in ("", "acc_") for t in ("i32", "f32")}
_DRAIN = "loom_dma_drain_recvs"
_LATE = "loom_dma_start_recv_late"
_BASE = "loom_dma_out_recv_base"
_TIMING_DEFERRED = "loom_timing_driver_deferred"
_START_QUEUED = "loom_dma_start_queued_recv"
_REQUEST_VIEW = "loom_dma_recv_request_view_i32"
# the request slot's words (dma_runtime.h, LOOM_RECV_REQUEST_*)
_QUEUED, _LENGTH, _OFFSET, _COPIES, _ROOM, _REQUEST_WORDS = range(6)
_RECV = 1  # LOOM_TRACE_RECV


@dataclass(frozen=True)
class DmaInlineDeferredRecvsPass(ModulePass):
    name = "dma-inline-deferred-recvs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decls: dict = {}
        for f in [o for o in op.body.block.ops if isinstance(o, func.FuncOp) and o.body.blocks]:
            site = _site(f, decls)
            if site is not None:
                PatternRewriteWalker(_InlineDeferred(site), apply_recursively=False).rewrite_region(f.body)
                if site.deferred is not None:  # rewritten: the drains follow
                    for drain in site.drains:
                        if site.late is not None:
                            site.rewrite_last_wait(drain.prev_op)  # type: ignore[arg-type]
                        site.rewrite_drain(drain)
                    if site.late is not None:
                        site.rewrite_late()
                        for send in site.sends:
                            site.rewrite_send(send)
                    site.staging.add_tallies([c for c in f.walk() if isinstance(c, func.CallOp)])
        existing = {f.sym_name.data for f in op.body.block.ops if isinstance(f, func.FuncOp)}
        for name, ftype in decls.items():
            if name not in existing:
                op.body.block.add_op(func.FuncOp.external(name, ftype.inputs.data, ftype.outputs.data))


@dataclass
class _Site:
    """The one deferred receive of a function, its tile and the stack cells recording it."""

    staging: _Staging
    call: func.CallOp
    view: memref.SubviewOp
    root: SSAValue
    block: list[int]
    drains: list[func.CallOp]
    late: func.CallOp | None = None  # the late receive before the deferred call
    half: int | None = None  # words of one output half (late receives)
    sends: list[func.CallOp] = field(default_factory=list)  # dma_start_send calls (late receives)
    deferred: scf.IfOp | None = None
    cells: dict[str, SSAValue] | None = None

    def make_cells(self) -> dict[str, SSAValue]:
        """pending (i32 0/1), runtime (i32 0/1: the runtime holds a deferred copy), the staging
        offset (i32) and the subview's dynamic offsets (index) of the newest tile; the same with
        ``_a`` and the landing base (i32) of the older one (late receives); zeroed right after the switch."""
        if self.cells is None:
            s = self.staging
            zero = s._insert(arith.ConstantOp(IntegerAttr(0, IndexType())))
            zero32 = s._insert(arith.ConstantOp(IntegerAttr(0, i32)))
            self.cells = {}
            rank = max(len(self.view.offsets), 1)
            for name, ty, n in (("pending", i32, 1), ("runtime", i32, 1), ("offset", i32, 1), ("at", IndexType(), rank),
                                ("pending_a", i32, 1), ("offset_a", i32, 1), ("at_a", IndexType(), rank),
                                ("base_a", i32, 1)):
                cell = s._insert(memref.AllocaOp.get(ty, shape=[n]))
                assert cell is not None
                if ty == i32:
                    s._insert(memref.StoreOp.get(zero32, cell, [zero]))  # type: ignore[arg-type]
                self.cells[name] = cell
        return self.cells

    def _add_tile(self, ops: list[Operation], suffix: str, base_cell: str | None,
                  ok: SSAValue | None = None) -> None:
        """Append to ``ops``: if the tile recorded in the cells ending in ``suffix`` is pending, add it
        from the output window at its staging offset plus its landing base (the cell ``base_cell``,
        else the runtime's ``loom_dma_out_recv_base()``), count and time it, clear its flag."""
        cells = self.make_cells()
        elem = self.view.result.type.element_type  # type: ignore[attr-defined]

        def add(o: Operation) -> SSAValue:
            ops.append(o)
            return o.results[0] if o.results else None  # type: ignore[return-value]

        zero = add(arith.ConstantOp(IntegerAttr(0, IndexType())))
        one32 = add(arith.ConstantOp(IntegerAttr(1, i32)))
        pending = add(arith.CmpiOp(add(memref.LoadOp.get(cells["pending" + suffix], [zero])), one32, "eq"))
        if ok is not None:  # the call that started the next receive succeeded
            pending = add(arith.AndIOp(pending, add(arith.CmpiOp(ok, add(arith.ConstantOp(IntegerAttr(0, i32))), "eq"))))
        b = _Builder(Block())
        offsets = [b(memref.LoadOp.get(cells["at" + suffix], [b.index(k)])) for k in range(len(self.view.offsets))]
        tile_type = self.view.result.type
        assert isinstance(tile_type, MemRefType)
        tile = b(memref.SubviewOp(self.root, offsets, [], [], self.view.static_offsets, self.block,
                                  self.view.static_strides, _static_type(tile_type, self.block)))
        window = self.staging.window("out", elem)
        at = b(memref.LoadOp.get(cells["offset" + suffix], [b.index(0)]))
        base = b(memref.LoadOp.get(cells[base_cell], [b.index(0)])) if base_cell else self.base_call(b)
        start = b(arith.IndexCastOp(b(arith.AddiOp(at, base)), IndexType()))
        words_type = MemRefType(elem, self.block, StridedLayoutAttr(_row_major(self.block), None))
        staged = b(memref.ReinterpretCastOp.from_dynamic(window, [start], self.block, _row_major(self.block),
                                                         words_type))
        if _DEFERRED[_callee(self.call)]:
            _accumulate(b, tile, staged, self.block, elem)
        else:
            b(memref.CopyOp(staged, tile))
        cell = self.staging.cell(self.root, _RECV)
        count = b(memref.LoadOp.get(cell, [b.index(0)]))
        moved = b(arith.ConstantOp(IntegerAttr(prod(self.block), i64)))
        b(memref.StoreOp.get(b(arith.AddiOp(count, moved)), cell, [b.index(0)]))
        b(memref.StoreOp.get(b(arith.ConstantOp(IntegerAttr(0, i32))), cells["pending" + suffix], [b.index(0)]))
        self.staging.timing_hook(b, _RECV, moved)
        b(scf.YieldOp())
        add(scf.IfOp(pending, [], Region(b.block), Region(Block([scf.YieldOp()]))))

    def base_call(self, b: _Builder) -> SSAValue:
        self.staging.declare(_BASE, [], [i32])
        return b(func.CallOp(_BASE, [], [i32]))

    def request_inline(self) -> Operation:
        """The late receive -> ``scf.if``: when the runtime's slot is free, holds the request and the
        runtime holds no deferred copy, the request written into the slot (no call, as a hand-written
        driver notes its next receive), else the call; returns the ``scf.if``."""
        late = self.late
        assert late is not None
        cells = self.make_cells()
        s = self.staging
        slot_type = MemRefType(i32, [_REQUEST_WORDS])
        s.declare(_REQUEST_VIEW, [], [slot_type])
        slot = s._insert(func.CallOp(_REQUEST_VIEW, [], [slot_type]))
        assert slot is not None
        ops: list[Operation] = []

        def add(o: Operation) -> SSAValue:
            ops.append(o)
            return o.results[0]

        def word(k: int) -> SSAValue:
            return add(memref.LoadOp.get(slot, [add(arith.ConstantOp(IntegerAttr(k, IndexType())))]))

        zero32 = add(arith.ConstantOp(IntegerAttr(0, i32)))
        end = add(arith.ConstantOp(IntegerAttr(_static(late.operands[0]) + _static(late.operands[1]), i32)))
        free = add(arith.CmpiOp(word(_QUEUED), zero32, "eq"))
        held = add(memref.LoadOp.get(cells["runtime"], [add(arith.ConstantOp(IntegerAttr(0, IndexType())))]))
        cond = add(arith.AndIOp(free, add(arith.CmpiOp(held, zero32, "eq"))))
        cond = add(arith.AndIOp(cond, add(arith.CmpiOp(end, word(_ROOM), "sle"))))
        b = _Builder(Block())
        for k, value in ((_LENGTH, late.operands[0]), (_OFFSET, late.operands[1]), (_COPIES, None), (_QUEUED, None)):
            value = value if value is not None else b(arith.ConstantOp(IntegerAttr(int(k == _QUEUED), i32)))
            b(memref.StoreOp.get(value, slot, [b.index(k)]))
        b(scf.YieldOp(b(arith.ConstantOp(IntegerAttr(0, i32)))))
        call = _Builder(Block())
        slow = call(func.CallOp(_LATE, list(late.operands), [i32]))
        call(scf.YieldOp(slow))
        guard = scf.IfOp(cond, [i32], Region(b.block), Region(call.block))
        ops.append(guard)
        Rewriter.insert_op(ops, InsertPoint.before(late))
        late.results[0].replace_all_uses_with(guard.results[0])
        late.detach()
        late.erase()
        return guard

    def rewrite_late(self) -> None:
        """After the late receive (the one before it has started, so the one before that landed):
        the older tile is added, the newest becomes the older one with the base it lands at."""
        assert self.late is not None
        cells = self.make_cells()
        request = self.request_inline()
        ops: list[Operation] = []
        self._add_tile(ops, "_a", "base_a")
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        one32 = arith.ConstantOp(IntegerAttr(1, i32))
        pending = arith.CmpiOp(memref.LoadOp.get(cells["pending"], [zero]), one32, "eq")
        ops += [zero, one32, pending.lhs.owner, pending]  # type: ignore[list-item]
        b = _Builder(Block())
        b(memref.StoreOp.get(self.base_call(b), cells["base_a"], [b.index(0)]))
        b(memref.StoreOp.get(b(memref.LoadOp.get(cells["offset"], [b.index(0)])), cells["offset_a"], [b.index(0)]))
        for k in range(len(self.view.offsets)):
            b(memref.StoreOp.get(b(memref.LoadOp.get(cells["at"], [b.index(k)])), cells["at_a"], [b.index(k)]))
        b(memref.StoreOp.get(b(arith.ConstantOp(IntegerAttr(1, i32))), cells["pending_a"], [b.index(0)]))
        b(memref.StoreOp.get(b(arith.ConstantOp(IntegerAttr(0, i32))), cells["pending"], [b.index(0)]))
        b(scf.YieldOp())
        ops.append(scf.IfOp(pending, [], Region(b.block), Region(Block([scf.YieldOp()]))))
        Rewriter.insert_op(ops, InsertPoint.after(request))

    def rewrite_send(self, send: func.CallOp) -> None:
        """After a ``dma_start_send`` that succeeded (it starts the queued late receive, so the one
        before it has landed): the older pending tile is added while that receive streams."""
        ops: list[Operation] = []
        self._add_tile(ops, "_a", "base_a", send.results[0])
        Rewriter.insert_op(ops, InsertPoint.after(send))

    def rewrite_last_wait(self, wait: func.CallOp) -> None:
        """Before the ``dma_wait_recv`` of a drain, with an older tile pending: start the queued
        receive (``loom_dma_start_queued_recv``) and add the older tile while it streams."""
        cells = self.make_cells()
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        one32 = arith.ConstantOp(IntegerAttr(1, i32))
        pending = arith.CmpiOp(memref.LoadOp.get(cells["pending_a"], [zero]), one32, "eq")
        b = _Builder(Block())
        self.staging.declare(_START_QUEUED, [], [i32])
        started = b(func.CallOp(_START_QUEUED, [], [i32]))
        ops: list[Operation] = []
        self._add_tile(ops, "_a", "base_a", started)
        for o in ops:
            b(o)
        b(scf.YieldOp())
        Rewriter.insert_op([zero, one32, pending.lhs.owner, pending,  # type: ignore[list-item]
                            scf.IfOp(pending, [], Region(b.block), Region(Block([scf.YieldOp()])))],
                           InsertPoint.before(wait))

    def rewrite_drain(self, drain: func.CallOp) -> None:
        """``loom_dma_drain_recvs()`` (after ``dma_wait_recv``: every receive landed) -> inline adds of
        the older then the newest pending tile, then the runtime's drain if it holds a deferred copy."""
        cells = self.make_cells()
        ops: list[Operation] = []
        if self.late is not None:
            self._add_tile(ops, "_a", "base_a")
        self._add_tile(ops, "", None)
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        one32 = arith.ConstantOp(IntegerAttr(1, i32))
        zero32 = arith.ConstantOp(IntegerAttr(0, i32))
        held = arith.CmpiOp(memref.LoadOp.get(cells["runtime"], [zero]), one32, "eq")
        ops += [zero, one32, zero32, held.lhs.owner, held]  # type: ignore[list-item]
        r = _Builder(Block())
        r(func.CallOp(_DRAIN, [], [i32]))
        r(memref.StoreOp.get(zero32, cells["runtime"], [r.index(0)]))
        r(scf.YieldOp())
        ops.append(scf.IfOp(held, [], Region(r.block), Region(Block([scf.YieldOp()]))))
        Rewriter.insert_op(ops, InsertPoint.before(drain))
        drain.detach()
        drain.erase()


def _static(value: SSAValue) -> int | None:
    """A non-negative integer the IR computes from constants (casts, +, -, *, /, and the size of a
    subview dim given by those: a conv plane's length is the product of its tile's dims), else None."""
    op = value.owner
    if isinstance(op, (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp)):
        return _static(op.input)
    if isinstance(op, memref.DimOp) and isinstance(op.source.type, MemRefType):
        k, shape, view = constant_int(op.index), op.source.type.get_shape(), op.source.owner
        if k is None or not 0 <= k < len(shape):
            return None
        if shape[k] >= 0:
            return shape[k]
        static = list(view.static_sizes.get_values()) if isinstance(view, memref.SubviewOp) else []
        if len(static) != len(shape) or static[k] != DYNAMIC_INDEX:
            return None  # not a subview, or rank-reducing: dim k is not the subview's k-th size
        return _static(view.sizes[sum(s == DYNAMIC_INDEX for s in static[:k])])
    if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp)):
        a, b = _static(op.lhs), _static(op.rhs)
        if a is None or b is None or (isinstance(op, arith.DivUIOp) and b == 0):
            return None
        if isinstance(op, arith.SubiOp):
            return a - b if a >= b else None
        return a + b if isinstance(op, arith.AddiOp) else a * b if isinstance(op, arith.MuliOp) else a // b
    v = constant_int(value)
    return v if v is not None and v >= 0 else None


def _site(f: func.FuncOp, decls: dict) -> _Site | None:
    """The function's one inlinable deferred receive, or None (see the module docstring)."""
    calls = [c for c in f.walk() if isinstance(c, func.CallOp)]
    top = f.body.blocks[0]
    inits = [c for c in calls if _callee(c) == "dma_init" and c.parent_block() is top]
    halves = [c for c in calls if _callee(c) == "loom_dma_set_double_buffering"]
    if not inits or len(halves) != 1 or halves[0].parent_block() is not top \
            or top.get_operation_index(halves[0]) < top.get_operation_index(inits[0]):
        return None
    deferred = [c for c in calls if _callee(c) in _DEFERRED]
    if len(deferred) != 1:
        return None
    (call,) = deferred
    lates = [c for c in calls if _callee(c) == _LATE]
    late, half = None, None
    if lates:
        # one late receive, requested right before the tile is recorded; every receive fits one half
        # (so the next lands in the other and the older tile's words stay until it is added)
        late = lates[0]
        whole = _static(inits[0].operands[4]) if len(inits[0].operands) == 5 else None
        length, at = _static(late.operands[0]), _static(late.operands[1])
        if len(lates) != 1 or late.parent_block() is not call.parent_block() or whole is None \
                or length is None or at is None or any(_callee(c) == "dma_start_recv" for c in calls):
            return None
        block_ops = list(call.parent_block().ops)  # type: ignore[union-attr]
        if block_ops.index(late) > block_ops.index(call) or any(
                isinstance(o, func.CallOp) and _callee(o).startswith(("dma_", "loom_dma_"))
                for o in block_ops[block_ops.index(late) + 1:block_ops.index(call)]):
            return None
        half = whole // 2
        if not (0 <= at and at + length <= half):
            return None
    staging = _Staging(f, halves[0], decls, double_buffer=True)
    cast = call.operands[0].owner
    if not staging.dominated(call) or not isinstance(cast, memref.CastOp):
        return None
    view = cast.source.owner
    if not isinstance(view, memref.SubviewOp) or view.strides or not isinstance(view.result.type, MemRefType):
        return None
    tile_type = view.result.type
    root = _root_argument(view.result, f)
    if root is None or view.source is not root or not isinstance(tile_type.layout, StridedLayoutAttr) \
            or len(view.static_sizes.get_values()) != tile_type.get_num_dims() or not 1 <= tile_type.get_num_dims() <= 4:
        return None
    block = _block_shape(_tile_shape(view.result, tile_type),
                         [constant_int(v) for v in call.operands[2:2 + tile_type.get_num_dims()]])
    if block is None or not 0 < prod(block) < 2**31:
        return None
    sends = [c for c in calls if _callee(c).startswith("copy_to_inbuffer")]
    if any(isinstance(c.operands[0].owner, memref.CastOp)
           and _root_argument(c.operands[0].owner.source, f) in (root, None) for c in sends):
        return None  # a send reads the operand (or an unknown one): the runtime orders it after the drain
    drains = [c for c in calls if _callee(c) == _DRAIN and staging.dominated(c)]
    if any(d.results[0].uses for d in drains):
        return None
    for drain in drains:  # the receives have landed where the tiles are added
        prev = drain.prev_op
        if not isinstance(prev, func.CallOp) or _callee(prev) != "dma_wait_recv":
            return None
    for free in [c for c in calls if _callee(c) == "dma_free" and staging.dominated(c)]:
        block_ops = list(free.parent_block().ops)  # type: ignore[union-attr]
        if not any(isinstance(o, func.CallOp) and o in drains for o in block_ops[:block_ops.index(free)]):
            return None  # the runtime's own drain at dma_free would not see the inline pending tile
    starts = [c for c in calls if _callee(c) == "dma_start_send" and staging.dominated(c)] if late else []
    return _Site(staging, call, view, root, block, drains, late, half, starts)


@dataclass
class _InlineDeferred(RewritePattern):
    """The deferred call: record the tile when it fills its block and nothing is pending."""

    site: _Site

    @op_type_rewrite_pattern
    def match_and_rewrite(self, call: func.CallOp, rewriter: PatternRewriter) -> None:
        site = self.site
        if call is not site.call or site.deferred is not None:
            return
        cells = site.make_cells()
        elem = site.view.result.type.element_type  # type: ignore[attr-defined]
        tile = site.view.result
        offset = call.operands[1]
        words = prod(site.block)

        def before(op: Operation) -> SSAValue:
            rewriter.insert(op, InsertPoint.before(call))
            return op.results[0]

        def index(value: int) -> SSAValue:
            return before(arith.ConstantOp(IntegerAttr(value, IndexType())))

        zero32 = before(arith.ConstantOp(IntegerAttr(0, i32)))
        parts = [before(arith.CmpiOp(before(memref.LoadOp.get(cells[c], [index(0)])), zero32, "eq"))
                 for c in ("pending", "runtime")]
        for k, (size, want) in enumerate(zip(site.view.static_sizes.get_values(), site.block)):
            if size == DYNAMIC_INDEX:
                dim = before(memref.DimOp(tile, index(k)))
                parts.append(before(arith.CmpiOp(dim, index(want), "eq")))
        start = before(arith.IndexCastOp(offset, IndexType()))
        window, size, _ = site.staging.place("out", elem, start, before)
        if site.half is not None:  # the tile's words lie in the half its receive lands in
            size = index(site.half)
        end = before(arith.AddiOp(start, index(words)))
        parts.append(before(arith.CmpiOp(start, size, "ult")))  # a negative offset (an error) is huge
        parts.append(before(arith.CmpiOp(end, size, "ule")))
        cond = parts[0]
        for part in parts[1:]:
            cond = before(arith.AndIOp(cond, part))

        b = _Builder(Block())
        for k, value in enumerate(site.view.offsets):
            b(memref.StoreOp.get(value, cells["at"], [b.index(k)]))
        b(memref.StoreOp.get(offset, cells["offset"], [b.index(0)]))
        b(memref.StoreOp.get(b(arith.ConstantOp(IntegerAttr(1, i32))), cells["pending"], [b.index(0)]))
        if site.late is not None:  # added after the next receive started: not charged there
            site.staging.declare(_TIMING_DEFERRED, [i32, i64], [])
            b(func.CallOp(_TIMING_DEFERRED, [b(arith.ConstantOp(IntegerAttr(_RECV, i32))),
                                             b(arith.ConstantOp(IntegerAttr(words, i64)))], []))
        b(scf.YieldOp(b(arith.AddiOp(offset, b(arith.ConstantOp(IntegerAttr(words, i32)))))))
        slow = func.CallOp(_callee(call), list(call.operands), [r.type for r in call.results])
        fallback = _Builder(Block())
        fallback(slow)
        fallback(memref.StoreOp.get(fallback(arith.ConstantOp(IntegerAttr(1, i32))), cells["runtime"],
                                    [fallback.index(0)]))
        fallback(scf.YieldOp(slow.results[0]))
        site.deferred = scf.IfOp(cond, [r.type for r in call.results], Region(b.block), Region(fallback.block))
        rewriter.replace(call, site.deferred)


__all__ = ["DmaInlineDeferredRecvsPass"]
