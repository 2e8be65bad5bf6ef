"""Custom number formats: the one Python definition of their semantics.

Two families, the types of the ``base2`` dialect (``loom.dialects.base2``):

``FixedFormat(int_bits, frac_bits, signed)``  -- ``!base2.fixed<I, F>`` / ``!base2.fixed<unsigned I, F>``
    A value is ``raw * 2**-F`` where ``raw`` is a ``W = I + F`` bit integer, two's complement when
    signed (the sign bit counts among the ``I`` integer bits, as in ``ap_fixed<W, I>``). Stored in the
    smallest of i8/i16/i32 that holds ``W`` bits, sign- (or zero-) extended.

``FloatFormat(exp_bits, man_bits, bias, special)``  -- ``!base2.float<E, M>``
    IEEE-754-like: a sign bit, ``E`` exponent bits, ``M`` stored mantissa bits, subnormals, default
    bias ``2**(E-1) - 1``. ``special`` says what the top patterns mean:
    ``ieee``: exponent all ones is inf (mantissa 0) or NaN, as IEEE-754 (bf16 = ``float<8, 7>``,
    ``float8_e5m2`` = ``float<5, 2>``); ``fn``: no infinities, only ``S.1..1.1..1`` is NaN
    (``float8_e4m3fn``); ``fnuz``: no infinities and no negative zero, the pattern ``1.0..0`` is the one
    NaN, default bias ``2**(E-1)`` (``float8_e4m3fnuz``, ``float8_e5m2fnuz``; ``float8_e4m3b11fnuz`` is
    ``fnuz`` with bias 11).

Rounding modes (``ROUNDING``): ``truncate`` drops the bits below the last kept one (toward minus
infinity for two's complement fixed point, as Vitis' ``AP_TRN``; toward zero for sign-magnitude floats),
``nearest_even`` (ties to even), ``nearest_away`` (ties away from zero).

Overflow modes: fixed point (and integers) ``wrap`` (two's complement, keep the low ``W`` bits) or
``saturate`` (clamp to the largest/smallest value). Floats: ``inf`` (a finite result beyond the largest
finite value becomes infinity, or NaN in a format without infinities, as ml_dtypes does) or ``saturate``
(the largest finite value). Exact infinities (an infinite operand, ``x / 0``) stay infinite (NaN when the
format has none) whatever the overflow mode.

Conventions the C lowering (``loom.passes.lower_base2_to_arith``) implements identically:

- a NaN converted to a float format is the format's quiet NaN with the NaN's sign (ml_dtypes' rule;
  ``fnuz``: the one NaN); a NaN *result of arithmetic* is the positive quiet NaN;
- NaN converted to fixed point or an integer is 0; +-infinity saturates in both overflow modes;
- fixed-point ``x / 0`` is the largest value of ``x``'s sign (``0 / 0`` is 0), in both modes;
- arithmetic operands and results share one format; ``fma`` rounds once.

Limits (so that the C lowering computes exactly in i64 and f64): fixed point ``W <= 32``, signed
``I >= 1`` (the dialect refuses mul/div/fma on 32-bit unsigned formats: their products need 64 bits); floats ``1 <= E <= 8``, ``1 <= M <= 23``, ``0 <= bias < 2**E``.

Values are Python ``Fraction``/``int``/``float``; a float format's finite values are all exact Python
floats, so ``decode`` returns floats (signed zeros, infinities and NaN included).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction

from loom.errors import LoomError

ROUNDING = ("truncate", "nearest_even", "nearest_away")
FIXED_OVERFLOW = ("wrap", "saturate")
FLOAT_OVERFLOW = ("inf", "saturate")
SPECIALS = ("ieee", "fn", "fnuz")

Number = int | float | Fraction


def _check_choice(value: str, choices: tuple[str, ...], what: str, where: str | None) -> None:
    if value not in choices:
        raise LoomError(f"{what} must be one of {', '.join(choices)}, got {value!r}", where=where)


def default_overflow(fmt: "FixedFormat | FloatFormat") -> str:
    """The overflow mode an op on ``fmt`` has when it names none: ``wrap`` (fixed point), ``inf`` (floats)."""
    return "inf" if isinstance(fmt, FloatFormat) else "wrap"


def check_modes(fmt: "FixedFormat | FloatFormat", rounding: str, overflow: str, where: str | None = None) -> None:
    """A LoomError (at ``where``, else the format) unless ``rounding`` and ``overflow`` are modes of ``fmt``."""
    where = where or fmt.mlir
    _check_choice(rounding, ROUNDING, "rounding", where)
    if isinstance(fmt, FloatFormat):
        _check_choice(overflow, FLOAT_OVERFLOW, f"overflow for {fmt}", where)
    else:
        _check_choice(overflow, FIXED_OVERFLOW, f"overflow for {fmt}", where)


def storage_bits(width: int) -> int:
    """Width of the integer that holds a ``width``-bit pattern (8, 16 or 32)."""
    return 8 if width <= 8 else 16 if width <= 16 else 32


def round_ratio(num: int, den: int, rounding: str) -> int:
    """``num / den`` (``den > 0``) rounded to an integer; ``truncate`` is floor here (callers that
    round magnitudes pass non-negative numerators, where floor is toward zero)."""
    q, rem = divmod(num, den)  # floor division: 0 <= rem < den
    twice = 2 * rem
    if rounding == "truncate" or twice < den:
        return q
    if twice > den:
        return q + 1
    if rounding == "nearest_even":
        return q + (q & 1)
    return q + 1 if num >= 0 else q  # nearest_away: the tie q + 1/2 goes away from zero


def _ratio(x: Number) -> tuple[int, int]:
    if isinstance(x, float):
        return x.as_integer_ratio()
    if isinstance(x, int):
        return x, 1
    return x.numerator, x.denominator


# ---- fixed point --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FixedFormat:
    int_bits: int
    frac_bits: int
    signed: bool = True

    def __post_init__(self) -> None:
        where = self.mlir
        if self.int_bits < 0 or self.frac_bits < 0:
            raise LoomError("fixed point: the integer and fraction bit counts must be >= 0", where=where)
        if self.signed and self.int_bits < 1:
            raise LoomError("signed fixed point needs at least 1 integer bit (the sign bit)", where=where)
        if not 1 <= self.width <= 32:
            raise LoomError(f"fixed point width I + F must be 1..32 bits, got {self.width}", where=where)

    @cached_property
    def width(self) -> int:
        return self.int_bits + self.frac_bits

    @cached_property
    def storage_bits(self) -> int:
        return storage_bits(self.width)

    @cached_property
    def min_raw(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    @cached_property
    def max_raw(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1

    @property
    def mlir(self) -> str:
        sign = "" if self.signed else "unsigned "
        return f"!base2.fixed<{sign}{self.int_bits}, {self.frac_bits}>"

    def __str__(self) -> str:
        return self.mlir

    # bits <-> raw <-> value
    def raw_of_bits(self, bits: int) -> int:
        """The raw integer of a stored pattern (bits above ``W`` are ignored)."""
        bits &= (1 << self.width) - 1
        if self.signed and bits >> (self.width - 1):
            bits -= 1 << self.width
        return bits

    def bits_of_raw(self, raw: int) -> int:
        """The stored pattern (as an unsigned storage-width integer: sign-extended to the storage)."""
        return raw & ((1 << self.storage_bits) - 1)

    def value(self, raw: int) -> Fraction:
        return Fraction(raw, 1 << self.frac_bits)

    def decode(self, bits: int) -> Fraction:
        return self.value(self.raw_of_bits(bits))

    # value -> raw
    def overflow(self, raw: int, overflow: str) -> int:
        if overflow == "saturate":
            return min(max(raw, self.min_raw), self.max_raw)
        return self.raw_of_bits(raw)  # wrap: keep the low W bits

    def quantize(self, x: Number, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        """The raw value of ``x`` (exact number, or a float incl. inf/NaN) in this format."""
        if rounding not in ROUNDING or overflow not in FIXED_OVERFLOW:
            check_modes(self, rounding, overflow)
        if isinstance(x, float):
            if math.isnan(x):
                return 0
            if math.isinf(x):
                return self.max_raw if x > 0 else self.min_raw
        num, den = _ratio(x)
        return self.overflow(round_ratio(num << self.frac_bits, den, rounding), overflow)

    def encode(self, x: Number, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        return self.bits_of_raw(self.quantize(x, rounding, overflow))

    # arithmetic on raw values (operands and result in this format)
    def add(self, a: int, b: int, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        return self.quantize(self.value(a) + self.value(b), rounding, overflow)

    def sub(self, a: int, b: int, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        return self.quantize(self.value(a) - self.value(b), rounding, overflow)

    def mul(self, a: int, b: int, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        return self.quantize(self.value(a) * self.value(b), rounding, overflow)

    def div(self, a: int, b: int, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        if b == 0:
            return 0 if a == 0 else self.max_raw if a > 0 else self.min_raw
        return self.quantize(self.value(a) / self.value(b), rounding, overflow)

    def fma(self, a: int, b: int, c: int, rounding: str = "nearest_even", overflow: str = "wrap") -> int:
        return self.quantize(self.value(a) * self.value(b) + self.value(c), rounding, overflow)


# ---- floating point -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FloatFormat:
    exp_bits: int
    man_bits: int
    bias: int | None = None  # None: the default of ``special``
    special: str = "ieee"

    def __post_init__(self) -> None:
        where = f"!base2.float<{self.exp_bits}, {self.man_bits}>"
        _check_choice(self.special, SPECIALS, "float special values", where)
        if not 1 <= self.exp_bits <= 8:
            raise LoomError(f"float exponent bits must be 1..8, got {self.exp_bits}", where=where)
        if not 1 <= self.man_bits <= 23:
            raise LoomError(f"float mantissa bits must be 1..23, got {self.man_bits}", where=where)
        if self.bias is None:
            object.__setattr__(self, "bias", self.default_bias(self.exp_bits, self.special))
        if not 0 <= self.bias < (1 << self.exp_bits):
            raise LoomError(f"float bias must be 0..{(1 << self.exp_bits) - 1}, got {self.bias}", where=where)
        if self.special == "ieee" and self.exp_bits == 1:
            raise LoomError("an ieee float needs at least 2 exponent bits (1 leaves no normal numbers)",
                            where=where)

    @staticmethod
    def default_bias(exp_bits: int, special: str) -> int:
        return (1 << (exp_bits - 1)) - (0 if special == "fnuz" else 1)

    @cached_property
    def width(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    @cached_property
    def storage_bits(self) -> int:
        return storage_bits(self.width)

    @cached_property
    def exp_all_ones(self) -> int:
        return (1 << self.exp_bits) - 1

    @cached_property
    def sign_bit(self) -> int:
        return 1 << (self.exp_bits + self.man_bits)

    @cached_property
    def max_magnitude(self) -> int:
        """The largest finite value's pattern without the sign."""
        if self.special == "ieee":
            return (self.exp_all_ones << self.man_bits) - 1
        if self.special == "fn":
            return (1 << (self.exp_bits + self.man_bits)) - 2
        return (1 << (self.exp_bits + self.man_bits)) - 1

    @cached_property
    def has_inf(self) -> bool:
        return self.special == "ieee"

    def nan_bits(self, negative: bool = False) -> int:
        """The quiet NaN this format produces (``fnuz``: its one NaN, whatever the sign)."""
        if self.special == "fnuz":
            return self.sign_bit
        sign = self.sign_bit if negative else 0
        if self.special == "fn":
            return sign | (self.sign_bit - 1)
        return sign | (self.exp_all_ones << self.man_bits) | (1 << (self.man_bits - 1))

    def inf_bits(self, negative: bool = False) -> int:
        return (self.sign_bit if negative else 0) | (self.exp_all_ones << self.man_bits)

    @property
    def mlir(self) -> str:
        extra = "" if self.special == "ieee" else f", {self.special}"
        if self.bias != self.default_bias(self.exp_bits, self.special):
            extra += f", bias = {self.bias}"
        return f"!base2.float<{self.exp_bits}, {self.man_bits}{extra}>"

    def __str__(self) -> str:
        return self.mlir

    def is_nan(self, bits: int) -> bool:
        bits &= (1 << self.width) - 1
        if self.special == "fnuz":
            return bits == self.sign_bit
        mag = bits & (self.sign_bit - 1)
        if self.special == "fn":
            return mag == self.sign_bit - 1
        return mag > self.exp_all_ones << self.man_bits

    def decode(self, bits: int) -> float:
        """The value of a pattern (bits above the width are ignored), exact as a Python float."""
        bits &= (1 << self.width) - 1
        negative = bool(bits & self.sign_bit)
        if self.is_nan(bits):
            return -math.nan if negative else math.nan
        exp = (bits >> self.man_bits) & self.exp_all_ones
        man = bits & ((1 << self.man_bits) - 1)
        if self.special == "ieee" and exp == self.exp_all_ones:
            return -math.inf if negative else math.inf
        if exp == 0:
            mag = math.ldexp(man, 1 - self.bias - self.man_bits)
        else:
            mag = math.ldexp(man | (1 << self.man_bits), exp - self.bias - self.man_bits)
        return -mag if negative else mag

    def encode(self, x: Number, rounding: str = "nearest_even", overflow: str = "inf",
               negative_zero: bool | None = None) -> int:
        """The pattern of ``x`` rounded into this format.

        ``x`` is exact (int, Fraction) or a Python float (its sign, infinities and NaN count).
        ``negative_zero`` gives the sign of an exact zero given as int/Fraction.
        """
        if rounding not in ROUNDING or overflow not in FLOAT_OVERFLOW:
            check_modes(self, rounding, overflow)
        if isinstance(x, float):
            negative = math.copysign(1.0, x) < 0
            if math.isnan(x):
                return self.nan_bits(negative)
            if math.isinf(x):
                return self.inf_bits(negative) if self.has_inf else self.nan_bits(negative)
        else:
            negative = x < 0 or (x == 0 and bool(negative_zero))
        num, den = _ratio(abs(x))
        mag = self._round_magnitude(num, den, rounding)
        if mag > self.max_magnitude:
            if overflow == "saturate":
                mag = self.max_magnitude
            else:
                return self.inf_bits(negative) if self.has_inf else self.nan_bits(negative)
        if mag == 0 and self.special == "fnuz":
            negative = False  # no negative zero
        return (self.sign_bit if negative else 0) | mag

    def _round_magnitude(self, num: int, den: int, rounding: str) -> int:
        """Pattern (no sign) of ``num / den >= 0``, possibly beyond the largest finite one."""
        if num == 0:
            return 0
        exp = num.bit_length() - den.bit_length()  # floor(log2(num/den)) is exp or exp - 1
        if (num << max(0, -exp)) < (den << max(0, exp)):
            exp -= 1
        biased = exp + self.bias
        quantum = max(biased, 1) - self.bias - self.man_bits  # value of one mantissa step
        if quantum >= 0:
            q = round_ratio(num, den << quantum, rounding)
        else:
            q = round_ratio(num << -quantum, den, rounding)
        # a normal q carries the implicit bit, so adding the exponent field works across a carry
        return ((max(biased, 1) - 1) << self.man_bits) + q


