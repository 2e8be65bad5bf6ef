"""The Python reference of the number formats, checked against independent references: ml_dtypes
(bit for bit, exhaustively over every 8/16-bit pattern), numpy's float16/float32, and
``fractions.Fraction`` for fixed-point arithmetic in every rounding and overflow mode."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.core import numformats as nf
from loom.errors import LoomError

ml_dtypes = pytest.importorskip("ml_dtypes")

ML_FORMATS = [pytest.param(fmt, name, id=name) for fmt, name in nf.ML_DTYPES_NAMES.items()]


def _uint(width: int):
    return np.uint8 if width <= 8 else np.uint16


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@pytest.mark.parametrize("fmt, name", ML_FORMATS)
def test_decode_every_pattern_like_ml_dtypes(fmt, name):
    patterns = np.arange(1 << fmt.width, dtype=_uint(fmt.width))
    with np.errstate(invalid="ignore"):
        want = patterns.view(getattr(ml_dtypes, name)).astype(np.float64).tolist()
    bad = [hex(p) for p in range(1 << fmt.width) if not _same_float(fmt.decode(p), want[p])]
    assert not bad, f"{name}: {len(bad)} patterns decode differently, first {bad[:5]}"
    nans = sum(fmt.is_nan(p) for p in range(1 << fmt.width))
    assert nans == sum(math.isnan(w) for w in want)


@pytest.mark.parametrize("fmt, name", ML_FORMATS)
def test_encode_f32_like_ml_dtypes(fmt, name):
    """Every f32 whose low 16 bits are 0 (all bf16 values: every fp8 midpoint and its neighbours, zeros,
    subnormals, overflow, inf, NaN); for bf16 also the ties and their neighbours (low bits 0x8000 +- 1)."""
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    lows = (0, 0x7FFF, 0x8000, 0x8001) if fmt.width > 8 else (0,)
    values = np.concatenate([high | low for low in lows]).view(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        want = values.astype(getattr(ml_dtypes, name)).view(_uint(fmt.width)).tolist()
    got = [fmt.encode(x) for x in values.tolist()]
    bad = [(x, hex(g), hex(w)) for x, g, w in zip(values.tolist(), got, want) if g != w]
    assert not bad, f"{name}: {len(bad)} values encode differently, first {bad[:5]}"


EXHAUSTIVE = [nf.BF16, nf.FP16, nf.FP8_E4M3FN, nf.FP8_E5M2, nf.FP8_E4M3FNUZ, nf.FP8_E5M2FNUZ,
              nf.FP8_E4M3B11FNUZ, nf.FloatFormat(3, 4, bias=2), nf.FloatFormat(5, 10, special="fn"),
              nf.FixedFormat(8, 8), nf.FixedFormat(4, 4), nf.FixedFormat(3, 13, signed=False),
              nf.FixedFormat(1, 7), nf.FixedFormat(2, 3)]


@pytest.mark.parametrize("fmt", EXHAUSTIVE, ids=str)
def test_round_trip_every_pattern(fmt):
    """decode then encode gives the pattern back (NaNs: the canonical NaN of their sign)."""
    for bits in range(1 << fmt.width):
        value = fmt.decode(bits)
        if isinstance(fmt, nf.FixedFormat):
            assert value == Fraction(fmt.raw_of_bits(bits), 1 << fmt.frac_bits)
            want = fmt.bits_of_raw(fmt.raw_of_bits(bits))  # the sign-extended storage pattern
        elif fmt.is_nan(bits):
            want = fmt.nan_bits(bool(bits & fmt.sign_bit))
        else:
            want = bits
        assert fmt.encode(value) == want, hex(bits)


def test_fp16_is_numpy_float16_bit_for_bit():
    patterns = np.arange(1 << 16, dtype=np.uint16)
    values = patterns.view(np.float16).astype(np.float64).tolist()
    assert all(_same_float(nf.FP16.decode(p), v) for p, v in zip(range(1 << 16), values))
    rng = np.random.default_rng(0)
    with np.errstate(invalid="ignore"):
        xs = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-9, 6, 3000),
                             (patterns.view(np.float16).astype(np.float64)[:-1] + 2.0 ** -30)]).astype(np.float32)
    xs = xs[~np.isnan(xs)]  # numpy keeps NaN payloads; formats here make the canonical NaN
    with np.errstate(over="ignore", invalid="ignore"):
        want = xs.astype(np.float16).view(np.uint16).tolist()
    assert [nf.FP16.encode(x) for x in xs.tolist()] == want


# ---- float arithmetic -----------------------------------------------------------------------------


def test_f32_format_arithmetic_is_numpy_float32():
    """float<8, 23> is IEEE single precision: add/sub/mul/div equal numpy's float32 bit for bit."""
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 1 << 32, size=(2, 3000), dtype=np.uint64).astype(np.uint32)
    edge = np.array([0, 0x80000000, 1, 0x80000001, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x00800000, 0x3F800000,
                     0x7FC00000, 0x007FFFFF], np.uint32)
    a = np.concatenate([bits[0], np.repeat(edge, len(edge))])
    b = np.concatenate([bits[1], np.tile(edge, len(edge))])
    fa, fb = a.view(np.float32), b.view(np.float32)
    with np.errstate(all="ignore"):
        results = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb}
    for op, want in results.items():
        for x, y, w in zip(a.tolist(), b.tolist(), want.view(np.uint32).tolist()):
            got = nf.float_op(nf.F32, op, [x, y])
            if nf.F32.is_nan(w):
                assert nf.F32.is_nan(got), (op, hex(x), hex(y))
            else:
                assert got == w, (op, hex(x), hex(y), hex(got), hex(w))


