"""RoundUp splits of Funcs computed inside loops read nothing past their buffers or the input (run again under
ASan/UBSan in the sanitizer session, where Halide cannot run): each pipeline on the smallest input Halide
accepts (its bounds query, recorded here; test_halide_round_up_inside checks it), values against numpy."""

import numpy as np
import pytest
from tests.pipelines_cpu.round_up_pipelines import numpy_reference, round_up_inside

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu

pytestmark = pytest.mark.sanitize
G, S, R = "GuardWithIf", "ShiftInwards", "RoundUp"
CASES = [  # (case, out's tail, fx, fy, W, H, rows and columns of Halide's smallest input)
    ("xo", S, 3, 1, 10, 8, 10, 15), ("xo", G, 2, 1, 13, 9, 11, 19), ("xo", G, 5, 1, 10, 8, 10, 16),
    ("xo", R, 4, 1, 13, 9, 14, 19), ("yo", S, 2, 1, 10, 8, 10, 13), ("yo", G, 3, 1, 13, 9, 11, 16),
    ("yo", R, 5, 1, 10, 8, 10, 16), ("xi", G, 5, 1, 10, 8, 10, 15), ("xi", S, 3, 1, 13, 9, 11, 16),
    ("tile_xo", S, 2, 3, 10, 8, 10, 13), ("tile_xo", G, 3, 2, 13, 9, 11, 16), ("tile_xo", R, 5, 5, 13, 9, 14, 18),
    ("q_inside_p", G, 2, 3, 13, 9, 15, 18), ("q_inside_p", R, 3, 2, 10, 8, 11, 14),
    ("q_inside_p", S, 4, 4, 13, 9, 14, 16), ("q_root", S, 1, 3, 10, 8, 10, 13), ("q_root", G, 1, 5, 13, 9, 11, 16),
    ("parallel", G, 3, 1, 13, 9, 11, 20), ("parallel", S, 4, 1, 10, 8, 10, 14),
]


@pytest.mark.parametrize("case, tail, fx, fy, w, h, rows, cols", CASES)
def test_round_up_inside_stays_in_bounds(case, tail, fx, fy, w, h, rows, cols):
    image = np.random.default_rng(rows * 31 + cols).integers(0, 256, (rows, cols), dtype=np.uint8)
    _, out = round_up_inside(lp, case, tail, fx, fy)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (w, h)), numpy_reference(image, w, h))


def _down_then_round_up(m, tail="ShiftInwards"):
    """out reads d[x / 2, y / 2]; d, a 2x2 down-sample of b, is computed per row of out's 4 x 6 tiles, split by 5
    with RoundUp; b is computed per row of tiles, outside d's loops."""
    x, y, xo, yo, xi, yi, px, pi = (m.Var(n) for n in "x y xo yo xi yi px pi".split())
    inp = m.ImageParam(m.UInt(16) if m is not lp else lp.UInt16, 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    b, d, out = m.Func("b"), m.Func("d"), m.Func("out")
    b[x, y] = m.u32(cl[x, y]) + m.u32(cl[x, y + 1])
    d[x, y] = (b[2 * x, 2 * y] + b[2 * x + 1, 2 * y] + b[2 * x, 2 * y + 1] + b[2 * x + 1, 2 * y + 1]) / 4
    out[x, y] = d[x / 2, y / 2]
    out.tile(x, y, xo, yo, xi, yi, 4, 6, getattr(m.TailStrategy, tail))
    d.compute_at(out, yi).split(x, px, pi, 5, m.TailStrategy.RoundUp)
    b.compute_at(out, yo)
    return inp, out


@pytest.mark.parametrize("w, h, tail, columns", [(8, 6, S, 14), (16, 15, S, 22), (16, 15, G, 22)])
def test_round_up_deeper_than_a_producer_grows_the_producers_storage(w, h, tail, columns):
    """d's rounded windows at each tile of a row of tiles (x / 2 of a 4-wide tile: 2, rounded to 5) read b past
    the rounding of their union, which b's storage (per row of tiles) was sized by: 10 columns where the second
    tile reads 4 .. 13 (UBSan: index 60 out of bounds for int32_t[60])."""
    import re

    from loom.frontends.pipeline.cpu_lower import lower_pipeline

    a = np.random.default_rng(w * h).integers(0, 1000, (h, w), dtype=np.uint16)
    _, out = _down_then_round_up(lp, tail)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, h)), lp.evaluate(out, {"inp": a}, (w, h)))
    shapes = re.findall(r"memref\.alloca?\(\) : memref<([0-9x]+)xi32>", str(lower_pipeline(out, {"inp": a.shape},
                                                                                           (w, h))))
    assert int(shapes[-1].split("x")[1]) == columns, shapes


