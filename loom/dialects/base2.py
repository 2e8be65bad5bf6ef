"""The ``base2`` dialect: custom number formats (fixed point, custom floating point) and their arithmetic.

Modelled on base2-mlir's number types; the semantics are those of ``loom.core.numformats`` (the one
Python reference), and ``lower-base2-to-arith`` turns every op here into integer/float arith ops.

Types::

    !base2.fixed<8, 8>              signed fixed point, 8 integer bits (sign included) and 8 fraction bits
    !base2.fixed<unsigned 4, 12>    unsigned fixed point
    !base2.float<8, 7>              bf16: exponent bits, stored mantissa bits; IEEE-like (inf, NaN, subnormals)
    !base2.float<4, 3, fn>          float8_e4m3fn: no infinities, one NaN pattern per sign
    !base2.float<4, 3, fnuz, bias = 11>   no infinities, no -0, NaN = 0x80; explicit bias

Ops (``rounding``: ``"truncate"`` | ``"nearest_even"`` (default) | ``"nearest_away"``; ``overflow``:
``"wrap"`` (fixed default) | ``"saturate"`` for fixed point and integers, ``"inf"`` (float default) |
``"saturate"`` for floats; both optional properties written in the attribute dictionary)::

    %c = base2.add %a, %b : !base2.fixed<8, 8>                 also sub, mul, div
    %c = base2.mul %a, %b {rounding = "truncate", overflow = "saturate"} : !base2.fixed<8, 8>
    %d = base2.fma %a, %b, %c : !base2.float<8, 7>              a * b + c, rounded once
    %y = base2.cast %x : f32 to !base2.float<4, 3, fn>          between formats, f32/f64 and
                                                                 signless i8/i16/i32 (signed)

Printed in generic form, a module with these ops parses in upstream ``mlir-opt
--allow-unregistered-dialect`` (types are opaque there).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, Float64Type, IntAttr, IntegerType, Signedness, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from loom.core.numformats import (
    FIXED_OVERFLOW,
    FLOAT_OVERFLOW,
    ROUNDING,
    SPECIALS,
    FixedFormat,
    FloatFormat,
    NumberFormat,
)
from loom.errors import LoomError


@irdl_attr_definition
class FixedType(ParametrizedAttribute, TypeAttribute):
    """``!base2.fixed<[unsigned] I, F>``: ``I`` integer bits (sign included when signed), ``F`` fraction bits."""

    name = "base2.fixed"
    int_bits: IntAttr
    frac_bits: IntAttr
    signed: IntAttr  # 1 signed, 0 unsigned

    def __init__(self, int_bits: int, frac_bits: int, signed: bool = True):
        super().__init__(IntAttr(int_bits), IntAttr(frac_bits), IntAttr(int(signed)))

    @staticmethod
    def of(fmt: FixedFormat) -> FixedType:
        return FixedType(fmt.int_bits, fmt.frac_bits, fmt.signed)

    @property
    def format(self) -> FixedFormat:
        return FixedFormat(self.int_bits.data, self.frac_bits.data, bool(self.signed.data))

    def verify(self) -> None:
        try:
            self.format
        except LoomError as error:
            raise VerifyException(f"!base2.fixed: {error.message}") from None

    def print_parameters(self, printer: Printer) -> None:
        sign = "" if self.signed.data else "unsigned "
        printer.print_string(f"<{sign}{self.int_bits.data}, {self.frac_bits.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            sign = parser.parse_optional_keyword_in(("signed", "unsigned"))
            int_bits = parser.parse_integer(allow_boolean=False, allow_negative=False,
                                            context_msg=" (integer bits of !base2.fixed)")
            parser.parse_punctuation(",")
            frac_bits = parser.parse_integer(allow_boolean=False, allow_negative=False,
                                             context_msg=" (fraction bits of !base2.fixed)")
        return [IntAttr(int_bits), IntAttr(frac_bits), IntAttr(int(sign != "unsigned"))]


def _default_bias(exp_bits: int, special: str) -> int:
    """The default bias, or 0 for an exponent width the verifier refuses anyway (``1 << huge`` would hang)."""
    return FloatFormat.default_bias(exp_bits, special) if 1 <= exp_bits <= 8 else 0


@irdl_attr_definition
class FloatType(ParametrizedAttribute, TypeAttribute):
    """``!base2.float<E, M[, fn|fnuz][, bias = B]>``: exponent bits, stored mantissa bits."""

    name = "base2.float"
    exp_bits: IntAttr
    man_bits: IntAttr
    bias: IntAttr
    special: StringAttr

    def __init__(self, exp_bits: int, man_bits: int, bias: int | None = None, special: str = "ieee"):
        if bias is None:
            bias = _default_bias(exp_bits, special)
        super().__init__(IntAttr(exp_bits), IntAttr(man_bits), IntAttr(bias), StringAttr(special))

    @staticmethod
    def of(fmt: FloatFormat) -> FloatType:
        return FloatType(fmt.exp_bits, fmt.man_bits, fmt.bias, fmt.special)

    @property
    def format(self) -> FloatFormat:
        return FloatFormat(self.exp_bits.data, self.man_bits.data, self.bias.data, self.special.data)

    def verify(self) -> None:
        try:
            self.format
        except LoomError as error:
            raise VerifyException(f"!base2.float: {error.message}") from None

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(self.format.mlir.removeprefix("!base2.float"))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        special, bias = None, None
        with parser.in_angle_brackets():
            exp_bits = parser.parse_integer(allow_boolean=False, allow_negative=False,
                                            context_msg=" (exponent bits of !base2.float)")
            parser.parse_punctuation(",")
            man_bits = parser.parse_integer(allow_boolean=False, allow_negative=False,
                                            context_msg=" (mantissa bits of !base2.float)")
            while parser.parse_optional_punctuation(","):
                if parser.parse_optional_keyword("bias"):
                    if bias is not None:  # not silently the last one
                        parser.raise_error("!base2.float gives its bias twice")
                    parser.parse_punctuation("=")
                    bias = parser.parse_integer(allow_boolean=False, context_msg=" (bias of !base2.float)")
                else:
                    if special is not None:
                        parser.raise_error("!base2.float gives its special values (fn, fnuz) twice")
                    special = parser.parse_keyword_in(SPECIALS[1:], " (fn, fnuz or bias = N)")
        special = special or "ieee"
        if bias is None:
            bias = _default_bias(exp_bits, special)
        return [IntAttr(exp_bits), IntAttr(man_bits), IntAttr(bias), StringAttr(special)]


Base2Type = FixedType | FloatType


def type_of(fmt: NumberFormat) -> FixedType | FloatType:
    """The dialect type of a format."""
    return FixedType.of(fmt) if isinstance(fmt, FixedFormat) else FloatType.of(fmt)


def format_of(ty: Attribute) -> NumberFormat | None:
    """The format of a base2 type (None for any other type)."""
    return ty.format if isinstance(ty, FixedType | FloatType) else None


# ---- ops ----------------------------------------------------------------------------------------


def _check_modes(op: IRDLOperation, result_type: Attribute) -> None:
    """``rounding``/``overflow`` are known and fit the result's kind (fixed/int vs float)."""
    rounding = op.properties.get("rounding")
    if rounding is not None and (not isinstance(rounding, StringAttr) or rounding.data not in ROUNDING):
        raise VerifyException(f"{op.name}: rounding must be one of {', '.join(ROUNDING)}, got {rounding}")
    overflow = op.properties.get("overflow")
    if overflow is None:
        return
    floating = isinstance(result_type, FloatType | Float32Type | Float64Type)
    allowed = FLOAT_OVERFLOW if floating else FIXED_OVERFLOW
    if not isinstance(overflow, StringAttr) or overflow.data not in allowed:
        kind = "a float" if floating else "a fixed-point or integer"
        raise VerifyException(f"{op.name}: overflow of {kind} result must be one of {', '.join(allowed)}, "
                              f"got {overflow}")