@pytest.mark.parametrize("fmt, name", [p for p in ML_FORMATS if p.id in ("bfloat16", "float8_e4m3fn", "float8_e5m2")])
def test_arithmetic_like_ml_dtypes(fmt, name):
    """ml_dtypes computes in f32 and rounds once: for these formats that is the correctly rounded result
    (double rounding is harmless for p32 >= 2p + 2, away from f32 underflow), so the results agree."""
    rng = np.random.default_rng(2)
    n = 4000
    a, b = rng.integers(0, 1 << fmt.width, (2, n)).astype(_uint(fmt.width))
    if fmt.width > 8:  # away from f32 underflow, where ml_dtypes' f32 product is rounded twice
        tiny = np.array([abs(fmt.decode(int(x))) < 2.0 ** -60 for x in a])
        a[tiny] = 0x3F80
    dt = getattr(ml_dtypes, name)
    fa, fb = a.view(dt), b.view(dt)
    with np.errstate(all="ignore"):
        results = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb}
    for op, want in results.items():
        want = want.view(a.dtype).tolist()
        for x, y, w in zip(a.tolist(), b.tolist(), want):
            got = nf.float_op(fmt, op, [x, y])
            if fmt.is_nan(w):
                assert fmt.is_nan(got), (op, hex(x), hex(y))
            else:
                assert got == w, (op, name, hex(x), hex(y), hex(got), hex(w))


