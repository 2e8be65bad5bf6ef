"""Streaming designs as SystemVerilog (``loom.streaming.verilog``), co-simulated with Verilator
(``loom.jit.streaming_rtl.simulate_rtl``): every invocation's output comes from the RTL's own step counters,
kernels, delay lines and memories. Values bit-exact against numpy, RTL cycles equal to the design's latency;
a wrong tap in the RTL or a wrong kernel in edited IR gives wrong pixels; what has no RTL form is refused by name."""

import re

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Func, ImageParam, Int16, IterLevel, RDom, UInt8, Var, clamp, i16, i32,
                                     select, u8, u16)
from loom.frontends.pipeline import max as pmax
from loom.streaming import build_design
from loom.streaming.to_ubuf import design_to_ir
from loom.streaming.simulate import _design_ir
from loom.streaming.verilog import design_verilog
from tests.rtl.rtl_helpers import require_verilator

x, y, c = Var("x"), Var("y"), Var("c")


def _accelerate(out, tile, buffered=(), streams=()):
    out.iteration_order([IterLevel("CGRA", [(x, tile[0]), (y, tile[1])]), IterLevel("host")]).accelerate("CGRA")
    level = out.get_looplevel("CGRA", x)
    if buffered:
        out.create_memories(list(buffered), level)
    for f in streams:
        f.compute_at(level)
    return level


def _rtl(out, ins, size, design=None, ir=None):
    require_verilator()
    from loom.jit.streaming_rtl import RtlReport, simulate_rtl
    report = RtlReport()
    return simulate_rtl(out, ins, size, design=design, ir=ir, report=report), report


