"""Simulation equals the CPU reference (and numpy) bit for bit; undersized buffers are caught."""

import numpy as np
import pytest

from tests.streaming.streaming_apps import example, references

from loom.errors import LoomError
from loom.frontends.pipeline import evaluate
from loom.streaming import SimulationStats, build_design, simulate

GRAY_SIZES = [(16, 16), (23, 11), (64, 64)]


def _image(mod, size, seed):
    return np.random.default_rng(seed).integers(0, 256, mod.input_shape(size), dtype=np.uint8)


@pytest.mark.parametrize("name", ["cascade", "gaussian", "harris", "pointwise"])
@pytest.mark.parametrize("size", GRAY_SIZES)
def test_simulation_matches_evaluate_and_numpy(name, size):
    mod = example(name)
    out, _ = mod.build("accel", tile=size)
    img = _image(mod, size, 7)
    stats = SimulationStats()
    sim = simulate(out, {"input": img}, size, stats=stats)
    np.testing.assert_array_equal(sim, evaluate(out, {"input": img}, size))
    np.testing.assert_array_equal(sim, getattr(references, name)(img, *size))
    assert stats.tiles == 1 and stats.reads_checked > 0


def test_unsharp_simulation_with_rom():
    mod = example("unsharp")
    out, _ = mod.build("accel", tile=(21, 13))
    d = build_design(out, (21, 13, 3))
    assert d.acc.constants["reciprocal"].kind == "ROM"
    assert d.acc.memory["reciprocal"].kind == "LUT/ROM"
    assert d.acc.constants["kernel"].kind == "tap register"
    img = _image(mod, (21, 13), 3)
    sim = simulate(out, {"input": img}, (21, 13, 3), design=d)
    np.testing.assert_array_equal(sim, references.unsharp(img, 21, 13))


def test_several_tiles():
    mod = example("cascade")
    out, _ = mod.build("accel", tile=(10, 6))
    img = _image(mod, (30, 18), 1)
    stats = SimulationStats()
    sim = simulate(out, {"input": img}, (30, 18), stats=stats)
    assert stats.tiles == 9
    np.testing.assert_array_equal(sim, references.cascade(img, 30, 18))
    # 31 is not a multiple of 10: the last tile column is shifted inward (x = 21..30), as is the last row of tiles (y = 13..18): 4 x 4 invocations
    img = _image(mod, (31, 19), 2)
    stats = SimulationStats()
    sim = simulate(out, {"input": img}, (31, 19), stats=stats)
    assert stats.tiles == 4 * 4
    np.testing.assert_array_equal(sim, references.cascade(img, 31, 19))
    # a tile larger than the image shrinks to the image: one invocation
    stats = SimulationStats()
    small = _image(mod, (7, 5), 3)
    np.testing.assert_array_equal(simulate(out, {"input": small}, (7, 5), stats=stats),
                                  references.cascade(small, 7, 5))
    assert stats.tiles == 1


@pytest.mark.parametrize("name, size", [("cascade", (60, 60)), ("harris", (33, 21)), ("gaussian", (40, 9)),
                                        ("unsharp", (19, 12, 3))])
def test_every_undersized_buffer_is_caught(name, size):
    mod = example(name)
    out, _ = mod.build("accel", tile=size[:2])
    d = build_design(out, size)
    img = _image(mod, size[:2], 2)
    simulate(out, {"input": img}, size, design=d)  # exact capacities pass
    checked = 0
    for buf, cap in d.capacities.items():
        if cap == 0:
            continue
        with pytest.raises(LoomError, match=f"buffer '{buf}'.*capacity {cap - 1} \\(read after eviction\\)"):
            simulate(out, {"input": img}, size, design=d, capacities={buf: cap - 1})
        checked += 1
    assert checked >= 1


def test_wire_cannot_delay():
    # a zero-capacity buffer is a wire; making a wire out of a real buffer must fail
    mod = example("gaussian")
    out, _ = mod.build("accel", tile=(8, 8))
    with pytest.raises(LoomError, match="hw_input.*capacity 0"):
        simulate(out, {"input": _image(mod, (8, 8), 0)}, (8, 8), capacities={"hw_input": 0})


def test_read_before_write_is_caught():
    mod = example("cascade")
    out, _ = mod.build("accel", tile=(12, 12))
    d = build_design(out, (12, 12))
    conv1 = d.stages["conv1"]
    conv1.schedule.offset -= 1  # start one cycle early: the last tap is not written yet
    with pytest.raises(LoomError, match="buffer 'hw_input'.*reads hw_input\\(2, 2\\) at cycle 33 but it is "
                                        "written at cycle 34 \\(read before write\\)"):
        simulate(out, {"input": _image(mod, (12, 12), 0)}, (12, 12), design=d)


