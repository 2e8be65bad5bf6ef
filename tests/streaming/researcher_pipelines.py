"""A DNN / image-processing researcher's own pipelines (none shipped), each an algorithm, a numpy reference written
from its description and its inputs, and the accelerator schedule three ways: the one-call recipe
(``stream_through_accelerator``), the imperative primitives and the declarative ones (thesis §3.6)."""

import builtins

import numpy as np

from loom.frontends.pipeline import (Buffer, Func, ImageParam, Int32, IterLevel, RDom, UInt8, Var, clamp, f32, i16,
                                     i32, maximum, minimum, sqrt, u8, u16, u32)
from loom.frontends.pipeline.recipes import stream_through_accelerator

RNG = np.random.default_rng(2026)


class Spec:
    """A pipeline's output, the Funcs buffered on the accelerator, the reductions computed in a cycle, the output
    channels computed a block at a time ({dimension: n}) and the pixels a cycle."""

    def __init__(self, out, buffered, reductions=(), blocks=None, rate=1):
        self.out, self.buffered, self.reductions, self.blocks, self.rate = out, list(buffered), list(reductions), \
            blocks, rate


def recipe(p: Spec, tile):
    stream_through_accelerator(p.out, tile, buffered=p.buffered, reductions=p.reductions, rate=p.rate,
                               channels_per_cycle=p.blocks)
    return p.out


def imperative(p: Spec, tile):
    out, blocks = p.out, p.blocks or {}
    x, y = out.dims[:2]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, *tile)
    for d in out.dims[2:]:
        if d.name in blocks:  # the channels' blocks iterated inside the invocation
            out.reorder(xi, yi, d, xo, yo).unroll(d, blocks[d.name])
        else:
            out.unroll(d)
    out.hw_accelerate(xi, xo)
    if p.rate > 1:
        out.unroll(xi, p.rate)
    for f in p.buffered:
        f.compute_at(out, xo)
        for d in f.dims[2:]:
            f.unroll(d, blocks.get(d.name))
        if p.rate > 1:
            f.unroll(f.dims[0], p.rate)
    for f in p.reductions:
        for i, u in enumerate(f.updates):
            for rv in u.rvars:
                f.update(i).unroll(rv)
    return out


def declarative(p: Spec, tile):
    out = p.out
    x, y = out.dims[:2]
    # output_rate also unrolls every reduction the accelerator computes (one output a cycle)
    out.output_rate(p.rate).iteration_order([IterLevel("CGRA", [(x, tile[0]), (y, tile[1])]), IterLevel("host")])
    out.accelerate("CGRA", channels_per_cycle=p.blocks)
    out.create_memories(p.buffered, out.get_looplevel("CGRA", x))
    return out


SCHEDULES = {"recipe": recipe, "imperative": imperative, "declarative": declarative}


def _image(h, w, channels=None):
    return RNG.integers(0, 256, (h, w) if channels is None else (channels, h, w), dtype=np.uint8)


def _taps(img, k, h, w, step=1, dilation=1):
    """img's k x k window at (step x + dilation i, step y + dilation j), as a list over (j, i), row-major."""
    return [img[..., dilation * j:dilation * j + step * h:step, dilation * i:dilation * i + step * w:step]
            for j in range(k) for i in range(k)]


# 1 depthwise 3x3 (3 channels) >> 2, ReLU, pointwise 3 -> 4, requantized
WD = RNG.integers(-3, 4, (3, 3, 3))  # [c, j, i]
WP = RNG.integers(-3, 4, (4, 3))  # [o, c]


def dw_pw(blocks=None):
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp = ImageParam(UInt8, 3, "input")
    hw = Func("hw_input")
    hw[x, y, c] = i16(inp[x, y, c])
    wd, wp = Buffer(WD.astype(np.int16), name="wd"), Buffer(WP.astype(np.int16), name="wp")  # wd[i, j, c], wp[c, o]
    r = RDom(0, 3, 0, 3, name="r")
    dw = Func("dw")
    dw[x, y, c] = i16(0)
    dw[x, y, c] += wd[r.x, r.y, c] * hw[x + r.x, y + r.y, c]
    relu = Func("relu")
    relu[x, y, c] = maximum(dw[x, y, c] >> 2, 0)
    q = RDom(0, 3, name="q")
    pw = Func("pw")
    pw[x, y, o] = i16(0)
    pw[x, y, o] += wp[q.x, o] * relu[x, y, q.x]
    out = Func("output")
    out[x, y, o] = u8(clamp(pw[x, y, o] >> 3, 0, 255))
    return Spec(out, [hw, dw, pw], [dw, pw], blocks)