def _box_blur(tile=(4, 3)):
    inp = ImageParam(UInt8, 2, "input")
    hw, bx, out = Func("hw"), Func("bx"), Func("out")
    hw[x, y] = u16(inp[x, y])
    bx[x, y] = hw[x, y] + hw[x + 1, y] + hw[x + 2, y]
    out[x, y] = u8((bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 9)
    _accelerate(out, tile, [bx], [hw])
    return out


def _box_blur_want(img):
    i = img.astype(np.int64)
    b = i[:, :-2] + i[:, 1:-1] + i[:, 2:]
    return ((b[:-2] + b[1:-1] + b[2:]) // 9).astype(np.uint8)


@pytest.mark.sanitize
def test_a_box_blur_s_rtl_is_bit_exact_over_tail_tiles_in_the_design_s_cycles():
    """Two line-buffered stages (delay lines: shift registers and line delays), a 13 x 7 image over 4 x 3 tiles
    (ShiftInwards tails overlap): 12 invocations of the Verilated RTL."""
    out = _box_blur()
    img = np.random.default_rng(0).integers(0, 256, (9, 15), dtype=np.uint8)
    d = build_design(out, (4, 3))
    got, report = _rtl(out, {"input": img}, (13, 7), design=d)
    np.testing.assert_array_equal(got, _box_blur_want(img))
    assert report.invocations == 12
    assert report.rtl_cycles == [d.latency] * 12  # the last output word in the design's last cycle
    verilog = next(iter(report.verilog.values()))
    assert re.search(r"// buffer bx: a chain of \d+ entries shifting on its writes \(delay line", verilog)


@pytest.mark.parametrize("app, tile, rate", [("gaussian", (8, 6), 1), ("harris", (8, 6), 1), ("gaussian", (16, 16), 1),
                                             ("gaussian", (16, 16), 2), ("unsharp", (16, 8), 1)])
def test_each_delay_line_is_built_as_the_memory_map_says(app, tile, rate):
    """Shift registers between close taps, a memory (and its output register) per line delay: the chain the
    memory map counts (thesis §4.5), without running Verilator."""
    from loom.examples.pipelines import load_app
    from loom.streaming.memory_map import map_memories
    out, _ = load_app(app).build(tile=tile, rate=rate)
    d = build_design(out, tile if app != "unsharp" else (*tile, 3))
    rtl = design_verilog(d, _design_ir(d))
    mm = map_memories(d)
    assert rtl.chains
    for name, (registers, memories) in rtl.chains.items():
        mb = mm.buffers[name]
        assert [words + 1 for words in memories] == mb.line_delays, name
        assert (registers - len(memories)) * mb.width == mb.shift_registers, name


def test_a_wrong_tap_in_the_rtl_gives_wrong_pixels(monkeypatch):
    """The co-simulation's values are the RTL's: one tap a write too deep changes the output."""
    require_verilator()
    import loom.streaming.verilog as verilog
    original = verilog._derive_taps

    def one_too_deep(design, ir, rtl, mm):
        original(design, ir, rtl, mm)
        kind, taps = rtl["out"].taps[0]
        rtl["out"].taps[0] = (kind, [(lane, depth + 1, writing) for lane, depth, writing in taps])

    monkeypatch.setattr(verilog, "_derive_taps", one_too_deep)
    out = _box_blur()
    img = np.random.default_rng(1).integers(0, 256, (5, 6), dtype=np.uint8)
    got, _ = _rtl(out, {"input": img}, (4, 3))
    assert not np.array_equal(got, _box_blur_want(img))


def test_the_rtl_is_written_from_the_ir_an_edited_kernel_changes_its_pixels():
    """``ir=`` an edited ubuf module: the RTL's kernel is the edited one (out's / 9 made / 8)."""
    out = _box_blur()
    img = np.random.default_rng(2).integers(0, 256, (5, 6), dtype=np.uint8)
    d = build_design(out, (4, 3))
    text = str(design_to_ir(d))
    edited = re.sub(r"arith.constant 9 : i16", "arith.constant 8 : i16", text)
    assert edited != text
    got, _ = _rtl(out, {"input": img}, (4, 3), design=d, ir=edited)
    i = img.astype(np.int64)
    b = i[:, :-2] + i[:, 1:-1] + i[:, 2:]
    np.testing.assert_array_equal(got, ((b[:-2] + b[1:-1] + b[2:]) // 8).astype(np.uint8))


def test_a_conv_relu_maxpool_layer_with_channels_in_space_and_a_weight_memory_is_bit_exact():
    """4 -> 6 channels, 3 x 3 taps unrolled, weights held whole (an addressed memory: every point rereads them),
    a 2 x 2 max pool reading its producer at (2x, 2y) (an addressed memory too)."""
    C, O, W, H = 4, 6, 4, 3
    o = Var("o")
    inp, wts = ImageParam(Int16, 3, "input"), ImageParam(Int16, 4, "w")
    hw, hwk, cv, rl, out = Func("hw"), Func("hwk"), Func("cv"), Func("relu"), Func("out")
    r = RDom([(0, 3), (0, 3), (0, C)], "r")
    hw[x, y, c] = i32(inp[x, y, c])
    hwk[x, y, c, o] = i32(wts[x, y, c, o])
    cv[x, y, o] = i32(0)
    cv[x, y, o] += hw[x + r.x, y + r.y, r.z] * hwk[r.x, r.y, r.z, o]
    rl[x, y, o] = pmax(cv[x, y, o], 0)
    out[x, y, o] = pmax(pmax(rl[2 * x, 2 * y, o], rl[2 * x + 1, 2 * y, o]),
                        pmax(rl[2 * x, 2 * y + 1, o], rl[2 * x + 1, 2 * y + 1, o]))
    level = _accelerate(out, (2, 3))
    for f in (hw, hwk, cv, rl):
        f.compute_at(level)
    hw.unroll(c)
    hwk.unroll(c).unroll(o).unroll(x).unroll(y)
    cv.unroll(o)
    cv.update(0).unroll(r.x).unroll(r.y).unroll(r.z).unroll(o)
    rl.unroll(o)
    out.unroll(o)
    rng = np.random.default_rng(3)
    img = rng.integers(-50, 50, (C, 2 * H + 2, 2 * W + 2)).astype(np.int16)
    w = rng.integers(-5, 5, (O, C, 3, 3)).astype(np.int16)
    acc = np.zeros((O, 2 * H, 2 * W), np.int64)
    for oo in range(O):
        for cc in range(C):
            for dy in range(3):
                for dx in range(3):
                    acc[oo] += img[cc, dy:dy + 2 * H, dx:dx + 2 * W].astype(np.int64) * w[oo, cc, dy, dx]
    a = np.maximum(acc, 0)
    want = np.maximum(np.maximum(a[:, 0::2, 0::2], a[:, 0::2, 1::2]), np.maximum(a[:, 1::2, 0::2], a[:, 1::2, 1::2]))
    d = build_design(out, (2, 3, O))
    got, report = _rtl(out, {"input": img, "w": w}, (W, H, O), design=d)
    np.testing.assert_array_equal(got, want.astype(np.int32))
    assert report.rtl_cycles == [d.latency] * report.invocations
    assert "an addressed memory of its whole domain" in next(iter(report.verilog.values()))


def test_resampling_a_lut_and_coordinates_in_the_kernel_are_bit_exact():
    """Down by 3 (reads at 3x), up by 2 with a parity select (x / 2, x % 2: the kernel reads its coordinate,
    given per invocation), a gamma table (a ROM), over 2 x 2 tiles."""
    W, H = 12, 6
    i = Var("i")
    inp = ImageParam(UInt8, 2, "input")
    hw, dn, lut, out = Func("hw"), Func("dn"), Func("lut"), Func("out")
    lut[i] = u8(clamp((i * i) / 255, 0, 255))
    hw[x, y] = u16(inp[x, y])
    dn[x, y] = (hw[3 * x, y] + hw[3 * x + 1, y] + hw[3 * x + 2, y]) / 3
    a, b = dn[x / 2, y], dn[x / 2 + 1, y]
    out[x, y] = lut[u8(select(x % 2 == 0, a, (a + b) / 2))]
    _accelerate(out, (6, 3), [dn], [hw])
    lut.compute_root()
    lut.bound(i, 0, 256)
    img = np.random.default_rng(4).integers(0, 256, (H, 3 * (W // 2 + 1)), dtype=np.uint8)
    v = img.astype(np.int64)
    dn_ = (v[:, 0::3] + v[:, 1::3] + v[:, 2::3]) // 3
    xx = np.arange(W)
    av, bv = dn_[:, xx // 2], dn_[:, xx // 2 + 1]
    sel = np.where(xx % 2 == 0, av, (av + bv) // 2) & 0xFF
    want = np.clip(sel * sel // 255, 0, 255).astype(np.uint8)
    got, report = _rtl(out, {"input": img}, (W, H))
    np.testing.assert_array_equal(got, want)
    assert report.invocations == 4 and len(set(report.rtl_cycles)) == 1


def test_a_reduction_iterated_in_time_accumulates_in_the_rtl():
    """A 3-tap sum along x iterated in time (3 cycles a pixel): init at the first iteration, update on the partial
    sum kept per point in the accumulator memory, the write after the last iteration."""
    inp = ImageParam(Int16, 2, "input")
    hw, acc, out = Func("hw"), Func("acc"), Func("out")
    r = RDom([(0, 3)], "r")
    hw[x, y] = i16(inp[x, y])
    acc[x, y] = i16(1)
    acc[x, y] += hw[x + r.x, y] * i16(r.x + 1)
    out[x, y] = acc[x, y] >> 1
    level = _accelerate(out, (4, 3), [hw])
    acc.compute_at(level)
    img = np.random.default_rng(6).integers(-300, 300, (6, 10)).astype(np.int16)
    d = build_design(out, (4, 3))
    assert d.accumulators  # the reduction is iterated in time
    v = img.astype(np.int64)
    want = ((1 + v[:, 0:8] + 2 * v[:, 1:9] + 3 * v[:, 2:10]).astype(np.int16) >> 1).astype(np.int16)
    got, report = _rtl(out, {"input": img}, (8, 6), design=d)
    np.testing.assert_array_equal(got, want)
    assert report.rtl_cycles == [d.latency] * 4


def test_what_has_no_rtl_form_is_refused_by_name():
    """Stages sharing a kernel whose kernels differ (an edited IR: the RTL places one kernel). Float ops without
    an RTL form: tests/streaming/test_verilog_float.py."""
    from loom.dialects.ubuf import parse_ir
    from loom.examples.pipelines import load_app
    from loom.streaming.ir_reader import IrDesign
    shared, _ = load_app("cascade").build(tile=(8, 8), share="line")
    d2 = build_design(shared, (8, 8))
    text = str(design_to_ir(d2))
    conv1 = text.index('ubuf.kernel "conv1"')
    at = text.index("arith.constant", conv1)
    value = re.match(r"arith.constant (\d+)", text[at:]).group(1)
    edited = text[:at] + text[at:].replace(f"arith.constant {value}", f"arith.constant {int(value) + 1}", 1)
    with pytest.raises(LoomError, match=r"shared kernel 'conv2': stages 'conv1' and 'conv2' share it but "
                                        r"their kernels differ"):
        design_verilog(d2, IrDesign(parse_ir(edited)))


@pytest.mark.parametrize("app, tile", [("camera_pipeline", (8, 8)), ("conv_layer", (4, 4)),
                                       ("mobilenet_separable", (4, 4)), ("dnn_conv", (4, 4)), ("upsample", (8, 8)),
                                       ("gaussian_pyramid", (8, 8)), ("gemm", (4, 4))])
def test_the_verilog_of_the_example_apps_is_lint_clean(app, tile, tmp_path):
    """Verilator's -Wall lint finds no width mismatch or other warning, bar bits a kernel truncates away and
    enables a stage without readers leaves unused (memory and ROM indices at their address widths)."""
    import subprocess

    from loom.examples.pipelines import load_app
    from loom.runtime.rtl import find_verilator
    require_verilator()
    mod = load_app(app)
    out, _ = mod.build(tile=tile)
    size = mod.output_shape(tuple(2 * t for t in tile))
    d = build_design(out, tuple(tile) + tuple(size[2:]))
    sv = tmp_path / "loom_stream_top.sv"
    sv.write_text(design_verilog(d, _design_ir(d)).verilog)
    tool = find_verilator()
    proc = subprocess.run([str(tool.executable), "--lint-only", "-Wall", "-Wno-UNUSEDSIGNAL", str(sv)],
                          capture_output=True, text=True, env=tool.env())
    assert proc.returncode == 0 and "%Warning" not in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize("app, share", [("cascade", "line"), ("gaussian_pyramid", "line"), ("gaussian_pyramid", "pixel")])
def test_compute_sharing_places_one_kernel_and_is_bit_exact(app, share):
    """Thesis §5: the shared stages' operands multiplexed into one copy of the kernel (the gaussian pyramid's line
    interleaving splits blur1's rows into coarse steps: two loops of its address generator). Values equal to the
    language's numpy reference, RTL cycles to the design's latency."""
    from loom.examples.pipelines import load_app
    from loom.frontends.pipeline import evaluate
    require_verilator()
    mod = load_app(app)
    out, _ = mod.build(tile=(8, 8), share=share)
    d = build_design(out, (8, 8))
    stages = d.sharing.stages
    rtl = design_verilog(d, _design_ir(d))
    assert rtl.verilog.count(f"// shared kernel share_{d.sharing.name}: stages {', '.join(stages)}") == 1
    assert not any(f"wire [15:0] {st}_v_" in rtl.verilog for st in stages)  # no stage has a kernel of its own
    ins = mod.make_inputs((16, 16), np.random.default_rng(7))
    size = mod.output_shape((16, 16))
    got, report = _rtl(out, ins, size, design=d)
    np.testing.assert_array_equal(got, evaluate(mod.build(schedule="none")[0], ins, size))
    assert report.rtl_cycles == [d.latency] * report.invocations


def test_the_cli_writes_the_verilog_and_co_simulates_it(tmp_path, capsys):
    """``loom pipeline APP --verilog FILE`` writes the module; ``--rtl`` adds the Verilator row to the checks."""
    from loom.cli import main
    sv = tmp_path / "gaussian.sv"
    assert main(["pipeline", "gaussian", "--size", "8x6", "--verilog", str(sv)]) == 0
    text = sv.read_text()
    assert text.count("module loom_stream_top") == 1 and text.rstrip().endswith("endmodule")
    assert "one invocation of 80 cycles" in capsys.readouterr().out
    assert main(["pipeline", "gaussian", "--size", "8x6", "--verilog", str(tmp_path / "no" / "such" / "g.sv")]) == 1
    assert re.search(r"--verilog: cannot write: .*No such file or directory", capsys.readouterr().err)
    tb = tmp_path / "tb"
    assert main(["pipeline", "gaussian", "--size", "16x12", "--testbench", str(tb)]) == 0
    assert "1 invocation(s) of 252 cycles" in capsys.readouterr().out
    assert len((tb / "expected.hex").read_text().split()) == 16 * 12 and (tb / "loom_stream_tb.sv").is_file()
    assert main(["pipeline", "gaussian", "--size", "8x6", "--testbench", "/proc/no/such"]) == 1
    assert "cannot write the testbench" in capsys.readouterr().err
    from tests.rtl.rtl_helpers import require_yosys
    require_yosys()
    assert main(["pipeline", "gaussian", "--size", "8x6", "--synth"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"synthesis of loom_stream_top \(Yosys, coarse cells\): \d+ cells, \d+ flip-flop bits, 2 memories "
                     r"of 224 bits", out), out
    assert "memory hw_input_ld9: 7 x 16 bits" in out and "loom's memories: hw_input 14 words" in out
    require_verilator()
    assert main(["pipeline", "gaussian", "--size", "8x6", "--schedule", "accel", "--rtl"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"RTL co-simulation \(Verilator\)\s+1 invocation\(s\) of 80 cycles\s+[\d.]+\s+yes \(bit-exact\)",
                     out), out


def _span_by_pairs(starts, ends, addresses):
    """max |a_i - a_j| + 1 over pairs in memory together: j written while i is held (start_i <= start_j < end_i)."""
    best = 1
    for i in range(len(starts)):
        for j in range(len(starts)):
            if starts[i] <= starts[j] and (starts[j] < ends[i] or starts[j] == starts[i]):
                best = max(best, abs(int(addresses[i]) - int(addresses[j])) + 1)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_the_span_of_addresses_held_at_once_matches_every_pair(seed):
    from loom.streaming.live_count import live_address_span
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    starts = rng.integers(0, 40, n)
    ends = starts + rng.integers(0, 12, n) * (rng.random(n) < 0.8)  # some never held past their write
    addresses = rng.permutation(n) if seed % 2 else np.arange(n)
    assert live_address_span(starts, ends, addresses) == _span_by_pairs(starts, ends, addresses)


def test_the_vectorised_span_equals_the_pairwise_definition_on_random_values():
    """``live_address_span`` (numpy, a sparse table over the write cycles) against the pairwise definition: many
    writes in one cycle, values never held, repeated and negative addresses, unsorted writes."""
    from loom.streaming.live_count import live_address_span
    rng = np.random.default_rng(11)
    for _ in range(120):
        n = int(rng.integers(1, 70))
        starts = rng.integers(0, int(rng.integers(1, 90)), n)
        ends = starts + rng.integers(0, int(rng.integers(1, 40)), n) * (rng.random(n) < 0.7)
        addresses = rng.integers(-50, 50, n) if rng.random() < 0.5 else rng.permutation(n)
        assert live_address_span(starts, ends, addresses) == _span_by_pairs(starts, ends, addresses)


def _upsample_design():
    """x2 nearest up-sampling of a 3-tap blur: out reads bl at (x / 2, y / 2), an addressed memory."""
    inp = ImageParam(UInt8, 2, "input")
    hw, bl, out = Func("hw"), Func("bl"), Func("out")
    hw[x, y] = u16(inp[x, y])
    bl[x, y] = (hw[x, y] + 2 * hw[x + 1, y] + hw[x + 2, y]) / 4
    out[x, y] = u8(bl[x / 2, y / 2])
    _accelerate(out, (16, 16), [bl], [hw])
    return out


def _upsample_want(img):
    v = img.astype(np.int64)
    bl = (v[:, :-2] + 2 * v[:, 1:-1] + v[:, 2:]) // 4
    return np.repeat(np.repeat(bl, 2, 0), 2, 1).astype(np.uint8)


def test_an_addressed_memory_is_a_circular_buffer_of_the_addresses_held_at_once():
    """bl's 8 x 8 domain is read a row at a time (twice): its memory is circular, smaller than the domain and no
    smaller than the values live at once; the RTL's pixels are bit-exact."""
    out = _upsample_design()
    d = build_design(out, (16, 16))
    rtl = design_verilog(d, _design_ir(d))
    words = rtl.memories["bl"]
    assert d.capacities["bl"] <= words < 64 and words & (words - 1) == 0
    assert f"an addressed memory of {words} words, circular over its domain of 64" in rtl.verilog
    img = np.random.default_rng(5).integers(0, 256, (16, 18), dtype=np.uint8)
    got, _ = _rtl(out, {"input": img}, (32, 32), design=d)
    np.testing.assert_array_equal(got, _upsample_want(img))


def test_a_circular_memory_one_size_too_small_gives_wrong_pixels(monkeypatch):
    """The co-simulation reads the circular memory: half the words overwrite values before their last read."""
    require_verilator()
    import loom.streaming.verilog as verilog
    original = verilog._Emitter.memory_words

    def halved(self, name, rs):
        return max(2, original(self, name, rs) // 2)

    monkeypatch.setattr(verilog._Emitter, "memory_words", halved)
    out = _upsample_design()
    img = np.random.default_rng(6).integers(0, 256, (16, 18), dtype=np.uint8)
    got, _ = _rtl(out, {"input": img}, (16, 16))
    assert not np.array_equal(got, _upsample_want(img)[:16, :16])


def test_a_self_checking_testbench_replays_the_tiles_and_catches_a_wrong_word(tmp_path):
    """``write_testbench``: the RTL, a testbench and hex files of 12 tiles; the stand-alone simulation passes,
    and fails naming the word when one expected word is changed (the hex files are read at run time)."""
    import subprocess
    require_verilator()
    from loom.jit.streaming_rtl import write_testbench
    from loom.runtime.rtl import verilator_binary
    out = _box_blur()
    img = np.random.default_rng(7).integers(0, 256, (9, 15), dtype=np.uint8)
    tb = write_testbench(out, {"input": img}, (13, 7), tmp_path)
    assert tb.invocations == 12 and set(tb.paths) >= {"loom_stream_top.sv", "loom_stream_tb.sv", "s_input.hex"}
    # the expected words are the reference's pixels: the first tile is the image's top-left 4 x 3 corner
    expected = [int(w, 16) for w in (tmp_path / "expected.hex").read_text().split()]
    assert expected[:12] == _box_blur_want(img)[:3, :4].ravel().tolist()
    binary = verilator_binary(sorted(tmp_path.glob("*.sv")), "loom_stream_tb", tmp_path)
    run = subprocess.run([str(binary)], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0 and "loom_stream_tb: PASS, 12 invocation(s), 144 words" in run.stdout
    expected[17] ^= 1
    (tmp_path / "expected.hex").write_text("".join(f"{w:02x}\n" for w in expected))
    run = subprocess.run([str(binary)], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode != 0 and "invocation 1 step 5 lane 0" in run.stdout and "FAIL, 1 mismatch" in run.stdout + run.stderr
    assert write_testbench(out, {"input": img}, (13, 7), tmp_path / "two", invocations=2).invocations == 2
    with pytest.raises(LoomError, match="invocations must be a positive int"):
        write_testbench(out, {"input": img}, (13, 7), tmp_path / "none", invocations=0)


@pytest.mark.parametrize("app, tile, rate", [("gaussian", (8, 6), 1), ("gaussian", (16, 16), 2), ("harris", (8, 6), 1),
                                             ("upsample", (8, 8), 1), ("gaussian_pyramid", (8, 8), 1)])
def test_the_rtl_synthesises_without_latches_into_the_memories_the_design_counts(app, tile, rate):
    """Yosys (an independent front end) elaborates the module, infers no latch, and infers exactly the memories
    loom placed: a line delay's words and the lanes' word width, an addressed memory's circular words."""
    from loom.examples.pipelines import load_app
    from loom.runtime.yosys import synthesize
    from tests.rtl.rtl_helpers import require_yosys
    require_yosys()
    out, _ = load_app(app).build(tile=tile, **({"rate": rate} if rate != 1 else {}))
    d = build_design(out, tile)
    rtl = design_verilog(d, _design_ir(d))
    report = synthesize(rtl.verilog, "loom_stream_top")
    assert report.latches == []
    want = {}
    for name, (_registers, rams) in rtl.chains.items():
        word = rtl.stages[name].width * len(rtl.stages[name].lanes)
        for words in rams:
            want.setdefault(name, []).append((words, word))
    for name, words in rtl.memories.items():
        want.setdefault(name, []).append((words, rtl.stages[name].width))
    got = {}
    for mem, shape in report.memories.items():
        got.setdefault(mem.rsplit("_", 1)[0], []).append(shape)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
    assert want  # every one of these designs holds a memory


def test_an_rtl_with_a_latch_or_a_syntax_error_is_reported():
    """The synthesis report is a check: a latch is listed, and Yosys's error is a LoomError naming the module."""
    from loom.runtime.yosys import synthesize
    from tests.rtl.rtl_helpers import require_yosys
    require_yosys()
    latch = ("module t(input logic e, input logic [3:0] d, output logic [3:0] q);\n"
             "  always_latch if (e) q = d;\nendmodule\n")
    assert len(synthesize(latch, "t").latches) == 1
    with pytest.raises(LoomError, match=r"Yosys failed on t") as err:
        synthesize("module t(input logic a;\nendmodule\n", "t")
    assert err.value.where == "yosys (t)"


@pytest.mark.parametrize("blocks", [2, 3])
def test_output_channels_in_blocks_are_bit_exact_in_the_rtl(blocks):
    """accelerate(..., channels_per_cycle={o: n}): a 3 -> 8 channel conv n channels a cycle (its input read through
    the unblocked layer's delay line, each block a tap): the RTL's pixels equal numpy's, in the design's cycles."""
    from tests.streaming.test_streaming_accelerate_channel_blocks import CO, TILE, declarative, inputs
    out = declarative(blocks)
    size = (2 * TILE[0], TILE[1], CO)
    ins = inputs(size)
    img, w = ins["input"].astype(np.int64), ins["w"].astype(np.int64)
    conv = np.zeros((CO, size[1], size[0]), np.int64)
    for o in range(CO):
        for c in range(img.shape[0]):
            for dy in range(3):
                for dx in range(3):
                    conv[o] += w[o, c, dy, dx] * img[c, dy:dy + size[1], dx:dx + size[0]]
    want = np.clip(conv.astype(np.int16) >> 4, 0, 255).astype(np.uint8)  # i16 accumulation wraps as the kernel's
    got, report = _rtl(out, ins, size)
    np.testing.assert_array_equal(got, want)
    assert report.invocations == 2 and set(report.rtl_cycles) == {48 * -(-CO // blocks)}


def test_constant_weights_read_at_constant_taps_are_folded_not_a_memory_read_at_every_port():
    """A 3-tap filter per output channel, its weights a constant table indexed by the unrolled tap (a constant)
    and the channel (the kernel's coordinate), plus a bias table indexed by the tap alone. Bit-exact against
    numpy; Yosys infers no memory: the bias reads are literals and the weight reads a case over the 4 channels'
    entries (a ROM read at every port took Yosys 225 s on conv_layer's 108 ports)."""
    from loom.runtime.yosys import find_yosys, synthesize
    o, k = Var("o"), Var("k")
    wts, bias = np.array([[3, -2, 7], [-5, 1, 0], [2, 2, -9], [-1, 6, 4]]), np.array([1, -3, 2])
    inp = ImageParam(Int16, 2, "input")
    hw, wf, bf, cv = Func("hw"), Func("weights"), Func("bias"), Func("cv")
    hw[x, y] = i32(inp[x, y])
    wf[o, k], bf[k] = i32(0), i32(0)
    for a, b in np.ndindex(wts.shape):
        wf[a, b] = i32(int(wts[a, b]))
    for b in range(3):
        bf[b] = i32(int(bias[b]))
    r = RDom(0, 3, name="r")
    cv[x, y, o] = i32(0)
    cv[x, y, o] += (wf[o, r.x] + bf[r.x]) * hw[x + r.x, y]
    cv.iteration_order([IterLevel("CGRA", [(x, 4), (y, 3)]), IterLevel("host")]).accelerate("CGRA")
    hw.compute_at(cv.get_looplevel("CGRA", x))
    cv.unroll(o)
    cv.update(0).unroll(r.x).unroll(o)
    d = build_design(cv, (4, 3, 4))
    rtl = design_verilog(d, _design_ir(d))
    assert "rom_weights" not in rtl.verilog and "rom_bias" not in rtl.verilog
    img = np.random.default_rng(8).integers(-100, 100, (6, 10)).astype(np.int16)
    v = img.astype(np.int64)
    want = np.stack([sum((wts[oo, t] + bias[t]) * v[:, t:t + 8] for t in range(3)) for oo in range(4)])
    got, _ = _rtl(cv, {"input": img}, (8, 6, 4), design=d)
    np.testing.assert_array_equal(got, want.astype(np.int32))
    if find_yosys() is not None:
        assert synthesize(rtl.verilog, "loom_stream_top").memories == {}


def test_a_pipeline_of_several_designs_gets_a_testbench_per_design_replaying_its_own_tiles(tmp_path):
    """A GuardWithIf tail runs a smaller design for the last row of tiles: each design gets its own folder, with
    its module and its own tiles' words: the input pixels they stream and the reference's output pixels (the
    testbench replayed the first design's tiles only). The testbench text itself is run in Verilator by
    ``test_a_self_checking_testbench_replays_the_tiles_and_catches_a_wrong_word`` and ``bench_streaming_rtl.py
    --testbench``."""
    from loom.examples.pipelines import gaussian
    from loom.frontends.pipeline import TailStrategy
    from loom.frontends.pipeline.evaluate import evaluate
    from loom.jit.streaming_rtl import write_testbench
    a = gaussian.algorithm()
    out = a["output"]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(a["x"], a["y"], xo, yo, xi, yi, 8, 6, TailStrategy.GuardWithIf).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    a["blur_unnormalized"].update().unroll(a["win"].x).unroll(a["win"].y)
    img = np.random.default_rng(9).integers(0, 256, (11, 18), dtype=np.uint8)
    want = evaluate(out, {"input": img}, (16, 9))
    tb = write_testbench(out, {"input": img}, (16, 9), tmp_path)
    assert [(t.tile, t.invocations) for t in tb.designs] == [((8, 6), 2), ((8, 3), 2)] and tb.invocations == 4
    for t, rows in zip(tb.designs, (slice(0, 6), slice(6, 9))):
        words = {f: [int(w, 16) for w in (t.folder / f).read_text().split()] for f in ("expected.hex", "s_input.hex")}
        assert words["expected.hex"] == want[rows, 0:8].ravel().tolist() + want[rows, 8:16].ravel().tolist()
        halo = slice(rows.start, rows.stop + 2)
        assert words["s_input.hex"] == img[halo, 0:10].ravel().tolist() + img[halo, 8:18].ravel().tolist()
        assert f"{t.cycles} cycles" in (t.folder / "loom_stream_tb.sv").read_text().splitlines()[0]
    assert tb.designs[1].folder == tmp_path / "design1_output_8x3" and "design1_output_8x3/mins.hex" in tb.paths


def _wide_resample(tile=(12, 6)):
    """i32 values read at (x / 2, y / 2) and (x / 2 + 1, (y + 1) / 2): an addressed memory, divided reads."""
    inp = ImageParam(Int16, 2, "input")
    hw, bl, out = Func("hw"), Func("bl"), Func("out")
    hw[x, y] = i32(inp[x, y])
    bl[x, y] = hw[x, y] - 3 * hw[x + 1, y] + hw[x + 2, y]
    out[x, y] = bl[x / 2, y / 2] + bl[x / 2 + 1, (y + 1) / 2]
    _accelerate(out, tile, [bl], [hw])
    return out


def _wide_resample_want(img, w, h):
    v = img.astype(np.int64)
    bl = v[:, :-2] - 3 * v[:, 1:-1] + v[:, 2:]
    xx, yy = np.meshgrid(np.arange(w), np.arange(h))
    return (bl[yy // 2, xx // 2] + bl[(yy + 1) // 2, xx // 2 + 1]).astype(np.int32)


def test_a_circular_memory_holds_exactly_the_span_with_wrapping_address_counters(monkeypatch):
    """bl's memory holds the 9 addresses live at once (a power of two took 16 words of 32 bits): written and read
    through addresses kept modulo 9 as the loops advance (remainders carried for x / 2 and (y + 1) / 2). The
    pixels are numpy's; one word fewer overwrites a value before its last read."""
    import loom.streaming.verilog as verilog
    from loom.streaming.live_count import live_address_span
    from loom.streaming.scheduler import last_reads
    out = _wide_resample()
    d = build_design(out, (12, 6))
    rtl = design_verilog(d, _design_ir(d))
    tw, last = last_reads(d.buffers["bl"])
    span = live_address_span(tw, last + 1, np.arange(tw.size))  # held through the last read: reads are forwarded
    assert rtl.memories["bl"] == span == 9 and rtl.rounded_memories["bl"] == 16
    assert "circular over its domain of 28 (indexed by its addresses modulo its words" in rtl.verilog
    img = np.random.default_rng(2).integers(-500, 500, (8, 15)).astype(np.int16)
    got, report = _rtl(out, {"input": img}, (24, 12), design=d)
    np.testing.assert_array_equal(got, _wide_resample_want(img, 24, 12))
    assert report.rtl_cycles == [d.latency] * 4
    original = verilog._Emitter.memory_words
    monkeypatch.setattr(verilog._Emitter, "memory_words", lambda self, name, rs: original(self, name, rs) - 1)
    got, _ = _rtl(_wide_resample(), {"input": img}, (24, 12))
    assert not np.array_equal(got, _wide_resample_want(img, 24, 12))


def test_a_wrapping_memory_written_by_two_lanes_over_an_odd_tile_is_bit_exact():
    """2 pixels a cycle over a tile 11 wide, bl read at (x / 2, y) and (x / 2 + 1, y + 1): two lanes advance their
    own wrapping addresses into the 10-word circular memory (16 rounded), the last block of each row has an idle
    lane (gated; here its word would be a value not yet written, so the pixels alone do not show the gate)."""
    inp = ImageParam(Int16, 2, "input")
    hw, bl, out = Func("hw"), Func("bl"), Func("out")
    hw[x, y] = i32(inp[x, y])
    bl[x, y] = hw[x, y] - 3 * hw[x + 1, y] + hw[x + 2, y]
    out[x, y] = bl[x / 2, y] + bl[x / 2 + 1, y + 1]
    out.output_rate(2).iteration_order([IterLevel("CGRA", [(x, 11), (y, 4)]), IterLevel("host")]).accelerate("CGRA")
    out.create_memories([bl, hw], out.get_looplevel("CGRA", x))
    d = build_design(out, (11, 4))
    rtl = design_verilog(d, _design_ir(d))
    assert (rtl.memories["bl"], rtl.rounded_memories["bl"]) == (10, 16) and rtl.stages["bl"].partial
    img = np.random.default_rng(3).integers(-500, 500, (9, 9)).astype(np.int16)
    got, _ = _rtl(out, {"input": img}, (11, 8), design=d)
    v = img.astype(np.int64)
    b = v[:, :-2] - 3 * v[:, 1:-1] + v[:, 2:]
    xx = np.arange(11)
    np.testing.assert_array_equal(got, (b[:8, xx // 2] + b[1:9, xx // 2 + 1]).astype(np.int32))
