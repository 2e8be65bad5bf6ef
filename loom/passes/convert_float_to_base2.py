"""``convert-float-to-base2``: compute a float function in a custom number format.

Matches, in every function with a body (or those named in ``functions``), each ``arith.addf/subf/mulf/
divf`` and ``math.fma`` on ``f32``/``f64`` scalars, and produces the ``base2`` op of ``format``
(``base2.add/sub/mul/div/fma``) with the pass's ``rounding``/``overflow`` modes. Conversions are inserted
at the boundaries only: a float value entering the computation (a function argument, a ``memref.load``,
a constant, a loop-carried value, the result of any other op) gets one ``base2.cast`` into the format;
a format value leaving it (stored, returned, yielded, compared, passed to ``math.*``) gets one
``base2.cast`` back to its float type. Chains of converted ops stay in the format. So a function taking
``f32`` arrays keeps its signature and computes in ``fixed<8, 8>`` or ``bf16``.

In a fixed-point format ``arith.negf`` is ``base2.sub(0, x)`` as well: two's complement is asymmetric, so
``-x`` of the most negative value overflows (wraps to itself, or saturates to the largest), as ``ap_fixed``
does; left as a float negation the exact ``+2^(I-1)``, outside the format, reached the next ``max``/``min``
(``max(-x, 0)`` wrapped to a negative result when stored). Float formats negate exactly and keep ``negf``.

Every float value the format arithmetic did not produce (a load, an argument, a constant, a loop-carried
value, the result of ``max``, ``abs``, ``floor``, ...) is rounded into the format before any other op reads
it (a store, a return, ``max``, a comparison, a conversion to an integer): a cast into the format and one
back. So every stored or returned value is a value of the format, as in ``ap_fixed`` code where every value
has the type; before, a copy ``y = x``, a constant store or ``abs`` of the most negative fixed value left
values outside the format (``1.5`` stored from a ``fixed<1, 4>`` kernel).

Leaves alone: integer ops, index arithmetic, ops on other float types, vector/tensor values, and every
op that is not in the list above (those see the format's value as an exact float).

Loop-carried values stay in the loop's float type between iterations, so the pass refuses a format whose
values are not all exact in that float type (``f32``: fixed point up to 24 bits, floats with at most 23
mantissa bits within f32's exponent range; ``f64``: every format).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
import math

from xdsl.dialects import arith, func, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr, ModuleOp
from xdsl.ir import Block, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from loom.core.numformats import (
    FLOAT_OVERFLOW, FixedFormat, NumberFormat, check_modes, constant_in, default_overflow, parse_format)
from loom.dialects.base2 import AddOp, CastOp, DivOp, FmaOp, MulOp, SubOp, type_of
from loom.errors import LoomError

_CONVERTED = {arith.AddfOp: AddOp, arith.SubfOp: SubOp, arith.MulfOp: MulOp, arith.DivfOp: DivOp, mathd.FmaOp: FmaOp}


def exact_in(fmt: NumberFormat, float_type) -> bool:
    """Whether every value of ``fmt`` is exactly a value of ``float_type`` (f32 or f64)."""
    if isinstance(float_type, Float64Type):
        return True
    if isinstance(fmt, FixedFormat):
        return fmt.width <= 24
    lowest = 1 - fmt.bias - fmt.man_bits  # exponent of the smallest subnormal
    top_field = (1 << fmt.exp_bits) - (2 if fmt.has_inf else 1)  # exponent field of the largest value
    return fmt.man_bits <= 23 and lowest >= -149 and top_field - fmt.bias <= 127


@dataclass(frozen=True)
class ConvertFloatToBase2Pass(ModulePass):
    name = "convert-float-to-base2"

    format: str = "bf16"
    rounding: str = "nearest_even"
    overflow: str = ""  # "" : the format's default (fixed: wrap, float: inf)
    functions: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        where = f"{self.name}{{format={self.format}}}"
        fmt = parse_format(self.format, where=where)
        check_modes(fmt, self.rounding, self.overflow or default_overflow(fmt), where)
        known = {f.sym_name.data for f in op.body.block.ops if isinstance(f, func.FuncOp)}
        missing = sorted(set(self.functions) - known)
        if missing:
            raise LoomError(f"no function @{missing[0]} in the module (functions: {', '.join(sorted(known))})",
                            where=where)
        for fn in op.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks and (
                    not self.functions or fn.sym_name.data in self.functions):
                _FunctionConversion(fn, fmt, self.rounding, self.overflow or None).run()


class _FunctionConversion:
    def __init__(self, fn: func.FuncOp, fmt: NumberFormat, rounding: str, overflow: str | None):
        self.fn = fn
        self.fmt = fmt
        self.type = type_of(fmt)
        self.rounding = rounding
        self.overflow = overflow
        self.into: dict[SSAValue, SSAValue] = {}  # float value -> its cast into the format
        self.back: dict[SSAValue, SSAValue] = {}  # float result of a cast back -> the format value
        self.back_casts: list[CastOp] = []
        self.rounded: set[SSAValue] = set()  # casts back inserted for other ops' reads

    def run(self) -> None:
        if isinstance(self.fmt, FixedFormat):
            self._negations_as_subtractions()
        targets = [op for op in self.fn.walk() if type(op) in _CONVERTED
                   and isinstance(op.results[0].type, Float32Type | Float64Type)]
        for op in targets:
            float_type = op.results[0].type
            if not exact_in(self.fmt, float_type):
                raise LoomError(f"{self.fmt} values are not all exact in {float_type}: values carried or "
                                f"passed between ops as {float_type} would be rounded (compute in f64, or "
                                "pick a narrower format)", where=f"@{self.fn.sym_name.data}: {op.name}")
            operands = [self._into(v) for v in op.operands]
            new = _CONVERTED[type(op)](*operands, rounding=self.rounding, overflow=self._overflow_for_format())
            Rewriter.insert_op(new, InsertPoint.before(op))
            back = CastOp(new.results[0], float_type, rounding=self.rounding, overflow=self._overflow_for_float())
            Rewriter.insert_op(back, InsertPoint.after(new))
            op.results[0].replace_all_uses_with(back.results[0])
            Rewriter.erase_op(op)
            self.back[back.results[0]] = new.results[0]
            self.back_casts.append(back)
        for back in self.back_casts:  # casts back whose users all compute in the format now
            if not back.results[0].uses:
                Rewriter.erase_op(back)
        self._round_other_reads()

    def _round_other_reads(self) -> None:
        """Ops other than format arithmetic read float values as format values (see the module docstring)."""
        ours = {id(c) for c in self.back_casts}
        values: list[SSAValue] = []
        for op in self.fn.walk():
            for region in op.regions:
                for block in region.blocks:
                    values.extend(block.args)
            if not (isinstance(op, CastOp) and id(op) in ours):
                values.extend(op.results)
        for value in values:
            if not isinstance(value.type, Float32Type | Float64Type) or self._is_format_value(value):
                continue
            readers = [u for u in value.uses if not isinstance(u.operation, CastOp)]
            if not readers:
                continue
            if not exact_in(self.fmt, value.type):
                raise LoomError(f"{self.fmt} values are not all exact in {value.type}: a value rounded into the "
                                f"format could not be handed on as {value.type} (compute in f64, or pick a "
                                "narrower format)", where=f"@{self.fn.sym_name.data}: {readers[0].operation.name}")
            into = self._into(value)
            back = CastOp(into, value.type, rounding=self.rounding, overflow=self._overflow_for_float())
            Rewriter.insert_op(back, InsertPoint.after(into.owner))
            self.rounded.add(back.results[0])
            for use in readers:
                use.operation.operands[use.index] = back.results[0]

    def _is_format_value(self, value: SSAValue) -> bool:
        """Whether ``value`` is a value of the format already (no cast pair needed before other ops read it):
        a cast back, a constant of the format, max / min / select of such values, a loop's or if's result
        whose inputs and yields are."""
        if value in self.back or value in self.rounded:
            return True
        op = value.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
            return self._representable(op.value.value.data)
        if isinstance(op, arith.MaximumfOp | arith.MinimumfOp | arith.MaxnumfOp | arith.MinnumfOp):
            return all(self._is_format_value(v) for v in op.operands)
        if isinstance(op, arith.SelectOp):
            return self._is_format_value(op.operands[1]) and self._is_format_value(op.operands[2])
        if isinstance(op, scf.ForOp) and isinstance(value, OpResult):
            k = value.index
            body_yield = op.body.block.last_op
            return (self._is_format_value(op.iter_args[k]) and body_yield is not None
                    and self._is_format_value(body_yield.operands[k]))
        return False

    def _representable(self, x: float) -> bool:
        if math.isnan(x) or math.isinf(x):
            return False
        try:
            if isinstance(self.fmt, FixedFormat):
                return self.fmt.value(self.fmt.quantize(x, "nearest_even", "saturate")) == x
            return self.fmt.decode(self.fmt.encode(x)) == x
        except LoomError:
            return False

    def _negations_as_subtractions(self) -> None:
        """``negf x`` -> ``subf 0.0, x``, which the loop below converts (fixed point only; see the docstring)."""
        for op in [o for o in self.fn.walk() if isinstance(o, arith.NegfOp)
                   and isinstance(o.results[0].type, Float32Type | Float64Type)]:
            zero = arith.ConstantOp(FloatAttr(0.0, op.results[0].type))
            sub = arith.SubfOp(zero.result, op.operands[0])
            Rewriter.insert_op([zero, sub], InsertPoint.before(op))
            op.results[0].replace_all_uses_with(sub.result)
            Rewriter.erase_op(op)

    def _overflow_for_format(self) -> str | None:
        return self.overflow

    def _overflow_for_float(self) -> str | None:
        # leaving the format: into f32 only a float overflow mode makes sense (f64 is exact)
        return self.overflow if self.overflow in FLOAT_OVERFLOW else None

    def _finite_for_infinity(self, value: SSAValue) -> arith.ConstantOp | None:
        """An infinite constant in a float format without infinities: its extreme finite value
        (``numformats.constant_in``: the ``-inf`` identity of a max reduction must not become NaN)."""
        op = value.owner
        if not isinstance(op, arith.ConstantOp) or not isinstance(op.value, FloatAttr):
            return None
        x = op.value.value.data
        finite = constant_in(self.fmt, x)
        return None if finite == x or math.isnan(x) else arith.ConstantOp(FloatAttr(finite, value.type))

    def _into(self, value: SSAValue) -> SSAValue:
        if value in self.back:
            return self.back[value]
        if value not in self.into:
            source, after = value, value.op if isinstance(value, OpResult) else None
            extreme = self._finite_for_infinity(value)
            if extreme is not None:
                Rewriter.insert_op(extreme, InsertPoint.after(value.op))
                source, after = extreme.result, extreme
            cast = CastOp(source, self.type, rounding=self.rounding, overflow=self.overflow)
            if after is not None:
                Rewriter.insert_op(cast, InsertPoint.after(after))
            else:
                block = value.block
                assert isinstance(block, Block)
                Rewriter.insert_op(cast, InsertPoint.at_start(block))
            self.into[value] = cast.results[0]
        return self.into[value]


__all__ = ["ConvertFloatToBase2Pass", "exact_in"]
