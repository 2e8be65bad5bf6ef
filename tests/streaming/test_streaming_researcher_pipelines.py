"""A researcher's own DNN and image-processing pipelines (tests/streaming/researcher_pipelines.py), each scheduled on
the streaming accelerator three ways (the one-call recipe, the imperative and the declarative schedule): every
output bit-exact against numpy, the three schedules one design, capacities and latencies against figures worked out
by hand, the CPU path and Halide on the same inputs; hostile inputs and schedules refused by a LoomError naming the
Func."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, IterLevel, UInt8, Var, evaluate, u8, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

from tests.streaming.researcher_pipelines import PIPELINES, SCHEDULES
from tests.streaming.test_streaming_multirate import hl, hx, hy

# Live values by hand at a pixel a cycle (a value is held from its write to its last read; in the cycle the newest
# arrives, one read for the last time is not held beside it). A k x k window over input rows W wide: (k - 1) W +
# k - 1. A stage read only at the point being computed: 0 (a wire).
CAPACITIES = {
    # 3 channels x (2 rows of 8 + 2); dw and pw read where computed
    "depthwise_pointwise": {"hw_input": 3 * 18, "dw": 0, "pw": 0},
    # pw's 2 blocks read dw's 3 channels on consecutive cycles: one pixel's 3 values held a cycle
    "depthwise_pointwise_2_channels_a_cycle": {"hw_input": 3 * 18, "dw": 3},
    # the window at stride 2 over input rows of 2 * 4 + 3 = 11: 2 rows + 2
    "conv_stride_2": {"hw_input": 2 * 11 + 2},
    # 2 channels x (2 rows of 7 + 2); the bias held whole
    "conv_bias_relu_requantize": {"hw_input": 2 * 16, "bias": 4, "conv": 0},
    # 2 cycles a pixel (4 channels, 3 a cycle): conv's second block reads the window a cycle after the next pixel
    # arrives, one pixel more
    "conv_bias_3_channels_a_cycle_odd_size": {"hw_input": 2 * 17},
    "average_pool_2x2": {"hw_input": 8 + 1},  # a row of 8 + 1
    "max_pool_3x3_stride_2": {"hw_input": 2 * 9 + 2},
    "sobel_magnitude": {"hw_input": 2 * 9 + 2, "gx": 0, "gy": 0},
    # blur_x holds the 4 rows of 6 besides the one written; hw_input the 4 values of a row blur_x reads with it
    "separable_blur_5x5_odd_size": {"hw_input": 4, "blur_x": 4 * 6},
    # the mask's window over rows of 8; a and b are read at one point each, so they stream in when read (every
    # stream started at cycle 0, and hw_a and hw_b held 14 values each)
    "blend_two_images_by_a_mask": {"hw_m": 2 * 8 + 2, "hw_a": 0, "hw_b": 0, "a": 0, "b": 0},
    "residual_conv": {"hw_input": 2 * 8 + 2, "conv": 0},
    "dilated_conv": {"hw_input": 4 * 10 + 4},  # a 5 x 5 span over rows of 10
    "median_3x3": {"hw_input": 2 * 8 + 2},
    "median_3x3_tiles_of_one_row": {"hw_input": 2 * 14 + 2},  # a one-row tile still reads 3 rows of 14
    "separable_blur_tiles_of_one_row": {"hw_input": 4, "blur_x": 4 * 7},
}

# Latency by hand: the first output waits for its window's last value (rows of the input tile streamed a pixel a
# cycle), then the tile's other outputs follow a step apart.
LATENCIES = {
    "conv_stride_2": 2 * 11 + 2 + 2 * 4 + 2 * 22 + 1,  # an output every 2 cycles, a row every 2 input rows
    "separable_blur_5x5_odd_size": 4 + 4 * 10 + 5 + 3 * 10 + 1,
    "median_3x3": 2 * 8 + 2 + 5 + 3 * 8 + 1,
    "dilated_conv": 4 * 10 + 4 + 5 + 3 * 10 + 1,
    "depthwise_pointwise_2_channels_a_cycle": 2 * (2 * 8 + 2 + 5 + 3 * 8 + 1),  # 2 cycles a pixel
}


def _run(name, schedule):
    build, ref, make, tile, size = PIPELINES[name]
    out = SCHEDULES[schedule](build(), tile)
    ins = make(*size[:2])
    return out, ins, size, ref(ins, *size[:2])


@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_is_bit_exact_under_each_schedule_and_they_build_one_design(name):
    designs = []
    for schedule in SCHEDULES:
        out, ins, size, want = _run(name, schedule)
        d = build_design(out, tuple(PIPELINES[name][3]) + tuple(size[2:]))
        np.testing.assert_array_equal(simulate(out, ins, size, design=d), want, err_msg=schedule)
        designs.append((d.latency, d.capacities, {n: s.schedule for n, s in d.stages.items()}))
    assert designs[1:] == designs[:1] * 2
    for buf, cap in CAPACITIES.get(name, {}).items():
        assert d.capacities[buf] == cap, buf
    if name in LATENCIES:
        assert d.latency == LATENCIES[name]
    if "tiles_of_one_row" not in name:  # (the same algorithms as two pipelines above: one C compile fewer each)
        np.testing.assert_array_equal(run_cpu(out, ins, size), want)


def _halide(name, ins, size):
    """The same algorithms in Halide (its Python bindings), for the pipelines without weights tables."""
    bufs = {k: hl.Buffer(v) for k, v in ins.items()}
    f = hl.Func(name)
    x, y = hx, hy
    if name == "conv_stride_2":
        from tests.streaming.researcher_pipelines import K3
        p = bufs["input"]
        s = sum(K3[j][i] * hl.i16(p[2 * x + i, 2 * y + j]) for j in range(3) for i in range(3))
        f[x, y] = hl.u8(hl.clamp(s >> 3, 0, 255))
    elif name == "max_pool_3x3_stride_2":
        p = bufs["input"]
        m = p[2 * x, 2 * y]
        for j in range(3):
            for i in range(3):
                m = hl.max(m, p[2 * x + i, 2 * y + j])
        f[x, y] = m
    elif name == "bilinear_upsample_2x":
        p = bufs["input"]
        u = lambda a, b: hl.u16(p[a, b])  # noqa: E731
        f[x, y] = hl.u8((u(x / 2, y / 2) + u((x + 1) / 2, y / 2) + u(x / 2, (y + 1) / 2) +
                         u((x + 1) / 2, (y + 1) / 2) + 2) >> 2)
    elif name == "sobel_magnitude":
        p = bufs["input"]
        v = lambda i, j: hl.i32(p[x + i, y + j])  # noqa: E731
        gx = v(2, 0) + 2 * v(2, 1) + v(2, 2) - v(0, 0) - 2 * v(0, 1) - v(0, 2)
        gy = v(0, 2) + 2 * v(1, 2) + v(2, 2) - v(0, 0) - 2 * v(1, 0) - v(2, 0)
        f[x, y] = hl.u8(hl.min(hl.sqrt(hl.f32(gx * gx + gy * gy)), 255.0))
    elif name == "blend_two_images_by_a_mask":
        a, b, m = (lambda k: lambda i, j: hl.u32(bufs[k][x + i, y + j]))("a"), \
            (lambda k: lambda i, j: hl.u32(bufs[k][x + i, y + j]))("b"), \
            (lambda k: lambda i, j: hl.u32(bufs[k][x + i, y + j]))("mask")
        sm = (sum(m(i, j) for i in range(3) for j in range(3)) * 28) >> 8
        f[x, y] = hl.u8((a(1, 1) * sm + b(1, 1) * (255 - sm)) / 255)
    return np.asarray(f.realize(list(size)))


@pytest.mark.skipif(hl is None, reason="halide not importable")
@pytest.mark.parametrize("name", ["conv_stride_2", "bilinear_upsample_2x", "sobel_magnitude",
                                  "blend_two_images_by_a_mask"])
def test_pipeline_equals_halide(name):
    out, ins, size, want = _run(name, "declarative")
    np.testing.assert_array_equal(_halide(name, ins, size), want)
    np.testing.assert_array_equal(simulate(out, ins, size), want)


# --- hostile inputs and schedules ----------------------------------------------------------------------------------

def _blur(schedule="recipe"):
    return _run("separable_blur_5x5_odd_size", schedule)


@pytest.mark.parametrize("call, message", [
    (lambda out, ins: simulate(out, ins, (12.0, 8)), r"Func 'output': size \(12.0, 8\): dimension 0 is 12.0, expected "
                                                     r"an int"),
    (lambda out, ins: evaluate(out, ins, (12, 8.5)), r"Func 'output': size \(12, 8.5\): dimension 1 is 8.5"),
    (lambda out, ins: run_cpu(out, ins, (12.0, 8)), r"Func 'output': size \(12.0, 8\): dimension 0"),
    (lambda out, ins: build_design(out, (6.0, 4)), r"Func 'output': size \(6.0, 4\): dimension 0 is 6.0"),
    (lambda out, ins: build_design(out, (0, 4)), r"Func 'output': size \(0, 4\): an invocation's extents must be "
                                                 r"positive"),
    (lambda out, ins: build_design(out, (6, -4)), r"Func 'output': size \(6, -4\): an invocation's extents"),
    (lambda out, ins: simulate(out, {"input": ins["input"].astype(np.uint16)}, (13, 9)),
     r"ImageParam 'input': expected dtype uint8 \(u8\), got uint16"),
    (lambda out, ins: simulate(out, {"input": ins["input"][None]}, (13, 9)),
     r"ImageParam 'input': expected a 2-d array, got shape \(1, 13, 17\)"),
    (lambda out, ins: simulate(out, {"input": ins["input"][:-1]}, (13, 9)),
     r"ImageParam 'input': the pipeline reads dimension 1 over \[0, 12\] but the input has extent 12"),
])
def test_bad_sizes_and_inputs_are_named(call, message):
    """A float size reached numpy as a TypeError (simulate, evaluate) or was truncated (run_cpu); a tile of 0 or
    below failed inside bounds inference ("bounds inference inconsistency" naming blur_x)."""
    out, ins, _, _ = _blur()
    with pytest.raises(LoomError, match=message):
        call(out, ins)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_an_empty_output_is_empty_on_the_accelerator_as_on_the_cpu(schedule):
    """Size (0, 9) is an empty output (Halide, evaluate, run_cpu); simulate failed in bounds inference."""
    out, ins, _, _ = _blur(schedule)
    got = simulate(out, ins, (0, 9))
    assert got.shape == (9, 0) and got.dtype == np.uint8
    assert evaluate(out, ins, (0, 9)).shape == (9, 0)


def _plain():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y])
    out[x, y] = u8((hw[x, y] + hw[x + 1, y + 1]) >> 1)
    return inp, hw, out


def test_the_recipe_names_a_tile_that_is_not_two_positive_ints():
    """A one-value tile was a TypeError from tile() ("missing 1 required positional argument: 'fy'")."""
    for tile in [(6,), 6, (6, 4, 2), (6, True)]:
        _, hw, out = _plain()
        with pytest.raises(LoomError, match=r"test_streaming_researcher_pipelines.py:\d+ Func 'output': the "
                                            r"stream_through_accelerator recipe takes the tile as \(width, height\)"):
            stream_through_accelerator(out, tile, buffered=[hw])


def test_create_memories_names_what_is_not_a_func():
    """An ImageParam or a name in the list was an AttributeError ("'str' object has no attribute 'compute_at'")."""
    inp, hw, out = _plain()
    out.iteration_order([IterLevel("CGRA", [(Var("x"), 6), (Var("y"), 4)]), IterLevel("host")]).accelerate("CGRA")
    with pytest.raises(LoomError, match=r"Func 'output': create_memories: expects the Funcs to buffer, got "
                                        r"ImageParam\(input\), an input, which the host streams in"):
        out.create_memories([hw, inp])
    with pytest.raises(LoomError, match=r"create_memories: expects the Funcs to buffer, got 'hw_input', a str"):
        out.create_memories(["hw_input"])


def test_accelerate_twice_is_refused():
    """A second accelerate() re-ran hw_accelerate and split the channels and the rate again, silently."""
    _, _, out = _plain()
    out.iteration_order([IterLevel("CGRA", [(Var("x"), 6), (Var("y"), 4)]), IterLevel("host")]).accelerate("CGRA")
    with pytest.raises(LoomError, match=r"Func 'output': accelerate: already called \(hw_accelerate\(x_CGRA, "
                                        r"x_host\)\)"):
        out.accelerate("CGRA")


def test_a_second_input_through_its_own_stage_arrives_when_read():
    """b2 = hw_b(x) + hw_b(x + 1), read by the output at one point beside a 3x3 window of the other input: b, hw_b and
    b2 arrive together when the output reads b2 (b from cycle 17), so hw_b holds the one value b2 reads with the
    next and b2 none; with the streams at cycle 0, b2 held the 18-cycle wait (13 values)."""
    x, y = Var("x"), Var("y")
    a, b = ImageParam(UInt8, 2, "a"), ImageParam(UInt8, 2, "b")
    ha, hb, b2, out = Func("hw_a"), Func("hw_b"), Func("b2"), Func("output")
    ha[x, y], hb[x, y] = u16(a[x, y]), u16(b[x, y])
    b2[x, y] = hb[x, y] + hb[x + 1, y]
    out[x, y] = u8((sum(ha[x + i, y + j] for i in range(3) for j in range(3)) + b2[x + 1, y + 1]) >> 4)
    stream_through_accelerator(out, (6, 4), buffered=[ha, hb, b2])
    d = build_design(out, (6, 4))
    assert d.capacities == {"a": 0, "b": 0, "hw_a": 2 * 8 + 2, "hw_b": 1, "b2": 0, "output": 0}
    assert d.latency == 2 * 8 + 2 + 5 + 3 * 8 + 1 and d.stages["b"].schedule.offset == 17
    rng = np.random.default_rng(3)
    A, B = (rng.integers(0, 256, (10, 15), dtype=np.uint8) for _ in range(2))
    pa, pb = A.astype(np.int64), B.astype(np.int64)
    want = ((sum(pa[j:j + 8, i:i + 12] for i in range(3) for j in range(3)) + pb[1:9, 1:13] + pb[1:9, 2:14]) >> 4)
    np.testing.assert_array_equal(simulate(out, {"a": A, "b": B}, (12, 8), design=d), want.astype(np.uint8))
