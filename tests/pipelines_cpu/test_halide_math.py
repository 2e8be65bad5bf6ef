"""Float math functions (sqrt, exp, log, sin, cos, pow, floor, ceil, round, ...) bit-exact against Halide."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

UNARY = ["sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "round", "trunc"]
# Halide evaluates these f32 functions with its own polynomial approximations (not libm), which are
# faithful but not correctly rounded; loom calls libm's float functions. They agree to a few ulp (tanh: 4);
# everything else (sqrt, floor, ceil, round-to-even, trunc, arithmetic) is bit-exact.
APPROXIMATED_BY_HALIDE = {"exp", "log", "sin", "cos", "tan", "tanh", "pow"}


def _assert_matches_halide(name, got, want):
    if name in APPROXIMATED_BY_HALIDE:
        np.testing.assert_array_max_ulp(got, want, maxulp=4 if name == "tanh" else 1)
    else:
        np.testing.assert_array_equal(got, want)


def _input():
    rng = np.random.default_rng(7)
    a = rng.uniform(-12.0, 12.0, size=(9, 13)).astype(np.float32)
    a[0, :6] = [0.5, 1.5, 2.5, -0.5, -2.5, 0.0]  # round's half-way cases (to even)
    return a


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_matches_halide(name):
    a = _input()
    inp = lp.ImageParam(lp.Float32, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    out = lp.Func("out")
    arg = lp.abs(inp[x, y]) if name in ("sqrt", "log") else inp[x, y]
    out[x, y] = getattr(lp, name)(arg) * 2.0
    got = run_cpu(out, {"inp": a}, (13, 9))
    ref = lp.evaluate(out, {"inp": a}, (13, 9))

    hin = hl.ImageParam(hl.Float(32), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hout = hl.Func("out")
    harg = hl.abs(hin[hx, hy]) if name in ("sqrt", "log") else hin[hx, hy]
    hout[hx, hy] = getattr(hl, name)(harg) * 2.0
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([13, 9]))
    assert got.dtype == np.float32
    _assert_matches_halide(name, got, want)
    # the C path (libm's float functions) against the numpy reference (float64 rounded once)
    _assert_matches_halide(name, got, ref)


def test_pow_and_integer_arguments_match_halide():
    a = _input()
    b = np.random.default_rng(3).integers(0, 200, size=(9, 13), dtype=np.uint8)
    inp, img = lp.ImageParam(lp.Float32, 2, "inp"), lp.ImageParam(lp.UInt8, 2, "img")
    x, y = lp.Var("x"), lp.Var("y")
    out = lp.Func("out")
    # an integer argument is cast to f32 first, as in Halide
    out[x, y] = lp.pow(lp.abs(inp[x, y]), 1.5) + lp.sqrt(img[x, y]) + lp.atan2(inp[x, y], 3.0)
    got = run_cpu(out, {"inp": a, "img": b}, (13, 9))

    hin, himg = hl.ImageParam(hl.Float(32), 2, "inp"), hl.ImageParam(hl.UInt(8), 2, "img")
    hx, hy = hl.Var("x"), hl.Var("y")
    hout = hl.Func("out")
    hout[hx, hy] = hl.pow(hl.abs(hin[hx, hy]), 1.5) + hl.sqrt(himg[hx, hy]) + hl.atan2(hin[hx, hy], 3.0)
    hin.set(hl.Buffer(a))
    himg.set(hl.Buffer(b))
    # pow and atan2 are approximated by Halide (see APPROXIMATED_BY_HALIDE); a sum of three terms
    np.testing.assert_allclose(got, np.asarray(hout.realize([13, 9])), rtol=1e-6)


def test_math_on_bfloat16_is_refused_naming_the_func():
    inp = lp.ImageParam(lp.BFloat16, 1, "inp")
    x = lp.Var("x")
    out = lp.Func("blurry")
    with pytest.raises(LoomError, match=r"blurry.*cast to f32|cast to f32.*blurry"):
        out[x] = lp.exp(inp[x])


def test_float_multiply_add_rounds_twice_as_halide_strict_float():
    """A 3-tap f32 blur: loom rounds each product and sum, as Halide under strict_float, bit for bit on the
    evaluator and the CPU path. Halide without strict_float may fuse a*b + c into one fma (on this machine it
    does for some pixels), so the unfused result is the one both define the same way."""
    a = np.random.default_rng(9).uniform(-4.0, 4.0, size=(8, 10)).astype(np.float32)
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.Float32, 2, "a")
    f = lp.Func("f")
    f[x, y] = inp[x, y] * 0.3 + inp[x + 1, y] * 0.4 + inp[x + 2, y] * 0.3
    hx, hy = hl.Var("x"), hl.Var("y")
    hb = hl.Buffer(a)
    hf = hl.Func("f")
    w3, w4 = hl.f32(0.3), hl.f32(0.4)
    hf[hx, hy] = hl.strict_float(hb[hx, hy] * w3 + hb[hx + 1, hy] * w4 + hb[hx + 2, hy] * w3)
    want = np.asarray(hf.realize([8, 8]))
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a}, (8, 8)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a}, (8, 8)), want)
