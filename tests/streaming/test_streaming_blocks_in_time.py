"""A DNN layer's output channels in blocks (n at a time) while its reduction over the input channels is iterated
in time: what a DNN researcher writes first. Each block runs its whole reduction before the next (R cycles a
block, ceil(O / n) R cycles a pixel) and the accumulator holds one block's n partial sums. It was refused
("scheduled only for a stage computed once per step"), and so was channels_per_cycle with GLB output levels.

Values bit-exact against numpy and real Halide, through the IR value simulation, the memory map and the CPU path;
latency from the closed form derived in ``_hand_latency``; capacities against a plain-Python liveness sweep over
the hand schedule (``_hand_live``)."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Func, ImageParam, Int16, IterLevel, LoopLevel, RDom, UInt8, Var, clamp, i16,
                                     u8)
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.scheduler import accumulator_capacity
from loom.streaming.simulate_mapped import simulate_mapped

try:
    import halide as hl
except ImportError:  # pragma: no cover
    hl = None

CI, CO, K = 4, 6, 3
TILE = (6, 4)


def _layer(names=("x", "y", "o")):
    """conv[a, b, k] = sum over 3x3 taps and CI channels of w * in (i16); out[x, y, o] = u8(clamp(conv >> 4)).
    ``names``: conv's own Vars (the output keeps x, y, o)."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    a, b, k = (Var(n) for n in names)
    inp, w = ImageParam(UInt8, 3, "input"), ImageParam(Int16, 4, "w")
    hw, conv, out = Func("hw_input"), Func("conv"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    r = RDom(0, K, 0, K, 0, CI, name="r")
    conv[a, b, k] = i16(0)
    conv[a, b, k] += w[r.x, r.y, r.z, k] * hw[a + r.x, b + r.y, r.z]
    out[x, y, o] = u8(clamp(conv[x, y, o] >> 4, 0, 255))
    return (x, y, c, o, r), hw, conv, out


def _imperative(n):
    (x, y, c, o, r), hw, conv, out = _layer()
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, *TILE).reorder(xi, yi, o, xo, yo).hw_accelerate(xi, xo).unroll(o, n)
    hw.compute_at(out, xo).unroll(c)
    conv.compute_at(out, xo).unroll(o, n)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(o, n)  # r.z (the input channels) iterated in time
    return out


def _declarative(n, names=("x", "y", "o"), glb=False, time=True):
    (x, y, c, o, r), hw, conv, out = _layer(names)
    cgra = IterLevel("CGRA", [(x, TILE[0]), (y, TILE[1])])
    levels = [cgra, IterLevel("GLB", [(x, 2), (y, 2)]), IterLevel("host")] if glb else [cgra, IterLevel("host")]
    out.iteration_order(levels).accelerate("GLB" if glb else "CGRA", channels_per_cycle={o: n})
    at = out.get_looplevel("CGRA", x)
    if glb:
        out.create_memories([conv], at)
        hw.stream_to_accelerator(["CGRA", "GLB", "host"], [at, out.get_looplevel("GLB", x), LoopLevel.root()])
    else:
        out.create_memories([hw, conv], at)
    conv.update(0).unroll(r.x).unroll(r.y)
    if not time:
        conv.update(0).unroll(r.z)
    return out.get_memory_level("host") if glb else out


def _inputs(size):
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (CI, size[1] + K - 1, size[0] + K - 1), dtype=np.uint8)
    return {"input": img, "w": rng.integers(-4, 5, (size[2], CI, K, K)).astype(np.int16)}


def _numpy(ins, size):
    img, w = ins["input"].astype(np.int64), ins["w"].astype(np.int64)
    acc = np.zeros((size[2], size[1], size[0]), np.int64)
    for ky, kx in np.ndindex(K, K):
        acc += np.einsum("oc,cyx->oyx", w[:, :, ky, kx], img[:, ky:ky + size[1], kx:kx + size[0]])
    return np.clip(acc.astype(np.int16) >> 4, 0, 255).astype(np.uint8)


