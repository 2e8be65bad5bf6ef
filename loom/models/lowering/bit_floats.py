"""bfloat16 / float8 values (held as their bits in an integer) to float32 and back, as arith integer and float32
operations (the C backend has no type of theirs): the same values and rounding as ml_dtypes (to nearest even; NaN
keeps its sign), and, where ``saturate``, values past the largest finite one giving it (ONNX Cast's float8 default).
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType, f32, i32
from xdsl.ir import SSAValue

from loom.core.numformats import FloatFormat
from loom.models.lowering.ir import compare, const_like


def _int(value: int) -> SSAValue:
    return arith.ConstantOp.from_int_and_width(value - (1 << 32) if value >= 1 << 31 else value, 32).result


def _select(cond, a, b):
    return arith.SelectOp(cond, a, b).result


def _and(a, mask: int):
    return arith.AndIOp(a, _int(mask)).result


def _shr(a, n: int):
    return arith.ShRUIOp(a, _int(n)).result


def _shl(a, n: int):
    return arith.ShLIOp(a, _int(n)).result


def _as_float(bits):
    return arith.BitcastOp(bits, f32).result


def decode(code: SSAValue, fmt: FloatFormat) -> SSAValue:
    """The float32 of a format's bits (an integer of its width)."""
    u = arith.ExtUIOp(code, i32).result
    emin = 1 - fmt.bias
    if fmt.exp_bits == 8:  # bfloat16: float32's upper half
        return _as_float(_shl(u, 16))
    magnitude = _and(u, (1 << (fmt.width - 1)) - 1)
    exponent, fraction = _shr(magnitude, fmt.man_bits), _and(magnitude, (1 << fmt.man_bits) - 1)
    # normal: the exponent rebiased to float32's, the fraction moved to its top bits
    normal = _as_float(_shl(arith.AddiOp(magnitude, _int((127 - fmt.bias) << fmt.man_bits)).result,
                            23 - fmt.man_bits))
    tiny = arith.MulfOp(arith.UIToFPOp(fraction, f32).result,
                        const_like(normal, 2.0 ** (emin - fmt.man_bits))).result  # subnormal: fraction * quantum
    value = _select(compare("eq", exponent, _int(0)), tiny, normal)
    nan = const_like(value, float("nan"))
    if fmt.special == "ieee":
        top = compare("eq", exponent, _int((1 << fmt.exp_bits) - 1))
        special = _select(compare("eq", fraction, _int(0)), const_like(value, float("inf")), nan)
        value = _select(top, special, value)
    elif fmt.special == "fn":  # (all ones is NaN)
        value = _select(compare("eq", magnitude, _int((1 << (fmt.width - 1)) - 1)), nan, value)
    value = _select(compare("ne", _shr(u, fmt.width - 1), _int(0)), arith.NegfOp(value).result, value)
    if fmt.special == "fnuz":  # (the bits of negative zero are the NaN: ml_dtypes' is float32's negative quiet NaN)
        value = _select(compare("eq", u, _int(fmt.nan_bits())), arith.NegfOp(nan).result, value)
    return value


def encode(x: SSAValue, fmt: FloatFormat, saturate: bool) -> SSAValue:
    """The format's bits (an integer of its width) of a float32, rounded to nearest even."""
    bits = arith.BitcastOp(x, i32).result
    emin, nan = 1 - fmt.bias, fmt.nan_bits()
    magnitude = _and(bits, 0x7FFFFFFF)
    absolute = _as_float(magnitude)
    if saturate:  # (NaN compares false and stays)
        top = const_like(absolute, fmt.decode(fmt.max_magnitude))
        absolute = _select(compare("gt", absolute, top), top, absolute)
        magnitude = arith.BitcastOp(absolute, i32).result
    drop = 23 - fmt.man_bits  # float32 fraction bits the format has not
    # to nearest even on the bits: add half an ulp less one, plus the kept lowest bit; a carry moves the exponent
    rounded = arith.AddiOp(magnitude, arith.AddiOp(_int((1 << (drop - 1)) - 1),
                                                   _and(_shr(magnitude, drop), 1)).result).result
    code = arith.SubiOp(_shr(rounded, drop), _int((127 - fmt.bias) << fmt.man_bits)).result
    if emin > -126:  # the format's subnormals are float32 normals: a whole number of its quantum
        quantum = 2.0 ** (emin - fmt.man_bits)
        steps = math.RoundEvenOp(arith.DivfOp(absolute, const_like(absolute, quantum)).result).result
        small = compare("lt", absolute, const_like(absolute, 2.0 ** emin))
        code = _select(small, arith.FPToSIOp(steps, i32).result, code)
        overflow = _int(fmt.inf_bits() if fmt.has_inf else nan)  # inf, or NaN in a format without one
        code = _select(arith.CmpiOp(code, _int(fmt.max_magnitude), "sgt").result, overflow, code)
    sign = _shl(_shr(bits, 31), fmt.width - 1)
    if fmt.special == "fnuz":  # no negative zero (a negative value rounding to zero is +0) and a NaN without a sign
        sign = _select(arith.OrIOp(compare("eq", code, _int(0)), compare("eq", code, _int(nan))).result,
                       _int(0), sign)
    code = _select(compare("ne", absolute, absolute), _int(nan), code)
    if fmt.special == "fnuz":
        sign = _select(compare("ne", absolute, absolute), _int(0), sign)
    return arith.TruncIOp(arith.OrIOp(code, sign).result, IntegerType(fmt.width)).result
