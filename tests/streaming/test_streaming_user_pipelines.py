"""Pipelines a new user brings (none shipped), each with an accelerator schedule, on the streaming accelerator.

Each builds its design, value-simulates it from its ubuf IR printed and parsed back, and must equal bit for bit a
numpy evaluation written from the description here (not from loom's code) and the CPU path (run_cpu); the
resource report runs, and one structural fact worked out by hand holds (a buffer's capacity: a k x k window over
rows of width W holds (k-1) W + k - 1 values besides the one written; a stage read only at the point being
computed holds none). Images are not square and not powers of two; every run covers at least 2 x 2 tiles.
"""

import numpy as np
import pytest

import loom.frontends.pipeline as lp
from loom.dialects.ubuf import parse_ir
from loom.frontends.pipeline import (Func, ImageParam, IterLevel, Param, RDom, UInt8, Var, absolute, clamp, i16,
                                     i32, maximum, minimum, select, u8, u16)
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.report import design_report
from loom.streaming.to_ubuf import design_to_ir


def V(*names):
    return [Var(n) for n in names]


def tiled(out, tw, th):
    x, y = out.dims[:2]
    xo, yo, xi, yi = V("xo", "yo", "xi", "yi")
    out.tile(x, y, xo, yo, xi, yi, tw, th).hw_accelerate(xi, xo)
    return xo, xi

