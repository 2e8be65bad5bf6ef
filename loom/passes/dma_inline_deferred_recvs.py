"""``dma-inline-deferred-recvs``: a double-buffered driver's receive of a full tile is added into its
destination by the driver itself, one step late, as a hand-written double-buffered driver does.

``convert-accel-to-runtime{double-buffer=true}`` defers every receive copy to the runtime
(``copy_from_outbuffer_deferred_<acc_>?<t>`` records a validated copy of the tile's descriptor;
``loom_dma_drain_recvs`` runs the recorded copies after the receive completed). That is two
runtime calls, a descriptor validation and a generic copy per tile; ``dma-inline-copies``
leaves them alone. This pass keeps the deferral but not the calls: the deferred call records
the tile's position in stack cells, and each drain adds the recorded tile inline.

Matches: a function that calls ``dma_init`` then ``loom_dma_set_double_buffering`` (once, both in
its entry block, as ``dma-inline-copies`` requires), has exactly one deferred receive call whose
tile is ``memref.subview`` of a function argument (not rank-reducing, static strides; through a
``memref.cast`` to unranked) with a static staging block (as in ``dma-inline-copies``), sends no
tile of that argument, and calls ``loom_dma_drain_recvs`` (result unused) before every
``dma_free`` in the same block.
Produces:
* the deferred call becomes ``scf.if``: when the tile fills its block, the words lie inside the
  output window and nothing is pending (neither inline nor in the runtime), the subview's dynamic
  offsets and the staging offset are stored in stack cells and a pending flag is set; else the
  original call (edge tiles, errors) and a flag saying the runtime holds a deferred copy;
* every ``loom_dma_drain_recvs`` call becomes: if the inline flag is set, the recorded tile
  (the subview rebuilt from the cells with the block's static sizes) += (or =) the words of a
  ``memref.reinterpret_cast`` of the output window (an ``scf.for`` nest / ``memref.copy``), then
  ``loom_timing_driver_copied(1, words)``; then, if the runtime flag is set, the runtime drain.
  The inline tile is always the older one (the runtime path is taken while it is pending), so
  copies still run in call order.
* the words added inline are tallied per operand before ``dma_free`` (``loom_operand_tally_add``).
Leaves alone: every other function and op (several deferred call sites, e.g. a coalesced receive of
several tiles: the runtime keeps them in order); a function with late receives
(``loom_dma_start_recv_late``, what ``convert-accel-to-runtime{double-buffer=true}`` emits since
receives wait for the next send): the runtime starts such a receive after the drain point the
inline add would use and picks the output half it lands in, so only the runtime's copy is right.
"""

from __future__ import annotations

