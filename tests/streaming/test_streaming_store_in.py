"""``store_in`` on the streaming path: the user's memory kind overrides the mapper, or is refused by name.

Thesis §3.5 / §6.4: ``store_in`` is a user decision over the memory mapper's analysis. Registers hold a buffer's
whole delay line in shift registers; a pond (a processing element's register file: Lake's 32 words, one port in,
one out, two loop levels) holds a small buffer; host memory and ROMs cannot hold a buffer the accelerator writes
during the run. Expected figures are worked out by hand from the pipelines here; values are checked against numpy.
"""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, MemoryType, UInt8, Var, u16
from loom.streaming import build_design, simulate
from loom.streaming.memory_map import map_memories
from loom.streaming.memory_tile import AMBER_MEMORY_TILE
from loom.streaming.report import design_report
from loom.streaming.simulate_mapped import MappedSimulation, simulate_mapped
from tests.fuzz.accel_mutator import FUZZ_SCALE
from tests.streaming.test_streaming_fuzz_rates import extents, loom_pipeline, np_pipeline, pipeline
from tests.streaming.test_streaming_outer_reductions import _func, conv3x3

x, y, xo, yo, xi, yi = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
TILE_W, TILE_H = 16, 8


def window(kind=None, streamed=False):
    """out = hw(x, y) + hw(x + 2, y) + hw(x + 1, y + 2), hw stored in ``kind``."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = hw[x, y] + hw[x + 2, y] + hw[x + 1, y + 2]
    out.tile(x, y, xo, yo, xi, yi, TILE_W, TILE_H).hw_accelerate(xi, xo)
    if streamed:
        hw.stream_to_accelerator()
    else:
        hw.compute_at(out, xo)
    if kind:
        hw.store_in(kind)
    return out


def np_window(img, w, h):
    p = img.astype(np.uint16)
    return p[:h, :w] + p[:h, 2:w + 2] + p[2:h + 2, 1:w + 1]


def row_later(width, kind=None):
    """a(x, y) read one row later than it is written: out = a(x, y) + b(x, y + 1); a stored in ``kind``."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    a, b, out = Func("a"), Func("b"), Func("output")
    a[x, y] = hw[x, y] * 2
    b[x, y] = hw[x, y] + 1
    out[x, y] = a[x, y] + b[x, y + 1]
    out.tile(x, y, xo, yo, xi, yi, width, TILE_H).hw_accelerate(xi, xo)
    for f in (hw, a, b):
        f.compute_at(out, xo)
    if kind:
        a.store_in(kind)
    return out


def image(h, w):
    return np.random.default_rng(7).integers(0, 256, (h, w), dtype=np.uint8)


def test_registers_hold_the_whole_delay_line_and_replay_bit_exact():
    # hw rows are TILE_W + 2 wide: the taps sit 0, 2 (W + 2) - 1 and 2 (W + 2) + 1 values back
    deepest = 2 * (TILE_W + 2) + 1
    default = map_memories(build_design(window(), (TILE_W, TILE_H))).buffers["hw_input"]
    assert (default.shift_registers, default.line_delays, default.mem_tiles) == (2, [deepest - 2], 1)
    out = window(MemoryType.Register)
    mapped = map_memories(build_design(out, (TILE_W, TILE_H))).buffers["hw_input"]
    assert (mapped.shift_registers, mapped.line_delays, mapped.mem_tiles) == (deepest, [], 0)
    assert "Register" in mapped.note
    img = image(2 * TILE_H + 2, 2 * TILE_W + 2)
    report = MappedSimulation()
    got = simulate_mapped(out, {"input": img}, (2 * TILE_W, 2 * TILE_H), report=report)
    np.testing.assert_array_equal(got, np_window(img, 2 * TILE_W, 2 * TILE_H))
    assert report.replayed_reads.get("hw_input", 0) > 0


def test_memory_tile_is_the_mappers_own_choice():
    a = map_memories(build_design(window(), (TILE_W, TILE_H))).buffers["hw_input"]
    b = map_memories(build_design(window(MemoryType.MemoryTile), (TILE_W, TILE_H))).buffers["hw_input"]
    assert (a.shift_registers, a.line_delays, a.mem_tiles) == (b.shift_registers, b.line_delays, b.mem_tiles)


