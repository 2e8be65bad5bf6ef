"""The f32 route of float-format arithmetic (used by ``lower-base2-to-arith``): compute in f32, round once.

For a format of precision ``p = M + 1`` with ``2p + 2 <= 24`` (bf16, fp16 and every fp8), +, -, * and /
computed in f32 (round to nearest even) and then rounded to nearest even into the format give the correctly
rounded result: double rounding is innocuous when the wider precision is at least ``2p + 2`` (S. A. Figueroa,
"When is double rounding innocuous?", ACM SIGNUM Newsletter 30(3), 1995). Figueroa's theorem assumes unbounded
exponents; ``uses_f32_route`` admits an op only where f32's range does not break it (the argument per op is in
its comments). ``fma``: the product is exact in f32 (fp8 formats) or else in f64, TwoSum gives the exact
residual of the sum, and the f32 result is made round-to-odd from the residual's sign, which any rounding into a format at least two
bits narrower keeps exact (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
using rounding to odd", IEEE Trans. Computers 57(4), 2008).

Everything stays in 32-bit lanes (i32 and f32; f64 only for bf16's fma) with constant shift amounts and selects
instead of branches, so gcc -O3 vectorises the element loops with baseline SSE2. Other rounding modes, and
formats or ops outside the conditions, keep the exact integer/f64 lowering of ``base2_emit``.
"""

from __future__ import annotations

from fractions import Fraction

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from loom.core.numformats import FloatFormat
from loom.passes.base2_emit import F32T, F64T, I32, I64, Emitter, two_sum

_F32_MAX_EXP = 127
_F32_MIN_NORMAL_EXP = -126
_F32_QUANTUM_EXP = -149  # the smallest f32 subnormal
_F32_INF = 0x7F800000
_F32_QNAN = 0x7FC00000
_F32_OVERFLOW = Fraction(2 ** 25 - 1, 2 ** 24) * 2 ** 127  # f32 rounds this and more to infinity
# (an op on the f32 route must not reach it unless the overflow mode is "inf", where overflowing to
# infinity and an exact infinity give the same pattern)


def _quantum_exp(fmt: FloatFormat) -> int:
    """log2 of the smallest subnormal."""
    return 1 - fmt.bias - fmt.man_bits


def _top_exp(fmt: FloatFormat) -> int:
    """log2 of the largest finite value, rounded down."""
    return fmt.exp_all_ones - (1 if fmt.special == "ieee" else 0) - fmt.bias


def _largest(fmt: FloatFormat) -> Fraction:
    mag = fmt.max_magnitude & ((1 << fmt.man_bits) - 1)
    return Fraction(2) ** _top_exp(fmt) * (1 + Fraction(mag, 1 << fmt.man_bits))


def _f32_layout(fmt: FloatFormat) -> bool:
    """bf16-like: f32's sign and exponent, its patterns are f32 patterns with low mantissa bits cut."""
    return fmt.special == "ieee" and fmt.exp_bits == 8 and fmt.bias == 127


def fits_f32(fmt: FloatFormat) -> bool:
    """Every value of ``fmt`` is an f32, its normal numbers are f32 normals, and ``2p + 2 <= 24``."""
    return (2 * (fmt.man_bits + 1) + 2 <= 24 and 1 - fmt.bias >= _F32_MIN_NORMAL_EXP
            and _top_exp(fmt) <= _F32_MAX_EXP)


def _products_exact_in_f32(fmt: FloatFormat) -> bool:
    """2p <= 24 significant bits, on a grid no finer than f32's smallest subnormal."""
    return 2 * (fmt.man_bits + 1) <= 24 and 2 * _quantum_exp(fmt) >= _F32_QUANTUM_EXP


def _may_overflow_f32(fmt: FloatFormat, op: str) -> bool:
    big, small = _largest(fmt), Fraction(2) ** _quantum_exp(fmt)
    largest_result = {"add": 2 * big, "sub": 2 * big, "mul": big * big, "div": big / small,
                      "fma": big * big + big}[op]
    return largest_result >= _F32_OVERFLOW


