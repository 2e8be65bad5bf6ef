"""``scf-pack-reads{max-elements=N}``: copy the block of a read-only memref that a loop nest reads
into a contiguous local buffer, once, above the loop that reuses it.

Matches: every ``memref.load %M[idx]`` in an innermost ``scf.for`` where ``M`` is not written in the
function (directly or through a view of the memref it views), in functions whose only ops writing memory
are ``memref.store`` (no ``memref.copy``, calls, ``linalg`` or other ops taking a memref they may write). Its placement Z is the outermost enclosing ``scf.for`` such that every index is either
defined outside Z or the induction variable of a loop between Z and the load (Z included) whose
bounds are defined outside Z, with step 1 and a static extent (constant bounds, ``ub = lb + c`` or
``ub = minsi(lb + c, X)``, the point loops of a tiled nest), at least one index is such an
induction variable, and Z's own induction variable is not an index (so every iteration of Z reuses
the block); enclosing loops stop the search where an index stops qualifying.
Produces, when the block has at most ``max-elements`` elements: before Z a
buffer with one dimension per induction-variable index (its static extent; ``memref.alloc``, freed after Z), a copy nest over the loops' actual
bounds, and the load turned into a load of the buffer at ``iv - lb``.
For a matmul tiled as ``kt, jt, it`` tile loops around ``k, i, j``, the ``KC x NR`` panel of B is
packed in ``jt``'s body and read by all ``M / MR`` micro-kernels of ``it``: a contiguous panel
instead of rows of B a full row stride apart, which map to few L1 sets and evict each other.
Leaves alone: loads of written memrefs, loads without a placement (e.g. A's ``MR x k`` strip in
that matmul: its only qualifying loops are indexed by it, so nothing reuses it), blocks over
``max-elements``. Aliasing between ``M`` and the written memrefs is not
checked (as in ``scf-tile-and-interchange``: arguments of loops lowered from linalg ops).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from loom.passes.loop_nests import defined_inside, new_loop, require_positive, static_extent

_WRITERS = ("memref.store", "memref.copy", "func.call", "affine.store")
# ops that take a memref without writing it; any other op with a memref operand (linalg.fill, accel.recv,
# ...) may write it, so its function is left alone
_READERS = ("memref.load", "affine.load", "memref.dim", "memref.dealloc", "memref.extract_strided_metadata",
            "func.return", "scf.yield")


@dataclass(frozen=True)
class ScfPackReadsPass(ModulePass):
    name = "scf-pack-reads"

    max_elements: int = 65536

    def __post_init__(self) -> None:
        require_positive(self.name, "max-elements", self.max_elements)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            writers = [o for o in fn.walk() if o.name in _WRITERS or (
                o.name not in _READERS and o.name not in _VIEWS
                and any(isinstance(v.type, MemRefType) for v in o.operands))]
            if any(o.name != "memref.store" for o in writers):
                continue  # a copy or call may write anything
            written = {_root(o.operands[1]) for o in writers}
            for load in [o for o in fn.walk() if isinstance(o, memref.LoadOp)]:
                if _root(load.memref) in written or not _innermost(load):
                    continue
                placement = _placement(load)
                if placement is None:
                    continue
                z, dims = placement
                if math.prod(extent for _, extent in dims) > self.max_elements:
                    continue
                _pack(load, z, dims)


_VIEWS = ("memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.expand_shape",
          "memref.collapse_shape", "memref.view", "memref.transpose")


def _root(value: SSAValue) -> SSAValue:
    """The memref a view chain starts from: a store through a view of it writes it."""
    while isinstance(value.owner, Operation) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _innermost(load: memref.LoadOp) -> bool:
    loop = load.parent_op()
    return isinstance(loop, scf.ForOp) and not any(isinstance(o, (scf.ForOp, scf.ParallelOp))
                                                   for o in loop.body.walk())


def _placement(load: memref.LoadOp) -> tuple[scf.ForOp, list[tuple[scf.ForOp, int]]] | None:
    """The outermost valid placement Z that reuses the block (its induction variable is no index;
    the block has at least one dimension) and, per index that is an induction variable, (its loop, extent)."""
    best = None
    z = load.parent_op()
    while isinstance(z, scf.ForOp):
        dims = _dims(load, z)
        if dims is None:
            break
        if dims and z.body.block.args[0] not in load.indices:
            best = (z, dims)
        z = z.parent_op()
    return best


def _dims(load: memref.LoadOp, z: scf.ForOp) -> list[tuple[scf.ForOp, int]] | None:
    dims = []
    for v in load.indices:
        if not defined_inside(v, z):
            continue
        owner = v.block.parent_op() if isinstance(v, BlockArgument) else None
        if not isinstance(owner, scf.ForOp) or v is not owner.body.block.args[0] or (
                owner is not z and not z.is_ancestor(owner)):
            return None
        extent = static_extent(owner)
        if isinstance(extent, str) or extent.step != 1 or any(defined_inside(b, z) for b in (owner.lb, owner.ub)):
            return None
        if any(loop is owner for loop, _ in dims):
            return None  # one induction variable in two indices (a diagonal): not a box
        dims.append((owner, extent.trips))
    return dims


def _pack(load: memref.LoadOp, z: scf.ForOp, dims: list[tuple[scf.ForOp, int]]) -> None:
    block = z.parent_block()
    assert block is not None
    index = IndexType()
    source = load.memref
    # A heap buffer: gcc keeps a micro-kernel's accumulator array in registers next to a pointer,
    # but not next to a second local array (measured: 4.9 vs 28 GFLOP/s, 512^3 matmul)
    buffer = memref.AllocOp.get(source.type.element_type, shape=[e for _, e in dims])  # type: ignore[attr-defined]
    block.insert_op_before(buffer, z)
    block.insert_op_after(memref.DeallocOp.get(buffer), z)
    by_loop = {loop.body.block.args[0]: loop for loop, _ in dims}

    # The copy nest: one loop per buffer dimension over the original loop's bounds.
    one = arith.ConstantOp(IntegerAttr(1, index))
    block.insert_op_before(one, z)
    outer, body, copy_iv = None, None, {}
    for loop, _ in dims:
        nested, inner = new_loop(loop.lb, loop.ub, one.result)
        if body is not None:
            body.add_ops([nested, scf.YieldOp()])
        outer, body = outer or nested, inner
        copy_iv[loop.body.block.args[0]] = inner.args[0]
    assert outer is not None and body is not None
    value = memref.LoadOp.get(source, [copy_iv.get(v, v) for v in load.indices])
    offsets = _offsets(body, [(copy_iv[loop.body.block.args[0]], loop.lb) for loop, _ in dims])
    body.add_ops([value, memref.StoreOp.get(value, buffer, offsets), scf.YieldOp()])
    block.insert_op_before(outer, z)

    # The load reads the buffer at iv - lb.
    inner_block = load.parent_block()
    assert inner_block is not None
    here = Block()
    offsets = _offsets(here, [(v, by_loop[v].lb) for v in load.indices if v in by_loop])
    new_load = memref.LoadOp.get(buffer, offsets)
    here.add_op(new_load)
    for op in list(here.ops):
        op.detach()
        inner_block.insert_op_before(op, load)
    load.results[0].replace_all_uses_with(new_load.results[0])
    load.detach()
    load.erase()


def _offsets(body: Block, pairs: list[tuple[SSAValue, SSAValue]]) -> list[SSAValue]:
    out = []
    for iv, lb in pairs:
        sub = arith.SubiOp(iv, lb)
        body.add_op(sub)
        out.append(sub.result)
    return out
