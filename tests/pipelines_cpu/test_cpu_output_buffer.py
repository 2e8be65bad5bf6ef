"""A compiled pipeline's output array is allocated without zeroing (np.empty): every point of the output's region
must be written by the generated C. Here the array starts full of 0x5A bytes, through schedules that leave tails
(GuardWithIf, ShiftInwards, RoundUp outputs), an update definition and a parallel loop; values against numpy."""

import numpy as np
import pytest

import loom.frontends.pipeline as lp
import loom.jit.pipeline as jit_pipeline
from loom.jit.pipeline import run_cpu

T = lp.TailStrategy


@pytest.fixture
def dirty_empty(monkeypatch):
    def empty(shape, dtype):
        return np.full(shape, 0x5A, dtype=dtype)

    monkeypatch.setattr(jit_pipeline.np, "empty", empty)


@pytest.mark.parametrize("tail", [T.GuardWithIf, T.ShiftInwards, T.RoundUp])
@pytest.mark.parametrize("parallel", [False, True])
def test_every_output_point_is_written(dirty_empty, tail, parallel):
    x, y, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = lp.ImageParam(lp.Int32, 2, "inp")
    out = lp.Func("out")
    out[x, y] = inp[x, y] * 2 + inp[x + 1, y]
    out[x, y] = out[x, y] + 1
    out.tile(x, y, xo, yo, xi, yi, 4, 3, tail)
    if parallel:
        out.parallel(yo)
    a = np.random.default_rng(5).integers(-100, 100, (12, 14)).astype(np.int32)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (10, 7)), a[:7, :10] * 2 + a[:7, 1:11] + 1)
