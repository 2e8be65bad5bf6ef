"""The arith/math sequences that implement ``loom.core.numformats`` semantics (used by
``lower-base2-to-arith``).

Every value travels as one of two carriers:

- fixed point and integers as their raw integer in ``i64`` (sign- or zero-extended), where every
  operation is exact (width <= 32: products < 2**63, see ``numformats``' limits);
- anything else as an ``f64`` that holds the value exactly (every fixed/float format value and every
  f32 is an f64), plus, after an inexact float operation, an ``f64`` *residual* whose sign says on
  which side of the computed f64 the exact result lies (TwoSum for add/sub/fma, ``fma(-q, b, a)`` for
  div; mul is exact). Rounding an (f64, residual) pair into a narrower format with integer ops on its
  bits is then exact for every rounding mode: a format's grid points and midpoints are f64 values, and
  the residual is smaller than half an f64 step, so it only matters when the f64 lies exactly on one.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Operation, SSAValue

from loom.core.numformats import FixedFormat, FloatFormat

I1, I32, I64 = IntegerType(1), IntegerType(32), IntegerType(64)
F32T, F64T = Float32Type(), Float64Type()
_EXP_ONE = 1023 << 52  # bits of f64 1.0
_F64_INF = 0x7FF << 52


class Emitter:
    """Appends arith/math ops to ``ops`` and returns their results (constants are cached)."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []
        self._consts: dict[tuple, SSAValue] = {}

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    # constants
    def i64(self, value: int) -> SSAValue:
        return self._const(("i", value), lambda: arith.ConstantOp(IntegerAttr(value, I64)))

    def f64(self, value: float) -> SSAValue:
        return self._const(("f", value), lambda: arith.ConstantOp(FloatAttr(value, F64T)))

    def int(self, value: int, ty: IntegerType) -> SSAValue:
        """An integer constant of any width (stored signed, as MLIR prints it)."""
        width = ty.width.data
        value &= (1 << width) - 1
        if value >= 1 << (width - 1):
            value -= 1 << width
        return self._const(("i", width, value), lambda: arith.ConstantOp(IntegerAttr(value, ty)))

    def f32(self, value: float) -> SSAValue:
        return self._const(("f32", value), lambda: arith.ConstantOp(FloatAttr(value, F32T)))

    def true(self) -> SSAValue:
        return self._const(("b", 1), lambda: arith.ConstantOp(IntegerAttr(1, I1)))

    def _const(self, key: tuple, make) -> SSAValue:
        if key not in self._consts:
            self._consts[key] = self.add(make())
        return self._consts[key]

    # integers (i64 unless said otherwise)
    def addi(self, a, b): return self.add(arith.AddiOp(a, b))
    def subi(self, a, b): return self.add(arith.SubiOp(a, b))
    def muli(self, a, b): return self.add(arith.MuliOp(a, b))
    def andi(self, a, b): return self.add(arith.AndIOp(a, b))
    def ori(self, a, b): return self.add(arith.OrIOp(a, b))
    def shli(self, a, b): return self.add(arith.ShLIOp(a, b))
    def shrsi(self, a, b): return self.add(arith.ShRSIOp(a, b))
    def shrui(self, a, b): return self.add(arith.ShRUIOp(a, b))
    def maxsi(self, a, b): return self.add(arith.MaxSIOp(a, b))
    def minsi(self, a, b): return self.add(arith.MinSIOp(a, b))
    def floordivsi(self, a, b): return self.add(arith.FloorDivSIOp(a, b))
    def cmpi(self, pred: str, a, b): return self.add(arith.CmpiOp(a, b, pred))
    def select(self, c, a, b): return self.add(arith.SelectOp(c, a, b))
    def extui(self, a, ty=I64): return self.add(arith.ExtUIOp(a, ty))
    def extsi(self, a, ty=I64): return self.add(arith.ExtSIOp(a, ty))
    def trunci(self, a, ty): return self.add(arith.TruncIOp(a, ty))
    def bitcast(self, a, ty): return self.add(arith.BitcastOp(a, ty))
    def and1(self, a, b): return self.add(arith.AndIOp(a, b))
    def or1(self, a, b): return self.add(arith.OrIOp(a, b))
    def not1(self, a): return self.add(arith.XOrIOp(a, self.true()))

    def widen(self, value: SSAValue, signed: bool) -> SSAValue:
        """An i8/i16/i32 value as i64."""
        if value.type == I64:
            return value
        return self.extsi(value) if signed else self.extui(value)

    def narrow(self, value: SSAValue, bits: int) -> SSAValue:
        return value if bits == 64 else self.trunci(value, IntegerType(bits))

    # floats (f64 unless said otherwise)
    def addf(self, a, b): return self.add(arith.AddfOp(a, b))
    def subf(self, a, b): return self.add(arith.SubfOp(a, b))
    def mulf(self, a, b): return self.add(arith.MulfOp(a, b))
    def divf(self, a, b): return self.add(arith.DivfOp(a, b))
    def negf(self, a): return self.add(arith.NegfOp(a))
    def cmpf(self, pred: str, a, b): return self.add(arith.CmpfOp(a, b, pred))
    def fma(self, a, b, c): return self.add(math.FmaOp(a, b, c))
    def sitofp(self, a): return self.add(arith.SIToFPOp(a, F64T))
    def fptosi(self, a): return self.add(arith.FPToSIOp(a, I64))

    def round_to_integer(self, value: SSAValue, rounding: str) -> SSAValue:
        op = {"truncate": math.FloorOp, "nearest_even": math.RoundEvenOp, "nearest_away": math.RoundOp}[rounding]
        return self.add(op(value))


