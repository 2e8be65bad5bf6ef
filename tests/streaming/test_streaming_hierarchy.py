"""Thesis Code 3.6: a global-buffer (GLB) tile feeding fabric tiles (two-level memory hierarchy).

The fabric's design must be thesis Table 4.1 (the memory-tile copy of the input holds 130 values, conv1 126,
latency 4096 cycles on a 60x60 fabric tile); the simulation walks GLB tiles, then fabric tiles inside each,
and must equal an independent numpy cascade bit for bit.
"""

import numpy as np
import pytest

from tests.streaming.streaming_apps import example, references

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, MemoryType, RDom, UInt8, Var, u16
from loom.streaming import Accelerator, SimulationStats, build_design, map_memories, simulate


def _code_3_6(glb=(120, 120), tile=(60, 60)):
    return example("cascade").build("accel", tile=tile, glb_tile=glb)


def test_code_3_6_fabric_is_table_4_1():
    out, _ = _code_3_6()
    acc = Accelerator(out)
    assert acc.glb is not None and acc.glb.func is out and acc.func.name == "output"
    assert [b.name for b in acc.glb.buffers] == ["hw_input_in"]
    assert {n: s.kind for n, s in acc.stages.items()} == {
        "hw_input_in": "stream", "hw_input_in_in": "compute", "conv1": "compute", "output": "compute"}
    d = build_design(acc, (60, 60))
    assert d.offsets == {"hw_input_in": 0, "hw_input_in_in": 0, "conv1": 130, "output": 260}
    assert d.capacities == {"hw_input_in": 0, "hw_input_in_in": 130, "conv1": 126, "output": 0}
    assert d.latency == 4096
    assert d.buffers["hw_input_in_in"].memory_type == MemoryType.MemoryTile
    assert d.buffers["output"].memory_type == MemoryType.GLB
    m = map_memories(d)
    assert (m.shift_registers, m.mem_tiles) == (12, 2)  # as the single-level cascade (Table 5.3)


@pytest.mark.parametrize("image, glb, tile", [((240, 180), (120, 120), (60, 60)), ((100, 70), (48, 40), (24, 20))])
def test_code_3_6_simulates_bit_exact(image, glb, tile):
    out, _ = _code_3_6(glb, tile)
    w, h = image
    rng = np.random.default_rng(36)
    img = rng.integers(0, 256, size=(h + 4, w + 4), dtype=np.uint8)
    stats = SimulationStats()
    got = simulate(out, {"input": img}, image, stats=stats)
    np.testing.assert_array_equal(got, references.cascade(img, w, h))
    glb_tiles = -(-w // glb[0]) * -(-h // glb[1])
    per_glb = -(-min(glb[0], w) // tile[0]) * -(-min(glb[1], h) // tile[1])
    assert stats.tiles == glb_tiles * per_glb  # the fabric runs inside every GLB tile


def test_glb_level_func_that_computes_is_refused():
    x, y, xo, yo, xi, yi, xio, yio, xii, yii = (Var(n) for n in "x y xo yo xi yi xio yio xii yii".split())
    inp = ImageParam(UInt8, 2, "input")
    hw_input, scaled, g = Func("hw_input"), Func("scaled"), Func("g")
    hw_input[x, y] = u16(inp[x, y])
    scaled[x, y] = hw_input[x, y] * 2
    r = RDom(0, 3, 0, 3, name="r")
    g[x, y] = u16(0)
    g[x, y] += scaled[x + r.x, y + r.y]
    top = g.in_()
    top.compute_root().tile(x, y, xo, yo, xi, yi, 32, 32).hw_accelerate(xi, xo)
    g.tile(x, y, xio, yio, xii, yii, 16, 16).compute_at(top, xo)
    g.update().unroll(r.x).unroll(r.y)
    scaled.compute_at(top, xo)
    hw_input.in_().compute_at(g, xio)  # a fabric stage: g is the fabric inside the GLB tile
    hw_input.accelerator_input()
    with pytest.raises(LoomError, match=r"Func 'scaled'.*global-buffer level.*not a copy"):
        Accelerator(top)


def test_fabric_output_must_be_copied_out():
    x, y, xo, yo, xi, yi, xio, yio, xii, yii = (Var(n) for n in "x y xo yo xi yi xio yio xii yii".split())
    inp = ImageParam(UInt8, 2, "input")
    hw_input, g, top = Func("hw_input"), Func("g"), Func("top")
    hw_input[x, y] = u16(inp[x, y])
    g[x, y] = hw_input[x, y] + hw_input[x + 1, y]
    top[x, y] = g[x, y] * 3  # computes: not a copy of g
    top.tile(x, y, xo, yo, xi, yi, 32, 32).hw_accelerate(xi, xo)
    g.tile(x, y, xio, yio, xii, yii, 16, 16).compute_at(top, xo)
    hw_input.in_().compute_at(g, xio)
    hw_input.accelerator_input()
    with pytest.raises(LoomError, match=r"Func 'top'.*must be its copy.*in_\(\)\.hw_accelerate"):
        Accelerator(top)


def test_fabric_output_with_an_update_simulates_bit_exact():
    """The copy of a Func with an update reads its finished values; its update reads the Func itself."""
    x, y, xo, yo, xi, yi, xio, yio, xii, yii = (Var(n) for n in "x y xo yo xi yi xio yio xii yii".split())
    inp = ImageParam(UInt8, 2, "input")
    hw_input, g = Func("hw_input"), Func("g")
    hw_input[x, y] = u16(inp[x, y])
    r = RDom(0, 3, 0, 3, name="r")
    g[x, y] = u16(1)
    g[x, y] += hw_input[x + r.x, y + r.y]
    top = g.in_()
    top.compute_root().tile(x, y, xo, yo, xi, yi, 32, 24).hw_accelerate(xi, xo)
    g.tile(x, y, xio, yio, xii, yii, 16, 12).compute_at(top, xo).store_in(MemoryType.GLB)
    g.update().unroll(r.x).unroll(r.y)
    hw_input.in_().in_().compute_at(g, xio)
    hw_input.in_().compute_at(top, xo).store_in(MemoryType.GLB)
    hw_input.accelerator_input()
    img = np.random.default_rng(7).integers(0, 256, size=(50, 66), dtype=np.uint8)
    want = 1 + sum(img[dy:dy + 48, dx:dx + 64].astype(np.uint16) for dy in range(3) for dx in range(3))
    np.testing.assert_array_equal(simulate(top, {"input": img}, (64, 48)), want)


@pytest.mark.sanitize
def test_cli_runs_code_3_6_and_reports_the_glb_level(capsys):
    """The design, its simulation, and the Code 3.6 schedule itself compiled to C, all equal to evaluate."""
    from loom.cli import main

    assert main(["pipeline", "cascade", "--size", "30x20", "--glb-tile", "60x40", "--schedule", "accel"]) == 0
    out = capsys.readouterr().out
    assert "GLB tile 60x40: 4 fabric tiles of 30x20" in out
    assert "hw_input_in: 64x44 = 2816 words" in out and "output: 60x40 = 2400 words" in out
    assert out.count("yes (bit-exact)") == 3
    assert main(["pipeline", "gaussian", "--size", "30x20", "--glb-tile", "60x40"]) == 1
    assert "app 'gaussian' has no two-level (GLB) schedule" in capsys.readouterr().err