def test_a_small_buffer_goes_to_a_pond():
    out = row_later(TILE_W, MemoryType.Pond)
    d = build_design(out, (TILE_W, TILE_H))
    assert d.capacities["a"] <= 32  # about one row of a
    mm = map_memories(d)
    assert (mm.buffers["a"].kind, mm.buffers["a"].ponds, mm.buffers["a"].mem_tiles) == ("pond", 1, 0)
    assert mm.ponds == 1
    plain = map_memories(build_design(row_later(TILE_W), (TILE_W, TILE_H)))
    assert plain.buffers["a"].mem_tiles == 1 and plain.ponds == 0  # the mapper alone puts the row in a tile
    assert "ponds: 1" in design_report(d, "output").resources.table()
    img = image(2 * TILE_H + 1, 2 * TILE_W)
    p = img.astype(np.uint16)
    want = p[:2 * TILE_H] * 2 + p[1:2 * TILE_H + 1] + 1
    np.testing.assert_array_equal(simulate(out, {"input": img}, (2 * TILE_W, 2 * TILE_H)), want)


def test_a_buffer_a_pond_cannot_hold_is_refused_with_every_reason():
    wide = 40  # a row of 40 values
    with pytest.raises(LoomError, match=r"buffer 'a'.*pond.*holds \d+ values and a pond 32.*memory tile"):
        map_memories(build_design(row_later(wide, MemoryType.Pond), (wide, TILE_H)))
    with pytest.raises(LoomError, match=r"buffer 'hw_input'.*pond.*holds 37 values and a pond 32; its reads "
                                        r"take 3 values a cycle and a pond has one output port"):
        map_memories(build_design(window(MemoryType.Pond), (TILE_W, TILE_H)))


def test_registers_refuse_a_buffer_mapped_to_an_addressed_memory():
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = hw[2 * x, y] + hw[2 * x + 1, y]  # a down-sampling read: an addressed memory
    out.tile(x, y, xo, yo, xi, yi, 8, 4).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    d = build_design(out, (8, 4))
    assert map_memories(d).buffers["hw_input"].kind == "addressed memory"
    hw.store_in(MemoryType.Register)
    with pytest.raises(LoomError, match=r"buffer 'hw_input'.*registers.*an addressed memory, not to taps of a "
                                        r"delay line \(port of 'output': a down- or up-sampling read.*memory tile"):
        map_memories(build_design(out, (8, 4)))


@pytest.mark.parametrize("kind, said", [(MemoryType.Host, "host memory"), (MemoryType.ROM, "a ROM")])
@pytest.mark.parametrize("streamed", [False, True])
def test_host_and_rom_cannot_hold_an_accelerator_buffer(kind, said, streamed):
    how = "streamed into the accelerator" if streamed else "computed on the accelerator"
    with pytest.raises(LoomError, match=rf"Func 'hw_input': is stored in {said} \(store_in\(MemoryType.{kind}\)\) "
                                        rf"but {how}.*drop store_in") as e:
        build_design(window(kind, streamed), (TILE_W, TILE_H))
    assert e.value.construct == "store_in"


# random pipelines (the rate fuzzer's): every delay line moved wholly into registers, and every small buffer into a
# pond, replays bit-exact through its taps, or the pond is refused by buffer name

SEEN = {"registers": 0, "pond": 0, "pond refused": 0}


def _with_hints(p):
    out = loom_pipeline(p)
    try:
        d = build_design(out, p.tile)
    except LoomError:
        return
    default = map_memories(d)
    hinted = {}
    for name, mb in default.buffers.items():
        src = d.stages[name].node.source
        if name == out.name or not isinstance(src, Func) or name not in d.buffers:
            continue
        if mb.kind in ("delay line", "vector delay line"):
            src.store_in(MemoryType.Register)
            hinted[name] = ("registers", mb)
        elif (d.capacities.get(name) or 0) <= 32:
            src.store_in(MemoryType.Pond)
            hinted[name] = ("pond", mb)
    if not hinted:
        return
    d2 = build_design(out, p.tile)
    try:
        mm = map_memories(d2)
    except LoomError as e:
        assert e.construct == "store_in" and "pond" in e.message, e.message
        assert any(e.where == f"buffer '{n}'" and k == "pond" for n, (k, _) in hinted.items()), e.where
        SEEN["pond refused"] += 1
        return
    for name, (kind, before) in hinted.items():
        mb = mm.buffers[name]
        if kind == "registers":
            assert mb.mem_tiles == 0 and mb.line_delays == [] and mb.taps == before.taps
            assert mb.shift_registers == max(mb.taps) * mb.width
        else:
            assert (mb.kind, mb.ponds, mb.mem_tiles) == ("pond", 1, 0)
        SEEN[kind] += 1
    size = (2 * p.tile[0], 2 * p.tile[1])
    w, h = extents(p, size)[0]
    img = np.random.default_rng(3).integers(0, 1 << (16 if p.in_u16 else 8), (h, w))
    img = img.astype(np.uint16 if p.in_u16 else np.uint8)
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, size, design=d2, memory_map=mm),
                                  np_pipeline(p, img, size))