@pytest.mark.parametrize("name", ["gaussian", "pointwise"])
def test_two_pixels_per_cycle(name):
    mod = example(name)
    out, _ = mod.build("accel", tile=(32, 16), rate=2)
    d = build_design(out, (32, 16))
    row = -(-(32 + mod.HALO) // 2)  # cycles per input row
    assert d.stages["output"].schedule.strides[1] == row
    assert d.latency == d.offsets["output"] + row * 15 + 16
    if name == "gaussian":
        assert d.offsets["output"] == 2 * row + 1
    img = _image(mod, (32, 16), 4)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (32, 16), design=d),
                                  getattr(references, name)(img, 32, 16))
    for buf, cap in d.capacities.items():
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, {"input": img}, (32, 16), design=d, capacities={buf: cap - 1})


def test_simulation_speed_gaussian_1080p():
    import time
    mod = example("gaussian")
    out, _ = mod.build("accel", tile=(1920, 1080))
    img = _image(mod, (1920, 1080), 0)
    t = time.perf_counter()
    sim = simulate(out, {"input": img}, (1920, 1080))
    elapsed = time.perf_counter() - t
    assert elapsed < 5.0, elapsed
    np.testing.assert_array_equal(sim, references.gaussian(img, 1920, 1080))


def test_conv_layer_on_the_accelerator():
    mod = example("conv_layer")
    size = (12, 7)
    out, _ = mod.build("accel", tile=size)
    d = build_design(out, size + (mod.CO,))
    row = size[0] + 2
    assert d.offsets["output"] == 2 * row + 2
    assert d.capacities["hw_input"] == mod.CI * (2 * row + 2)  # all channels of two lines plus two pixels
    img = _image(mod, size, 5)
    sim = simulate(out, {"input": img}, size + (mod.CO,), design=d)
    np.testing.assert_array_equal(sim, references.conv_layer(img, *size, mod.weights()))


def test_gemm_on_the_accelerator_keeps_b_on_chip():
    mod = example("gemm")
    size = (12, 10)
    out, _ = mod.build("accel", tile=size)
    d = build_design(out, size)
    assert d.capacities["hw_b"] == mod.K * size[0]
    ins = mod.make_inputs(size, np.random.default_rng(3))
    np.testing.assert_array_equal(simulate(out, ins, size, design=d), references.gemm(ins["A"], ins["B"]))
    with pytest.raises(LoomError, match="buffer 'hw_b'.*read after eviction"):
        simulate(out, ins, size, design=d, capacities={"hw_b": d.capacities["hw_b"] - 1})


def test_update_merging_rom_depth_and_memory_classes():
    mod = example("unsharp")
    out, _ = mod.build("accel", tile=(16, 16))
    d = build_design(out, (16, 16, 3))
    assert d.stages["blur"].node.merged_updates == ["blur_sum.update(0) x49"]
    assert d.roms["reciprocal"] == ("ROM", 256, 256)
    assert d.roms["kernel"] == ("tap register", 49, 49)
    classes = d.memory_classes()
    assert classes["blur"].kind == "wire" and classes["gray"].kind == "buffer"
    assert (classes["reciprocal"].usage, classes["reciprocal"].index_pattern) == ("initialized", "data-dependent")


def test_rom_depth_rounds_up_to_multiple_of_four():
    from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u8, u16
    x, y, i = Var("x"), Var("y"), Var("i")
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    inp = ImageParam(UInt8, 2, "input")
    lut = Func("lut")
    lut[i] = u8(i * 7)
    lut.bound(i, 0, 10)
    out = Func("output")
    from loom.frontends.pipeline import clamp
    out[x, y] = lut[clamp(inp[x, y], 0, 9)]
    out.tile(x, y, xo, yo, xi, yi, 4, 4).hw_accelerate(xi, xo)
    d = build_design(out, (4, 4))
    assert d.roms["lut"] == ("ROM", 10, 12)
    img = np.random.default_rng(0).integers(0, 16, (4, 4), dtype=np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (4, 4)), (np.minimum(img, 9) * 7).astype(np.uint8))


