"""Per-tile regions of a producer read through piecewise-affine indices (``x % 2``, ``(x / 2) * 2``,
``x - x % 2``, min/max/clamp around them, negative offsets): values bit-exact against real Halide, and the
producer's per-tile buffer a window of the tile (these took the producer's whole region per tile before).

Each pipeline is written once for loom and Halide (``m``); the producer reads its input through ``repeat_edge``
since Halide's own bounds for ``x - x % 2`` reach one element before the tile too.
"""

import re

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.frontends.pipeline.cpu_lower import lower_pipeline
from loom.jit.pipeline import run_cpu

W = 41  # tiles of 8 leave a ShiftInwards tail: the last tile starts at the odd 33
A = (np.arange(60, dtype=np.int32) * 7 - 100)


def _line(m, index: str, tile: int, store_root: bool = False):
    """g[x] = f[index] - x (the sum of f's reads at each of ``index``'s ;-separated indices), f per tile of g
    (f's own values make every wrong read show); ``store_root``: f's storage is the root's."""
    x, xo, xi = m.Var("x"), m.Var("xo"), m.Var("xi")
    inp = m.ImageParam(lp.Int32 if m is lp else hl.Int(32), 1, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    f, g = m.Func("f"), m.Func("g")
    f[x] = cl[x] * 3 + x
    g[x] = sum(f[eval(i, {"x": x, "m": m})] for i in index.split(";")) - x
    g.split(x, xo, xi, tile)
    f.compute_at(g, xo)
    if store_root:
        f.store_root()
    return inp, g


def _halide(pipeline, a, size):
    inp, out = pipeline(hl)
    inp.set(hl.Buffer(a))
    return np.asarray(out.realize(list(size)))


def _buffer_shapes(out, shapes, size) -> list[str]:
    """The shapes of the buffers allocated for Funcs computed inside loops (the output's is an argument)."""
    return re.findall(r"memref\.alloca?\(\) : memref<([0-9x]+)xi32>", str(lower_pipeline(out, shapes, size)))


# index, f's per-tile extent with tiles of 8 and of 7, f's whole region (what each tile computed before)
CASES = [
    ("(x / 2) * 2", 9, 7, 41),  # 2 * floor(b / 2) + [0, 8]: an odd base's last tap reaches b + 7
    ("x - x % 2", 9, 8, 42),  # b + [-1, 7]
    ("((x - 1) / 2) * 2 + 1", 9, 7, 41),  # negative offset inside the division (tiles of 7: Halide's 7, was 9)
    ("(x / 4) * 4 + 1", 9, 9, 41),
    ("x % 4 + 4 * (x / 8)", 8, 8, 24),  # a remainder beside a moving base: [0, 3] per block
    ("(x - 3) % 4 + 2 * x", 18, 16, 84),
    ("x + x % 2", 9, 8, 42),
    ("x + m.i32(x % 2 == 0)", 9, 8, 42),  # a comparison's 0 or 1
    ("m.select(x % 2 == 0, x, x - 1)", 9, 8, 42),
    ("m.clamp((x / 2) * 2, 0, 40)", 9, 7, 41),
    ("m.max(x - x % 2 - 2, 0)", 9, 8, 39),
    ("m.min(x + x % 3, 30)", 10, 9, 31),
    ("m.clamp(x + 1, 0, 40)", 8, 7, 40),  # a clamped index stays one tile wide
    ("m.clamp(x - 1, 0, 40); m.clamp(x + 1, 0, 40)", 10, 9, 41),  # two reads through clamps: one window
    ("40 - x", 8, 7, 41),  # a mirrored read: the base's negation
    ("(x & 3) + 4 * (x / 8)", 8, 8, 24),  # x & 3 is x % 4 (its global bounds were unknown: an error)
]


@pytest.mark.parametrize("index, per8, per7, whole", CASES)
def test_a_piecewise_affine_index_takes_a_window_per_tile(index, per8, per7, whole):
    for tile, extent in ((8, per8), (7, per7)):
        want = _halide(lambda m: _line(m, index, tile), A, [W])
        _, g = _line(lp, index, tile)
        np.testing.assert_array_equal(run_cpu(g, {"inp": A}, (W,)), want)
        assert _buffer_shapes(g, {"inp": A.shape}, (W,)) == [str(extent)], (tile, whole)
        assert extent < whole


def _bayer(m, tile):
    """A 2x2 block pattern: each pixel reads the top-left of its block (x - x % 2, (y / 2) * 2) and its block's
    right neighbour, both clamped at the right, from a producer computed per tile."""
    x, y, xo, yo, xi, yi = (m.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = m.ImageParam(lp.Int32 if m is lp else hl.Int(32), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    f, g = m.Func("f"), m.Func("g")
    f[x, y] = cl[x, y] * 3 - y
    bx, by = x - x % 2, (y / 2) * 2
    g[x, y] = f[m.min(bx, 34), by] + f[m.min(bx + 2, 34), by + y % 2] - x
    g.tile(x, y, xo, yo, xi, yi, *tile)
    f.compute_at(g, xo)
    return inp, g


@pytest.mark.parametrize("tile, shape", [((8, 4), "4x11"), ((5, 3), "4x8")])
def test_a_block_pattern_reads_a_window_of_each_tile(tile, shape):
    """x - x % 2, (y / 2) * 2 + y % 2 and a min around them in 2-D, tiles with odd bases (5 x 3): f's per-tile
    buffer is (rows x columns) ``shape``, not its whole 20 x 36 region: the largest Halide realises per tile
    (``trace_realizations``; the rows of 8 x 4 tiles were 6 when (y / 2) * 2 ignored that a base is even)."""
    a = np.random.default_rng(3).integers(-1000, 1000, (20, 37)).astype(np.int32)
    want = _halide(lambda m: _bayer(m, tile), a, [37, 20])
    _, g = _bayer(lp, tile)
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (37, 20)), want)
    assert _buffer_shapes(g, {"inp": a.shape}, (37, 20)) == [shape]


def test_a_window_stored_at_the_root_and_computed_per_tile():
    """f stored once for the whole output, computed per tile over the clamped window of min(x - x % 2 + 3, 39),
    which lies inside the root buffer (its base clamped there). Against Halide. The window moves forward by at
    most a tile (less where the clamp holds it): it slides, its storage folded to 16 of the root's 38 (f[2 .. 39])."""
    index = "m.min(x - x % 2 + 3, 39)"
    want = _halide(lambda m: _line(m, index, 8, store_root=True), A, [W])
    _, g = _line(lp, index, 8, store_root=True)
    np.testing.assert_array_equal(run_cpu(g, {"inp": A}, (W,)), want)
    assert _buffer_shapes(g, {"inp": A.shape}, (W,)) == ["16"]
