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
