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


def test_a_buffer_read_in_a_definition_matches_halide():
    """Weights as a Buffer read in the definition (Halide's way to pass constants): the evaluator, the CPU path,
    realize() and the accelerator's value simulation take its array; an input named like it overrides it."""
    from loom.frontends.pipeline.recipes import stream_through_accelerator
    from loom.jit.pipeline import compile_cpu, run_cpu
    from loom.streaming import simulate
    from loom.streaming.simulate_mapped import simulate_mapped

    w = np.arange(9, dtype=np.int16).reshape(3, 3) - 4
    img = np.random.default_rng(0).integers(0, 256, (8, 10), np.uint8)
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "input")
    wts = lp.Buffer(w, name="wts")
    r = lp.RDom(0, 3, 0, 3, name="r")
    hw, out = lp.Func("hw_input"), lp.Func("output")
    hw[x, y] = lp.i16(inp[x, y])
    out[x, y] = lp.sum(wts[r.x, r.y] * hw[x + r.x, y + r.y])
    hx, hy = hl.Var("x"), hl.Var("y")
    hr = hl.RDom([(0, 3), (0, 3)])
    hf = hl.Func("f")
    hf[hx, hy] = hl.sum(hl.Buffer(w)[hr.x, hr.y] * hl.i16(hl.Buffer(img)[hx + hr.x, hy + hr.y]))
    want = np.asarray(hf.realize([8, 6]))
    np.testing.assert_array_equal(lp.evaluate(out, {"input": img}, (8, 6)), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, (8, 6)), want)
    # compiled for the inputs' shapes alone: the Buffer's comes from its array
    np.testing.assert_array_equal(compile_cpu(out, {"input": img.shape}, (8, 6))({"input": img}), want)
    inp.set(img)
    np.testing.assert_array_equal(np.asarray(out.realize([8, 6])), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"input": img, "wts": w * 0}, (8, 6)), 0 * want)
    stream_through_accelerator(out, (8, 6), buffered=[hw])
    np.testing.assert_array_equal(simulate(out, {"input": img}, (8, 6)), want)
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, (8, 6)), want)


def test_a_buffer_of_a_type_the_language_lacks_is_refused_when_read():
    x = lp.Var("x")
    with pytest.raises(LoomError, match="Buffer 'w': a Buffer of float16 cannot be read in a definition"):
        lp.Buffer(np.zeros(3, np.float16), name="w")[x]
    assert lp.Buffer(np.arange(3, dtype=np.float16), name="w")[2] == 2  # an element read is still numpy's


def test_zero_dimensional_funcs_and_inputs_match_halide():
    """A 0-d Func realizes to a 0-d Buffer and a 0-d ImageParam is an input like any other (its array's shape
    () was taken for a Param's scalar, and numpy's ascontiguousarray made it 1-d before the C call)."""
    r = lp.RDom(0, 5)
    total = lp.Func("total")
    total[()] = lp.i32(0)
    total[()] += r.x * r.x
    hr = hl.RDom([(0, 5)])
    htotal = hl.Func("total")
    htotal[()] = hl.i32(0)
    htotal[()] += hr.x * hr.x
    got = total.realize([])
    assert got.extents == () and got.width == 1
    np.testing.assert_array_equal(np.asarray(got), np.asarray(htotal.realize([])))

    scale = lp.ImageParam(lp.Float32, 0, "scale")
    x = lp.Var("x")
    ramp = lp.Func("ramp")
    ramp[x] = scale[()] * lp.f32(x)
    hscale = hl.ImageParam(hl.Float(32), 0, "scale")
    hx = hl.Var("x")
    hramp = hl.Func("ramp")
    hramp[hx] = hscale[()] * hl.f32(hx)
    value = np.array(2.5, np.float32)
    hscale.set(hl.Buffer(value))
    want = np.asarray(hramp.realize([4]))
    np.testing.assert_array_equal(np.asarray(ramp.realize([4], {"scale": value})), want)
    scale.set(value)
    np.testing.assert_array_equal(np.asarray(ramp.realize([4])), want)


def test_a_negative_size_is_refused_and_an_empty_one_realizes_like_halide():
    """A negative extent was numpy's 'negative dimensions are not allowed' from inside the CPU path."""
    x = lp.Var("x")
    f = lp.Func("f")
    f[x] = x
    hx = hl.Var("x")
    hf = hl.Func("f")
    hf[hx] = hx
    with pytest.raises(hl.HalideError, match="is negative"):
        hf.realize([-1])
    with pytest.raises(LoomError, match=r"size \(-1,\): the extent of dimension 0 is negative"):
        f.realize([-1])
    with pytest.raises(LoomError, match="is negative"):
        lp.evaluate(f, {}, (-2,))
    assert np.asarray(f.realize([0])).shape == np.asarray(hf.realize([0])).shape == (0,)
