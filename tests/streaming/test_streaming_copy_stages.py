"""``in_()`` inside the fabric (thesis §3.5: a copy is one more memory level): the consumers read the copy.

g feeds a 2 x 2 window of the output. As a stage of its own (``g.in_().compute_at(out, xo)``) the copy holds the
window, (k - 1) W + k - 1 = 9 values over rows of W = 9 (the tile's 8 + 1), and g itself becomes a wire; an
inlined copy adds nothing (g holds the window). Values against numpy."""

import numpy as np
import pytest

from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u8, u16
from loom.streaming import build_design, simulate

x, y, xo, yo, xi, yi = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))


def window(copy):
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    g = Func("g")
    g[x, y] = hw[x, y] * 3
    out = Func("output")
    out[x, y] = u8((g[x, y] + g[x + 1, y + 1]) >> 2)
    out.tile(x, y, xo, yo, xi, yi, 8, 4).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    g.compute_at(out, xo)
    if copy == "stage":
        g.in_().compute_at(out, xo)
    elif copy == "inline":
        g.in_()
    return out


@pytest.mark.parametrize("copy, capacities", [("stage", {"g": 0, "g_in": 9}), ("inline", {"g": 9}),
                                               (None, {"g": 9})])
def test_a_copy_stage_holds_the_window_its_consumer_reads(copy, capacities):
    out = window(copy)
    d = build_design(out, (8, 4))
    assert {k: d.capacities[k] for k in capacities} == capacities
    assert ("g_in" in d.stages) == (copy == "stage")
    img = np.random.default_rng(2).integers(0, 256, (9, 17), dtype=np.uint8)
    p = img.astype(np.uint16) * 3
    want = ((p[:8, :16] + p[1:9, 1:17]) >> 2).astype(np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 8), design=d), want)