def constant_in(fmt: "NumberFormat", x: float) -> float:
    """The value a float *constant* of a kernel stands for in ``fmt``: itself, except an infinity in a float
    format without infinities (fn, fnuz), which is the extreme finite value of its sign. A kernel's infinite
    constant is the identity of a max / min reduction (``-inf`` starts a max); converted as a value it would be
    NaN (ml_dtypes' rule, kept for data) and every result NaN, where max(lowest, x) = x for every x."""
    if isinstance(fmt, FloatFormat) and not fmt.has_inf and math.isinf(x):
        return math.copysign(float(fmt.decode(fmt.max_magnitude)), x)
    return x


# ---- arithmetic of float formats (exact, then one rounding) -------------------------------------


def float_op(fmt: FloatFormat, op: str, operands: list[int], rounding: str = "nearest_even",
             overflow: str = "inf") -> int:
    """``op`` (add, sub, mul, div, fma) on patterns of ``fmt``, rounded once into ``fmt``."""
    xs = [fmt.decode(b) for b in operands]
    if any(math.isnan(x) for x in xs):
        return fmt.nan_bits()
    with_specials = _float_result(op, xs)  # IEEE float64 evaluation: right for inf/NaN/zero signs
    if math.isnan(with_specials):
        return fmt.nan_bits()
    if math.isinf(with_specials) or not all(math.isfinite(x) for x in xs):
        return fmt.encode(with_specials, rounding, overflow)
    fs = [Fraction(x) for x in xs]
    exact = {"add": lambda: fs[0] + fs[1], "sub": lambda: fs[0] - fs[1], "mul": lambda: fs[0] * fs[1],
             "div": lambda: fs[0] / fs[1], "fma": lambda: fs[0] * fs[1] + fs[2]}[op]()
    if exact == 0:  # the sign of an exact zero is IEEE's, which float64 computes exactly here
        return fmt.encode(0, rounding, overflow, negative_zero=math.copysign(1.0, with_specials) < 0)
    return fmt.encode(exact, rounding, overflow)