# ---- fixed point (and integers: FixedFormat(N, 0, signed)) ---------------------------------------


def _sign_extend(em: Emitter, value: SSAValue, width: int, signed: bool) -> SSAValue:
    """The low ``width`` bits of an i64, sign- (or zero-) extended: mask, then xor/subtract the sign bit
    (branch-free and without shifts, which gcc vectorises; a shift pair would go through the C backend's
    portable arithmetic shift)."""
    low = em.andi(value, em.i64((1 << width) - 1))
    if not signed:
        return low
    sign = em.i64(1 << (width - 1))
    return em.subi(em.add(arith.XOrIOp(low, sign)), sign)


def fixed_raw(em: Emitter, stored: SSAValue, fmt: FixedFormat) -> SSAValue:
    """The raw value (i64) of a stored pattern; bits above the format's width are ignored."""
    wide = em.widen(stored, fmt.signed)
    if fmt.width == fmt.storage_bits:
        return wide
    return _sign_extend(em, wide, fmt.width, fmt.signed)


def fixed_store(em: Emitter, raw: SSAValue, fmt: FixedFormat) -> SSAValue:
    return em.narrow(raw, fmt.storage_bits)


def fixed_overflow(em: Emitter, q: SSAValue, fmt: FixedFormat, overflow: str) -> SSAValue:
    """``q`` (any i64) into the format's range: clamp, or keep the low W bits (sign-extended)."""
    if overflow == "saturate":
        return em.maxsi(em.minsi(q, em.i64(fmt.max_raw)), em.i64(fmt.min_raw))
    if fmt.width == fmt.storage_bits:  # the storage truncation wraps; extend back for later arithmetic
        narrow = em.trunci(q, IntegerType(fmt.width))
        return em.extsi(narrow) if fmt.signed else em.extui(narrow)
    return _sign_extend(em, q, fmt.width, fmt.signed)


def floor_shift(em: Emitter, p: SSAValue, shift: int) -> SSAValue:
    """``floor(p / 2**shift)``: an arithmetic shift. (Not the branch-free ``((p ^ 2**63) >> shift) -
    2**(63 - shift)``: gcc 12 -O3 vectorises that followed by a clamp into wrong code.)"""
    return em.shrsi(p, em.i64(shift))


def _round_up(em: Emitter, rounding: str, greater: SSAValue, tie: SSAValue, q: SSAValue,
              nonnegative: SSAValue) -> SSAValue:
    """Whether to add 1 to the floor ``q``: past the midpoint, or on it (even: q odd; away: x >= 0)."""
    if rounding == "nearest_even":
        odd = em.cmpi("ne", em.andi(q, em.i64(1)), em.i64(0))
        return em.or1(greater, em.and1(tie, odd))
    return em.or1(greater, em.and1(tie, nonnegative))


def round_shift(em: Emitter, p: SSAValue, shift: int, rounding: str) -> SSAValue:
    """``p / 2**shift`` rounded to an integer (floor for truncate)."""
    if shift == 0:
        return p
    q = floor_shift(em, p, shift)
    if rounding == "truncate":
        return q
    rem = em.andi(p, em.i64((1 << shift) - 1))
    half = em.i64(1 << (shift - 1))
    up = _round_up(em, rounding, em.cmpi("sgt", rem, half), em.cmpi("eq", rem, half), q,
                   em.cmpi("sge", p, em.i64(0)))
    return em.addi(q, em.extui(up))


