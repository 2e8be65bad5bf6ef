"""Several reduction loops iterated in time, any of them outside the pixel loops (weight stationary, partially
output stationary): the update's loop nest read as written, values simulated from the ubuf IR against numpy and
the CPU path, capacities and a latency against hand counts, and the loop orders still refused."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, Int16, RDom, Var, i16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

x, y, c = Var("x"), Var("y"), Var("c")
xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")

# (tile w x h, input channels, stride); split orders: the channel split factor too
LAYERS = [((6, 4), 3, 1), ((5, 3), 5, 2)]
SPLIT_LAYERS = [((6, 4), 6, 1, 3), ((5, 3), 6, 2, 2)]


def weight(i, j, k):
    return i * 3 - j * 5 + k * 7 - 4


def conv3x3(size, ci, stride, order, split=None):
    """output(x, y) = sum over 3 x 3 taps and ``ci`` channels of hw(s x + r.x, s y + r.y, r.z) w(r.x, r.y, r.z),
    every reduction loop in time, ordered by ``order``."""
    inp = ImageParam(Int16, 3, "input")
    hw, w, conv, out = Func("hw"), Func("w"), Func("conv"), Func("output")
    r = RDom([(0, 3), (0, 3), (0, ci)], name="r")
    hw[x, y, c] = inp[x, y, c]
    w[x, y, c] = i16(weight(x, y, c))
    conv[x, y] = i16(0)
    conv[x, y] += hw[stride * x + r.x, stride * y + r.y, r.z] * w[r.x, r.y, r.z]
    out[x, y] = conv[x, y]
    stream_through_accelerator(out, size, buffered=[hw, conv])
    u = conv.update()
    if order == "weight stationary":  # every (r.x, r.y, r.z) sweeps the tile
        u.reorder(x, y, r.x, r.y, r.z)
    elif order == "taps inner":  # a point's 9 taps in a row, the channels outside the pixels
        u.reorder(r.x, r.y, x, y, r.z)
    elif order == "split channels":  # rzi and the taps per point, rzo outside the pixels
        u.split(r.z, "rzo", "rzi", split).reorder("rzi", r.x, r.y, x, y, "rzo")
    return out


def np_conv(img, size, stride):
    """Wrapping i16 3 x 3 convolution over all channels (img: channels, rows, columns)."""
    w, h = size
    acc = np.zeros((h, w), np.int64)
    for k in range(img.shape[0]):
        for j in range(3):
            for i in range(3):
                tap = img[k, j:j + stride * (h - 1) + 1:stride, i:i + stride * (w - 1) + 1:stride].astype(np.int64)
                acc += tap * weight(i, j, k)
    return acc.astype(np.int16)


def _image(size, ci, stride, seed):
    w, h = size
    return np.random.default_rng(seed).integers(-2 ** 15, 2 ** 15, (ci, stride * (h - 1) + 3,
                                                                    stride * (w - 1) + 3)).astype(np.int16)


def _check_values(out, d, size, ci, stride):
    img = _image(size, ci, stride, ci + stride)
    want = np_conv(img, size, stride)
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)


@pytest.mark.parametrize("order", ["weight stationary", "taps inner"])
@pytest.mark.parametrize("size,ci,stride", LAYERS)
def test_outer_channel_loops_are_bit_exact_and_keep_the_tiles_partial_sums(order, size, ci, stride):
    out = conv3x3(size, ci, stride, order)
    d = build_design(out, size)
    p = d.stages["conv"]
    assert p.node.reduction_outer and p.red_extents == (3, 3, ci)
    # an iteration of a loop outside the pixels writes every pixel's partial sum and the next one reads it a
    # sweep later: all w x h sums live at once; a point's own inner iterations reuse its one slot
    assert d.accumulators["conv_acc"].capacity == size[0] * size[1]
    _check_values(out, d, size, ci, stride)


@pytest.mark.parametrize("size,ci,stride,split", SPLIT_LAYERS)
def test_a_split_channel_loop_with_both_halves_in_time_is_bit_exact(size, ci, stride, split):
    out = conv3x3(size, ci, stride, "split channels", split)
    d = build_design(out, size)
    p = d.stages["conv"]
    # r.x, r.y, rzi inside the pixels (9 x split cycles a point), rzo outside them
    assert p.red_extents == (3, 3, split, ci // split) and p.red_time[:3] == (1, 3, 9)
    # a point every 9 split cycles (at stride 2 the input every 9 split / 2: it was 9 split, a point every 2 x 9
    # split cycles, the layer at half its speed)
    assert p.schedule.strides[0] == 9 * split
    assert d.stages["hw"].schedule.strides[0] == 9 * split // stride
    assert d.accumulators["conv_acc"].capacity == size[0] * size[1]
    _check_values(out, d, size, ci, stride)


@pytest.mark.parametrize("ci", [3, 5])
def test_weight_stationary_latency_follows_the_hand_formula(ci):
    """Stride 1, a 6 x 4 tile: hw streams its 8 x 6 input tile a pixel a cycle (row stride 8) and conv is on the
    same grid (x stride 1, y stride 8), so one sweep of conv's tile is 5 + 8 x 3 + 1 = 30 cycles. Each (r.x, r.y,
    r.z) is a sweep, r.x 30 cycles apart, r.y 90, r.z 270; conv's first iteration reads hw(0, 0) as it arrives
    (cycle 0; every later read is of an input written no later than its iteration, since a sweep of 30 outruns a
    tap's 1 or 8), so the last iteration ends after 9 ci sweeps: latency 30 x 9 ci."""
    out = conv3x3((6, 4), ci, 1, "weight stationary")
    d = build_design(out, (6, 4))
    assert d.stages["conv"].red_time == (30, 90, 270)
    assert d.latency == 30 * 9 * ci


def test_taps_inner_latency_follows_the_hand_formula():
    """Stride 1, 6 x 4 tile, 3 channels, the taps inside the pixels: 9 cycles a point, so every stage steps at 9
    cycles (x stride 9, row stride 9 x 8 = 72, hw too). A sweep is 9 x 5 + 72 x 3 + 1 = 262 cycles, plus the last
    point's 8 further taps: r.z 270 cycles apart. conv at (x, y, r) = s0 + 9 x + 72 y + r.x + 3 r.y + 270 r.z reads
    hw(x + r.x, y + r.y), written at 9 (x + r.x) + 72 (y + r.y): s0 = max 8 r.x + 69 r.y = 154. The last point
    (5, 3) writes after its last iteration, at s0 + (2 x 1 + 2 x 3) + 2 x 270 + 9 x 5 + 72 x 3; latency one more."""
    out = conv3x3((6, 4), 3, 1, "taps inner")
    d = build_design(out, (6, 4))
    assert d.stages["conv"].red_time == (1, 3, 270)
    assert d.latency == 154 + 8 + 2 * 270 + 45 + 216 + 1
    # the accumulator: one write port over (x, y, taps, r.z), a read port per loop nested apart in time
    acc = d.accumulators["conv_acc"]
    assert [p.extents for p in acc.ports] == [(6, 4, 9, 3), (6, 4, 8), (6, 4, 9, 2)]


def channel_sum(ci, split, copy_split, weight_stationary=False):
    """out(x, y) = sum over 3 taps along x and ``ci`` channels of copy(c, x + r.x, y), the channels split rzo /
    rzi (both in time, rzo outside the pixels) and copy computed at rzo (split along c by ``copy_split`` too)."""
    inp = ImageParam(Int16, 3, "inp")
    copy, out = Func("copy"), Func("out")
    copy[c, x, y] = inp[c, x, y]
    r = RDom([(0, 3), (0, ci)], name="r")
    out[x, y] = i16(0)
    out[x, y] += copy[r.y, x + r.x, y] * i16(r.x + 2 * r.y + 1)
    out.compute_root().tile(x, y, xo, yo, xi, yi, 4, 3).hw_accelerate(xi, xo)
    upd = out.update().split(r.y, "rzo", "rzi", split)
    if weight_stationary:  # rzi and rzo both outside the pixels, copy computed at the inner one
        upd.reorder(x, y, r.x, "rzi", "rzo")
        copy.compute_at(out, "rzi")
    else:
        upd.reorder(r.x, "rzi", x, y, "rzo")
        copy.compute_at(out, "rzo")
    if copy_split:  # copy's loops step a channel tile (of one channel at rzi) per iteration of that loop
        copy.split(c, "co", "cin", split).reorder(*((x, y, "cin") if weight_stationary else ("cin", x, y)), "co")
    return out


@pytest.mark.parametrize("copy_split", [False, True])
def test_a_memory_computed_at_the_outer_loop_of_a_nest_with_inner_time_loops_is_bit_exact(copy_split):
    """6 channels split 3 x 2: r.x and rzi in time per point (9 cycles), rzo outside the pixels; copy is refilled
    per rzo iteration when its own loops split the channels the same way (its fill steps a channel tile per
    rzo iteration), else filled once in its loop order."""
    out = channel_sum(6, 3, copy_split)
    d = build_design(out, (4, 3))
    p = d.stages["out"]
    assert p.red_extents == (3, 3, 2) and p.red_time[:2] == (1, 3)
    assert d.accumulators["out_acc"].capacity == 12  # the 4 x 3 tile's partial sums
    rzo_time = p.red_time[2]
    sched = d.stages["copy"].schedule
    if copy_split:  # co (channels 3 co .. 3 co + 2) steps once per rzo iteration
        assert (0, 3, rzo_time) in sched.floors
    _channel_sum_check(out, d)


def test_a_reduction_loop_between_the_pure_loops_is_refused_by_name():
    """reorder(r.x, r.y, x, r.z, y): r.z's partial sums would be kept for one row only."""
    out = conv3x3((6, 4), 3, 1, None)
    conv = _func(out, "conv")
    rx, ry, rz = conv.updates[0].rvars
    conv.update().reorder(rx, ry, x, rz, y)
    with pytest.raises(LoomError, match=r"Func 'conv'.*reduction loop 'r\.z' is iterated in time between the "
                       r"update's pure loops \(outside x, inside y\).*put it inside all pure loops"):
        build_design(out, (6, 4))


def test_a_pure_loop_the_update_iterates_but_the_definition_unrolls_is_named():
    """The output channel co, unrolled on conv's pure definition only (Halide schedules each definition apart):
    a weight-stationary reorder leaves co outside the reductions in time, and the message names the fix."""
    co = Var("co")
    inp = ImageParam(Int16, 3, "input")
    hw, conv, out = Func("hw"), Func("conv"), Func("output")
    r = RDom([(0, 3), (0, 3)], name="r")
    hw[x, y, c] = inp[x, y, c]
    conv[x, y, co] = i16(0)
    conv[x, y, co] += hw[x + r.x, y + r.y, co] * i16(r.x + 1)
    out[x, y, co] = conv[x, y, co]
    out.compute_root().tile(x, y, xo, yo, xi, yi, 6, 4).hw_accelerate(xi, xo)
    out.unroll(co)
    hw.compute_at(out, xo).unroll(c)
    conv.compute_at(out, xo).unroll(co)
    conv.update().reorder(x, y, r.x, r.y)
    with pytest.raises(LoomError, match=r"Func 'conv': reduction loop 'r\.x' is iterated in time between the "
                       r"update's pure loops \(outside x, y, inside co\).*co is unrolled on conv's pure definition "
                       r"but iterated in time by its update.*conv\.update\(0\)\.unroll\(co\)"):
        build_design(out, (6, 4, 2))
    conv.update().unroll(co)
    d = build_design(out, (6, 4, 2))
    assert d.stages["conv"].node.reduction_outer
    img = np.random.default_rng(8).integers(-2 ** 15, 2 ** 15, (2, 6, 8)).astype(np.int16)  # c, y, x
    want = sum(img[:, j:j + 4, i:i + 6].astype(np.int64) * (i + 1) for i in range(3) for j in range(3))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (6, 4, 2), design=d), want.astype(np.int16))