def test_float_rounding_modes_and_overflow():
    e4 = nf.FP8_E4M3FN
    assert e4.encode(1.0625, "truncate") == e4.encode(1.0)  # 1 + 1/16: between 1 and 1.125
    assert e4.encode(1.0625, "nearest_even") == e4.encode(1.0)
    assert e4.encode(1.0625, "nearest_away") == e4.encode(1.125)
    assert e4.encode(-1.0625, "nearest_away") == e4.encode(-1.125)
    assert e4.encode(-1.1, "truncate") == e4.encode(-1.0)  # toward zero
    assert e4.encode(1000.0) == e4.nan_bits() and e4.encode(1000.0, overflow="saturate") == 0x7E
    assert e4.encode(-1000.0, overflow="saturate") == 0xFE
    assert e4.encode(math.inf, overflow="saturate") == e4.nan_bits()  # exact infinities have no saturation
    bf = nf.BF16
    assert bf.encode(3.4e38, overflow="saturate") == 0x7F7F and bf.encode(3.4e38) == 0x7F80
    assert nf.float_op(bf, "div", [bf.encode(1.0), 0]) == 0x7F80
    assert nf.float_op(bf, "div", [bf.encode(-1.0), 0]) == 0xFF80
    assert nf.float_op(bf, "div", [0, 0]) == bf.nan_bits()
    assert nf.float_op(bf, "sub", [bf.encode(2.0), bf.encode(2.0)]) == 0  # +0
    assert nf.float_op(bf, "add", [0x8000, 0x8000]) == 0x8000  # -0 + -0 = -0
    assert nf.float_op(bf, "mul", [0x8001, 0x0001]) == 0x8000  # underflow keeps the sign
    fnuz = nf.FP8_E5M2FNUZ
    assert nf.float_op(fnuz, "mul", [fnuz.encode(-2.0 ** -16), fnuz.encode(2.0 ** -5)]) == 0  # no -0
    # fma rounds once: (1 + 2^-7)^2 - (1 + 2^-6) is 2^-14 (a product rounded first would give 0)
    x = bf.encode(1 + 2.0 ** -7)
    assert bf.decode(nf.float_op(bf, "fma", [x, x, bf.encode(-(1 + 2.0 ** -6))])) == 2.0 ** -14


# ---- fixed point ---------------------------------------------------------------------------------


def _expected_fixed(exact: Fraction, fmt: nf.FixedFormat, rounding: str, overflow: str) -> int:
    """Independent of the reference: floor / nearest via Fraction comparisons, wrap via modulo."""
    scaled = exact * (1 << fmt.frac_bits)
    low = math.floor(scaled)
    frac = scaled - low
    if rounding == "truncate":
        q = low
    elif frac != Fraction(1, 2):
        q = low + (frac > Fraction(1, 2))
    elif rounding == "nearest_even":
        q = low if low % 2 == 0 else low + 1
    else:
        q = low + 1 if scaled > 0 else low
    if overflow == "saturate":
        return min(max(q, fmt.min_raw), fmt.max_raw)
    q %= 1 << fmt.width
    return q - (1 << fmt.width) if fmt.signed and q > fmt.max_raw else q


FIXED = [nf.FixedFormat(8, 8), nf.FixedFormat(4, 4), nf.FixedFormat(16, 8), nf.FixedFormat(3, 12, signed=False),
         nf.FixedFormat(1, 31), nf.FixedFormat(20, 12), nf.FixedFormat(8, 0, signed=False)]
MODES = [(r, o) for r in nf.ROUNDING for o in nf.FIXED_OVERFLOW]


@pytest.mark.parametrize("fmt", FIXED, ids=str)
@pytest.mark.parametrize("rounding, overflow", MODES)
def test_fixed_arithmetic_against_fractions(fmt, rounding, overflow):
    rng = np.random.default_rng(3)
    edge = [fmt.min_raw, fmt.max_raw, 0, 1, -1 if fmt.signed else 2, fmt.min_raw + 1, fmt.max_raw - 1,
            1 << fmt.frac_bits, (1 << fmt.frac_bits) >> 1]
    raws = [int(r) for r in rng.integers(fmt.min_raw, fmt.max_raw + 1, 300)] + edge
    pairs = list(zip(raws, raws[::-1])) + [(x, y) for x in edge for y in edge]
    for a, b in pairs:
        va, vb = fmt.value(a), fmt.value(b)
        assert fmt.add(a, b, rounding, overflow) == _expected_fixed(va + vb, fmt, rounding, overflow)
        assert fmt.sub(a, b, rounding, overflow) == _expected_fixed(va - vb, fmt, rounding, overflow)
        assert fmt.mul(a, b, rounding, overflow) == _expected_fixed(va * vb, fmt, rounding, overflow)
        assert fmt.fma(a, b, a, rounding, overflow) == _expected_fixed(va * vb + va, fmt, rounding, overflow)
        if b != 0:
            assert fmt.div(a, b, rounding, overflow) == _expected_fixed(va / vb, fmt, rounding, overflow)
        else:
            assert fmt.div(a, b, rounding, overflow) == (0 if a == 0 else fmt.max_raw if a > 0 else fmt.min_raw)


