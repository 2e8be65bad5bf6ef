"""accelerate(level, channels_per_cycle={o: n}) (and stream_through_accelerator's option of the same name): a DNN
layer's output channels n at a time, ceil(O / n) cycles a pixel, with the PEs of n channels. accelerate() computed
every channel in space and an unroll(o, n) on top was refused, pointing at the imperative schedule. Values
bit-exact against numpy; latency, capacities and PEs against figures derived by hand."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, Int16, IterLevel, RDom, UInt8, Var, clamp, i16, u8
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.streaming import SimulationStats, build_design, simulate
from loom.streaming.resources import count_resources
from loom.streaming.simulate_mapped import simulate_mapped

CI, CO, K = 3, 8, 3
TILE = (6, 4)


def layer():
    """conv = sum over 3x3 taps and CI channels of w * in (i16); out = u8(clamp(conv >> 4, 0, 255))."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 4, "w")
    hw, conv, out = Func("hw_input"), Func("conv"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, K, 0, K, 0, CI, name="r")
    conv[x, y, o] = i16(0)
    conv[x, y, o] += w[r.x, r.y, r.z, o] * hw[x + r.x, y + r.y, r.z]
    out[x, y, o] = u8(clamp(conv[x, y, o] >> 4, 0, 255))
    return (x, y, c, o, r), hw, conv, out


def declarative(blocks, o_tile=None, rate=None):
    (x, y, c, o, r), hw, conv, out = layer()
    cgra = IterLevel("CGRA", [(x, TILE[0]), (y, TILE[1])] + ([(o, o_tile)] if o_tile else []))
    if rate:
        out.output_rate(rate)  # also unrolls the reduction fully
    out.iteration_order([cgra, IterLevel("host")]).accelerate("CGRA", channels_per_cycle={o: blocks})
    out.create_memories([hw, conv], out.get_looplevel("CGRA", x))
    if not rate:
        conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    return out


def imperative(blocks):
    (x, y, c, o, r), hw, conv, out = layer()
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, *TILE).reorder(xi, yi, o, xo, yo).hw_accelerate(xi, xo).unroll(o, blocks)
    hw.compute_at(out, xo).unroll(c)
    conv.compute_at(out, xo).unroll(o, blocks)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    return out


def inputs(size):
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (CI, size[1] + K - 1, size[0] + K - 1), dtype=np.uint8)
    return {"input": img, "w": rng.integers(-4, 5, (size[2], CI, K, K)).astype(np.int16)}


def numpy_layer(ins, size):
    img, w = ins["input"].astype(np.int64), ins["w"].astype(np.int64)
    acc = np.zeros((size[2], size[1], size[0]), np.int64)
    for ky, kx in np.ndindex(K, K):
        acc += np.einsum("oc,cyx->oyx", w[:, :, ky, kx], img[:, ky:ky + size[1], kx:kx + size[0]])
    return np.clip(acc.astype(np.int16) >> 4, 0, 255).astype(np.uint8)


def hand_latency(cycles_a_pixel, lanes=1):
    """The input tile is 8 x 6 (a 2-pixel halo), streamed a pixel every P = cycles_a_pixel cycles (rows of 8 P).
    The first output waits for input (2, 2): 2 rows + 2 pixels = 18 P; the last, (5, 3), starts 5 + 3 * 8 pixels
    later and its last channel block ends P - 1 cycles into its step: latency (18 + 5 + 24) P + P = 48 P (lanes
    pixels a step divide the pixel times)."""
    return 48 * cycles_a_pixel // lanes


@pytest.mark.parametrize("blocks", [1, 2, 3, 8])
def test_accelerate_computes_output_channels_in_blocks(blocks):
    out = declarative(blocks)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = inputs(size)
    d = build_design(out, (*TILE, CO))
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), numpy_layer(ins, size))
    cycles = -(-CO // blocks)
    assert d.stages["out"].schedule.strides[:2] == (cycles, 8 * cycles)
    assert d.latency == hand_latency(cycles)
    # hw_input: a value is live from its write until the last block of the output pixel at its own position
    # reads it, 18 P + P - 1 cycles later: the 19 pixels written in that span (18 when P = 1: the pixel read for
    # the last time in the cycle the newest arrives is not held with it), 3 channels each
    assert d.capacities["hw_input"] == 3 * (18 + (cycles > 1))
    # conv's multiply-adds of one block: K * K * CI taps, a multiply and an add each, for each of its channels
    assert count_resources(d).stages["conv"].pes == blocks * K * K * CI * 2
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, inputs((*TILE, CO)), (*TILE, CO), design=d, capacities={"hw_input": d.capacities["hw_input"] - 1})


