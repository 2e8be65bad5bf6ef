"""Reductions iterated in time on the streaming accelerator: accumulation buffers, schedule, simulation.

Latencies and capacities are checked against hand derivations in the comments; values against numpy.
"""

import islpy as isl
import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u16
from loom.frontends.pipeline.evaluate import evaluate
from loom.streaming import Accelerator, build_design, map_memories, simulate
from loom.streaming.report import design_report, format_reports

from tests.streaming.streaming_apps import example, references

x, y, xo, yo, xi, yi = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))


def gemm_latency(n, m, k, steps):
    """Hand formula. A (k x m) and the output share their rows (A's row y is the output's): a row every
    steps * max(n, k) cycles, a point every ``steps`` cycles. B's (n x k) rows are the reduction's, related to
    no output row, so B runs on its own row grid: a row of n points every steps * n cycles. The last B row
    (k - 1) is written at steps * n * (k - 1), and prod(0, 0) reads it in its last iteration, so prod writes its
    first value there; the output follows as a wire, and its last point (n - 1, m - 1) comes steps * (n - 1) +
    steps * max(n, k) * (m - 1) cycles later."""
    return steps * n * (k - 1) + steps * (n - 1) + steps * max(n, k) * (m - 1) + 1


@pytest.mark.parametrize("k, k_unroll", [(8, 1), (8, 2), (8, 4), (24, 4)])
def test_gemm_with_k_in_time_is_bit_exact_and_has_the_hand_latency(k, k_unroll):
    mod = example("gemm")
    size = (12, 10)
    out, _ = mod.build("accel", tile=size, k=k, k_unroll=k_unroll)
    d = build_design(out, size)
    steps = k // k_unroll
    assert d.reduction_cycles == steps
    assert d.latency == gemm_latency(*size, k, steps)
    assert d.offsets["prod"] == steps * size[0] * (k - 1)
    assert d.stages["B"].schedule.strides == (steps, steps * size[0])  # B's rows: its own grid
    acc = d.accumulators["prod_acc"]
    assert acc.capacity == 1  # one scalar partial sum in flight: each output's reduction runs alone
    assert [len(p.extents) for p in acc.ports] == [3, 3]  # ports on the update's domain (x, y, k step)
    assert acc.write_ports[0].extents[-1] == steps and acc.read_ports[0].extents[-1] == steps - 1
    assert d.memory_classes()["prod_acc"].kind == "accumulation"
    assert map_memories(d).buffers["prod_acc"].kind == "accumulation register"
    # k_unroll products per cycle: that many ports on each input, reading k = k_unroll * step + lane
    assert len(d.buffers["hw_b"].read_ports) == k_unroll
    ins = mod.make_inputs(size, np.random.default_rng(7), k)
    sim = simulate(out, ins, size, design=d)
    np.testing.assert_array_equal(sim, references.gemm(ins["A"], ins["B"]))
    np.testing.assert_array_equal(sim, evaluate(out, ins, size))