def _per_pixel_round_up(m):
    """u, split by 3 with RoundUp, computed per pixel of out's 6 x 5 tiles (fused, parallel), reads d (computed
    per row of a tile) at min(x / 2, 9): each pixel's window of 1 rounds to 3, past the rounding of the row's 6."""
    x, y, xo, yo, xi, yi, t, px, pi = (m.Var(n) for n in "x y xo yo xi yi t px pi".split())
    inp = m.ImageParam(m.UInt(16) if m is not lp else lp.UInt16, 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    d, u, out = m.Func("d"), m.Func("u"), m.Func("out")
    d[x, y] = m.u32(cl[2 * x, 2 * y]) + m.u32(cl[2 * x + 1, 2 * y + 1])
    u[x, y] = d[m.min(x / 2, 9), m.max(y / 2 - 1, 0)]
    out[x, y] = u[x, y] * 2
    out.tile(x, y, xo, yo, xi, yi, 6, 5, m.TailStrategy.RoundUp).fuse(xo, yo, t).parallel(t)
    u.compute_at(out, xi).split(x, px, pi, 3, m.TailStrategy.RoundUp)
    d.compute_at(out, yi)
    return inp, out


def test_round_up_per_pixel_grows_the_storage_of_a_producer_per_row():
    """d's storage per tile row held the 3 columns the row reads, rounding the row's window of 6 by 3 adding
    nothing; each pixel's u rounds its window of 1 to 3 and read a 4th (UBSan: index 3 out of bounds for
    int32_t[3])."""
    import re

    from loom.frontends.pipeline.cpu_lower import lower_pipeline

    a = np.random.default_rng(8).integers(0, 1000, (12, 50), dtype=np.uint16)
    _, out = _per_pixel_round_up(lp)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (21, 5)), lp.evaluate(out, {"inp": a}, (21, 5)))
    shapes = re.findall(r"memref\.alloca?\(\) : memref<([0-9x]+)xi32>", str(lower_pipeline(out, {"inp": a.shape},
                                                                                           (21, 5))))
    assert int(shapes[-1].split("x")[1]) >= 4, shapes


def _clamped_windows_round_up(m, case):
    """A RoundUp Func computed deeper than a producer, whose widened windows are clamped into its whole region
    (grown by the rounded spans) past the producer's window: ``pixel``, d per pixel of u reading d at (x + 1) / 2
    and x / 2 (the joined window starts one before x / 2, at -1 for x = 0); ``guard``, u per row of GuardWithIf
    tiles 7 wide, the last one past the end."""
    x, y, xo, yo, xi, yi, px, pi = (m.Var(n) for n in "x y xo yo xi yi px pi".split())
    inp = m.ImageParam(m.UInt(16) if m is not lp else lp.UInt16, 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    b, d, u = m.Func("b"), m.Func("d"), m.Func("u")
    b[x, y] = m.u32(cl[x, y]) * 3 + m.u32(cl[x + 1, y])
    if case == "pixel":
        d[x, y] = (b[2 * x, 2 * y] + b[2 * x + 1, 2 * y] + b[2 * x, 2 * y + 1] + b[2 * x + 1, 2 * y + 1]) / 4
        u[x, y] = d[(x + 1) / 2, y / 2] + d[x / 2, m.clamp(y / 2 + 1, 0, 4)]
        d.compute_at(u, x).split(x, px, pi, 2, m.TailStrategy.RoundUp)
        b.compute_at(u, y)
        return inp, u
    out = m.Func("out")
    u[x, y] = b[2 * (x / 2), 2 * (y / 2)] + b[2 * ((x + 1) / 2) + 1, 2 * ((y + 1) / 2) + 1]
    out[x, y] = u[x, y] * 2
    out.tile(x, y, xo, yo, xi, yi, 7, 5, m.TailStrategy.GuardWithIf)
    u.compute_at(out, yi).split(x, px, pi, 2, m.TailStrategy.RoundUp)
    b.compute_at(out, yo)
    return inp, out


@pytest.mark.parametrize("case, w, h", [("pixel", 6, 4), ("guard", 8, 5), ("guard", 39, 21)])
def test_round_up_windows_clamped_past_the_producers_window_stay_in_its_storage(case, w, h):
    """UBSan caught the producer's storage too small: index -2 (pixel) and 61 of int32_t[60] (guard, 8 x 5)."""
    a = np.random.default_rng(w + h).integers(0, 1000, (h, w), dtype=np.uint16)
    _, out = _clamped_windows_round_up(lp, case)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, h)), lp.evaluate(out, {"inp": a}, (w, h)))
