"""An input memory at its own rate (``hw_input.unroll(x, n)`` with the output at one pixel per step): the input
tile fills n pixels per step on its own time grid along x, its rows keep pace with the output's, so a stride-s
consumer is no longer input bound (thesis §6.4: the tile is loaded into memory tiles and read at the compute's
pace). Checked: values bit for bit against numpy, the CPU path and (max-pool) Halide; latency against hand
formulas; capacities against the live values counted straight from the hand-derived schedule (not loom's
code) and tight (one less evicts a value); the forms that stay unsupported are refused by name."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.examples.pipelines import load_app
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var
from loom.frontends.pipeline.evaluate import evaluate
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.report import design_report

from tests.streaming.streaming_apps import example, references
from tests.streaming.test_streaming_multirate import halide_max_pool, hl, live_max, np_max_pool


# a stride-s channel-tiled conv layer (dnn_conv) -------------------------------------------------------

STRIDED = [  # (k, stride, ci, co, ci_tile), output size, input pixels per step (None: dnn_conv's default)
    ((3, 2, 4, 2, 2), (5, 4), None),
    ((3, 2, 4, 2, 2), (5, 4), 3),  # still input bound: an 11-pixel row every 6 cycles, 66 > 18 * 5 / 2 cycles
    ((3, 2, 2, 1, 2), (5, 3), None),  # R = 9: R * w / s = 22.5, the input row stride rounds up
    ((3, 3, 2, 1, 1), (4, 3), 4),
    ((3, 1, 8, 2, 2), (5, 4), 1),  # stride 1: a pixel a step, its 4 channel tiles written 9 cycles apart
]


def _conv(params, size, rate):
    k, s, ci, co, ci_tile = params
    mod = example("dnn_conv")
    out, _ = mod.build("accel", tile=size, k=k, stride=s, ci=ci, co=co, ci_tile=ci_tile, input_rate=rate)
    return mod, out, build_design(out, mod.output_shape(size, co))


def conv_schedule(params, size, rate):
    """The hand schedule: R = k*k*ci/ci_tile cycles per output; the W = s(w-1)+k wide input row fills n <= R
    pixels per R cycles, one pixel every q = floor(R/n) cycles; an input row every Ry = max(q*W, ceil(R*w/s))
    cycles, an output row every s*Ry. Output (x, y) starts its reduction at D + R*x + s*Ry*y and reads input
    (s*x + i, s*y + j) at tap iteration j*k + i (channel tile 0), that pixel written at Ry*(s*y + j) +
    q*(s*x + i): the wait q*s*x + q*i + Ry*j - R*x - j*k - i is largest at x = 0 (q*s <= R as n >= s),
    i = j = k - 1, so D = (k-1) * (Ry - k + q - 1)."""
    k, s, ci, _co, ci_tile = params
    w, _h = size
    n = rate or -(-s * (s * (w - 1) + k) // w)  # dnn_conv's default: s input rows within an output row
    steps = k * k * ci // ci_tile
    q = steps // n
    ry = max(q * (s * (w - 1) + k), -(-steps * w // s))
    assert s <= n <= steps
    return q, steps, ry, (k - 1) * (ry - k + q - 1)


@pytest.mark.parametrize("params,size,rate", STRIDED)
def test_a_strided_layer_at_its_input_rate_is_bit_exact_against_numpy_and_the_cpu_path(params, size, rate):
    k, s, ci, co, _ = params
    mod, out, d = _conv(params, size, rate)
    assert d.stages["hw_input"].schedule.strides[0] == conv_schedule(params, size, rate)[0]
    shape = mod.output_shape(size, co)
    cpu, _ = mod.build("cpu", k=k, stride=s, ci=ci, co=co)
    for seed in range(2):
        ins = mod.make_inputs(size, np.random.default_rng(seed), k=k, stride=s, ci=ci)
        want = references.dnn_conv(ins["input"], *size, mod.weights(k, ci, co), stride=s)
        np.testing.assert_array_equal(simulate(out, ins, shape, design=d), want)
        np.testing.assert_array_equal(evaluate(cpu, ins, shape), want)
        assert len(np.unique(want)) > 1


@pytest.mark.parametrize("params,size,rate", STRIDED)
def test_a_strided_layer_follows_the_hand_schedule(params, size, rate):
    """Latency = D + R * w + s * Ry * (h - 1): the last output's reduction starts s*Ry*(h-1) + R*(w-1) after the
    first's and takes R cycles; occupancy = w*h*R / latency."""
    k, s, *_ = params
    w, h = size
    q, steps, ry, start = conv_schedule(params, size, rate)
    _mod, _out, d = _conv(params, size, rate)
    assert d.stages["hw_input"].schedule.strides[:2] == (q, ry) and d.stages["hw_input"].schedule.lanes == 1
    assert d.stages["conv"].schedule.strides[:2] == (steps, s * ry)
    assert d.latency == start + steps * w + s * ry * (h - 1)
    assert design_report(d).occupancy == pytest.approx(w * h * steps / d.latency)


