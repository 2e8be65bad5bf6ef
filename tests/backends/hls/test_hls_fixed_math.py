"""Float ops of a kernel computed in a wide fixed-point type (``types={"f32": "ap_fixed<32,16>"}``):
min/max, abs, copysign, floor/ceil/round and the math functions must see every bit of their operands,
not a float's 24. References are exact (``fractions``) from the ops' definitions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import loom.math as lm
from loom import F32, F64, Dim, MemRef, kernel
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.errors import LoomError
from tests.backends.hls.hls_helpers import parse
from tests.backends.hls.test_hls_header import to_fixed

N = Dim("N")
WIDE = "ap_fixed<32,16>"
# 14 integer bits and a 2^-15 part: 29 significant bits, which a float rounds away
OFFSET = 12345 + 2.0 ** -15


@kernel
def wide_ops(A: MemRef[(N,), F32], B: MemRef[(N,), F32], s: F32, Mx: MemRef[(N,), F32], Mn: MemRef[(N,), F32],
             Ab: MemRef[(N,), F32], Cs: MemRef[(N,), F32], Fl: MemRef[(N,), F32], Ce: MemRef[(N,), F32],
             Sq: MemRef[(N,), F32]):
    for i in range(N):
        a = A[i] + s
        b = B[i] - s
        Mx[i] = max(a, -b)
        Mn[i] = min(-a, b)
        Ab[i] = abs(b)
        Cs[i] = lm.copysign(a, B[i])
        Fl[i] = lm.floor(b)
        Ce[i] = lm.ceil(a)
        Sq[i] = lm.sqrt(a)


def test_wide_fixed_point_ops_keep_every_bit():
    program = emit_hls(wide_ops.module, dims={"N": 24}, types={"f32": WIDE})
    x = csim_inputs(program, scalars={"s": OFFSET})
    run = simulate(program, scalars={"s": OFFSET})
    q = lambda v: to_fixed(Fraction(v), "ap_fixed", 32, 16, "AP_TRN", "AP_WRAP")  # noqa: E731
    s = q(OFFSET)
    for i in range(24):
        ai, bi = Fraction(float(x["A"][i])), Fraction(float(x["B"][i]))
        a, b = q(ai + s), q(bi - s)
        want = {"Mx": max(a, -b), "Mn": min(-a, b), "Ab": abs(b), "Cs": a if bi >= 0 else -a,
                "Fl": q(math.floor(b)), "Ce": q(math.ceil(a)), "Sq": q(Fraction(math.sqrt(float(a))))}
        for name, value in want.items():
            assert Fraction(float(run.arrays[name][i])) == value, (name, i, float(a), float(b))


ROUNDING_OPS = ("round", "roundeven", "trunc", "floor", "ceil")
ROUNDING = "builtin.module {\n  func.func @rounding(%a: memref<64xf32>, " + ", ".join(
    f"%o_{op}: memref<64xf32>" for op in ROUNDING_OPS) + """) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 64 : index
    %four = arith.constant 4.0 : f32
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%i] : memref<64xf32>
      %v = arith.mulf %x, %four : f32
