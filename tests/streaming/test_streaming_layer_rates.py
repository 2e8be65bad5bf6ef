"""A researcher's layers whose cycles were over-sized (values were right):

- a 1x1 convolution with a 2-D weight table ``w[c, o]``: the table has as many dimensions as the output iterates
  in time, so it was streamed on the output's pixel grid, a weight every 16 cycles, and the first pixel waited 737
  cycles for the last weight; no read indexes it by a pixel loop, so it is filled whole per invocation, a word a
  cycle, as a 4-D weight table is.
- a stride-2 convolution iterating 6 cycles a point (3 input channels in time, 2 blocks of output channels): the
  common grid put the fastest stage (the input, 2 pixels per output pixel) at 6 cycles a step, so the layer ran
  at half speed (an output every 12 cycles); each stage's stride in the output's group now needs to fit only its
  own point (its reduction, its blocks).

Values bit-exact against numpy and real Halide; latencies derived by hand in each test."""

import numpy as np
import pytest

from loom.frontends.pipeline import Func, ImageParam, Int16, RDom, UInt8, Var, clamp, i16, u8
from loom.streaming import build_design, simulate
from loom.streaming.scheduler import accumulator_capacity
from loom.streaming.simulate_mapped import simulate_mapped

try:
    import halide as hl
except ImportError:  # pragma: no cover
    hl = None

RNG = np.random.default_rng(11)


def _tiled(out, o, n, tile):
    x, y = out.dims[:2]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, *tile).reorder(xi, yi, o, xo, yo).hw_accelerate(xi, xo).unroll(o, n)
    return xo


def _pointwise():
    """pw[x, y, o] = 3 + sum over 8 input channels (in time) of w[c, o] * in; 6 outputs in 2 blocks of 3."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 2, "w")
    hw, pw, out = Func("hw"), Func("pw"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, 8, name="r")
    pw[x, y, o] = i16(3)
    pw[x, y, o] += w[r.x, o] * hw[x, y, r.x]
    out[x, y, o] = u8(clamp(pw[x, y, o] >> 3, 0, 255))
    xo = _tiled(out, o, 3, (4, 3))
    hw.compute_at(out, xo).unroll(c)
    pw.compute_at(out, xo).unroll(o, 3)
    pw.update(0).unroll(o, 3)
    return out


def _strided(n, time=True):
    """A 3x3 stride-2 convolution 3 -> 4 channels, output channels n at a time, the input channels in time."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 4, "w")
    hw, cv, out = Func("hw"), Func("cv"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, 3, 0, 3, 0, 3, name="r")
    cv[x, y, o] = i16(0)
    cv[x, y, o] += w[r.x, r.y, r.z, o] * hw[2 * x + r.x, 2 * y + r.y, r.z]
    out[x, y, o] = u8(clamp(cv[x, y, o] >> 4, 0, 255))
    xo = _tiled(out, o, n, (4, 3))
    hw.compute_at(out, xo).unroll(c)
    cv.compute_at(out, xo).unroll(o, n)
    cv.update(0).unroll(r.x).unroll(r.y).unroll(o, n)
    if not time:
        cv.update(0).unroll(r.z)
    return out


def _halide_conv(ins, size, k, stride, bias=0):
    x, y, o = hl.Var("x"), hl.Var("y"), hl.Var("o")
    inp, w = hl.Buffer(ins["input"]), hl.Buffer(ins["w"])
    ci = ins["input"].shape[0]
    cv, out = hl.Func("cv"), hl.Func("out")
    cv[x, y, o] = hl.i16(bias)
    if k == 1:
        r = hl.RDom([(0, ci)])
        cv[x, y, o] += w[r.x, o] * hl.i16(inp[x, y, r.x])
    else:
        r = hl.RDom([(0, k), (0, k), (0, ci)])
        cv[x, y, o] += w[r.x, r.y, r.z, o] * hl.i16(inp[stride * x + r.x, stride * y + r.y, r.z])
    out[x, y, o] = hl.u8(hl.clamp(cv[x, y, o] >> (3 if k == 1 else 4), 0, 255))
    return np.asarray(out.realize(list(size)))


def _check(out, ins, size, tile, want):
    d = build_design(out, tile)
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    if hl is not None:
        np.testing.assert_array_equal(_halide_conv(ins, size, *(
            (1, 1) if len(ins["w"].shape) == 2 else (3, 2)), bias=3 if len(ins["w"].shape) == 2 else 0), want)
    return d


def test_a_2d_weight_table_is_filled_per_invocation_not_streamed_on_the_pixel_grid():
    """R = 8 cycles a block, 2 blocks: 16 cycles a pixel, rows of 4 pixels: 64. w[c, o] fills at c + 8 o; block
    b of pixel (0, 0) reads w(c, o) at D + 8 b + c, so D >= 8 (o - 3 floor(o / 3) ... ) at o = 5: 8 (5 - 1) = 32.
    The last point (3, 2), block 1, writes at D + 7 + 3 * 16 + 2 * 64 + 8 = 223: latency 224 (929 before). hw
    holds one pixel's 8 channels (they arrive together, the last read 15 cycles later), the accumulator a
    block (3)."""
    out = _pointwise()
    size, tile = (8, 6, 6), (4, 3, 6)
    ins = {"input": RNG.integers(0, 256, (8, 6, 8), dtype=np.uint8), "w": RNG.integers(-8, 8, (6, 8)).astype(np.int16)}
    acc = 3 + np.einsum("oc,cyx->oyx", ins["w"].astype(np.int64), ins["input"].astype(np.int64))
    want = np.clip(acc.astype(np.int16) >> 3, 0, 255).astype(np.uint8)
    d = _check(out, ins, size, tile, want)
    assert d.acc.stages["w"].fill
    assert d.latency == 224
    assert (d.capacities["w"], d.capacities["hw"]) == (48, 8)
    assert accumulator_capacity(d.accumulators["pw_acc"]) == 3