class _Base2Op(IRDLOperation):
    rounding = opt_prop_def(StringAttr)
    overflow = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def modes(self, result_type: Attribute) -> tuple[str, str]:
        """(rounding, overflow) with the defaults filled in."""
        floating = isinstance(result_type, FloatType | Float32Type | Float64Type)
        rounding = self.rounding.data if self.rounding is not None else "nearest_even"
        overflow = self.overflow.data if self.overflow is not None else ("inf" if floating else "wrap")
        return rounding, overflow

    @staticmethod
    def mode_props(rounding: str | None, overflow: str | None) -> dict[str, Attribute]:
        props: dict[str, Attribute] = {}
        if rounding is not None:
            props["rounding"] = StringAttr(rounding)
        if overflow is not None:
            props["overflow"] = StringAttr(overflow)
        return props


class BinaryOp(_Base2Op):
    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, rounding: str | None = None, overflow: str | None = None):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type],
                         properties=self.mode_props(rounding, overflow))

    def verify_(self) -> None:
        ty = self.result.type
        if not isinstance(ty, FixedType | FloatType):
            raise VerifyException(f"{self.name}: operands and result must be a !base2 type, got {ty}")
        _check_modes(self, ty)
        if self.name in ("base2.mul", "base2.div", "base2.fma") and isinstance(ty, FixedType):
            fmt = ty.format
            if not fmt.signed and fmt.width == 32:
                raise VerifyException(f"{self.name}: {fmt} is too wide for mul/div/fma (unsigned formats: at most "
                                      "31 bits, so that products fit 64-bit integers)")


