"""A producer read at a float index (a resize's ``i32(floor((x + 0.5) * s - 0.5))``) and computed per tile
computes a window as long as one tile's reads, as Halide's bounds inference gives it, not its whole region: the
per-tile extent is at most the largest region Halide realises per tile (``trace_realizations``), and the values
equal Halide's. It took the whole region each tile (an 8x4-tiled bilinear resize 146x slower than Halide)."""

import re

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.frontends.pipeline.cpu_lower import lower_pipeline
from loom.jit.pipeline import run_cpu

S, G = "ShiftInwards", "GuardWithIf"
CASES = [  # (scale, tile, tail, output width, producer width)
    (0.37, 8, G, 61, 30), (2.5, 4, S, 30, 80), (-0.25, 8, S, 40, 20),
]


def _line(m, scale, tile, tail, w_in):
    x, xo, xi = m.Var("x"), m.Var("xo"), m.Var("xi")
    f, g = m.Func("f"), m.Func("g")
    f[x] = m.min(m.max(x, 0), w_in - 1) * 3 + 1
    fx = (m.f32(x) + 0.5) * float(np.float32(scale)) - 0.5
    i = m.i32(m.floor(fx))
    g[x] = f[i] * 2 + f[i + 1] - x
    g.split(x, xo, xi, tile, getattr(m.TailStrategy, tail))
    f.compute_at(g, xo)
    return f, g


@pytest.mark.parametrize("scale, tile, tail, w, w_in", CASES)
def test_a_float_index_window_is_per_tile(scale, tile, tail, w, w_in, capfd):
    hf, hg = _line(hl, scale, tile, tail, w_in)
    hf.trace_realizations()
    capfd.readouterr()
    want = np.asarray(hg.realize([w]))
    trace = "".join(capfd.readouterr())
    extents = [int(e) for e in re.findall(r"Begin realization f(?:\$\d+)?\.0\(-?\d+, (\d+)\)", trace)]
    _, lg = _line(lp, scale, tile, tail, w_in)
    shapes = re.findall(r"memref\.alloca\(\) : memref<(\d+)xi32>", str(lower_pipeline(lg, {}, (w,))))
    assert extents and len(shapes) == 1 and int(shapes[0]) <= max(extents)
    np.testing.assert_array_equal(run_cpu(lg, {}, (w,)), want)


def _resize(m, inp, tail):
    """A bilinear 2-D resize whose rows are interpolated per tile."""
    x, y, xo, yo, xi, yi = (m.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    cl = m.BoundaryConditions.repeat_edge(inp)
    hz, out = m.Func("hz"), m.Func("out")
    fx = (m.f32(x) + 0.5) * float(np.float32(0.4)) - 0.5
    fy = (m.f32(y) + 0.5) * float(np.float32(0.7)) - 0.5
    ix, iy = m.i32(m.floor(fx)), m.i32(m.floor(fy))
    wx, wy = fx - m.floor(fx), fy - m.floor(fy)
    hz[x, y] = cl[ix, y] * (1.0 - wx) + cl[ix + 1, y] * wx
    out[x, y] = hz[x, iy] * (1.0 - wy) + hz[x, iy + 1] * wy
    out.tile(x, y, xo, yo, xi, yi, 8, 4, getattr(m.TailStrategy, tail))
    hz.compute_at(out, xo)
    return out


@pytest.mark.parametrize("tail", [S, G])
def test_a_tiled_bilinear_resize_matches_halide_and_computes_tile_sized_rows(tail):
    a = np.random.default_rng(3).uniform(0, 1, (13, 17)).astype(np.float32)
    hin = hl.ImageParam(hl.Float(32), 2, "inp")
    b = hl.Buffer(a)
    hin.set(b)
    t = hl.get_jit_target_from_environment().with_feature(hl.TargetFeature.StrictFloat)
    hout = _resize(hl, hin, tail)
    hout.compile_jit(t)
    want = np.asarray(hout.realize([41, 18]))
    out = _resize(lp, lp.ImageParam(lp.Float32, 2, "inp"), tail)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (41, 18)), want)
    # hz's rows: one tile's 4 output rows read 2 or 3 of them (scale 0.7), not all 18
    shapes = re.findall(r"memref\.alloca\(\) : memref<(\d+)x(\d+)xf32>", str(lower_pipeline(out, {"inp": a.shape},
                                                                                           (41, 18))))
    assert shapes and all(int(rows) <= 4 for rows, _ in shapes)


def test_a_float_index_provably_in_range_converts_without_guards():
    """``i32(floor((f32(x) + 0.5) * s))`` of an i32 Var is finite and far inside i64: its conversion is one
    truncation (the NaN / infinity / overflow guards made the resize's inner loops 3.5x slower); a float read
    from data keeps them (NaN converts to 0)."""
    x = lp.Var("x")
    g = lp.Func("g")
    g[x] = lp.i32(lp.floor((lp.f32(x) + 0.5) * 0.5))
    ir = str(lower_pipeline(g, {}, (8,)))
    assert "arith.fptosi" in ir and "math.absf" not in ir and "arith.select" not in ir
    np.testing.assert_array_equal(run_cpu(g, {}, (8,)), np.floor((np.arange(8) + 0.5) * 0.5).astype(np.int32))
    inp = lp.ImageParam(lp.Float32, 1, "inp")
    h = lp.Func("h")
    h[x] = lp.i32(inp[x] * 2.0)
    assert "math.absf" in str(lower_pipeline(h, {"inp": (4,)}, (4,)))
    a = np.array([np.nan, np.inf, -1.75, 3.5], np.float32)
    np.testing.assert_array_equal(run_cpu(h, {"inp": a}, (4,)), [0, 0, -3, 7])
