"""Reads at an index that is not affine but takes few values (``loom.streaming.muxed_reads``): a channel
concatenation, a pixel shuffle, a channel picked by data, an inlined Func read at a clamped channel. Each was
refused as non-affine indexing; now a port per value and a multiplexer in the kernel. Values bit-exact against numpy
(and the CPU path), through the memory map too; a concatenation's copies, each with its channel constant, place no
multiplexer."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Func, ImageParam, Int16, IterLevel, RDom, UInt8, Var, clamp, i16, select, u16,
                                     u8)
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.muxed_reads import MUX_LIMIT
from loom.streaming.resources import count_resources
from loom.streaming.simulate_mapped import simulate_mapped

TILE = (6, 4)
SIZE = (12, 8)


def _accelerate(out, buffered=(), streams=()):
    out.iteration_order([IterLevel("CGRA", [(Var("x"), TILE[0]), (Var("y"), TILE[1])]),
                         IterLevel("host")]).accelerate("CGRA")
    level = out.get_looplevel("CGRA", Var("x"))
    if buffered:
        out.create_memories(list(buffered), level)
    for f in streams:
        f.compute_at(level)
    return level


def _concat(na=2, nb=3, buffered=True):
    """out[c] = (cat[x, y, c] + cat[x + 1, y, c]) / 2 over cat = a's na channels then b's nb."""
    x, y, c = Var("x"), Var("y"), Var("c")
    a_in, b_in = ImageParam(UInt8, 3, "a"), ImageParam(UInt8, 3, "b")
    ha, hb, cat, out = Func("ha"), Func("hb"), Func("cat"), Func("out")
    ha[x, y, c] = u16(a_in[x, y, c])
    hb[x, y, c] = u16(b_in[x, y, c]) * 3
    cat[x, y, c] = select(c < na, ha[x, y, clamp(c, 0, na - 1)], hb[x, y, clamp(c - na, 0, nb - 1)])
    out[x, y, c] = u8((cat[x, y, c] + cat[x + 1, y, c]) >> 1)
    level = _accelerate(out, [cat] if buffered else [], [ha, hb])
    ha.unroll(c)
    hb.unroll(c)
    if not buffered:
        out.unroll(c)
    rng = np.random.default_rng(na * 10 + nb)
    a = rng.integers(0, 256, (na, SIZE[1], SIZE[0] + 1), dtype=np.uint8)
    b = rng.integers(0, 256, (nb, SIZE[1], SIZE[0] + 1), dtype=np.uint8)
    whole = np.concatenate([a.astype(np.int64), b.astype(np.int64) * 3])
    want = (((whole[:, :, :-1] + whole[:, :, 1:]) >> 1) & 0xFF).astype(np.uint8)
    return out, {"a": a, "b": b}, want, level


@pytest.mark.parametrize("na, nb", [(2, 3), (1, 4), (3, 1)])
@pytest.mark.parametrize("buffered", [True, False])
def test_a_channel_concatenation_is_bit_exact(na, nb, buffered):
    out, ins, want, _ = _concat(na, nb, buffered)
    size = (*SIZE, na + nb)
    d = build_design(out, (*TILE, na + nb))
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, ins, size), want)
    # each input's memory holds its own channels only (the clamps bound them), one value a channel per column
    assert d.regions[id(d.acc.stages["ha"].source)][2] == (0, na - 1)
    assert d.regions[id(d.acc.stages["hb"].source)][2] == (0, nb - 1)


def test_a_concatenation_s_copies_place_no_multiplexer():
    """cat's copies each have c constant: the select on c and the index compare fold, so cat is pure routing (0
    PEs), as the same pipeline reading the two halves at constant channels."""
    out, ins, want, _ = _concat(2, 3)
    d = build_design(out, (*TILE, 5))
    res = count_resources(d)
    assert res.stages["cat"].lane_pes == 0
    # the whole design: ha's conversion is a wire, hb's multiply 3 PEs, out's 5 copies of add and shift
    assert sum(s.lane_pes for s in res.stages.values()) == 3 + 5 * 2


def test_a_pixel_shuffle_reads_four_channels_through_a_multiplexer():
    """Depth to space: out[x, y] = in[x / 2, y / 2, 2 (x % 2) + y % 2]; the four channels are four ports."""
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y, c] = u16(inp[x, y, c])
    out[x, y] = u8(hw[x / 2, y / 2, (x % 2) * 2 + y % 2])
    _accelerate(out, streams=[hw])
    hw.unroll(c)
    img = np.random.default_rng(3).integers(0, 256, (4, 4, 6), dtype=np.uint8)
    yy, xx = np.mgrid[0:SIZE[1], 0:SIZE[0]]
    want = img[(xx % 2) * 2 + yy % 2, yy // 2, xx // 2]
    d = build_design(out, TILE)
    assert len(d.acc.stages["out"].reads) == 4
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, SIZE, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, SIZE), want)
    ops = count_resources(d).stages["out"].netlist.op_counts()  # x and y vary in time: the multiplexer is placed
    assert ops["arith.select"] >= 3 and ops["arith.cmpi"] >= 3


def test_a_channel_picked_by_data_reads_through_a_multiplexer():
    """out[x, y] = f[x, y, sel[x, y] & 3]: the index is data (another buffer's value), bounded by the mask."""
    x, y, c = Var("x"), Var("y"), Var("c")
    inp, s_in = ImageParam(UInt8, 3, "input"), ImageParam(UInt8, 2, "sel")
    hw, sel, out = Func("hw_input"), Func("sel_in"), Func("out")
    hw[x, y, c] = inp[x, y, c]
    sel[x, y] = s_in[x, y]
    out[x, y] = hw[x, y, sel[x, y] & 3] + hw[x + 1, y, 0]
    _accelerate(out, streams=[hw, sel])
    hw.unroll(c)
    rng = np.random.default_rng(4)
    img = rng.integers(0, 256, (4, SIZE[1], SIZE[0] + 1), dtype=np.uint8)
    s = rng.integers(0, 256, SIZE[::-1], dtype=np.uint8)
    yy, xx = np.mgrid[0:SIZE[1], 0:SIZE[0]]
    want = (img[s & 3, yy, xx].astype(np.int64) + img[0, yy, xx + 1]).astype(np.uint8)
    d = build_design(out, TILE)
    np.testing.assert_array_equal(simulate(out, {"input": img, "sel": s}, SIZE, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img, "sel": s}, SIZE), want)


