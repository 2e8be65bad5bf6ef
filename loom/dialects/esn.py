"""The ``esn`` dialect: Einstein-notation expressions over memrefs (EVEREST D4.5 section 4.2, Figure 10).

=====================  ==========================================================
op                     meaning
=====================  ==========================================================
``esn.let``            one Einstein expression. Operands: ``extents`` (index), the
                       upper bound of every index: first the bound indices (the
                       body block's arguments, the result's axes in order), then
                       the reduction indices (``esn.reduction {position = p}``
                       reads ``extents[bound + p]``); an optional ``dest`` memref
                       the value is written to. Without ``dest`` the op returns a
                       fresh memref. Regions: ``body`` (yields the element) and
                       ``reducer`` (two scalars -> their combination; empty
                       without reduction indices).
``esn.reduction``      a reduction index of the enclosing let
``esn.subscript``      ``%A[%i, %k]``: one element of a memref; an index operand
                       that is not a bound/reduction index is a gather
``esn.yield``          terminator of ``body`` and ``reducer``
=====================  ==========================================================

Domains: each index's extent is one ``extents`` operand; elaboration has already
checked it congruent with every direct subscript use (statically, or by the
caller at run time for dynamic sizes). The verifier checks what it can of
hand-written IR: reduction positions in range and each used once, and constant
extents equal to the static sizes of the target's axes and of every axis a
bound or reduction index directly subscripts. Lowered by ``convert-esn-to-linalg``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, StringAttr, i64
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

REDUCTION_KINDS = ("", "+", "*", "min", "max")


@irdl_op_definition
class LetOp(IRDLOperation):
    name = "esn.let"
    extents = var_operand_def(IndexType)
    dest = opt_operand_def(MemRefType)
    result = var_result_def(MemRefType)
    kind = prop_def(StringAttr)
    body = region_def()
    reducer = region_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, extents, dest, result_type, kind: str, body: Region, reducer: Region):
        super().__init__(
            operands=[list(extents), [dest] if dest is not None else []],
            result_types=[[result_type] if result_type is not None else []],
            properties={"kind": StringAttr(kind)},
            regions=[body, reducer],
        )

    @property
    def bound_count(self) -> int:
        return len(self.body.block.args)

    def verify_(self) -> None:
        if self.kind.data not in REDUCTION_KINDS:
            raise VerifyException(f"esn.let: unknown reduction kind {self.kind.data!r}")
        if (self.dest is None) == (not self.result):
            raise VerifyException("esn.let: exactly one of a dest operand and a result")
        target = self.dest.type if self.dest is not None else self.result[0].type
        assert isinstance(target, MemRefType)
        if target.get_num_dims() != self.bound_count:
            raise VerifyException(f"esn.let: {self.bound_count} bound indices but a rank-{target.get_num_dims()} "
                                  "target")
        reductions = [op for op in self.body.walk() if isinstance(op, ReductionOp)]
        if self.bound_count + len(reductions) != len(self.extents):
            raise VerifyException("esn.let: one extent per bound and reduction index expected")
        if reductions and (not self.kind.data or len(self.reducer.blocks) != 1):
            raise VerifyException("esn.let: reduction indices need a kind and a reducer region")
        positions = sorted(r.position.value.data for r in reductions)
        if positions != list(range(len(reductions))):
            raise VerifyException(f"esn.let: reduction positions {positions}: expected each of 0..{len(reductions) - 1} "
                                  "once")
        self._verify_extents(target, reductions)

    def _verify_extents(self, target: MemRefType, reductions) -> None:
        """Constant extents against the static axes they index (the lowering takes the axes' sizes)."""
        from xdsl.dialects.arith import ConstantOp

        def constant(value: SSAValue) -> int | None:
            owner = value.owner
            if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
                return owner.value.value.data
            return None

        extents = [constant(e) for e in self.extents]
        slot = {arg: k for k, arg in enumerate(self.body.block.args)}
        slot.update({r.index: self.bound_count + r.position.value.data for r in reductions})
        uses = [(target, k, k, "the target") for k in range(self.bound_count)]
        for op in self.body.walk():
            if isinstance(op, SubscriptOp):
                uses += [(op.source.type, axis, slot[index], "esn.subscript")
                         for axis, index in enumerate(op.indices) if index in slot]
        for memref, axis, k, what in uses:
            size = memref.get_shape()[axis]
            if extents[k] is not None and size >= 0 and size != extents[k]:
                kind = f"bound index {k}" if k < self.bound_count else f"reduction {k - self.bound_count}"
                raise VerifyException(f"esn.let: {kind} has extent {extents[k]} but indexes axis {axis} of size "
                                      f"{size} ({what}: {memref})")


@irdl_op_definition
class ReductionOp(IRDLOperation):
    name = "esn.reduction"
    position = prop_def(IntegerAttr)
    index = result_def(IndexType)
    assembly_format = "$position attr-dict"

    def __init__(self, position: int):
        super().__init__(properties={"position": IntegerAttr(position, i64)}, result_types=[IndexType()])


@irdl_op_definition
class SubscriptOp(IRDLOperation):
    name = "esn.subscript"
    source = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()
    assembly_format = "$source `[` $indices `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, indices, result_type: Attribute):
        super().__init__(operands=[source, list(indices)], result_types=[result_type])

    def verify_(self) -> None:
        memref = self.source.type
        assert isinstance(memref, MemRefType)
        if len(self.indices) != memref.get_num_dims():
            raise VerifyException(f"esn.subscript: {len(self.indices)} indices for a rank-{memref.get_num_dims()} "
                                  "memref")
        if memref.element_type != self.result.type:
            raise VerifyException("esn.subscript: result type must be the memref's element type")


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "esn.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


Esn = Dialect("esn", [LetOp, ReductionOp, SubscriptOp, YieldOp], [])

__all__ = ["Esn", "LetOp", "ReductionOp", "SubscriptOp", "YieldOp", "REDUCTION_KINDS"]