def uses_f32_route(fmt, op: str, rounding: str, overflow: str) -> bool:
    """Whether ``op`` ("add", "sub", "mul", "div", "fma", or "cast" between f32 and ``fmt``) is lowered
    through f32; else the integer lowering of ``base2_emit`` is used."""
    if not isinstance(fmt, FloatFormat) or rounding != "nearest_even" or not fits_f32(fmt):
        return False
    if op == "cast":  # one rounding of an exact f32
        return True
    if overflow != "inf" and _may_overflow_f32(fmt, op):
        return False  # an f32 infinity would be taken for an exact one, not saturated
    p, qmin = fmt.man_bits + 1, _quantum_exp(fmt)
    if op in ("add", "sub"):
        # normal f32 results: Figueroa; below f32's smallest normal the exact sum (a multiple of 2**qmin,
        # qmin >= -149) is an f32 itself
        return True
    if op == "mul":
        # products A*B*2**e (A, B < 2**p) with e >= -149 are exact in f32 (2p <= 24). With e <= -150 (only
        # if 2*qmin < -149), x < (2**p - 1)**2 * 2**-150: if even that plus f32's half step stays below the
        # format's first midpoint 2**(qmin - 1), both x and its f32 rounding round to zero.
        return _products_exact_in_f32(fmt) or (2 ** p - 1) ** 2 + 1 < 2 ** (qmin + 149)
    if op == "div":
        # quotients at least f32's smallest normal: Figueroa. Smaller ones x = a / b lie on the format's
        # subnormal grid (1 - bias >= -126) and need b normal (a subnormal b gives x > 2**-M); then for a
        # midpoint m = (2k + 1) * 2**(qmin - 1), a - m*b is a multiple of 2**min(alpha, beta + qmin - 1)
        # (a = A*2**alpha, b = B*2**beta, 2**(p-1) <= B < 2**p, A < 2**p), so |x - m| > 2**(min(alpha - beta,
        # qmin - 1) - p) and alpha - beta > qmin - 3: with qmin >= p - 147 that exceeds f32's half step
        # 2**-150, so the f32 quotient does not reach or cross m. (The same bound, |x - m| > 2**(e - 2p) for x
        # in [2**e, 2**(e+1)), keeps quotients in the format's subnormal range but f32's normal one apart
        # from every midpoint by more than f32's half step 2**(e - 24).)
        smallest_quotient = Fraction(2) ** qmin / _largest(fmt)
        return smallest_quotient >= Fraction(2) ** _F32_MIN_NORMAL_EXP or qmin >= p - 147
    assert op == "fma"
    return qmin - 2 >= _F32_QUANTUM_EXP  # round-to-odd in f32 needs two bits below the format's grid