def np_dw_pw(ins, w, h):
    taps = _taps(ins["input"].astype(np.int64), 3, h, w)
    dw = builtins.sum(WD[:, j, i][:, None, None] * taps[3 * j + i] for j in range(3) for i in range(3))
    relu = np.maximum(dw.astype(np.int16) >> 2, 0)
    return np.clip(np.einsum("oc,cyx->oyx", WP, relu).astype(np.int16) >> 3, 0, 255).astype(np.uint8)


# 2 3x3 convolution at stride 2
K3 = [[1, -2, 1], [2, 5, 2], [1, -2, 1]]


def strided():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = i16(inp[x, y])
    out = Func("output")
    out[x, y] = u8(clamp(builtins.sum(K3[j][i] * hw[2 * x + i, 2 * y + j] for j in range(3) for i in range(3)) >> 3,
                         0, 255))
    return Spec(out, [hw])


def np_strided(ins, w, h):
    taps = _taps(ins["input"].astype(np.int64), 3, h, w, step=2)
    return np.clip(builtins.sum(K3[k // 3][k % 3] * t for k, t in enumerate(taps)) >> 3, 0, 255).astype(np.uint8)


# 3 3x3 convolution 2 -> 4 channels with a bias per channel from the host, ReLU, requantize >> 4
W3 = RNG.integers(-5, 6, (4, 2, 3, 3))  # [o, c, j, i]


def conv_bias(blocks=None):
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, bias = ImageParam(UInt8, 3, "input"), ImageParam(Int32, 1, "bias")
    hw = Func("hw_input")
    hw[x, y, c] = i32(inp[x, y, c])
    wts = Buffer(W3.astype(np.int32), name="w3")  # wts[i, j, c, o]
    r = RDom(0, 3, 0, 3, 0, 2, name="r")
    conv = Func("conv")
    conv[x, y, o] = bias[o]
    conv[x, y, o] += wts[r.x, r.y, r.z, o] * hw[x + r.x, y + r.y, r.z]
    out = Func("output")
    out[x, y, o] = u8(minimum(maximum(conv[x, y, o], 0) >> 4, 255))
    return Spec(out, [hw, conv], [conv], blocks)


def np_conv_bias(ins, w, h):
    taps = _taps(ins["input"].astype(np.int64), 3, h, w)
    acc = ins["bias"].astype(np.int64)[:, None, None] + builtins.sum(
        np.einsum("oc,cyx->oyx", W3[:, :, k // 3, k % 3], t) for k, t in enumerate(taps))
    return np.minimum(np.maximum(acc, 0) >> 4, 255).astype(np.uint8)


# 4 2x2 average pool (rounded)
def avgpool():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = u8((hw[2 * x, 2 * y] + hw[2 * x + 1, 2 * y] + hw[2 * x, 2 * y + 1] + hw[2 * x + 1, 2 * y + 1] + 2)
                   >> 2)
    return Spec(out, [hw])


def np_avgpool(ins, w, h):
    return ((builtins.sum(_taps(ins["input"].astype(np.int64), 2, h, w, step=2)) + 2) >> 2).astype(np.uint8)


# 5 3x3 max pool at stride 2
def maxpool():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = inp[x, y]
    m = hw[2 * x, 2 * y]
    for j in range(3):
        for i in range(3):
            if (i, j) != (0, 0):
                m = maximum(m, hw[2 * x + i, 2 * y + j])
    out = Func("output")
    out[x, y] = m
    return Spec(out, [hw])


def np_maxpool(ins, w, h):
    return np.max(_taps(ins["input"], 3, h, w, step=2), axis=0)


# 6 bilinear 2x up-sampling (pixel 2X + 1 halfway between X and X + 1, in both dimensions)
def bilinear():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = u8((hw[x / 2, y / 2] + hw[(x + 1) / 2, y / 2] + hw[x / 2, (y + 1) / 2] +
                    hw[(x + 1) / 2, (y + 1) / 2] + 2) >> 2)
    return Spec(out, [hw])


def np_bilinear(ins, w, h):
    p = ins["input"].astype(np.int64)
    X, Y = np.arange(w), np.arange(h)[:, None]
    return ((p[Y // 2, X // 2] + p[Y // 2, (X + 1) // 2] + p[(Y + 1) // 2, X // 2] + p[(Y + 1) // 2, (X + 1) // 2] +
             2) >> 2).astype(np.uint8)


# 7 Sobel gradient magnitude in f32
def sobel_mag():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = i32(inp[x, y])
    gx, gy = Func("gx"), Func("gy")
    gx[x, y] = hw[x + 2, y] + 2 * hw[x + 2, y + 1] + hw[x + 2, y + 2] - hw[x, y] - 2 * hw[x, y + 1] - hw[x, y + 2]
    gy[x, y] = hw[x, y + 2] + 2 * hw[x + 1, y + 2] + hw[x + 2, y + 2] - hw[x, y] - 2 * hw[x + 1, y] - hw[x + 2, y]
    out = Func("output")
    out[x, y] = u8(minimum(sqrt(f32(gx[x, y] * gx[x, y] + gy[x, y] * gy[x, y])), 255.0))
    return Spec(out, [hw, gx, gy])


def np_sobel_mag(ins, w, h):
    t = _taps(ins["input"].astype(np.int64), 3, h, w)
    gx = t[2] + 2 * t[5] + t[8] - t[0] - 2 * t[3] - t[6]
    gy = t[6] + 2 * t[7] + t[8] - t[0] - 2 * t[1] - t[2]
    return np.minimum(np.sqrt((gx * gx + gy * gy).astype(np.float32)), np.float32(255)).astype(np.uint8)


# 8 5x5 separable blur [1 3 8 3 1] / 16 along x, then y
W5 = [1, 3, 8, 3, 1]


def blur5():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    bx, by = Func("blur_x"), Func("blur_y")
    bx[x, y] = builtins.sum(w * hw[x + k, y] for k, w in enumerate(W5)) >> 4
    by[x, y] = builtins.sum(w * bx[x, y + k] for k, w in enumerate(W5)) >> 4
    out = Func("output")
    out[x, y] = u8(by[x, y])
    return Spec(out, [hw, bx])


def np_blur5(ins, w, h):
    p = ins["input"].astype(np.int64)
    bx = builtins.sum(wk * p[:, k:k + w] for k, wk in enumerate(W5)) >> 4
    return (builtins.sum(wk * bx[k:k + h] for k, wk in enumerate(W5)) >> 4).astype(np.uint8)


# 9 two images blended by a third, a mask smoothed over 3x3 (sum * 28 >> 8, about / 9)
def blend():
    x, y = Var("x"), Var("y")
    a, b, m = ImageParam(UInt8, 2, "a"), ImageParam(UInt8, 2, "b"), ImageParam(UInt8, 2, "mask")
    ha, hb, hm = Func("hw_a"), Func("hw_b"), Func("hw_m")
    ha[x, y], hb[x, y], hm[x, y] = u32(a[x, y]), u32(b[x, y]), u32(m[x, y])
    sm = (builtins.sum(hm[x + i, y + j] for i in range(3) for j in range(3)) * 28) >> 8
    out = Func("output")
    out[x, y] = u8((ha[x + 1, y + 1] * sm + hb[x + 1, y + 1] * (255 - sm)) / 255)
    return Spec(out, [ha, hb, hm])


def np_blend(ins, w, h):
    a, b, m = (ins[k].astype(np.int64) for k in ("a", "b", "mask"))
    sm = (builtins.sum(_taps(m, 3, h, w)) * 28) >> 8
    return ((a[1:h + 1, 1:w + 1] * sm + b[1:h + 1, 1:w + 1] * (255 - sm)) // 255).astype(np.uint8)


# 10 residual block: a 3x3 convolution >> 3 added to its input's centre, shifted and clamped
def residual():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = i16(inp[x, y])
    conv = Func("conv")
    conv[x, y] = builtins.sum(K3[j][i] * hw[x + i, y + j] for j in range(3) for i in range(3)) >> 3
    out = Func("output")
    out[x, y] = u8(clamp(conv[x, y] + hw[x + 1, y + 1] - 64, 0, 255))
    return Spec(out, [hw, conv])


def np_residual(ins, w, h):
    p = ins["input"].astype(np.int64)
    conv = builtins.sum(K3[k // 3][k % 3] * t for k, t in enumerate(_taps(p, 3, h, w))) >> 3
    return np.clip(conv + p[1:h + 1, 1:w + 1] - 64, 0, 255).astype(np.uint8)


# 11 3x3 convolution dilated by 2
def dilated():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = u8(builtins.sum(abs(K3[j][i]) * hw[x + 2 * i, y + 2 * j] for j in range(3) for i in range(3)) >> 4)
    return Spec(out, [hw])


def np_dilated(ins, w, h):
    taps = _taps(ins["input"].astype(np.int64), 3, h, w, dilation=2)
    return (builtins.sum(abs(K3[k // 3][k % 3]) * t for k, t in enumerate(taps)) >> 4).astype(np.uint8)


# 12 3x3 median: sort each row of the window, the median of the rows' min max, median median and max min
def median():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = inp[x, y]

    def sort3(a, b, c):
        lo, hi = minimum(a, b), maximum(a, b)
        return minimum(lo, c), maximum(lo, minimum(hi, c)), maximum(hi, c)

    rows = [sort3(*(hw[x + i, y + j] for i in range(3))) for j in range(3)]
    lows = maximum(maximum(rows[0][0], rows[1][0]), rows[2][0])
    highs = minimum(minimum(rows[0][2], rows[1][2]), rows[2][2])
    mid = sort3(rows[0][1], rows[1][1], rows[2][1])[1]
    out = Func("output")
    out[x, y] = sort3(lows, mid, highs)[1]
    return Spec(out, [hw])


def np_median(ins, w, h):
    return np.median(np.stack(_taps(ins["input"], 3, h, w)), axis=0).astype(np.uint8)


def _halo(k, step=1):
    """Inputs of an output (w, h) read through a k-wide window at ``step``."""
    return lambda w, h: {"input": _image(step * (h - 1) + k, step * (w - 1) + k)}


# name: (spec builder, numpy reference(inputs, w, h), inputs(w, h), tile, output size)
PIPELINES = {
    "depthwise_pointwise": (dw_pw, np_dw_pw, lambda w, h: {"input": _image(h + 2, w + 2, 3)}, (6, 4), (12, 8, 4)),
    "depthwise_pointwise_2_channels_a_cycle": (lambda: dw_pw({"o": 2}), np_dw_pw,
                                               lambda w, h: {"input": _image(h + 2, w + 2, 3)}, (6, 4), (12, 8, 4)),
    "conv_stride_2": (strided, np_strided, _halo(3, 2), (5, 3), (10, 6)),
    "conv_bias_relu_requantize": (conv_bias, np_conv_bias, lambda w, h: {
        "input": _image(h + 2, w + 2, 2), "bias": RNG.integers(-300, 300, 4).astype(np.int32)}, (5, 4), (10, 8, 4)),
    "conv_bias_3_channels_a_cycle_odd_size": (lambda: conv_bias({"o": 3}), np_conv_bias, lambda w, h: {
        "input": _image(h + 2, w + 2, 2), "bias": RNG.integers(-300, 300, 4).astype(np.int32)}, (5, 4), (11, 9, 4)),
    "average_pool_2x2": (avgpool, np_avgpool, _halo(2, 2), (4, 3), (8, 6)),
    "max_pool_3x3_stride_2": (maxpool, np_maxpool, _halo(3, 2), (4, 3), (8, 6)),
    "bilinear_upsample_2x": (bilinear, np_bilinear, lambda w, h: {"input": _image(h // 2 + 1, w // 2 + 1)}, (8, 4),
                             (16, 8)),
    "sobel_magnitude": (sobel_mag, np_sobel_mag, _halo(3), (7, 4), (14, 8)),
    "separable_blur_5x5_odd_size": (blur5, np_blur5, _halo(5), (6, 4), (13, 9)),
    "blend_two_images_by_a_mask": (blend, np_blend, lambda w, h: {
        k: _image(h + 2, w + 2) for k in ("a", "b", "mask")}, (6, 4), (12, 8)),
    "residual_conv": (residual, np_residual, _halo(3), (6, 4), (12, 8)),
    "dilated_conv": (dilated, np_dilated, _halo(5), (6, 4), (12, 8)),
    "median_3x3": (median, np_median, _halo(3), (6, 4), (12, 8)),
    "median_3x3_tiles_of_one_row": (median, np_median, _halo(3), (12, 1), (12, 5)),
    "separable_blur_tiles_of_one_row": (blur5, np_blur5, _halo(5), (7, 1), (13, 3)),
}
