"""Pipelines compiled with bounds checks (``LOOM_CHECK_BOUNDS=1``) compute what the unchecked C computes.

gcc 12.2 at -O3 with -fno-tree-vrp (loom's workaround for its value-range propagation, ``compiler.py``) unswitched
the row loop of this checked C wrongly: row 0 read a producer row as garbage, while the C is right (equal at -O2,
with tree-vrp, under ASan/UBSan, or with -fno-unswitch-loops). loom now compiles with -fno-unswitch-loops too."""

import numpy as np

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu


def test_a_select_between_two_row_offsets_per_tile_is_right_with_bounds_checks(monkeypatch):
    x, y, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = lp.ImageParam(lp.Int32, 2, "inp")
    f, g = lp.Func("f"), lp.Func("g")
    f[x, y] = lp.BoundaryConditions.repeat_edge(inp)[x, y] * 3 + x - y
    g[x, y] = f[5, lp.select(y % 2 == 0, y - 2, y + 4)] - x
    g.tile(x, y, xo, yo, xi, yi, 7, 7)
    f.compute_at(g, xo)
    a = np.random.default_rng(0).integers(-1000, 1000, (30, 40)).astype(np.int32)
    ys = np.arange(7)[:, None]
    rows = np.clip(np.where(ys % 2 == 0, ys - 2, ys + 4), 0, 29)
    want = a[rows, 5] * 3 + 5 - np.where(ys % 2 == 0, ys - 2, ys + 4) - np.arange(8)[None, :]
    monkeypatch.setenv("LOOM_CHECK_BOUNDS", "1")
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (8, 7)), want)