def test_an_inlined_func_read_at_a_clamped_channel_is_inlined_at_each_channel():
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, scaled, out = Func("hw_input"), Func("scaled"), Func("out")
    hw[x, y, c] = u16(inp[x, y, c])
    scaled[x, y, c] = hw[x, y, c] * u16(c + 1)  # inlined into out
    out[x, y, c] = u8(scaled[x, y, clamp(c - 1, 0, 2)] >> 2)
    _accelerate(out, streams=[hw])
    hw.unroll(c)
    out.unroll(c)
    img = np.random.default_rng(5).integers(0, 256, (3, SIZE[1], SIZE[0]), dtype=np.uint8)
    src = np.clip(np.arange(4) - 1, 0, 2)
    want = ((img[src].astype(np.int64) * (src[:, None, None] + 1)) >> 2).astype(np.uint8)
    d = build_design(out, (*TILE, 4))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (*SIZE, 4), design=d), want)


def test_a_multiplexer_wider_than_the_limit_is_refused_with_the_way_out():
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y, c] = inp[x, y, c]
    out[x, y] = hw[x, y, x % (MUX_LIMIT + 1)]
    _accelerate(out, streams=[hw])
    hw.unroll(c)
    with pytest.raises(LoomError, match=rf"non-affine indexing.*interval of at most {MUX_LIMIT}"):
        build_design(out, TILE)


