"""Rows a step: ``unroll(x, nx)`` and ``unroll(y, ny)`` on every stage, a nx x ny block a step (issue 15).

A pipeline the project does not ship: input -> hw_input (a cast) -> output (3x3 mean). Every stage computes nx x ny
pixels a step; its rows advance ny per row period. Checked: values bit for bit against numpy, Halide and the CPU path
over 2 x 2 tiles; offsets and latency against the hand schedule below; capacities against the live values counted
straight from that schedule (not loom's code), and tight (one less evicts a value); the combinations loom does not
schedule are refused naming the Func.
"""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u16, u8
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

from tests.streaming.test_streaming_multirate import halide_box3, hl, hx, hy, live_max

W, H = 24, 8  # output tile
BLOCKS = [(1, 1), (2, 2), (1, 2), (4, 2), (2, 4)]


def blur(nx, ny, tile=(W, H), hw_rows=None):
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y])
    out[x, y] = u8(sum((hw[x + i, y + j] for j in range(3) for i in range(3)), start=u16(0)) / 9)
    out.tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    if nx > 1:
        out.unroll(xi, nx)
        hw.unroll(x, nx)
    if ny > 1:
        out.unroll(yi, ny)
    hw_rows = ny if hw_rows is None else hw_rows
    if hw_rows > 1:
        hw.unroll(y, hw_rows)
    return out


