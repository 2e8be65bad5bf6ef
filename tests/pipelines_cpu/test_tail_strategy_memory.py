"""Every tail strategy's generated C stays inside its buffers (run again under ASan/UBSan in the sanitizer
session) and computes the numpy reference on sizes the split factors do not divide."""

import numpy as np
import pytest

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu

pytestmark = pytest.mark.sanitize
T = lp.TailStrategy


@pytest.mark.parametrize("strategy", T.ALL)
def test_tiles_with_tails_stay_in_bounds(strategy):
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    p = lp.Func("p")
    p[x, y] = lp.u16(inp[x, y]) + lp.u16(inp[x + 1, y + 1])
    out = lp.Func("out")
    out[x, y] = lp.u8((p[x, y] + p[x + 1, y]) >> 2)
    acc = lp.Func("acc")
    acc[x, y] = lp.u16(out[x, y])
    acc[x, y] = acc[x, y] * 3 + 1
    guard = T.GuardWithIf if strategy == T.ShiftInwards else strategy  # ShiftInwards: pure definitions only
    acc.update().split(x, xo, xi, 4, guard)
    out.compute_root().tile(x, y, xo, yo, xi, yi, 4, 3, strategy)
    p.compute_root().split(x, xo, xi, 3, strategy)
    w, h = 11, 7
    image = np.random.default_rng(3).integers(0, 256, size=(h + 8, w + 8), dtype=np.uint8)  # room to round up
    want = lp.evaluate(acc, {"inp": image}, (w, h))
    np.testing.assert_array_equal(run_cpu(acc, {"inp": image}, (w, h)), want)
