"""Down-sampling at n pixels a step: a consumer of n pixels a step reading its producer at stride s.

Pipelines the project does not ship: (1) input -> hw_input (a cast) -> blur (3x3 mean) -> output = u8(mean of the
s x s block of blur at (s x, s y)), a 2x2 or 3x3 average pool; (2) a stride-3 decimation output = u8(hw(3x, 3y) +
hw(3x + 1, 3y)). The output computes n pixels a step, the producers L. When L / (s n) is whole the producer fires
every L / (s n) steps, when s n / L is, the output every s n / L (as at one pixel a step); else both fire every step,
the producer on its own grid along x. Rows: s producer rows per output row. Checked: values bit for bit against
numpy, Halide and the CPU path over 2 x 2 tiles; strides, offsets and latency against the hand schedule below;
capacities against the live values counted straight from that schedule (not loom's code), and tight (one less
evicts a value).
"""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16, u8
from loom.streaming import build_design, simulate

from tests.streaming.test_streaming_multirate import assert_every_path_gives, hl, hx, hy, live_max

W, H = 24, 8  # output tile


def blur_pool(n, lanes, s, tile=(W, H), rows=1, out_rows=1):
    """3x3 blur then s x s average pool: hw_input and blur ``lanes`` x ``rows`` a step, the pool n x out_rows."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, blur, out = Func("hw_input"), Func("blur"), Func("output")
    hw[x, y] = u16(inp[x, y])
    blur[x, y] = sum((hw[x + i, y + j] for j in range(3) for i in range(3)), start=u16(0)) / 9
    out[x, y] = u8(sum((blur[s * x + i, s * y + j] for j in range(s) for i in range(s)), start=u16(0)) / (s * s))
    out.tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    for f in (hw, blur):
        f.compute_at(out, xo)
        if lanes > 1:
            f.unroll(x, lanes)
        if rows > 1:
            f.unroll(y, rows)
    if n > 1:
        out.unroll(xi, n)
    if out_rows > 1:
        out.unroll(yi, out_rows)
    return out


def np_blur_pool(img, s, w, h):
    a = img.astype(np.uint16)
    b = sum(a[j:j + s * h, i:i + s * w] for j in range(3) for i in range(3)) // 9
    return (sum(b[j::s, i::s][:h, :w] for j in range(s) for i in range(s)) // (s * s)).astype(np.uint8)


def halide_blur_pool(inp, s):
    """The same algorithm in Halide's own API."""
    hw, blur, out = hl.Func("hw"), hl.Func("blur"), hl.Func("out")
    hw[hx, hy] = hl.u16(inp[hx, hy])
    b = hw[hx, hy]
    for j in range(3):
        for i in range(3):
            if (i, j) != (0, 0):
                b = b + hw[hx + i, hy + j]
    blur[hx, hy] = b / 9
    p = blur[s * hx, s * hy]
    for j in range(s):
        for i in range(s):
            if (i, j) != (0, 0):
                p = p + blur[s * hx + i, s * hy + j]
    out[hx, hy] = hl.u8(p / (s * s))
    return out


