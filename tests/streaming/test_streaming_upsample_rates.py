"""A producer slower than its consumer: up-sampling (``f[x / k, y / k]``) at n pixels a step.

A pipeline the project does not ship: input -> hw_input (a cast, ``L`` pixels a step) -> up = hw_input(x / k,
y / k) -> output = u8(3x3 sum of up / 9), up and output n pixels a step. When L pixels a step cannot follow up
step for step (n / (k L) not a whole number), hw_input runs on its own grid along x (a firing every cycle) and
its rows keep pace with up's (one per k rows). Checked: values bit for bit against numpy, Halide and the CPU path over
2 x 2 tiles; strides, offsets and latency against the hand schedule stated below; capacities against the live
values counted straight from that schedule (not loom's code) and against the live-value lower bounds (one input
row; two rows of up), and tight (one less evicts a value); the forms that stay unsupported are refused by name.
"""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u16, u8
from loom.streaming import build_design, simulate

from tests.streaming.test_streaming_multirate import assert_every_path_gives, halide_box3, hl, hx, hy, live_max

W, H = 48, 12  # output tile; multiples of every k below, so every tile's input starts on a whole pixel


def up_blur(n, lanes, k, tile=(W, H), y_up=True, direct=False):
    """The pipeline above on ``tile``; ``y_up=False`` up-samples x only; ``direct``: output also reads
    hw_input(x, y) step for step."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, up, out = Func("hw_input"), Func("up"), Func("output")
    hw[x, y] = u16(inp[x, y])
    up[x, y] = hw[x / k, y / k if y_up else y]
    s = sum((up[x + i, y + j] for j in range(3) for i in range(3)), start=hw[x, y] if direct else u16(0))
    out[x, y] = u8(s / 9)
    out.tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    up.compute_at(out, xo)
    out.unroll(xi, n)
    up.unroll(x, n)
    if lanes > 1:
        hw.unroll(x, lanes)
    return out


def np_up_blur(img, k, w, h):
    up = img.astype(np.uint16).repeat(k, axis=0).repeat(k, axis=1)
    s = sum(up[j:j + h, i:i + w] for j in range(3) for i in range(3))
    return (s // 9).astype(np.uint8)


def halide_up_blur(inp, k):
    """The same algorithm in Halide's own API (its integer division of a Var is floor division)."""
    hw, up, out = hl.Func("hw"), hl.Func("up"), hl.Func("out")
    hw[hx, hy] = hl.u16(inp[hx, hy])
    up[hx, hy] = hw[hx / k, hy / k]
    out[hx, hy] = hl.u8(halide_box3(up) / 9)
    return out


