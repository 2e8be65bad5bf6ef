"""RoundUp splits of Funcs computed inside a loop (they were refused): bit-exact against Halide, and the
smallest input Halide accepts is the smallest loom accepts (Halide's bounds query, ``infer_input_bounds``):
one column or row less and both refuse, loom naming the input."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl
from tests.pipelines_cpu.round_up_pipelines import numpy_reference, round_up_inside

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

G, S, R = "GuardWithIf", "ShiftInwards", "RoundUp"
CASES = [  # (case, out's tail, fx, fy, W, H)
    ("xo", S, 3, 1, 10, 8), ("xo", G, 2, 1, 13, 9), ("xo", G, 5, 1, 10, 8), ("xo", R, 4, 1, 13, 9),
    ("yo", S, 2, 1, 10, 8), ("yo", G, 3, 1, 13, 9), ("yo", R, 5, 1, 10, 8),
    ("xi", G, 5, 1, 10, 8), ("xi", S, 3, 1, 13, 9),
    ("tile_xo", S, 2, 3, 10, 8), ("tile_xo", G, 3, 2, 13, 9), ("tile_xo", R, 5, 5, 13, 9),
    ("q_inside_p", G, 2, 3, 13, 9), ("q_inside_p", R, 3, 2, 10, 8), ("q_inside_p", S, 4, 4, 13, 9),
    ("q_root", S, 1, 3, 10, 8), ("q_root", G, 1, 5, 13, 9),
    ("parallel", G, 3, 1, 13, 9), ("parallel", S, 4, 1, 10, 8),
]


def _halide_needs(case, tail, fx, fy, w, h) -> tuple[int, int]:
    """(rows, columns) of the smallest input from 0 Halide accepts."""
    inp, out = round_up_inside(hl, case, tail, fx, fy, hl=hl)
    out.infer_input_bounds([w, h])
    b = inp.get()
    return b.dim(1).min() + b.dim(1).extent(), b.dim(0).min() + b.dim(0).extent()


def _halide(case, tail, fx, fy, w, h, image):
    inp, out = round_up_inside(hl, case, tail, fx, fy, hl=hl)
    inp.set(hl.Buffer(image))
    return np.asarray(out.realize([w, h]))


@pytest.mark.parametrize("case, tail, fx, fy, w, h", CASES)
def test_round_up_inside_a_loop_matches_halide(case, tail, fx, fy, w, h):
    rows, cols = _halide_needs(case, tail, fx, fy, w, h)
    image = np.random.default_rng(rows * 31 + cols).integers(0, 256, (rows, cols), dtype=np.uint8)
    want = _halide(case, tail, fx, fy, w, h, image)
    np.testing.assert_array_equal(want, numpy_reference(image, w, h))
    _, out = round_up_inside(lp, case, tail, fx, fy)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (w, h)), want)
    for dim, smaller in ((0, image[:-1]), (1, image[:, :-1])):
        with pytest.raises(hl.HalideError, match="Input buffer inp is accessed at"):
            _halide(case, tail, fx, fy, w, h, np.ascontiguousarray(smaller))
        with pytest.raises(LoomError, match=f"ImageParam 'inp': the pipeline reads dimension {1 - dim} over"):
            run_cpu(round_up_inside(lp, case, tail, fx, fy)[1], {"inp": np.ascontiguousarray(smaller)}, (w, h))


def test_round_up_inside_grows_the_tile_buffer():
    """p at out.xo: per 5 x 4 tile of out, 7 columns (x .. x + 2) by 5 rows (y, y + 1); its x split by 4 with
    RoundUp computes 8 columns."""
    from loom.frontends.pipeline.cpu_lower import lower_pipeline

    _, out = round_up_inside(lp, "xo", S, 4, 1)
    assert "memref<5x8xi16>" in str(lower_pipeline(out, {"inp": (10, 20)}, (10, 8)))


@pytest.mark.parametrize("slide", [True, False])
def test_round_up_stored_at_the_root_and_computed_per_row_matches_halide(slide):
    """store_root().compute_at(out, y) with a RoundUp split of x by 5 over 24 columns: each row computes 25, as
    Halide does, into root storage grown to hold them (loom refused it: 'the loop has extent 24 here, not a
    multiple of 5'), sliding down the rows when the consumer reads two."""
    def build(m):
        x, y, px, pi = (m.Var(n) for n in ("x", "y", "px", "pi"))
        inp = m.ImageParam(m.UInt(16) if m is hl else lp.UInt16, 2, "inp")
        cl = m.BoundaryConditions.repeat_edge(inp)
        u, out = m.Func("u"), m.Func("out")
        u[x, y] = m.u32(cl[x, y]) * 3 + m.u32(cl[x + 1, y])
        out[x, y] = u[x, y] + (u[x, y + 1] if slide else 0)
        u.store_root().compute_at(out, y).split(x, px, pi, 5, m.TailStrategy.RoundUp)
        return inp, out

    a = np.random.default_rng(5).integers(0, 65536, (8, 24), dtype=np.uint16)
    hin, hout = build(hl)
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([24, 8]))
    _, out = build(lp)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (24, 8)), want)