# 1 sobel |gx|+|gy| > T
def sobel(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input"); hw[x, y] = i16(inp[x, y])
    gx = Func("gx"); gx[x, y] = (hw[x+2, y] + 2*hw[x+2, y+1] + hw[x+2, y+2]) - (hw[x, y] + 2*hw[x, y+1] + hw[x, y+2])
    gy = Func("gy"); gy[x, y] = (hw[x, y+2] + 2*hw[x+1, y+2] + hw[x+2, y+2]) - (hw[x, y] + 2*hw[x+1, y] + hw[x+2, y])
    out = Func("output"); out[x, y] = u8(select(absolute(gx[x, y]) + absolute(gy[x, y]) > 200, 255, 0))
    xo, xi = tiled(out, *tile)
    for f in (hw, gx, gy):
        f.compute_at(out, xo)
    return out

def np_sobel(img, w, h):
    p = img.astype(np.int32); S = lambda dx, dy: p[dy:dy+h, dx:dx+w]
    gx = S(2,0)+2*S(2,1)+S(2,2)-S(0,0)-2*S(0,1)-S(0,2)
    gy = S(0,2)+2*S(1,2)+S(2,2)-S(0,0)-2*S(1,0)-S(2,0)
    return np.where(np.abs(gx)+np.abs(gy) > 200, 255, 0).astype(np.uint8)

# 2 5x5 separable binomial blur, 2 px/cycle
W5 = [1, 4, 6, 4, 1]
def blur5(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input"); hw[x, y] = u16(inp[x, y])
    bx = Func("blur_x"); bx[x, y] = sum(w*hw[x+k, y] for k, w in enumerate(W5))
    by = Func("blur_y"); by[x, y] = sum(w*bx[x, y+k] for k, w in enumerate(W5))
    out = Func("output"); out[x, y] = u8((by[x, y] + 128) >> 8)
    stream_through_accelerator(out, tile, buffered=[hw, bx, by], rate=2)
    return out

def np_blur5(img, w, h):
    p = img.astype(np.int64)
    bx = sum(wk*p[:, k:k+w] for k, wk in enumerate(W5))
    by = sum(wk*bx[k:k+h] for k, wk in enumerate(W5))
    return ((by + 128) >> 8).astype(np.uint8)

# 3 2x2 max pool then 3x3 conv
K3 = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
def pool_conv(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input"); hw[x, y] = u16(inp[x, y])
    pool = Func("pool"); pool[x, y] = maximum(maximum(hw[2*x, 2*y], hw[2*x+1, 2*y]), maximum(hw[2*x, 2*y+1], hw[2*x+1, 2*y+1]))
    conv = Func("conv"); conv[x, y] = sum(K3[j][i]*pool[x+i, y+j] for i in range(3) for j in range(3))
    out = Func("output"); out[x, y] = u8(conv[x, y] >> 4)
    stream_through_accelerator(out, tile, buffered=[hw, pool, conv])
    return out

def np_pool_conv(img, w, h):
    p = img.astype(np.int64)
    pool = np.maximum(np.maximum(p[0::2, 0::2], p[0::2, 1::2]), np.maximum(p[1::2, 0::2], p[1::2, 1::2]))
    conv = sum(K3[j][i]*pool[j:j+h, i:i+w] for i in range(3) for j in range(3))
    return (conv >> 4).astype(np.uint8)

# 4 down then up residual
def down_up(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input"); hw[x, y] = i16(inp[x, y])
    down = Func("down"); down[x, y] = (hw[2*x, 2*y] + hw[2*x+1, 2*y] + hw[2*x, 2*y+1] + hw[2*x+1, 2*y+1]) >> 2
    out = Func("output"); out[x, y] = u8(clamp(hw[x, y] - down[x/2, y/2] + 128, 0, 255))
    stream_through_accelerator(out, tile, buffered=[hw, down])
    return out

def np_down_up(img, w, h):
    p = img.astype(np.int64)[:h, :w]
    d = (p[0::2, 0::2] + p[0::2, 1::2] + p[1::2, 0::2] + p[1::2, 1::2]) >> 2
    up = d.repeat(2, 0).repeat(2, 1)[:h, :w]
    return np.clip(p - up + 128, 0, 255).astype(np.uint8)

# 5 chain with a stage read by two consumers at different offsets
def fanout(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input"); hw[x, y] = u16(inp[x, y])
    a = Func("a"); a[x, y] = hw[x, y] + hw[x+1, y]
    b = Func("b"); b[x, y] = a[x, y+1] + a[x+1, y+1]
    out = Func("output"); out[x, y] = u8((b[x, y] + a[x+2, y+2]*2) >> 3)
    stream_through_accelerator(out, tile, buffered=[hw, a, b])
    return out

def np_fanout(img, w, h):
    p = img.astype(np.int64)
    a = p[:, :-1] + p[:, 1:]
    b = a[1:h+1, 0:w] + a[1:h+1, 1:w+1]
    return ((b + 2*a[2:h+2, 2:w+2]) >> 3).astype(np.uint8)

# 6 two-layer conv with channels (RDom over channels, unrolled)
W1 = np.array([[[[1, -1], [2, 0]], [[0, 1], [1, 1]], [[-2, 1], [0, 3]]],
               [[[2, 2], [-1, 0]], [[1, 0], [0, -1]], [[1, 1], [1, 1]]]])  # k, c, j, i
W2 = np.array([[1, 2], [3, -1]])  # k: 2x1 taps along x? -> [k][i]
def conv2(tile):
    x, y, c, k = V("x", "y", "c", "k")
    inp = ImageParam(UInt8, 3, "input")
    hw = Func("hw_input"); hw[x, y, c] = i32(inp[x, y, c])
    w1 = Func("w1"); w1[x, y, c, k] = i32(0)
    for kk in range(2):
        for cc in range(3):
            for j in range(2):
                for i in range(2):
                    w1[i, j, cc, kk] = i32(int(W1[kk, cc, j, i]))
    r = RDom(0, 2, 0, 2, 0, 3, name="r")
    c1 = Func("conv1"); c1[x, y, k] = i32(0)
    c1[x, y, k] += w1[r.x, r.y, r.z, k] * hw[x + r.x, y + r.y, r.z]
    relu = Func("relu"); relu[x, y, k] = maximum(c1[x, y, k], 0)
    out = Func("output"); out[x, y] = u8(minimum((relu[x, y, 0]*1 + relu[x+1, y, 0]*2 + relu[x, y, 1]*3 + relu[x+1, y, 1]) >> 2, 255))
    stream_through_accelerator(out, tile, buffered=[hw, c1, relu], reductions=[c1])
    return out

def np_conv2(img, w, h):  # img (3, H, W)
    p = img.astype(np.int64)
    c1 = np.zeros((2, h, w+1), np.int64)
    for k in range(2):
        for c in range(3):
            for j in range(2):
                for i in range(2):
                    c1[k] += W1[k, c, j, i]*p[c, j:j+h, i:i+w+1]
    r = np.maximum(c1, 0)
    v = (r[0, :, :w] + 2*r[0, :, 1:] + 3*r[1, :, :w] + r[1, :, 1:]) >> 2
    return np.minimum(v, 255).astype(np.uint8)

# 7 colour conversion (3 channels) through a 16-entry ROM
LUT = [int(255 * (i / 15) ** 0.5) for i in range(16)]
def colour(tile):
    x, y, c, i = V("x", "y", "c", "i")
    inp = ImageParam(UInt8, 3, "input")
    hw = Func("hw_input"); hw[x, y, c] = u16(inp[x, y, c])
    gray = Func("gray"); gray[x, y] = (77*hw[x, y, 0] + 150*hw[x, y, 1] + 29*hw[x, y, 2]) >> 8
    lut = Func("lut"); lut[i] = u16(0)
    for n, v in enumerate(LUT):
        lut[n] = u16(v)
    out = Func("output"); out[x, y, c] = u8((lut[(hw[x, y, c]*3 + gray[x, y]) >> 6] + hw[x, y, 2 - c]) >> 1)
    stream_through_accelerator(out, tile, buffered=[hw, gray], roms=[lut])
    return out

def np_colour(img, w, h):
    p = img.astype(np.int64)
    g = (77*p[0] + 150*p[1] + 29*p[2]) >> 8
    lut = np.array(LUT)
    return np.stack([(lut[(p[c]*3 + g) >> 6] + p[2 - c]) >> 1 for c in range(3)]).astype(np.uint8)

# 8 Param gain and a clamp boundary on the x index
def param_clamp(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    gain = Param(lp.UInt16, "gain", 3)
    hw = Func("hw_input"); hw[x, y] = u16(inp[x, y])
    s = Func("smooth"); s[x, y] = hw[x, y+1] + hw[x+1, y+1] + hw[x+2, y+1] + hw[x+1, y] + hw[x+1, y+2]
    out = Func("output"); out[x, y] = u8(select(s[x, y]*gain > 2000, 255, clamp(s[x, y]*gain >> 3, 0, 200)))
    stream_through_accelerator(out, tile, buffered=[hw, s])
    return out

def np_param_clamp(img, w, h, gain=3):
    p = img.astype(np.int64)
    s = p[1:h+1, 0:w] + p[1:h+1, 1:w+1] + p[1:h+1, 2:w+2] + p[0:h, 1:w+1] + p[2:h+2, 1:w+1]
    return np.where(s*gain > 2000, 255, np.clip((s*gain) >> 3, 0, 200)).astype(np.uint8)

# 9 declarative
def declarative(tile):
    x, y = V("x", "y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input"); hw[x, y] = i32(inp[x, y])
    gx = Func("grad_x"); gx[x, y] = hw[x+2, y+1] - hw[x, y+1]
    gy = Func("grad_y"); gy[x, y] = hw[x+1, y+2] - hw[x+1, y]
    out = Func("output"); out[x, y] = u8(minimum((gx[x, y]*gx[x, y] + gy[x, y]*gy[x, y]) >> 6, 255))
    cgra = IterLevel("CGRA", [(x, tile[0]), (y, tile[1])])
    out.output_rate(2).iteration_order([cgra, IterLevel("host")]).accelerate("CGRA")
    out.create_memories([hw, gx, gy], out.get_looplevel("CGRA", x))
    return out

def np_declarative(img, w, h):
    p = img.astype(np.int64)
    gx = p[1:h+1, 2:w+2] - p[1:h+1, 0:w]
    gy = p[2:h+2, 1:w+1] - p[0:h, 1:w+1]
    return np.minimum((gx*gx + gy*gy) >> 6, 255).astype(np.uint8)


# name: (build, numpy, tile, size, input shape from (w, h), (buffer, capacity by hand))
CASES = {
    # 3x3 window over the input tile row of 13 + 2: 2 * 15 + 2
    "sobel": (sobel, np_sobel, (13, 7), (26, 14), lambda w, h: (h + 2, w + 2), ("hw_input", 2 * 15 + 2)),
    # blur_y's 5 rows of blur_x (tile width 14): 4 whole rows besides the one written
    "blur5_2px": (blur5, np_blur5, (14, 9), (28, 18), lambda w, h: (h + 4, w + 4), ("blur_x", 4 * 14)),
    # conv's 3x3 window over pool rows of 9 + 2
    "pool_conv": (pool_conv, np_pool_conv, (9, 6), (18, 12), lambda w, h: (2 * h + 4, 2 * w + 4),
                  ("pool", 2 * 11 + 2)),
    # each down row (tile 10 -> 5 wide) is read by two output rows: one row held
    "down_up": (down_up, np_down_up, (10, 6), (20, 12), lambda w, h: (h + 1, w + 1), ("down", 5)),
    # a reads hw_input at x and x + 1 of one row: one value held
    "fanout": (fanout, np_fanout, (11, 7), (22, 14), lambda w, h: (h + 3, w + 3), ("hw_input", 1)),
    # conv1's 2x2 window over input rows of 9 + 1 + 1, for each of 3 channels
    "conv2_channels": (conv2, np_conv2, (9, 5), (18, 10), lambda w, h: (3, h + 1, w + 2), ("hw_input", 3 * 12)),
    # per pixel: nothing held
    "colour_rom": (colour, np_colour, (12, 5), (24, 10, 3), lambda w, h, c: (3, h, w), ("gray", 0)),
    # smooth is read only at the point computed
    "param_select": (param_clamp, np_param_clamp, (10, 6), (20, 12), lambda w, h: (h + 2, w + 2), ("smooth", 0)),
    # grad_y is read only at the point computed
    "declarative_2px": (declarative, np_declarative, (12, 7), (24, 14), lambda w, h: (h + 2, w + 2),
                        ("grad_y", 0)),
}


@pytest.mark.parametrize("name", CASES)
def test_user_pipeline_bit_exact_with_numpy_and_cpu(name):
    build, ref, tile, size, shape, (buf, cap) = CASES[name]
    out = build(tile)
    img = np.random.default_rng(len(name)).integers(0, 256, shape(*size), dtype=np.uint8)
    want = ref(img, *size[:2])
    d = build_design(out, tile + size[2:])
    text = str(design_to_ir(d))
    ir = parse_ir(text)
    assert str(ir) == text
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d, ir=ir), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)
    assert d.capacities[buf] == cap
    assert design_report(d).occupancy > 0
