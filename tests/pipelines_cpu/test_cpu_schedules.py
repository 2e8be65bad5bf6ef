"""Schedules lowered to loops (compute/store levels, splits with tails, reorder, unroll, in_, bound,
boundary conditions, updates with guards, data-dependent reads and writes) against numpy."""

import re

import numpy as np
import pytest
from xdsl.dialects import arith, scf

from loom.errors import LoomError
from loom.frontends import pipeline as pl
from loom.frontends.pipeline import evaluate
from loom.frontends.pipeline.cpu_lower import MIN_PARTITIONED_EXTENT
from loom.jit.pipeline import compile_cpu, run_cpu


def _img(shape, seed=0, dtype=np.uint8):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=dtype)


def _blur_pipeline():
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    bx = pl.Func("bx")
    bx[x, y] = pl.u16(inp[x, y]) + pl.u16(inp[x + 1, y]) + pl.u16(inp[x + 2, y])
    out = pl.Func("out")
    out[x, y] = pl.u8((bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 9)
    return x, y, inp, bx, out


def _blur_numpy(img, w, h):
    a = img.astype(np.uint16)
    bx = a[:, 0:w] + a[:, 1:w + 1] + a[:, 2:w + 2]
    return ((bx[0:h] + bx[1:h + 1] + bx[2:h + 2]) // 9).astype(np.uint8)


SCHEDULES = {
    "inline": lambda x, y, bx, out, v: None,
    "root": lambda x, y, bx, out, v: bx.compute_root(),
    "at_row": lambda x, y, bx, out, v: bx.compute_at(out, y),
    "at_row_store_root": lambda x, y, bx, out, v: bx.compute_at(out, y).store_root(),
    "tiles_with_tails": lambda x, y, bx, out, v: (out.tile(x, y, v[0], v[1], v[2], v[3], 8, 5),
                                                  bx.compute_at(out, v[0])),
    "store_at_row_of_tiles": lambda x, y, bx, out, v: (out.tile(x, y, v[0], v[1], v[2], v[3], 6, 4),
                                                       bx.compute_at(out, v[0]).store_at(out, v[1])),
    "split_reorder_unroll": lambda x, y, bx, out, v: (out.split(x, v[0], v[2], 4).reorder(v[2], y, v[0])
                                                      .unroll(v[2]), bx.compute_at(out, y).unroll(x, 3)),
    "inner_split_of_tile": lambda x, y, bx, out, v: (out.tile(x, y, v[0], v[1], v[2], v[3], 9, 9)
                                                     .split(v[2], v[4], v[5], 4),
                                                     bx.compute_at(out, v[4])),
}


@pytest.mark.sanitize
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_producer_consumer_schedules(name):
    x, y, inp, bx, out = _blur_pipeline()
    names = [pl.Var(n) for n in ("xo", "yo", "xi", "yi", "xio", "xii")]
    SCHEDULES[name](x, y, bx, out, names)
    for w, h in [(23, 11), (5, 3)]:
        img = _img((h + 2, w + 2), seed=w)
        got = run_cpu(out, {"input": img}, (w, h))
        np.testing.assert_array_equal(got, _blur_numpy(img, w, h))


@pytest.mark.sanitize
def test_in_wrapper_and_boundary_conditions():
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    edge = pl.repeat_edge(inp)
    zero = pl.constant_exterior(inp, 7)
    src = pl.Func("src")
    src[x, y] = pl.u16(edge[x, y]) + pl.u16(zero[x, y])
    copy = src.in_()
    copy.compute_root()
    out = pl.Func("out")
    out[x, y] = src[x - 1, y] + src[x + 1, y - 1] + src[x, y + 2]
    img = _img((9, 13), 3)
    h, w = img.shape
    got = run_cpu(out, {"input": img}, (w, h))
    e = np.pad(img, 3, mode="edge").astype(np.uint16)
    z = np.pad(img, 3, constant_values=7).astype(np.uint16)
    s = e + z  # s[y + 3, x + 3] = src[x, y]
    want = s[3:3 + h, 2:2 + w] + s[2:2 + h, 4:4 + w] + s[5:5 + h, 3:3 + w]
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_update_order_with_guarded_tails():
    # Horner's rule is order-sensitive: the split RDom (7 by 4) and the split pure Var of the update
    # (width 10 by 4) need guards, not shifted tiles, or points would be accumulated twice
    x, xo, xi, ro, ri = (pl.Var(n) for n in ("x", "xo", "xi", "ro", "ri"))
    inp = pl.ImageParam(pl.UInt32, 1, "input")
    r = pl.RDom(0, 7, name="r")
    f = pl.Func("f")
    f[x] = pl.u32(1)
    f[x] = f[x] * 3 + inp[x + r.x]
    f.update().split(r.x, ro, ri, 4).split(x, xo, xi, 4)
    f.compute_root()
    out = pl.Func("out")
    out[x] = f[x]
    vals = np.random.default_rng(4).integers(0, 2 ** 32, 16, dtype=np.uint32)
    got = run_cpu(out, {"input": vals}, (10,))
    want = np.ones(10, np.uint64)
    for k in range(7):
        want = (want * 3 + vals[k:k + 10]) % 2 ** 32
    np.testing.assert_array_equal(got, want.astype(np.uint32))


@pytest.mark.sanitize
def test_histogram_and_lookup_table():
    x, y, i = pl.Var("x"), pl.Var("y"), pl.Var("i")
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    r = pl.RDom(0, 13, 0, 9, name="r")
    hist = pl.Func("hist")
    hist[i] = pl.u32(0)
    hist[inp[r.x, r.y]] += 1  # data-dependent write
    lut = pl.Func("lut")
    lut[i] = pl.u32(i) * pl.u32(i) % 1000
    lut.bound(i, 0, 256).compute_root()
    out = pl.Func("out")
    out[x, y] = hist[inp[x, y]] + lut[inp[x, y]]  # data-dependent reads
    img = _img((9, 13), 6)
    got = run_cpu(out, {"input": img}, (13, 9))
    counts = np.bincount(img.ravel(), minlength=256).astype(np.uint32)
    want = counts[img] + (img.astype(np.uint32) ** 2) % 1000
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_producer_computed_before_the_update_that_reads_it():
    x = pl.Var("x")
    inp = pl.ImageParam(pl.UInt16, 1, "input")
    p = pl.Func("p")
    p[x] = inp[x] * 2
    r = pl.RDom(0, 3, name="r")
    g = pl.Func("g")
    g[x] = pl.u16(0)
    g[x] += p[x + r.x]
    out = pl.Func("out")
    out[x] = g[x] + 1
    g.compute_root()
    p.compute_at(g, x)  # only g's update reads p
    vals = np.arange(20, dtype=np.uint16) * 1000
    got = run_cpu(out, {"input": vals}, (18,))
    pv = vals * np.uint16(2)
    np.testing.assert_array_equal(got, pv[0:18] + pv[1:19] + pv[2:20] + np.uint16(1))


def test_compute_at_an_inlined_func_is_an_error():
    x, y, inp, bx, out = _blur_pipeline()
    mid = pl.Func("mid")
    mid[x, y] = bx[x, y] + 1
    out2 = pl.Func("out2")
    out2[x, y] = mid[x, y]
    bx.compute_at(mid, x)
    with pytest.raises(LoomError, match="compute_at\\(mid, x\\): 'mid' is inlined, so it has no loops"):
        run_cpu(out2, {"input": _img((5, 5))}, (3, 3))


def test_producer_needed_outside_its_compute_level_is_an_error():
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    p = pl.Func("p")
    p[x, y] = pl.u16(inp[x, y])
    h = pl.Func("h")
    h[x, y] = p[x, y] + 1
    out = pl.Func("out")
    out[x, y] = h[x, y] + p[x, y]
    h.compute_root()
    p.compute_at(out, y)  # but h, computed at root, reads p too
    with pytest.raises(LoomError, match="'p' is read where it is not computed"):
        run_cpu(out, {"input": _img((4, 4))}, (4, 4))


def test_bad_inputs_are_loom_errors():
    x, y, inp, bx, out = _blur_pipeline()
    prog = compile_cpu(out, {"input": (6, 7)}, (5, 4))
    with pytest.raises(LoomError, match="ImageParam 'input'.*expected u8 array of shape \\(6, 7\\)"):
        prog({"input": np.zeros((6, 8), np.uint8)})
    with pytest.raises(LoomError, match="ImageParam 'input'.*expected u8 array"):
        prog({"input": np.zeros((6, 7), np.int16)})
    with pytest.raises(LoomError, match="no input shape given for ImageParam\\(s\\) input"):
        compile_cpu(out, {}, (5, 4))
    with pytest.raises(LoomError, match="input has extent 7"):
        compile_cpu(out, {"input": (6, 7)}, (6, 4))
    got = prog({"input": _img((6, 7))})
    np.testing.assert_array_equal(got, evaluate(out, {"input": _img((6, 7))}, (5, 4)))
    np.testing.assert_array_equal(got, _blur_numpy(_img((6, 7)), 5, 4))


@pytest.mark.sanitize
def test_repeat_edge_on_a_bounded_func_with_origin():
    x, y, xo, yo, xi, yi = (pl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    f = pl.Func("f")
    f[x, y] = pl.u16(inp[x, y]) * 3
    f.bound(x, 0, 12).bound(y, 0, 9).compute_root()
    e = pl.repeat_edge(f)
    g = pl.Func("g")
    g[x, y] = e[x - 1, y] + e[x + 1, y + 1]
    out = pl.Func("out")
    out[x, y] = pl.u8(g[x, y] >> 2)
    out.tile(x, y, xo, yo, xi, yi, 5, 4)
    g.compute_at(out, xo).store_at(out, yo)
    img = _img((9, 12), 8)
    got = run_cpu(out, {"input": img}, (7, 6), origin=(6, 4))  # x 6..12 and y 4..9 reach past the edge
    fv = np.pad(img.astype(np.uint16) * 3, 2, mode="edge")  # fv[y + 2, x + 2] = e[x, y]
    gx = np.arange(6, 13)[None, :]
    gy = np.arange(4, 10)[:, None]
    want = ((fv[gy + 2, gx + 1] + fv[gy + 3, gx + 3]) >> 2).astype(np.uint8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_output_whose_update_writes_outside_the_requested_region():
    x = pl.Var("x")
    r = pl.RDom(0, 4, name="r")
    h = pl.Func("h")
    h[x] = pl.i32(0)
    h[r.x + 2] = h[r.x + 2] + 5  # writes h[2..5]; only h[0..2] is requested
    h[x] = h[x] + x
    np.testing.assert_array_equal(run_cpu(h, {}, (3,)), [0, 1, 7])


@pytest.mark.sanitize
def test_a_copy_for_one_consumer_only():
    """Halide's f.in(g): g reads its own copy of f (computed at root here), h still reads f; with a global
    in_() as well, every other consumer reads that one, and each copy reads f itself. Values against numpy."""
    from loom.frontends.pipeline.graph import FuncGraph

    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "inp")
    f, g, h, k, out = (pl.Func(n) for n in ("f", "g", "h", "k", "out"))
    f[x, y] = pl.u16(inp[x, y]) * 3
    g[x, y] = f[x, y] + f[x + 1, y]
    h[x, y] = f[x, y + 1] * 2
    k[x, y] = f[x, y] + 1
    out[x, y] = g[x, y] + h[x, y] + k[x, y]
    assert f.in_(g) is f.in_(g)
    f.in_(g).compute_root()
    f.in_().compute_root()
    f.compute_root()
    graph = FuncGraph(out)
    assert sorted(q.name for q in graph.funcs) == ["f", "f_in", "f_in_g", "g", "h", "k", "out"]
    assert [p.name for p in graph.producers[id(g)]] == ["f_in_g"]
    assert [p.name for p in graph.producers[id(h)]] == ["f_in"]
    a = _img((9, 9))
    f3 = a.astype(np.uint16) * 3
    want = (f3[:8, :8] + f3[:8, 1:9]) + f3[1:9, :8] * 2 + (f3[:8, :8] + 1)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (8, 8)), want)
    np.testing.assert_array_equal(evaluate(out, {"inp": a}, (8, 8)), want)
    with pytest.raises(LoomError, match="in_\\(consumer\\) takes the Func that reads the copy"):
        f.in_("g")


@pytest.mark.sanitize
def test_a_per_row_histogram_and_mixed_types_in_c():
    """A scattered update whose index reads the row's pure Var (h[inp[r, y] / 64, y] += 1) and Halide's type
    promotion (u8 + i16 -> i16, u32 * i16 -> i32, u8 * 0.5 -> f32) in the generated C, against numpy."""
    a = _img((5, 11), seed=3)
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "inp")
    r = pl.RDom(0, 11, name="r")
    h = pl.Func("h")
    h[x, y] = 0
    h[pl.i32(inp[r.x, y]) / 64, y] += 1
    want = np.stack([np.bincount(row // 64, minlength=4) for row in a]).astype(np.int32)
    np.testing.assert_array_equal(run_cpu(h, {"inp": a}, (4, 5)), want)
    m = pl.Func("m")
    m[x, y] = pl.f32((inp[x, y] + pl.i16(-300)) * pl.u32(inp[x + 1, y])) + inp[x, y] * 0.5
    a16, a32 = a.astype(np.int16), a.astype(np.int32)
    want = ((a16[:, :10] - 300).astype(np.int32) * a32[:, 1:]).astype(np.float32) + a[:, :10].astype(np.float32) * 0.5
    np.testing.assert_array_equal(run_cpu(m, {"inp": a}, (10, 5)), want)


@pytest.mark.sanitize
def test_a_producer_at_a_tile_of_a_down_sampling_consumer_is_computed_per_tile():
    """out reads f at 2x, 2y; f computed at out's tile loop covers the tile's 2x-wide window (64 x 32 for a
    32 x 16 tile), not the whole image each tile; values against numpy (and the sanitizers in CI)."""
    from loom.frontends.pipeline import lower_pipeline

    a = np.random.default_rng(5).integers(0, 1000, (64, 128), dtype=np.uint16)
    x, y, xo, yo, xi, yi = (pl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = pl.ImageParam(pl.UInt16, 2, "inp")
    f, out = pl.Func("f"), pl.Func("out")
    cl = pl.BoundaryConditions.repeat_edge(inp)
    f[x, y] = pl.min(cl[x, y], pl.max(cl[x - 2, y], cl[x, y + 2]))
    out[x, y] = f[2 * x, 2 * y] + f[2 * x + 1, 2 * y + 1]
    out.tile(x, y, xo, yo, xi, yi, 32, 16)
    f.compute_at(out, xo)
    text = str(lower_pipeline(out, {"inp": a.shape}, (64, 32)))
    allocs = re.findall(r"memref\.alloca?\(\) : memref<([0-9x]+)xi16>", text)
    assert allocs == ["32x64"]  # f's buffer per tile (it was the whole 64 x 128 region)
    p = np.pad(a, ((0, 2), (2, 0)), mode="edge")  # repeat_edge: x - 2 on the left, y + 2 at the bottom
    fv = np.minimum(a, np.maximum(p[:64, :128], p[2:66, 2:130]))
    want = fv[0::2, 0::2] + fv[1::2, 1::2]
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (64, 32)), want)


def _upsample_level(tile, interp=True):
    """down (2x2 mean of the clamped input) per tile of out = input - up(down), up reading x / 2."""
    x, y, xo, yo, xi, yi = (pl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = pl.ImageParam(pl.Int32, 2, "inp")
    cl = pl.BoundaryConditions.repeat_edge(inp)
    down, up, out = pl.Func("down"), pl.Func("up"), pl.Func("out")
    down[x, y] = (cl[2 * x, 2 * y] + cl[2 * x + 1, 2 * y] + cl[2 * x, 2 * y + 1] + cl[2 * x + 1, 2 * y + 1]) / 4
    up[x, y] = (down[x / 2, y / 2] + down[(x + 1) / 2, (y + 1) / 2]) / 2 if interp else down[x / 2, y / 2]
    out[x, y] = inp[x, y] - up[x, y]
    out.tile(x, y, xo, yo, xi, yi, *tile)
    return out, down, up, (xo, yo)


def _upsample_numpy(a, interp=True):
    h, w = a.shape
    p = np.pad(a, ((0, 2), (0, 2)), mode="edge").astype(np.int64)
    dh, dw = (h + 2) // 2, (w + 2) // 2
    d = (p[0:2 * dh:2, 0:2 * dw:2] + p[0:2 * dh:2, 1:2 * dw:2] + p[1:2 * dh:2, 0:2 * dw:2]
         + p[1:2 * dh:2, 1:2 * dw:2]) // 4
    yy, xx = np.mgrid[0:h, 0:w]
    up = (d[yy // 2, xx // 2] + d[(yy + 1) // 2, (xx + 1) // 2]) // 2 if interp else d[yy // 2, xx // 2]
    return (a - up).astype(np.int32)


@pytest.mark.sanitize
@pytest.mark.parametrize("tile", [(16, 8), (7, 5)])
def test_a_producer_at_a_tile_of_an_up_sampling_consumer_is_computed_per_tile(tile):
    """up reads down at x / 2 and (x + 1) / 2: down computed at out's tile covers floor(base / 2) plus the
    tile's half (one element more than an even base needs), not the whole image per tile. Odd tiles (7 x 5,
    ShiftInwards tails) start at odd bases; the last tile's window is clamped inside down's region. Values
    against numpy (and the sanitizers in CI)."""
    from loom.frontends.pipeline import lower_pipeline

    a = np.random.default_rng(6).integers(-1000, 1000, (30, 44)).astype(np.int32)
    out, down, up, (xo, _) = _upsample_level(tile)
    up.compute_at(out, xo)
    down.compute_at(out, xo)
    text = str(lower_pipeline(out, {"inp": a.shape}, (44, 30)))
    shapes = sorted(re.findall(r"memref\.alloca?\(\) : memref<([0-9x]+)xi32>", text))
    want_down = "x".join(str((t + 1) // 2 + 1) for t in reversed(tile))  # was the whole 16 x 23 region of down
    assert shapes == sorted([want_down, f"{tile[1]}x{tile[0]}"]), shapes
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (44, 30)), _upsample_numpy(a))


@pytest.mark.sanitize
def test_an_up_sampled_producer_stored_outside_its_compute_level():
    """down stored per row of tiles, computed per tile (sliding along x in the row's buffer): values against
    numpy with the widened windows of x / 2 (and the sanitizers in CI)."""
    a = np.random.default_rng(7).integers(-1000, 1000, (24, 37)).astype(np.int32)
    out, down, up, (xo, yo) = _upsample_level((8, 6), interp=False)
    down.store_at(out, yo).compute_at(out, xo)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (37, 24)), _upsample_numpy(a, interp=False))


@pytest.mark.sanitize
@pytest.mark.parametrize("index", ["(x / 2) * 2 + 1", "x + x % 2", "(x >> 1) + 3"])
def test_tile_regions_of_remainder_dependent_indices_are_exact(index):
    """Indices whose offset from the tile's base depends on the base's remainder ((x / 2) * 2 at an odd base
    lies before it) get a region that holds them: these once read outside f's per-tile buffer at tiles 7, 21,
    35 and the shifted last tile, 43. Against the reference evaluator."""
    x, xo, xi = pl.Var("x"), pl.Var("xo"), pl.Var("xi")
    inp = pl.ImageParam(pl.Int32, 1, "inp")
    f, g = pl.Func("f"), pl.Func("g")
    f[x] = inp[x] * 3
    g[x] = f[eval(index)]
    g.split(x, xo, xi, 7)
    f.compute_at(g, xo)
    a = (np.arange(60, dtype=np.int32) * 5 + 1)
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (50,)), evaluate(g, {"inp": a}, (50,)))


@pytest.mark.sanitize
@pytest.mark.parametrize("tile", [16, 6])
def test_an_up_sampled_window_never_reads_past_the_input(tile):
    """g reads f at x / 2 per tile, f reads the unclamped input: the last tile's window, one element wider
    than it needs, is clamped inside f's region (unclamped it computed f at the input's end + 1, a read past
    the array that the sanitizer session catches)."""
    x, xo, xi = pl.Var("x"), pl.Var("xo"), pl.Var("xi")
    inp = pl.ImageParam(pl.Int32, 1, "inp")
    f, g = pl.Func("f"), pl.Func("g")
    f[x] = inp[x] * 3
    g[x] = f[x / 2] - x
    g.split(x, xo, xi, tile)
    f.compute_at(g, xo)
    a = np.random.default_rng(8).integers(-1000, 1000, 40).astype(np.int32)  # exactly what g's 80 values read
    xs = np.arange(80)
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (80,)), 3 * a[xs // 2] - xs)


def test_a_narrowing_cast_in_an_index_wraps_per_tile():
    """f[u8(x)] wraps at 256: the per-tile region is not x's window (it read outside f's tile buffer from
    x = 256 on); it takes f's whole region. Against the reference evaluator."""
    x, xo, xi = pl.Var("x"), pl.Var("xo"), pl.Var("xi")
    inp = pl.ImageParam(pl.Int32, 1, "inp")
    f, g = pl.Func("f"), pl.Func("g")
    f[x] = inp[x] * 3
    g[x] = f[pl.u8(x)] + x
    g.split(x, xo, xi, 100)
    f.compute_at(g, xo)
    a = np.arange(256, dtype=np.int32) * 5 + 1
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (600,)), evaluate(g, {"inp": a}, (600,)))