def test_gemm_with_deep_k_and_fast_inputs_is_compute_bound_after_b():
    """K = 64 on an 8 x 8 tile, 4 products a cycle (16 cycles an output), A and B filled a value a cycle
    (input memories at their own rate, unroll(x, 16)): B's 64 rows of 8 arrive in 512 cycles on their own row
    grid, then the 64 outputs take 16 cycles each: 8 x 63 + 128 x 7 + 16 x 7 + 1 = 1513 cycles (the ideal is
    1024). With B's rows paced by the output's, as A's are, B alone took 64 x 128 cycles. A arrives when read (it
    started at cycle 0): prod reads A(k, y) at 489 + 128 y + floor(k / 4) (its 16 cycles ending at 504 + 128 y), so
    row y may arrive from 489 + 15 - 63 = 441; A(k, y) is read last by output x = 7, 112 cycles later, and at most 96
    values are live (320 from cycle 0)."""
    mod = example("gemm")
    p = mod.algorithm(64)
    mod.accel_schedule(p, (8, 8), 4)
    p["hw_a"].unroll(p["x"], 16)
    p["hw_b"].unroll(p["x"], 16)
    d = build_design(p["output"], (8, 8))
    assert d.stages["B"].schedule.text(["x", "y"]) == "8y + x"
    assert d.stages["A"].schedule.text(["x", "y"]) == "441 + 128y + x"
    assert d.stages["prod"].schedule.text(["x", "y"]) == "504 + 128y + 16x"
    assert d.latency == 8 * 63 + 128 * 7 + 16 * 7 + 1 == 1513
    assert d.capacities["hw_b"] == 8 * 64  # B on chip
    live = [(441 + 128 * y + k, 601 + 128 * y + k // 4) for y in range(8) for k in range(64)]  # (write, last read)
    assert d.capacities["hw_a"] == max(sum(w <= t < r for w, r in live) for t in range(1513)) == 96
    ins = mod.make_inputs((8, 8), np.random.default_rng(12), 64)
    np.testing.assert_array_equal(simulate(p["output"], ins, (8, 8), design=d), references.gemm(ins["A"], ins["B"]))
    assert design_report(d).notes == ()


@pytest.mark.parametrize("memory_unroll, every", [(None, 16), (4, 4)])
def test_the_report_names_the_host_stream_an_input_bound_design_waits_for(memory_unroll, every):
    """The same gemm with its inputs at the output's rate (a value every 16 cycles) or 4 a step: B's 512 values
    span 128 x 63 + 16 x 7 + 1 = 8177 cycles (32 x 63 + 4 x 7 + 1 = 2045) of the latency; the note says so and
    names the unroll of B's input memory that fills it a value a cycle (16 pixels a step)."""
    mod = example("gemm")
    p = mod.algorithm(64)
    mod.accel_schedule(p, (8, 8), 4)
    if memory_unroll:
        p["hw_a"].unroll(p["x"], memory_unroll)
        p["hw_b"].unroll(p["x"], memory_unroll)
    d = build_design(p["output"], (8, 8))
    span = every * 8 * 63 + every * 7 + 1
    report = design_report(d, "gemm")
    assert report.notes == (f"gemm: input-bound: host stream 'B' delivers 512 values over {span} of the {d.latency} "
                            f"cycles (one every {span / 512:.1f}); fill its input memory at its own rate, e.g. "
                            "hw_b.unroll(x, 16)",)
    assert report.notes[0] in format_reports([report])


def test_gemm_over_several_tiles_matches_numpy():
    mod = example("gemm")
    out, _ = mod.build("accel", tile=(8, 8), k_unroll=2)
    ins = mod.make_inputs((16, 24), np.random.default_rng(11))
    np.testing.assert_array_equal(simulate(out, ins, (16, 24)), references.gemm(ins["A"], ins["B"]))


def test_fully_unrolled_gemm_is_unchanged():
    mod = example("gemm")
    size = (12, 10)
    out, _ = mod.build("accel", tile=size)
    d = build_design(out, size)
    assert d.reduction_cycles == 1 and d.accumulators == {}
    assert d.latency == gemm_latency(*size, mod.K, 1)
    assert "prod" not in d.stages and "prod_acc" not in d.memory_classes()


def test_conv_layer_with_channels_in_time():
    mod = example("conv_layer")
    size = (12, 7)
    w, h = size
    out, _ = mod.build("accel", tile=size, ci_unroll=1)
    d = build_design(out, size + (mod.CO,))
    steps, row = mod.CI, w + 2
    assert d.reduction_cycles == steps
    # conv(x, y) reads input pixel (x + 2, y + 2) (written at steps * (2 * row + 2) later than pixel (x, y))
    # in its first iteration, channel 0: it starts then and writes after its last channel
    start = steps * (2 * row + 2)
    assert d.offsets["conv"] == start + steps - 1 == d.offsets["output"]
    assert d.latency == start + steps - 1 + steps * (w - 1) + steps * row * (h - 1) + 1
    # pixels arrive every `steps` cycles; channel c of a pixel is last read start + c cycles after its
    # write, so ceil((start + c) / steps) pixels of channel c are held: 30 + 31 + 31 values
    assert d.capacities["hw_input"] == sum(-(-(start + c) // steps) for c in range(steps))
    assert d.accumulators["conv_acc"].capacity == mod.CO  # all output channels are summed in space
    img = np.random.default_rng(5).integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    sim = simulate(out, {"input": img}, size + (mod.CO,), design=d)
    np.testing.assert_array_equal(sim, references.conv_layer(img, w, h, mod.weights()))


def test_conv_layer_fully_unrolled_is_unchanged():
    mod = example("conv_layer")
    size = (12, 7)
    out, _ = mod.build("accel", tile=size)
    d = build_design(out, size + (mod.CO,))
    assert d.accumulators == {} and d.offsets["output"] == 2 * (size[0] + 2) + 2


def _rowsum(extent=4, factor=None):
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, extent, name="r")
    s = Func("rowsum")
    s[x, y] = u16(0)
    s[x, y] += u16(inp[x + r.x, y]) * u16(r.x + 1)
    out = Func("output")
    out[x, y] = s[x, y]
    out.tile(x, y, xo, yo, xi, yi, 8, 4).hw_accelerate(xi, xo)
    s.compute_at(out, xo)
    if factor is not None:
        s.update(0).unroll(r.x, factor)
    return out


def test_rowsum_accumulator_ports_in_isl():
    out = _rowsum(4)
    d = build_design(out, (8, 4))
    acc = d.accumulators["rowsum_acc"]
    (wp,), (rp,) = acc.write_ports, acc.read_ports
    # every read-back (x, y, i) happens exactly one cycle after the write of iteration i of the same point
    write_at = wp.schedule_map.reverse().apply_range(wp.access_map)  # cycle -> index written
    reads = rp.schedule_map.reverse().apply_range(rp.access_map)
    shifted = isl.Map("{ [t] -> [t - 1] }").apply_range(write_at)
    assert reads.is_subset(shifted)
    # x stride 4 (four iterations a point); the row of 8 + 3 input pixels sets the y stride
    assert d.stages["rowsum"].schedule.strides == (4, 4 * 11)
    img = np.random.default_rng(1).integers(0, 256, (4, 11), dtype=np.uint8)
    want = sum(img[:, k:k + 8].astype(np.uint16) * (k + 1) for k in range(4))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (8, 4), design=d), want)


def test_partial_sum_read_before_write_is_loud():
    out = _rowsum(4)
    d = build_design(out, (8, 4))
    d.accumulators["rowsum_acc"].read_ports[0].schedule.offset -= 2
    img = np.zeros((4, 11), np.uint8)
    with pytest.raises(LoomError, match="buffer 'rowsum_acc'.*iteration 1 of rowsum\\(0, 0\\).*read before write"):
        simulate(out, {"input": img}, (8, 4), design=d)


def test_partial_sum_eviction_is_loud():
    out = _rowsum(4)
    d = build_design(out, (8, 4))
    img = np.zeros((4, 11), np.uint8)
    with pytest.raises(LoomError, match="buffer 'rowsum_acc'.*capacity 0 \\(read after eviction\\)"):
        simulate(out, {"input": img}, (8, 4), design=d, capacities={"rowsum_acc": 0})


def test_input_read_too_early_in_an_iteration_is_loud():
    out = _rowsum(4)
    d = build_design(out, (8, 4))
    plan = d.stages["rowsum"]
    plan.schedule.offset -= 1  # the last iteration would read input(x + 3, y) one cycle before it arrives
    img = np.zeros((4, 11), np.uint8)
    with pytest.raises(LoomError, match="buffer 'input'.*read before write"):
        simulate(out, {"input": img}, (8, 4), design=d)


def test_unroll_factor_must_divide_the_reduction():
    with pytest.raises(LoomError, match=r"test_streaming_reductions_in_time.py:\d+ Func 'rowsum': unroll\(r.x, 3\) "
                       r"does not divide the reduction extent 4; .*no tail, whatever the TailStrategy.*unroll it by "
                       r"one of 1, 2, 4"):
        Accelerator(_rowsum(4, 3))


def test_partial_unroll_reads_several_values_per_cycle():
    out = _rowsum(4, 2)
    d = build_design(out, (8, 4))
    assert d.reduction_cycles == 2 and len(d.buffers["input"].read_ports) == 2
    img = np.random.default_rng(2).integers(0, 256, (4, 11), dtype=np.uint8)
    want = sum(img[:, k:k + 8].astype(np.uint16) * (k + 1) for k in range(4))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (8, 4), design=d), want)


