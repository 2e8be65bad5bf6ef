"""Mapped-design simulation: delay-line buffers replayed through their taps equal the unified buffers."""

import copy

import numpy as np
import pytest
from tests.streaming.streaming_apps import example, references

from loom.errors import LoomError
from loom.streaming import build_design, map_memories
from loom.streaming.simulate_mapped import MappedSimulation, simulate_mapped

SIZE = (20, 12)


def _image(mod, seed=0):
    return np.random.default_rng(seed).integers(0, 256, mod.input_shape(SIZE), dtype=np.uint8)


@pytest.mark.parametrize("name", ["gaussian", "cascade", "harris"])
def test_mapped_simulation_is_bit_exact(name):
    mod = example(name)
    out, _ = mod.build("accel", tile=SIZE)
    img = _image(mod)
    report = MappedSimulation()
    got = simulate_mapped(out, {"input": img}, SIZE, report=report)
    np.testing.assert_array_equal(got, getattr(references, name)(img, *SIZE))
    w, h = SIZE
    if name == "cascade":  # 9 taps x conv1's (w+2)x(h+2) domain, 9 taps x the output's w x h
        assert report.replayed_reads["hw_input"] == 9 * (w + 2) * (h + 2)
        assert report.replayed_reads["conv1"] == 9 * w * h
        assert report.memory_map.buffers["hw_input"].kind == "delay line"


@pytest.mark.parametrize("name", ["unsharp", "conv_layer"])
def test_multi_lane_delay_lines(name):
    # channels unrolled in space: each cycle moves one value per lane through the line
    mod = example(name)
    out, _ = mod.build("accel", tile=SIZE)
    img = _image(mod, 1)
    report = MappedSimulation()
    channels = 3 if name == "unsharp" else mod.CO
    got = simulate_mapped(out, {"input": img}, SIZE + (channels,), report=report)
    w, h = SIZE
    if name == "conv_layer":
        want = references.conv_layer(img, w, h, mod.weights())
        # every output pixel of every output channel reads 3x3 taps of all 3 input channels
        assert report.replayed_reads["hw_input"] == 27 * w * h * mod.CO
    else:
        want = references.unsharp(img, w, h)
    assert report.memory_map.buffers["hw_input"].width == 3
    np.testing.assert_array_equal(got, want)


def test_a_tampered_mapping_is_caught():
    mod = example("cascade")
    out, _ = mod.build("accel", tile=SIZE)
    d = build_design(out, SIZE)
    good = map_memories(d)
    short = copy.deepcopy(good)
    short.buffers["hw_input"].line_delays[-1] -= 1
    # input rows are w + 4 = 24 cycles: taps 0..2, 24..26, 48..50 = 2 lines of 22 + 6 shift registers
    assert good.buffers["hw_input"].taps == [0, 1, 2, 24, 25, 26, 48, 49, 50]
    with pytest.raises(LoomError, match="buffer 'hw_input'.*line delays \\[22, 21\\] \\(49 values\\) but its "
                                        "deepest tap is 50 values"):
        simulate_mapped(out, {"input": _image(mod)}, SIZE, design=d, memory_map=short)
    missing = copy.deepcopy(good)
    # conv1 is produced at input rate, 22 values a 24-cycle row: its taps are 22 values (not 24 cycles) apart
    assert missing.buffers["conv1"].tap_cycles == [0, 1, 2, 24, 25, 26, 48, 49, 50]
    assert missing.buffers["conv1"].taps == [0, 1, 2, 22, 23, 24, 44, 45, 46]
    missing.buffers["conv1"].tap_cycles.remove(25)  # the chain length stays consistent: only the tap is wrong
    missing.buffers["conv1"].taps.remove(23)
    with pytest.raises(LoomError, match="buffer 'conv1'.*needs a tap at 25 cycles"):
        simulate_mapped(out, {"input": _image(mod)}, SIZE, design=d, memory_map=missing)
    shallow = copy.deepcopy(good)
    shallow.buffers["conv1"].taps[4] -= 1  # the 25-cycle tap one value too shallow
    with pytest.raises(LoomError, match="buffer 'conv1'.*tap 25 cycles = 22 values deep, but .* written 23 writes"):
        simulate_mapped(out, {"input": _image(mod)}, SIZE, design=d, memory_map=shallow)


def test_mapping_of_another_design_is_caught():
    # a mapping built for 21-pixel-wide tiles (input rows of 25 cycles) on the 20-wide design
    mod = example("cascade")
    out, _ = mod.build("accel", tile=SIZE)
    other, _ = mod.build("accel", tile=(21, 12))
    mm = map_memories(build_design(other, (21, 12)))
    with pytest.raises(LoomError, match="buffer 'hw_input'.*needs a tap at (24|26|48|49) cycles but the mapped delay line "
                                        "has taps at \\[0, 1, 2, 25, 26, 27, 50, 51, 52\\] cycles"):
        simulate_mapped(out, {"input": _image(mod)}, SIZE, memory_map=mm)