def _sliding_blur():
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt16, 2, "inp")
    bx, out = pl.Func("bx"), pl.Func("out")
    bx[x, y] = inp[x, y] + inp[x + 1, y] + inp[x + 2, y]
    out[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 9
    return x, y, inp, bx, out


def _sliding_blur_numpy(a, w, h):
    b = a[:, :w].astype(np.uint32) + a[:, 1:w + 1] + a[:, 2:w + 2]
    return ((b[:h] + b[1:h + 1] + b[2:h + 2]) // 9).astype(np.uint16)


@pytest.mark.sanitize
def test_store_root_compute_at_a_row_slides_the_window():
    """bx stored at root, computed per row of out: the first row computes bx's 3 rows, every later row only
    the newest one (Halide's sliding window); the others are still in the storage, which is folded to 4 rows
    (Halide's storage folding: the rows index it modulo 4; it held the whole 23 rows before). Values against
    numpy."""
    from loom.frontends.pipeline import lower_pipeline

    x, y, inp, bx, out = _sliding_blur()
    bx.store_root().compute_at(out, y)
    a = np.random.default_rng(12).integers(0, 1000, (23, 19), dtype=np.uint16)
    module = lower_pipeline(out, {"inp": a.shape}, (17, 21))
    assert re.findall(r"memref\.alloca\(\) : memref<([0-9x]+)xi16>", str(module)) == ["4x17"]
    (branch,) = [op for op in module.walk() if isinstance(op, scf.IfOp)]
    first, later = ([op.ub.owner.value.value.data for op in r.walk() if isinstance(op, scf.ForOp)]
                    for r in (branch.true_region, branch.false_region))
    assert 3 in first and 3 not in later  # bx's 3 rows once, then 1 (a one-trip row loop is its body)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (17, 21)), _sliding_blur_numpy(a, 17, 21))


@pytest.mark.sanitize
@pytest.mark.parametrize("rows", [4, 5])
def test_a_window_slides_within_each_tile_of_rows(rows):
    """bx stored per tile of rows, computed per row inside it: it slides within a tile and starts again at the
    next (its first row computes bx's 3 rows, the later ones 1; before, every row recomputed the tile's whole
    window of rows + 2); 21 rows in tiles of 5 shift the last tile inwards."""
    from loom.frontends.pipeline import lower_pipeline

    x, y, inp, bx, out = _sliding_blur()
    yo, yi = pl.Var("yo"), pl.Var("yi")
    out.split(y, yo, yi, rows)
    bx.store_at(out, yo).compute_at(out, yi)
    a = np.random.default_rng(13).integers(0, 1000, (23, 19), dtype=np.uint16)
    module = lower_pipeline(out, {"inp": a.shape}, (17, 21))
    (branch,) = [op for op in module.walk() if isinstance(op, scf.IfOp)]
    first, later = ([op.ub.owner.value.value.data for op in r.walk() if isinstance(op, scf.ForOp)]
                    for r in (branch.true_region, branch.false_region))
    assert 3 in first and 3 not in later and rows + 2 not in first + later
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (17, 21)), _sliding_blur_numpy(a, 17, 21))