def np_blur(img, w, h):
    a = img.astype(np.uint16)
    return (sum(a[j:j + h, i:i + w] for j in range(3) for i in range(3)) // 9).astype(np.uint8)


def halide_blur(inp):
    hw, out = hl.Func("hw"), hl.Func("out")
    hw[hx, hy] = hl.u16(inp[hx, hy])
    out[hx, hy] = hl.u8(halide_box3(hw) / 9)
    return out


def hand_schedule(nx, ny):
    """By hand. Both stages fire every cycle on nx x ny blocks. hw_input's row is W + 2 wide: Q = ceil((W + 2) / nx)
    cycles per block of ny rows. hw(x, y) at Q floor(y / ny) + floor(x / nx), output(x, y) at D + Q floor(y / ny) +
    floor(x / nx). The output reads hw(x + i, y + j), i, j < 3; the two terms depend on x and y alone, so
    D = Q max_y (floor((y + 2) / ny) - floor(y / ny)) + max_x (floor((x + 2) / nx) - floor(x / nx)). The last block
    is written at D + Q (ceil(H / ny) - 1) + ceil(W / nx) - 1: latency one more."""
    q = -(-(W + 2) // nx)
    d = q * max((y + 2) // ny - y // ny for y in range(H)) + max((x + 2) // nx - x // nx for x in range(W))
    return q, d, d + q * (-(-H // ny) - 1) + -(-W // nx) - 1 + 1


def live_values(nx, ny):
    q, d, _ = hand_schedule(nx, ny)
    hw_t = {(x, y): q * (y // ny) + x // nx for y in range(H + 2) for x in range(W + 2)}
    last = dict(hw_t)
    for y in range(H):
        for x in range(W):
            t = d + q * (y // ny) + x // nx
            for j in range(3):
                for i in range(3):
                    last[x + i, y + j] = max(last[x + i, y + j], t)
    return live_max(hw_t, last)


@pytest.mark.parametrize("nx,ny", BLOCKS)
def test_blur_in_blocks_is_bit_exact_against_numpy_halide_and_the_cpu_path(nx, ny):
    out = blur(nx, ny)
    d = build_design(out, (W, H))
    size = (2 * W, 2 * H)
    for seed in range(2):
        img = np.random.default_rng(seed).integers(0, 256, (size[1] + 2, size[0] + 2)).astype(np.uint8)
        want = np_blur(img, *size)
        assert len(np.unique(want)) > 1
        np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), want)
        np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)
        if hl is not None:
            np.testing.assert_array_equal(np.asarray(halide_blur(hl.Buffer(img)).realize(list(size))), want)


@pytest.mark.parametrize("nx,ny", BLOCKS)
def test_blur_in_blocks_follows_the_hand_schedule(nx, ny):
    d = build_design(blur(nx, ny), (W, H))
    q, off, latency = hand_schedule(nx, ny)
    hw, out = d.stages["hw_input"].schedule, d.stages["output"].schedule
    for s, o in ((hw, 0), (out, off)):
        assert s.lanes == nx and s.offset == o
        if ny == 1:
            assert (s.strides, s.floors) == ((1, q), ())
        else:  # y enters as floor(y / ny)
            assert (s.strides, s.floors) == ((1, 0), ((1, ny, q),))
    assert d.latency == latency


@pytest.mark.parametrize("nx,ny", BLOCKS)
def test_blur_in_blocks_holds_its_live_values_and_no_more(nx, ny):
    """Capacities equal the live values of the hand schedule: about two rows of hw_input plus a block row."""
    d = build_design(blur(nx, ny), (W, H))
    live = live_values(nx, ny)
    assert d.capacities["hw_input"] == live
    assert 2 * (W + 2) <= live <= (ny + 1) * (W + 2) + 2 * nx * ny


@pytest.mark.parametrize("nx,ny", [(2, 2), (1, 2), (4, 2)])
def test_blur_in_blocks_capacities_are_tight(nx, ny):
    out = blur(nx, ny)
    d = build_design(out, (W, H))
    img = np.random.default_rng(3).integers(0, 256, (2 * H + 2, 2 * W + 2)).astype(np.uint8)
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, {"input": img}, (2 * W, 2 * H), design=d, capacities={"hw_input": d.capacities["hw_input"] - 1})


def test_capacities_from_a_few_rows_equal_the_full_sweep():
    out = blur(2, 2, tile=(W, 40))
    fast, exact = build_design(out, (W, 40)), build_design(out, (W, 40), exact_capacity=True)
    assert fast.capacities == exact.capacities and fast.latency == exact.latency


def test_kernels_and_copies_count_the_block():
    """A 2 x 2 block a step places 4 copies of each stage's kernel."""
    from loom.streaming.resources import stage_copies

    d = build_design(blur(2, 2), (W, H))
    assert stage_copies(d, "output") == 4 and stage_copies(d, "hw_input") == 4


# blur then 2x2 average pool: hw_input and blur 2n x 2ny a step, the pool n x ny, step for step ---------------------

from tests.streaming.test_streaming_downsample_rates import blur_pool as downsample_blur_pool  # noqa: E402
from tests.streaming.test_streaming_downsample_rates import blur_pool_live, halide_blur_pool, np_blur_pool  # noqa: E402

POOL = [(1, 1), (2, 1), (1, 2), (2, 2)]  # the pool's (n, ny); the producers compute (2n, 2ny)


def blur_pool(n, ny, tile=(W, H), lanes=None, rows=None):
    return downsample_blur_pool(n, lanes or 2 * n, 2, tile, rows or 2 * ny, ny)


def pool_hand_schedule(n, ny):
    """By hand. hw_input and blur compute L x R = 2n x 2ny blocks, the pool n x ny, all every cycle. hw_input's row
    is 2W + 2 wide: Q = ceil((2W + 2) / L) cycles per block row, for R producer rows and ny = R / 2 pool rows alike.
    hw(x, y) at Q floor(y / R) + floor(x / L), blur at D_b + the same, the pool (x, y) at D_o + Q floor(y / ny) +
    floor(x / n). blur reads hw(x + i, y + j): D_b = Q max_y (floor((y + 2) / R) - floor(y / R)) + max_x
    (floor((x + 2) / L) - floor(x / L)); the pool reads blur(2x + i, 2y + j), i, j < 2, in the block it is written
    with: D_o = D_b. Latency: D_o + Q (ceil(H / ny) - 1) + ceil(W / n)."""
    lanes, rows = 2 * n, 2 * ny
    q = -(-(2 * W + 2) // lanes)
    d_b = q * max((y + 2) // rows - y // rows for y in range(2 * H)) + \
        max((x + 2) // lanes - x // lanes for x in range(2 * W))
    d_o = d_b + q * max((2 * y + j) // rows - y // ny for y in range(H) for j in range(2)) + \
        max((2 * x + i) // lanes - x // n for x in range(W) for i in range(2))
    return q, d_b, d_o, d_o + q * (-(-H // ny) - 1) + -(-W // n)


def pool_live_values(n, ny):
    lanes, rows = 2 * n, 2 * ny
    q, d_b, d_o, _ = pool_hand_schedule(n, ny)
    return blur_pool_live(lambda x, y: q * (y // rows) + x // lanes, lambda x, y: d_b + q * (y // rows) + x // lanes,
                          lambda x, y: d_o + q * (y // ny) + x // n, 2)


@pytest.mark.parametrize("n,ny", POOL)
def test_blur_then_pool_in_blocks_is_bit_exact_against_numpy_halide_and_the_cpu_path(n, ny):
    out = blur_pool(n, ny)
    d = build_design(out, (W, H))
    size = (2 * W, 2 * H)
    img = np.random.default_rng(5).integers(0, 256, (2 * size[1] + 2, 2 * size[0] + 2)).astype(np.uint8)
    want = np_blur_pool(img, 2, *size)
    assert len(np.unique(want)) > 1
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)
    if hl is not None:
        np.testing.assert_array_equal(np.asarray(halide_blur_pool(hl.Buffer(img), 2).realize(list(size))), want)


@pytest.mark.parametrize("n,ny", POOL)
def test_blur_then_pool_in_blocks_follows_the_hand_schedule(n, ny):
    d = build_design(blur_pool(n, ny), (W, H))
    q, d_b, d_o, latency = pool_hand_schedule(n, ny)
    hw, blur, out = (d.stages[k].schedule for k in ("hw_input", "blur", "output"))
    assert (hw.lanes, hw.strides, hw.floors, hw.offset) == (2 * n, (1, 0), ((1, 2 * ny, q),), 0)
    assert (blur.lanes, blur.strides, blur.floors, blur.offset) == (2 * n, (1, 0), ((1, 2 * ny, q),), d_b)
    want_out = ((1, q), ()) if ny == 1 else ((1, 0), ((1, ny, q),))
    assert (out.lanes, (out.strides, out.floors), out.offset) == (n, want_out, d_o)
    assert d.latency == latency


@pytest.mark.parametrize("n,ny", POOL)
def test_blur_then_pool_in_blocks_holds_its_live_values_and_no_more(n, ny):
    d = build_design(blur_pool(n, ny), (W, H))
    assert (d.capacities["hw_input"], d.capacities["blur"]) == pool_live_values(n, ny)
    assert d.capacities["blur"] == 0  # the pool reads each blur block in the cycle it is written: a wire


def test_blur_then_pool_in_blocks_capacities_are_tight():
    out = blur_pool(1, 2)
    d = build_design(out, (W, H))
    img = np.random.default_rng(3).integers(0, 256, (4 * H + 2, 4 * W + 2)).astype(np.uint8)
    with pytest.raises(LoomError, match="read after eviction"):
        simulate(out, {"input": img}, (2 * W, 2 * H), design=d, capacities={"hw_input": d.capacities["hw_input"] - 1})


@pytest.mark.parametrize("rows,ny", [(1, 2), (4, 2), (2, 2), (4, 1)])
def test_blur_then_pool_with_other_row_mixes_is_bit_exact(rows, ny):
    """Producers not matched to the pool's rows (1 or 4 rows a step under a 2-row pool; a 2-row pool over 2-row
    producers, which then fire every other block row): still bit-exact, reads after writes (simulate checks)."""
    out = blur_pool(1, ny, lanes=2, rows=rows)
    d = build_design(out, (W, H))
    size = (2 * W, 2 * H)
    img = np.random.default_rng(6).integers(0, 256, (2 * size[1] + 2, 2 * size[0] + 2)).astype(np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), np_blur_pool(img, 2, *size))


# refusals ------------------------------------------------------------------------------------------------------


def test_rows_a_step_through_a_transposed_read_is_refused_by_name():
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y] = u16(inp[x, y])
    out[x, y] = u8(hw[y, x] / 2)
    out.tile(x, y, xo, yo, xi, yi, 8, 8).hw_accelerate(xi, xo)
    hw.compute_at(out, xo).unroll(y, 2)
    out.unroll(yi, 2)
    with pytest.raises(LoomError) as e:
        build_design(out, (8, 8))
    assert "Func 'output'" in str(e.value) and "along y" in str(e.value)


def test_rows_a_step_with_a_reduction_in_time_is_refused_by_name():
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, 4, name="r")
    s, out = Func("rowsum"), Func("output")
    s[x, y] = u16(0)
    s[x, y] += u16(inp[x + r.x, y])
    out[x, y] = s[x, y]
    out.tile(x, y, xo, yo, xi, yi, 8, 4).hw_accelerate(xi, xo)
    s.compute_at(out, xo).unroll(y, 2)
    out.unroll(yi, 2)
    with pytest.raises(LoomError) as e:
        build_design(out, (8, 4))
    assert "Func 'rowsum'" in str(e.value) and "reduction in time" in str(e.value)


def test_ubuf_ir_schedules_rows_in_blocks():
    """The ubuf IR states y as floor(y / 2) in every port's schedule (the value simulation reads these back)."""
    from loom.streaming.to_ubuf import design_to_ir

    text = str(design_to_ir(build_design(blur(2, 2), (W, H))))
    q, d, _ = hand_schedule(2, 2)
    assert f'schedule "{{ hw_input_in[x, y] -> [floor(x/2) + {q}*floor(y/2)] }}"' in text
    assert f'schedule "{{ output_out[x, y] -> [{d} + floor(x/2) + {q}*floor(y/2)] }}"' in text


@pytest.mark.parametrize("make", [lambda: blur(2, 2, tile=(1100, 6)), lambda: blur_pool(1, 2, tile=(1100, 6))])
def test_wide_tile_capacities_in_blocks_from_narrow_proxies_equal_the_full_sweep(make):
    out = make()
    fast, exact = build_design(out, (1100, 6)), build_design(out, (1100, 6), exact_capacity=True)
    assert fast.capacities == exact.capacities


# memory mapping: vector delay lines of nx x ny-word blocks ------------------------------------------------------

def hand_taps(nx, ny):
    """By hand. Output lane (lx, ly) reads hw(x + i, y + j): the block bx = floor((lx + i) / nx) steps and
    by = floor((ly + j) / ny) block rows after its own, so D - Q by - bx cycles after its write. hw_input writes
    every cycle (Q steps fill a block row), so the taps count values too."""
    q, d, _ = hand_schedule(nx, ny)
    return sorted({d - q * ((ly + j) // ny) - (lx + i) // nx
                   for lx in range(nx) for ly in range(ny) for i in range(3) for j in range(3)})


@pytest.mark.parametrize("nx,ny,taps,lines,mems", [
    (1, 2, [0, 1, 2, 26, 27, 28], [24], 1),  # 2 lanes x 1 line delay: 2 in + 2 out ports, one tile
    (2, 2, [0, 1, 13, 14], [12], 2),  # 4 lanes x 1 line delay: 4 + 4 ports, two tiles
    (4, 2, [0, 1, 7, 8], [6], 4),  # 8 lanes: four tiles
])
def test_blur_in_blocks_maps_to_a_vector_delay_line(nx, ny, taps, lines, mems):
    """Before: an addressed memory banked for 9 x nx x ny reads a cycle (9, 18, 36 tiles)."""
    from loom.streaming import map_memories
    from loom.streaming.memory_tile import MemoryTile
    from loom.streaming.simulate_mapped import MappedSimulation, simulate_mapped

    out = blur(nx, ny)
    d = build_design(out, (W, H))
    hw = map_memories(d).buffers["hw_input"]
    assert hand_taps(nx, ny) == taps
    assert (hw.kind, hw.width, hw.taps, hw.line_delays, hw.mem_tiles) == ("vector delay line", nx * ny, taps, lines,
                                                                          mems)
    assert hw.shift_registers == (max(taps) - sum(lines)) * nx * ny  # the short gaps: registers per lane
    assert max(taps) * nx * ny >= d.capacities["hw_input"]  # the chain holds every live value
    assert 2 * max(lines) <= MemoryTile().words  # a tile's two lanes' line delays fit its words
    img = np.random.default_rng(4).integers(0, 256, (H + 2, W + 2)).astype(np.uint8)
    report = MappedSimulation()
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, (W, H), design=d, report=report),
                                  np_blur(img, W, H))
    assert report.replayed_reads["hw_input"] == 9 * W * H


def test_a_delay_line_one_short_is_caught():
    import copy

    from loom.streaming import map_memories
    from loom.streaming.simulate_mapped import simulate_mapped

    out = blur(2, 2)
    d = build_design(out, (W, H))
    good = map_memories(d)
    img = np.random.default_rng(4).integers(0, 256, (H + 2, W + 2)).astype(np.uint8)
    short = copy.deepcopy(good)  # the line delay one value short, the chain still adding up
    hw = short.buffers["hw_input"]
    hw.line_delays, hw.taps = [hw.line_delays[0] - 1], [t - (t > 1) for t in hw.taps]
    with pytest.raises(LoomError, match="13 values deep, but at cycle .* written 14 writes earlier"):
        simulate_mapped(out, {"input": img}, (W, H), design=d, memory_map=short)
    early = copy.deepcopy(good)  # the taps a cycle early
    early.buffers["hw_input"].tap_cycles = [t - (t > 1) for t in early.buffers["hw_input"].tap_cycles]
    with pytest.raises(LoomError, match="needs a tap at 14 cycles"):
        simulate_mapped(out, {"input": img}, (W, H), design=d, memory_map=early)


@pytest.mark.parametrize("n,ny,mems", [(1, 1, 2), (2, 1, 4), (1, 2, 4), (2, 2, 8)])
def test_blur_then_pool_in_blocks_maps_to_delay_lines(n, ny, mems):
    """By hand: hw_input 2n x 2ny lanes, taps 0, 1, Q, Q + 1 (Q = ceil((2W + 2) / 2n): one x step, one block row),
    one line delay of Q - 1 per lane: MEMs = 4 n ny / 2. blur is a wire: the pool takes each block as it is
    written (floor(2x / 2n) = floor(x / n) for 2 x 2 pooling at n x ny over 2n x 2ny)."""
    from loom.streaming import map_memories
    from loom.streaming.simulate_mapped import simulate_mapped

    out = blur_pool(n, ny)
    d = build_design(out, (W, H))
    m = map_memories(d)
    q = -(-(2 * W + 2) // (2 * n))
    hw = m.buffers["hw_input"]
    assert (hw.taps, hw.line_delays, hw.mem_tiles, hw.width) == ([0, 1, q, q + 1], [q - 1], mems, 4 * n * ny)
    assert m.buffers["blur"].kind == "wire" and m.mem_tiles == mems
    img = np.random.default_rng(5).integers(0, 256, (2 * H + 2, 2 * W + 2)).astype(np.uint8)
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, (W, H), design=d), np_blur_pool(img, 2, W, H))


def test_a_pool_row_a_step_over_four_row_blocks_stays_an_addressed_memory_and_says_why():
    """The pool's rows 2y, 2y + 1 are the first or the second half of a 4-row blur block as y is even or odd, and
    y is not a lane of a 1-row step: the delay varies, no delay line exists."""
    from loom.streaming import map_memories
    from loom.streaming.simulate_mapped import simulate_mapped

    out = blur_pool(1, 1, lanes=2, rows=4)
    d = build_design(out, (W, H))
    b = map_memories(d).buffers["blur"]
    assert b.kind == "addressed memory" and "port of 'output'" in b.note and "not whole blocks of 4" in b.note
    img = np.random.default_rng(6).integers(0, 256, (2 * H + 2, 2 * W + 2)).astype(np.uint8)
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, (W, H), design=d), np_blur_pool(img, 2, W, H))


def test_a_stream_read_at_different_rows_a_step_is_refused_by_name():
    """'a' computes 2 rows a step and the output 1, both reading the host stream 'input': one stream cannot
    arrive at both."""
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt8, 2, "input")
    a, out = Func("a"), Func("output")
    a[x, y] = u16(inp[x, y]) * 2
    out[x, y] = a[x, y] + u16(inp[x, y])
    out.tile(x, y, xo, yo, xi, yi, 8, 8).hw_accelerate(xi, xo)
    a.compute_at(out, xo).unroll(y, 2)
    with pytest.raises(LoomError, match=r"Func 'input': the stream is read at different rows per step \(\[1, 2\]\); "
                                        "its readers must compute the same rows a step") as e:
        build_design(out, (8, 8))
    assert e.value.construct == "unroll"
    out.unroll(yi, 2)  # the same rows a step: accepted
    build_design(out, (8, 8))


def test_rows_a_step_with_compute_sharing_is_refused_by_name():
    from loom.frontends.pipeline.recipes import share_kernels, stream_through_accelerator

    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw, f, g, out = Func("hw"), Func("f"), Func("g"), Func("out")
    hw[x, y] = u16(inp[x, y])
    f[x, y] = hw[x, y] + hw[x + 1, y]
    g[x, y] = f[x, y] + f[x + 1, y]
    out[x, y] = g[x, y]
    loops = stream_through_accelerator(out, (8, 8), buffered=[hw, f, g])
    share_kernels([f, g], "line", loops)
    build_design(out, (8, 8))  # one row a step: shared
    for s in (hw, f, g):
        s.unroll(y, 2)
    out.unroll(loops.yi, 2)
    with pytest.raises(LoomError, match=r"Func 'out': compute sharing schedules one row at a time; unroll\(y, 2\) "
                                        r"\(rows a step\) is not supported with it") as e:
        build_design(out, (8, 8))
    assert e.value.construct == "unroll"