def test_two_pixels_per_cycle_with_k_in_time():
    from loom.frontends.pipeline.recipes import stream_through_accelerator
    mod = example("gemm")
    p = mod.algorithm()
    stream_through_accelerator(p["output"], (8, 8), buffered=[p["hw_a"], p["hw_b"], p["prod"]], rate=2)
    p["prod"].update(0).unroll(p["r"].x, 2)
    d = build_design(p["output"], (8, 8))
    # 4 cycles per pair of pixels: x stride 4 per pair, rows of 8 / 2 pairs -> row stride 16; B row 7 arrives
    # at 16 * 7, read in prod(0, 0)'s last step 3, so prod's first write is at 112; the last pair is 4 * 3 +
    # 16 * 7 cycles later
    assert d.reduction_cycles == 4
    assert d.latency == 16 * 7 + 4 * 3 + 16 * 7 + 1
    assert d.accumulators["prod_acc"].capacity == 2  # one partial sum per lane
    ins = mod.make_inputs((8, 8), np.random.default_rng(1))
    np.testing.assert_array_equal(simulate(p["output"], ins, (8, 8), design=d), references.gemm(ins["A"], ins["B"]))


@pytest.mark.parametrize("outer", [False, True])
def test_a_reduction_reordered_outside_the_pixels_keeps_the_tiles_partial_sums(outer):
    """acc(x, y) = sum of 4 taps along x, the taps iterated in time. Reordered outside the pixels
    (update().reorder(x, y, r.x), output stationary) every tap sweeps the whole 8 x 6 tile, so the accumulator
    holds the tile's partial sums (48 values) instead of one; values equal numpy either way."""
    from loom.frontends.pipeline.recipes import stream_through_accelerator

    inp = ImageParam(UInt8, 2, "input")
    hw, acc, out = Func("hw"), Func("acc"), Func("output")
    r = RDom(0, 4, name="r")
    hw[x, y] = u16(inp[x, y])
    acc[x, y] = u16(0)
    acc[x, y] += hw[x + r.x, y] * u16(r.x + 1)
    out[x, y] = acc[x, y]
    stream_through_accelerator(out, (8, 6), buffered=[hw, acc])
    if outer:
        acc.update().reorder(x, y, r.x)
    d = build_design(out, (8, 6))
    assert d.stages["acc"].node.reduction_outer == outer
    assert d.accumulators["acc_acc"].capacity == (48 if outer else 1)
    img = np.random.default_rng(5).integers(0, 256, (12, 19)).astype(np.uint8)
    want = sum(img[:12, i:i + 16].astype(np.uint16) * (i + 1) for i in range(4)).astype(np.uint16)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 12)), want)