from dataclasses import dataclass
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
                        site.rewrite_drain(drain)
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
    deferred: scf.IfOp | None = None
    cells: dict[str, SSAValue] | None = None

    def make_cells(self) -> dict[str, SSAValue]:
        """pending (i32 0/1), runtime (i32 0/1: the runtime holds a deferred copy), the staging
        offset (i32) and the subview's dynamic offsets (index), zeroed right after the switch."""
        if self.cells is None:
            s = self.staging
            zero = s._insert(arith.ConstantOp(IntegerAttr(0, IndexType())))
            zero32 = s._insert(arith.ConstantOp(IntegerAttr(0, i32)))
            self.cells = {}
            for name, ty, n in (("pending", i32, 1), ("runtime", i32, 1), ("offset", i32, 1),
                                ("at", IndexType(), max(len(self.view.offsets), 1))):
                cell = s._insert(memref.AllocaOp.get(ty, shape=[n]))
                assert cell is not None
                if ty == i32:
                    s._insert(memref.StoreOp.get(zero32, cell, [zero]))  # type: ignore[arg-type]
                self.cells[name] = cell
        return self.cells

    def rewrite_drain(self, drain: func.CallOp) -> None:
        """``loom_dma_drain_recvs()`` -> inline add of the pending tile, then the runtime's drain if it
        holds a deferred copy."""
        cells = self.make_cells()
        elem = self.view.result.type.element_type  # type: ignore[attr-defined]
        ops: list[Operation] = []

        def add(o: Operation) -> SSAValue:
            ops.append(o)
            return o.results[0] if o.results else None  # type: ignore[return-value]

        zero = add(arith.ConstantOp(IntegerAttr(0, IndexType())))
        one32 = add(arith.ConstantOp(IntegerAttr(1, i32)))
        zero32 = add(arith.ConstantOp(IntegerAttr(0, i32)))
        pending = add(arith.CmpiOp(add(memref.LoadOp.get(cells["pending"], [zero])), one32, "eq"))
        b = _Builder(Block())
        offsets = [b(memref.LoadOp.get(cells["at"], [b.index(k)])) for k in range(len(self.view.offsets))]
        tile_type = self.view.result.type
        assert isinstance(tile_type, MemRefType)
        tile = b(memref.SubviewOp(self.root, offsets, [], [], self.view.static_offsets, self.block,
                                  self.view.static_strides, _static_type(tile_type, self.block)))
        window = self.staging.window("out", elem)
        start = b(arith.IndexCastOp(b(memref.LoadOp.get(cells["offset"], [b.index(0)])), IndexType()))
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
        b(memref.StoreOp.get(b(arith.ConstantOp(IntegerAttr(0, i32))), cells["pending"], [b.index(0)]))
        self.staging.timing_hook(b, _RECV, moved)
        b(scf.YieldOp())
        add(scf.IfOp(pending, [], Region(b.block), Region(Block([scf.YieldOp()]))))
        held = add(arith.CmpiOp(add(memref.LoadOp.get(cells["runtime"], [zero])), one32, "eq"))
        r = _Builder(Block())
        r(func.CallOp(_DRAIN, [], [i32]))
        r(memref.StoreOp.get(zero32, cells["runtime"], [r.index(0)]))
        r(scf.YieldOp())
        add(scf.IfOp(held, [], Region(r.block), Region(Block([scf.YieldOp()]))))
        Rewriter.insert_op(ops, InsertPoint.before(drain))
        drain.detach()
        drain.erase()


def _site(f: func.FuncOp, decls: dict) -> _Site | None:
    """The function's one inlinable deferred receive, or None (see the module docstring)."""
    calls = [c for c in f.walk() if isinstance(c, func.CallOp)]
    top = f.body.blocks[0]
    inits = [c for c in calls if _callee(c) == "dma_init" and c.parent_block() is top]
    halves = [c for c in calls if _callee(c) == "loom_dma_set_double_buffering"]
    if not inits or len(halves) != 1 or halves[0].parent_block() is not top \
            or top.get_operation_index(halves[0]) < top.get_operation_index(inits[0]):
        return None
    if any(_callee(c) == _LATE for c in calls):
        return None  # the runtime picks the landing half and starts the receive later: it must run the copy
    deferred = [c for c in calls if _callee(c) in _DEFERRED]
    if len(deferred) != 1:
        return None
    (call,) = deferred
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
    for free in [c for c in calls if _callee(c) == "dma_free" and staging.dominated(c)]:
        block_ops = list(free.parent_block().ops)  # type: ignore[union-attr]
        if not any(isinstance(o, func.CallOp) and o in drains for o in block_ops[:block_ops.index(free)]):
            return None  # the runtime's own drain at dma_free would not see the inline pending tile
    return _Site(staging, call, view, root, block, drains)


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
        b(scf.YieldOp(b(arith.AddiOp(offset, b(arith.ConstantOp(IntegerAttr(words, i32)))))))
        slow = func.CallOp(_callee(call), list(call.operands), [r.type for r in call.results])
        fallback = _Builder(Block())
        fallback(slow)
        fallback(memref.StoreOp.get(fallback(arith.ConstantOp(IntegerAttr(1, i32))), cells["runtime"],
                                    [fallback.index(0)]))
        fallback(scf.YieldOp(slow.results[0]))
        site.deferred = scf.IfOp(cond, [r.type for r in call.results], Region(b.block), Region(fallback.block))
        rewriter.replace_op(call, site.deferred)


__all__ = ["DmaInlineDeferredRecvsPass"]
