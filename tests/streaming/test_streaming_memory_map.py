"""Memory mapping: thesis Table 5.3 (cascade without sharing: 12 shift registers, 2 MEMs) and tile chaining."""

from tests.streaming.streaming_apps import example

from loom.streaming import build_design, map_memories


def test_cascade_table_5_3_no_sharing():
    out, _ = example("cascade").build("accel", tile=(60, 60))
    m = map_memories(build_design(out, (60, 60)))
    assert (m.shift_registers, m.mem_tiles) == (12, 2)
    hw = m.buffers["hw_input"]
    # a 3x3 window: taps at 0..2, 64..66, 128..130 cycles = 2 line delays + 2x3 shift registers
    assert hw.taps == [0, 1, 2, 64, 65, 66, 128, 129, 130]
    assert hw.line_delays == [62, 62] and hw.shift_registers == 6
    assert m.buffers["input"].kind == "wire" and m.buffers["output"].kind == "wire"


def test_long_lines_chain_memory_tiles():
    out, _ = example("gaussian").build("accel", tile=(1920, 1080))
    m = map_memories(build_design(out, (1920, 1080)))
    hw = m.buffers["hw_input"]
    assert hw.line_delays == [1920, 1920]
    assert hw.mem_tiles == 2  # 3840 words > one 2048-word tile


def test_reuse_across_time_needs_addressed_memory():
    out, _ = example("gemm").build("accel", tile=(16, 16))
    d = build_design(out, (16, 16))
    m = map_memories(d)
    # K = 8 unrolled: 8 values of B read per cycle; a tile has 2 output ports -> banked over 4 tiles
    assert m.buffers["hw_b"].kind == "addressed memory" and m.buffers["hw_b"].mem_tiles == 4
    assert d.capacities["hw_b"] == 16 * 8


def test_lanes_widen_registers():
    out, _ = example("unsharp").build("accel", tile=(58, 58))
    m = map_memories(build_design(out, (58, 58, 3)))
    hw = m.buffers["hw_input"]
    assert hw.width == 3 and hw.taps == [0, 195] and hw.line_delays == [195]
    gray = m.buffers["gray"]
    assert len(gray.taps) == 49 and gray.shift_registers == 7 * 6 and len(gray.line_delays) == 6
