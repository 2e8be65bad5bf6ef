"""Multi-rate pipelines a user brings (none shipped): down-sampling by 3 and 4, a 3x3 stride-2 max-pool (overlapping
windows), strided convolutions with odd kernels, up-sampling by 2-4 (nearest and bilinear-like), up-sample then
stencil then down-sample, a 4-level 5x5 gaussian pyramid, a laplacian band, several channels, several pixels a step.

Each is value-simulated and must equal bit for bit a numpy evaluation written from the description here and the CPU
path; its buffers must hold the live-value minimum worked out by hand in the case's comment (a value is live from its
write to its last read; the stage reading it fires on the cycle its last operand arrives). Requests that cannot be
built are refused by a LoomError naming the Func and what to write instead.
"""

import re

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, clamp, evaluate, i16, i32, maximum, u8, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

x, y, c = Var("x"), Var("y"), Var("c")


def accelerate(out, tile, buffered, rate=1):
    stream_through_accelerator(out, tile, buffered=buffered, rate=rate)
    return out


def hw_input(channels=False):
    inp = ImageParam(UInt8, 3 if channels else 2, "input")
    hw = Func("hw_input")
    if channels:
        hw[x, y, c] = u16(inp[x, y, c])
    else:
        hw[x, y] = u16(inp[x, y])
    return hw


# --- the pipelines ------------------------------------------------------------------------------------------------

def down_k(k, tile):
    """The k x k block average at (k x, k y)."""
    hw = hw_input()
    out = Func("output")
    out[x, y] = u8(sum((hw[k * x + i, k * y + j] for j in range(k) for i in range(k)), start=u16(0)) / (k * k))
    return accelerate(out, tile, [hw])