def blur_pool_hand_schedule(n, lanes, s, p, c):
    """By hand. hw_input and blur fire every p cycles (L = ``lanes`` pixels), the output every c (n pixels).
    hw_input's row is sW + 2 wide: Q = p ceil((sW + 2) / L) cycles a row (the widest row of the three), the output's
    row every sQ (s blur rows per output row). hw(x, y) at Q y + p floor(x / L), blur(x, y) at D_b + Q y +
    p floor(x / L), output(x, y) at D_o + sQ y + c floor(x / n). blur reads hw(x + 2, y + 2) last: D_b = 2Q +
    p max_x (floor((x + 2) / L) - floor(x / L)); output reads blur(sx + s - 1, sy + s - 1) last: D_o = D_b + (s - 1) Q
    + max_x (p floor((sx + s - 1) / L) - c floor(x / n)). The last output is written at D_o + sQ (H - 1) +
    c (ceil(W / n) - 1): latency one more."""
    q = p * -(-(s * W + 2) // lanes)
    d_b = 2 * q + p * max((x + 2) // lanes - x // lanes for x in range(s * W))
    d_o = d_b + (s - 1) * q + max(p * ((s * x + s - 1) // lanes) - c * (x // n) for x in range(W))
    return q, d_b, d_o, d_o + s * q * (H - 1) + c * (-(-W // n) - 1) + 1


def blur_pool_live(hw_time, blur_time, out_time, s):
    """hw_input's and blur's live values in a 3x3 blur then s x s pool to a W x H tile, by brute force from each
    stage's write time of a pixel (x, y)."""
    hw_t = {(x, y): hw_time(x, y) for y in range(s * H + 2) for x in range(s * W + 2)}
    blur_t = {(x, y): blur_time(x, y) for y in range(s * H) for x in range(s * W)}
    hw_last, blur_last = dict(hw_t), dict(blur_t)
    for (x, y), t in blur_t.items():
        for j in range(3):
            for i in range(3):
                hw_last[x + i, y + j] = max(hw_last[x + i, y + j], t)
    for y in range(H):
        for x in range(W):
            t = out_time(x, y)
            for j in range(s):
                for i in range(s):
                    blur_last[s * x + i, s * y + j] = max(blur_last[s * x + i, s * y + j], t)
    return live_max(hw_t, hw_last), live_max(blur_t, blur_last)


def blur_pool_live_values(n, lanes, s, p, c):
    q, d_b, d_o, _ = blur_pool_hand_schedule(n, lanes, s, p, c)
    return blur_pool_live(lambda x, y: q * y + p * (x // lanes), lambda x, y: d_b + q * y + p * (x // lanes),
                          lambda x, y: d_o + s * q * y + c * (x // n), s)


# (n, L, s, hw_input and blur's cycles a firing p, output's c): L = s n step for step; L = 2 s n: the producers every
# other step; L = n: the output every s-th; L = 3 under s n = 4: neither whole, the producers on their own grid
POOL = [(2, 4, 2, 1, 1), (4, 8, 2, 1, 1), (2, 6, 3, 1, 1), (1, 2, 2, 1, 1), (2, 8, 2, 1, 1), (2, 2, 2, 1, 2),
        (2, 3, 2, 1, 1)]


@pytest.mark.parametrize("n,lanes,s,p,c", POOL)
def test_blur_then_average_pool_is_bit_exact_against_numpy_halide_and_the_cpu_path(n, lanes, s, p, c):
    out = blur_pool(n, lanes, s)
    d = build_design(out, (W, H))
    size = (2 * W, 2 * H)
    for seed in range(2):
        img = np.random.default_rng(seed).integers(0, 256, (s * size[1] + 2, s * size[0] + 2)).astype(np.uint8)
        assert_every_path_gives(np_blur_pool(img, s, *size), out, d, img, size, lambda b: halide_blur_pool(b, s))


@pytest.mark.parametrize("n,lanes,s,p,c", POOL)
def test_blur_then_average_pool_follows_the_hand_schedule(n, lanes, s, p, c):
    d = build_design(blur_pool(n, lanes, s), (W, H))
    q, d_b, d_o, latency = blur_pool_hand_schedule(n, lanes, s, p, c)
    hw, blur, out = (d.stages[k].schedule for k in ("hw_input", "blur", "output"))
    assert (hw.lanes, hw.strides, hw.offset) == (lanes, (p, q), 0)
    assert (blur.lanes, blur.strides, blur.offset) == (lanes, (p, q), d_b)
    assert (out.lanes, out.strides, out.offset) == (n, (c, s * q), d_o)
    assert d.latency == latency


@pytest.mark.parametrize("n,lanes,s,p,c", POOL)
def test_blur_then_average_pool_holds_its_live_values_and_no_more(n, lanes, s, p, c):
    """Capacities equal the live values of the hand schedule; step for step hw_input holds two of its rows
    (2 (sW + 2)) and at most two firings more, blur s - 1 of its rows (s W wide) and at most two firings more."""
    out = blur_pool(n, lanes, s)
    d = build_design(out, (W, H))
    hw_live, blur_live = blur_pool_live_values(n, lanes, s, p, c)
    assert (d.capacities["hw_input"], d.capacities["blur"]) == (hw_live, blur_live)
    if lanes == s * n:  # step for step (on its own grid blur holds more: the output reads it faster than it fills)
        assert 2 * (s * W + 2) <= hw_live <= 2 * (s * W + 2) + 2 * lanes
        assert (s - 1) * s * W <= blur_live <= (s - 1) * s * W + 2 * lanes


@pytest.mark.parametrize("n,lanes,s,p,c", [(2, 4, 2, 1, 1), (2, 3, 2, 1, 1)])
def test_blur_then_average_pool_capacities_are_tight(n, lanes, s, p, c):
    out = blur_pool(n, lanes, s)
    d = build_design(out, (W, H))
    img = np.random.default_rng(3).integers(0, 256, (2 * s * H + 2, 2 * s * W + 2)).astype(np.uint8)
    for buf in ("hw_input", "blur"):
        with pytest.raises(LoomError, match="read after eviction"):
            simulate(out, {"input": img}, (2 * W, 2 * H), design=d, capacities={buf: d.capacities[buf] - 1})


def test_capacities_from_a_few_rows_equal_the_full_sweep():
    out = blur_pool(2, 4, 2, tile=(W, 40))
    fast, exact = build_design(out, (W, 40)), build_design(out, (W, 40), exact_capacity=True)
    assert fast.capacities == exact.capacities and fast.latency == exact.latency


@pytest.mark.parametrize("n,lanes", [(2, 4), (2, 3), (2, 2)])
def test_wide_tile_capacities_from_narrow_proxies_equal_the_full_sweep(n, lanes):
    """1100 pixels wide: the capacities are extrapolated from four narrow proxies (scheduler._width_extrapolated)
    and equal the exact sweep."""
    out = blur_pool(n, lanes, 2, tile=(1100, 6))
    fast, exact = build_design(out, (1100, 6)), build_design(out, (1100, 6), exact_capacity=True)
    assert fast.capacities == exact.capacities


# stride-3 decimation -------------------------------------------------------------------------------------------

DW, DH = 12, 6


def decimate(n, lanes):
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y]) + 1
    out[x, y] = u8(hw[3 * x, 3 * y] + hw[3 * x + 1, 3 * y])
    out.tile(x, y, xo, yo, xi, yi, DW, DH).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    if n > 1:
        out.unroll(xi, n)
    if lanes > 1:
        hw.unroll(x, lanes)
    return out


def np_decimate(img, w, h):
    a = img.astype(np.uint16) + 1
    return (a[0:3 * h:3, 0:3 * w:3] + a[0:3 * h:3, 1:3 * w:3]).astype(np.uint8)


def halide_decimate(inp):
    hw, out = hl.Func("hw"), hl.Func("out")
    hw[hx, hy] = hl.u16(inp[hx, hy]) + 1
    out[hx, hy] = hl.u8(hw[3 * hx, 3 * hy] + hw[3 * hx + 1, 3 * hy])
    return out


def decimate_hand_schedule(n, lanes, p, c):
    """hw_input's row is 3W - 1 wide (x up to 3 (W - 1) + 1): Q = p ceil((3W - 1) / L); hw(x, y) at Q y +
    p floor(x / L), output(x, y) at D_o + 3Q y + c floor(x / n), reading hw(3x + 1, 3y) last: D_o = max_x
    (p floor((3x + 1) / L) - c floor(x / n)); latency D_o + 3Q (H - 1) + c (ceil(W / n) - 1) + 1."""
    q = p * -(-(3 * DW - 1) // lanes)
    d_o = max(p * ((3 * x + 1) // lanes) - c * (x // n) for x in range(DW))
    return q, d_o, d_o + 3 * q * (DH - 1) + c * (-(-DW // n) - 1) + 1


def decimate_live_values(n, lanes, p, c):
    q, d_o, _ = decimate_hand_schedule(n, lanes, p, c)
    hw_t = {(x, y): q * y + p * (x // lanes) for y in range(3 * DH - 2) for x in range(3 * DW - 1)}
    last = dict(hw_t)
    for y in range(DH):
        for x in range(DW):
            for i in (0, 1):
                last[3 * x + i, 3 * y] = max(last[3 * x + i, 3 * y], d_o + 3 * q * y + c * (x // n))
    return live_max(hw_t, last)


# (n, L, p, c): L = 3n step for step; 12 = 2 x 3 x 2: hw_input every other step; 2 = 6 / 3: the output every third;
# 4, 5 under 6 and 2 under 9: own grid
DECIMATE = [(1, 3, 1, 1), (2, 6, 1, 1), (3, 9, 1, 1), (2, 12, 1, 1), (2, 2, 1, 3), (2, 4, 1, 1), (2, 5, 1, 1),
            (3, 2, 1, 1)]


@pytest.mark.parametrize("n,lanes,p,c", DECIMATE)
def test_stride_3_decimation_is_bit_exact_and_follows_the_hand_schedule(n, lanes, p, c):
    out = decimate(n, lanes)
    d = build_design(out, (DW, DH))
    q, d_o, latency = decimate_hand_schedule(n, lanes, p, c)
    hw, o = d.stages["hw_input"].schedule, d.stages["output"].schedule
    assert (hw.lanes, hw.strides, hw.offset) == (lanes, (p, q), 0)
    assert (o.lanes, o.strides, o.offset) == (n, (c, 3 * q), d_o)
    assert d.latency == latency
    assert d.capacities["hw_input"] == decimate_live_values(n, lanes, p, c)
    size = (2 * DW, 2 * DH)
    img = np.random.default_rng(n * 100 + lanes).integers(0, 256, (3 * size[1], 3 * size[0])).astype(np.uint8)
    assert_every_path_gives(np_decimate(img, *size), out, d, img, size, halide_decimate)


def test_a_producer_also_read_step_for_step_at_another_width_is_refused_by_name():
    """hw_input 4 wide, read through 2 x by the 2-wide output and at x by a 2-wide stage: not a down-sampling rate."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, b, out = Func("hw_input"), Func("b"), Func("output")
    hw[x, y] = u16(inp[x, y])
    b[x, y] = hw[x, y] + 1
    out[x, y] = u8(hw[2 * x, 2 * y] + b[x, y])
    out.tile(x, y, xo, yo, xi, yi, 16, 8).hw_accelerate(xi, xo)
    out.unroll(xi, 2)
    b.compute_at(out, xo).unroll(x, 2)
    hw.compute_at(out, xo).unroll(x, 4)
    with pytest.raises(LoomError, match=r"stages run at different rates \(pixels per cycle: hw_input=4, b=2, "
                       r"output=2\)") as e:
        build_design(out, (16, 8))
    assert e.value.where == "Func 'hw_input'" and e.value.construct == "unroll"


@pytest.mark.parametrize("n", [1, 2, 4])
def test_down_sampling_along_y_only_at_n_pixels_a_step(n):
    """output(x, y) = u8((hw(x, 2y) + hw(x + 1, 2y + 1)) / 2), both n wide (refused at n > 1 before). By hand:
    hw_input's row is W + 1 wide, Q = ceil((W + 1) / n) cycles; hw(x, y) at Q y + floor(x / n), output(x, y) at
    D_o + 2Q y + floor(x / n) reading hw(x + 1, 2y + 1) last: D_o = Q + max_x (floor((x + 1) / n) - floor(x / n));
    latency D_o + 2Q (H - 1) + W / n. Capacity: the live values of that schedule."""
    w, h = 16, 6
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y])
    out[x, y] = u8((hw[x, 2 * y] + hw[x + 1, 2 * y + 1]) / 2)
    out.tile(x, y, xo, yo, xi, yi, w, h).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    if n > 1:
        out.unroll(xi, n)
        hw.unroll(x, n)
    d = build_design(out, (w, h))
    q = -(-(w + 1) // n)
    d_o = q + max((v + 1) // n - v // n for v in range(w))
    assert d.stages["hw_input"].schedule.strides == (1, q)
    assert (d.stages["output"].schedule.strides, d.stages["output"].offset) == ((1, 2 * q), d_o)
    assert d.latency == d_o + 2 * q * (h - 1) + w // n
    written = {(u, v): q * v + u // n for v in range(2 * h) for u in range(w + 1)}
    last = dict(written)
    for v in range(h):
        for u in range(w):
            t = d_o + 2 * q * v + u // n
            for key in ((u, 2 * v), (u + 1, 2 * v + 1)):
                last[key] = max(last[key], t)
    assert d.capacities["hw_input"] == live_max(written, last)
    img = np.random.default_rng(n).integers(0, 256, (4 * h, 2 * w + 1)).astype(np.uint8)
    a = img.astype(np.uint16)
    want = ((a[0::2, :2 * w] + a[1::2, 1:2 * w + 1]) // 2).astype(np.uint8)
    assert_every_path_gives(want, out, d, img, (2 * w, 2 * h))
