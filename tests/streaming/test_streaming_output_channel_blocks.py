"""Output channels a cycle (``unroll(o, n)`` on the output's channel dimension, o inside the tile loop): the
accelerator computes a pixel's channels n at a time, ceil(O / n) cycles per pixel, with the PEs of n channels
instead of all O (the time/area trade of a DNN layer's output channels). It was refused as channels a cycle on the
output. Values bit-exact against numpy, through the memory map and on the CPU path; latency and PEs as counted by
hand; capacities tight."""

import collections

import numpy as np
import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, Int16, RDom, UInt8, Var, clamp, i16, u8
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.resources import count_resources
from loom.streaming.simulate_mapped import simulate_mapped

from tests.fuzz.accel_mutator import FUZZ_SCALE

CI, CO, K = 3, 8, 3
TILE = (6, 4)


def _conv(block, lanes=1, conv_block=0, ci=CI, k=K, tile=TILE):
    """A k x k convolution ci -> CO, out.unroll(o, block) (None: every channel in space), unroll(xi, lanes); conv
    at ``conv_block`` channels a cycle (0: as the output)."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 4, "w")
    hw, conv, out = Func("hw_input"), Func("conv"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, k, 0, k, 0, ci, name="r")
    conv[x, y, o] = i16(0)
    conv[x, y, o] += w[r.x, r.y, r.z, o] * hw[x + r.x, y + r.y, r.z]
    out[x, y, o] = u8(clamp(conv[x, y, o] >> 4, 0, 255))
    out.compute_root().tile(x, y, xo, yo, xi, yi, *tile).reorder(xi, yi, o, xo, yo).hw_accelerate(xi, xo)
    hw.compute_at(out, xo).unroll(c)
    conv.compute_at(out, xo)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    for f in (out, conv, conv.update(0)):
        n = block if f is out else conv_block or block
        f.unroll(o, n) if n else f.unroll(o)
        if lanes > 1:
            f.unroll(xi if f is out else x, lanes)
    if lanes > 1:
        hw.unroll(x, lanes)
    return out


def _inputs(size, ci=CI, k=K):
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (ci, size[1] + k - 1, size[0] + k - 1), dtype=np.uint8)
    return {"input": img, "w": rng.integers(-4, 5, (size[2], ci, k, k)).astype(np.int16)}


def _numpy(ins, size):
    img, w = ins["input"].astype(np.int64), ins["w"].astype(np.int64)
    k = w.shape[-1]
    acc = np.zeros((size[2], size[1], size[0]), np.int64)
    for ky, kx in np.ndindex(k, k):
        acc += np.einsum("oc,cyx->oyx", w[:, :, ky, kx], img[:, ky:ky + size[1], kx:kx + size[0]])
    return np.clip(acc.astype(np.int16) >> 4, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("block", [1, 2, 3, 4, 8])
def test_output_channel_blocks_are_bit_exact_and_trade_cycles_for_pes(block):
    out = _conv(block)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = _inputs(size)
    want = _numpy(ins, size)
    d = build_design(out, (*TILE, CO))
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, ins, size), want)
    blocks = -(-CO // block)
    whole = build_design(_conv(None), (*TILE, CO))
    # a pixel every `blocks` cycles: every output step takes that many times longer
    assert d.stages["out"].schedule.strides[0] == blocks * whole.stages["out"].schedule.strides[0]
    assert d.latency > (blocks - 1) * TILE[0] * TILE[1]
    pes, all_pes = count_resources(d).stages, count_resources(whole).stages
    # conv's multiply-adds: K*K*CI of each channel of a block, each a multiply and an add
    assert pes["conv"].pes == block * K * K * CI * 2 and all_pes["conv"].pes == CO * K * K * CI * 2
    for buf, cap in d.capacities.items():
        if cap and buf not in ("input", "w"):
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, _inputs((*TILE, CO)), (*TILE, CO), design=d, capacities={buf: cap - 1})


def test_output_channel_blocks_at_two_pixels_a_step_are_bit_exact():
    out = _conv(4, lanes=2)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = _inputs(size)
    d = build_design(out, (*TILE, CO))
    assert d.stages["out"].schedule.lanes == 2
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), _numpy(ins, size))


def test_an_output_block_larger_than_a_stage_s_cycles_per_pixel_needs_its_blocks_to_fit():
    """The output at 2 channels a cycle sets 4 cycles per pixel; conv at 1 channel a cycle would need 8: refused by
    its call, as blocks that do not fit a stage's cycles per pixel are."""
    out = _conv(2, conv_block=1)
    with pytest.raises(LoomError, match=r"Func 'conv'.*8 blocks a pixel, but the stage has 4 cycles per pixel"):
        build_design(out, (*TILE, CO))


