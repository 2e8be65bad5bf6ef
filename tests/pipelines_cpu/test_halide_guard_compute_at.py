"""Producers computed at an outer loop of a GuardWithIf split that does not divide the image (``compute_at(out,
yo)`` or ``xo``), bit-exact against real Halide on sizes the factors do not divide. Halide clamps a producer's
region to the guard; loom keeps its static window and clamps the last tile's base into what the pipeline reads:
the values are the same, and no input point past what Halide reads is read (every input here is exactly as large
as the pipeline needs, so a region running past the end would be refused).

Layout: numpy (H, W) is Halide/loom (x = W, y = H).
"""

import re

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.cpu_lower import lower_pipeline
from loom.jit.pipeline import run_cpu

SIZES = [(10, 7), (9, 11), (13, 5)]  # none a multiple of the 4 x 3 tiles


def _vars(m, *names):
    return [m.Var(n) for n in names]


def _u16(m):
    return hl.UInt(16) if m is hl else lp.UInt16


def _guard(m):
    return m.TailStrategy.GuardWithIf


def _compare(build, size, reach, extra=0):
    """Halide's and loom's outputs of ``build(m)`` -> (inp, out) over ``size``, on an input exactly as large as
    the reads ``reach`` (dx, dy) past the output need (plus ``extra``)."""
    w, h = size
    image = np.random.default_rng(w * 31 + h).integers(0, 4000, (h + reach[1] + extra, w + reach[0] + extra),
                                                         dtype=np.uint16)
    hinp, hout = build(hl)
    hinp.set(hl.Buffer(image))
    want = np.asarray(hout.realize([w, h]))
    assert len(np.unique(want)) > w  # not a constant image
    _, out = build(lp)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, size), want)


def _tiled(level, dx, dy, two_levels, tail_x="GuardWithIf", tail_y="GuardWithIf"):
    """out(x, y) reads p at (x, y), (x + dx, y), (x, y + dy); p is computed at ``level`` of out's 4 x 3 tiles; with
    ``two_levels`` p reads q (at (x, y) and (x, y + dy)), which reads the input at x and x + dx."""
    def build(m):
        x, y, xo, yo, xi, yi = _vars(m, "x", "y", "xo", "yo", "xi", "yi")
        inp = m.ImageParam(_u16(m), 2, "inp")
        p, q, out = m.Func("p"), m.Func("q"), m.Func("out")
        if two_levels:
            q[x, y] = inp[x, y] * 3 + inp[x + dx, y]
            p[x, y] = q[x, y] + q[x, y + dy] * 2
        else:
            p[x, y] = inp[x, y] + 1
        out[x, y] = p[x, y] + p[x + dx, y] * 5 + p[x, y + dy] * 7
        out.split(x, xo, xi, 4, getattr(m.TailStrategy, tail_x)).split(y, yo, yi, 3, getattr(m.TailStrategy, tail_y))
        out.reorder(xi, yi, xo, yo)
        at = {"xo": xo, "yo": yo}[level]
        p.compute_at(out, at)
        if two_levels:
            q.compute_at(p, y) if level == "yo" else q.compute_at(out, at)
        return inp, out
    reach = (2 * dx if two_levels else dx, 2 * dy if two_levels else dy)
    return build, reach


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("level", ["yo", "xo"])
@pytest.mark.parametrize("dx, dy", [(0, 0), (1, 2)])
@pytest.mark.parametrize("two_levels", [False, True], ids=["one producer", "two levels"])
def test_producers_at_an_outer_guarded_loop_match_halide(size, level, dx, dy, two_levels):
    build, reach = _tiled(level, dx, dy, two_levels)
    _compare(build, size, reach)


@pytest.mark.parametrize("tails", [("GuardWithIf", "ShiftInwards"), ("ShiftInwards", "GuardWithIf")])
@pytest.mark.parametrize("level", ["yo", "xo"])
def test_one_guarded_dimension_and_one_shifted_match_halide(tails, level):
    build, reach = _tiled(level, 1, 2, True, *tails)
    _compare(build, (10, 7), reach)


def test_the_last_tiles_producer_has_the_tiles_size_and_ends_at_the_images_end():
    """p at yo over 3 rows (+ the stencil's 2) of the 11 columns the 10-wide output reads: a static 5 x 11
    buffer, whose first row is min(yo * 3, 7 - 3) (the last tile holds one row, and the two before it)."""
    build, _ = _tiled("yo", 1, 2, False)
    _, out = build(lp)
    t = str(lower_pipeline(out, {"inp": (9, 11)}, (10, 7)))
    assert re.findall(r"memref\.alloca\(\) : memref<([0-9x]+)xi16>", t) == ["5x11"]
    assert re.search(r"arith\.constant 4 : index", t) and "arith.minsi" in t


def _nested(level):
    """x split by 8, its inner loop by 3, both GuardWithIf: at xo the tile is 8 wide, at xio 3."""
    def build(m):
        x, y, xo, xi, xio, xii = _vars(m, "x", "y", "xo", "xi", "xio", "xii")
        inp = m.ImageParam(_u16(m), 2, "inp")
        p, out = m.Func("p"), m.Func("out")
        p[x, y] = inp[x, y] * 3
        out[x, y] = p[x, y] + p[x + 1, y]
        out.split(x, xo, xi, 8, _guard(m)).split(xi, xio, xii, 3, _guard(m))
        p.compute_at(out, {"xo": xo, "xio": xio}[level])
        return inp, out
    return build


@pytest.mark.parametrize("size", [(10, 3), (11, 2), (17, 2)])
@pytest.mark.parametrize("level", ["xo", "xio"])
def test_a_split_of_a_guarded_split_matches_halide(size, level):
    _compare(_nested(level), size, (1, 0))