""" + "".join(f"      %r_{op} = math.{op} %v : f32\n      memref.store %r_{op}, %o_{op}[%i] : memref<64xf32>\n"
              for op in ROUNDING_OPS) + "    }\n    func.return\n  }\n}"


@pytest.mark.parametrize("hls_type", ["ap_fixed<12,5,AP_RND_CONV,AP_SAT>", "ap_ufixed<10,4>", "ap_fixed<8,3>"])
def test_rounding_to_integers_at_the_edges_of_narrow_types(hls_type):
    """Halves, the largest value (rounding up overflows into the type's overflow mode), unsigned types."""
    program = emit_hls(parse(ROUNDING), types={"f32": hls_type})
    t = program.ports[1].elem.hls
    q = lambda v: to_fixed(Fraction(v), f"ap_{t.kind}", t.width, t.int_bits, t.quantisation, t.overflow)  # noqa: E731
    x = csim_inputs(program)
    run = simulate(program)
    for i in range(64):
        v = q(Fraction(float(x["a"][i])) * q(4))  # 4.0 wraps to -4 in ap_fixed<8,3>
        half_away = math.floor(abs(v) + Fraction(1, 2)) * (1 if v >= 0 else -1)
        want = {"round": q(half_away), "roundeven": q(round(v)), "trunc": q(math.trunc(v)),
                "floor": q(math.floor(v)), "ceil": q(math.ceil(v))}
        for name, value in want.items():
            assert Fraction(float(run.arrays["o_" + name][i])) == value, (hls_type, name, float(v))


@kernel
def fused(A: MemRef[(N,), F32], B: MemRef[(N,), F32]):
    for i in range(N):
        B[i] = lm.fma(A[i], A[i], B[i])


def test_fma_is_exact_or_refused():
    program = emit_hls(fused.module, dims={"N": 16}, types={"f32": "ap_fixed<20,6,AP_RND>"})
    x = csim_inputs(program)
    run = simulate(program)
    q = lambda v: to_fixed(v, "ap_fixed", 20, 6, "AP_RND", "AP_WRAP")  # noqa: E731
    for i in range(16):
        a, b = Fraction(float(x["A"][i])), Fraction(float(x["B"][i]))
        assert Fraction(float(run.arrays["B"][i])) == q(a * a + b)  # rounded once
    with pytest.raises(LoomError, match=r"fma of ap_fixed<32, 16> values is exact in a 65-bit"):
        emit_hls(fused.module, dims={"N": 16}, types={"f32": WIDE})


@kernel
def unsigned_ops(A: MemRef[(N,), F64], B: MemRef[(N,), F64], Mx: MemRef[(N,), F64], Ab: MemRef[(N,), F64]):
    for i in range(N):
        Mx[i] = max(A[i], B[i])
        Ab[i] = abs(A[i])


def test_64_bit_unsigned_fixed_point_compares_as_unsigned():
    """The testbench's negative inputs wrap to values whose 64-bit pattern is above 2^63: they are the largest
    values of ap_ufixed<64, 40>, not negative ones; abs of an unsigned value is the value."""
    program = emit_hls(unsigned_ops.module, dims={"N": 16}, types={"f64": "ap_ufixed<64,40>"})
    x = csim_inputs(program)
    run = simulate(program)
    for i in range(16):
        a, b = Fraction(x["A"][i]), Fraction(x["B"][i])
        assert Fraction(run.arrays["Mx"][i]) == max(a, b), i
        assert Fraction(run.arrays["Ab"][i]) == a, i


INTEGER_PART = """builtin.module {
  func.func @integer_part(%s: f64, %o: memref<2xi64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %frac = arith.constant -0.4375 : f64
    %t = arith.addf %s, %s : f64
    %x = arith.addf %t, %frac : f64
    %i = arith.fptosi %x : f64 to i64
    memref.store %i, %o[%c0] : memref<2xi64>
    %n = arith.negf %x : f64
    %j = arith.fptosi %n : f64 to i64
    memref.store %j, %o[%c1] : memref<2xi64>
    func.return
  }
}"""


def test_integer_part_of_a_wide_fixed_point_value_is_exact():
    """2^53 + 1.5625 in ap_fixed<63, 59>: through a double it rounded to 2^53 + 2 before truncating."""
    program = emit_hls(parse(INTEGER_PART), types={"f64": "ap_fixed<63,59>"})
    run = simulate(program, scalars={"s": 2.0 ** 52 + 1})  # x = 2s - 0.4375
    assert [int(v) for v in run.arrays["o"]] == [2 ** 53 + 1, -(2 ** 53 + 1)]


@kernel
def running_max(A: MemRef[(N,), F32], out: MemRef[(1,), F32]):
    m = -math.inf
    for i in range(N):
        m = max(m, A[i] - 3.0)
    out[0] = m


@pytest.mark.parametrize("hls_type", ["ap_fixed<16,8>", "ap_ufixed<12,4>", "ap_fixed<10,3,AP_RND,AP_SAT_SYM>"])
def test_minus_infinity_is_the_smallest_value(hls_type):
    """A max-reduction that starts at -inf: -inf wrapped (AP_WRAP) to 0, so all-negative data gave 0."""
    program = emit_hls(running_max.module, dims={"N": 9}, types={"f32": hls_type})
    t = program.ports[0].elem.hls
    q = lambda v: to_fixed(Fraction(v), f"ap_{t.kind}", t.width, t.int_bits, t.quantisation, t.overflow)  # noqa: E731
    x = csim_inputs(program)
    run = simulate(program)
    assert Fraction(float(run.arrays["out"][0])) == max(q(Fraction(float(a)) - q(3)) for a in x["A"])


@kernel
def ratios(A: MemRef[(N,), F32], B: MemRef[(N,), F32], s: F32, Q: MemRef[(N,), F32]):
    for i in range(N):
        Q[i] = A[i] / (B[i] + s)


@pytest.mark.parametrize("hls_type", ["ap_fixed<62,4,AP_RND_CONV,AP_SAT>", "ap_fixed<60,30>", "ap_ufixed<56,2,AP_RND>"])
def test_kernel_division_is_exact_then_quantised_once(hls_type):
    """A divf of fixed-point values went through double (53 bits of a 58-bit quotient); the header's exact
    quotient now matches the model of the conversion (quantise_fraction) bit for bit."""
    from loom.backends.hls.types import parse_hls_type, quantise_fraction

    t = parse_hls_type(hls_type)
    offset = 3 + 2.0 ** -9 if t.signed else 2.0 ** -9  # unsigned inputs are 0..2: a divisor in [2^-9, 2]
    program = emit_hls(ratios.module, dims={"N": 40}, types={"f32": hls_type})
    x = csim_inputs(program, scalars={"s": offset})
    run = simulate(program, scalars={"s": offset})
    q = lambda v: quantise_fraction(Fraction(v), t)  # noqa: E731
    for i in range(40):
        a, b = Fraction(float(x["A"][i])), q(Fraction(float(x["B"][i])) + q(offset))
        want = q(a / b) if b else None
        if want is not None:
            assert Fraction(run.arrays["Q"][i]) == want, (i, float(a), float(b))