def conv_live_values(params, size, rate) -> int:
    """hw_input's live values counted from the hand schedule: pixel (X, Y), channel c, written at
    Ry*Y + q*X + (c // ci_tile) * floor(q / (ci / ci_tile)) (a channel tile a cycle, a pixel's tiles spread over
    its q cycles), read by output (x, y) at tap (i, j) = (X - s*x, Y - s*y) of channel tile u = c // ci_tile
    at D + u*k*k + j*k + i + R*x + s*Ry*y."""
    k, s, ci, _co, ci_tile = params
    w, h = size
    q, steps, ry, start = conv_schedule(params, size, rate)
    assert ci // ci_tile <= q  # every layer here: the input memory writes ci_tile channels a cycle
    written, last = {}, {}
    for c in range(ci):
        for yy in range(s * (h - 1) + k):
            for xx in range(s * (w - 1) + k):
                written[xx, yy, c] = last[xx, yy, c] = ry * yy + q * xx + (c // ci_tile) * (q // (ci // ci_tile))
    for y in range(h):
        for x in range(w):
            for j in range(k):
                for i in range(k):
                    for c in range(ci):
                        v = (s * x + i, s * y + j, c)
                        t = start + (c // ci_tile) * k * k + j * k + i + steps * x + s * ry * y
                        last[v] = max(last[v], t)
    return live_max(written, last)


@pytest.mark.parametrize("params,size,rate", STRIDED)
def test_a_strided_layers_input_memory_holds_its_live_values_and_no_more(params, size, rate):
    k, s, ci, co, _ = params
    mod, out, d = _conv(params, size, rate)
    cap = d.capacities["hw_input"]
    assert cap == conv_live_values(params, size, rate)
    ins = mod.make_inputs(size, np.random.default_rng(5), k=k, stride=s, ci=ci)
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, ins, mod.output_shape(size, co), design=d, capacities={"hw_input": cap - 1})


def test_layer_rows_at_the_fast_input_rate_follow_the_hand_formula():
    """resnet conv3_1 (14x14 outputs, a 29-wide input row at 5 pixels per 72-cycle step: a pixel every 14
    cycles, 406 <= 504) and jitnet enc2_c (10x15, 21 wide: 294 <= 360) are compute bound: Ry = 72*w/2."""
    from loom.examples.pipelines._thesis import TABLE_6_7, thesis_design

    for name, ry in (("resnet conv3_1", 504), ("jitnet enc2_c", 360)):
        row = TABLE_6_7[name]
        (w, h), b = row["tile"], row["build"]
        d = thesis_design(row)
        assert d.stages["hw_input"].schedule.strides[:2] == (14, ry) and d.stages["hw_input"].schedule.lanes == 1
        assert d.stages["output"].schedule.strides[:2] == (72, 2 * ry) == (72, 72 * w)
        # the output's kernel (shift, clamp, narrow) adds its Amber PE latency after the conv's last iteration
        assert d.latency == 2 * (ry - 3 + 13) + 72 * w + 2 * ry * (h - 1) + d.stages["output"].latency
        assert b["stride"] == 2


def test_resnet_row_occupancy_is_within_2_percent_of_the_thesis():
    from loom.examples.pipelines._thesis import TABLE_6_7, thesis_report

    row = TABLE_6_7["resnet conv3_1"]
    r = thesis_report(row, "resnet conv3_1")
    assert abs(r.occupancy - row["occupancy"]) <= 0.02
    assert abs(r.latency - row["latency"]) <= 0.02 * row["latency"]


# a stride-2 down-sampling stage (max-pool) ------------------------------------------------------------

POOL = [((32, 32), 4), ((8, 6), 4), ((10, 6), 4)]


@pytest.mark.parametrize("size,rate", POOL)
def test_max_pool_at_four_input_pixels_per_cycle_is_bit_exact_against_halide_numpy_and_cpu(size, rate):
    app = load_app("max_pool")
    out, _ = app.build("accel", tile=size, input_rate=rate)
    d = build_design(out, size)
    cpu, _ = app.build("cpu")
    for seed in range(2):
        img = app.make_inputs(size, np.random.default_rng(seed))["input"]
        sim = simulate(out, {"input": img}, size, design=d)
        np.testing.assert_array_equal(sim, np_max_pool(img))
        np.testing.assert_array_equal(sim, run_cpu(cpu, {"input": img}, size))
        if hl is not None:
            np.testing.assert_array_equal(sim, np.asarray(halide_max_pool(hl.Buffer(img)).realize(list(size))))
        assert len(np.unique(sim)) > 1


@pytest.mark.parametrize("size,rate", POOL)
def test_max_pool_at_four_input_pixels_per_cycle_is_compute_bound(size, rate):
    """The 2w-wide input row fills 4 pixels a cycle in w/2 cycles; two of them per output row of w cycles
    (w even). Output (x, y) reads input rows 2y, 2y + 1 (written from 2y * w/2 and (2y + 1) * w/2), columns
    2x, 2x + 1 (written at cycle floor(2x / 4) <= x of their row): it fires at w/2 + w*y + x, latency
    w*h + w/2. Live values: input (X, Y) is written at w/2 * Y + floor(X/4) and read at w/2 + w*floor(Y/2) +
    floor(X/2); counting them at any cycle of the steady state gives 2w (the even row still to be read plus
    the odd row written and not yet read, or both rows of the previous pair being read plus the new even
    row), one input row, as at one pixel per cycle."""
    w, h = size
    out, _ = load_app("max_pool").build("accel", tile=size, input_rate=rate)
    d = build_design(out, size)
    assert d.stages["hw_input"].schedule.strides == (1, w // 2)
    assert d.stages["output"].schedule.strides == (1, w)
    assert d.latency == w * h + w // 2
    assert design_report(d).occupancy == pytest.approx(w * h / (w * h + w // 2))
    written = {(X, Y): w // 2 * Y + X // 4 for Y in range(2 * h) for X in range(2 * w)}
    last = {(X, Y): w // 2 + w * (Y // 2) + X // 2 for X, Y in written}
    assert live_max(written, last) == 2 * w
    assert d.capacities["hw_input"] == 2 * w
    img = load_app("max_pool").make_inputs(size, np.random.default_rng(3))["input"]
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, {"input": img}, size, design=d, capacities={"hw_input": d.capacities["hw_input"] - 1})


# refused forms ------------------------------------------------------------------------------------------

def _chain(mid_rate=1, out_rate=1, in_rate=1, second_input=None):
    """input -> hw_input -> mid (+1) -> output (2x2 stride-2 sum) on a 8x8 output tile."""
    from loom.frontends.pipeline.recipes import stream_through_accelerator

    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = inp[x, y]
    mid = Func("mid")
    mid[x, y] = hw_input[x, y] + 1
    output = Func("output")
    buffered = [hw_input, mid]
    if second_input is None:
        output[x, y] = mid[2 * x, 2 * y] + mid[2 * x + 1, 2 * y + 1]
    else:
        other = Func("hw_other")
        other[x, y] = inp[x, y]
        output[x, y] = mid[2 * x, 2 * y] + other[2 * x + 1, 2 * y]
        buffered.append(other)
    loops = stream_through_accelerator(output, (8, 8), buffered=buffered)
    for f, n in ((hw_input, in_rate), (mid, mid_rate), (output, out_rate)):
        if n > 1:
            f.unroll(loops.xi if f is output else f.dims[0], n)
    if second_input is not None:
        other.unroll(other.dims[0], second_input)
    return output


@pytest.mark.parametrize("kw,func,why", [
    (dict(mid_rate=4), "hw_input", "'mid' reads it step for step along x; unroll it by 4"),
    (dict(in_rate=4, out_rate=2), "hw_input", "computes 2 pixels per cycle"),
    (dict(in_rate=4, second_input=2), "input", "read at different rates"),
])
def test_unsupported_own_rates_are_refused_by_name(kw, func, why):
    with pytest.raises(LoomError, match=why) as e:
        build_design(_chain(**kw), (8, 8))
    assert e.value.where == f"Func '{func}'" and e.value.construct == "unroll"


def test_a_stage_iterating_a_reduction_in_time_wider_than_the_output_is_tied_to_it():
    """conv 2 pixels a step (iterating its channel tiles and taps in time, R = 18 cycles) under an output at 1:
    not an input memory at its own rate but a stage wider than its reader, firing once every 2 output steps
    (stride 18: its reduction fits), the output a pixel every 9 cycles; bit-exact against numpy."""
    mod = example("dnn_conv")
    size, co = (4, 4), 2
    # the input memory writes a pixel's 4 channels a cycle: at 2 a cycle its 2 blocks would not fit the 1 cycle
    # between its pixels once conv computes 2 pixels a step (test below)
    out, a = mod.build("accel", tile=size, k=3, stride=2, ci=4, co=co, ci_tile=2, input_channels=4)
    a["conv"].unroll(a["x"], 2)
    d = build_design(out, mod.output_shape(size, co))
    conv, output = d.stages["conv"].schedule, d.stages[out.name].schedule
    assert (conv.lanes, conv.strides[0], output.lanes, output.strides[0]) == (2, 18, 1, 9)
    ins = mod.make_inputs(size, np.random.default_rng(3), k=3, stride=2, ci=4)
    want = references.dnn_conv(ins["input"], *size, mod.weights(3, 4, co), stride=2)
    np.testing.assert_array_equal(simulate(out, ins, mod.output_shape(size, co), design=d), want)


def test_channel_blocks_that_do_not_fit_between_an_input_memorys_pixels_are_refused_by_its_call():
    mod = example("dnn_conv")
    out, a = mod.build("accel", tile=(4, 4), k=3, stride=2, ci=4, co=2, ci_tile=2)
    a["conv"].unroll(a["x"], 2)
    with pytest.raises(LoomError, match=r"Func 'hw_input'.*unroll\(c, 2\) computes its channels in 2 blocks a pixel, "
                       r"but the stage has 1 cycle per pixel"):
        build_design(out, mod.output_shape((4, 4), 2))


def test_the_own_rate_chain_is_accepted_when_only_the_input_memory_is_faster():
    d = build_design(_chain(in_rate=4), (8, 8))
    assert d.stages["hw_input"].schedule.lanes == 4 and d.stages["mid"].schedule.lanes == 1


def test_an_input_memory_at_its_own_rate_is_refused_with_compute_sharing():
    from tests.streaming.test_streaming_compute_sharing import PYRAMID_TILE, gaussian_pyramid

    out, a = gaussian_pyramid.build("accel", tile=PYRAMID_TILE, share="line")
    a["hw_input"].unroll(a["x"], 4)
    with pytest.raises(LoomError, match="compute sharing") as e:
        build_design(out, PYRAMID_TILE)
    assert e.value.where == "Func 'hw_input'" and e.value.construct == "unroll"


def test_resnet_rows_input_memory_holds_its_hand_counted_live_values():
    """The Table 6.7 resnet conv3_1 invocation (14x14 outputs, 64 channels in 8 tiles, 5 pixels per step)."""
    params, size = (3, 2, 64, 8, 8), (14, 14)
    _mod, _out, d = _conv(params, size, None)
    assert d.capacities["hw_input"] == conv_live_values(params, size, None)


def test_a_strided_pointwise_layer_fills_its_input_in_lanes():
    """k = 1, stride 2, every channel in one cycle (R = 1): n = ceil(2 * 11 / 6) = 4 pixels per cycle are 4
    lanes; an 11-pixel input row takes 3 cycles, half an output row, and output (x, y) reads pixel (2x, 2y),
    written at 3 * 2y + floor(2x / 4) <= 6y + x: no fill, latency = w*h."""
    params, size = (1, 2, 4, 3, 4), (6, 4)
    mod, out, d = _conv(params, size, None)
    assert d.stages["hw_input"].schedule.lanes == 4 and d.stages["hw_input"].schedule.strides[:2] == (1, 3)
    assert d.latency == 6 * 4
    ins = mod.make_inputs(size, np.random.default_rng(7), k=1, stride=2, ci=4)
    want = references.dnn_conv(ins["input"], *size, mod.weights(1, 4, 3), stride=2)
    np.testing.assert_array_equal(simulate(out, ins, mod.output_shape(size, 3), design=d), want)
