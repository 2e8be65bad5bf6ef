"""dnn_conv, the channel-tiled convolution layer: values against numpy, the schedule against a hand formula,
the Table 6.7 layer rows' arithmetic, and refused parameters."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline.evaluate import evaluate
from loom.streaming import build_design, simulate
from loom.streaming.report import design_report

from tests.streaming.streaming_apps import example, references

LAYERS = [  # (k, stride, ci, co, ci_tile), output size
    ((3, 1, 4, 2, 2), (6, 5)),
    ((3, 2, 4, 2, 2), (5, 4)),  # stride 2
    ((1, 1, 4, 3, 4), (6, 4)),  # pointwise, every channel in one cycle
    ((1, 1, 8, 2, 2), (5, 3)),
    ((5, 1, 2, 1, 1), (4, 4)),
]


def _build(params, size, input_rate=None):
    k, s, ci, co, ci_tile = params
    mod = example("dnn_conv")
    out, _ = mod.build("accel", tile=size, k=k, stride=s, ci=ci, co=co, ci_tile=ci_tile, input_rate=input_rate)
    return mod, out, build_design(out, mod.output_shape(size, co))


@pytest.mark.parametrize("params,size", LAYERS)
def test_small_layers_are_bit_exact_against_numpy_and_the_cpu_path(params, size):
    k, s, ci, co, _ = params
    mod, out, d = _build(params, size)
    ins = mod.make_inputs(size, np.random.default_rng(sum(params)), k=k, stride=s, ci=ci)
    want = references.dnn_conv(ins["input"], *size, mod.weights(k, ci, co), stride=s)
    shape = mod.output_shape(size, co)
    np.testing.assert_array_equal(simulate(out, ins, shape, design=d), want)
    cpu, _ = mod.build("cpu", k=k, stride=s, ci=ci, co=co)
    np.testing.assert_array_equal(evaluate(cpu, ins, shape), want)


@pytest.mark.parametrize("params,size", LAYERS)
def test_latency_and_occupancy_follow_the_hand_formula(params, size):
    """steps = k*k*ci/ci_tile cycles per output pixel. At ``input_rate=1`` the input tile (s(w-1)+k) x
    (s(h-1)+k) streams one pixel, all channels, every p = ceil(steps / s) cycles (s input pixels per output pixel
    along x, each stage's stride fitting its own point: at stride 2 the input no longer waits the layer's whole
    ``steps``), so its last pixel arrives at p * (pixels - 1); the last output reads it first at its reduction
    iteration k*k - 1 (tap (k-1, k-1), channel tile 0) and ends steps - 1 iterations after its first: latency =
    p * (pixels - 1) - (k*k - 1) + steps (stride 2: 892, 1774 before). Ideal: w*h outputs, each busy steps
    cycles. (Faster input rates: test_streaming_input_rate.py.)"""
    k, s, ci, _co, ci_tile = params
    _mod, _out, d = _build(params, size, input_rate=1)
    w, h = size
    steps = k * k * ci // ci_tile
    pixels = (s * (w - 1) + k) * (s * (h - 1) + k)
    assert d.reduction_cycles == steps
    p = -(-steps // s)
    assert d.latency == p * (pixels - 1) - (k * k - 1) + steps
    r = design_report(d)
    assert r.ideal == w * h * steps
    assert r.occupancy == pytest.approx(w * h * steps / d.latency)


def test_a_layer_row_sums_its_invocations():
    from loom.examples.pipelines._thesis import thesis_design, thesis_report

    row = dict(app="dnn_conv", tile=(4, 3), build=dict(k=3, stride=1, ci=4, co=2, ci_tile=2), invocations=6)
    one = design_report(thesis_design(row))
    r = thesis_report(row, "layer")
    assert (r.latency, r.ideal) == (6 * one.latency, 6 * one.ideal) and r.occupancy == pytest.approx(one.occupancy)
    assert one.ideal == 4 * 3 * 18


LAYER_ROWS = ["gemm", "resnet conv3_1", "unet conv3_i0", "jitnet enc2_c", "mobilenets pw_1"]


@pytest.mark.parametrize("name", LAYER_ROWS)
def test_layer_rows_have_the_thesis_ideal_cycles(name):
    """The Table 6.5 reading of each row does the thesis's MACs: its ideal cycles are the thesis's
    occupancy x latency (occupancy printed to 0.1%)."""
    from loom.examples.pipelines._thesis import TABLE_6_7, thesis_report

    row = TABLE_6_7[name]
    r = thesis_report(row, name)
    assert abs(r.ideal - row["occupancy"] * row["latency"]) <= 0.0006 * row["latency"]


@pytest.mark.parametrize("kw,param", [
    (dict(ci=6, ci_tile=4), "ci_tile"),
    (dict(k=0), "k"),
    (dict(stride=0), "stride"),
    (dict(co=-1), "co"),
    (dict(ci_tile=2.0), "ci_tile"),
    (dict(input_rate=0), "input_rate"),
])
def test_bad_parameters_are_refused_by_name(kw, param):
    with pytest.raises(LoomError, match=param) as e:
        example("dnn_conv").build("accel", tile=(4, 4), **kw)
    assert f"{param}=" in str(e.value.where)


def test_a_tile_of_output_channels_per_invocation_is_bit_exact():
    """out.split(co, coo, coi, 2) with coo a host loop and coi unrolled: each invocation computes 2 of the 4
    output channels of an 8 x 8 tile (its design is 8 x 8 x 2; conv's kernel has 2 copies), the host runs 2 x 2
    spatial tiles x 2 channel tiles (conv, its taps unrolled, is inlined in the output's kernel: 2 copies).
    Values against a numpy convolution in wrapping i16."""
    import loom.frontends.pipeline as lp
    from loom.streaming.resources import count_resources

    x, y, c, co = lp.Var("x"), lp.Var("y"), lp.Var("c"), lp.Var("co")
    inp = lp.ImageParam(lp.UInt8, 3, "input")
    hw = lp.Func("hw_input")
    hw[x, y, c] = lp.i16(inp[x, y, c])
    r = lp.RDom(0, 3, 0, 3, 0, 3, name="r")
    conv = lp.Func("conv")
    conv[x, y, co] = lp.i16(0)
    conv[x, y, co] += lp.i16(co + 1) * hw[x + r.x, y + r.y, r.z]
    out = lp.Func("output")
    out[x, y, co] = lp.u8(lp.clamp(conv[x, y, co] >> 6, 0, 255))
    xo, yo, xi, yi, coo, coi = (lp.Var(n) for n in ("xo", "yo", "xi", "yi", "coo", "coi"))
    out.tile(x, y, xo, yo, xi, yi, 8, 8).split(co, coo, coi, 2).reorder(xi, yi, coi, xo, yo, coo)
    out.unroll(coi)
    out.hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    hw.unroll(c)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    d = build_design(out, (8, 8, 2))
    assert d.stages["output"].extents == (8, 8, 2) and d.stages["hw_input"].extents == (10, 10, 3)
    assert count_resources(d).stages["output"].copies == 2
    img = np.random.default_rng(0).integers(0, 256, (3, 18, 18), np.uint8)
    a = img.astype(np.int16)
    taps = sum(a[:, j:j + 16, i:i + 16].sum(axis=0, dtype=np.int16) for j in range(3) for i in range(3))
    want = np.stack([np.clip((taps * np.int16(q + 1)).astype(np.int16) >> 6, 0, 255) for q in range(4)]).astype(np.uint8)
    got = simulate(out, {"input": img}, (16, 16, 4))
    assert len(np.unique(got)) > 10
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("input_channels,banks", [(None, 2), (16, 8)])
def test_the_input_memory_writes_a_channel_tile_a_cycle_and_banks_for_it(input_channels, banks):
    """A 3x3 layer, 16 input channels 4 a cycle: hw_input writes a pixel's 4 channel tiles 9 cycles apart, as the
    reduction reads them, so its write port is 4 values wide (2 two-port memory tiles) and it holds (k - 1) input
    rows and k - 1 pixels of all 16 channels, (2 * 16 + 2) * 16 = 544 values; written 16 a step it needs 8 tiles.
    Values bit-exact both ways."""
    from loom.streaming.memory_map import map_memories

    mod = example("dnn_conv")
    size, width = (14, 14), 16
    out, _ = mod.build("accel", tile=size, k=3, stride=1, ci=16, co=2, ci_tile=4, input_channels=input_channels)
    d = build_design(out, mod.output_shape(size, 2))
    sched = d.stages["hw_input"].schedule
    assert (sched.strides[0], sched.floors) == ((36, ((2, 4, 9),)) if input_channels is None else (36, ()))
    mapped = map_memories(d).buffers["hw_input"]
    assert (mapped.width, mapped.mem_tiles) == (input_channels or 4, banks)
    if input_channels is None:
        assert d.buffers["hw_input"].capacity == (2 * width + 2) * 16
    ins = mod.make_inputs(size, np.random.default_rng(5), k=3, ci=16)
    want = references.dnn_conv(ins["input"], *size, mod.weights(3, 16, 2))
    np.testing.assert_array_equal(simulate(out, ins, mod.output_shape(size, 2), design=d), want)


def test_input_channels_must_divide_the_channels():
    with pytest.raises(LoomError, match=r"dnn_conv.build\(input_channels=\).*input_channels=3 must be a positive "
                       "divisor of the 16"):
        example("dnn_conv").build("accel", tile=(4, 4), ci=16, ci_tile=4, input_channels=3)