def _edge_source(kind, inp):
    return (pl.BoundaryConditions.repeat_edge(inp) if kind == "repeat_edge"
            else pl.BoundaryConditions.constant_exterior(inp, 7))


def _edge_blur(kind):
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt16, 2, "inp")
    cl = _edge_source(kind, inp)
    bx, out = pl.Func("bx"), pl.Func("out")
    bx[x, y] = cl[x - 1, y] + cl[x, y] + cl[2 * x - x + 1, y]
    out[x, y] = bx[x, y - 1] + bx[x, y] + bx[x, y + 1]
    return x, y, inp, bx, out


def _edge_blur_numpy(a, kind, w, h):
    p = np.pad(a, 1, mode="edge") if kind == "repeat_edge" else np.pad(a, 1, constant_values=7)
    p = p.astype(np.uint16)
    b = p[:, :-2] + p[:, 1:-1] + p[:, 2:]
    return (b[:-2] + b[1:-1] + b[2:])[:h, :w]


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["repeat_edge", "constant_exterior"])
def test_tiles_inside_the_image_read_it_without_boundary_clamps(kind):
    """bx computed per 8 x 4 tile reads the input through a boundary condition: a tile whose window lies inside
    the image takes a copy of bx's loops without the clamps (and without constant_exterior's select), the
    edge tiles the clamped one; the test is one comparison pair per clamp per tile. Values against numpy
    (and the sanitizers in CI: an unclamped read at an edge tile would leave the input)."""
    from loom.frontends.pipeline import lower_pipeline

    x, y, inp, bx, out = _edge_blur(kind)
    xo, yo, xi, yi = (pl.Var(n) for n in ("xo", "yo", "xi", "yi"))
    out.tile(x, y, xo, yo, xi, yi, 8, 4)
    bx.compute_at(out, xo)
    a = np.random.default_rng(15).integers(0, 1000, (21, 30), dtype=np.uint16)
    module = lower_pipeline(out, {"inp": a.shape}, (30, 21))
    (branch,) = [op for op in module.walk() if isinstance(op, scf.IfOp)]
    clamps = [sum(op.name in ("arith.minsi", "arith.maxsi") for op in r.walk())
              for r in (branch.true_region, branch.false_region)]
    assert clamps[0] == 0 < clamps[1], clamps
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (30, 21)), _edge_blur_numpy(a, kind, 30, 21))


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["repeat_edge", "constant_exterior"])
@pytest.mark.parametrize("size", [(30, 21), (16, 3), (15, 3), (1, 1)])
def test_root_stages_partition_their_row_loop_around_the_boundary_clamps(kind, size):
    """bx computed at root over the whole image: its row loop runs in three parts, the first and last
    iterations with the clamps, the ones whose reads all lie inside the image without (Halide's loop
    partitioning; a row at the top or bottom edge runs clamped throughout, a row shorter than 16 keeps its
    constant trip count and its clamps). Values against numpy (and the sanitizers in CI)."""
    x, y, inp, bx, out = _edge_blur(kind)
    bx.compute_root()
    _assert_row_loop_partitioned(out, kind, size, seed=16)


