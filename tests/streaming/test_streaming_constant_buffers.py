"""A ``Buffer`` read inside an accelerator is an initialized memory, as a Func of constants is: weights read at a
constant address per lane become kernel constants (no MEMs), a table read at data-dependent addresses a ROM.
Values from the ubuf IR's value simulation against the reference evaluator and real Halide."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.streaming import build_design, simulate
from loom.streaming.to_ubuf import design_to_ir
from loom.streaming.report import design_report

RNG = np.random.default_rng(12)
WEIGHTS = RNG.integers(-8, 9, (3, 3)).astype(np.int16)  # [ky, kx]
IMG = RNG.integers(0, 256, (10, 14), dtype=np.uint8)


def _weights(weights_as, array):
    """The 2-d i16 ``array`` (numpy layout: [dim 1, dim 0]) as a Buffer, or as a Func of constants."""
    if weights_as == "buffer":
        return lp.Buffer(array, name="w")
    i, j = lp.Var("i"), lp.Var("j")
    w = lp.Func("w")
    w[i, j] = lp.i16(0)
    for b, a in np.ndindex(*array.shape):
        w[a, b] = lp.i16(int(array[b, a]))
    return w


def _conv(weights_as):
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "input")
    w = _weights(weights_as, WEIGHTS)
    hw, conv, out = lp.Func("hw_input"), lp.Func("conv"), lp.Func("output")
    r = lp.RDom(0, 3, 0, 3, name="r")
    hw[x, y] = lp.i16(inp[x, y])
    conv[x, y] = lp.i16(0)
    conv[x, y] += w[r.x, r.y] * hw[x + r.x, y + r.y]
    out[x, y] = lp.saturating_cast(lp.UInt8, conv[x, y] >> 2)
    stream_through_accelerator(out, (6, 4), buffered=[hw, conv], reductions=[conv])
    return out


def test_buffer_weights_cost_what_constant_weights_cost():
    reports = {form: design_report(build_design(_conv(form), (6, 4))) for form in ("buffer", "func")}
    buf, func = reports["buffer"], reports["func"]
    assert (buf.pes, buf.mems, buf.latency) == (func.pes, func.mems, func.latency)
    assert "w" not in buf.resources.memory.buffers  # folded into the kernel, not a memory (it took 5 MEMs)


def test_buffer_weights_simulate_from_the_ir_like_halide():
    out = _conv("buffer")
    design = build_design(out, (6, 4))
    got = simulate(out, {"input": IMG}, (12, 8), design=design, ir=str(design_to_ir(design)))
    np.testing.assert_array_equal(got, lp.evaluate(out, {"input": IMG}, (12, 8)))
    hx, hy = hl.Var("x"), hl.Var("y")
    hr = hl.RDom([(0, 3), (0, 3)])
    b, hw = hl.Buffer(IMG), hl.Buffer(WEIGHTS)
    conv, hout = hl.Func("conv"), hl.Func("output")
    conv[hx, hy] = hl.i16(0)
    conv[hx, hy] += hw[hr.x, hr.y] * hl.i16(b[hx + hr.x, hy + hr.y])
    hout[hx, hy] = hl.saturating_cast(hl.UInt(8), conv[hx, hy] >> 2)
    np.testing.assert_array_equal(got, np.asarray(hout.realize([12, 8])))


def gamma_rom_pipeline(lut, tile):
    """output = gamma[hw] ^ gamma[hw one to the right], the table a Buffer read at data-dependent addresses."""
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "input")
    table = lp.Buffer(lut, name="gamma")
    hw, out = lp.Func("hw_input"), lp.Func("output")
    hw[x, y] = inp[x, y]
    out[x, y] = table[hw[x, y]] ^ table[hw[x + 1, y]]
    stream_through_accelerator(out, tile, buffered=[hw])
    return out


def test_a_buffer_read_at_data_dependent_addresses_is_a_rom():
    lut = RNG.integers(0, 256, 256).astype(np.uint8)
    out = gamma_rom_pipeline(lut, (6, 4))
    design = build_design(out, (6, 4))
    assert "ROM" in str(design_to_ir(design))
    got = simulate(out, {"input": IMG}, (12, 8), design=design, ir=str(design_to_ir(design)))
    want = lut[IMG[:, :12]] ^ lut[IMG[:, 1:13]]
    np.testing.assert_array_equal(got[:8], want[:8])


def test_a_run_with_other_contents_for_a_buffer_is_refused():
    out = _conv("buffer")
    design = build_design(out, (6, 4))
    with pytest.raises(LoomError, match="w"):
        simulate(out, {"input": IMG, "w": WEIGHTS + 1}, (12, 8), design=design)


@pytest.mark.parametrize("weights_as", ["buffer", "func"])
def test_channel_copies_fold_their_weights_instead_of_reading_a_rom(weights_as):
    """A pointwise layer 4 -> 2 channels, the output channels in space: each copy reads w[c, k] at its own
    constant k, so the weights are constants in its PEs (4 multiplies, 3 adds, the >> and the clamp per
    channel), not a ROM (the table took a memory tile before)."""
    wts = np.array([[2, -3, 4, 5], [-6, 7, 3, -2]], dtype=np.int16)  # [k, c]; no 0 or 1: each is a multiply
    x, y, c, k = lp.Var("x"), lp.Var("y"), lp.Var("c"), lp.Var("k")
    inp = lp.ImageParam(lp.UInt8, 3, "input")
    w = _weights(weights_as, wts)
    hw, out = lp.Func("hw_input"), lp.Func("output")
    r = lp.RDom(0, 4, name="r")
    hw[x, y, c] = lp.i16(inp[x, y, c])
    out[x, y, k] = lp.saturating_cast(lp.UInt8, lp.sum(w[r.x, k] * hw[x, y, r.x]) >> 3)
    stream_through_accelerator(out, (4, 3), buffered=[hw])
    design = build_design(out, (4, 3, 2))
    res = design_report(design).resources
    assert res.rom_tiles == {}
    assert res.stages["output"].pes == 2 * (4 + 3 + 1 + 2)
    img = np.random.default_rng(13).integers(0, 256, (4, 6, 8), dtype=np.uint8)
    got = simulate(out, {"input": img}, (8, 6, 2), design=design)
    acc = np.einsum("kc,chw->khw", wts.astype(np.int64), img.astype(np.int64))
    np.testing.assert_array_equal(got, np.clip(acc >> 3, 0, 255).astype(np.uint8))


def test_a_data_indexed_table_still_takes_a_rom_tile():
    lut = RNG.integers(0, 256, 256).astype(np.uint8)
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "input")
    hw, out = lp.Func("hw_input"), lp.Func("output")
    hw[x, y] = inp[x, y]
    out[x, y] = lp.Buffer(lut, name="gamma")[hw[x, y]]
    stream_through_accelerator(out, (6, 4), buffered=[hw])
    assert design_report(build_design(out, (6, 4))).resources.rom_tiles == {"gamma": 1}