@pytest.mark.parametrize("tail", [S, G])
def test_round_up_deeper_than_a_producer_matches_halide(tail):
    """A RoundUp Func computed per row of tiles reading a producer computed per row of tiles (storage grown to
    what each tile's rounded window reads: test_round_up_inside_memory.py)."""
    from tests.pipelines_cpu.test_round_up_inside_memory import _down_then_round_up

    a = np.random.default_rng(3).integers(0, 1000, (15, 16), dtype=np.uint16)
    hin, hout = _down_then_round_up(hl, tail)
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([16, 15]))
    _, out = _down_then_round_up(lp, tail)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (16, 15)), want)


def test_round_up_per_pixel_reading_a_producer_per_row_matches_halide():
    from tests.pipelines_cpu.test_round_up_inside_memory import _per_pixel_round_up

    a = np.random.default_rng(8).integers(0, 1000, (12, 50), dtype=np.uint16)
    hin, hout = _per_pixel_round_up(hl)
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([21, 5]))
    _, out = _per_pixel_round_up(lp)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (21, 5)), want)


def test_round_up_sliding_by_a_step_its_split_does_not_divide_matches_halide():
    """u stored at the root, computed per 7-wide tile and split by 5 with RoundUp: its window slides by 7, whose
    newest 7 columns no RoundUp split by 5 fills, so each tile computes its whole rounded window (loom refused:
    'the loop has extent 7 here, not a multiple of 5')."""
    def build(m):
        x, y, xo, yo, xi, yi, px, pi = (m.Var(n) for n in "x y xo yo xi yi px pi".split())
        inp = m.ImageParam(m.UInt(16) if m is hl else lp.UInt16, 2, "inp")
        cl = m.BoundaryConditions.repeat_edge(inp)
        u, out = m.Func("u"), m.Func("out")
        u[x, y] = m.u32(cl[x, y]) * 3 + m.u32(cl[x + 1, y])
        out[x, y] = u[x, y] + u[x + 2, y]
        out.tile(x, y, xo, yo, xi, yi, 7, 6)
        u.store_root().compute_at(out, xo).split(x, px, pi, 5, m.TailStrategy.RoundUp)
        return inp, out

    a = np.random.default_rng(9).integers(0, 1000, (14, 32), dtype=np.uint16)
    hin, hout = build(hl)
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([32, 14]))
    _, out = build(lp)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (32, 14)), want)


@pytest.mark.parametrize("case, w, h", [("pixel", 6, 4), ("guard", 39, 21)])
def test_round_up_windows_clamped_past_the_producers_window_match_halide(case, w, h):
    from tests.pipelines_cpu.test_round_up_inside_memory import _clamped_windows_round_up

    a = np.random.default_rng(w + h).integers(0, 1000, (h, w), dtype=np.uint16)
    hin, hout = _clamped_windows_round_up(hl, case)
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([w, h]))
    _, out = _clamped_windows_round_up(lp, case)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, h)), want)