def _halide(ins, size):
    x, y, o = hl.Var("x"), hl.Var("y"), hl.Var("o")
    inp, w = hl.Buffer(ins["input"]), hl.Buffer(ins["w"])
    r = hl.RDom([(0, K), (0, K), (0, CI)])
    conv, out = hl.Func("conv"), hl.Func("out")
    conv[x, y, o] = hl.i16(0)
    conv[x, y, o] += w[r.x, r.y, r.z, o] * hl.i16(inp[x + r.x, y + r.y, r.z])
    out[x, y, o] = hl.u8(hl.clamp(conv[x, y, o] >> 4, 0, 255))
    return np.asarray(out.realize(list(size)))


def _hand_latency(n, w=TILE[0], h=TILE[1], r=CI):
    """R = CI cycles a block, B = ceil(CO / n) blocks: a pixel every R B cycles, an input row (w + 2 pixels)
    every (w + 2) R B. The first iteration reads hw(2, 2, 0), streamed at 2 R B + 2 row: D. The last point
    (w - 1, h - 1), block B - 1, writes at D + (R - 1) + (w - 1) R B + (h - 1) row + (B - 1) R."""
    b = -(-CO // n)
    step, row = r * b, (w + K - 1) * r * b
    d = (K - 1) * step + (K - 1) * row
    return d + r - 1 + (w - 1) * step + (h - 1) * row + (b - 1) * r + 1


def _hand_live(n, w=TILE[0], h=TILE[1], ci=CI):
    """Most input values held at once on the hand schedule: hw(X, Y, c) streamed at R B X + row Y (channels in
    parallel), read by point (x, y)'s block b at D + R B x + row y + R b + c; held from its write to its last read."""
    r, b = ci, -(-CO // n)
    step, row = r * b, (w + K - 1) * r * b
    d = (K - 1) * step + (K - 1) * row
    events = []
    for yy, xx, c in np.ndindex(h + K - 1, w + K - 1, ci):
        xs, ys = range(max(0, xx - K + 1), min(w, xx + 1)), range(max(0, yy - K + 1), min(h, yy + 1))
        last = max(d + step * x + row * y + r * (b - 1) + c for x in xs for y in ys)
        if last > step * xx + row * yy:
            events += [(step * xx + row * yy, 1), (last, -1)]
    events.sort()
    return int(np.cumsum([e for _, e in events]).max())


@pytest.mark.parametrize("n", [1, 2, 4])
def test_output_channel_blocks_with_the_input_channels_in_time(n):
    out = _imperative(n)
    size = (2 * TILE[0], 2 * TILE[1], CO)
    ins = _inputs(size)
    want = _numpy(ins, size)
    d = build_design(out, (*TILE, CO))
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, ins, size), want)
    if hl is not None:
        np.testing.assert_array_equal(_halide(ins, size), want)
    assert d.latency == _hand_latency(n)
    assert d.capacities["hw_input"] == _hand_live(n)
    assert (d.capacities["conv"], d.capacities["out"]) == (0, 0)  # each block's sums leave as they are written
    # one block's partial sums at a time (a DNN layer's accumulator of n channels, not CO)
    assert accumulator_capacity(d.accumulators["conv_acc"]) == n


def test_declarative_blocks_in_time_equal_the_imperative_schedule():
    size = (TILE[0], TILE[1], CO)
    ins = _inputs(size)
    d = build_design(_declarative(2), size)
    np.testing.assert_array_equal(simulate(d.acc.func, ins, size, design=d), _numpy(ins, size))
    assert d.latency == _hand_latency(2) and d.capacities["hw_input"] == _hand_live(2)