def _float_result(op: str, xs: list[float]) -> float:
    a, b = xs[0], xs[1]
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op == "fma":
        return a * b + xs[2]  # a * b is exact in float64 for every format here
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
        return -math.inf if negative else math.inf
    return a / b


# ---- named formats and the short spelling --------------------------------------------------------

BF16 = FloatFormat(8, 7)
FP16 = FloatFormat(5, 10)
F32 = FloatFormat(8, 23)
FP8_E4M3FN = FloatFormat(4, 3, special="fn")
FP8_E5M2 = FloatFormat(5, 2)
FP8_E4M3 = FloatFormat(4, 3)
FP8_E3M4 = FloatFormat(3, 4)
FP8_E4M3FNUZ = FloatFormat(4, 3, special="fnuz")
FP8_E5M2FNUZ = FloatFormat(5, 2, special="fnuz")
FP8_E4M3B11FNUZ = FloatFormat(4, 3, bias=11, special="fnuz")

NAMED: dict[str, FloatFormat] = {
    "bf16": BF16, "fp16": FP16, "e4m3fn": FP8_E4M3FN, "e5m2": FP8_E5M2, "e4m3": FP8_E4M3, "e3m4": FP8_E3M4,
    "e4m3fnuz": FP8_E4M3FNUZ, "e5m2fnuz": FP8_E5M2FNUZ, "e4m3b11fnuz": FP8_E4M3B11FNUZ,
}

