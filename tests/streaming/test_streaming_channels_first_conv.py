"""A channels-first convolution (``hw[c, x, y]``, as the thesis's DNN apps lay out their inputs) scheduled by
``stream_through_accelerator``, its reduction loops iterated in time all outside the pixel loops (weight
stationary: every tap and channel sweeps the whole tile), in the order the update writes them.

A 3 x 3 stride-2 convolution over the channels of a channels-first input (``hw[c, x, y]``, as the thesis's DNN
apps lay it out), on a 7 x 5 output tile: the input arrives one pixel (4 channels) a cycle, 15 pixels a row;
the accumulator steps every 2 cycles along x and 30 along y (stride 2), so one sweep of the tile is
(7 - 1) x 2 + (5 - 1) x 30 + 1 = 133 cycles. Values against numpy and the CPU path; schedules by hand.
"""

import math

import numpy as np
import pytest

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

x, y, c, rzo, rzi = (Var(n) for n in ("x", "y", "c", "rzo", "rzi"))
W, H, C = 7, 5, 4
SWEEP = (W - 1) * 2 + (H - 1) * 30 + 1


def conv(order, w=W, h=H, channels=C):
    inp = ImageParam(UInt8, 3, "input")
    hw, acc, out = Func("hw"), Func("acc"), Func("output")
    r = RDom(0, 3, 0, 3, 0, channels, name="r")
    hw[c, x, y] = u16(inp[c, x, y])
    acc[x, y] = u16(0)
    acc[x, y] += hw[r.z, 2 * x + r.x, 2 * y + r.y] * u16(r.x + 3 * r.y + 9 * r.z + 1)
    out[x, y] = acc[x, y]
    stream_through_accelerator(out, (w, h), buffered=[hw, acc])
    u = acc.update()
    if order == "taps and channels":  # weight stationary: one (tap, channel) per sweep
        u.reorder(x, y, r.x, r.y, r.z)
    elif order == "channels, then taps":
        u.reorder(x, y, r.z, r.x, r.y)
    elif order == "channel pairs":  # two channels in space, the pairs and the taps in time
        u.split(r.z, rzo, rzi, 2).unroll(rzi).reorder(rzi, x, y, r.x, r.y, rzo)
    elif order == "mixed":  # taps innermost, channels outside the pixels
        u.reorder(r.x, r.y, x, y, r.z)
    return out, acc


def numpy_conv(img, w, h, channels):
    return sum(img[j:j + 2 * h:2, i:i + 2 * w:2, k].astype(np.uint16) * (i + 3 * j + 9 * k + 1)
               for i in range(3) for j in range(3) for k in range(channels)).astype(np.uint16)


OUTER_STRIDES = {  # cycles between iterations of each reduction loop: innermost a sweep, then its extents times that
    "taps and channels": {"r.x.t": SWEEP, "r.y.t": 3 * SWEEP, "r.z.t": 9 * SWEEP},
    "channels, then taps": {"r.z.t": SWEEP, "r.x.t": C * SWEEP, "r.y.t": 3 * C * SWEEP},
    "channel pairs": {"r.x.t": SWEEP, "r.y.t": 3 * SWEEP, "r.z.t": 9 * SWEEP},
}


@pytest.mark.parametrize("order", list(OUTER_STRIDES))
def test_each_outer_iteration_sweeps_the_tile_and_the_accumulator_keeps_its_partial_sums(order):
    out, _ = conv(order)
    d = build_design(out, (W, H))
    plan = d.stages["acc"]
    # the channels-first input arrives in its reader's order: its 4 channels in parallel, x, then y
    assert d.stages["input"].schedule.strides == d.stages["hw"].schedule.strides == (0, 1, 15)
    assert plan.node.reduction_outer and plan.schedule.strides == (2, 30)
    assert dict(zip((n for n, _ in plan.node.time_reduction), plan.red_time)) == OUTER_STRIDES[order]
    # the first sweep reads hw(2x, 2y) in the cycle it arrives (2x + 15 x 2y), so it starts at 0 and the
    # layer takes its sweeps back to back; the accumulator holds the whole tile's partial sums between them
    steps = math.prod(e for _, e in plan.node.time_reduction)
    assert d.latency == steps * SWEEP
    assert d.accumulators["acc_acc"].capacity == W * H
    img = np.random.default_rng(5).integers(0, 256, (2 * H + 1, 2 * W + 1, C)).astype(np.uint8)
    want = numpy_conv(img, W, H, C)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (W, H), design=d), want)
    np.testing.assert_array_equal(run_cpu(conv(order)[0], {"input": img}, (W, H)), want)


def test_taps_inside_and_channels_outside_the_pixels_are_bit_exact():
    out, _ = conv("mixed")
    d = build_design(out, (W, H))
    assert d.accumulators["acc_acc"].capacity == W * H
    img = np.random.default_rng(6).integers(0, 256, (2 * H + 1, 2 * W + 1, C)).astype(np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (W, H), design=d), numpy_conv(img, W, H, C))


@pytest.mark.parametrize("size, channels", [((4, 6), 3), ((9, 2), 5)])
def test_other_layer_shapes_are_bit_exact(size, channels):
    w, h = size
    out, _ = conv("taps and channels", w, h, channels)
    d = build_design(out, size)
    assert d.latency == 9 * channels * ((w - 1) * 2 + (h - 1) * (2 * (2 * w + 1)) + 1)
    img = np.random.default_rng(7).integers(0, 256, (2 * h + 1, 2 * w + 1, channels)).astype(np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), numpy_conv(img, w, h, channels))