def test_fixed_rounding_examples():
    q88 = nf.FixedFormat(8, 8)
    half_lsb = Fraction(1, 512)
    assert q88.quantize(half_lsb, "nearest_even") == 0 and q88.quantize(3 * half_lsb, "nearest_even") == 2
    assert q88.quantize(half_lsb, "nearest_away") == 1 and q88.quantize(-half_lsb, "nearest_away") == -1
    assert q88.quantize(-half_lsb, "truncate") == -1  # truncate drops bits: toward minus infinity
    assert q88.quantize(128, overflow="wrap") == -(1 << 15) and q88.quantize(128, overflow="saturate") == (1 << 15) - 1
    assert q88.quantize(math.nan) == 0 and q88.quantize(math.inf, overflow="wrap") == q88.max_raw
    assert q88.encode(-1.0) == 0xFF00  # the stored pattern is sign-extended to 16 bits


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 31), st.integers(0, 31), st.booleans(), st.fractions(), st.sampled_from(nf.ROUNDING))
def test_quantize_brackets_the_value(i, f, signed, x, rounding):
    """Fuzz: the quantized value is one of the two grid neighbours of x (inside the range)."""
    if (signed and i < 1) or not 1 <= i + f <= 32:
        return
    fmt = nf.FixedFormat(i, f, signed)
    raw = fmt.quantize(x, rounding, "saturate")
    grid = Fraction(1, 1 << f)
    if fmt.value(fmt.min_raw) <= x <= fmt.value(fmt.max_raw):
        assert abs(fmt.value(raw) - x) < grid
        if rounding != "truncate":
            assert abs(fmt.value(raw) - x) <= grid / 2


# ---- spelling and bad input -----------------------------------------------------------------------


def test_parse_format_spellings():
    assert nf.parse_format("fixed<8, 8>") == nf.FixedFormat(8, 8)
    assert nf.parse_format("!base2.fixed<unsigned 4, 12>") == nf.FixedFormat(4, 12, False)
    assert nf.parse_format("ufixed<4,12>") == nf.FixedFormat(4, 12, False)
    assert nf.parse_format("bf16") == nf.BF16 and nf.parse_format("fp8_e4m3fn") == nf.FP8_E4M3FN
    assert nf.parse_format("float<4, 3, fnuz, bias = 11>") == nf.FP8_E4M3B11FNUZ
    for fmt in [*EXHAUSTIVE, nf.FP8_E4M3B11FNUZ]:
        assert nf.parse_format(fmt.mlir) == fmt


@pytest.mark.parametrize("text, message", [
    ("fixed<8>", "cannot read number format"),
    ("bf61", "did you mean 'bf16'"),
    ("fixed<0, 8>", "at least 1 integer bit"),
    ("fixed<20, 20>", r"width I \+ F must be 1..32"),
    ("float<9, 3>", "exponent bits must be 1..8"),
    ("float<4, 30>", "mantissa bits must be 1..23"),
    ("float<4, 3, bias = 99>", "bias must be 0..15"),
    ("ufixed<signed 4, 4>", "both unsigned"),  # used to read as unsigned
    ("float<4, 3, fn, fnuz>", "gives its special values twice"),  # used to keep the last one
    ("float<4, 3, bias = 3, bias = 5>", "gives its bias twice"),
])
def test_parse_format_errors(text, message):
    with pytest.raises(LoomError, match=message):
        nf.parse_format(text, where="test")


def test_bad_modes_are_loom_errors():
    with pytest.raises(LoomError, match="rounding must be one of"):
        nf.BF16.encode(1.0, "nearest")
    with pytest.raises(LoomError, match=r"overflow for !base2.fixed<8, 8> must be one of wrap, saturate"):
        nf.FixedFormat(8, 8).quantize(1, overflow="inf")