def test_accelerate_blocks_build_the_imperative_design():
    """The declarative call stands for reorder(xi, yi, o, xo, yo) + unroll(o, 2) on the output and conv."""
    a, b = build_design(declarative(2), (*TILE, CO)), build_design(imperative(2), (*TILE, CO))
    assert a.latency == b.latency and a.capacities == b.capacities
    assert {n: s.schedule for n, s in a.stages.items()} == {n: s.schedule for n, s in b.stages.items()}


def test_blocks_through_the_memory_map_and_two_pixels_a_step():
    out = declarative(2, rate=2)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = inputs(size)
    d = build_design(out, (*TILE, CO))
    assert d.latency == hand_latency(4, lanes=2)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), numpy_layer(ins, size))


def test_blocks_of_a_channel_tile_the_host_iterates():
    """IterLevel CGRA lists (o, 4): 4 channels an invocation (the host loops over 2 channel tiles), 2 at a time."""
    out = declarative(2, o_tile=4)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = inputs(size)
    stats = SimulationStats()
    np.testing.assert_array_equal(simulate(out, ins, size, stats=stats), numpy_layer(ins, size))
    assert stats.tiles == 2 * 2 * 2
    d = build_design(out, (*TILE, 4))
    assert d.latency == hand_latency(2) and d.capacities["w"] == K * K * CI * 4


def test_the_recipe_takes_channels_per_cycle():
    (x, y, c, o, r), hw, conv, out = layer()
    stream_through_accelerator(out, TILE, buffered=[hw, conv], reductions=[conv], channels_per_cycle=3)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = inputs(size)
    d = build_design(out, (*TILE, CO))
    assert d.latency == hand_latency(3)
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), numpy_layer(ins, size))


def _accelerated():
    (x, y, c, o, r), hw, conv, out = layer()
    out.iteration_order([IterLevel("CGRA", [(x, 6), (y, 4), (o, 4)]), IterLevel("host")])
    return (x, y, c, o, r), hw, conv, out


@pytest.mark.parametrize("arg, message", [
    (lambda v: {v[0]: 2}, r"channels_per_cycle: 'x' is out's x \(pixels and rows a step: output_rate, unroll\)"),
    (lambda v: {v[2]: 2}, r"channels_per_cycle: 'c' is not a dimension of out"),
    (lambda v: {v[3]: 0}, r"channels_per_cycle of 'o' must be a positive int, got 0"),
    (lambda v: {v[3]: 8}, r"channels_per_cycle computes 8 of 'o' a cycle, more than the 4 of level 'CGRA'"),
    (lambda v: [2], r"channels_per_cycle takes \{Var: n\} or an int, got \[2\]"),
])
def test_bad_channels_per_cycle_is_named(arg, message):
    v, _, _, out = _accelerated()
    with pytest.raises(LoomError, match=r"test_streaming_accelerate_channel_blocks.py:\d+ Func 'out': accelerate: "
                                        + message):
        out.accelerate("CGRA", channels_per_cycle=arg(v))


def test_memories_created_before_the_blocks_are_refused():
    (x, y, c, o, r), hw, conv, out = _accelerated()
    out.create_memories([hw, conv], out.get_looplevel("CGRA", x))
    with pytest.raises(LoomError, match=r"Func 'out': accelerate: create_memories already computed conv with every "
                                        r"channel in space; call accelerate\(..., channels_per_cycle=...\) before"):
        out.accelerate("CGRA", channels_per_cycle=2)


@pytest.mark.parametrize("blocks", [2, 3])
def test_the_blocks_read_the_input_through_a_delay_line(blocks):
    """conv's blocks reread its 3x3 window 1 cycle apart. hw_input was an addressed memory of 14 banks ("the consumer
    rereads the same values over a time loop"); a chain shifting on hw_input's writes (a pixel every P cycles) holds
    each value at its depth until the next write, so the window's taps sit at the unblocked layer's positions, 0 1 2,
    8 9 10, 16 17 18 values (rows of 8), block b reading tap k at P k + b cycles: 2 line delays of 6 and 2 + 2 + 2
    shift registers per channel, 3 channels: 18 registers and 6 ports, 3 memory tiles."""
    from loom.streaming.memory_map import map_memories

    out = declarative(blocks)
    d = build_design(out, (*TILE, CO))
    m = map_memories(d).buffers["hw_input"]
    cycles = -(-CO // blocks)
    positions = [0, 1, 2, 8, 9, 10, 16, 17, 18]
    assert (m.kind, m.shift_on, sorted(set(m.taps))) == ("delay line", "write", positions)
    assert m.tap_cycles == sorted(cycles * k + b for k in positions for b in range(cycles))
    assert (m.line_delays, m.shift_registers, m.mem_tiles) == ([6, 6], 18, 3)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = inputs(size)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), numpy_layer(ins, size))