def hand_schedule(n, lanes, k, sigma):
    """The schedule, by hand. up's row is W + 2 wide (the 3x3 window's halo): P = ceil((W + 2) / n) cycles a row
    for up and output; hw_input's row (W/k + 1 pixels, ``sigma`` cycles per firing of ``lanes``) once per k
    rows, every kP cycles: hw(X, Y) at kP Y + sigma floor(X / lanes), up(x, y) at D_up + P y + floor(x / n),
    output(x, y) at D_out + P y + floor(x / n). up(x, y) reads hw(floor(x/k), floor(y/k)), so (y = kY)
    D_up = max over x in [0, W + 1] of sigma floor(floor(x/k) / lanes) - floor(x / n) (at least 0); output
    reads up(x + 2, y + 2) last, floor((x + 2) / n) - floor(x / n) <= 1: D_out = D_up + 2P + 1. The last output
    (W - 1, H - 1) is written at D_out + P (H - 1) + W/n - 1: latency D_out + P (H - 1) + W/n."""
    p = -(-(W + 2) // n)
    d_up = max(0, max(sigma * ((x // k) // lanes) - x // n for x in range(W + 2)))
    d_out = d_up + 2 * p + 1
    return p, d_up, d_out, d_out + p * (H - 1) + W // n


def hand_live_values(n, lanes, k, sigma):
    """hw_input's and up's live values under ``hand_schedule``: each value from its write to its last read."""
    p, d_up, d_out, _ = hand_schedule(n, lanes, k, sigma)
    up_t = {(x, y): d_up + p * y + x // n for y in range(H + 2) for x in range(W + 2)}
    hw_w = {(xx, yy): k * p * yy + sigma * (xx // lanes)
            for yy in range((H + 1) // k + 1) for xx in range((W + 1) // k + 1)}
    hw_last = dict(hw_w)
    for (x, y), t in up_t.items():
        hw_last[x // k, y // k] = max(hw_last[x // k, y // k], t)
    up_last = dict(up_t)
    for y in range(H):
        for x in range(W):
            for j in range(3):
                for i in range(3):
                    up_last[x + i, y + j] = max(up_last[x + i, y + j], d_out + p * y + x // n)
    return live_max(hw_w, hw_last), live_max(up_t, up_last)


# (n output pixels a step, hw_input pixels a step, k, hw_input's cycles per firing): own grid when n / (k L) is
# not whole (1/2, 4/3, 2), step for step when it is (1: 2 = 2 x 1, 4 = 2 x 2, 6 = 3 x 2)
CASES = [(2, 1, 2, 1), (4, 1, 2, 1), (4, 2, 2, 1), (4, 1, 3, 1), (6, 2, 3, 1), (6, 1, 3, 1)]


@pytest.mark.parametrize("n,lanes,k,sigma", CASES)
def test_up_sample_then_blur_is_bit_exact_against_numpy_halide_and_the_cpu_path(n, lanes, k, sigma):
    out = up_blur(n, lanes, k)
    d = build_design(out, (W, H))
    size = (2 * W, 2 * H)
    for seed in range(2):
        img = np.random.default_rng(seed).integers(0, 256, (2 * H // k + 1, 2 * W // k + 1)).astype(np.uint8)
        assert_every_path_gives(np_up_blur(img, k, *size), out, d, img, size, lambda b: halide_up_blur(b, k))


@pytest.mark.parametrize("n,lanes,k,sigma", CASES)
def test_up_sample_then_blur_follows_the_hand_schedule(n, lanes, k, sigma):
    d = build_design(up_blur(n, lanes, k), (W, H))
    p, d_up, d_out, latency = hand_schedule(n, lanes, k, sigma)
    hw, up, out = (d.stages[s].schedule for s in ("hw_input", "up", "output"))
    assert (hw.lanes, hw.strides, hw.offset) == (lanes, (sigma, k * p), 0)
    assert (up.lanes, up.strides, up.offset) == (n, (1, p), d_up)
    assert (out.lanes, out.strides, out.offset) == (n, (1, p), d_out)
    assert d.latency == latency


@pytest.mark.parametrize("n,lanes,k,sigma", CASES)
def test_up_sample_then_blur_holds_its_live_values_and_no_more(n, lanes, k, sigma):
    """Lower bounds for any schedule computing rows in order: hw_input holds its whole row (W/k + 1) between
    up's first and last row reading it; output row y + 1 reads every value of up's rows y + 1 and y + 2, all
    written and read once by row y: 2 (W + 2). loom holds one input row and 2 (W + 2) + n values of up (within
    5%: 2 x 50 + n, n <= 6)."""
    out = up_blur(n, lanes, k)
    d = build_design(out, (W, H))
    hw_live, up_live = hand_live_values(n, lanes, k, sigma)
    assert (d.capacities["hw_input"], d.capacities["up"]) == (hw_live, up_live)
    assert hw_live == W // k + 1
    assert up_live == 2 * (W + 2) + n and up_live <= 1.05 * 2 * (W + 2) + 1
    img = np.random.default_rng(3).integers(0, 256, (2 * H // k + 1, 2 * W // k + 1)).astype(np.uint8)
    for buf in ("hw_input", "up"):
        with pytest.raises(LoomError, match="read after eviction"):
            simulate(out, {"input": img}, (2 * W, 2 * H), design=d, capacities={buf: d.capacities[buf] - 1})


def test_a_producer_too_slow_on_average_is_refused_by_name():
    """x / 2 alone: up reads 2 of hw_input's pixels per step (4 pixels a step, every row of hw_input read once),
    more than its 1 a step; 2 a step is enough (and then step for step)."""
    with pytest.raises(LoomError, match=r"it computes 1 pixel per step but 'up' \(4 pixels per step\) reads 2 of "
                       r"its pixels per step on average .*unroll it by at least 2") as e:
        build_design(up_blur(4, 1, 2, y_up=False), (W, H))
    assert e.value.where == "Func 'hw_input'" and e.value.construct == "unroll"
    d = build_design(up_blur(4, 2, 2, y_up=False), (W, H))
    assert d.stages["hw_input"].schedule.strides[0] == d.stages["up"].schedule.strides[0] == 1


def test_a_slow_producer_also_read_step_for_step_is_refused_by_name():
    """hw_input 1 pixel a step read by up through x / 2 and by the 4-wide output at x: not an up-sampling rate."""
    with pytest.raises(LoomError, match=r"stages run at different rates \(pixels per cycle: hw_input=1, up=4, "
                       r"output=4\)") as e:
        build_design(up_blur(4, 1, 2, direct=True), (W, H))
    assert e.value.where == "Func 'hw_input'" and e.value.construct == "unroll"


@pytest.mark.parametrize("n,lanes,k", [(4, 1, 2), (6, 1, 3)])
def test_capacities_from_a_few_rows_equal_the_full_sweep(n, lanes, k):
    """A tall tile: the capacities come from a proxy clipped to a few rows (rows of hw_input counted at k per
    output row) and equal the exact sweep over the whole domain."""
    out = up_blur(n, lanes, k, tile=(W, 60))
    fast, exact = build_design(out, (W, 60)), build_design(out, (W, 60), exact_capacity=True)
    assert fast.capacities == exact.capacities and fast.latency == exact.latency


def test_a_producer_read_through_two_up_samplings_of_different_pace_is_refused_by_name():
    """hw_input 1 pixel a step read 4 wide at x / 4 (one pixel a step: step for step) and at x / 2 (two a step:
    its own grid) by stages feeding one output: its grid cannot be both."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, a, b, out = Func("hw_input"), Func("a"), Func("b"), Func("output")
    hw[x, y] = u16(inp[x, y])
    a[x, y] = hw[x / 4, y / 4]
    b[x, y] = hw[x / 2, y / 4]
    out[x, y] = a[x, y] + b[x, y]
    out.tile(x, y, xo, yo, xi, yi, 16, 8).hw_accelerate(xi, xo)
    out.unroll(xi, 4)
    for f in (a, b):
        f.compute_at(out, xo).unroll(x, 4)
    hw.compute_at(out, xo)
    with pytest.raises(LoomError, match=r"'b' reads it through an up-sampling and, along another path, step for "
                       r"step") as e:
        build_design(out, (16, 8))
    assert e.value.where == "Func 'hw_input'" and e.value.construct == "unroll"


def _random_case(rng):
    k = int(rng.choice([2, 3, 4]))
    n = int(rng.choice([1, 2, 3, 4, 5, 6, 8]))
    lanes = int(rng.integers(1, n + 1))
    return n, lanes, k, bool(rng.integers(2)), k * int(rng.choice([4, 5, 6, 8])), k * int(rng.choice([2, 3, 4]))


def _two_tap_pipeline(n, lanes, k, bilinear, tile):
    """hw_input (lanes wide) -> up = hw_input(x/k, y/k) (+ ((x+1)/k, y/k) + (x/k, (y+1)/k) when bilinear), n wide
    -> output = u8((up(x, y) + up(x + 1, y + 1) + up(x + 2, y)) / 3)."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, up, out = Func("hw_input"), Func("up"), Func("output")
    hw[x, y] = u16(inp[x, y])
    up[x, y] = hw[x / k, y / k] + (hw[(x + 1) / k, y / k] + hw[x / k, (y + 1) / k] if bilinear else u16(0))
    out[x, y] = u8((up[x, y] + up[x + 1, y + 1] + up[x + 2, y]) / 3)
    out.tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    up.compute_at(out, xo)
    if n > 1:
        out.unroll(xi, n)
        up.unroll(x, n)
    if lanes > 1:
        hw.unroll(x, lanes)
    return out


def _np_two_tap(img, k, bilinear, w, h):
    a = img.astype(np.uint16)
    rep = a.repeat(k, axis=0).repeat(k, axis=1)
    up = rep[:h + 2, :w + 3].copy()
    if bilinear:  # hw((x + 1) / k, y / k) and hw(x / k, (y + 1) / k)
        up += rep[:h + 2, 1:w + 4] + rep[1:h + 3, :w + 3]
    return ((up[:h, :w] + up[1:h + 1, 1:w + 1] + up[:h, 2:w + 2]) // 3).astype(np.uint8)


def test_random_up_sampling_rates_are_bit_exact_and_hold_exactly_their_live_values():
    """12 seeded cases (k 2-4, output 1-8 pixels a step, hw_input 1..n wide, nearest or with a bilinear-style halo,
    tiles of 4-8 x 2-4 steps of k): each builds or is refused as too slow (lanes < n / k^2, the pixels read a
    step); a built one is bit-exact against numpy over 2 x 2 tiles, its capacities equal the exact sweep over the
    whole domain, and each is tight (one less evicts a value)."""
    rng = np.random.default_rng(15)
    built = 0
    for _ in range(12):
        n, lanes, k, bilinear, w, h = _random_case(rng)
        out = _two_tap_pipeline(n, lanes, k, bilinear, (w, h))
        try:
            d = build_design(out, (w, h))
        except LoomError as e:
            assert "on average" in str(e) and lanes < n / k ** 2
            continue
        built += 1
        img = rng.integers(0, 256, (2 * h // k + 2, 2 * w // k + 2)).astype(np.uint8)
        np.testing.assert_array_equal(simulate(out, {"input": img}, (2 * w, 2 * h), design=d),
                                      _np_two_tap(img, k, bilinear, 2 * w, 2 * h))
        assert d.capacities == build_design(out, (w, h), exact_capacity=True).capacities
        for buf in ("hw_input", "up"):
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, {"input": img}, (2 * w, 2 * h), design=d, capacities={buf: d.capacities[buf] - 1})
    assert built >= 8


def _up_with_a_reduction(in_producer: bool):
    """input -> hw_input -> up = hw_input(x / 3, y / 3) -> output, 4 pixels a step, hw_input 1: hw_input on its own
    grid along x (4 / 3 not whole); ``in_producer``: hw_input sums 3 input pixels in time, else up sums 3
    weighted copies of its read in time."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, 3)
    hw, up, out = Func("hw_input"), Func("up"), Func("output")
    if in_producer:
        hw[x, y] = u16(0)
        hw[x, y] += u16(inp[x + r.x, y])
        up[x, y] = hw[x / 3, y / 3]
    else:
        hw[x, y] = u16(inp[x, y])
        up[x, y] = u16(0)
        up[x, y] += hw[x / 3, y / 3] * u16(r.x + 1)
    out[x, y] = up[x, y] + up[x + 1, y]
    out.tile(x, y, xo, yo, xi, yi, 12, 12).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    up.compute_at(out, xo)
    out.unroll(xi, 4)
    up.unroll(x, 4)
    return out


@pytest.mark.parametrize("in_producer, who", [(True, "hw_input"), (False, "up")])
def test_a_slow_producer_beside_a_reduction_iterated_in_time_is_refused_by_name(in_producer, who):
    """A producer on its own grid along x is scheduled only between stages firing once per step. (Beside an input
    memory at its own rate it cannot arise: such a memory reads only host streams, which have no x relation.)"""
    with pytest.raises(LoomError, match=f"Func 'hw_input': 'up' reads it through an up-sampling and '{who}' iterates "
                                        "a reduction in time; a producer on its own grid along x") as e:
        build_design(_up_with_a_reduction(in_producer), (12, 12))
    assert e.value.construct == "unroll"


def test_an_arithmetic_shift_up_samples_as_a_division():
    """up = hw_input(x >> 1, y >> 1) is hw_input(x / 2, y / 2) (a signed shift floors): the same schedule and
    capacities, and the same values against numpy, Halide and the CPU path (before, x >> 1 was refused as
    non-affine)."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, up, out = Func("hw_input"), Func("up"), Func("output")
    hw[x, y] = u16(inp[x, y])
    up[x, y] = hw[x >> 1, y >> 1]
    out[x, y] = u8(sum((up[x + i, y + j] for j in range(3) for i in range(3)), start=u16(0)) / 9)
    out.tile(x, y, xo, yo, xi, yi, W, H).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    up.compute_at(out, xo)
    shifted, divided = build_design(out, (W, H)), build_design(up_blur(1, 1, 2), (W, H))
    for s in ("hw_input", "up", "output"):
        a, b = shifted.stages[s].schedule, divided.stages[s].schedule
        assert (a.lanes, a.strides, a.offset) == (b.lanes, b.strides, b.offset)
    assert shifted.capacities == divided.capacities
    img = np.random.default_rng(5).integers(0, 256, (H + 1, W + 1)).astype(np.uint8)
    assert_every_path_gives(np_up_blur(img, 2, 2 * W, 2 * H)[:H * 2, :W * 2], out, shifted, img, (2 * W, 2 * H),
                            lambda b: halide_up_blur(b, 2))