@pytest.mark.parametrize("time", [False, True])
def test_create_memories_blocks_a_memory_by_the_dimension_its_reads_carry(time):
    """conv defined over Vars a, b, k (the output over x, y, o): its dim 2 carries the output's o through
    out[x, y, o] = ... conv[x, y, o], so it gets the output's blocks. By Var name it was computed in space (6
    channels of PEs and a 4-value conv buffer instead of a wire; in time, latency 194 instead of the hand 576)."""
    size = (TILE[0], TILE[1], CO)
    ins = _inputs(size)
    d = build_design(_declarative(2, names=("a", "b", "k"), time=time), size)
    assert d.acc.stages["conv"].blocks == {2: 2}
    np.testing.assert_array_equal(simulate(d.acc.func, ins, size, design=d), _numpy(ins, size))
    assert d.latency == _hand_latency(2, r=CI if time else 1) and d.capacities["conv"] == 0


def test_a_memory_dimension_named_like_the_blocked_var_but_not_carrying_it_stays_in_space():
    """g[x, y, o] read by the output at constants (g[x, y, 0] + g[x, y, 1]): its o is not the output's o, so
    its two values are computed in space; by name it was split in blocks of the output's 1."""
    x, y, o = Var("x"), Var("y"), Var("o")
    inp = ImageParam(UInt8, 2, "input")
    hw, g, out = Func("hw"), Func("g"), Func("out")
    hw[x, y] = i16(inp[x, y])
    g[x, y, o] = hw[x, y] * i16(o + 1)
    out[x, y, o] = g[x, y, 0] + g[x, y, 1] + i16(o)
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 3)]), IterLevel("host")]).accelerate(
        "CGRA", channels_per_cycle={o: 1})
    out.create_memories([hw, g], out.get_looplevel("CGRA", x))
    d = build_design(out, (4, 3, 2))
    assert d.acc.stages["g"].blocks == {} and d.acc.stages["out"].blocks == {2: 1}
    img = np.arange(30, dtype=np.uint8).reshape(5, 6)
    v = img[:3, :4].astype(np.int16)
    want = np.stack([3 * v + i for i in range(2)])
    np.testing.assert_array_equal(simulate(out, {"input": img}, (4, 3, 2), design=d), want)


def test_channel_blocks_with_glb_output_levels():
    """channels_per_cycle with a GLB level (it was refused): the fabric's stages and the GLB copy compute 2 of 6
    channels a cycle over the 4 input channels in time; the host copy takes the GLB tile whole. Hand figures as
    for the flat layer (the GLB copy reads each block as it is written)."""
    top = _declarative(2, glb=True)
    size = (4 * TILE[0], 4 * TILE[1], CO)
    ins = _inputs(size)
    d = build_design(top, (*TILE, CO))
    np.testing.assert_array_equal(simulate(top, ins, size, design=d), _numpy(ins, size))
    assert {n: s.blocks for n, s in d.acc.stages.items() if s.blocks} == {"conv": {2: 2}, "out": {2: 2},
                                                                          "out_in": {2: 2}}
    assert d.latency == _hand_latency(2)
    assert d.capacities["hw_input_in_in"] == _hand_live(2)
    assert accumulator_capacity(d.accumulators["conv_acc"]) == 2


def test_an_output_in_space_reads_the_blocks_of_a_stage_accumulating_in_time():
    """conv in blocks of 2 over the input channels in time, the output every channel in space: the output fires
    when conv's last block is written (the same hand latency) and conv holds its first two blocks until then:
    block 0 from cycle R - 1 of the pixel, block 1 from 2R - 1, both read at 3R - 1: 4 values."""
    (x, y, c, o, r), hw, conv, out = _layer()
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, *TILE).reorder(xi, yi, o, xo, yo).hw_accelerate(xi, xo).unroll(o)
    hw.compute_at(out, xo).unroll(c)
    conv.compute_at(out, xo).unroll(o, 2)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(o, 2)
    size = (TILE[0], TILE[1], CO)
    ins = _inputs(size)
    d = build_design(out, size)
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), _numpy(ins, size))
    assert d.latency == _hand_latency(2)
    assert d.capacities["conv"] == 4


