"""Accelerator tiles that do not divide the image, by the tail strategy of the tile split, bit-exact against
Halide running the same algorithm with the same split: ShiftInwards (Auto) re-runs the last tile shifted
inward, GuardWithIf runs smaller designs for the last tiles, RoundUp runs whole tiles past the end (and needs
the input to cover them, as Halide does)."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

from loom.errors import LoomError
from loom.frontends.pipeline import TailStrategy as T
from loom.frontends.pipeline import Var
from loom.streaming import SimulationStats, simulate

from tests.streaming.streaming_apps import example

W, H, TILE = 37, 20, (16, 8)


def loom_gaussian(tail):
    mod = example("gaussian")
    a = mod.algorithm()
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out = a["output"]
    out.tile(a["x"], a["y"], xo, yo, xi, yi, *TILE, tail).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    a["blur_unnormalized"].update().unroll(a["win"].x).unroll(a["win"].y)
    return out


def halide_gaussian(tail, image):
    weights = example("gaussian").WEIGHTS
    x, y, xo, yo, xi, yi = (hl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = hl.ImageParam(hl.UInt(8), 2, "input")
    hw = hl.Func("hw_input")
    hw[x, y] = hl.u16(inp[x, y])
    acc = hl.Func("blur_unnormalized")
    acc[x, y] = hl.u16(0)
    for j in range(3):
        for i in range(3):
            acc[x, y] = acc[x, y] + hl.u16(weights[j][i]) * hw[x + i, y + j]
    out = hl.Func("output")
    out[x, y] = hl.u8(acc[x, y] / 256)
    out.tile(x, y, xo, yo, xi, yi, *TILE, getattr(hl.TailStrategy, tail))
    hw.compute_at(out, xo)
    inp.set(hl.Buffer(image))
    return np.asarray(out.realize([W, H]))


@pytest.mark.parametrize("tail,margin", [(T.Auto, 0), (T.ShiftInwards, 0), (T.GuardWithIf, 0), (T.RoundUp, 0),
                                         (T.RoundUp, 16)])
def test_accelerator_tail_strategies_match_halide(tail, margin):
    image = np.random.default_rng(4).integers(0, 256, (H + 2 + margin, W + 2 + margin), dtype=np.uint8)
    try:
        want = halide_gaussian(tail, image)
    except hl.HalideError:
        want = None
    out = loom_gaussian(tail)
    if want is None:  # whole tiles past the end read past the input
        assert tail == T.RoundUp and margin == 0
        with pytest.raises(LoomError, match="ImageParam 'input': the pipeline reads dimension 0 over \\[0, 49\\]"):
            simulate(out, {"input": image}, (W, H))
        return
    stats = SimulationStats()
    np.testing.assert_array_equal(simulate(out, {"input": image}, (W, H), stats=stats), want)
    assert stats.tiles == 3 * 3  # ceil(37 / 16) x ceil(20 / 8) invocations whatever the strategy
