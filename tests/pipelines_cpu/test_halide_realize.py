"""``Func.realize`` on Buffers (Halide's (x, y, c) order over numpy's reversed layout) against Halide."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
import loom.jit  # noqa: F401  (registers the CPU path behind Func.realize)
from loom.errors import LoomError

H, W, C = 5, 8, 3


def test_realize_on_an_interleaved_rgb_buffer_matches_halide():
    rgb = np.random.default_rng(9).integers(0, 256, size=(H, W, C), dtype=np.uint8)  # (H, W, C) as image libs
    buf = lp.Buffer.from_interleaved(rgb)
    assert (buf.width, buf.height, buf.channels) == (W, H, C)
    assert buf[3, 2, 1] == rgb[2, 3, 1]  # [x, y, c]

    inp = lp.ImageParam(lp.UInt8, 3, "inp")
    gain = lp.Param(lp.UInt8, "gain")
    x, y, c = lp.Var("x"), lp.Var("y"), lp.Var("c")
    out = lp.Func("out")
    out[x, y, c] = lp.u8(lp.min(lp.u16(inp[x, y, 2 - c]) * lp.u16(gain) + lp.u16(x), 255))  # BGR, brighter
    inp.set(buf)
    gain.set(2)
    got = out.realize([W, H, C])

    hin = hl.ImageParam(hl.UInt(8), 3, "inp")
    hgain = hl.Param(hl.UInt(8), "gain")
    hx, hy, hc = hl.Var("x"), hl.Var("y"), hl.Var("c")
    hout = hl.Func("out")
    hout[hx, hy, hc] = hl.u8(hl.min(hl.u16(hin[hx, hy, 2 - hc]) * hl.u16(hgain) + hl.u16(hx), 255))
    hin.set(hl.Buffer(np.ascontiguousarray(rgb.transpose(2, 0, 1))))  # Halide's default: axes reversed
    hgain.set(2)
    want = np.asarray(hout.realize([W, H, C]))
    assert isinstance(got, lp.Buffer) and got.extents == (W, H, C)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(got.to_interleaved(), np.minimum(rgb[..., ::-1].astype(int) * 2
                                                                   + np.arange(W)[None, :, None], 255))
    # inputs given at the call override what set() bound
    again = out.realize([W, H, C], {"gain": 1})
    np.testing.assert_array_equal(np.asarray(again)[0], np.minimum(rgb[..., 2].astype(int) + np.arange(W), 255))


def test_realize_refuses_mismatched_inputs_naming_them():
    inp = lp.ImageParam(lp.UInt8, 2, "planes")
    with pytest.raises(LoomError, match="planes.*2-d u8"):
        inp.set(np.zeros((2, 2, 2), np.uint8))
    x = lp.Var("x")
    f = lp.Func("lonely")
    f[x] = inp[x, 0]
    with pytest.raises(LoomError, match="no input shape given for ImageParam.*planes"):
        f.realize([4])
    with pytest.raises(LoomError, match="interleaved.*shape"):
        lp.Buffer.from_interleaved(np.zeros((2, 2), np.uint8))
