"""Rows a step: ``unroll(x, nx)`` and ``unroll(y, ny)`` on every stage, a nx x ny block a step (issue 15).

A pipeline the project does not ship: input -> hw_input (a cast) -> output (3x3 mean). Every stage computes nx x ny
pixels a step; its rows advance ny per row period. Checked: values bit for bit against numpy, Halide and the CPU path
over 2 x 2 tiles; offsets and latency against the hand schedule below; capacities against the live values counted
straight from that schedule (not loom's code), and tight (one less evicts a value); the combinations loom does not
schedule are refused naming the Func.
"""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u16, u8
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

from tests.streaming.test_streaming_multirate import hl, hx, hy, live_max

W, H = 24, 8  # output tile
BLOCKS = [(1, 1), (2, 2), (1, 2), (4, 2), (2, 4)]


def blur(nx, ny, tile=(W, H), hw_rows=None):
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y])
    out[x, y] = u8(sum((hw[x + i, y + j] for j in range(3) for i in range(3)), start=u16(0)) / 9)
    out.tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    if nx > 1:
        out.unroll(xi, nx)
        hw.unroll(x, nx)
    if ny > 1:
        out.unroll(yi, ny)
    hw_rows = ny if hw_rows is None else hw_rows
    if hw_rows > 1:
        hw.unroll(y, hw_rows)
    return out


