"""``convert-esn-to-linalg``: Einstein expressions (``esn.let``) to linalg on memrefs.

Matches: every ``esn.let`` (dialect ``loom.dialects.esn``) inside a function.
Produces, per let:
  * without ``dest``: a ``memref.alloc`` of the result (dynamic sizes from the
    let's extents) and a ``memref.dealloc`` before the block's ``func.return``;
  * with reduction indices: a ``linalg.fill`` of the target with the reduction's
    identity (0 for +, 1 for *, +-inf / integer extremes for min / max);
  * ``linalg.matmul`` when the let is exactly ``C[i, j] = <+ k< A[i, k] * B[k, j]``
    on floats;
  * otherwise one ``linalg.generic``: loops = bound indices (parallel) then
    reduction indices (reduction); each direct subscript (distinct index
    variables only) becomes an input with a projected-permutation indexing map;
    other subscripts (gathers, constants, repeated indices, and every subscript
    inside a nested region such as an ``scf.if`` arm) become ``memref.load``
    inside the body, from ``linalg.index`` values; the reducer region combines the
    element with the output's current value.
    A reduction index that appears in no direct subscript (only in gathers, or
    on a unit axis) gets a scratch bound carrier: a ``memref<N x i8>`` input with
    map ``(d) -> (d_k)`` whose only job is to give the loop its bound (allocated
    before, freed at the block's return; the body never reads it).
Leaves alone: everything else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from loom.dialects.esn import LetOp, ReductionOp, SubscriptOp, YieldOp


def _identity(kind: str, elem) -> arith.ConstantOp:
    is_float = isinstance(elem, AnyFloat)
    if kind == "+":
        value = 0
    elif kind == "*":
        value = 1
    elif kind == "min":
        value = math.inf if is_float else 2**63 - 1
    else:
        value = -math.inf if is_float else -(2**63)
    if is_float:
        return arith.ConstantOp(FloatAttr(float(value), elem))
    return arith.ConstantOp(IntegerAttr(int(value), elem))


def _where(op: Operation) -> str:
    loc = op.location
    return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: " if hasattr(loc, "filename") else ""


class _LetLowering:
    def __init__(self, let: LetOp):
        self.let = let
        self.nb = let.bound_count
        reductions = sorted((op for op in let.body.walk() if isinstance(op, ReductionOp)),
                            key=lambda r: r.position.value.data)
        self.nr = len(reductions)
        self.dim_of: dict[SSAValue, int] = {a: k for k, a in enumerate(let.body.block.args)}
        for r in reductions:
            self.dim_of[r.index] = self.nb + r.position.value.data
        self.ndims = self.nb + self.nr

    def direct_map(self, sub: SubscriptOp) -> AffineMap | None:
        dims = [self.dim_of.get(i) for i in sub.indices]
        if any(d is None for d in dims) or len(set(dims)) != len(dims):
            return None
        return AffineMap(self.ndims, 0, tuple(AffineExpr.dimension(d) for d in dims))

    def target(self, rewriter: Rewriter) -> SSAValue:
        let = self.let
        if let.dest is not None:
            return let.dest
        rtype = let.result[0].type
        assert isinstance(rtype, MemRefType)
        dynamic = [let.extents[k] for k, n in enumerate(rtype.get_shape()) if n == DYNAMIC_INDEX]
        alloc = memref.AllocOp(dynamic, [], rtype)
        rewriter.insert_op(alloc, InsertPoint.before(let))
        block = let.parent_block()
        last = block.last_op if block is not None else None
        if isinstance(last, func.ReturnOp):
            rewriter.insert_op(memref.DeallocOp.get(alloc.memref), InsertPoint.before(last))
        return alloc.memref

    def lower(self, rewriter: Rewriter) -> None:
        let = self.let
        out = self.target(rewriter)
        elem = out.type.element_type  # type: ignore[attr-defined]
        if self.nr:
            fill_value = _identity(let.kind.data, elem)
            rewriter.insert_op(fill_value, InsertPoint.before(let))
            rewriter.insert_op(self.fill(fill_value.result, out, elem), InsertPoint.before(let))
        new = self.as_matmul(out) or self.as_generic(out, elem, rewriter)
        new.location = let.location
        rewriter.insert_op(new, InsertPoint.before(let))
        if let.result:
            let.result[0].replace_all_uses_with(out)
        rewriter.erase_op(let)

    def fill(self, value: SSAValue, out: SSAValue, elem) -> Operation:
        if isinstance(elem, AnyFloat | IntegerType):
            return linalg.FillOp([value], [out], res=())
        # linalg.fill's region takes only float and integer elements: an index target (an index sum)
        # is filled by a generic yielding the identity at every point
        rank = out.type.get_num_dims()  # type: ignore[attr-defined]
        block = Block(arg_types=[elem])
        block.add_op(linalg.YieldOp(value))
        identity = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) for d in range(rank)))
        return linalg.GenericOp([], [out], Region(block), [AffineMapAttr(identity)],
                                [IteratorTypeAttr.parallel()] * rank)

    def as_matmul(self, out: SSAValue) -> Operation | None:
        let = self.let
        if (self.nb, self.nr, let.kind.data) != (2, 1, "+") or not isinstance(out.type.element_type, AnyFloat):
            return None
        ops = [op for op in let.body.block.ops if not isinstance(op, ReductionOp)]
        if len(ops) != 4 or not isinstance(ops[2], arith.MulfOp) or not isinstance(ops[3], YieldOp):
            return None
        a, b = ops[0], ops[1]
        if not (isinstance(a, SubscriptOp) and isinstance(b, SubscriptOp)):
            return None
        if ops[3].values[0] is not ops[2].result or {ops[2].lhs, ops[2].rhs} != {a.result, b.result}:
            return None
        dims = [[self.dim_of.get(i) for i in s.indices] for s in (a, b)]
        # the product commutes, not the subscripts: B[k, j] * A[i, k] is the same matmul with the
        # operands swapped, while A[j, k] * B[k, i] (a transposed result) is no matmul at all
        if dims == [[2, 1], [0, 2]]:
            a, b = b, a
        elif dims != [[0, 2], [2, 1]]:
            return None
        return linalg.MatmulOp([a.source, b.source], [out])

    def bound_carrier(self, d: int, rewriter: Rewriter) -> SSAValue:
        """A scratch ``memref<N x i8>`` whose only job is to give loop ``d`` its bound: linalg takes loop
        bounds from operand shapes, and a reduction index used only in gathers (or a unit axis) has none.
        Its elements are never read by the body; it is freed before the block's return."""
        extent = self.let.extents[d]
        owner = extent.owner
        static = (owner.value.value.data if isinstance(owner, arith.ConstantOp)
                  and isinstance(owner.value, IntegerAttr) else None)
        carrier_type = MemRefType(IntegerType(8), [DYNAMIC_INDEX if static is None else static])
        alloc = memref.AllocOp([] if static is not None else [extent], [], carrier_type)
        rewriter.insert_op(alloc, InsertPoint.before(self.let))
        block = self.let.parent_block()
        last = block.last_op if block is not None else None
        if isinstance(last, func.ReturnOp):
            rewriter.insert_op(memref.DeallocOp.get(alloc.memref), InsertPoint.before(last))
        return alloc.memref

    def as_generic(self, out: SSAValue, elem, rewriter: Rewriter) -> Operation:
        let = self.let
        inputs: list[SSAValue] = []
        maps: list[AffineMap] = []
        direct: dict[SubscriptOp, int] = {}
        for op in let.body.block.ops:
            if isinstance(op, SubscriptOp) and (m := self.direct_map(op)) is not None:
                direct[op] = len(inputs)
                inputs.append(op.source)
                maps.append(m)
        covered = {d for m in maps for d in range(self.ndims) if AffineExpr.dimension(d) in m.results}
        for d in range(self.nb, self.ndims):
            if d not in covered:
                inputs.append(self.bound_carrier(d, rewriter))
                maps.append(AffineMap(self.ndims, 0, (AffineExpr.dimension(d),)))
        block = Block(arg_types=[v.type.element_type for v in inputs] + [elem])  # type: ignore[attr-defined]
        mapping: dict[SSAValue, SSAValue] = {}

        def ensure(values) -> None:
            for v in values:
                if v in self.dim_of and v not in mapping:
                    index = linalg.IndexOp(self.dim_of[v])
                    block.add_op(index)
                    mapping[v] = index.result

        result = None
        for op in let.body.block.ops:
            if isinstance(op, ReductionOp):
                continue
            if isinstance(op, YieldOp):
                ensure(op.values)
                result = mapping.get(op.values[0], op.values[0])
                continue
            if op in direct:
                mapping[op.result] = block.args[direct[op]]
                continue
            ensure(op.operands)
            if isinstance(op, SubscriptOp):
                load = memref.LoadOp.get(op.source, [mapping.get(i, i) for i in op.indices])
                load.location = op.location
                block.add_op(load)
                mapping[op.result] = load.res
                continue
            for nested in op.walk():  # ops in regions (scf.if arms) may use indices too
                ensure(nested.operands)
            clone = op.clone(value_mapper=mapping)
            block.add_op(clone)
            for nested in [o for o in clone.walk() if isinstance(o, SubscriptOp)]:
                load = memref.LoadOp.get(nested.source, list(nested.indices))
                load.location = nested.location
                Rewriter.replace_op(nested, load)
        assert result is not None
        if self.nr:
            reducer = let.reducer.block
            rmap = {reducer.args[0]: block.args[-1], reducer.args[1]: result}
            for op in reducer.ops:
                if isinstance(op, YieldOp):
                    result = rmap.get(op.values[0], op.values[0])
                else:
                    block.add_op(op.clone(value_mapper=rmap))
        block.add_op(linalg.YieldOp(result))
        out_map = AffineMap(self.ndims, 0, tuple(AffineExpr.dimension(d) for d in range(self.nb)))
        iterators = [IteratorTypeAttr.parallel()] * self.nb + [IteratorTypeAttr.reduction()] * self.nr
        return linalg.GenericOp(inputs, [out], Region(block), [AffineMapAttr(m) for m in maps + [out_map]], iterators)


@dataclass(frozen=True)
class ConvertEsnToLinalgPass(ModulePass):
    name = "convert-esn-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewriter = Rewriter()
        for let in [o for o in op.walk() if isinstance(o, LetOp)]:
            _LetLowering(let).lower(rewriter)