def np_down_k(k):
    return lambda a, w, h: (sum(a[j::k, i::k][:h, :w] for j in range(k) for i in range(k)) // (k * k))


def max_pool_3x3_s2(tile, rate=1):
    hw = hw_input()
    out = Func("output")
    m = hw[2 * x, 2 * y]
    for j in range(3):
        for i in range(3):
            if (i, j) != (0, 0):
                m = maximum(m, hw[2 * x + i, 2 * y + j])
    out[x, y] = u8(m)
    return accelerate(out, tile, [hw], rate)


def np_max_pool_3x3_s2(a, w, h):
    return np.max([a[j:j + 2 * h:2, i:i + 2 * w:2] for j in range(3) for i in range(3)], axis=0)


def conv_strided(k, s, tile):
    """A k x k convolution at stride s, weights (3i + 7j) % 5 - 2, in i32."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = i32(inp[x, y])
    out = Func("output")
    out[x, y] = i16(sum(hw[s * x + i, s * y + j] * ((3 * i + 7 * j) % 5 - 2) for j in range(k) for i in range(k)))
    return accelerate(out, tile, [hw])


def np_conv_strided(k, s):
    return lambda a, w, h: sum(a[j:j + s * h:s, i:i + s * w:s][:h, :w] * ((3 * i + 7 * j) % 5 - 2)
                               for j in range(k) for i in range(k))


def upsample(k, tile, bilinear, rate=1):
    hw = hw_input()
    out = Func("output")
    if bilinear:
        out[x, y] = u8((hw[x / k, y / k] + hw[(x + 1) / k, y / k] + hw[x / k, (y + 1) / k]
                        + hw[(x + 1) / k, (y + 1) / k]) / 4)
    else:
        out[x, y] = u8(hw[x / k, y / k])
    return accelerate(out, tile, [hw], rate)


def np_upsample(k, bilinear):
    def ref(a, w, h):
        xs, ys = np.arange(w), np.arange(h)[:, None]
        if not bilinear:
            return a[ys // k, xs // k]
        return (a[ys // k, xs // k] + a[ys // k, (xs + 1) // k] + a[(ys + 1) // k, xs // k]
                + a[(ys + 1) // k, (xs + 1) // k]) // 4
    return ref


def up_blur_down(tile):
    """Nearest up-sampling by 2, a 3x3 mean, then (blur(2x, 2y) + blur(2x + 1, 2y + 1)) / 2."""
    hw = hw_input()
    up, blur, out = Func("up"), Func("blur"), Func("output")
    up[x, y] = hw[x / 2, y / 2]
    blur[x, y] = sum((up[x + i, y + j] for j in range(3) for i in range(3)), start=u16(0)) / 9
    out[x, y] = u8((blur[2 * x, 2 * y] + blur[2 * x + 1, 2 * y + 1]) / 2)
    return accelerate(out, tile, [hw, up, blur])


def np_up_blur_down(a, w, h):
    up = a.repeat(2, 0).repeat(2, 1)
    blur = sum(up[j:j + 2 * h, i:i + 2 * w] for j in range(3) for i in range(3)) // 9
    return (blur[0::2, 0::2] + blur[1::2, 1::2]) // 2


B5 = [1, 4, 6, 4, 1]


def pyramid_5x5(tile, levels=4):
    """``levels`` 5x5 binomial blurs, each down-sampling by 2 (weights sum to 256)."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = i32(inp[x, y])
    src, stages = hw, [hw]
    for n in range(levels):
        f = Func(f"l{n}")
        f[x, y] = sum(src[2 * x + i, 2 * y + j] * (B5[i] * B5[j]) for j in range(5) for i in range(5)) >> 8
        stages.append(f)
        src = f
    out = Func("output")
    out[x, y] = u8(src[x, y])
    return accelerate(out, tile, stages)


def np_pyramid_5x5(levels):
    def ref(a, w, h):
        for n in range(levels):
            ow, oh = (w + 3) * 2 ** (levels - n - 1) - 3, (h + 3) * 2 ** (levels - n - 1) - 3
            a = sum(a[j:j + 2 * oh:2, i:i + 2 * ow:2] * (B5[i] * B5[j]) for j in range(5) for i in range(5)) >> 8
        return a
    return ref


def laplacian(tile, rate=1):
    """coarse = 2x2 mean of hw; the band hw - bilinear up-sampling of coarse, centred on 128."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = i16(inp[x, y])
    coarse, up, out = Func("coarse"), Func("up"), Func("output")
    coarse[x, y] = (hw[2 * x, 2 * y] + hw[2 * x + 1, 2 * y] + hw[2 * x, 2 * y + 1] + hw[2 * x + 1, 2 * y + 1]) >> 2
    up[x, y] = (coarse[x / 2, y / 2] + coarse[(x + 1) / 2, y / 2] + coarse[x / 2, (y + 1) / 2]
                + coarse[(x + 1) / 2, (y + 1) / 2]) >> 2
    out[x, y] = u8(clamp(hw[x, y] - up[x, y] + 128, 0, 255))
    return accelerate(out, tile, [hw, coarse, up], rate)


def np_laplacian(a, w, h):
    coarse = (a[0::2, 0::2] + a[0::2, 1::2] + a[1::2, 0::2] + a[1::2, 1::2]) >> 2
    up = np_upsample(2, True)(coarse, w, h)
    return np.clip(a[:h, :w] - up + 128, 0, 255)


def pool_channels(tile, rate=1):
    """Per channel c: the 2x2 mean, then (pool(x, y, c) + pool(x + 1, y, 2 - c)) / 2."""
    hw = hw_input(channels=True)
    pool, out = Func("pool"), Func("output")
    pool[x, y, c] = (hw[2 * x, 2 * y, c] + hw[2 * x + 1, 2 * y, c] + hw[2 * x, 2 * y + 1, c]
                     + hw[2 * x + 1, 2 * y + 1, c]) / 4
    out[x, y, c] = u8((pool[x, y, c] + pool[x + 1, y, 2 - c]) / 2)
    return accelerate(out, tile, [hw, pool], rate)


def np_pool_channels(a, w, h):
    pool = (a[:, 0::2, 0::2] + a[:, 0::2, 1::2] + a[:, 1::2, 0::2] + a[:, 1::2, 1::2]) // 4
    return np.stack([(pool[k, :h, :w] + pool[2 - k, :h, 1:w + 1]) // 2 for k in range(3)])


# name: (pipeline, numpy, tile, image size, input shape (rows, cols[, channels first]), {buffer: live minimum})
# Rows stream at one pixel a step unless said; W is a buffer's row width in values.
CASES = {
    # output (x, y) fires on the write of its block's last pixel (3x + 2, 3y + 2): rows 3y, 3y + 1 (W = 24) and
    # 2 pixels of row 3y + 2 are live
    "down3": (lambda: down_k(3, (8, 6)), np_down_k(3), (8, 6), (16, 12), (36, 48), {"hw_input": 2 * 24 + 2}),
    "down4": (lambda: down_k(4, (6, 5)), np_down_k(4), (6, 5), (12, 10), (40, 48), {"hw_input": 3 * 24 + 3}),
    # the 3x3 window at stride 2 over rows of W = 17: rows 2y, 2y + 1 and 2 pixels of row 2y + 2
    "max_pool_3x3_s2": (lambda: max_pool_3x3_s2((8, 4)), np_max_pool_3x3_s2, (8, 4), (16, 8), (17, 33),
                        {"hw_input": 2 * 17 + 2}),
    # 2 pixels a step (hw_input 2 wide: rows of 17 in 9 steps): output pixels 2j, 2j + 1 fire with the block
    # holding column 4j + 4; rows 2y, 2y + 1 and the 2 blocks of row 2y + 2 before it
    "max_pool_3x3_s2_2px": (lambda: max_pool_3x3_s2((8, 4), rate=2), np_max_pool_3x3_s2, (8, 4), (16, 8), (17, 33),
                            {"hw_input": 2 * 17 + 4}),
    # k x k at stride s: k - 1 rows of W = s (w - 1) + k and k - 1 pixels
    "conv_5x5_s3": (lambda: conv_strided(5, 3, (5, 3)), np_conv_strided(5, 3), (5, 3), (10, 6), (21, 33),
                    {"hw_input": 4 * 17 + 4}),
    "conv_7x7_s2": (lambda: conv_strided(7, 2, (6, 4)), np_conv_strided(7, 2), (6, 4), (12, 8), (21, 29),
                    {"hw_input": 6 * 17 + 6}),
    # input row Y (W = 12 / 3 + 1 = 5) is read by output rows 3Y - 1 .. 3Y + 2: a row, and its last value one
    # step longer
    "up3_bilinear": (lambda: upsample(3, (12, 6), True), np_upsample(3, True), (12, 6), (24, 12), (6, 10),
                     {"hw_input": 5 + 1}),
    # nearest: row Y (W = 12 / 4 = 3) is read by output rows 4Y .. 4Y + 3: one row
    "up4_nearest": (lambda: upsample(4, (12, 8), False), np_upsample(4, False), (12, 8), (24, 16), (4, 6),
                    {"hw_input": 3}),
    # hw_input: one row (W = 9, read by 2 up rows); up: the 3x3 window over rows of W = 18; blur: the even pixels
    # of row 2y (read again with row 2y + 1)
    "up_blur_down": (lambda: up_blur_down((8, 6)), np_up_blur_down, (8, 6), (16, 12), (13, 17),
                     {"hw_input": 9, "up": 2 * 18 + 2, "blur": 8}),
    # every level's 5x5 window at stride 2 over its rows (W = 2 w + 3 per level, w = 3 at the top): 4 rows + 4
    "pyramid_5x5_4_levels": (lambda: pyramid_5x5((3, 2)), np_pyramid_5x5(4), (3, 2), (6, 4), (109, 141),
                             {"hw_input": 4 * 93 + 4, "l0": 4 * 45 + 4, "l1": 4 * 21 + 4, "l2": 4 * 9 + 4}),
    # output (x, y) fires 2 rows and 2 pixels (22 cycles) after hw_input (x, y) (W = 10): an odd row 2Y + 1 waits
    # for coarse row Y + 1, an odd pixel for column x + 2. hw_input holds the 8 of each 10 values the output reads
    # over those 22 cycles and columns 8, 9 until coarse reads them: 20 (see the next test); coarse: its row Y
    # (W = 5), read by output rows 2Y - 1 .. 2Y, and one value
    "laplacian": (lambda: laplacian((8, 6)), np_laplacian, (8, 6), (16, 12), (14, 18),
                  {"hw_input": 20, "coarse": 5 + 1}),
    # per channel: the 2x2 window at stride 2 over rows of W = 14 (14 + 1), 3 channels
    "pool_3_channels": (lambda: pool_channels((6, 4)), np_pool_channels, (6, 4, 3), (12, 8, 3), (3, 16, 26),
                        {"hw_input": 3 * (14 + 1)}),
}


@pytest.mark.parametrize("name", CASES)
def test_own_multirate_pipeline_is_bit_exact_and_holds_the_live_minimum(name):
    build, reference, tile, size, shape, live = CASES[name]
    out = build()
    img = np.random.default_rng(len(name)).integers(0, 256, shape, dtype=np.uint8)
    w, h = size[:2]
    want = reference(img.astype(np.int64), w, h)
    d = build_design(out, tile)
    got = simulate(out, {"input": img}, size, design=d)
    assert len(np.unique(got)) > 1
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), got)
    assert {b: d.capacities[b] for b in live} == live


def test_laplacian_input_holds_one_value_more_than_the_earliest_firing():
    """The live minimum of hw_input over every firing order: each coarse and output pixel fires the cycle its last
    operand is written (hw_input (x, y) at 10 y + x). An even output pixel of an odd row could fire a cycle before
    an odd one (its coarse column is x / 2, not x / 2 + 1); one time grid fires both at the odd ones' delay: 20
    against 19 on this 10-wide tile (5%), one value on any width."""
    from tests.streaming.test_streaming_multirate import live_max
    w, h, width = 8, 6, 10
    written = {(px, py): width * py + px for py in range(h + 2) for px in range(width)}
    last = dict(written)

    def coarse_time(cx, cy):
        return max(written[2 * cx + i, 2 * cy + j] for i in (0, 1) for j in (0, 1))
    for cy in range(h // 2 + 1):
        for cx in range(w // 2 + 1):
            for i in (0, 1):
                for j in (0, 1):
                    last[2 * cx + i, 2 * cy + j] = max(last[2 * cx + i, 2 * cy + j], coarse_time(cx, cy))
    for py in range(h):
        for px in range(w):
            t = max(coarse_time(cx, cy) for cx in (px // 2, (px + 1) // 2) for cy in (py // 2, (py + 1) // 2))
            last[px, py] = max(last[px, py], t)
    assert live_max(written, last) == 19
    assert build_design(laplacian((8, 6)), (8, 6)).capacities["hw_input"] == 20


# --- requests that cannot be built: refused by the Func and what to write instead -------------------------------

def channels_first_pool(rate):
    """pool_channels with the channels first (hw[c, x, y]), ``rate`` pixels a step."""
    xo, yo, xi, yi = (Var(n) for n in ("xo", "yo", "xi", "yi"))
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[c, x, y] = u16(inp[c, x, y])
    out[c, x, y] = u8((hw[c, 2 * x, 2 * y] + hw[2 - c, 2 * x + 1, 2 * y + 1]) / 2)
    out.reorder(c, x, y).tile(x, y, xo, yo, xi, yi, 6, 4).hw_accelerate(xi, xo)
    out.unroll(c)
    hw.compute_at(out, xo).unroll(c)
    if rate > 1:
        out.unroll(xi, rate)
    return out, hw


def test_pixels_a_step_behind_a_channel_dimension_are_refused_by_the_call_written():
    """Channels first, unroll(xi, 2) was read as 2 rows a step and refused as "unroll(y, 2) needs y (the dimension
    after x) iterated in time" on the input stream or the output, a call nobody wrote."""
    out, _ = channels_first_pool(2)
    with pytest.raises(LoomError, match=r"Func 'output'.*unroll\(xi, 2\): 2 pixels a step along 'x' need 'x' as "
                                        r"the first dimension.*put 'c' last \(output\[x, y, c\]\)"):
        build_design(out, (3, 6, 4))
    out, hw = channels_first_pool(1)
    hw.unroll(x, 2)
    with pytest.raises(LoomError, match=r"Func 'hw_input'.*unroll\(x, 2\)"):
        build_design(out, (3, 6, 4))
    out, _ = channels_first_pool(1)  # one pixel a step builds and is right
    img = np.random.default_rng(0).integers(0, 256, (25, 17, 3), dtype=np.uint8)  # [y, x, c] is inp[c, x, y]
    a = img.astype(np.int64).transpose(2, 0, 1)  # [c, y, x]
    want = np.stack([(a[k, 0:24:2, 0:16:2] + a[2 - k, 1:24:2, 1:16:2]) // 2 for k in range(3)]).transpose(1, 2, 0)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (3, 8, 12), design=build_design(out, (3, 6, 4))),
                                  want)


def read_at(index):
    hw = hw_input()
    out = Func("output")
    out[x, y] = u8(hw[index, y] + hw[x + 1, y])
    return accelerate(out, (8, 4), [hw])


@pytest.mark.parametrize("written,same", [
    (lambda: x >> 1, lambda: x / 2),
    (lambda: x / 2 + y, lambda: (x + 2 * y) / 2),
    (lambda: y + (x + 1) / 3 + 1, lambda: (x + 3 * y + 4) / 3),
    (lambda: (x + 17) / 2 - y, lambda: (x + 17 - 2 * y) / 2)])
def test_a_quasi_affine_index_written_another_way_builds_as_its_one_division(written, same):
    """x >> 1 and a floor division plus affine terms (x / 2 + y) are one floor division ((x + 2 * y) / 2): they
    build with the schedule of the division written out and give the evaluator's values (they were refused as
    not affine)."""
    img = np.random.default_rng(1).integers(0, 256, (8, 40), dtype=np.uint8)
    got, want = build_design(read_at(written()), (8, 4)), build_design(read_at(same()), (8, 4))
    assert {n: s.schedule.strides for n, s in got.stages.items()} == \
        {n: s.schedule.strides for n, s in want.stages.items()}
    assert got.capacities == want.capacities
    out = read_at(written())
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 8), design=build_design(out, (8, 4))),
                                  evaluate(read_at(written()), {"input": img}, (16, 8)))