def round_div(em: Emitter, n: SSAValue, d: SSAValue, rounding: str) -> SSAValue:
    """``n / d`` (``d != 0``) rounded to an integer (floor for truncate)."""
    negative = em.cmpi("slt", d, em.i64(0))
    zero = em.i64(0)
    n = em.select(negative, em.subi(zero, n), n)
    d = em.select(negative, em.subi(zero, d), d)
    q = em.floordivsi(n, d)
    if rounding == "truncate":
        return q
    twice = em.shli(em.subi(n, em.muli(q, d)), em.i64(1))  # 2 * remainder, 0 <= rem < d <= 2**32
    up = _round_up(em, rounding, em.cmpi("sgt", twice, d), em.cmpi("eq", twice, d), q,
                   em.cmpi("sge", n, zero))
    return em.addi(q, em.extui(up))


def fixed_binary(em: Emitter, op: str, raws: list[SSAValue], fmt: FixedFormat, rounding: str,
                 overflow: str) -> SSAValue:
    """add/sub/mul/div/fma on raw values (i64) of ``fmt``; the raw result (i64)."""
    a, b = raws[0], raws[1]
    frac = fmt.frac_bits
    if op == "add":
        return fixed_overflow(em, em.addi(a, b), fmt, overflow)
    if op == "sub":
        return fixed_overflow(em, em.subi(a, b), fmt, overflow)
    if op == "mul":
        return fixed_overflow(em, round_shift(em, em.muli(a, b), frac, rounding), fmt, overflow)
    if op == "fma":
        exact = em.addi(em.muli(a, b), em.shli(raws[2], em.i64(frac)))
        return fixed_overflow(em, round_shift(em, exact, frac, rounding), fmt, overflow)
    # div: x / 0 is the largest value of x's sign (0 / 0 = 0); the divisor 0 is never divided by
    zero = em.i64(0)
    by_zero = em.cmpi("eq", b, zero)
    q = round_div(em, em.shli(a, em.i64(frac)), em.select(by_zero, em.i64(1), b), rounding)
    q = fixed_overflow(em, q, fmt, overflow)
    limit = em.select(em.cmpi("sgt", a, zero), em.i64(fmt.max_raw), em.i64(fmt.min_raw))
    return em.select(by_zero, em.select(em.cmpi("eq", a, zero), zero, limit), q)


def fixed_to_f64(em: Emitter, raw: SSAValue, fmt: FixedFormat) -> SSAValue:
    value = em.sitofp(raw)
    return value if fmt.frac_bits == 0 else em.mulf(value, em.f64(2.0 ** -fmt.frac_bits))


def f64_to_fixed(em: Emitter, value: SSAValue, fmt: FixedFormat, rounding: str, overflow: str) -> SSAValue:
    """The raw value (i64) of an exact f64 in ``fmt``: NaN -> 0, +-inf saturate."""
    scaled = value if fmt.frac_bits == 0 else em.mulf(value, em.f64(2.0 ** fmt.frac_bits))
    r = em.round_to_integer(scaled, rounding)
    is_nan = em.cmpf("uno", value, value)
    if overflow == "saturate":
        low, high = em.f64(float(fmt.min_raw)), em.f64(float(fmt.max_raw))
        r = em.select(em.cmpf("olt", r, low), low, r)
        r = em.select(em.cmpf("ogt", r, high), high, r)
        return em.fptosi(em.select(is_nan, em.f64(0.0), r))
    # wrap: r mod 2**W, exact in f64 (see module docstring of numformats); then the low W bits
    modulus = float(1 << fmt.width)
    m = em.subf(r, em.mulf(em.f64(modulus), em.round_to_integer(em.mulf(r, em.f64(1 / modulus)), "truncate")))
    m = em.select(em.cmpf("uno", m, m), em.f64(0.0), m)  # NaN, or r infinite after scaling: 0
    q = fixed_overflow(em, em.fptosi(m), fmt, "wrap")
    q = em.select(em.cmpf("oeq", value, em.f64(float("inf"))), em.i64(fmt.max_raw), q)
    q = em.select(em.cmpf("oeq", value, em.f64(float("-inf"))), em.i64(fmt.min_raw), q)
    return em.select(is_nan, em.i64(0), q)


# ---- float formats -----------------------------------------------------------------------------


def _is_f32_layout(fmt: FloatFormat) -> bool:
    """An IEEE format with f32's exponent: its patterns are f32 patterns with the low bits cut."""
    return fmt.special == "ieee" and fmt.exp_bits == 8 and fmt.bias == 127


