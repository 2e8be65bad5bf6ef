"""A stage reading one producer down-sampled and step for step (``hw(3 x / 2) + hw(x)``).

The multi-rate scheduler decoupled the 3/2 read onto the producer's own grid and then refused the pair because the
other read ties both to one grid; both reads follow the common grid at the slower rate (producer every 2 slots,
consumer every 3), which is what it now builds. Checked against numpy, the CPU path, and for tight capacities."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

TILE, SIZE = (8, 5), (16, 10)


def pipeline(both_dims):
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = u8((hw[3 * x / 2, 3 * y / 2 if both_dims else y] + hw[x + 1, y]) >> 1)
    stream_through_accelerator(out, TILE, buffered=[hw])
    return out


@pytest.mark.parametrize("both_dims", [False, True], ids=["x", "xy"])
def test_down_sampled_and_step_for_step_read_of_one_producer(both_dims):
    out = pipeline(both_dims)
    w, h = SIZE
    img = np.random.default_rng(3).integers(0, 256, (3 * h // 2 + 1, 3 * w // 2 + 1), dtype=np.uint8)
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    p = img.astype(np.int64)
    want = ((p[3 * ys // 2 if both_dims else ys, 3 * xs // 2] + p[ys, xs + 1]) >> 1).astype(np.uint8)
    d = build_design(out, TILE)
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, SIZE), want)
    cap = d.capacities["hw_input"]
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, {"input": img}, SIZE, design=d, capacities={"hw_input": cap - 1})