@settings(max_examples=30 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(p=pipeline())
def _fuzz_hints(p):
    _with_hints(p)


def test_random_pipelines_with_registers_and_ponds_replay_bit_exact():
    for k in SEEN:
        SEEN[k] = 0
    _fuzz_hints()
    assert SEEN["registers"] > 0 and SEEN["pond"] > 0 and SEEN["pond refused"] > 0, SEEN
    if FUZZ_SCALE > 1:
        print(SEEN)


# a reduction iterated in time: store_in places its partial sums (the storage its update reads and writes)

def _gemm_row(kind=None):
    """gemm on 8 x 1 tiles, one MAC a cycle: each point's 8 partial sums in one slot, 2 loops (points, r)."""
    from loom.examples.pipelines import gemm

    p = gemm.algorithm()
    gemm.accel_schedule(p, tile=(8, 1), k_unroll=1)
    if kind:
        p["prod"].store_in(kind)
    return p["output"]


def test_a_pond_holds_a_reductions_partial_sums():
    d = build_design(_gemm_row(MemoryType.Pond), (8, 1))
    assert d.accumulators["prod_acc"].capacity == 1
    mm = map_memories(d)
    acc, plain = mm.buffers["prod_acc"], map_memories(build_design(_gemm_row(), (8, 1))).buffers["prod_acc"]
    assert (plain.kind, plain.ponds) == ("accumulation register", 0)
    assert (acc.kind, acc.ponds, acc.shift_registers, acc.mem_tiles) == ("accumulation pond", 1, 0, 0)
    assert mm.ponds == 1 and "ponds: 1" in design_report(d, "output").resources.table()
    # the stage's final values keep the mapper's choice
    assert mm.buffers["prod"].kind == map_memories(build_design(_gemm_row(), (8, 1))).buffers["prod"].kind
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 256, (1, 8), dtype=np.uint8), rng.integers(0, 256, (8, 8), dtype=np.uint8)
    got = simulate(_gemm_row(MemoryType.Pond), {"A": a, "B": b}, (8, 1))
    np.testing.assert_array_equal(got, a.astype(np.uint32) @ b.astype(np.uint32))


def test_partial_sums_a_pond_cannot_walk_or_hold_are_refused_with_every_reason():
    # weight stationary on 6 x 4: all 24 partial sums live (they fit 32 words), but the write port walks x, y
    # (rows 8 cycles apart: not one raster loop) and the merged 27 taps x channels: 3 loops against the pond's 2
    out = conv3x3((6, 4), 3, 1, "weight stationary")
    _store(out, "conv", MemoryType.Pond)
    d = build_design(out, (6, 4))
    assert d.accumulators["conv_acc"].capacity == 24
    with pytest.raises(LoomError, match=r"buffer 'conv_acc'.*pond.*iterate 3 loop levels and a pond's address "
                                        r"generators 2.*memory tile") as e:
        map_memories(d)
    assert "values" not in str(e.value)
    three = map_memories(d, tile=replace(AMBER_MEMORY_TILE, pond_loop_levels=3)).buffers["conv_acc"]
    assert (three.kind, three.ponds) == ("accumulation pond", 1)
    out = conv3x3((8, 6), 3, 1, "weight stationary")
    _store(out, "conv", MemoryType.Pond)
    with pytest.raises(LoomError, match=r"holds 48 values and a pond 32; its ports iterate 3 loop levels"):
        map_memories(build_design(out, (8, 6)))


def test_registers_hold_partial_sums_the_mapper_would_put_in_a_memory():
    plain = map_memories(build_design(conv3x3((6, 4), 3, 1, "weight stationary"), (6, 4)))
    assert plain.buffers["conv_acc"].kind == "accumulation memory"  # 24 sums, more than 4 shift registers
    out = conv3x3((6, 4), 3, 1, "weight stationary")
    _store(out, "conv", MemoryType.Register)
    mm = map_memories(build_design(out, (6, 4)))
    acc = mm.buffers["conv_acc"]
    assert (acc.kind, acc.shift_registers, acc.mem_tiles) == ("accumulation register", 24, 0)
    assert mm.buffers["conv"].kind == plain.buffers["conv"].kind


def _store(out, name, kind):
    _func(out, name).store_in(kind)
