"""A new user's pipelines (none shipped): a pooling pyramid, an up-sample + add skip connection, a multi-scale
blend of two inputs, a separable 5-tap filter whose input memory runs at 2 pixels a cycle, a 5x5 box and a
dilated 3x3 with one reduction dimension iterated in time, a depthwise 3x3 + pointwise layer with its output
channels in blocks and its input channels in time (imperative and declarative), a layer whose output itself
accumulates in time in blocks, one at 2 pixels a step, and a histogram (refused by name).

Each is bit-exact against numpy (and real Halide for the stencils) through the IR value simulation and the memory
map; latencies and capacities are the figures derived by hand in each docstring."""

import builtins

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Func, ImageParam, Int16, IterLevel, RDom, UInt8, Var, clamp, i16, i32, maximum,
                                     u8, u16)
from loom.streaming import build_design, simulate
from loom.streaming.scheduler import accumulator_capacity
from loom.streaming.simulate_mapped import simulate_mapped

try:
    import halide as hl
except ImportError:  # pragma: no cover
    hl = None

RNG = np.random.default_rng(20261130)


def _tile(out, tw, th):
    x, y = out.dims[:2]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, tw, th)
    return xo, xi


def _run(out, ins, size, tile, want):
    d = build_design(out, tile)
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    return d