@pytest.mark.parametrize("time, latency", [(True, 192), (False, 64)])
def test_a_strided_layer_takes_its_input_at_twice_its_own_rate(time, latency):
    """In time: 3 input channels (R = 3) per block, 2 blocks: 6 cycles a point; the input (2 pixels per output
    pixel along x, 9 wide) every 3 cycles, an input row 27, an output row 54 (before: input 6, output 12, as if the
    input needed the layer's 6 cycles). The first iteration reads hw(2, 2) (streamed at 2 * 3 + 2 * 27 = 60): D =
    60, the first write at D + R - 1 = 62; the last point (3, 2), block 1, writes at 62 + 3 * 6 + 2 * 54 + 3 = 191:
    latency 192 (381 before). Channels in space: 2 cycles a point (the blocks), the input every cycle, rows of 9
    and 18: hw(2, 2) at 20, the last write 20 + 3 * 2 + 2 * 18 + 1 = 63: latency 64 (the weights, 4-D, arrive on
    the input's grid with their channels in parallel, before they are needed)."""
    out = _strided(2, time)
    size, tile = (8, 6, 4), (4, 3, 4)
    ins = {"input": RNG.integers(0, 256, (3, 13, 17), dtype=np.uint8),
           "w": RNG.integers(-4, 5, (4, 3, 3, 3)).astype(np.int16)}
    img, wv = ins["input"].astype(np.int64), ins["w"].astype(np.int64)
    acc = sum(np.einsum("oc,cyx->oyx", wv[:, :, j, i], img[:, j:j + 12:2, i:i + 16:2])
              for j in range(3) for i in range(3))
    want = np.clip(acc.astype(np.int16) >> 4, 0, 255).astype(np.uint8)
    d = _check(out, ins, size, tile, want)
    strides = {n: p.schedule.strides[:2] for n, p in d.stages.items() if n in ("hw", "cv")}
    assert strides == ({"hw": (3, 27), "cv": (6, 54)} if time else {"hw": (1, 9), "cv": (2, 18)})
    assert d.latency == latency
    if time:
        assert d.capacities["hw"] == _strided_live()


def _strided_live(w=4, h=3, ci=3, r=3, b=2):
    """Most input values held at once on the hand schedule above (a plain sweep): hw(X, Y, c) written at 3 X +
    27 Y, read by point (x, y)'s block k at 60 + 6 x + 54 y + 3 k + c when its 3x3 window at (2 x, 2 y) covers it."""
    events = []
    for yy, xx, c in np.ndindex(2 * (h - 1) + 3, 2 * (w - 1) + 3, ci):
        last = max(60 + 6 * x + 54 * y + r * k + c for x in range(w) for y in range(h) for k in range(b)
                   if 0 <= xx - 2 * x < 3 and 0 <= yy - 2 * y < 3)
        if last > 3 * xx + 27 * yy:
            events += [(3 * xx + 27 * yy, 1), (last, -1)]
    events.sort()
    return int(np.cumsum([e for _, e in events]).max())


def test_a_weight_memory_copied_from_the_host_is_filled_per_invocation_too():
    """wm[x, y] = w[x, y] computed at the tile loop (an input memory of the table), read as wm[r.x, o]: filled
    whole per invocation as the table streamed directly is (same hand latency 224; it was 929)."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 2, "w")
    hw, wm, pw, out = Func("hw"), Func("wm"), Func("pw"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    wm[x, y] = w[x, y]
    r = RDom(0, 8, name="r")
    pw[x, y, o] = i16(3)
    pw[x, y, o] += wm[r.x, o] * hw[x, y, r.x]
    out[x, y, o] = u8(clamp(pw[x, y, o] >> 3, 0, 255))
    xo = _tiled(out, o, 3, (4, 3))
    hw.compute_at(out, xo).unroll(c)
    wm.compute_at(out, xo)
    pw.compute_at(out, xo).unroll(o, 3)
    pw.update(0).unroll(o, 3)
    ins = {"input": RNG.integers(0, 256, (8, 6, 8), dtype=np.uint8), "w": RNG.integers(-8, 8, (6, 8)).astype(np.int16)}
    acc = 3 + np.einsum("oc,cyx->oyx", ins["w"].astype(np.int64), ins["input"].astype(np.int64))
    d = _check(out, ins, (8, 6, 6), (4, 3, 6), np.clip(acc.astype(np.int16) >> 3, 0, 255).astype(np.uint8))
    assert d.acc.stages["wm"].fill and d.latency == 224 and d.capacities["wm"] == 48