def test_an_unbounded_non_affine_index_is_still_refused():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y] = inp[x, y]
    out[x, y] = hw[x * y, y]
    _accelerate(out, streams=[hw])
    with pytest.raises(LoomError, match="'\\(x \\* y\\)' is not affine"):
        build_design(out, TILE)


def test_a_unet_decoder_block_upsamples_concatenates_and_convolves_bit_exact():
    """A U-Net decoder step as a user writes it: the low-resolution features up-sampled (x / 2), concatenated
    with the skip connection's channels in a memory, a 3 x 3 convolution over all of them (weights from the host)."""
    ns, nl, co = 2, 3, 2
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    skip_in, low_in, w = ImageParam(UInt8, 3, "skip"), ImageParam(UInt8, 3, "low"), ImageParam(Int16, 4, "w")
    hs, hl, cat, conv, out = Func("hw_skip"), Func("hw_low"), Func("cat"), Func("conv"), Func("out")
    hs[x, y, c] = i16(skip_in[x, y, c])
    hl[x, y, c] = i16(low_in[x, y, c])
    cat[x, y, c] = select(c < ns, hs[x, y, clamp(c, 0, ns - 1)], hl[x / 2, y / 2, clamp(c - ns, 0, nl - 1)])
    r = RDom(0, 3, 0, 3, 0, ns + nl, name="r")
    conv[x, y, o] = i16(0)
    conv[x, y, o] += w[r.x, r.y, r.z, o] * cat[x + r.x, y + r.y, r.z]
    out[x, y, o] = u8(clamp(conv[x, y, o] >> 3, 0, 255))
    _accelerate(out, [cat], [hs, hl])
    hs.unroll(c)
    hl.unroll(c)
    conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    rng = np.random.default_rng(6)
    weights = rng.integers(-3, 4, (co, ns + nl, 3, 3)).astype(np.int16)  # (o, c, ky, kx): w[kx, ky, c, o]
    skip = rng.integers(0, 256, (ns, SIZE[1] + 2, SIZE[0] + 2), dtype=np.uint8)
    low = rng.integers(0, 256, (nl, SIZE[1] // 2 + 1, SIZE[0] // 2 + 1), dtype=np.uint8)
    up = low.astype(np.int64).repeat(2, 1).repeat(2, 2)[:, :SIZE[1] + 2, :SIZE[0] + 2]
    whole = np.concatenate([skip.astype(np.int64), up])
    acc = np.zeros((co, SIZE[1], SIZE[0]), np.int64)
    for ky, kx in np.ndindex(3, 3):
        acc += np.einsum("oc,cyx->oyx", weights[:, :, ky, kx], whole[:, ky:ky + SIZE[1], kx:kx + SIZE[0]])
    want = np.clip(acc.astype(np.int16) >> 3, 0, 255).astype(np.uint8)
    ins = {"skip": skip, "low": low, "w": weights}  # numpy order reverses the Func's (kx, ky, c, o)
    size = (*SIZE, co)
    d = build_design(out, (*TILE, co))
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), want)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, ins, size), want)


@pytest.mark.parametrize("index, ok", [(lambda x, y: (y % 2, x % 8), True), (lambda x, y: (y % 4, x % 8), False)])
def test_the_limit_counts_the_values_of_all_non_affine_components_together(index, ok):
    """Two components of 2 x 8 = 16 values are one 16-input multiplexer; 4 x 8 = 32 are refused. The first tile
    (x 0-5) selects 2 x 6 of the 16 (bounds inference's region of hw_input); the second, all 8 channels, its own
    configuration."""
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y, c] = inp[x, y, c]
    iy, ic = index(x, y)
    out[x, y] = hw[x, iy, ic]
    _accelerate(out, streams=[hw])
    hw.unroll(c)
    if not ok:
        with pytest.raises(LoomError, match=rf"interval of at most {MUX_LIMIT}"):
            build_design(out, TILE)
        return
    img = np.random.default_rng(7).integers(0, 256, (8, 2, SIZE[0]), dtype=np.uint8)
    yy, xx = np.mgrid[0:SIZE[1], 0:SIZE[0]]
    d = build_design(out, TILE)
    assert len(d.acc.stages["out"].reads) == 2 * TILE[0]
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE, design=d), img[xx % 8, yy % 2, xx])


