"""``dma-inline-copies``: full tiles and literal words staged by the driver itself, not by a runtime call.

A hand-written driver packs the DMA staging buffer with a few row copies of a tile
whose shape it knows; ``convert-accel-to-runtime`` calls the runtime for every tile
and every opcode word instead (a memref descriptor built on the stack, validated,
normalised to rank 4, tallied and timed per call). This pass gives the generated
driver the hand-written code for the common case and keeps the call for the rest.

Matches: in a function that calls ``dma_init`` (and, double-buffered, once
``loom_dma_set_double_buffering`` after it, in the same block), the calls after them
(same block, or nested below a later op of it) of

* ``copy_to_inbuffer_padded_<t>(memref.cast %tile, %off, p0..p3)``,
* ``copy_from_outbuffer_padded_<t>`` / ``copy_from_outbuffer_padded_acc_<t>`` (same operands),
* ``write_literal(%word, %off)``,

where every dim of the tile's staging block is known statically (a constant pad > 0,
or a static tile dim) and the tile comes (through subviews and casts) from an
argument of the function.
Produces: one ``scf.if`` per call. Its then-branch runs when the tile fills its block
(dynamic dims compared with the block) and the words lie inside the staging window:
the tile, cast to its static block shape, is copied (``memref.copy``; an
``scf.for`` nest adding the words for ``_acc``) to or from a
``memref.reinterpret_cast`` of the window at ``%off``, and the offset after the block
is yielded; a literal is one ``memref.store``. The else-branch is the original call
(edge tiles needing padding, errors: the runtime reports them). The windows come from
``loom_dma_in_view_<t>`` / ``loom_dma_out_view_<t>`` called once after ``dma_init``
(an empty window while an error is pending). The words copied inline are counted per
operand and direction in a stack cell and added to the runtime's per-operand tally
(``loom_operand_tally_add``) before ``dma_free``, so transfer reports stay exact.
Double buffering: the input window is the whole buffer (``loom_dma_in_buffer_view_<t>``)
plus the start of the half being filled, kept in a stack cell that is read again
(``loom_dma_in_half_base``) after every ``dma_start_send``; receives stay deferred (runtime
calls), and sends of an operand a deferred receive writes keep their runtime call (it
drains the receives first).
Leaves alone: every other op; deferred receives; functions without ``dma_init``.

Timing model: inline copies are host time between runtime calls ("other" in the
measured mode), as for a hand-written driver. Each then-branch ends with
``loom_timing_driver_copied(direction, words)``: the deterministic host mode charges the
words there (a double-buffered driver stages the next tile before ``dma_wait_send`` of the
previous one, so the staging overlaps the send in flight); the measured mode ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    UnitAttr,
    UnrankedMemRefType,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from loom.passes.loop_nests import constant_int

_RUNTIME_PATH = "loom.runtime_path"  # marks the calls kept in the else-branches (not rewritten again)
_SEND, _RECV, _ACC = "send", "recv", "acc"
_COPIES = {
    **{f"copy_to_inbuffer_padded_{t}": _SEND for t in ("i32", "f32")},
    **{f"copy_from_outbuffer_padded_{t}": _RECV for t in ("i32", "f32")},
    **{f"copy_from_outbuffer_padded_acc_{t}": _ACC for t in ("i32", "f32")},
}
_DIRECTION = {_SEND: 0, _RECV: 1, _ACC: 1}  # LOOM_TRACE_SEND / LOOM_TRACE_RECV
_TIMING_HOOK = "loom_timing_driver_copied"  # a no-op unless a deterministic timeline runs


@dataclass(frozen=True)
class DmaInlineCopiesPass(ModulePass):
    name = "dma-inline-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decls: dict[str, FunctionType] = {}
        for f in [o for o in op.body.block.ops if isinstance(o, func.FuncOp) and o.body.blocks]:
            calls = [c for c in f.walk() if isinstance(c, func.CallOp)]
            top = f.body.blocks[0]
            inits = [c for c in calls if _callee(c) == "dma_init" and c.parent_block() is top]
            sessions = _sessions(top, inits, [c for c in calls if _callee(c) == "loom_dma_set_double_buffering"])
            if sessions is None:
                continue  # double buffering switched somewhere else: leave the function alone
            # one staging per DMA session (a function offloading several ops has one per op): the
            # windows of one dma_init are gone after its dma_free, and its tally cells count its copies
            for start, end, double_buffer in sessions:
                # double buffering: start after the switch (it resets the halves); receives stay deferred
                staging = _Staging(f, start, decls, double_buffer=double_buffer, end=end)
                staging.deferred_roots = {_root_argument(c.operands[0].owner.source, f) for c in calls
                                          if _callee(c).startswith("copy_from_outbuffer_deferred")
                                          and isinstance(c.operands[0].owner, memref.CastOp)}
                patterns = [_InlineTileCopy(staging), _InlineLiteral(staging)]
                PatternRewriteWalker(GreedyRewritePatternApplier(patterns),
                                     apply_recursively=False).rewrite_region(f.body)
                staging.track_halves(calls)
                staging.add_tallies(calls)
        for o in op.walk():
            o.attributes.pop(_RUNTIME_PATH, None)
        existing = {f.sym_name.data for f in op.body.block.ops if isinstance(f, func.FuncOp)}
        for name, ftype in decls.items():
            if name not in existing:
                op.body.block.add_op(func.FuncOp.external(name, ftype.inputs.data, ftype.outputs.data))


def _sessions(top: Block, inits: list[func.CallOp], halves: list[func.CallOp]
              ) -> list[tuple[func.CallOp, func.CallOp | None, bool]] | None:
    """(where staging starts, the next session's dma_init or None, double-buffered) per ``dma_init`` of
    the function's top block; None when a double-buffering switch is not one per session, after its init."""
    if any(h.parent_block() is not top for h in halves):
        return None
    out = []
    for i, init in enumerate(inits):
        end = inits[i + 1] if i + 1 < len(inits) else None
        lo, hi = top.get_operation_index(init), top.get_operation_index(end) if end else len(top.ops)
        mine = [h for h in halves if lo < top.get_operation_index(h) < hi]
        if len(mine) > 1 or (halves and not mine):
            return None
        out.append((mine[0] if mine else init, end, bool(mine)))
    if sum(d for _, _, d in out) != len(halves):
        return None
    return out


def _callee(call: func.CallOp) -> str:
    return call.callee.root_reference.data


@dataclass
class _Staging:
    """The staging windows and tally cells of one function, made once, right after its ``dma_init``."""

    func: func.FuncOp
    init: func.CallOp
    decls: dict[str, FunctionType]
    double_buffer: bool = False
    views: dict[tuple[str, str], SSAValue] = field(default_factory=dict)
    cells: dict[tuple[SSAValue, int], SSAValue] = field(default_factory=dict)
    anchor: Operation | None = None
    deferred_roots: set = field(default_factory=set)  # operands deferred receives write (not sent inline)
    base_cell: SSAValue | None = None  # double buffering: where the half being filled starts
    capacities: dict[str, SSAValue] = field(default_factory=dict)
    end: Operation | None = None  # the next session's dma_init: this staging's windows end there

    def _insert(self, op: Operation) -> SSAValue | None:
        Rewriter.insert_op(op, InsertPoint.after(self.anchor or self.init))
        self.anchor = op
        return op.results[0] if op.results else None

    def declare(self, name: str, inputs: list, outputs: list) -> None:
        self.decls[name] = FunctionType.from_lists(inputs, outputs)

    def window(self, side: str, elem) -> SSAValue:
        """``memref<?xT>`` over the input (``side="in"``) or output staging window; with double
        buffering, the input side is the whole buffer (``place`` adds the half's start)."""
        t = "f32" if isinstance(elem, Float32Type) else "i32"
        key = (side, t)
        if key not in self.views:
            ty = MemRefType(elem, [DYNAMIC_INDEX])
            name = f"loom_dma_in_buffer_view_{t}" if side == "in" and self.double_buffer else f"loom_dma_{side}_view_{t}"
            self.declare(name, [], [ty])
            view = self._insert(func.CallOp(name, [], [ty]))
            assert view is not None
            self.views[key] = view
        return self.views[key]

    def place(self, side: str, elem, start: SSAValue, before) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(window, words it holds, where word ``start`` of the transaction goes in it); ``before``
        inserts an op before the call being rewritten."""
        view = self.window(side, elem)
        if not (self.double_buffer and side == "in"):
            size = before(memref.DimOp(view, before(arith.ConstantOp(IntegerAttr(0, IndexType())))))
            return view, size, start
        if self.base_cell is None:
            self.declare("loom_dma_in_half_base", [], [i32])
            self.base_cell = self._insert(memref.AllocaOp.get(i32, shape=[1]))
            base = self._insert(func.CallOp("loom_dma_in_half_base", [], [i32]))
            zero = self._insert(arith.ConstantOp(IntegerAttr(0, IndexType())))
            self._insert(memref.StoreOp.get(base, self.base_cell, [zero]))  # type: ignore[arg-type]
        if "in" not in self.capacities:  # one half: the whole buffer's size / 2
            whole = self._insert(memref.DimOp(view, self._insert(arith.ConstantOp(IntegerAttr(0, IndexType())))))
            self.capacities["in"] = self._insert(arith.DivUIOp(whole, self._insert(
                arith.ConstantOp(IntegerAttr(2, IndexType())))))  # type: ignore[arg-type]
        base = before(memref.LoadOp.get(self.base_cell, [before(arith.ConstantOp(IntegerAttr(0, IndexType())))]))
        return view, self.capacities["in"], before(arith.AddiOp(start, before(arith.IndexCastOp(base, IndexType()))))

    def timing_hook(self, b: _Builder, direction: int, words: SSAValue) -> None:
        """``loom_timing_driver_copied(direction, words)`` right after an inline copy: the timeline's
        deterministic host charges the words there (before a ``dma_wait_send`` they overlap)."""
        self.declare(_TIMING_HOOK, [i32, i64], [])
        b(func.CallOp(_TIMING_HOOK, [b(arith.ConstantOp(IntegerAttr(direction, i32))), words], []))

    def track_halves(self, calls: list[func.CallOp]) -> None:
        """Double buffering: after every send the half being filled is read again."""
        if self.base_cell is None:
            return
        for send in [c for c in calls if _callee(c) == "dma_start_send" and self.dominated(c)]:
            base = func.CallOp("loom_dma_in_half_base", [], [i32])
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            store = memref.StoreOp.get(base, self.base_cell, [zero])
            Rewriter.insert_op([base, zero, store], InsertPoint.after(send))

    def dominated(self, op: Operation) -> bool:
        """True when ``op`` runs after ``dma_init`` (it, or an op enclosing it, follows the call)."""
        block = self.init.parent_block()
        node: Operation | None = op
        while node is not None and node.parent_block() is not block:
            node = node.parent_op()
        if node is None or node is self.init:
            return False
        at = block.get_operation_index(node)  # type: ignore[union-attr]
        return at > block.get_operation_index(self.init) and (  # type: ignore[union-attr]
            self.end is None or at < block.get_operation_index(self.end))  # type: ignore[union-attr]

    def cell(self, root: SSAValue, direction: int) -> SSAValue:
        """An i64 stack cell counting the words copied inline for (operand, direction)."""
        key = (root, direction)
        if key not in self.cells:
            cell = self._insert(memref.AllocaOp.get(i64, shape=[1]))
            zero = self._insert(arith.ConstantOp(IntegerAttr(0, i64)))
            index = self._insert(arith.ConstantOp(IntegerAttr(0, IndexType())))
            self._insert(memref.StoreOp.get(zero, cell, [index]))  # type: ignore[arg-type]
            assert cell is not None
            self.cells[key] = cell
        return self.cells[key]

    def add_tallies(self, calls: list[func.CallOp]) -> None:
        """Before every ``dma_free``: the runtime's tally += each cell."""
        if not self.cells:
            return
        for free in [c for c in calls if _callee(c) == "dma_free" and self.dominated(c)]:
            for (root, direction), cell in self.cells.items():
                rt = root.type
                assert isinstance(rt, MemRefType)
                unranked = UnrankedMemRefType.from_type(rt.element_type)
                self.declare("loom_operand_tally_add", [unranked, i32, i64], [])
                index = arith.ConstantOp(IntegerAttr(0, IndexType()))
                words = memref.LoadOp.get(cell, [index])
                cast = memref.CastOp.get(root, unranked)
                dir_value = arith.ConstantOp(IntegerAttr(direction, i32))
                call = func.CallOp("loom_operand_tally_add", [cast, dir_value, words], [])
                Rewriter.insert_op([index, words, cast, dir_value, call], InsertPoint.before(free))


def _root_argument(value: SSAValue, func_op: func.FuncOp) -> SSAValue | None:
    """The function argument a tile views (through subviews and casts), or None."""
    while isinstance(value.owner, (memref.SubviewOp, memref.CastOp)):
        value = value.owner.operands[0]
    if isinstance(value.owner, Block) and value.owner is func_op.body.blocks[0]:
        return value
    return None


def _upper_bound(value: SSAValue, depth: int = 24) -> int | None:
    """An upper bound of an index computed from constants, static dims and clamps (``minsi`` of a tile
    size and what is left of the problem: the extents the accel passes emit), or None. Constants
    and static dims are exact; the inline copy checks the actual size against the bound at run time."""
    op = value.owner
    if depth == 0 or not isinstance(op, Operation):
        return None
    if isinstance(op, arith.ConstantOp):
        return constant_int(value)
    if isinstance(op, arith.IndexCastOp):
        return _upper_bound(op.input, depth - 1)
    if isinstance(op, memref.DimOp):
        k = constant_int(op.index)
        shape = op.source.type.get_shape() if isinstance(op.source.type, MemRefType) else ()
        return shape[k] if k is not None and 0 <= k < len(shape) and shape[k] >= 0 else None
    bounds = [_upper_bound(v, depth - 1) for v in op.operands]
    if isinstance(op, (arith.MinSIOp, arith.MinUIOp)):
        known = [b for b in bounds if b is not None]
        return min(known) if known else None
    if None in bounds or len(bounds) != 2:
        return None
    a, b = bounds
    if isinstance(op, arith.AddiOp):
        return a + b
    if isinstance(op, arith.SubiOp) and isinstance(op.operands[1].owner, arith.ConstantOp):
        return a - b  # only a constant subtrahend: its bound is its value
    if isinstance(op, arith.MuliOp) and a >= 0 and b >= 0:
        return a * b
    if isinstance(op, (arith.MaxSIOp, arith.MaxUIOp)):
        return max(a, b)
    return None


def _tile_shape(tile: SSAValue, tile_type: MemRefType) -> list[int]:
    """The tile's full sizes, -1 where unknown: its type's static sizes, else the upper bound of a
    subview size (a clamped edge tile is smaller: the run-time check sends it through the runtime)."""
    shape = list(tile_type.get_shape())
    view = tile.owner
    if isinstance(view, memref.SubviewOp):
        static = list(view.static_sizes.get_values())
        if len(static) == len(shape):  # not rank-reducing: size k is the subview's k-th size
            dynamic = iter(view.sizes)
            for k, s in enumerate(static):
                operand = next(dynamic) if s == DYNAMIC_INDEX else None
                if shape[k] < 0 and operand is not None:
                    folded = _upper_bound(operand)
                    shape[k] = folded if folded is not None and folded >= 0 else -1
    return shape


def _block_shape(tile_shape: list[int], pads: list[int | None]) -> list[int] | None:
    """Each dim's staging size: its constant pad (> 0), else its known size; None if one is unknown."""
    block = []
    for size, pad in zip(tile_shape, pads):
        if pad is None:
            return None
        if pad > 0:
            if 0 <= size != pad:  # a static tile smaller than its block always needs padding
                return None
            block.append(pad)
        elif size >= 0:
            block.append(size)
        else:
            return None
    return block


def _static_type(tile_type: MemRefType, block: list[int]) -> MemRefType:
    """The tile's type with the block's static shape and the tile's own strides (dynamic offset)."""
    layout = tile_type.layout
    if isinstance(layout, NoneAttr):
        if all(s >= 0 for s in tile_type.get_shape()):
            return tile_type  # already static and row-major
        strides: list[int | None] = [None] * len(block)
    else:
        strides = [None if s is None else int(s) for s in layout.get_strides()]  # type: ignore[attr-defined]
    return MemRefType(tile_type.element_type, block, StridedLayoutAttr(strides, None))


def _row_major(block: list[int]) -> list[int]:
    strides, running = [], 1
    for size in reversed(block):
        strides.append(running)
        running *= size
    return list(reversed(strides))


class _Builder:
    """Appends ops to a block, returning results (the ops of one branch)."""

    def __init__(self, block: Block):
        self.block = block

    def __call__(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())))