@pytest.mark.parametrize("index", [lambda: (x % 2) * x, lambda: x / 2 + x / 3, lambda: y - x / 2, lambda: (x / 2) * 2])
def test_a_non_affine_index_is_refused_with_the_forms_buffers_address(index):
    with pytest.raises(LoomError, match=r"Func 'output'.* is not affine.*unified buffers address affine "
                                        r"indices .* and one affine index divided by a positive constant"):
        build_design(read_at(index()), (8, 4))


def offset_reads(offset):
    """A decimation and an up-sampling whose phase is a Param."""
    hw = hw_input()
    out = Func("output")
    out[x, y] = u8((hw[2 * x + offset, 2 * y] + hw[(x + offset) / 2, y / 2 + 1]) / 2)
    return accelerate(out, (6, 4), [hw])


def np_offset_reads(a, w, h, off):
    xs, ys = np.arange(w), np.arange(h)[:, None]
    return (a[2 * ys, 2 * xs + off] + a[ys // 2 + 1, (xs + off) // 2]) // 2


def test_a_param_in_a_strided_index_is_the_configured_constant():
    """The accelerator takes a Param as its value when built, in its kernels; in an index it was refused as
    "'off' is not affine in the loop variables" (the CPU path reads it). Its value now places the reads."""
    from loom.frontends.pipeline import Int32, Param
    off = Param(Int32, "off", 3, min=0, max=3)
    out = offset_reads(off)
    img = np.random.default_rng(4).integers(0, 256, (16, 28), dtype=np.uint8)
    d = build_design(out, (6, 4))
    want = np_offset_reads(img.astype(np.int64), 12, 8, 3)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (12, 8), design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img, "off": 1}, (12, 8)),
                                  np_offset_reads(img.astype(np.int64), 12, 8, 1))
    with pytest.raises(LoomError, match="off"):  # the design is configured for 3
        simulate(out, {"input": img, "off": 1}, (12, 8), design=d)


def test_an_index_param_without_a_range_is_named_in_the_refusal():
    """It was "an index depends on data without limits; clamp the index", which names neither the Param nor its
    range."""
    from loom.frontends.pipeline import Int32, Param
    out = offset_reads(Param(Int32, "off", 3))
    with pytest.raises(LoomError, match=r"Func 'hw_input'.*indexed by Param\(s\) off, which have no range: give "
                                        r"each one .*set_range\(min, max\)"):
        build_design(out, (6, 4))


def test_an_image_smaller_than_the_tile_names_the_design_to_build():
    """The tile shrinks to an image smaller than it; a design built for the whole tile was refused without saying
    why or what to build."""
    out = down_k(3, (8, 6))
    img = np.random.default_rng(5).integers(0, 256, (9, 15), dtype=np.uint8)
    with pytest.raises(LoomError, match=r"needs tiles of \(5, 3\) \(the image is smaller than the tile \(8, 6\)\); "
                                        r"build the design for them \(build_design\(output, \(5, 3\)\)\)"):
        simulate(out, {"input": img}, (5, 3), design=build_design(out, (8, 6)))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (5, 3), design=build_design(out, (5, 3))),
                                  np_down_k(3)(img.astype(np.int64), 5, 3))
