"""``saturating_cast`` and Halide's chained ``select(c1, a, c2, b, ..., default)``, bit-exact against Halide on
the reference evaluator, the CPU path and (saturating_cast) the accelerator's value simulation."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import simulate

N = 64
_RNG = np.random.default_rng(4)
SOURCES = {"i32": (lp.Int32, hl.Int(32), _RNG.integers(-2 ** 31, 2 ** 31, N).astype(np.int32)),
           "i16": (lp.Int16, hl.Int(16), _RNG.integers(-2 ** 15, 2 ** 15, N).astype(np.int16)),
           "u16": (lp.UInt16, hl.UInt(16), _RNG.integers(0, 2 ** 16, N).astype(np.uint16)),
           "u32": (lp.UInt32, hl.UInt(32), _RNG.integers(0, 2 ** 32, N).astype(np.uint32)),
           "f32": (lp.Float32, hl.Float(32), (_RNG.standard_normal(N) * 3e9).astype(np.float32))}
TARGETS = {"u8": (lp.UInt8, hl.UInt(8)), "i16": (lp.Int16, hl.Int(16)), "u16": (lp.UInt16, hl.UInt(16)),
           "i32": (lp.Int32, hl.Int(32)), "u32": (lp.UInt32, hl.UInt(32))}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", SOURCES)
def test_saturating_cast_matches_halide(source, target):
    lt, ht, arr = SOURCES[source]
    ldt, hdt = TARGETS[target]
    x = lp.Var("x")
    a = lp.ImageParam(lt, 1, "a")
    f = lp.Func("f")
    f[x] = lp.saturating_cast(ldt, a[x])
    hx = hl.Var("x")
    hf = hl.Func("f")
    hf[hx] = hl.saturating_cast(hdt, hl.Buffer(arr)[hx])
    want = np.asarray(hf.realize([N]))
    np.testing.assert_array_equal(lp.evaluate(f, {"a": arr}, (N,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": arr}, (N,)), want)


def test_saturating_cast_on_the_accelerator_matches_halide():
    """Requantisation as a DNN layer writes it: i32 sums >> 4 saturated to u8."""
    arr = _RNG.integers(-2 ** 14, 2 ** 14, (4, 9)).astype(np.int32)
    x, y = lp.Var("x"), lp.Var("y")
    a = lp.ImageParam(lp.Int32, 2, "a")
    hw, out = lp.Func("hw_a"), lp.Func("output")
    hw[x, y] = a[x, y]
    out[x, y] = lp.saturating_cast(lp.UInt8, (hw[x, y] + hw[x + 1, y]) >> 4)
    stream_through_accelerator(out, (8, 4), buffered=[hw])
    hx, hy = hl.Var("x"), hl.Var("y")
    hf = hl.Func("f")
    hb = hl.Buffer(arr)
    hf[hx, hy] = hl.saturating_cast(hl.UInt(8), (hb[hx, hy] + hb[hx + 1, hy]) >> 4)
    want = np.asarray(hf.realize([8, 4]))
    assert (want == 0).any() and (want == 255).any()
    np.testing.assert_array_equal(simulate(out, {"a": arr}, (8, 4)), want)


def test_a_chained_select_matches_halide():
    arr = _RNG.integers(0, 256, N).astype(np.uint8)
    x = lp.Var("x")
    a = lp.ImageParam(lp.UInt8, 1, "a")
    f = lp.Func("f")
    v = a[x]
    f[x] = lp.select(v < 50, lp.u8(1), v < 100, lp.u8(2), v < 200, v // 2, lp.u8(9))
    hx = hl.Var("x")
    hf = hl.Func("f")
    hv = hl.Buffer(arr)[hx]
    hf[hx] = hl.select(hv < 50, hl.u8(1), hv < 100, hl.u8(2), hv < 200, hv / 2, hl.u8(9))
    want = np.asarray(hf.realize([N]))
    assert len(np.unique(want)) > 4
    np.testing.assert_array_equal(lp.evaluate(f, {"a": arr}, (N,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": arr}, (N,)), want)


def test_a_chained_select_without_a_default_is_refused():
    x = lp.Var("x")
    a = lp.ImageParam(lp.UInt8, 1, "a")
    f = lp.Func("f")
    with pytest.raises(LoomError, match=r"select takes a condition and a value per case and a default: an odd "
                                        r"number of arguments, got 4"):
        f[x] = lp.select(a[x] < 5, lp.u8(1), a[x] < 9, lp.u8(2))


def test_float_modulo_matches_halide_on_every_path():
    """f32 ``%`` is a - b * floor(a / b) with the multiply-subtract rounded once, as Halide computes it; divisors
    of both signs and small ones (where an unfused f32 sequence is off by an ulp)."""
    a = (_RNG.standard_normal((4, 16)) * 100).astype(np.float32)
    b = (_RNG.standard_normal((4, 16)) * 7).astype(np.float32)
    b[0, :4] = [2.5, -2.5, 0.1, -0.3]
    x, y = lp.Var("x"), lp.Var("y")
    pa, pb = lp.ImageParam(lp.Float32, 2, "a"), lp.ImageParam(lp.Float32, 2, "b")
    ha, hb, out = lp.Func("hw_a"), lp.Func("hw_b"), lp.Func("output")
    ha[x, y] = pa[x, y]
    hb[x, y] = pb[x, y]
    out[x, y] = ha[x, y] % hb[x, y]
    hx, hy = hl.Var("x"), hl.Var("y")
    hf = hl.Func("f")
    hf[hx, hy] = hl.Buffer(a)[hx, hy] % hl.Buffer(b)[hx, hy]
    want = np.asarray(hf.realize([16, 4]))
    unfused = a - b * np.floor(a / b).astype(np.float32)
    assert (unfused != want).any()  # the fused rounding matters on these values
    inputs = {"a": a, "b": b}
    np.testing.assert_array_equal(lp.evaluate(out, inputs, (16, 4)), want)
    np.testing.assert_array_equal(run_cpu(out, inputs, (16, 4)), want)
    stream_through_accelerator(out, (16, 4), buffered=[ha, hb])
    np.testing.assert_array_equal(simulate(out, inputs, (16, 4)), want)


def test_modulo_of_bfloat16_is_refused():
    x = lp.Var("x")
    a = lp.ImageParam(lp.BFloat16, 1, "a")
    f = lp.Func("f")
    with pytest.raises(LoomError, match=r"operator '%' needs integer or f32 operands, got bf16"):
        f[x] = a[x] % a[x]


def test_clamp_with_crossed_bounds_matches_halide():
    """Halide's clamp is max(min(x, hi), lo): when data puts lo above hi, lo wins (loom once gave hi)."""
    arr = np.array([10, 200, 90, 0, 255, 120, 60, 180], np.uint8)
    x = lp.Var("x")
    a = lp.ImageParam(lp.UInt8, 1, "a")
    f = lp.Func("f")
    f[x] = lp.clamp(x * 20 - 50, lp.i32(a[x]) - 100, 150) + lp.clamp(lp.i32(a[x]), 100, 50) + lp.clamp(x, 5, 3)
    hx = hl.Var("x")
    hb = hl.Buffer(arr)
    hf = hl.Func("f")
    hf[hx] = (hl.clamp(hx * 20 - 50, hl.i32(hb[hx]) - 100, 150) + hl.clamp(hl.i32(hb[hx]), 100, 50)
              + hl.clamp(hx, 5, 3))
    want = np.asarray(hf.realize([len(arr)]))
    np.testing.assert_array_equal(lp.evaluate(f, {"a": arr}, (len(arr),)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": arr}, (len(arr),)), want)
    assert want[1] == 100 + 100 + 5  # x = 1, a = 200: -30 clamped to the lower bound 100; 100 beats 50; 5 beats 3