def _guarded(rewriter: PatternRewriter, call: func.CallOp, condition_parts: list[SSAValue],
             then_block: Block) -> None:
    """Replace ``call`` by ``scf.if (all parts) {then_block} else {call}`` yielding the new offset."""
    cond = condition_parts[0]
    for part in condition_parts[1:]:
        cond = arith.AndIOp(cond, part).result
        rewriter.insert(cond.owner, InsertPoint.before(call))  # type: ignore[arg-type]
    fallback = Block()
    slow = func.CallOp(_callee(call), list(call.operands), [r.type for r in call.results])
    slow.attributes[_RUNTIME_PATH] = UnitAttr()
    fallback.add_ops([slow, scf.YieldOp(*slow.results)])
    branch = scf.IfOp(cond, [r.type for r in call.results], Region(then_block), Region(fallback))
    rewriter.replace(call, branch)


@dataclass
class _InlineTileCopy(RewritePattern):
    """A padded tile copy whose block is static: inline when the tile fills it and the window holds it."""

    staging: _Staging

    @op_type_rewrite_pattern
    def match_and_rewrite(self, call: func.CallOp, rewriter: PatternRewriter) -> None:
        kind = _COPIES.get(_callee(call))
        if kind is None or _RUNTIME_PATH in call.attributes or not self.staging.dominated(call):
            return
        unranked, offset, *pad_values = call.operands
        if not isinstance(unranked.owner, memref.CastOp):
            return
        tile = unranked.owner.source
        tile_type = tile.type
        if not isinstance(tile_type, MemRefType) or not 1 <= tile_type.get_num_dims() <= 4:
            return
        root = _root_argument(tile, self.staging.func)
        if self.staging.double_buffer and (kind != _SEND or root in self.staging.deferred_roots):
            return  # receives are deferred; a send must first see their values (the runtime drains them)
        block = _block_shape(_tile_shape(tile, tile_type),
                             [constant_int(v) for v in pad_values[:tile_type.get_num_dims()]])
        if root is None or block is None or not 0 < prod(block) < 2**31:
            return
        words = prod(block)
        elem = tile_type.element_type
        cell = self.staging.cell(root, _DIRECTION[kind])

        def before(op: Operation) -> SSAValue:
            rewriter.insert(op, InsertPoint.before(call))
            return op.results[0]

        # the condition: every dynamic dim fills the block, and [off, off + words) is inside the window
        parts = []
        for k, (size, want) in enumerate(zip(tile_type.get_shape(), block)):
            if size < 0:
                dim = before(memref.DimOp(tile, before(
                    arith.ConstantOp(IntegerAttr(k, IndexType())))))
                parts.append(before(arith.CmpiOp(dim, before(arith.ConstantOp(IntegerAttr(want, IndexType()))),
                                                 "eq")))
        start = before(arith.IndexCastOp(offset, IndexType()))
        window, size, position = self.staging.place("in" if kind == _SEND else "out", elem, start, before)
        end = before(arith.AddiOp(start, before(arith.ConstantOp(IntegerAttr(words, IndexType())))))
        parts.append(before(arith.CmpiOp(start, size, "ult")))  # a negative offset (an error) is huge
        parts.append(before(arith.CmpiOp(end, size, "ule")))

        b = _Builder(Block())
        full = b(memref.CastOp.get(tile, _static_type(tile_type, block)))
        words_type = MemRefType(elem, block, StridedLayoutAttr(_row_major(block), None))
        staged = b(memref.ReinterpretCastOp.from_dynamic(window, [position], block, _row_major(block), words_type))
        if kind == _SEND:
            b(memref.CopyOp(full, staged))
        elif kind == _RECV:
            b(memref.CopyOp(staged, full))
        else:
            _accumulate(b, full, staged, block, elem)
        zero = b.index(0)
        count = b(memref.LoadOp.get(cell, [zero]))
        moved = b(arith.ConstantOp(IntegerAttr(words, i64)))
        b(memref.StoreOp.get(b(arith.AddiOp(count, moved)), cell, [zero]))
        self.staging.timing_hook(b, _DIRECTION[kind], moved)
        b(scf.YieldOp(b(arith.AddiOp(offset, b(arith.ConstantOp(IntegerAttr(words, i32)))))))
        _guarded(rewriter, call, parts, b.block)


