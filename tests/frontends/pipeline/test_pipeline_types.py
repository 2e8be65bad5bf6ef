"""Type rules and arithmetic semantics, checked against hand-written Python/numpy references."""

import struct

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Float32, Func, ImageParam, Int16, Int32, UInt8, UInt16, Var, abs, bf16, cast,
                                     clamp, evaluate, f32, i16, i32, max, min, select, u8, u16)

x = Var("x")


def run(type_, values, body):
    """Evaluate out[x] = body(inp[x]) over a 1-d input."""
    inp = ImageParam(type_, 1, "inp")
    out = Func("out")
    out[x] = body(inp[x])
    arr = np.asarray(values, dtype=type_.dtype)
    return evaluate(out, {"inp": arr}, (arr.size,))


def test_unsigned_wraps_around():
    vals = [0, 1, 200, 255]
    got = run(UInt8, vals, lambda v: v * 2 + 100)
    assert got.dtype == np.uint8
    assert got.tolist() == [(v * 2 + 100) % 256 for v in vals]
    got = run(UInt16, [0, 3], lambda v: v - 5)
    assert got.tolist() == [65531, 65534]


def test_signed_wraps_around():
    got = run(Int16, [32767, -32768, 100], lambda v: v + 1)
    assert got.tolist() == [-32768, -32767, 101]


def test_integer_division_and_mod_are_euclidean():
    """As Halide: a == (a / d) * d + a % d with 0 <= a % d < |d| (division floors over d > 0, rounds up over d < 0)."""
    a = [-7, -6, -1, 0, 5, 7, 9]
    for d in (3, -3):
        got_div = run(Int32, a, lambda v: v / d)
        got_mod = run(Int32, a, lambda v: v % d)
        assert got_div.tolist() == [v // d if d > 0 else -(v // -d) for v in a]
        assert got_mod.tolist() == [v % abs_(d) for v in a]
        assert all(q * d + m == v for q, m, v in zip(got_div.tolist(), got_mod.tolist(), a))


def abs_(v):
    return v if v >= 0 else -v


def test_division_by_zero_is_zero():
    inp = ImageParam(Int32, 1, "inp")
    den = ImageParam(Int32, 1, "den")
    out = Func("out")
    out[x] = inp[x] / den[x] + inp[x] % den[x]
    got = evaluate(out, {"inp": np.array([5, -5, 7], np.int32), "den": np.array([0, 0, 2], np.int32)}, (3,))
    assert got.tolist() == [0, 0, 3 + 1]


def test_shifts():
    assert run(Int16, [-64, 64, -1], lambda v: v >> 3).tolist() == [-8, 8, -1]  # arithmetic
    assert run(UInt8, [1, 129], lambda v: v << 1).tolist() == [2, 2]
    assert run(UInt16, [0xFFFF], lambda v: v >> 12).tolist() == [15]


def test_abs_of_signed_is_unsigned():
    got = run(Int16, [-32768, -5, 7], lambda v: abs(v))
    assert got.dtype == np.uint16 and got.tolist() == [32768, 5, 7]


def test_min_max_clamp_select():
    vals = [0, 50, 100, 200]
    assert run(UInt8, vals, lambda v: clamp(v, 40, 150)).tolist() == [40, 50, 100, 150]
    assert run(UInt8, vals, lambda v: min(v, 60)).tolist() == [0, 50, 60, 60]
    assert run(UInt8, vals, lambda v: max(v, 60)).tolist() == [60, 60, 100, 200]
    assert run(UInt8, vals, lambda v: select(v > 75, v - 75, u8(0))).tolist() == [0, 0, 25, 125]


def test_casts_wrap_and_truncate():
    assert run(Int32, [300, -1, 65536 + 7], lambda v: u8(v)).tolist() == [44, 255, 7]
    assert run(Int32, [70000, -70000], lambda v: i16(v)).tolist() == [70000 - 65536, -70000 + 65536]
    assert run(Float32, [2.9, -2.9, 255.5], lambda v: i32(v)).tolist() == [2, -2, 255]
    assert run(UInt16, [40000], lambda v: cast(Int16, v)).tolist() == [40000 - 65536]
    assert run(UInt8, [3], lambda v: f32(v) / 2.0).tolist() == [1.5]


def _bf16_reference(f):
    """float -> bfloat16 (round to nearest even) -> float, via the bit pattern."""
    bits = struct.unpack("<I", struct.pack("<f", f))[0]
    lsb = (bits >> 16) & 1
    bits = ((bits + 0x7FFF + lsb) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def test_bfloat16_rounds_to_nearest_even():
    vals = [1.0, 1.00390625, 1.01171875, 3.14159, -2.71828, 1e-3, 65504.0, 1.0 + 2 ** -8 + 2 ** -9]
    got = run(Float32, vals, lambda v: f32(bf16(v)))
    want = [_bf16_reference(float(np.float32(v))) for v in vals]
    assert got.tolist() == want
    # ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 -> even mantissa (1.0)
    assert _bf16_reference(1.00390625) == 1.0


def test_bfloat16_arithmetic_rounds_each_operation():
    a, b = 1.0078125, 0.00390625  # both exact in bf16; the sum is not
    got = run(Float32, [a], lambda v: f32(bf16(v) + bf16(b)))
    assert got.tolist() == [_bf16_reference(a + b)]


def test_mixed_types_promote_and_a_mismatch_names_the_func():
    """u8 + u16 is u16 (Halide's match_types, tests/pipelines_cpu/test_halide_type_promotion.py); a shift by
    a float is refused naming the Func and both types."""
    inp = ImageParam(UInt8, 1, "inp")
    assert (inp[x] + u16(1)).type == UInt16
    bad = Func("mixer")
    with pytest.raises(LoomError) as e:
        bad[x] = inp[x] << f32(inp[x])
    assert "mixer" in str(e.value) and "u8" in str(e.value) and "f32" in str(e.value)


def test_literal_out_of_range_rejected_and_a_float_literal_promotes():
    inp = ImageParam(UInt8, 1, "inp")
    f = Func("scaled")
    with pytest.raises(LoomError, match="scaled.*300 does not fit in u8"):
        f[x] = inp[x] * 300
    assert (inp[x] * 0.5).type == Float32


def test_update_type_must_match():
    inp = ImageParam(UInt8, 1, "inp")
    acc = Func("acc")
    acc[x] = u16(0)
    with pytest.raises(LoomError, match="acc.*type u8.*type u16"):
        acc[x] = inp[x]


def test_float_index_rejected():
    inp = ImageParam(Float32, 1, "inp")
    f = Func("user")
    f[x] = inp[x]
    g = Func("indexer")
    with pytest.raises(LoomError, match="indices must be integers"):
        g[x] = f[f32(x)]


def test_negation_and_bitwise_not():
    assert run(UInt8, [0, 1, 200], lambda v: -v).tolist() == [0, 255, 56]
    assert run(Int16, [5, -7], lambda v: -v).tolist() == [-5, 7]
    assert run(Float32, [1.5], lambda v: -v).tolist() == [-1.5]
    assert run(UInt8, [0x0F], lambda v: ~v).tolist() == [0xF0]
    assert run(UInt8, [3, 9], lambda v: select(~(v > 5), v, u8(0))).tolist() == [3, 0]
