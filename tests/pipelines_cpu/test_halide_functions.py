"""Halide's absd, mux, is_nan / is_inf / is_finite, bit-exact against Halide on the evaluator and the CPU path
(absd also through the accelerator's value simulation)."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import simulate

N = 64
TYPES = {"u8": (lp.UInt8, np.uint8), "i16": (lp.Int16, np.int16), "i32": (lp.Int32, np.int32),
         "u32": (lp.UInt32, np.uint32)}


@pytest.mark.parametrize("name", TYPES)
def test_absd_matches_halide_over_the_whole_range(name):
    """|a - b| in the unsigned type of the width: i16 -30000 and 30000 give 60000, no overflow."""
    lt, dt = TYPES[name]
    info = np.iinfo(dt)
    rng = np.random.default_rng(1)
    a, b = (rng.integers(info.min, info.max, N, dtype=dt, endpoint=True) for _ in range(2))
    a[0], b[0] = info.min, info.max
    x = lp.Var("x")
    pa, pb = lp.ImageParam(lt, 1, "a"), lp.ImageParam(lt, 1, "b")
    f = lp.Func("f")
    f[x] = lp.absd(pa[x], pb[x])
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = hl.absd(hl.Buffer(a)[hx], hl.Buffer(b)[hx])
    want = np.asarray(g.realize([N]))
    assert want.dtype.kind == "u" and want[0] == int(info.max) - int(info.min)
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a, "b": b}, (N,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a, "b": b}, (N,)), want)


def test_absd_on_the_accelerator_matches_halide():
    img = np.random.default_rng(2).integers(0, 256, (6, 9), np.uint8)
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "input")
    hw, out = lp.Func("hw_input"), lp.Func("output")
    hw[x, y] = inp[x, y]
    out[x, y] = lp.absd(hw[x, y], hw[x + 1, y])
    stream_through_accelerator(out, (8, 6), buffered=[hw])
    hx, hy = hl.Var("x"), hl.Var("y")
    hb = hl.Buffer(img)
    g = hl.Func("g")
    g[hx, hy] = hl.absd(hb[hx, hy], hb[hx + 1, hy])
    np.testing.assert_array_equal(simulate(out, {"input": img}, (8, 6)), np.asarray(g.realize([8, 6])))


def test_mux_matches_halide_out_of_range_too():
    """values[index]; an index below 0 or past the end gives the last value, as Halide's."""
    x = lp.Var("x")
    f = lp.Func("f")
    f[x] = lp.mux(x - 1, [lp.i32(10), lp.i32(20), lp.i32(30)])
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = hl.mux(hx - 1, [hl.i32(10), hl.i32(20), hl.i32(30)])
    want = np.asarray(g.realize([6]))
    np.testing.assert_array_equal(want, [30, 10, 20, 30, 30, 30])
    np.testing.assert_array_equal(lp.evaluate(f, {}, (6,)), want)
    np.testing.assert_array_equal(run_cpu(f, {}, (6,)), want)


def test_float_class_tests_match_halide():
    v = np.array([np.nan, np.inf, -np.inf, 1.0, -0.0, 3e38, -np.nan, 1e-45], np.float32)
    x = lp.Var("x")
    a = lp.ImageParam(lp.Float32, 1, "a")
    f = lp.Func("f")
    f[x] = (lp.select(lp.is_nan(a[x]), 1, 0) + lp.select(lp.is_inf(a[x]), 2, 0)
            + lp.select(lp.is_finite(a[x]), 4, 0))
    hx = hl.Var("x")
    hb = hl.Buffer(v)
    g = hl.Func("g")
    g[hx] = (hl.select(hl.is_nan(hb[hx]), 1, 0) + hl.select(hl.is_inf(hb[hx]), 2, 0)
             + hl.select(hl.is_finite(hb[hx]), 4, 0))
    want = np.asarray(g.realize([len(v)]))
    np.testing.assert_array_equal(want, [1, 2, 2, 4, 4, 4, 1, 4])
    np.testing.assert_array_equal(lp.evaluate(f, {"a": v}, (len(v),)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": v}, (len(v),)), want)