def _accumulate(b: _Builder, tile: SSAValue, words: SSAValue, block: list[int], elem) -> None:
    """tile[i..] += words[i..] over the static block: an ``scf.for`` nest (i32 adds wrap)."""
    ivs: list[SSAValue] = []
    body = b
    for size in block:
        inner = Block(arg_types=[IndexType()])
        loop = scf.ForOp(body.index(0), body.index(size), body.index(1), [], Region(inner))
        body(loop)
        ivs.append(inner.args[0])
        body = _Builder(inner)
    old = body(memref.LoadOp.get(tile, ivs))
    new = body(memref.LoadOp.get(words, ivs))
    add = arith.AddfOp(old, new) if isinstance(elem, Float32Type) else arith.AddiOp(old, new)
    body(memref.StoreOp.get(body(add), tile, ivs))
    for _ in block:
        body(scf.YieldOp())
        parent = body.block.parent_op()
        assert parent is not None
        body = _Builder(parent.parent_block())  # type: ignore[arg-type]


@dataclass
class _InlineLiteral(RewritePattern):
    """``write_literal(word, off)``: one store into the window when ``off`` is inside it."""

    staging: _Staging

    @op_type_rewrite_pattern
    def match_and_rewrite(self, call: func.CallOp, rewriter: PatternRewriter) -> None:
        if _callee(call) != "write_literal" or _RUNTIME_PATH in call.attributes or not self.staging.dominated(call):
            return
        word, offset = call.operands
        if word.type != i32:
            return
        def before(op: Operation) -> SSAValue:
            rewriter.insert(op, InsertPoint.before(call))
            return op.results[0]

        start = before(arith.IndexCastOp(offset, IndexType()))
        window, size, position = self.staging.place("in", i32, start, before)
        inside = before(arith.CmpiOp(start, size, "ult"))
        b = _Builder(Block())
        b(memref.StoreOp.get(word, window, [position]))
        self.staging.timing_hook(b, _DIRECTION[_SEND], b(arith.ConstantOp(IntegerAttr(1, i64))))
        b(scf.YieldOp(b(arith.AddiOp(offset, b(arith.ConstantOp(IntegerAttr(1, i32)))))))
        _guarded(rewriter, call, [inside], b.block)


__all__ = ["DmaInlineCopiesPass"]
