"""Thesis Code 3.8: output-side memory levels. The output leaves the fabric through a memory-tile level (the
fabric's output stage), is held in the GLB (``output.in_()``, one GLB tile) and copied to the host
(``output.in_().in_()``), built by ``iteration_order([fabric, GLB, host])`` or written out by hand.

Values are checked against numpy / the CPU evaluation; the separable blur's capacities, offsets, MEMs and
latency are derived by hand in its test."""

import numpy as np
import pytest

from tests.streaming.streaming_apps import example, references

from loom.errors import LoomError
from loom.frontends.pipeline import (Func, ImageParam, IterLevel, LoopLevel, MemoryType, RDom, UInt8, Var,
                                     evaluate, u16)
from loom.streaming import Accelerator, build_design, map_memories, simulate
from loom.streaming.report import glb_summary


def _separable(fabric=(20, 12), counts=(2, 2), levels=None):
    """A 1-2-1 blur along x, then along y (u16), scheduled with three output levels (not a shipped app)."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_in, bx, by = Func("hw_in"), Func("blur_x"), Func("blur_y")
    hw_in[x, y] = u16(inp[x, y])
    bx[x, y] = hw_in[x, y] + 2 * hw_in[x + 1, y] + hw_in[x + 2, y]
    by[x, y] = bx[x, y] + 2 * bx[x, y + 1] + bx[x, y + 2]
    levels = levels or [IterLevel("CGRA", [(x, fabric[0]), (y, fabric[1])]),
                        IterLevel("GLB", [(x, counts[0]), (y, counts[1])]), IterLevel("host")]
    by.iteration_order(levels).accelerate("GLB")
    cgra, glb = by.get_looplevel("CGRA", x), by.get_looplevel("GLB", x)
    by.create_memories([bx], cgra)
    hw_in.stream_to_accelerator(["CGRA", "GLB", "host"], [cgra, glb, LoopLevel.root()])
    return by.get_memory_level("host")


def _separable_numpy(img):
    f = img.astype(np.uint16)
    bx = f[:, :-2] + 2 * f[:, 1:-1] + f[:, 2:]
    return bx[:-2] + 2 * bx[1:-1] + bx[2:]


def test_declarative_levels_are_the_code_3_6_shape():
    top = _separable()
    by = top.wrapped.wrapped
    assert (top.name, top.wrapped.name, by.name) == ("blur_y_in_in", "blur_y_in", "blur_y")
    assert top.schedule.hw_accelerate == ("x_GLB", "x_host") and top.schedule.compute_level == "root"
    assert top.wrapped.schedule.compute_level == (top, "x_host")
    assert top.wrapped.schedule.memory_type == MemoryType.GLB
    assert by.schedule.compute_level == (top.wrapped, "x_GLB")
    acc = Accelerator(top)
    assert [(f.name, level) for f, level, _ in acc.glb.output_levels()] == [
        ("blur_y", "memory tile"), ("blur_y_in", "GLB"), ("blur_y_in_in", "host")]


def test_separable_blur_matches_the_hand_derivation():
    """Fabric tile 20x12 on one pixel per cycle; rows take 22 cycles (the input copy's row is 22 wide).
    blur_x at (x, y) waits for hw_in(x + 2, y): offset 2, so each input value lives 2 cycles (capacity 2, two
    shift registers). blur_y waits for blur_x(x, y + 2), written at 2 + 22 (y + 2) + x: offset 46, and
    blur_x's values live 44 cycles = 2 rows of 20 values: capacity 40, taps 0/20/40 = two line delays of 20
    in 1 MEM. The output's memory-tile level is read by the GLB copy in the cycle it is written: a wire.
    Last output (19, 11) at 46 + 22 * 11 + 19 = 307: latency 308; a 40x24 GLB tile is 4 fabric tiles."""
    top = _separable()
    d = build_design(top, (20, 12))
    assert d.offsets == {"hw_in_in": 0, "hw_in_in_in": 0, "blur_x": 2, "blur_y": 46, "blur_y_in": 46}
    assert d.capacities == {"hw_in_in": 0, "hw_in_in_in": 2, "blur_x": 40, "blur_y": 0, "blur_y_in": 0}
    assert d.latency == 308
    m = map_memories(d)
    assert m.buffers["blur_x"].line_delays == [20, 20] and m.mem_tiles == 1 and m.shift_registers == 2
    assert (m.buffers["blur_y"].kind, m.buffers["blur_y"].mem_tiles) == ("wire", 0)
    text = glb_summary(d, (80, 48))
    assert "GLB tile 40x24: 4 fabric tiles of 20x12, 1232 cycles" in text
    assert "hw_in_in: 42x26 = 1092 words" in text
    assert "blur_y (memory tile, per fabric tile): 0 words held (wire), 0 MEMs, written cycles 46..307" in text
    assert "blur_y_in (GLB, per GLB tile): 40x24 = 960 words, 1.9 kB, complete after 4 fabric tiles" in text


@pytest.mark.parametrize("image", [(80, 48), (70, 30)])
def test_separable_blur_simulates_bit_exact(image):
    w, h = image
    img = np.random.default_rng(38).integers(0, 256, size=(h + 2, w + 2), dtype=np.uint8)
    np.testing.assert_array_equal(simulate(_separable(), {"input": img}, image), _separable_numpy(img))


@pytest.mark.parametrize("rate", [1, 2])
def test_harris_code_3_8_is_the_single_level_fabric_and_bit_exact(rate):
    """The shipped harris with the three levels of Code 3.8: the fabric's design is the one-level design's
    (the memory-tile copy of the input is its line buffer), and the values are the CPU evaluation's."""
    harris = example("harris")
    top, _ = harris.build("accel", tile=(58, 58), glb_tile=(116, 58), rate=rate)
    one, _ = harris.build("accel", tile=(58, 58), rate=rate)
    d, d1 = build_design(top, (58, 58)), build_design(one, (58, 58))
    assert d.latency == d1.latency == 4096 // rate
    assert d.capacities["hw_input_in_in"] == d1.capacities["hw_input"] == 130
    assert {k: v for k, v in d.capacities.items() if k in d1.capacities} == \
        {k: v for k, v in d1.capacities.items() if k in d.capacities}
    assert (d.capacities["output"], d.capacities["output_in"]) == (0, 0)
    assert map_memories(d).mem_tiles == map_memories(d1).mem_tiles
    w, h = 232, 116
    img = np.random.default_rng(8).integers(0, 256, size=(h + 6, w + 6), dtype=np.uint8)
    cpu, _ = harris.build("cpu")
    np.testing.assert_array_equal(simulate(top, {"input": img}, (w, h)), evaluate(cpu, {"input": img}, (w, h)))


def _cascade_three_levels(glb=(120, 120), tile=(60, 60), out_kind=MemoryType.MemoryTile,
                          glb_kind=MemoryType.GLB):
    """Code 3.6 with one more output level written by hand: output (memory tile) -> output.in_() (GLB) -> host."""
    a = example("cascade").algorithm()
    x, y = a["x"], a["y"]
    xo, yo, xi, yi, xio, yio, xii, yii = (Var(n) for n in "xo yo xi yi xio yio xii yii".split())
    out_mem = a["output"]
    out_glb = out_mem.in_()
    top = out_glb.in_()
    top.compute_root().tile(x, y, xo, yo, xi, yi, *glb).hw_accelerate(xi, xo)
    out_glb.tile(x, y, xio, yio, xii, yii, *tile).compute_at(top, xo).store_in(glb_kind)
    out_mem.compute_at(out_glb, xio).store_in(out_kind)
    a["conv1"].compute_at(out_glb, xio)
    a["conv1"].update().unroll(a["r"].x).unroll(a["r"].y)
    a["conv2"].update().unroll(a["r2"].x).unroll(a["r2"].y)
    a["hw_input"].in_().in_().compute_at(out_glb, xio).store_in(MemoryType.MemoryTile)
    a["hw_input"].in_().compute_at(top, xo).store_in(MemoryType.GLB)
    a["hw_input"].accelerator_input()
    return top


def test_cascade_three_levels_by_hand_is_table_4_1_and_bit_exact():
    top = _cascade_three_levels()
    d = build_design(top, (60, 60))
    assert d.capacities == {"hw_input_in": 0, "hw_input_in_in": 130, "conv1": 126, "output": 0, "output_in": 0}
    assert d.latency == 4096
    w, h = 240, 180
    img = np.random.default_rng(6).integers(0, 256, size=(h + 4, w + 4), dtype=np.uint8)
    np.testing.assert_array_equal(simulate(top, {"input": img}, (w, h)), references.cascade(img, w, h))


def test_glb_tile_smaller_than_the_fabric_tile_is_refused():
    with pytest.raises(LoomError, match=r"Func 'output_in'.*tile 60x60 \(the fabric tile\) is larger than the GLB tile 30x30"):
        Accelerator(_cascade_three_levels(glb=(30, 30)))


def test_levels_out_of_order_are_refused():
    with pytest.raises(LoomError, match=r"Func 'output_in'.*holds one GLB tile.*stored in MemoryTile"):
        Accelerator(_cascade_three_levels(glb_kind=MemoryType.MemoryTile))
    with pytest.raises(LoomError, match=r"Func 'output'.*inside the fabric.*stored in the GLB.*GLB -> GLB"):
        Accelerator(_cascade_three_levels(out_kind=MemoryType.GLB))


@pytest.mark.parametrize("names, match", [
    (["GLB", "CGRA", "host"], r"blur_y.*iteration_order.*cannot exist: the GLB level is the innermost"),
    (["CGRA", "host", "GLB"], r"iteration_order.*cannot exist: the GLB level is the outermost"),
    (["CGRA", "MemoryTile", "GLB", "host"], r"iteration_order.*'MemoryTile' is outside the fabric tile"),
    (["CGRA", "GLB", "DRAM", "host"], r"iteration_order.*fabric tile -> GLB -> host; got 4 levels"),
])
def test_declarative_level_orders_that_cannot_exist(names, match):
    x, y = Var("x"), Var("y")
    levels = [IterLevel(n, [(x, 4), (y, 4)]) for n in names[:-1]] + [IterLevel(names[-1])]
    with pytest.raises(LoomError, match=match):
        _separable(levels=levels)


def test_declarative_accelerator_is_the_glb_level():
    x, y = Var("x"), Var("y")
    f = Func("f")
    f[x, y] = x + y
    f.iteration_order([IterLevel("CGRA", [(x, 8), (y, 8)]), IterLevel("GLB", [(x, 2)]), IterLevel("host")])
    with pytest.raises(LoomError, match=r"f.*accelerate.*is the 'GLB' level.*accelerate\('GLB'\)"):
        f.accelerate("CGRA")


def test_input_level_order_that_cannot_exist():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_in, out = Func("hw_in"), Func("out")
    hw_in[x, y] = u16(inp[x, y])
    out[x, y] = hw_in[x, y] + hw_in[x + 1, y]
    out.iteration_order([IterLevel("CGRA", [(x, 8), (y, 8)]), IterLevel("GLB", [(x, 2)]), IterLevel("host")])
    out.accelerate("GLB")
    cgra, glb = out.get_looplevel("CGRA", x), out.get_looplevel("GLB", x)
    with pytest.raises(LoomError, match=r"hw_in.*stream_to_accelerator.*cannot exist"):
        hw_in.stream_to_accelerator(["GLB", "CGRA", "host"], [glb, cgra, LoopLevel.root()])


def test_cli_reports_harris_output_levels(capsys):
    from loom.cli import main

    assert main(["pipeline", "harris", "--size", "58x58", "--glb-tile", "116x58"]) == 0
    out = capsys.readouterr().out
    assert "GLB tile 116x58: 2 fabric tiles of 58x58, 8192 cycles" in out
    assert "output (memory tile, per fabric tile): 0 words held (wire), 0 MEMs, written cycles 390..4095" in out
    assert "output_in (GLB, per GLB tile): 116x58 = 6728 words" in out
    assert out.count("yes (bit-exact)") >= 2


def test_channels_are_computed_in_space_at_every_output_level():
    """A third dimension is unrolled on the fabric, GLB and host levels alike (each GLB tile holds every
    channel); the reversed channel read checks the values against numpy."""
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw_in, out = Func("hw_in"), Func("out")
    hw_in[x, y, c] = u16(inp[x, y, c])
    out[x, y, c] = hw_in[x, y, c] + hw_in[x + 1, y, c] + hw_in[x, y + 1, 2 - c]
    out.iteration_order([IterLevel("CGRA", [(x, 16), (y, 8)]), IterLevel("GLB", [(x, 2), (y, 2)]),
                         IterLevel("host")]).accelerate("GLB")
    hw_in.stream_to_accelerator(["CGRA", "GLB", "host"],
                                [out.get_looplevel("CGRA", x), out.get_looplevel("GLB", x), LoopLevel.root()])
    top = out.get_memory_level("host")
    assert top.pure.schedule.unrolled == {"c": None}
    img = np.random.default_rng(3).integers(0, 256, size=(3, 33, 65), dtype=np.uint8)
    f = img.astype(np.uint16)
    want = f[:, :32, :64] + f[:, :32, 1:65] + f[::-1, 1:33, :64]
    np.testing.assert_array_equal(simulate(top, {"input": img}, (64, 32, 3)), want)