def _blend(em: Emitter, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    """``condition ? a : b`` on i32 as mask arithmetic. Where an arm comes from an f32 op, a select lets
    gcc sink that op into a branch, and -ftrapping-math (the default) then keeps the branch and the loop
    scalar; with the value used unconditionally the loop vectorises."""
    mask = em.extsi(condition, I32)  # true -> -1
    return em.add(arith.XOrIOp(b, em.andi(em.add(arith.XOrIOp(a, b)), mask)))


# ---- conversions -------------------------------------------------------------------------------


def float_to_f32(em: Emitter, stored: SSAValue, fmt: FloatFormat, canonical_nan: bool) -> SSAValue:
    """The exact f32 value of a stored pattern (``fits_f32(fmt)``); ``canonical_nan``: a NaN becomes f32's
    quiet NaN with its sign (conversions), else any NaN (operands: arithmetic makes its own NaN)."""
    bits = em.extui(stored, I32) if stored.type != I32 else stored
    e, m = fmt.exp_bits, fmt.man_bits
    if _f32_layout(fmt):
        f32_bits = em.shli(bits, em.int(23 - m, I32))
        if not canonical_nan:
            return em.bitcast(f32_bits, F32T)
        magnitude = em.andi(f32_bits, em.int(0x7FFFFFFF, I32))
        sign = em.andi(f32_bits, em.int(-(1 << 31), I32))
    else:
        bits = em.andi(bits, em.int((1 << fmt.width) - 1, I32))
        exp = em.andi(em.shrui(bits, em.int(m, I32)), em.int(fmt.exp_all_ones, I32))
        man = em.andi(bits, em.int((1 << m) - 1, I32))
        # the pattern's exponent and mantissa as an f32's low exponent bits and high mantissa bits: that f32
        # times 2**(127 - bias) is the value, subnormals included (an exact power-of-two multiply)
        unsigned = em.andi(bits, em.int(fmt.sign_bit - 1, I32))
        shifted = em.bitcast(em.shli(unsigned, em.int(23 - m, I32)), F32T)
        magnitude = em.bitcast(em.mulf(shifted, em.f32(2.0 ** (127 - fmt.bias))), I32)
        if fmt.special == "ieee":
            top = em.cmpi("eq", exp, em.int(fmt.exp_all_ones, I32))
            magnitude = _blend(em, top, em.ori(em.shli(man, em.int(23 - m, I32)), em.int(_F32_INF, I32)), magnitude)
        elif fmt.special == "fn":
            all_ones = em.cmpi("eq", em.andi(bits, em.int(fmt.sign_bit - 1, I32)), em.int(fmt.sign_bit - 1, I32))
            magnitude = _blend(em, all_ones, em.int(_F32_QNAN, I32), magnitude)
        else:  # fnuz: the one NaN is the negative zero pattern
            magnitude = _blend(em, em.cmpi("eq", bits, em.int(fmt.sign_bit, I32)), em.int(_F32_QNAN, I32), magnitude)
        sign = em.shli(em.andi(bits, em.int(fmt.sign_bit, I32)), em.int(31 - e - m, I32))
    if canonical_nan:
        is_nan = em.cmpi("sgt", magnitude, em.int(_F32_INF, I32))
        magnitude = _blend(em, is_nan, em.int(_F32_QNAN, I32), magnitude)
    return em.bitcast(em.ori(sign, magnitude), F32T)


def _round_to_odd(em: Emitter, u: SSAValue, direction: SSAValue) -> SSAValue:
    """The f32 pattern ``u`` of a rounded value made round-to-odd: where the exact value differs from it
    (``direction``, an f32 or f64, is exact - value) and its last bit is even, one step toward the exact
    value. The value is finite or infinite with its direction finite or NaN, in which case nothing moves."""
    # sign and non-zeroness from the direction's bits (a float comparison is a trapping op to gcc, see
    # _blend); ``high`` is the word with the sign and the exponent
    if direction.type == F64T:  # never an f64 subnormal here (a multiple of 2**(2 * qmin)): the high word decides
        high = em.trunci(em.shrui(em.bitcast(direction, I64), em.i64(32)), I32)
    else:
        high = em.bitcast(direction, I32)
    nonzero = em.cmpi("ne", em.andi(high, em.int(0x7FFFFFFF, I32)), em.int(0, I32))
    zero = em.int(0, I32)
    # the exact magnitude is larger when the direction has the value's sign
    away = em.cmpi("sge", em.add(arith.XOrIOp(high, u)), zero)
    finite = em.cmpi("slt", em.andi(u, em.int(0x7FFFFFFF, I32)), em.int(_F32_INF, I32))
    # even as the integer 1 - (u & 1) (gcc turns a boolean of a bit test into a 1-bit type it does not vectorise)
    even = em.add(arith.XOrIOp(em.andi(u, em.int(1, I32)), em.int(1, I32)))
    fix = em.andi(even, em.extui(em.and1(nonzero, finite), I32))
    step = em.select(away, em.int(1, I32), em.int(-1, I32))
    return em.addi(u, em.andi(step, em.subi(zero, fix)))


def f32_to_float(em: Emitter, value: SSAValue, fmt: FloatFormat, overflow: str, canonical_nan: bool,
                 direction: SSAValue | None = None) -> SSAValue:
    """The pattern (i32) of the f32 ``value`` rounded to nearest even into ``fmt`` (``fits_f32(fmt)``).

    ``direction`` (an f64, exact - value) first makes ``value`` round-to-odd. ``canonical_nan``: a NaN
    becomes the positive quiet NaN (arithmetic), else the quiet NaN with its sign (conversions). An f32
    infinity is taken as exact: the overflow mode applies to finite values beyond the format's largest.
    """
    u = em.bitcast(value, I32)
    if direction is not None:
        u = _round_to_odd(em, u, direction)
    m, qmin = fmt.man_bits, _quantum_exp(fmt)
    magnitude_bits = em.andi(u, em.int(0x7FFFFFFF, I32))
    # normal results: rebias, then round the low 23 - M bits to nearest even with an integer add (a carry
    # moves into the exponent); anything from 2**(top + 1) up is clamped there, which is too big
    shift = 23 - m
    clamped = em.minsi(magnitude_bits, em.int(min((_top_exp(fmt) + 1 + 127) << 23, _F32_INF), I32))
    odd = em.andi(em.shrui(clamped, em.int(shift, I32)), em.int(1, I32))
    biased = em.addi(clamped, em.int(((fmt.bias - 127) << 23) + (1 << (shift - 1)) - 1, I32))
    normal = em.shrui(em.addi(biased, odd), em.int(shift, I32))
    # subnormal results: adding 2**(qmin + 23) leaves f32 a step of 2**qmin, so the f32 add rounds the
    # magnitude to the format's subnormal grid (nearest even); the pattern is the count of steps
    magic = 2.0 ** (qmin + 23)
    stepped = em.bitcast(em.addf(em.bitcast(magnitude_bits, F32T), em.f32(magic)), I32)
    subnormal = em.subi(stepped, em.int((qmin + 23 + 127) << 23, I32))
    tiny = em.cmpi("slt", magnitude_bits, em.int((1 - fmt.bias + 127) << 23, I32))
    magnitude = _blend(em, tiny, subnormal, normal)
    # overflow, infinities and NaN as in base2_emit.f64_to_float
    zero = em.int(0, I32)
    sign_field = em.shrui(em.andi(u, em.int(-(1 << 31), I32)), em.int(31 - fmt.exp_bits - m, I32))
    too_big = em.cmpi("sgt", magnitude, em.int(fmt.max_magnitude, I32))
    is_inf = em.cmpi("eq", magnitude_bits, em.int(_F32_INF, I32))
    if overflow == "saturate":
        magnitude = em.select(too_big, em.int(fmt.max_magnitude, I32), magnitude)
        to_special = is_inf
    else:
        to_special = em.or1(too_big, is_inf)
    if fmt.special == "fnuz":
        sign_field = em.select(em.cmpi("eq", magnitude, zero), zero, sign_field)
        special_value = em.int(fmt.nan_bits(), I32)
    else:
        special_value = em.ori(sign_field, em.int(fmt.inf_bits() if fmt.has_inf else fmt.nan_bits(), I32))
    result = em.select(to_special, special_value, em.ori(sign_field, magnitude))
    is_nan = em.cmpi("sgt", magnitude_bits, em.int(_F32_INF, I32))
    if canonical_nan or fmt.special == "fnuz":
        nan = em.int(fmt.nan_bits(), I32)
    else:
        nan = em.select(em.cmpi("ne", sign_field, zero), em.int(fmt.nan_bits(True), I32), em.int(fmt.nan_bits(), I32))
    return em.select(is_nan, nan, result)


def float_binary_f32(em: Emitter, op: str, stored: list[SSAValue], fmt: FloatFormat, overflow: str) -> SSAValue:
    """add/sub/mul/div/fma on stored patterns of ``fmt`` (``uses_f32_route``); the result's pattern (i32)."""
    xs = [float_to_f32(em, s, fmt, canonical_nan=False) for s in stored]
    if op != "fma":
        make = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp}[op]
        return f32_to_float(em, em.add(make(xs[0], xs[1])), fmt, overflow, canonical_nan=True)
    if _products_exact_in_f32(fmt):  # TwoSum in f32 is exact (no overflow: an infinity is exact, see above)
        total, residual = two_sum(em, em.mulf(xs[0], xs[1]), xs[2])
        return f32_to_float(em, total, fmt, overflow, canonical_nan=True, direction=residual)
    a, b, c = (em.add(arith.ExtFOp(x, F64T)) for x in xs)
    total, residual = two_sum(em, em.mulf(a, b), c)  # the product is exact in f64
    rounded = em.add(arith.TruncFOp(total, F32T))
    # exact - rounded: total - rounded is exact (both on total's grid, close), and adding the residual
    # (at most half of total's step) keeps the sign
    direction = em.addf(em.subf(total, em.add(arith.ExtFOp(rounded, F64T))), residual)
    return f32_to_float(em, rounded, fmt, overflow, canonical_nan=True, direction=direction)


__all__ = ["uses_f32_route", "fits_f32", "float_to_f32", "f32_to_float", "float_binary_f32"]
