"""Host inputs with fewer dimensions than the output steps through (a bias per output channel, a gain per column,
an offset per row, a scalar): each is loaded whole per invocation into a memory (a fill), its readers waiting for
what they read. They were refused as a "dimension change" naming the ImageParam, with advice to unroll it. Values
bit-exact against numpy; each input's buffer holds what one invocation reads of it."""

import numpy as np
import pytest

from loom.frontends.pipeline import (Func, ImageParam, Int16, IterLevel, RDom, UInt8, UInt16, Var, clamp, i16, u8,
                                     u16)
from loom.streaming import build_design, simulate

TILE = (6, 4)


def _image_pipeline(kind):
    """(output, inputs, numpy reference over 12 x 8, the small input's name, its values per invocation)."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y] = u16(inp[x, y])
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (10, 14), dtype=np.uint8)
    a = img.astype(np.int64)
    if kind == "column gain":
        g = ImageParam(UInt8, 1, "g")
        out[x, y] = u8((hw[x, y] * u16(g[x]) + hw[x + 1, y + 1]) >> 8)
        gain = rng.integers(0, 256, 14, dtype=np.uint8)
        ins = {"input": img, "g": gain}
        want = ((a[:8, :12] * gain[:12].astype(np.int64) + a[1:9, 1:13]) & 0xFFFF) >> 8
        held = TILE[0]
    elif kind == "row offset":
        g = ImageParam(UInt8, 1, "g")
        out[x, y] = u8(hw[x, y] + u16(g[y + 1]))
        offs = rng.integers(0, 40, 10, dtype=np.uint8)
        ins = {"input": img, "g": offs}
        want = a[:8, :12] + offs[1:9, None].astype(np.int64)
        held = TILE[1]
    else:  # a scalar
        g = ImageParam(UInt16, 0, "g")
        out[x, y] = u8((hw[x, y] + hw[x + 1, y] + g[()]) >> 2)
        ins = {"input": img, "g": np.array(300, np.uint16)}
        want = (a[:8, :12] + a[:8, 1:13] + 300) >> 2
        held = 1
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.compute_root().tile(x, y, xo, yo, xi, yi, *TILE).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    return out, ins, (want & 0xFF).astype(np.uint8), held


@pytest.mark.parametrize("kind", ["column gain", "row offset", "scalar"])
def test_a_small_host_input_is_loaded_per_invocation_and_bit_exact(kind):
    out, ins, want, held = _image_pipeline(kind)
    d = build_design(out, TILE)
    assert d.buffers["g"].capacity == held
    np.testing.assert_array_equal(simulate(out, ins, (12, 8), design=d), want)
    assert len(np.unique(want)) > 1


def test_a_layer_reading_its_bias_and_weights_as_host_inputs_is_bit_exact():
    """A dilated 3x3 layer, 16 -> 4 channels, its bias (per output channel) and weights given as ImageParams, the
    input memory writing 4 channels a cycle: bias and weights are held whole (4 and 3 x 3 x 16 x 4 values)."""
    ci, co, k, dil = 16, 4, 3, 2
    rng = np.random.default_rng(1)
    weights = rng.integers(-4, 5, (co, ci, k, k)).astype(np.int16)  # (o, c, ky, kx): w(kx, ky, c, o)
    bias = rng.integers(-20, 20, co).astype(np.int16)
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, w, b = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 4, "w"), ImageParam(Int16, 1, "b")
    hw, conv, out = Func("hw_input"), Func("conv"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, k, 0, k, 0, ci, name="r")
    conv[x, y, o] = b[o]
    conv[x, y, o] += w[r.x, r.y, r.z, o] * hw[x + dil * r.x, y + dil * r.y, r.z]
    out[x, y, o] = u8(clamp(conv[x, y, o] >> 4, 0, 255))
    out.iteration_order([IterLevel("CGRA", [(x, TILE[0]), (y, TILE[1])]), IterLevel("host")]).accelerate("CGRA")
    level = out.get_looplevel("CGRA", x)
    out.create_memories([conv], level)
    hw.compute_at(level).unroll(c, 4)
    conv.update(0).unroll(r.z, 4)
    d = build_design(out, (*TILE, co))
    assert (d.buffers["b"].capacity, d.buffers["w"].capacity) == (co, k * k * ci * co)
    w_img, h_img = 12, 8
    img = rng.integers(0, 256, (ci, h_img + dil * (k - 1), w_img + dil * (k - 1)), dtype=np.uint8)
    a = img.astype(np.int64)
    ref = np.zeros((co, h_img, w_img), np.int64) + bias[:, None, None]
    for oo in range(co):
        for cc in range(ci):
            for ky in range(k):
                for kx in range(k):
                    ref[oo] += int(weights[oo, cc, ky, kx]) * a[cc, dil * ky:dil * ky + h_img, dil * kx:dil * kx + w_img]
    want = np.clip(ref.astype(np.int16) >> 4, 0, 255).astype(np.uint8)
    got = simulate(out, {"input": img, "w": weights, "b": bias}, (w_img, h_img, co), design=d)
    np.testing.assert_array_equal(got, want)