RUNS = collections.Counter()


@settings(max_examples=16 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(co=st.integers(1, 6), block=st.integers(1, 6), conv_block=st.sampled_from([0, 1, 2, 3]),
       ci=st.integers(1, 3), k=st.integers(1, 3), lanes=st.sampled_from([1, 2]),
       tile=st.tuples(st.integers(2, 6), st.integers(1, 4)))
def fuzz(co, block, conv_block, ci, k, lanes, tile):
    out = _conv(min(block, co), lanes, conv_block and min(conv_block, co), ci, k, tile)
    size = (2 * tile[0], 2 * tile[1], co)
    try:
        d = build_design(out, (*tile, co))
    except LoomError as e:
        assert e.where.startswith("Func '"), str(e)
        RUNS["refused"] += 1
        return
    RUNS["built"] += 1
    ins = _inputs(size, ci, k)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), _numpy(ins, size))


def test_fuzz_output_channel_blocks():
    """Random layers: either refused by a call naming the Func (conv's blocks not fitting the output's cycles per
    pixel, lanes not dividing the tile...) or bit-exact against numpy over 2 x 2 tiles through the memory map."""
    RUNS.clear()
    fuzz()
    assert RUNS["built"] >= 8 and RUNS["refused"] >= 1, dict(RUNS)


def test_blocks_on_an_output_accelerate_unrolled_name_the_imperative_schedule():
    """accelerate() unrolls the output's channels whole; unroll(o, 2) on top is refused with accelerate's
    channels_per_cycle and the tile schedule that compute 2 channels a cycle (it advised compute_at, which an output
    does not take)."""
    from loom.frontends.pipeline import IterLevel

    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    out[x, y, o] = u8(clamp(hw[x, y, o] + hw[x + 1, y, o], 0, 255))
    out.iteration_order([IterLevel("CGRA", [(x, 6), (y, 4)]), IterLevel("host")]).accelerate("CGRA")
    hw.compute_at(out.get_looplevel("CGRA", x)).unroll(c)
    out.unroll(o, 2)
    with pytest.raises(LoomError, match=r"test_streaming_output_channel_blocks.py:\d+ Func 'out': unroll\(o, 2\) of a "
                                        r"dimension already unrolled whole.*out.accelerate\(level, channels_per_cycle=\{o: 2\}\).*"
                                        r"out.tile\(x, y, xo, yo, xi, yi, w, h\)"
                                        r".reorder\(xi, yi, o, xo, yo\).hw_accelerate\(xi, xo\).unroll\(o, 2\)"):
        build_design(out, (6, 4, 4))


def test_output_channel_blocks_at_two_rows_a_step_are_bit_exact():
    """unroll(yi, 2) on the output (its producer too) with 2 channels a cycle: a 1 x 2 block of pixels a step, each
    pixel's 4 channels in 2 blocks; a step of 2 rows takes the cycles one row took."""
    def build(rows):
        x, y, c = Var("x"), Var("y"), Var("c")
        xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
        inp = ImageParam(UInt8, 3, "input")
        hw, out = Func("hw_input"), Func("out")
        hw[x, y, c] = i16(inp[x, y, c])
        out[x, y, c] = u8(clamp((hw[x, y, c] * 3 + hw[x + 1, y + 1, c]) >> 2, 0, 255))
        out.compute_root().tile(x, y, xo, yo, xi, yi, *TILE).reorder(xi, yi, c, xo, yo).hw_accelerate(xi, xo)
        hw.compute_at(out, xo).unroll(c)
        out.unroll(c, 2)
        if rows > 1:
            out.unroll(yi, rows)
            hw.unroll(y, rows)
        return out

    size = (2 * TILE[0], 2 * TILE[1], 4)
    img = np.random.default_rng(3).integers(0, 256, (4, size[1] + 1, size[0] + 1), dtype=np.uint8)
    a = img.astype(np.int64)
    want = np.clip((a[:, :-1, :-1] * 3 + a[:, 1:, 1:]) >> 2, 0, 255).astype(np.uint8)
    one, two = (build_design(build(r), (*TILE, 4)) for r in (1, 2))
    row = one.stages["out"].schedule.strides[1]  # cycles a row, one row a step
    assert (1, 2, row) in two.stages["out"].schedule.floors and two.latency < one.latency
    np.testing.assert_array_equal(simulate(build(2), {"input": img}, size, design=two), want)
    np.testing.assert_array_equal(simulate_mapped(build(2), {"input": img}, size, design=two), want)
