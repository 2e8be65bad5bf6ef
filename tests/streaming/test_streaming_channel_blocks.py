"""Channels a cycle (``unroll(c, n)`` on a later dimension of a stage other than the output): the stage writes n
channels a cycle, a pixel's channel blocks spread over the cycles between its pixels. Values bit-exact against the
reference evaluator; what does not fit is refused by the call written."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, IterLevel, RDom, UInt8, Var, u8, u16
from loom.frontends.pipeline.evaluate import evaluate
from loom.streaming import build_design, simulate

from tests.streaming.streaming_apps import example

C = 8


def _tiled(out, funcs, tile=(6, 5)):
    x, y = out.dims[0], out.dims[1]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.compute_root().tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    for f in funcs:
        f.compute_at(out, xo)


def _input():
    return np.random.default_rng(0).integers(0, 256, (C, 7, 8), dtype=np.uint8)  # (c, y, x)


def test_blocks_feeding_blocks_feeding_a_reduction_in_time_are_bit_exact():
    """hw 2 channels a cycle -> mid 4 a cycle (a stencil along x) -> a sum over channels 2 a cycle (4 cycles per
    pixel): hw's 4 blocks and mid's 2 fit the 4 cycles between pixels."""
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, mid, acc, out = Func("hw"), Func("mid"), Func("acc"), Func("out")
    hw[x, y, c] = u16(inp[x, y, c])
    mid[x, y, c] = hw[x, y, c] * 2 + hw[x + 1, y, c]
    r = RDom(0, C, name="r")
    acc[x, y] = u16(0)
    acc[x, y] += mid[x, y + 1, r.x] + mid[x, y, r.x]
    out[x, y] = u8(acc[x, y] >> 4)
    _tiled(out, [hw, mid, acc])
    hw.unroll(c, 2)
    mid.unroll(c, 4)
    acc.update(0).unroll(r.x, 2)
    d = build_design(out, (6, 5))
    assert d.stages["hw"].schedule.floors == ((2, 2, 1),) and d.stages["mid"].schedule.floors == ((2, 4, 2),)
    want = evaluate(out, {"input": _input()}, (6, 5))
    np.testing.assert_array_equal(simulate(out, {"input": _input()}, (6, 5), design=d), want)
    assert len(np.unique(want)) > 1


def _taps(block):
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw"), Func("out")
    hw[x, y, c] = u16(inp[x, y, c])
    out[x, y] = u8((hw[x, y, 0] + hw[x + 1, y + 1, 7] + hw[x + 2, y, 3]) >> 2)
    _tiled(out, [hw])
    hw.unroll(c, *([block] if block else []))
    return out


def test_blocks_read_by_a_stage_firing_every_cycle_are_refused_by_the_call():
    """A consumer computing a pixel a cycle leaves no cycles for 4 channel blocks between the pixels; every
    channel in space is accepted, bit-exact."""
    with pytest.raises(LoomError, match=r"Func 'hw'.*unroll\(c, 2\) computes its channels in 4 blocks a pixel, but "
                       r"the stage has 1 cycle per pixel"):
        build_design(_taps(2), (6, 5))
    out = _taps(None)
    d = build_design(out, (6, 5))
    np.testing.assert_array_equal(simulate(out, {"input": _input()}, (6, 5), design=d),
                                  evaluate(out, {"input": _input()}, (6, 5)))


def test_blocks_on_top_of_create_memories_full_unroll_are_refused_with_the_way_out():
    mod = example("dnn_conv")
    a = mod.algorithm(3, 1, C, 2)
    x, y, output = a["x"], a["y"], a["output"]
    output.iteration_order([IterLevel("CGRA", [(x, 6), (y, 5)]), IterLevel("host")]).accelerate("CGRA")
    output.create_memories([a["hw_input"], a["conv"]], output.get_looplevel("CGRA", x))
    a["conv"].update(0).unroll(a["r"].z, 2)
    a["hw_input"].unroll(a["c"], 2)
    with pytest.raises(LoomError, match=r"test_streaming_channel_blocks.py:\d+ Func 'hw_input': unroll\(c, 2\) of a "
                       r"dimension already unrolled whole.*hw_input.compute_at\(level\).unroll\(c, 2\)"):
        build_design(output, (6, 5, 2))


def test_blocks_with_compute_sharing_are_refused_by_name():
    from tests.streaming.test_streaming_compute_sharing import luma_box_chain

    out = luma_box_chain("line", input_channels=1)
    with pytest.raises(LoomError, match=r"Func 'hw_input': compute sharing .* unroll\(c, 1\) \(channels a cycle\) is "
                       r"not supported with it: unroll\(c\) computes them in space"):
        build_design(out, (6, 4))
