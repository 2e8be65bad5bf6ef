"""A producer computed at a loop of GuardWithIf tiles reads no input point past the end: the sanitizer session
(``scripts/dev``, ``-m sanitize``) runs these under AddressSanitizer, on inputs exactly as large as the pipeline
needs (a fused tile loop hid its guard, and the last tile's producer read past the input's end)."""

import numpy as np
import pytest

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu

pytestmark = pytest.mark.sanitize


def _tiles(fuse: bool):
    x, y, xo, yo, xi, yi, t = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi", "t"))
    inp = lp.ImageParam(lp.UInt16, 2, "inp")
    p, out = lp.Func("p"), lp.Func("out")
    p[x, y] = inp[x, y] * 3
    out[x, y] = p[x, y] + p[x + 1, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, lp.TailStrategy.GuardWithIf)
    if fuse:
        out.fuse(xo, yo, t)
    p.compute_at(out, t if fuse else yo)
    return out


@pytest.mark.parametrize("fuse", [True, False], ids=["at the fused tile loop", "at yo"])
def test_the_last_guarded_tiles_producer_stays_inside_the_input(fuse):
    image = np.random.default_rng(5).integers(0, 4000, (8, 11), dtype=np.uint16)
    want = (image[:7, :10].astype(np.uint32) * 3 + image[1:8, 1:11] * 3).astype(np.uint16)
    np.testing.assert_array_equal(run_cpu(_tiles(fuse), {"inp": image}, (10, 7)), want)