def np_blur(img, w, h):
    a = img.astype(np.uint16)
    return (sum(a[j:j + h, i:i + w] for j in range(3) for i in range(3)) // 9).astype(np.uint8)


def halide_blur(inp):
    hw, out = hl.Func("hw"), hl.Func("out")
    hw[hx, hy] = hl.u16(inp[hx, hy])
    b = hw[hx, hy]
    for j in range(3):
        for i in range(3):
            if (i, j) != (0, 0):
                b = b + hw[hx + i, hy + j]
    out[hx, hy] = hl.u8(b / 9)
    return out


def hand_schedule(nx, ny):
    """By hand. Both stages fire every cycle on nx x ny blocks. hw_input's row is W + 2 wide: Q = ceil((W + 2) / nx)
    cycles per block of ny rows. hw(x, y) at Q floor(y / ny) + floor(x / nx), output(x, y) at D + Q floor(y / ny) +
    floor(x / nx). The output reads hw(x + i, y + j), i, j < 3; the two terms depend on x and y alone, so
    D = Q max_y (floor((y + 2) / ny) - floor(y / ny)) + max_x (floor((x + 2) / nx) - floor(x / nx)). The last block
    is written at D + Q (ceil(H / ny) - 1) + ceil(W / nx) - 1: latency one more."""
    q = -(-(W + 2) // nx)
    d = q * max((y + 2) // ny - y // ny for y in range(H)) + max((x + 2) // nx - x // nx for x in range(W))
    return q, d, d + q * (-(-H // ny) - 1) + -(-W // nx) - 1 + 1


def live_values(nx, ny):
    q, d, _ = hand_schedule(nx, ny)
    hw_t = {(x, y): q * (y // ny) + x // nx for y in range(H + 2) for x in range(W + 2)}
    last = dict(hw_t)
    for y in range(H):
        for x in range(W):
            t = d + q * (y // ny) + x // nx
            for j in range(3):
                for i in range(3):
                    last[x + i, y + j] = max(last[x + i, y + j], t)
    return live_max(hw_t, last)


@pytest.mark.parametrize("nx,ny", BLOCKS)
def test_blur_in_blocks_is_bit_exact_against_numpy_halide_and_the_cpu_path(nx, ny):
    out = blur(nx, ny)
    d = build_design(out, (W, H))
    size = (2 * W, 2 * H)
    for seed in range(2):
        img = np.random.default_rng(seed).integers(0, 256, (size[1] + 2, size[0] + 2)).astype(np.uint8)
        want = np_blur(img, *size)
        assert len(np.unique(want)) > 1
        np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), want)
        np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)
        if hl is not None:
            np.testing.assert_array_equal(np.asarray(halide_blur(hl.Buffer(img)).realize(list(size))), want)


@pytest.mark.parametrize("nx,ny", BLOCKS)
def test_blur_in_blocks_follows_the_hand_schedule(nx, ny):
    d = build_design(blur(nx, ny), (W, H))
    q, off, latency = hand_schedule(nx, ny)
    hw, out = d.stages["hw_input"].schedule, d.stages["output"].schedule
    for s, o in ((hw, 0), (out, off)):
        assert s.lanes == nx and s.offset == o
        if ny == 1:
            assert (s.strides, s.floors) == ((1, q), ())
        else:  # y enters as floor(y / ny)
            assert (s.strides, s.floors) == ((1, 0), ((1, ny, q),))
    assert d.latency == latency


@pytest.mark.parametrize("nx,ny", BLOCKS)
def test_blur_in_blocks_holds_its_live_values_and_no_more(nx, ny):
    """Capacities equal the live values of the hand schedule: about two rows of hw_input plus a block row."""
    d = build_design(blur(nx, ny), (W, H))
    live = live_values(nx, ny)
    assert d.capacities["hw_input"] == live
    assert 2 * (W + 2) <= live <= (ny + 1) * (W + 2) + 2 * nx * ny


@pytest.mark.parametrize("nx,ny", [(2, 2), (1, 2), (4, 2)])
def test_blur_in_blocks_capacities_are_tight(nx, ny):
    out = blur(nx, ny)
    d = build_design(out, (W, H))
    img = np.random.default_rng(3).integers(0, 256, (2 * H + 2, 2 * W + 2)).astype(np.uint8)
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, {"input": img}, (2 * W, 2 * H), design=d, capacities={"hw_input": d.capacities["hw_input"] - 1})


def test_capacities_from_a_few_rows_equal_the_full_sweep():
    out = blur(2, 2, tile=(W, 40))
    fast, exact = build_design(out, (W, 40)), build_design(out, (W, 40), exact_capacity=True)
    assert fast.capacities == exact.capacities and fast.latency == exact.latency


def test_kernels_and_copies_count_the_block():
    """A 2 x 2 block a step places 4 copies of each stage's kernel."""
    from loom.streaming.resources import stage_copies

    d = build_design(blur(2, 2), (W, H))
    assert stage_copies(d, "output") == 4 and stage_copies(d, "hw_input") == 4


# refusals ------------------------------------------------------------------------------------------------------


def test_rows_mixed_across_stages_are_refused_by_name():
    with pytest.raises(LoomError) as e:
        build_design(blur(2, 2, hw_rows=1), (W, H))
    assert "Func 'hw_input'" in str(e.value) and "rows per step" in str(e.value)


def test_rows_a_step_through_a_resampling_along_y_is_refused_by_name():
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y])
    out[x, y] = u8((hw[2 * x, 2 * y] + hw[2 * x + 1, 2 * y + 1]) / 2)
    out.tile(x, y, xo, yo, xi, yi, W, H).hw_accelerate(xi, xo)
    hw.compute_at(out, xo).unroll(x, 4).unroll(y, 2)
    out.unroll(xi, 2).unroll(yi, 2)
    with pytest.raises(LoomError) as e:
        build_design(out, (W, H))
    assert "Func 'output'" in str(e.value) and "along y" in str(e.value)


def test_rows_a_step_with_a_reduction_in_time_is_refused_by_name():
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, 4, name="r")
    s, out = Func("rowsum"), Func("output")
    s[x, y] = u16(0)
    s[x, y] += u16(inp[x + r.x, y])
    out[x, y] = s[x, y]
    out.tile(x, y, xo, yo, xi, yi, 8, 4).hw_accelerate(xi, xo)
    s.compute_at(out, xo).unroll(y, 2)
    out.unroll(yi, 2)
    with pytest.raises(LoomError) as e:
        build_design(out, (8, 4))
    assert "Func 'rowsum'" in str(e.value) and "reduction in time" in str(e.value)