def _bf16(a):
    """Independent float32 -> bfloat16 rounding (nearest, ties to even) via integer arithmetic."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    keep = bits >> 16
    rest = bits & 0xFFFF
    up = (rest > 0x8000) | ((rest == 0x8000) & (keep & 1 == 1))
    return ((keep + up) << 16).astype(np.uint32).view(np.float32)


def test_bfloat16_blur_on_the_accelerator():
    from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, bf16, f32
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = bf16(inp[x, y])
    w = Func("w")
    w[x, y] = bf16(0.1)
    w[1, 1] = bf16(0.3)
    r = RDom(0, 3, 0, 3)
    blur = Func("blur")
    blur[x, y] = bf16(0.0)
    blur[x, y] += w[r.x, r.y] * hw[x + r.x, y + r.y]
    out = Func("output")
    out[x, y] = f32(blur[x, y])
    out.tile(x, y, xo, yo, xi, yi, 10, 6).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    blur.update().unroll(r.x).unroll(r.y)
    img = np.random.default_rng(9).integers(0, 256, (8, 12), dtype=np.uint8)
    sim = simulate(out, {"input": img}, (10, 6))
    # reference: every bf16 operation rounded, in the same order (r.x innermost)
    a = img.astype(np.float32)
    acc = np.zeros((6, 10), np.float32)
    for ry in range(3):
        for rx in range(3):
            wt = _bf16(0.3) if (rx, ry) == (1, 1) else _bf16(0.1)
            acc = _bf16(acc + _bf16(wt * a[ry:ry + 6, rx:rx + 10]))
    np.testing.assert_array_equal(sim, acc)
    assert not np.array_equal(acc, (a[:6, :10] * 0 + sum(a[ry:ry + 6, rx:rx + 10] * (0.3 if (rx, ry) == (1, 1)
                                                                                      else 0.1)
                                                         for ry in range(3) for rx in range(3))).astype(np.float32))


def test_camera_pipeline_on_the_accelerator():
    mod = example("camera_pipeline")
    size = (14, 10)
    out, _ = mod.build("accel", tile=size)
    d = build_design(out, size + (3,))
    assert d.acc.constants["curve"].kind == "ROM" and d.acc.constants["ccm"].kind == "tap memory"
    # hot pixel suppression reads 4 rows apart: each of the w + 4 columns it centres on holds 4 rows of values
    # (the outer 4 columns, read only by the side taps, about 2); never the whole 4-row span of the input
    assert 4 * (size[0] + 4) <= d.capacities["hw_input"] < 4 * (size[0] + 8)
    # green and the demosaic read 3 rows of denoised each (green one row ahead): 2 to 3 rows live
    assert 2 * (size[0] + 4) <= d.capacities["denoised"] < 3 * (size[0] + 4)
    raw = _image(mod, size, 8)
    np.testing.assert_array_equal(simulate(out, {"input": raw}, size + (3,), design=d),
                                  references.camera_pipeline(raw, *size))


def test_copy_stage_from_in_is_the_on_chip_buffer():
    mod = example("cascade")
    a = mod.algorithm()
    from loom.frontends.pipeline import Var
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out = a["output"]
    out.tile(a["x"], a["y"], xo, yo, xi, yi, 20, 20).hw_accelerate(xi, xo)
    a["hw_input"].stream_to_accelerator()  # computed on the host, streamed in
    a["hw_input"].in_().compute_at(out, xo).store_in("MemoryTile")  # one more memory level
    a["conv1"].compute_at(out, xo)
    a["conv1"].update().unroll(a["r"].x).unroll(a["r"].y)
    a["conv2"].update().unroll(a["r2"].x).unroll(a["r2"].y)
    d = build_design(out, (20, 20))
    assert d.capacities == {"hw_input": 0, "hw_input_in": 2 * 24 + 2, "conv1": 2 * 22 + 2, "output": 0}
    assert d.buffers["hw_input_in"].memory_type == "MemoryTile"
    img = _image(mod, (20, 20), 6)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (20, 20), design=d),
                                  references.cascade(img, 20, 20))


def test_host_consumer_and_one_row_per_invocation():
    from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    acc = Func("acc")
    acc[x, y] = hw[x, y] + hw[x + 1, y + 1]
    top = Func("top")
    top[x, y] = acc[x, y] * 2 + acc[x + 1, y]  # on the host, reads the accelerator's output
    acc.hw_accelerate(x, y)  # the accelerator computes one row per invocation
    hw.compute_at(acc, y)
    stats = SimulationStats()
    img = np.random.default_rng(2).integers(0, 256, (7, 11), dtype=np.uint8)
    got = simulate(top, {"input": img}, (9, 6), stats=stats)
    assert stats.tiles == 6  # rows of acc
    a = img.astype(np.uint16)
    acc_np = a[:6, :10] + a[1:7, 1:11]
    np.testing.assert_array_equal(got, acc_np[:, :9] * 2 + acc_np[:, 1:10])


def test_host_stream_func_at_two_pixels_per_cycle():
    from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    inp = ImageParam(UInt8, 2, "input")
    pre = Func("pre")
    pre[x, y] = u16(inp[x, y]) + 1
    pre.stream_to_accelerator()
    out = Func("output")
    out[x, y] = pre[x, y] + pre[x + 2, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 16, 4).hw_accelerate(xi, xo).unroll(xi, 2)
    d = build_design(out, (16, 4))
    assert d.stages["pre"].schedule.lanes == 2 and d.offsets["output"] == 9 + 1  # one row of 9 cycles + 1
    img = np.random.default_rng(3).integers(0, 256, (5, 18), dtype=np.uint8)
    p = img.astype(np.uint16) + 1
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 4), design=d), p[:4, :16] + p[1:5, 2:18])