def _assert_row_loop_partitioned(out, kind, size, seed):
    """A loop with run-time bounds (a part of a partitioned row loop) reads without clamps exactly when the rows
    are at least MIN_PARTITIONED_EXTENT long, and the values are the 3 x 3 box's."""
    from loom.frontends.pipeline import lower_pipeline

    w, h = size
    a = np.random.default_rng(seed).integers(0, 1000, (h, w), dtype=np.uint16)
    module = lower_pipeline(out, {"inp": a.shape}, (w, h))
    bodies = [op for op in module.walk() if isinstance(op, scf.ForOp) and not isinstance(op.ub.owner, arith.ConstantOp)]
    clamps = [sum(o.name in ("arith.minsi", "arith.maxsi") for o in loop.body.walk()) for loop in bodies]
    assert (0 in clamps) == (w >= MIN_PARTITIONED_EXTENT)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, h)), _edge_blur_numpy(a, kind, w, h))


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["repeat_edge", "constant_exterior"])
@pytest.mark.parametrize("size", [(30, 21), (16, 3), (15, 3), (1, 1)])
def test_a_stencil_written_as_an_update_partitions_its_row_loop(kind, size):
    """The 3 x 3 box as an RDom update over its taps (x + r.x, y + r.y with the tap loops open around the row
    loop): y + r.y is fixed in the row loop, a sum of two loops' indices, and tested once per row; x + r.x steps
    with it, so the row loop runs clamp-free in its middle part (before, the sum of two indices had no range and
    every read was clamped). Values against numpy (and the sanitizers in CI)."""
    x, y = pl.Var("x"), pl.Var("y")
    cl = _edge_source(kind, pl.ImageParam(pl.UInt16, 2, "inp"))
    r = pl.RDom(-1, 3, -1, 3, name="r")
    out = pl.Func("out")
    out[x, y] = pl.u16(0)
    out[x, y] += cl[x + r.x, y + r.y]
    out.update().reorder(x, r.x, r.y, y)
    _assert_row_loop_partitioned(out, kind, size, seed=17)


