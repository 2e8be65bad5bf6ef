"""Memory mapping: thesis Table 5.3 (cascade without sharing: 12 shift registers, 2 MEMs) and tile chaining."""

import numpy as np

from tests.streaming.streaming_apps import example, references

from loom.streaming import MappedSimulation, build_design, map_memories, simulate_mapped


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


def _harris_with_box_sum_in_time():
    """harris at 1 output per 9 cycles: lgxx's 3x3 box sum iterated in time, every other reduction unrolled."""
    from loom.frontends.pipeline.recipes import stream_through_accelerator
    a = example("harris").algorithm()
    stages = ("hw_input", "grad_x", "grad_y", "lgxx", "lgyy", "lgxy", "cim")
    sums = ("grad_x_unclamp", "grad_y_unclamp", "lgyy", "lgxy")
    stream_through_accelerator(a["output"], (58, 58), buffered=[a[n] for n in stages],
                               reductions=[a[n] for n in sums])
    return a["output"], build_design(a["output"], (58, 58))


def test_a_reduction_in_time_maps_live_values_not_cycles():
    out, d = _harris_with_box_sum_in_time()
    assert d.reduction_cycles == 9
    m = map_memories(d)
    # every stage writes once per 9 cycles: the 3x3 window on the 64-wide hw_input is 9x its taps in cycles,
    # but holds the values of 2 rows + 2 pixels, 130, as at one value per cycle
    hw = m.buffers["hw_input"]
    assert hw.tap_cycles == [9 * t for t in (0, 1, 2, 64, 65, 66, 128, 129, 130)]
    assert hw.taps == [0, 1, 2, 64, 65, 66, 128, 129, 130]
    assert hw.shift_registers == 6 and hw.line_delays == [62, 62] and hw.mem_tiles == 1
    assert hw.shift_registers + sum(hw.line_delays) == 2 * 64 + 2 == d.capacities["hw_input"]
    # cim (60 x 60 values for the 3x3 non-maximum suppression of a 58 x 58 output): 2 rows of 60 + 2
    cim = m.buffers["cim"]
    assert cim.shift_registers + sum(cim.line_delays) == 2 * 60 + 2 == d.capacities["cim"]
    assert cim.mem_tiles == 1
    # the chains, shifting on writes, deliver every operand: the mapped simulation is bit-exact
    img = np.random.default_rng(2).integers(0, 256, (64, 64), dtype=np.uint8)
    report = MappedSimulation()
    got = simulate_mapped(out, {"input": img}, (58, 58), design=d, memory_map=m, report=report)
    np.testing.assert_array_equal(got, references.harris(img, 58, 58))
    assert report.replayed_reads["hw_input"] > 0 and report.replayed_reads["cim"] > 0


def test_value_delay_counts_writes_not_cycles():
    from loom.streaming.memory_map import value_delay
    _, d = _harris_with_box_sum_in_time()
    plan = d.stages["cim"]  # 60 values a row, one every 9 cycles, rows 9 * 64 cycles apart
    assert plan.schedule.strides == (9, 9 * 64)
    assert value_delay(plan, 9) == 1 and value_delay(plan, 8) == 0 and value_delay(plan, 0) == 0
    assert value_delay(plan, 9 * 64) == 60  # one row later: the 60 values of a row, whatever the phase
    assert value_delay(plan, 9 * 3) == 3  # 3 writes ahead within a row
    assert value_delay(plan, 9 * 64 - 1) == 59  # the rest of a row and the next up to the same x, excluded


def test_a_producer_writing_in_bursts_keeps_its_taps_in_cycles():
    """Line-interleaved sharing: conv1 writes a line, then idles through conv2's slot, so how many values it
    wrote between a value and its read depends on the pixel: its delay line shifts every cycle. hw_input writes
    64 values per 126-cycle row at fixed depths: its taps count values."""
    out, _ = example("cascade").build("accel", tile=(60, 60), share="line")
    d = build_design(out, (60, 60))
    m = map_memories(d)
    conv1, hw = m.buffers["conv1"], m.buffers["hw_input"]
    assert conv1.taps == conv1.tap_cycles == [62, 63, 64, 188, 189, 190, 314, 315, 316]
    assert conv1.shift_on == "cycle" and hw.shift_on == "write"
    assert hw.tap_cycles == [0, 1, 2, 126, 127, 128, 252, 253, 254]
    assert hw.taps == [0, 1, 2, 64, 65, 66, 128, 129, 130] and hw.shift_registers + sum(hw.line_delays) == 130
    img = np.random.default_rng(8).integers(0, 256, (64, 64), dtype=np.uint8)
    got = simulate_mapped(out, {"input": img}, (60, 60), design=d, memory_map=m)
    np.testing.assert_array_equal(got, references.cascade(img, 60, 60))