def _pool2(v):
    h, w = v.shape
    return v.reshape(h // 2, 2, w // 2, 2).max(axis=(1, 3))


def test_a_max_pooling_pyramid():
    """Two 2x2 max pools on a 16x16 input tile (a 4x4 output tile), a pixel a cycle: every stage fires with the
    input value completing its window, so the last output is the last input's cycle: latency 256. hw holds an
    input row (16) and the next row's first value: 17; p1 (8 wide, a row every 2 input rows) its row of 8 and the
    next row's first: 9."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, p1, p2 = Func("hw"), Func("p1"), Func("p2")
    hw[x, y] = inp[x, y]
    p1[x, y] = maximum(maximum(hw[2 * x, 2 * y], hw[2 * x + 1, 2 * y]), maximum(hw[2 * x, 2 * y + 1],
                                                                                  hw[2 * x + 1, 2 * y + 1]))
    p2[x, y] = maximum(maximum(p1[2 * x, 2 * y], p1[2 * x + 1, 2 * y]), maximum(p1[2 * x, 2 * y + 1],
                                                                                  p1[2 * x + 1, 2 * y + 1]))
    p2.iteration_order([IterLevel("CGRA", [(x, 4), (y, 4)]), IterLevel("host")]).accelerate("CGRA")
    p2.create_memories([hw, p1], p2.get_looplevel("CGRA", x))
    img = RNG.integers(0, 256, (32, 32), dtype=np.uint8)
    want = _pool2(_pool2(img))
    if hl is not None:
        hx, hy = hl.Var("x"), hl.Var("y")
        b, q1, q2 = hl.Buffer(img), hl.Func("q1"), hl.Func("q2")
        q1[hx, hy] = hl.max(hl.max(b[2 * hx, 2 * hy], b[2 * hx + 1, 2 * hy]), hl.max(b[2 * hx, 2 * hy + 1],
                                                                                      b[2 * hx + 1, 2 * hy + 1]))
        q2[hx, hy] = hl.max(hl.max(q1[2 * hx, 2 * hy], q1[2 * hx + 1, 2 * hy]), hl.max(q1[2 * hx, 2 * hy + 1],
                                                                                        q1[2 * hx + 1, 2 * hy + 1]))
        np.testing.assert_array_equal(np.asarray(q2.realize([8, 8])), want)
    d = _run(p2, {"input": img}, (8, 8), (4, 4), want)
    assert d.latency == 256 and (d.capacities["hw"], d.capacities["p1"], d.capacities["p2"]) == (17, 9, 0)


def test_an_upsample_add_skip_connection():
    """out = (2x2 blur + nearest up-sampling of a 2x2 average) / 2 on an 8x4 tile: the input tile 9x5. out(7, 3)
    needs blur(7, 3), i.e. hw(8, 4), the last input value (cycle 44): latency 45. hw holds a row of 9 and one
    value (the 2x2 window): 10; a row of 4 averages waits for the second output row reading it: 4."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, down, blur, out = Func("hw"), Func("down"), Func("blur"), Func("out")
    hw[x, y] = u16(inp[x, y])
    down[x, y] = (hw[2 * x, 2 * y] + hw[2 * x + 1, 2 * y] + hw[2 * x, 2 * y + 1] + hw[2 * x + 1, 2 * y + 1]) >> 2
    blur[x, y] = (hw[x, y] + hw[x + 1, y] + hw[x, y + 1] + hw[x + 1, y + 1]) >> 2
    out[x, y] = u8((blur[x, y] + down[x // 2, y // 2]) >> 1)
    xo, xi = _tile(out, 8, 4)
    out.hw_accelerate(xi, xo)
    for f in (hw, down, blur):
        f.compute_at(out, xo)
    img = RNG.integers(0, 256, (17, 17), dtype=np.uint8)
    v = img.astype(np.int64)
    dv = (v[0:16:2, 0:16:2] + v[0:16:2, 1:17:2] + v[1:17:2, 0:16:2] + v[1:17:2, 1:17:2]) >> 2
    bv = (v[:16, :16] + v[:16, 1:17] + v[1:17, :16] + v[1:17, 1:17]) >> 2
    want = ((bv + np.repeat(np.repeat(dv, 2, 0), 2, 1)) >> 1).astype(np.uint8)
    d = _run(out, {"input": img}, (16, 16), (8, 4), want)
    assert d.latency == 45 and (d.capacities["hw"], d.capacities["down"]) == (10, 4)


def test_a_multiscale_blend_of_two_inputs():
    """lo = (3 avg2x2(a) + avg2x2(b)) / 4, out = (lo up-sampled + (a + b) / 2) / 2 on an 8x4 tile: out(0, 0)
    needs lo(0, 0), i.e. a(1, 1) at cycle 9, so out runs 9 cycles behind the inputs: latency 9 + 3 * 8 + 7 + 1 =
    41; each full-resolution copy is held those 9 cycles (9 values); lo's row of 4 serves two output rows (4)."""
    x, y = Var("x"), Var("y")
    a, b = ImageParam(UInt8, 2, "a"), ImageParam(UInt8, 2, "b")
    ha, hb, la, lb, lo, out = (Func(n) for n in ("ha", "hb", "la", "lb", "lo", "out"))
    ha[x, y] = u16(a[x, y])
    hb[x, y] = u16(b[x, y])
    for low, h in ((la, ha), (lb, hb)):
        low[x, y] = (h[2 * x, 2 * y] + h[2 * x + 1, 2 * y] + h[2 * x, 2 * y + 1] + h[2 * x + 1, 2 * y + 1]) >> 2
    lo[x, y] = (la[x, y] * 3 + lb[x, y]) >> 2
    out[x, y] = u8((lo[x // 2, y // 2] + ((ha[x, y] + hb[x, y]) >> 1)) >> 1)
    out.iteration_order([IterLevel("CGRA", [(x, 8), (y, 4)]), IterLevel("host")]).accelerate("CGRA")
    out.create_memories([ha, hb, la, lb, lo], out.get_looplevel("CGRA", x))
    A, B = (RNG.integers(0, 256, (16, 16), dtype=np.uint8) for _ in range(2))
    av, bv = A.astype(np.int64), B.astype(np.int64)

    def avg(v):
        return (v[0::2, 0::2] + v[0::2, 1::2] + v[1::2, 0::2] + v[1::2, 1::2]) >> 2

    lov = (avg(av) * 3 + avg(bv)) >> 2
    want = ((np.repeat(np.repeat(lov, 2, 0), 2, 1) + ((av + bv) >> 1)) >> 1).astype(np.uint8)
    d = _run(out, {"a": A, "b": B}, (16, 16), (8, 4), want)
    assert d.latency == 41
    assert (d.capacities["ha"], d.capacities["hb"], d.capacities["lo"]) == (9, 9, 4)


def test_a_separable_filter_whose_input_memory_runs_at_two_pixels_a_cycle():
    """1 1 2 1 1 along x (bx), then along y (by) on an 8x6 tile; hw fills 2 pixels a cycle (its 12-wide rows in 6
    cycles), so a row takes bx's 8 cycles. bx(0, 0) waits for hw(4, 0) (cycle 2), by(0, 0) for bx(0, 4) (2 + 4 *
    8 = 34); the last, by(7, 5), at 34 + 7 + 5 * 8 = 81: latency 82. bx holds the 4 rows of 8 the 5-tap column
    reaches back: 32."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, bx, by = Func("hw"), Func("bx"), Func("by")
    hw[x, y] = u16(inp[x, y])
    bx[x, y] = hw[x, y] + hw[x + 1, y] + 2 * hw[x + 2, y] + hw[x + 3, y] + hw[x + 4, y]
    by[x, y] = u8((bx[x, y] + bx[x, y + 1] + 2 * bx[x, y + 2] + bx[x, y + 3] + bx[x, y + 4]) >> 5)
    xo, xi = _tile(by, 8, 6)
    by.hw_accelerate(xi, xo)
    hw.compute_at(by, xo).unroll(x, 2)
    bx.compute_at(by, xo)
    img = RNG.integers(0, 256, (16, 20), dtype=np.uint8)
    v = img.astype(np.int64)
    bxv = v[:, 0:16] + v[:, 1:17] + 2 * v[:, 2:18] + v[:, 3:19] + v[:, 4:20]
    want = ((bxv[0:12] + bxv[1:13] + 2 * bxv[2:14] + bxv[3:15] + bxv[4:16]) >> 5).astype(np.uint8)
    d = _run(by, {"input": img}, (16, 12), (8, 6), want)
    assert d.latency == 82 and d.capacities["bx"] == 32


@pytest.mark.parametrize("dilation", [1, 2])
def test_a_window_with_its_rows_iterated_in_time(dilation):
    """s = sum of a k x k window (k = 5 dense, 3 at dilation 2: both span 5 rows and columns) weighted
    (r.x + 2 r.y - 3), r.x in space, r.y in time: k cycles a pixel on a 6x4 tile (input 10x8, rows of 10 k).
    Iteration r.y reads input row y + d r.y up to column x + 4: pixel (0, 0)'s last iteration needs hw(4, 4),
    streamed at k (4 + 40): D = 44 k - (k - 1), its write at D + k - 1 = 44 k; the last, (5, 3), 44 k + 5 k + 30 k:
    latency 79 k + 1 (396, 238). hw holds 4 rows of 10 and 4 values (the window's 5 x 5 span): 44; the
    accumulator one partial sum."""
    k = 5 if dilation == 1 else 3
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, s, out = Func("hw"), Func("s"), Func("out")
    hw[x, y] = i16(inp[x, y])
    r = RDom(0, k, 0, k, name="r")
    s[x, y] = i16(0)
    s[x, y] += i16(r.x + 2 * r.y - 3) * hw[x + dilation * r.x, y + dilation * r.y]
    out[x, y] = u8(clamp(s[x, y] >> 2, 0, 255))
    xo, xi = _tile(out, 6, 4)
    out.hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    s.compute_at(out, xo)
    s.update(0).unroll(r.x)
    img = RNG.integers(0, 256, (12, 16), dtype=np.uint8)
    v = img.astype(np.int64)
    sv = builtins.sum((i + 2 * j - 3) * v[dilation * j:dilation * j + 8, dilation * i:dilation * i + 12]
                      for j in range(k) for i in range(k))
    want = np.clip(sv.astype(np.int16) >> 2, 0, 255).astype(np.uint8)
    if hl is not None:
        hx, hy = hl.Var("x"), hl.Var("y")
        hr, f, g = hl.RDom([(0, k), (0, k)]), hl.Func("f"), hl.Func("g")
        f[hx, hy] = hl.i16(0)
        f[hx, hy] += hl.i16(hr.x + 2 * hr.y - 3) * hl.i16(hl.Buffer(img)[hx + dilation * hr.x, hy + dilation * hr.y])
        g[hx, hy] = hl.u8(hl.clamp(f[hx, hy] >> 2, 0, 255))
        np.testing.assert_array_equal(np.asarray(g.realize([12, 8])), want)
    d = _run(out, {"input": img}, (12, 8), (6, 4), want)
    assert d.latency == 79 * k + 1 and d.capacities["hw"] == 44
    assert accumulator_capacity(d.accumulators["s_acc"]) == 1


def _dw_pw(n, declarative):
    """3x3 depthwise over 4 channels (in space), ReLU, pointwise 4 -> 6 (o in blocks of n, the 4 channels in
    time); wd, wp tables from the host."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, wd, wp = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 3, "wd"), ImageParam(Int16, 2, "wp")
    hw, dw, relu, pw, out = Func("hw"), Func("dw"), Func("relu"), Func("pw"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, 3, 0, 3, name="r")
    dw[x, y, c] = i16(0)
    dw[x, y, c] += wd[r.x, r.y, c] * hw[x + r.x, y + r.y, c]
    relu[x, y, c] = maximum(dw[x, y, c] >> 2, 0)
    q = RDom(0, 4, name="q")
    pw[x, y, o] = i16(0)
    pw[x, y, o] += wp[q.x, o] * relu[x, y, q.x]
    out[x, y, o] = u8(clamp(pw[x, y, o] >> 3, 0, 255))
    if declarative:
        out.iteration_order([IterLevel("CGRA", [(x, 5), (y, 4)]), IterLevel("host")]).accelerate(
            "CGRA", channels_per_cycle={o: n})
        out.create_memories([hw, dw, relu, pw], out.get_looplevel("CGRA", x))
        dw.update(0).unroll(r.x).unroll(r.y)
        return out
    xo, xi = _tile(out, 5, 4)
    out.reorder(xi, Var("yi"), o, xo, Var("yo")).hw_accelerate(xi, xo).unroll(o, n)
    hw.compute_at(out, xo).unroll(c)
    dw.compute_at(out, xo).unroll(c)
    dw.update(0).unroll(r.x).unroll(r.y).unroll(c)
    relu.compute_at(out, xo).unroll(c)
    pw.compute_at(out, xo).unroll(o, n)
    pw.update(0).unroll(o, n)
    return out


@pytest.mark.parametrize("n, declarative", [(2, False), (2, True), (6, True)])
def test_depthwise_then_pointwise_in_blocks_over_channels_in_time(n, declarative):
    """4 cycles a block (the pointwise reduction), ceil(6 / n) blocks: P = 12 (n = 2) or 4 (n = 6) cycles a
    pixel, input rows of 7 P. dw(0, 0) waits for hw(2, 2) at 2 P + 14 P = 16 P: D; the last point (4, 3), last
    block, writes at 16 P + 3 + 4 P + 21 P + (P - 4): latency 42 P (504, 168). The depthwise stage computes its 4
    channels in space, which the pointwise stage reads one a cycle: relu holds them until the last block reads
    channel 3 (4; 3 when one block reads each channel once, 1, 2, 3 cycles after the write); hw the 3x3 window's
    2 rows and 2 pixels of 4 channels: 64; the accumulator n sums. The declarative schedule gives the same."""
    out = _dw_pw(n, declarative)
    ins = {"input": RNG.integers(0, 256, (4, 10, 12), dtype=np.uint8),
           "wd": RNG.integers(-4, 5, (4, 3, 3)).astype(np.int16), "wp": RNG.integers(-4, 5, (6, 4)).astype(np.int16)}
    img = ins["input"].astype(np.int64)
    dwv = builtins.sum(ins["wd"][:, j, i][:, None, None].astype(np.int64) * img[:, j:j + 8, i:i + 10]
                       for j in range(3) for i in range(3))
    reluv = np.maximum(dwv.astype(np.int16) >> 2, 0).astype(np.int64)
    want = np.clip(np.einsum("oc,cyx->oyx", ins["wp"].astype(np.int64), reluv).astype(np.int16) >> 3, 0,
                   255).astype(np.uint8)
    d = _run(out, ins, (10, 8, 6), (5, 4, 6), want)
    p = 4 * -(-6 // n)
    assert d.latency == 42 * p
    assert (d.capacities["hw"], d.capacities["relu"]) == (64, 4 if n < 6 else 3)
    assert d.acc.stages["pw"].blocks == {2: n} and d.acc.stages["dw"].blocks == {}
    assert accumulator_capacity(d.accumulators["pw_acc"]) == n


@pytest.mark.parametrize("lanes", [1, 2])
def test_an_output_accumulating_in_time_in_blocks(lanes):
    """out[x, y, o] += w[c, o] * in[x, y, c] (i16): the output itself iterates the 4 input channels in time, 2
    blocks of 2 channels: 8 cycles a step, lanes pixels a step. The 2-D table w[c, o] fills per invocation, at
    c + 4 o (lanes 1; at lanes 2 its 4 words of a row a cycle: o); block 1 of pixel (0, 0) reads w(c, 3) at D + 4 +
    c, so D = 8 (lanes 1) or D = 1 (lanes 2: w(c, 3) at 3 <= D + 4 + c, the input at 1 when its stream starts);
    the first write at D + 3, the last step (x step 3 / lanes, row 1) + 4 more cycles: latency 72 (lanes 1) and 33
    (lanes 2). The accumulator holds one block of each pixel of the step: 2 lanes."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 2, "w")
    hw, out = Func("hw"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, 4, name="r")
    out[x, y, o] = i16(0)
    out[x, y, o] += w[r.x, o] * hw[x, y, r.x]
    xo, xi = _tile(out, 4, 2)
    out.reorder(xi, Var("yi"), o, xo, Var("yo")).hw_accelerate(xi, xo).unroll(o, 2)
    out.update(0).unroll(o, 2)
    hw.compute_at(out, xo).unroll(c)
    if lanes > 1:
        out.unroll(xi, lanes)
        out.update(0).unroll(x, lanes)
        hw.unroll(x, lanes)
    ins = {"input": RNG.integers(0, 256, (4, 4, 8), dtype=np.uint8), "w": RNG.integers(-8, 8, (4, 4)).astype(np.int16)}
    want = np.einsum("oc,cyx->oyx", ins["w"].astype(np.int64), ins["input"].astype(np.int64)).astype(np.int16)
    d = _run(out, ins, (8, 4, 4), (4, 2, 4), want)
    assert d.latency == (72 if lanes == 1 else 33)
    assert accumulator_capacity(d.accumulators["out_acc"]) == 2 * lanes


def test_a_histogram_is_refused_naming_its_update():
    x, y, b = Var("x"), Var("y"), Var("b")
    inp = ImageParam(UInt8, 2, "input")
    hw, h = Func("hw"), Func("h")
    hw[x, y] = inp[x, y]
    r = RDom(0, 8, 0, 8, name="r")
    h[b, y] = u16(0)
    h[i32(hw[r.x, r.y]) >> 5, y] += u16(1)
    xo, xi = _tile(h, 8, 1)
    h.hw_accelerate(xi, xo)
    hw.compute_at(h, xo)
    with pytest.raises(LoomError, match=r"test_streaming_own_layers.py:\d+ Func 'h': unsupported pattern "
                                        r"\(histogram\): update 0 writes 'h' at a data-dependent index"):
        build_design(h, (8, 1))