def float_to_f64(em: Emitter, stored: SSAValue, fmt: FloatFormat) -> SSAValue:
    """The exact f64 value of a stored pattern (bits above the width are ignored)."""
    if _is_f32_layout(fmt):
        bits32 = em.extui(stored, I32) if stored.type != I32 else stored
        bits32 = em.add(arith.ShLIOp(bits32, _i32_const(em, 23 - fmt.man_bits)))
        return em.add(arith.ExtFOp(em.bitcast(bits32, F32T), F64T))
    bits = em.andi(em.extui(stored) if stored.type != I64 else stored, em.i64((1 << fmt.width) - 1))
    man_mask = (1 << fmt.man_bits) - 1
    exp = em.andi(em.shrui(bits, em.i64(fmt.man_bits)), em.i64(fmt.exp_all_ones))
    man = em.andi(bits, em.i64(man_mask))
    normal = em.cmpi("ne", exp, em.i64(0))
    significand = em.select(normal, em.ori(man, em.i64(1 << fmt.man_bits)), man)
    # 2**(max(exp, 1) - bias - M) built from its f64 bits: exact, no libm
    scale_bits = em.shli(em.addi(em.maxsi(exp, em.i64(1)), em.i64(1023 - fmt.bias - fmt.man_bits)), em.i64(52))
    significand = em.trunci(significand, I32)  # < 2**24: the i32 -> f64 conversion vectorises, i64's does not
    magnitude = em.mulf(em.add(arith.SIToFPOp(significand, F64T)), em.bitcast(scale_bits, F64T))
    if fmt.special == "ieee":
        top = em.cmpi("eq", exp, em.i64(fmt.exp_all_ones))
        special = em.select(em.cmpi("eq", man, em.i64(0)), em.f64(float("inf")), em.f64(float("nan")))
        magnitude = em.select(top, special, magnitude)
    elif fmt.special == "fn":
        nan = em.cmpi("eq", em.andi(bits, em.i64(fmt.sign_bit - 1)), em.i64(fmt.sign_bit - 1))
        magnitude = em.select(nan, em.f64(float("nan")), magnitude)
    negative = em.cmpi("ne", em.andi(bits, em.i64(fmt.sign_bit)), em.i64(0))
    value = em.select(negative, em.negf(magnitude), magnitude)
    if fmt.special == "fnuz":
        value = em.select(em.cmpi("eq", bits, em.i64(fmt.sign_bit)), em.f64(float("nan")), value)
    return value


def _i32_const(em: Emitter, value: int) -> SSAValue:
    return em.int(value, I32)


