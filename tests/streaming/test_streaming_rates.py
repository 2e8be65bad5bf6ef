"""n pixels per cycle (unroll of every stage's innermost dimension inside hw_accelerate): the
schedule packs n pixels into each cycle, the latency drops to about 1/n, simulation stays bit-exact."""

import numpy as np
import pytest
from tests.streaming.streaming_apps import example, references

from loom.errors import LoomError
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

SIZE = (40, 24)


def _image(mod, seed):
    return np.random.default_rng(seed).integers(0, 256, mod.input_shape(SIZE), dtype=np.uint8)


@pytest.mark.parametrize("name,stages", [("gaussian", 1), ("cascade", 2), ("harris", 3)])
@pytest.mark.parametrize("rate", [1, 2, 4])
def test_latency_scales_with_pixels_per_cycle(name, stages, rate):
    mod = example(name)
    out, _ = mod.build("accel", tile=SIZE, rate=rate)
    d = build_design(out, SIZE)
    w, h = SIZE
    row = -(-(w + mod.HALO) // rate)  # cycles per input row at `rate` pixels per cycle
    # a 3x3 stage computing columns n*c .. n*c+n-1 at cycle c needs input column n*c+n+1 of two rows
    # later, which arrives floor((n*c+n+1)/n) = c + (n+1)//n cycles into that row
    stage_delay = 2 * row + (rate + 1) // rate
    assert d.offsets["output"] == stages * stage_delay
    last_x_cycle = (w - 1) // rate
    assert d.latency == d.offsets["output"] + row * (h - 1) + last_x_cycle + 1
    img = _image(mod, rate)
    sim = simulate(out, {"input": img}, SIZE, design=d)
    np.testing.assert_array_equal(sim, getattr(references, name)(img, *SIZE))


@pytest.mark.sanitize
@pytest.mark.parametrize("name", ["gaussian", "cascade", "harris"])
def test_two_pixels_per_cycle_halves_latency_and_matches_the_cpu_path(name):
    mod = example(name)
    one, _ = mod.build("accel", tile=SIZE, rate=1)
    two, _ = mod.build("accel", tile=SIZE, rate=2)
    d1, d2 = build_design(one, SIZE), build_design(two, SIZE)
    assert abs(d2.latency - d1.latency / 2) <= 2
    img = _image(mod, 7)
    sim = simulate(two, {"input": img}, SIZE, design=d2)
    cpu_out, _ = mod.build("cpu")
    np.testing.assert_array_equal(sim, run_cpu(cpu_out, {"input": img}, SIZE))
    np.testing.assert_array_equal(sim, getattr(references, name)(img, *SIZE))
    for buf, cap in d2.capacities.items():
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(two, {"input": img}, SIZE, design=d2, capacities={buf: cap - 1})


@pytest.mark.parametrize("rate, rows", [(16, 1), (8, 1), (1, 6), (2, 5)])
def test_a_rate_wider_than_the_tile_is_refused_by_name(rate, rows):
    """unroll(xi, 16) in an 8-wide tile (or unroll(yi, 6) in a 5-row one) would place lanes past the tile's edge
    (Halide refuses the same schedule at run time); a rate equal to the tile's width runs bit-exact."""
    from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u8, u16
    from loom.frontends.pipeline.recipes import stream_through_accelerator

    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = u8((hw[x, y] + hw[x + 1, y] + hw[x, y + 1]) / 3)
    loops = stream_through_accelerator(out, (8, 5), buffered=[hw], rate=rate)
    if rows > 1:
        out.unroll(loops.yi, rows)
        hw.unroll(y, rows)
    img = np.random.default_rng(3).integers(0, 256, (11, 17), dtype=np.uint8)
    if rate <= 8 and rows <= 5:
        want = (img[:10, :16].astype(int) + img[:10, 1:17] + img[1:11, :16]) // 3
        np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 10)), want)
        return
    what = (f"unroll\\(xi, {rate}\\): {rate} pixels per cycle is more than the 8 iterations of 'xi' \\(the "
            r"accelerator tile's extent along 'x'\)" if rate > 8 else
            f"unroll\\(yi, {rows}\\): {rows} rows per step is more than the 5 iterations of 'yi' \\(the "
            r"accelerator tile's extent along 'y'\)")
    with pytest.raises(LoomError, match=f"Func 'output': {what}; unroll by at most"):
        build_design(out, (8, 5))
