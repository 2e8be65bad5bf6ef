"""``scf-register-accumulate{max-elements=N}``: keep a reduction's output tile in a small local
buffer (registers, once the C compiler unrolls it) while the reduction loops run.

Matches: a ``memref.store %v, %M[idx]`` in an innermost ``scf.for`` whose enclosing loops form a
perfect nest (each body one ``scf.for`` plus the terminator) ending in
  - P, the innermost loops whose induction variables appear in ``idx`` (the output tile), each
    with a static extent: constant bounds, ``ub = lb + c``, or ``ub = minsi(lb + c, X)`` (a tile
    loop's point loop when the tile may not divide the loop), with a constant positive step;
  - R, at least one loop right above P whose induction variable does not appear in ``idx`` (the
    reduction band, e.g. ``k`` of a matmul, ``c, kh, kw`` of a convolution);
where the rest of ``idx`` is defined outside R, R and P carry no ``iter_args``, the only accesses
of ``M`` inside R are this store and one ``memref.load`` with the same indices, nothing else in
R writes memory, and the tile has at most ``max-elements`` elements.
Produces, before R: ``%acc = memref.alloca() : memref<c_P0 x ... x T>`` filled from ``M``'s tile;
R with each P loop rebased to ``0 .. c`` step 1 (the original index is ``lb + iv * step``) and the
load/store of ``M`` turned into a load/store of ``%acc``; after R the tile is written back. With
``minsi`` bounds the whole thing runs under ``scf.if`` (every such P loop has its full extent);
partial tiles run the original nest in the ``else`` branch.
Why: a matmul's or convolution's innermost statement loads and stores ``C`` every iteration of
the reduction; with the tile in a fixed-size local array gcc keeps the accumulators in vector
registers (constant trip counts, no aliasing with the arguments) and the loop body becomes loads
of the inputs and FMAs: the register-blocked micro-kernel of BLAS libraries.
Leaves alone (a remark on the ``loom.passes`` logger when a reduction band exists): everything
not matching. Like ``scf-tile-and-interchange``, aliasing between ``M`` and the memrefs only read
in R is not checked (true for arguments of loops lowered from linalg ops, and enforced at call
time for native kernels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from loom.passes.loop_nests import (StaticExtent, defined_inside, new_loop, remarks, require_positive, static_extent,
                                   where)

_WRITES = ("memref.store", "memref.copy", "func.call", "affine.store", "memref.alloc", "memref.dealloc")


@dataclass(frozen=True)
class ScfRegisterAccumulatePass(ModulePass):
    name = "scf-register-accumulate"

    max_elements: int = 128

    def __post_init__(self) -> None:
        require_positive(self.name, "max-elements", self.max_elements)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for store in [o for o in op.walk() if isinstance(o, memref.StoreOp)]:
            plan = _plan(store, self.max_elements)
            if isinstance(plan, str):
                remarks.warning("%s: %s: left alone: %s", self.name, where(store.parent_op()), plan)
            elif plan is not None:
                _rewrite(plan)


@dataclass
class _Plan:
    store: memref.StoreOp
    load: memref.LoadOp
    reduction_root: scf.ForOp
    tile: list[scf.ForOp]
    extents: list[StaticExtent]


def _plan(store: memref.StoreOp, max_elements: int) -> _Plan | str | None:
    """What to rewrite for ``store``, a reason it cannot be done, or None when there is no reduction band."""
    inner = store.parent_op()
    if not isinstance(inner, scf.ForOp) or any(isinstance(o, (scf.ForOp, scf.ParallelOp)) for o in inner.body.walk()):
        return None
    chain = [inner]
    while isinstance(parent := chain[0].parent_op(), scf.ForOp) and _only_child(parent) is chain[0]:
        chain.insert(0, parent)
    indices = list(store.indices)
    ivs_used = {v for v in indices}
    tile: list[scf.ForOp] = []
    reduction: list[scf.ForOp] = []
    for loop in reversed(chain):
        iv = loop.body.block.args[0]
        if not reduction and iv in ivs_used:
            tile.insert(0, loop)
        elif tile and iv not in ivs_used:
            reduction.insert(0, loop)
        else:
            break
    if not tile or not reduction:
        return None
    root = reduction[0]
    if any(loop.iter_args for loop in (*reduction, *tile)):
        return "a loop of the nest carries iter_args"
    tile_ivs = {loop.body.block.args[0] for loop in tile}
    if any(v not in tile_ivs and defined_inside(v, root) for v in indices):
        return "an index of the store depends on the reduction loops other than through its induction variable"
    extents = []
    for loop in tile:
        extent = static_extent(loop)
        if isinstance(extent, str):
            return extent
        if any(defined_inside(v, root) for v in (loop.lb, loop.ub, loop.step)):
            return "the bounds of an output-tile loop depend on the reduction loops"
        extents.append(extent)
    if math.prod(e.trips for e in extents) > max_elements:
        return f"the output tile has {math.prod(e.trips for e in extents)} elements (max-elements={max_elements})"
    target = store.memref
    accesses = [o for o in root.walk() if target in o.operands]
    loads = [o for o in accesses if isinstance(o, memref.LoadOp) and list(o.indices) == indices
             and o.parent_op() is inner]
    if len(accesses) != 2 or len(loads) != 1:
        return "the stored memref has other accesses in the nest than one load and the store at the same indices"
    if any(o.name in _WRITES and o is not store for o in root.walk()):
        return "the nest writes memory other than through the one store"
    return _Plan(store, loads[0], root, tile, extents)


def _only_child(loop: scf.ForOp) -> Operation | None:
    ops = list(loop.body.block.ops)
    return ops[0] if len(ops) == 2 and isinstance(ops[0], scf.ForOp) else None


def _rewrite(plan: _Plan) -> None:
    root = plan.reduction_root
    block = root.parent_block()
    assert block is not None

    def before(op: Operation) -> SSAValue:
        block.insert_op_before(op, root)
        return op.results[0]

    index = IndexType()
    guards = [e.guard for e in plan.extents if e.guard is not None]
    if guards:
        fallback = root.clone()
        full: SSAValue | None = None
        for ub, span in guards:
            lb = next(e.lb for e in plan.extents if e.guard is not None and e.guard[0] is ub)
            size = before(arith.SubiOp(ub, lb))
            ok = before(arith.CmpiOp(size, before(arith.ConstantOp(IntegerAttr(span, index))), "eq"))
            full = ok if full is None else before(arith.AndIOp(full, ok))
        fast, slow = Block(), Block()
        branch = scf.IfOp(full, [], [fast], [slow])
        block.insert_op_before(branch, root)
        root.detach()
        fast.add_ops([root, scf.YieldOp()])
        slow.add_ops([fallback, scf.YieldOp()])
        block = fast

    target = plan.store.memref
    element = target.type.element_type  # type: ignore[attr-defined]
    acc = before(memref.AllocaOp.get(element, shape=[e.trips for e in plan.extents]))
    zero = before(arith.ConstantOp(IntegerAttr(0, index)))
    one = before(arith.ConstantOp(IntegerAttr(1, index)))
    trips = [before(arith.ConstantOp(IntegerAttr(e.trips, index))) for e in plan.extents]
    tile_ivs = [loop.body.block.args[0] for loop in plan.tile]
    indices = list(plan.store.indices)

    def copy_nest(to_acc: bool) -> scf.ForOp:
        outer, body, ivs = None, None, []
        for trip in trips:
            loop, inner = new_loop(zero, trip, one)
            if body is not None:
                body.add_op(loop)
                body.add_op(scf.YieldOp())
            outer, body = outer or loop, inner
            ivs.append(inner.args[0])
        assert body is not None and outer is not None
        originals = {iv: _absolute(body, e, k) for iv, e, k in zip(tile_ivs, plan.extents, ivs)}
        where_in_m = [originals.get(v, v) for v in indices]
        if to_acc:
            value = memref.LoadOp.get(target, where_in_m)
            body.add_ops([value, memref.StoreOp.get(value, acc, ivs)])
        else:
            value = memref.LoadOp.get(acc, ivs)
            body.add_ops([value, memref.StoreOp.get(value, target, where_in_m)])
        body.add_op(scf.YieldOp())
        return outer

    block.insert_op_before(copy_nest(True), root)
    block.insert_op_after(copy_nest(False), root)

    # Rebase the tile loops to 0 .. trips and index the buffer with their induction variables.
    inner_body = plan.tile[-1].body.block
    for loop, extent, trip in zip(plan.tile, plan.extents, trips):
        iv = loop.body.block.args[0]
        uses = list(iv.uses)
        loop.operands = [zero, trip, one, *loop.operands[3:]]
        absolute = _absolute(inner_body, extent, iv, at_start=True)
        for use in uses:
            use.operation.operands = [absolute if k == use.index else v
                                      for k, v in enumerate(use.operation.operands)]
    load = memref.LoadOp.get(acc, tile_ivs)
    inner_body.insert_op_before(load, plan.load)
    plan.load.results[0].replace_all_uses_with(load.results[0])
    plan.load.detach()
    plan.load.erase()
    inner_body.insert_op_before(memref.StoreOp.get(plan.store.value, acc, tile_ivs), plan.store)
    plan.store.detach()
    plan.store.erase()


def _absolute(body: Block, extent: StaticExtent, iv: SSAValue, at_start: bool = False) -> SSAValue:
    """``lb + iv * step`` emitted in ``body`` (at its start, or appended)."""
    ops: list[Operation] = []
    scaled = iv
    if extent.step != 1:
        c = arith.ConstantOp(IntegerAttr(extent.step, iv.type))
        ops += [c, arith.MuliOp(iv, c.result)]
        scaled = ops[-1].results[0]
    ops.append(arith.AddiOp(extent.lb, scaled))
    if at_start and body.first_op is not None:
        body.insert_ops_before(ops, body.first_op)
    else:
        body.add_ops(ops)
    return ops[-1].results[0]