def two_sum(em: Emitter, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
    """TwoSum (Knuth): ``s = fl(a + b)`` and ``err`` with ``s + err == a + b`` exactly (no overflow)."""
    s = em.addf(a, b)
    bb = em.subf(s, a)
    return s, em.addf(em.subf(a, em.subf(s, bb)), em.subf(b, bb))


def f64_to_float(em: Emitter, value: SSAValue, residual: SSAValue | None, fmt: FloatFormat, rounding: str,
                 overflow: str, canonical_nan: bool) -> SSAValue:
    """The pattern (i64) of ``value + residual`` rounded into ``fmt``.

    ``residual`` (None: 0) is only read for its sign relative to ``value``; ``canonical_nan``: a NaN becomes
    the positive quiet NaN (arithmetic), else the quiet NaN with its sign (conversions).

    The magnitude is scaled by a power of two so that one step of the result's mantissa is 1 (an exact
    f64 multiply, the power built from its bits); its integer part is the truncated mantissa and its
    fraction decides the rounding. No shift depends on the value, so the loop stays branch-free.
    """
    bits = em.bitcast(value, I64)
    sign = em.shrui(bits, em.i64(63))
    magnitude_bits = em.andi(bits, em.i64((1 << 63) - 1))
    e64 = em.shrui(magnitude_bits, em.i64(52))
    # biased f64 exponent of one mantissa step of the result (subnormal results: the fixed smallest step)
    step = em.subi(em.maxsi(e64, em.i64(1 - fmt.bias + 1023)), em.i64(fmt.man_bits))
    inverse = em.bitcast(em.shli(em.subi(em.i64(2046), step), em.i64(52)), F64T)  # 2**-(step - 1023)
    scaled = em.mulf(em.bitcast(magnitude_bits, F64T), inverse)  # < 2**(M + 1): fits i32
    finite = em.cmpi("slt", magnitude_bits, em.i64(_F64_INF))
    scaled = em.select(finite, scaled, em.f64(0.0))  # inf/NaN (handled below) must not reach the conversion
    whole = em.add(arith.FPToSIOp(scaled, I32))  # truncation = floor (scaled >= 0)
    fraction = em.subf(scaled, em.add(arith.SIToFPOp(whole, F64T)))
    q = em.extsi(whole)
    zero = em.i64(0)
    up_dir = down_dir = None
    if residual is not None:
        positive_r = em.cmpf("ogt", residual, em.f64(0.0))
        negative_r = em.cmpf("olt", residual, em.f64(0.0))
        negative_v = em.cmpi("ne", sign, zero)
        up_dir = em.select(negative_v, negative_r, positive_r)  # the exact magnitude is larger
        down_dir = em.select(negative_v, positive_r, negative_r)
    if rounding == "truncate":
        if down_dir is not None:  # exactly on a grid point, the exact value just below it
            q = em.subi(q, em.extui(em.and1(em.cmpf("oeq", fraction, em.f64(0.0)), down_dir)))
    else:
        greater = em.cmpf("ogt", fraction, em.f64(0.5))
        tie = em.cmpf("oeq", fraction, em.f64(0.5))
        if rounding == "nearest_even":
            odd = em.cmpi("ne", em.andi(q, em.i64(1)), zero)
            tie_up = odd if up_dir is None else em.or1(up_dir, em.and1(em.not1(down_dir), odd))
        else:
            tie_up = em.true() if down_dir is None else em.not1(down_dir)
        q = em.addi(q, em.extui(em.or1(greater, em.and1(tie, tie_up))))
    # a normal q carries the implicit bit: adding the exponent field works across a rounding carry
    biased = em.addi(e64, em.i64(fmt.bias - 1023))
    exponent_field = em.subi(em.maxsi(biased, em.i64(1)), em.i64(1))
    magnitude = em.addi(em.shli(exponent_field, em.i64(fmt.man_bits)), q)
    # overflow of a finite value, and infinities (exact ones: the overflow mode does not apply)
    sign_field = em.shli(sign, em.i64(fmt.exp_bits + fmt.man_bits))
    too_big = em.cmpi("sgt", magnitude, em.i64(fmt.max_magnitude))
    is_inf = em.cmpi("eq", magnitude_bits, em.i64(_F64_INF))
    if overflow == "saturate":
        magnitude = em.select(too_big, em.i64(fmt.max_magnitude), magnitude)
        to_special = is_inf
    else:
        to_special = em.or1(too_big, is_inf)
    if fmt.special == "fnuz":  # no -0; infinities and overflow give the one NaN
        sign_field = em.select(em.cmpi("eq", magnitude, zero), zero, sign_field)
        special_value = em.i64(fmt.nan_bits())
    else:  # +-inf, or the NaN of that sign in a format without infinities
        special_value = em.ori(sign_field, em.i64(fmt.inf_bits() if fmt.has_inf else fmt.nan_bits()))
    result = em.select(to_special, special_value, em.ori(sign_field, magnitude))
    is_nan = em.cmpi("sgt", magnitude_bits, em.i64(_F64_INF))
    if canonical_nan or fmt.special == "fnuz":
        nan = em.i64(fmt.nan_bits())
    else:
        nan = em.select(em.cmpi("ne", sign, zero), em.i64(fmt.nan_bits(True)), em.i64(fmt.nan_bits()))
    return em.select(is_nan, nan, result)


def float_binary(em: Emitter, op: str, values: list[SSAValue], fmt: FloatFormat, rounding: str,
                 overflow: str) -> SSAValue:
    """add/sub/mul/div/fma on exact f64 values of ``fmt``; the result's pattern (i64)."""
    a, b = values[0], values[1]
    residual = None
    if op in ("add", "sub", "fma"):
        if op == "sub":
            b = em.negf(b)
        if op == "fma":
            a, b = em.mulf(a, b), values[2]  # the product of two format values is exact in f64
        result, residual = two_sum(em, a, b)
    elif op == "mul":
        result = em.mulf(a, b)
    else:
        result = em.divf(a, b)
        remainder = em.fma(em.negf(result), b, a)  # a - q * b, exact
        residual = em.mulf(remainder, b)  # the sign of (a / b - q)
    return f64_to_float(em, result, residual, fmt, rounding, overflow, canonical_nan=True)


__all__ = ["Emitter", "fixed_raw", "fixed_store", "fixed_overflow", "fixed_binary", "fixed_to_f64", "f64_to_fixed",
           "float_to_f64", "f64_to_float", "float_binary", "round_shift", "round_div", "two_sum", "F32T", "F64T", "I32", "I64"]
