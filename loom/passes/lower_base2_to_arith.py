"""``lower-base2-to-arith``: base2 number-format ops -> integer (and exact f64) arith/math ops.

Matches every ``base2.add/sub/mul/div/fma/cast`` and produces arith/math ops implementing
``loom.core.numformats`` bit for bit (sequences in ``loom.passes.base2_emit``):

- fixed point: raw integers widened to i64, exact add/sub/mul/fma, rounding right shifts and rounding
  floor divisions, then wrap (shift pair) or saturate (clamp);
- custom floats: patterns decoded to exact f64 values, the operation in f64 with its exact residual
  (TwoSum / fma), the result rounded back into the format with integer ops on its bits;
- casts go through the exact f64 value of the source.

Then every ``!base2`` type left in the module (function signatures, memref element types, loop-carried
values, loads and stores) becomes its storage integer (i8/i16/i32), so the C backend compiles the result.
Leaves every other op alone.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    op_type_rewrite_pattern,
)

from loom.core.numformats import F32, FixedFormat, FloatFormat
from loom.dialects.base2 import BINARY_OPS, CastOp, FixedType, FloatType, FmaOp, format_of
from loom.passes.base2_emit import (
    F64T,
    Emitter,
    f64_to_fixed,
    f64_to_float,
    fixed_binary,
    fixed_raw,
    fixed_store,
    fixed_to_f64,
    float_binary,
    float_to_f64,
)
from loom.passes.base2_f32_route import f32_to_float, float_binary_f32, float_to_f32, uses_f32_route


def storage_type(ty: Attribute) -> IntegerType:
    fmt = format_of(ty)
    assert fmt is not None
    return IntegerType(fmt.storage_bits)


def _stored(em: Emitter, value: SSAValue) -> SSAValue:
    """The storage integer of a base2-typed value (a cast that disappears once the types are converted)."""
    cast = UnrealizedConversionCastOp.get([value], [storage_type(value.type)])
    em.ops.append(cast)
    return cast.results[0]


def _int_format(ty: IntegerType) -> FixedFormat:
    return FixedFormat(ty.width.data, 0)  # signless integers read as signed (the verifier allows no other)


def _to_f64(em: Emitter, value: SSAValue) -> SSAValue:
    """The exact f64 value of any ``base2.cast`` source."""
    ty = value.type
    if isinstance(ty, FixedType):
        return fixed_to_f64(em, fixed_raw(em, _stored(em, value), ty.format), ty.format)
    if isinstance(ty, FloatType):
        return float_to_f64(em, _stored(em, value), ty.format)
    if isinstance(ty, Float32Type):
        from xdsl.dialects.arith import ExtFOp

        return em.add(ExtFOp(value, F64T))
    if isinstance(ty, Float64Type):
        return value
    assert isinstance(ty, IntegerType)
    fmt = _int_format(ty)
    return fixed_to_f64(em, em.widen(value, fmt.signed), fmt)


def _from_f64(em: Emitter, value: SSAValue, ty: Attribute, rounding: str, overflow: str) -> SSAValue:
    """``value`` (exact f64) converted to ``ty``: a base2 type's storage integer, f32, f64 or an integer."""
    if isinstance(ty, FixedType):
        return fixed_store(em, f64_to_fixed(em, value, ty.format, rounding, overflow), ty.format)
    if isinstance(ty, FloatType):
        fmt = ty.format
        return em.narrow(f64_to_float(em, value, None, fmt, rounding, overflow, canonical_nan=False), fmt.storage_bits)
    if isinstance(ty, Float64Type):
        return value
    if isinstance(ty, Float32Type):  # rounded like any float format (the C cast only knows nearest-even)
        bits = em.narrow(f64_to_float(em, value, None, F32, rounding, overflow, canonical_nan=False), 32)
        return em.bitcast(bits, Float32Type())
    assert isinstance(ty, IntegerType)
    fmt = _int_format(ty)
    return em.trunci(f64_to_fixed(em, value, fmt, rounding, overflow), ty)


def _f32_cast(em: Emitter, value: SSAValue, target: Attribute, rounding: str, overflow: str) -> SSAValue | None:
    """A cast between f32 and a float format through the f32 route (see ``base2_f32_route``), else None."""
    source = value.type
    if isinstance(source, Float32Type) and isinstance(target, FloatType) \
            and uses_f32_route(target.format, "cast", rounding, overflow):
        fmt = target.format
        return em.narrow(f32_to_float(em, value, fmt, overflow, canonical_nan=False), fmt.storage_bits)
    if isinstance(source, FloatType) and isinstance(target, Float32Type) \
            and uses_f32_route(source.format, "cast", "nearest_even", "inf"):  # exact: the modes do not matter
        return float_to_f32(em, _stored(em, value), source.format, canonical_nan=True)
    return None


def _finish(rewriter: PatternRewriter, op: Operation, em: Emitter, result: SSAValue, result_type: Attribute) -> None:
    if format_of(result_type) is not None:  # back to the base2 type until the types are converted
        result = em.add(UnrealizedConversionCastOp.get([result], [result_type]))
    rewriter.replace(op, em.ops, [result])


class LowerArithmetic(RewritePattern):
    """base2.add/sub/mul/div/fma."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in BINARY_OPS and not isinstance(op, FmaOp):
            return
        kind = BINARY_OPS.get(op.name, "fma")
        ty = op.results[0].type
        fmt = format_of(ty)
        rounding, overflow = op.modes(ty)  # type: ignore[attr-defined]
        em = Emitter()
        if isinstance(fmt, FixedFormat):
            raws = [fixed_raw(em, _stored(em, v), fmt) for v in op.operands]
            result = fixed_store(em, fixed_binary(em, kind, raws, fmt, rounding, overflow), fmt)
        elif uses_f32_route(fmt, kind, rounding, overflow):
            stored = [_stored(em, v) for v in op.operands]
            result = em.narrow(float_binary_f32(em, kind, stored, fmt, overflow), fmt.storage_bits)
        else:
            assert isinstance(fmt, FloatFormat)
            values = [float_to_f64(em, _stored(em, v), fmt) for v in op.operands]
            result = em.narrow(float_binary(em, kind, values, fmt, rounding, overflow), fmt.storage_bits)
        _finish(rewriter, op, em, result, ty)


class LowerCast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        source, target = op.input.type, op.result.type
        if source == target:
            rewriter.replace(op, [], [op.input])
            return
        rounding, overflow = op.modes(target)
        em = Emitter()
        result = _f32_cast(em, op.input, target, rounding, overflow)
        if result is None:
            result = _from_f64(em, _to_f64(em, op.input), target, rounding, overflow)
        _finish(rewriter, op, em, result, target)


class Base2ToStorage(TypeConversionPattern):
    """Every !base2 type (also inside memrefs and function types) -> its storage integer
    (construct with ``recursive=True``: the dataclass field overrides a class attribute)."""

    def convert_type(self, typ: Attribute) -> IntegerType | None:
        return storage_type(typ) if isinstance(typ, FixedType | FloatType) else None


class DropIdentityCasts(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) == 1 and len(op.outputs) == 1 and op.inputs[0].type == op.outputs[0].type:
            rewriter.replace(op, [], [op.inputs[0]])


class LowerBase2ToArithPass(ModulePass):
    name = "lower-base2-to-arith"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([LowerArithmetic(), LowerCast()]),
                             apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(Base2ToStorage(recursive=True)).rewrite_module(op)
        PatternRewriteWalker(DropIdentityCasts()).rewrite_module(op)


__all__ = ["LowerBase2ToArithPass", "storage_type"]