def _nested_rows(m):
    """y split by 6, its inner loop by 4, both GuardWithIf; p stored per 6-row tile (yo) and computed per 4-row
    one (yio): in a 6-row tile the second 4-row tile holds 2 rows, and p's rows computed there must stay inside
    the rows stored for the 6-row tile (a window shifted only at the image's end wrote past them)."""
    x, y, yo, yi, yio, yii = _vars(m, "x", "y", "yo", "yi", "yio", "yii")
    inp = m.ImageParam(_u16(m), 2, "inp")
    p, out = m.Func("p"), m.Func("out")
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x, y] + p[x, y + 1] * 3
    out.split(y, yo, yi, 6, _guard(m)).split(yi, yio, yii, 4, _guard(m))
    p.store_at(out, yo).compute_at(out, yio)
    return inp, out


@pytest.mark.parametrize("size", [(9, 11), (10, 7), (5, 16), (4, 6)])
def test_a_producer_stored_at_a_guarded_tile_and_computed_in_a_guarded_subtile_matches_halide(size):
    _compare(_nested_rows, size, (0, 1))


def _fused(m):
    """Guarded 4 x 3 tiles whose two outer loops are fused: p computed per tile, at the fused loop."""
    x, y, xo, yo, xi, yi, t = _vars(m, "x", "y", "xo", "yo", "xi", "yi", "t")
    inp = m.ImageParam(_u16(m), 2, "inp")
    p, out = m.Func("p"), m.Func("out")
    p[x, y] = inp[x, y] * 3
    out[x, y] = p[x, y] + p[x + 1, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _guard(m)).fuse(xo, yo, t)
    p.compute_at(out, t)
    return inp, out


def _sliding_tail(tail):
    """p stored at the root and computed per 3-row tile of the tail strategy (a sliding window in Halide)."""
    def build(m):
        x, y, yo, yi = _vars(m, "x", "y", "yo", "yi")
        inp = m.ImageParam(_u16(m), 2, "inp")
        p, out = m.Func("p"), m.Func("out")
        p[x, y] = inp[x, y] * 3 + inp[x + 1, y]
        out[x, y] = p[x, y] + p[x, y + 1] + p[x, y + 2]
        out.split(y, yo, yi, 3, getattr(m.TailStrategy, tail))
        p.store_root().compute_at(out, yo)
        return inp, out
    return build


_sliding = _sliding_tail("GuardWithIf")


def _vectorized(m):
    x, y, xo, xi = _vars(m, "x", "y", "xo", "xi")
    inp = m.ImageParam(_u16(m), 2, "inp")
    p, out = m.Func("p"), m.Func("out")
    p[x, y] = inp[x, y] * 3
    out[x, y] = p[x, y] + p[x + 2, y]
    out.split(x, xo, xi, 8, _guard(m)).vectorize(xi)
    p.compute_at(out, xo)
    return inp, out


def _reduction_tiles(m):
    """An update over an RDom of 10 columns split by 4 (GuardWithIf): p computed per tile of the RDom."""
    x, y = _vars(m, "x", "y")
    ro, ri = m.RVar("ro"), m.RVar("ri")
    inp = m.ImageParam(_u16(m), 2, "inp")
    r = lp.RDom(0, 10) if m is lp else hl.RDom([(0, 10)])
    p, out = m.Func("p"), m.Func("out")
    p[x, y] = inp[x, y] * 3
    out[x, y] = m.u16(0)
    out[r.x, y] = out[r.x, y] + p[r.x, y] + p[r.x + 1, y]
    out.update(0).split(r.x, ro, ri, 4, _guard(m))
    p.compute_at(out, ro)
    return inp, out


@pytest.mark.parametrize("build, reach", [(_fused, (1, 1)), (_sliding, (1, 2)), (_vectorized, (2, 0)),
                                          (_reduction_tiles, (1, 0))],
                         ids=["fused tiles", "sliding window", "vectorized", "RDom tiles"])
@pytest.mark.parametrize("size", [(10, 7), (11, 5)])
def test_other_loop_shapes_around_a_guarded_producer_match_halide(build, reach, size):
    _compare(build, size, reach)


def test_an_input_too_small_for_what_the_rdom_reads_is_refused_like_halide():
    """The RDom's 10 columns read p (and the input) up to column 10 whatever the output's size: with a 9-wide
    input Halide refuses at run time and loom says which input and how large it must be."""
    image = np.ones((9, 9), np.uint16)
    hinp, hout = _reduction_tiles(hl)
    hinp.set(hl.Buffer(image))
    with pytest.raises(hl.HalideError, match="Input buffer inp is accessed at 10, which is beyond the max"):
        hout.realize([8, 9])
    with pytest.raises(LoomError, match=r"ImageParam 'inp': the pipeline reads dimension 0 over \[0, 10\] but the "
                                        r"input has extent 9"):
        run_cpu(_reduction_tiles(lp)[1], {"inp": image}, (8, 9))


@pytest.mark.parametrize("tail", ["GuardWithIf", "ShiftInwards"])
def test_a_window_shifted_inward_at_the_end_still_slides(tail):
    """20 rows in tiles of 3: the last tile moves p's 5-row window by 1 row, not 3. It still slides (each tile
    computes its newest 3 rows, recomputing 2 on the last) in storage folded to 8 rows, not the image's 22."""
    _compare(_sliding_tail(tail), (10, 20), (1, 2))
    _, out = _sliding_tail(tail)(lp)
    t = str(lower_pipeline(out, {"inp": (22, 11)}, (10, 20)))
    assert re.findall(r"memref\.alloca\(\) : memref<([0-9x]+)xi16>", t) == ["8x10"]
