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


def test_a_producer_computed_in_a_guarded_subtile_stays_inside_its_storage():
    """y split by 6 then by 4, GuardWithIf: p stored per 6-row tile, computed per 4-row one over rows that must lie
    in the 6-row tile's storage (11 rows: the tiles hold 6 and 5, the subtiles 4 and 2, 4 and 1)."""
    x, y, yo, yi, yio, yii = (lp.Var(n) for n in ("x", "y", "yo", "yi", "yio", "yii"))
    inp = lp.ImageParam(lp.UInt16, 2, "inp")
    p, out = lp.Func("p"), lp.Func("out")
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x, y] + p[x, y + 1] * 3
    out.split(y, yo, yi, 6, lp.TailStrategy.GuardWithIf).split(yi, yio, yii, 4, lp.TailStrategy.GuardWithIf)
    p.store_at(out, yo).compute_at(out, yio)
    image = np.random.default_rng(6).integers(0, 4000, (12, 9), dtype=np.uint16)
    want = (image[:11].astype(np.uint32) * 5 + image[1:12].astype(np.uint32) * 15).astype(np.uint16)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (9, 11)), want)