def _channel_sum_check(out, d):
    a = np.random.default_rng(4).integers(-2 ** 15, 2 ** 15, (6, 8 + 2, 6)).astype(np.int16)  # y, x, c
    want = sum(a[:, i:i + 8, k].astype(np.int64) * (i + 2 * k + 1) for i in range(3) for k in range(6))
    want = want.astype(np.int16)
    np.testing.assert_array_equal(simulate(out, {"inp": a}, (8, 6), design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (8, 6)), want)


def test_a_memory_at_an_inner_one_of_several_outer_loops_is_refilled_per_iteration():
    """reorder(x, y, r.x, rzi, rzo): every loop outside the 4 x 3 tile, copy computed at rzi (the inner of the
    two outer ones), its channels split 3 x 2 as (x, y, cin, co). A sweep of out's tile (x stride 1, y 4; copy, a
    fill, is off the common grid) is 3 + 4 x 2 + 1 = 12 cycles, so r.x steps 12, rzi 36, rzo 108; copy steps cin
    once per rzi iteration (stride 36) and co once per rzo (floor(c / 3) x 108, minus 3 x 36 for c mod 3)."""
    out = channel_sum(6, 3, True, weight_stationary=True)
    d = build_design(out, (4, 3))
    assert d.stages["out"].red_time == (12, 36, 108)
    sched = d.stages["copy"].schedule
    assert sched.strides == (36, 1, 6) and sched.floors == ((0, 3, -108), (0, 3, 108))
    assert d.accumulators["out_acc"].capacity == 12
    unsplit = build_design(channel_sum(6, 3, False, weight_stationary=True), (4, 3))
    # filled once in its loop order (c innermost) the copy holds more of the input at once
    assert d.buffers["copy"].capacity < unsplit.buffers["copy"].capacity
    _channel_sum_check(out, d)
    _channel_sum_check(unsplit.acc.func, unsplit)


def _func(out, name):
    from loom.frontends.pipeline.graph import FuncGraph

    return next(f for f in FuncGraph(out).funcs if f.name == name)