@pytest.mark.sanitize
@pytest.mark.parametrize("index, region", [("x >> 1", 4), ("(x + 1) >> 1", 5), ("x / 2", 4), ("x >> 2", 2)])
def test_a_shifted_index_takes_a_window_per_tile(index, region):
    """f[x >> 1] per 8-wide tile of g: an arithmetic shift floors, so the window is x / 2's, not f's whole region
    (40 values) as before; a tile's base is a multiple of 8, so as in Halide it is exact (its extent is Halide's
    per-tile one: 4, 5, 4, 2). Values against the reference evaluator."""
    from loom.frontends.pipeline import lower_pipeline

    x, xo, xi = pl.Var("x"), pl.Var("xo"), pl.Var("xi")
    inp = pl.ImageParam(pl.Int32, 1, "inp")
    f, g = pl.Func("f"), pl.Func("g")
    f[x] = inp[x] * 3
    g[x] = f[eval(index)] - x
    g.split(x, xo, xi, 8)
    f.compute_at(g, xo)
    a = np.random.default_rng(9).integers(-1000, 1000, 41).astype(np.int32)
    shapes = re.findall(r"memref\.alloca\(\) : memref<(\d+)xi32>", str(lower_pipeline(g, {"inp": a.shape}, (80,))))
    assert shapes == [str(region)]
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (80,)), evaluate(g, {"inp": a}, (80,)))
