"""Small pipelines mixing tail strategies (GuardWithIf, ShiftInwards, RoundUp) with compute_at / store_at, as a
user would write them, bit-exact against real Halide on sizes the factors do not divide; where Halide refuses
(a RoundUp tile reading past a too-small input), loom refuses too, naming the input.

Layout: numpy (H, W) is Halide/loom (x = W, y = H).
"""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

G, S, R = "GuardWithIf", "ShiftInwards", "RoundUp"


def _vars(m, names):
    return [m.Var(n) for n in names.split()]


def _setup(m):
    return m.ImageParam(hl.UInt(16) if m is hl else lp.UInt16, 2, "inp"), m.Func("p"), m.Func("out")


def _tail(m, t):
    return getattr(m.TailStrategy, t)


def store_at_yo_compute_at_xo(m, t):
    x, y, xo, yo, xi, yi = _vars(m, "x y xo yo xi yi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 3 + inp[x + 1, y + 1]
    out[x, y] = p[x, y] + p[x + 1, y] + p[x, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _tail(m, t))
    p.store_at(out, yo).compute_at(out, xo)
    return inp, out


def sliding_along_x(m, t):
    x, y, xo, xi = _vars(m, "x y xo xi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 3
    out[x, y] = p[x, y] + p[x + 1, y] + p[x + 2, y]
    out.split(x, xo, xi, 4, _tail(m, t))
    p.store_at(out, y).compute_at(out, xo)
    return inp, out


def producer_with_an_update(m, t):
    x, y, yo, yi = _vars(m, "x y yo yi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 3
    p[x, y] = p[x, y] + inp[x + 1, y]
    out[x, y] = p[x, y] + p[x, y + 1]
    out.split(y, yo, yi, 3, _tail(m, t))
    p.compute_at(out, yo)
    return inp, out


def producer_with_a_reduction(m, t):
    x, y, xo, xi = _vars(m, "x y xo xi")
    inp, p, out = _setup(m)
    r = lp.RDom(0, 3) if m is lp else hl.RDom([(0, 3)])
    p[x, y] = m.u16(0)
    p[x, y] = p[x, y] + inp[x + r.x, y]
    out[x, y] = p[x, y] + p[x + 1, y]
    out.split(x, xo, xi, 4, _tail(m, t))
    p.compute_at(out, xo)
    return inp, out


def repeat_edge_producer(m, t):
    x, y, xo, yo, xi, yi = _vars(m, "x y xo yo xi yi")
    inp, p, out = _setup(m)
    edge = (lp if m is lp else hl).BoundaryConditions.repeat_edge(inp)
    p[x, y] = edge[x - 1, y] + edge[x + 1, y + 1] * 2
    out[x, y] = p[x, y] + p[x, y - 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _tail(m, t))
    p.compute_at(out, xo)
    return inp, out


def unrolled_inner_loop(m, t):
    x, y, xo, xi = _vars(m, "x y xo xi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x, y] + p[x + 1, y]
    out.split(x, xo, xi, 3, _tail(m, t)).unroll(xi)
    p.compute_at(out, xo)
    return inp, out


def up_sampling_read(m, t):
    x, y, xo, xi = _vars(m, "x y xo xi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x // 2, y] + p[x // 2 + 1, y]
    out.split(x, xo, xi, 3, _tail(m, t))
    p.compute_at(out, xo)
    return inp, out


def down_sampling_read(m, t):
    x, y, xo, xi = _vars(m, "x y xo xi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[2 * x, y] + p[2 * x + 1, y]
    out.split(x, xo, xi, 3, _tail(m, t))
    p.compute_at(out, xo)
    return inp, out


def parallel_tiles(m, t):
    x, y, yo, yi = _vars(m, "x y yo yi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x, y] + p[x, y + 1]
    out.split(y, yo, yi, 3, _tail(m, t)).parallel(yo)
    p.compute_at(out, yo)
    return inp, out


def producer_split_inside_a_tile(m, t):
    """q computed at a loop of p, which is computed at out's tile: tails at both levels."""
    x, y, xo, yo, xi, yi, pxo, pxi = _vars(m, "x y xo yo xi yi pxo pxi")
    inp, p, out = _setup(m)
    q = m.Func("q")
    q[x, y] = inp[x, y] + inp[x, y + 1]
    p[x, y] = q[x, y] + q[x + 1, y]
    out[x, y] = p[x, y] + p[x + 1, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _tail(m, t))
    p.compute_at(out, xo).split(x, pxo, pxi, 2, _tail(m, t))
    q.compute_at(p, pxo)
    return inp, out


def vectorized_tile_stored_per_row_of_tiles(m, t):
    x, y, xo, yo, xi, yi = _vars(m, "x y xo yo xi yi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x, y] + p[x + 1, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _tail(m, t)).vectorize(xi)
    p.store_at(out, yo).compute_at(out, xo)
    return inp, out


def update_in_tiles(m, t):
    x, y, xo, xi = _vars(m, "x y xo xi")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = inp[x, y]
    out[x, y] = out[x, y] + p[x, y] + p[x + 1, y]
    out.update(0).split(x, xo, xi, 4, _tail(m, t))
    p.compute_at(out, xo)
    return inp, out


def fused_parallel_tiles(m, t):
    x, y, xo, yo, xi, yi, tile = _vars(m, "x y xo yo xi yi tile")
    inp, p, out = _setup(m)
    p[x, y] = inp[x, y] * 5
    out[x, y] = p[x, y] + p[x + 1, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _tail(m, t)).fuse(xo, yo, tile).parallel(tile)
    p.compute_at(out, tile)
    return inp, out


PIPELINES = [store_at_yo_compute_at_xo, sliding_along_x, producer_with_an_update, producer_with_a_reduction,
             repeat_edge_producer, unrolled_inner_loop, up_sampling_read, down_sampling_read, parallel_tiles,
             producer_split_inside_a_tile, vectorized_tile_stored_per_row_of_tiles, update_in_tiles,
             fused_parallel_tiles]
PURE_TAILS = [G, S]  # RoundUp on a Func computed inside a loop: below
UPDATE_TAILS = [G]  # ShiftInwards is refused on updates (by both)


def _image(w, h, extra=2, wide=False):
    """An input ``extra`` rows and columns larger than the output (``wide``: twice as wide, for a read of 2x)."""
    return np.random.default_rng(w * 100 + h).integers(0, 3000, (h + extra, (2 if wide else 1) * w + extra),
                                                         dtype=np.uint16)


@pytest.mark.parametrize("size", [(10, 7), (13, 5)])
@pytest.mark.parametrize("tail", [G, S])
@pytest.mark.parametrize("build", PIPELINES, ids=[f.__name__ for f in PIPELINES])
def test_tails_with_compute_at_match_halide(build, tail, size):
    if build is update_in_tiles and tail == S:
        pytest.skip("ShiftInwards on an update: refused by both (test_halide_tail_strategy)")
    image = _image(*size, wide=True)  # a reduction reads 3 past x, a down-sampling 2x + 1
    hinp, hout = build(hl, tail)
    hinp.set(hl.Buffer(image))
    want = np.asarray(hout.realize(list(size)))
    assert len(np.unique(want)) > size[0]
    _, out = build(lp, tail)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, size), want)


@pytest.mark.parametrize("size, extra", [((10, 7), 4), ((12, 6), 2)])
def test_a_round_up_output_with_a_producer_in_its_tiles_matches_halide(size, extra):
    """The output's 4 x 3 tiles rounded up (10 x 7 -> 12 x 9) read 2 input columns and rows past those of the
    output's extent (12 x 6 divides: none)."""
    image = _image(*size, extra=extra)
    hinp, hout = store_at_yo_compute_at_xo(hl, R)
    hinp.set(hl.Buffer(image))
    want = np.asarray(hout.realize(list(size)))
    _, out = store_at_yo_compute_at_xo(lp, R)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, size), want)


def test_a_round_up_output_reading_past_a_too_small_input_is_refused_like_halide():
    image = _image(10, 7, extra=1)  # 11 columns: the rounded-up tiles read columns up to 12 (p[x + 1] of x + 1)
    hinp, hout = store_at_yo_compute_at_xo(hl, R)
    hinp.set(hl.Buffer(image))
    with pytest.raises(hl.HalideError, match="Input buffer inp is accessed at 13, which is beyond the max"):
        hout.realize([10, 7])
    _, out = store_at_yo_compute_at_xo(lp, R)
    with pytest.raises(LoomError, match=r"ImageParam 'inp': the pipeline reads dimension 0 over \[0, 13\] but the "
                                        r"input has extent 11"):
        run_cpu(out, {"inp": image}, (10, 7))
