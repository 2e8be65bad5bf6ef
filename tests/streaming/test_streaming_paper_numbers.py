"""The thesis numbers: cascade Table 4.1 on 64x64 and harris stage offsets, checked exactly.

Capacities are also recomputed here by brute force, cycle by cycle, straight
from the schedule formulas printed in Table 4.1 (not from loom's code).
"""

import islpy as isl
import pytest

from tests.streaming.streaming_apps import example

from loom.streaming import build_design


def cascade_design(size=(60, 60)):
    out, _ = example("cascade").build("accel", tile=size)
    return build_design(out, size)


def test_cascade_table_4_1():
    d = cascade_design()
    assert d.offsets == {"input": 0, "hw_input": 0, "conv1": 130, "output": 260}
    assert d.capacities == {"input": 0, "hw_input": 130, "conv1": 126, "output": 0}
    assert d.latency == 4096
    hw = d.buffers["hw_input"]
    assert len(hw.read_ports) == 9 and all(p.count == 62 * 62 == 3844 for p in hw.read_ports)
    assert hw.write_ports[0].domain_text() == "0 <= x <= 63 and 0 <= y <= 63"
    assert hw.write_ports[0].schedule_text() == "64y + x"
    assert {p.schedule_text() for p in hw.read_ports} == {"130 + 64y + x"}
    assert {p.access_text("hw_input") for p in hw.read_ports} == {
        f"hw_input({'' if dx == 0 else f'{dx} + '}x, {'' if dy == 0 else f'{dy} + '}y)"
        for dx in range(3) for dy in range(3)}
    conv1 = d.buffers["conv1"]
    assert conv1.read_ports[0].domain_text() == "0 <= x <= 59 and 0 <= y <= 59"
    assert {p.schedule_text() for p in conv1.read_ports} == {"260 + 64y + x"}
    assert d.buffers["output"].kind == "wire" and d.buffers["input"].kind == "wire"
    table = d.table()
    assert "hw_input  conv1#8" in table and "latency: 4096 cycles" in table


def test_cascade_isl_objects():
    d = cascade_design()
    port = d.buffers["hw_input"].read_ports[-1]
    dom = port.domain
    assert dom.count_val().to_python() == 3844
    assert dom.is_equal(isl.Set("{ conv1_out[x, y] : 0 <= x <= 61 and 0 <= y <= 61 }"))
    acc = port.access_map
    assert acc.range().is_equal(isl.Set("{ buf[x, y] : 2 <= x <= 63 and 2 <= y <= 63 }"))
    sched = port.schedule_map
    assert sched.range().lexmax().is_equal(isl.Set("{ [130 + 64 * 61 + 61] }"))


def _brute_force_capacity(write, reads, w_dom, r_dom, offsets):
    """Live values per cycle: written at write(p) and read for the last time at max over ports."""
    last = {}
    wt = {}
    for y in range(w_dom[1]):
        for x in range(w_dom[0]):
            wt[(x, y)] = write(x, y)
            last[(x, y)] = write(x, y)
    for y in range(r_dom[1]):
        for x in range(r_dom[0]):
            for dx, dy in offsets:
                q = (x + dx, y + dy)
                last[q] = max(last[q], reads(x, y))
    end = max(last.values()) + 1
    delta = [0] * (end + 1)
    for q, t in wt.items():
        if last[q] > t:
            delta[t] += 1
            delta[last[q]] -= 1
    live, best = 0, 0
    for v in delta:
        live += v
        best = max(best, live)
    return best


def test_cascade_capacities_by_brute_force_from_table_formulas():
    offsets = [(dx, dy) for dx in range(3) for dy in range(3)]
    hw = _brute_force_capacity(lambda x, y: 64 * y + x, lambda x, y: 130 + 64 * y + x, (64, 64), (62, 62), offsets)
    c1 = _brute_force_capacity(lambda x, y: 130 + 64 * y + x, lambda x, y: 260 + 64 * y + x, (62, 62), (60, 60),
                               offsets)
    assert (hw, c1) == (130, 126)
    assert cascade_design().capacities["hw_input"] == hw


def test_harris_stage_offsets():
    out, _ = example("harris").build("accel", tile=(58, 58))
    d = build_design(out, (58, 58))
    off = d.offsets
    assert off["hw_input"] == 0
    assert off["grad_x"] == off["grad_y"] == 130
    assert off["lgxx"] == off["lgyy"] == off["lgxy"] == off["cim"] == 260
    assert off["output"] == 390
    assert d.latency == 390 + 64 * 57 + 57 + 1
    # each delay is D = sum_i l_i d_i with d = 2 per dimension of a 3x3 stencil, l = (1, 64)
    assert 130 == 1 * 2 + 64 * 2


@pytest.mark.parametrize("w, h", [(60, 60), (61, 37), (100, 20)])
def test_cascade_general_sizes_follow_closed_form(w, h):
    d = cascade_design((w, h))
    row = w + 4
    assert d.offsets["conv1"] == 2 * row + 2 and d.offsets["output"] == 2 * (2 * row + 2)
    assert d.capacities["hw_input"] == 2 * row + 2
    assert d.capacities["conv1"] == 2 * (w + 2) + 2
    assert d.latency == d.offsets["output"] + row * (h - 1) + (w - 1) + 1