def test_blocks_of_a_reduction_outside_the_pixels_are_refused_by_name():
    """A reduction reordered outside the pixels keeps its tile's partial sums; blocks of its channels are not
    scheduled: refused naming the Func and the unroll."""
    (x, y, c, o, r), hw, conv, out = _layer()
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(x, y, xo, yo, xi, yi, *TILE).reorder(xi, yi, o, xo, yo).hw_accelerate(xi, xo).unroll(o, 2)
    hw.compute_at(out, xo).unroll(c)
    conv.compute_at(out, xo).unroll(o, 2)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(o, 2).reorder(x, y, o, r.z)
    with pytest.raises(LoomError, match=r"Func 'conv'.*unroll\(o, 2\).*iterating a reduction outside its pixels"):
        build_design(out, (TILE[0], TILE[1], CO))


def test_the_recipe_blocks_a_buffered_func_by_the_dimension_its_reads_carry():
    """stream_through_accelerator(..., channels_per_cycle=2) on conv[a, b, k]: conv's k carries the output's o,
    so it is computed 2 at a time (by Var name it was every channel in space)."""
    from loom.frontends.pipeline.recipes import stream_through_accelerator

    (x, y, c, o, r), hw, conv, out = _layer(("a", "b", "k"))
    stream_through_accelerator(out, TILE, buffered=[hw, conv], reductions=[conv], channels_per_cycle=2)
    size = (TILE[0], TILE[1], CO)
    ins = _inputs(size)
    d = build_design(out, size)
    assert d.acc.stages["conv"].blocks == {2: 2}
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), _numpy(ins, size))
    assert d.latency == _hand_latency(2, r=1) and d.capacities["conv"] == 0


def _channels_first(blocks):
    """g[o, x, y] (channels first) read as g[o, x, y] by out[x, y, o]: a pointwise pipeline on a 4x3 tile."""
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    inp = ImageParam(UInt8, 3, "input")
    hw, g, out = Func("hw"), Func("g"), Func("out")
    hw[x, y, c] = i16(inp[x, y, c])
    g[o, x, y] = hw[x, y, 0] * i16(o + 1) + hw[x, y, 1]
    out[x, y, o] = u8(clamp(g[o, x, y], 0, 255))
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 3)]), IterLevel("host")]).accelerate(
        "CGRA", channels_per_cycle={o: blocks} if blocks else None)
    out.create_memories([hw, g], out.get_looplevel("CGRA", x))
    return out


def test_create_memories_iterates_a_channels_first_memory_over_its_pixel_dims():
    """g's dims 1 and 2 carry x and y: they are iterated in time and its dim 0 computed in space. Positionally
    (dims 0, 1 in time, 2 in space) g stepped through o as if it were x and held whole columns: latency 32, g 36
    and hw 22 values, where the pointwise pipeline needs a pixel a cycle and wires: 12 cycles, nothing held."""
    out = _channels_first(None)
    img = np.random.default_rng(0).integers(0, 100, (2, 3, 4), dtype=np.uint8)
    d = build_design(out, (4, 3, 4))
    v = img.astype(np.int64)
    want = np.clip(np.stack([v[0] * (k + 1) + v[1] for k in range(4)]), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (4, 3, 4), design=d), want)
    assert d.latency == 12 and d.capacities == {"input": 0, "hw": 0, "g": 0, "out": 0}


def test_channel_blocks_of_a_channels_first_memory_are_refused_by_name():
    """The extractor takes a stage's first two dims as its pixels' (lanes, rows): blocks of g's dim 0 would be
    taken as 2 pixels a step; refused naming the memory, its dim and the layout that works."""
    with pytest.raises(LoomError, match=r"test_streaming_blocks_in_time.py:\d+ Func 'out': create_memories: 'g' "
                                        r"carries the output's 'o' \(computed 2 a cycle\) in its dimension 0.*"
                                        r"define it channels last \(g\[x, y, \.\.\., o\]\)"):
        _channels_first(2)