def test_printed_ir_of_a_design_whose_later_tile_selects_other_inputs_names_the_multiplexer():
    """hw[x, y, clamp(x - 5, 0, 1)]: the first 6-wide tile selects channel 0 only (its design has one port), the
    second channel 1 too. Without IR each tile gets its own configuration; the printed IR of the first describes
    only that one, which simulate says."""
    from loom.streaming.to_ubuf import design_to_ir

    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("out")
    hw[x, y, c] = inp[x, y, c]
    out[x, y] = hw[x, y, clamp(x - 5, 0, 1)]
    _accelerate(out, streams=[hw])
    hw.unroll(c)
    img = np.random.default_rng(8).integers(0, 256, (2, SIZE[1], SIZE[0]), dtype=np.uint8)
    yy, xx = np.mgrid[0:SIZE[1], 0:SIZE[0]]
    d = build_design(out, TILE)
    assert len(d.acc.stages["out"].reads) == 1
    want = img[np.clip(xx - 5, 0, 1), yy, xx]
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE, design=d), want)
    with pytest.raises(LoomError, match=r"the tile at \(6, 0\) of size \(6, 4\) needs its own design \(its "
                                        r"multiplexers select other inputs than the design's first tile\)"
                                        r".*simulate without ir="):
        simulate(out, {"input": img}, SIZE, design=d, ir=str(design_to_ir(d)))


def test_a_concatenation_under_a_global_buffer_level_is_bit_exact():
    """The same concatenation in a two-level hierarchy (a GLB tile of 2 x 1 fabric tiles, the host level realised)."""
    x, y, c = Var("x"), Var("y"), Var("c")

    def build():
        a_in, b_in = ImageParam(UInt8, 3, "a"), ImageParam(UInt8, 3, "b")
        ha, hb, cat, out = Func("ha"), Func("hb"), Func("cat"), Func("out")
        ha[x, y, c] = u16(a_in[x, y, c])
        hb[x, y, c] = u16(b_in[x, y, c])
        cat[x, y, c] = select(c < 2, ha[x, y, clamp(c, 0, 1)], hb[x, y, clamp(c - 2, 0, 0)])
        out[x, y, c] = u8((cat[x, y, c] + cat[x + 1, y, c]) >> 1)
        out.iteration_order([IterLevel("CGRA", [(x, TILE[0]), (y, TILE[1])]), IterLevel("GLB", [(x, 2), (y, 1)]),
                             IterLevel("host")]).accelerate("GLB")
        level = out.get_looplevel("CGRA", x)
        out.create_memories([cat], level)
        ha.compute_at(level)
        hb.compute_at(level)
        return out.get_memory_level("host")

    rng = np.random.default_rng(9)
    size = (4 * TILE[0], TILE[1] * 2, 3)
    a = rng.integers(0, 256, (2, size[1], size[0] + 1), dtype=np.uint8)
    b = rng.integers(0, 256, (1, size[1], size[0] + 1), dtype=np.uint8)
    whole = np.concatenate([a, b]).astype(np.int64)
    want = ((whole[:, :, :-1] + whole[:, :, 1:]) >> 1).astype(np.uint8)
    np.testing.assert_array_equal(simulate(build(), {"a": a, "b": b}, size), want)
    np.testing.assert_array_equal(run_cpu(build(), {"a": a, "b": b}, size), want)