@irdl_op_definition
class AddOp(BinaryOp):
    name = "base2.add"


@irdl_op_definition
class SubOp(BinaryOp):
    name = "base2.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    name = "base2.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    name = "base2.div"


@irdl_op_definition
class FmaOp(_Base2Op):
    """``a * b + c`` with one rounding."""

    name = "base2.fma"
    T: ClassVar = VarConstraint("T", AnyAttr())
    a = operand_def(T)
    b = operand_def(T)
    c = operand_def(T)
    result = result_def(T)
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue, rounding: str | None = None,
                 overflow: str | None = None):
        super().__init__(operands=[a, b, c], result_types=[a.type], properties=self.mode_props(rounding, overflow))

    def verify_(self) -> None:
        BinaryOp.verify_(self)  # type: ignore[arg-type]


CAST_BUILTINS = ("f32, f64 or a signless integer of 8..32 bits (read as signed; an unsigned integer is "
                 "!base2.fixed<unsigned N, 0>)")


def castable(ty: Attribute) -> bool:
    """Whether ``base2.cast`` reads/writes ``ty``."""
    if isinstance(ty, FixedType | FloatType | Float32Type | Float64Type):
        return True
    return (isinstance(ty, IntegerType) and ty.width.data in (8, 16, 32)
            and ty.signedness.data == Signedness.SIGNLESS)


@irdl_op_definition
class CastOp(_Base2Op):
    """Convert between number formats, ``f32``/``f64`` and integers, rounding and handling overflow."""

    name = "base2.cast"
    input = operand_def()
    result = result_def()
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, value: SSAValue, result_type: Attribute, rounding: str | None = None,
                 overflow: str | None = None):
        super().__init__(operands=[value], result_types=[result_type], properties=self.mode_props(rounding, overflow))

    def verify_(self) -> None:
        for what, ty in (("source", self.input.type), ("result", self.result.type)):
            if not castable(ty):
                raise VerifyException(f"base2.cast: the {what} must be a !base2 type, {CAST_BUILTINS}; got {ty}")
        _check_modes(self, self.result.type)


Base2 = Dialect("base2", [AddOp, SubOp, MulOp, DivOp, FmaOp, CastOp], [FixedType, FloatType])

BINARY_OPS = {"base2.add": "add", "base2.sub": "sub", "base2.mul": "mul", "base2.div": "div"}

__all__ = ["Base2", "FixedType", "FloatType", "Base2Type", "AddOp", "SubOp", "MulOp", "DivOp", "FmaOp", "CastOp",
           "BinaryOp", "type_of", "format_of", "castable", "BINARY_OPS"]