# the ml_dtypes type of a format, where ml_dtypes has it (fp16 is numpy's float16)
ML_DTYPES_NAMES: dict[FloatFormat, str] = {
    BF16: "bfloat16", FP8_E4M3FN: "float8_e4m3fn", FP8_E5M2: "float8_e5m2", FP8_E4M3: "float8_e4m3",
    FP8_E3M4: "float8_e3m4", FP8_E4M3FNUZ: "float8_e4m3fnuz", FP8_E5M2FNUZ: "float8_e5m2fnuz",
    FP8_E4M3B11FNUZ: "float8_e4m3b11fnuz",
}

NumberFormat = FixedFormat | FloatFormat

_SPEC = re.compile(r"\s*(?:!base2\.)?(?:(u?fixed)<\s*(?:(signed|unsigned)\s+)?(\d+)\s*,\s*(\d+)\s*>"
                   r"|float<\s*(\d+)\s*,\s*(\d+)\s*((?:,\s*(?:ieee|fn|fnuz|bias\s*=\s*\d+)\s*)*)>"
                   r"|(fp8_)?([a-z0-9]+))\s*$", re.ASCII)  # "fixed<٨, 8>" is no spelling of fixed<8, 8>


def parse_format(text: str, where: str | None = None) -> NumberFormat:
    """A format from its spelling: ``fixed<8, 8>``, ``ufixed<8, 8>``, ``fixed<unsigned 8, 8>``,
    ``float<4, 3, fn>``, ``float<4, 3, fnuz, bias = 11>``, a named one (``bf16``, ``e4m3fn``, ``fp8_e5m2``,
    ...), each optionally written as the type (``!base2.fixed<8, 8>``)."""
    m = _SPEC.match(text)
    if m is None:
        raise LoomError(f"cannot read number format {text!r}: expected fixed<I, F>, ufixed<I, F>, "
                        f"float<E, M[, fn|fnuz][, bias = B]> or one of {', '.join(NAMED)}", where=where)
    if m.group(1):
        if m.group(1) == "ufixed" and m.group(2) == "signed":
            raise LoomError(f"number format {text.strip()!r} is both unsigned (ufixed) and signed", where=where)
        signed = m.group(1) == "fixed" and m.group(2) != "unsigned"
        return FixedFormat(int(m.group(3)), int(m.group(4)), signed)
    if m.group(5):
        special, bias = None, None
        for item in filter(None, (s.strip() for s in m.group(7).split(","))):
            key = "bias" if item.startswith("bias") else "special values"
            if (bias if key == "bias" else special) is not None:  # not silently the last one
                raise LoomError(f"number format {text.strip()!r} gives its {key} twice", where=where)
            if key == "bias":
                bias = int(item.split("=")[1])
            else:
                special = item
        return FloatFormat(int(m.group(5)), int(m.group(6)), bias, special or "ieee")
    name = m.group(9)
    if name not in NAMED:
        from loom.core.text import did_you_mean

        raise LoomError(f"unknown number format {text.strip()!r} (named formats: {', '.join(NAMED)})"
                        f"{did_you_mean(name, NAMED)}", where=where)
    return NAMED[name]


__all__ = ["ROUNDING", "FIXED_OVERFLOW", "FLOAT_OVERFLOW", "SPECIALS", "FixedFormat", "FloatFormat",
           "NumberFormat", "check_modes", "constant_in", "default_overflow", "float_op", "parse_format", "round_ratio", "storage_bits", "NAMED",
           "ML_DTYPES_NAMES", "BF16", "FP16", "F32", "FP8_E4M3FN", "FP8_E5M2", "FP8_E4M3", "FP8_E3M4",
           "FP8_E4M3FNUZ", "FP8_E5M2FNUZ", "FP8_E4M3B11FNUZ"]
