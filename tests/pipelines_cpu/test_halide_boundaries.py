"""Boundary conditions (mirror_image, mirror_interior, repeat_image, repeat_edge, constant_exterior) bit-exact
against Halide.

The output window reaches well past every edge of the input (more than one period of the reflection),
so the periodic part of the mirror is exercised, not only the first reflection.
"""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.mirror import mirror_coordinates
from loom.jit.pipeline import run_cpu

H, W = 5, 7
KINDS = ["mirror_image", "mirror_interior", "repeat_image", "repeat_edge", "constant_exterior"]


def _loom_condition(kind, src, bounds=None):
    if kind == "constant_exterior":
        return lp.BoundaryConditions.constant_exterior(src, 7, bounds)
    return getattr(lp.BoundaryConditions, kind)(src, bounds)


def _halide_condition(kind, src, bounds=None):
    args = [src] if bounds is None else [src, bounds]
    if kind == "constant_exterior":
        return hl.BoundaryConditions.constant_exterior(*args[:1], 7, *args[1:]) if bounds else \
            hl.BoundaryConditions.constant_exterior(src, hl.u8(7))
    return getattr(hl.BoundaryConditions, kind)(*args)


@pytest.mark.parametrize("kind", KINDS)
def test_boundary_on_an_image_matches_halide(kind):
    a = np.random.default_rng(5).integers(0, 256, size=(H, W), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    padded = _loom_condition(kind, inp)
    out = lp.Func("out")
    out[x, y] = padded[x - 16, y - 12]  # a window from (-16, -12): past two periods on the left / top
    size = (W + 32, H + 24)

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hpadded = _halide_condition(kind, hin)
    hout = hl.Func("out")
    hout[hx, hy] = hpadded[hx - 16, hy - 12]
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize(list(size)))
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, size), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, size), want)


@pytest.mark.parametrize("kind", ["mirror_image", "mirror_interior", "repeat_image"])
def test_mirror_of_a_bounded_func_inside_a_stencil_matches_halide(kind):
    a = np.random.default_rng(6).integers(0, 256, size=(H, W), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    wide = lp.Func("wide")
    wide[x, y] = lp.u16(inp[x, y]) * 3
    wide.bound(x, 0, W).bound(y, 0, H).compute_root()
    padded = getattr(lp, kind)(wide)
    out = lp.Func("out")
    out[x, y] = padded[x - 2, y] + padded[x + 2, y - 3] + padded[x, y + 1]

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hwide = hl.Func("wide")
    hwide[hx, hy] = hl.u16(hin[hx, hy]) * 3
    hwide.compute_root()
    hpadded = getattr(hl.BoundaryConditions, kind)(hwide, [(0, W), (0, H)])
    hout = hl.Func("out")
    hout[hx, hy] = hpadded[hx - 2, hy] + hpadded[hx + 2, hy - 3] + hpadded[hx, hy + 1]
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([W, H]))
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (W, H)), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, (W, H)), want)


def test_mirror_coordinates_by_hand():
    c = np.arange(-4, 8)
    # extent 3 at [0, 2]
    assert mirror_coordinates(c, 0, 2, "mirror_image").tolist() == [2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1]
    assert mirror_coordinates(c, 0, 2, "mirror_interior").tolist() == [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1]
    assert mirror_coordinates(c, 5, 5, "mirror_interior").tolist() == [5] * 12
    assert mirror_coordinates(c, 0, 2, "repeat_image").tolist() == [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1]


@pytest.mark.parametrize("kind", KINDS)
def test_an_explicit_box_inside_the_image_matches_halide(kind):
    """Halide's bounds argument, (min, extent) per dimension: the condition keeps reads in [2, 5] x [1, 3] of a
    5 x 7 image, whatever lies outside that box (it used to be taken as the Func's name and ignored)."""
    a = np.random.default_rng(9).integers(0, 256, size=(H, W), dtype=np.uint8)
    box = [(2, 4), (1, 3)]
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    padded = _loom_condition(kind, inp, box)
    out = lp.Func("out")
    out[x, y] = padded[x - 6, y - 5]
    size = (W + 12, H + 10)

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hpadded = _halide_condition(kind, hin, box)
    hout = hl.Func("out")
    hout[hx, hy] = hpadded[hx - 6, hy - 5]
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize(list(size)))
    assert len(np.unique(want)) > 4  # the box's values, not one constant
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, size), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, size), want)


def test_an_explicit_box_on_an_unbounded_func_matches_halide():
    a = np.random.default_rng(10).integers(0, 256, size=(H, W), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    wide = lp.Func("wide")
    wide[x, y] = lp.u16(inp[x, y]) * 3
    wide.compute_root()
    padded = lp.mirror_interior(wide, [(1, 5), (0, H)])  # no bound() needed with a box
    out = lp.Func("out")
    out[x, y] = padded[x - 3, y] + padded[x + 4, y]

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hwide = hl.Func("wide")
    hwide[hx, hy] = hl.u16(hin[hx, hy]) * 3
    hwide.compute_root()
    hpadded = hl.BoundaryConditions.mirror_interior(hwide, [(1, 5), (0, H)])
    hout = hl.Func("out")
    hout[hx, hy] = hpadded[hx - 3, hy] + hpadded[hx + 4, hy]
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([W, H]))
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (W, H)), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, (W, H)), want)


@pytest.mark.parametrize("bounds,message", [
    ([(0, 4), (0, 3), (0, 2)], r"one per dimension, got \[\(0, 4\), \(0, 3\), \(0, 2\)\]"),
    ([], r"one per dimension, got \[\]"),
    ([(0, 4), (0, 0)], r"positive extents"),
    ("edge", r"got 'edge'"),
    ([(0, 4.5), (0, 3)], r"pairs of ints"),
])
def test_a_bad_box_is_refused_naming_the_condition(bounds, message):
    from loom.errors import LoomError

    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    with pytest.raises(LoomError, match=r"test_halide_boundaries.py:\d+ Func 'inp_repeat_edge': repeat_edge: "
                                        r"bounds must be .*" + message):
        lp.BoundaryConditions.repeat_edge(inp, bounds)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("box, shift, size", [([(1, 3)], (3, 0), (W + 6, H)), ([None, (1, 2)], (0, 2), (W, H + 4))],
                         ids=["x-only", "y-only"])
def test_a_dimension_without_bounds_passes_reads_through_as_halide(kind, box, shift, size):
    """Bounds for x only (Halide's shorter list: y unbounded), or None for x (Halide's Range()) with bounds on
    y; the unbounded dimension's reads stay inside the input."""
    a = np.random.default_rng(11).integers(0, 256, size=(H, W), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    padded = _loom_condition(kind, inp, box)
    out = lp.Func("out")
    out[x, y] = padded[x - shift[0], y - shift[1]]
    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hpadded = _halide_condition(kind, hin, [hl.Range() if b is None else b for b in box])
    hout = hl.Func("out")
    hout[hx, hy] = hpadded[hx - shift[0], hy - shift[1]]
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize(list(size)))
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, size), want)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, size), want)


@pytest.mark.parametrize("value", [300, -5, 2**40 + 3])
def test_constant_exterior_wraps_an_int_outside_the_source_type_like_halide(value):
    """Halide takes the exterior value as an i32 constant (i64 beyond) and casts it: 300 is 44 in u8."""
    a = np.arange(9, dtype=np.uint8).reshape(3, 3)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    padded = lp.BoundaryConditions.constant_exterior(inp, value)
    out = lp.Func("out")
    out[x, y] = padded[x - 1, y - 1]
    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hpadded = hl.BoundaryConditions.constant_exterior(hin, value)
    hout = hl.Func("out")
    hout[hx, hy] = hpadded[hx - 1, hy - 1]
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([5, 5]))
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (5, 5)), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, (5, 5)), want)


@pytest.mark.parametrize("kind", KINDS)
def test_boundary_condition_of_a_tuple_valued_func_matches_halide(kind):
    """A boundary condition of a Tuple-valued Func reads a Tuple (reading an element was a TypeError deep in
    loom). Halide's Python bindings take constant_exterior's Tuple of values only in C++, so that kind is compared
    element by element against Halide on one-element Funcs."""
    x, y = lp.Var("x"), lp.Var("y")
    pair = lp.Func("pair")
    pair[x, y] = (x + y * 3, lp.f32(x) * 0.5)
    box = [(0, 3), (0, 2)]
    padded = (lp.BoundaryConditions.constant_exterior(pair, (7, lp.f32(-1)), box) if kind == "constant_exterior"
              else getattr(lp.BoundaryConditions, kind)(pair, box))
    out = lp.Func("out")
    out[x, y] = lp.f32(padded[x - 2, y - 3][0]) + padded[x + 1, y][1]

    hx, hy = hl.Var("x"), hl.Var("y")
    first, second = hl.Func("first"), hl.Func("second")
    first[hx, hy] = hx + hy * 3
    second[hx, hy] = hl.f32(hx) * 0.5
    if kind == "constant_exterior":
        hfirst = hl.BoundaryConditions.constant_exterior(first, 7, box)
        hsecond = hl.BoundaryConditions.constant_exterior(second, hl.f32(-1), box)
    else:
        hfirst, hsecond = (getattr(hl.BoundaryConditions, kind)(f, box) for f in (first, second))
    hout = hl.Func("out")
    hout[hx, hy] = hl.f32(hfirst[hx - 2, hy - 3]) + hsecond[hx + 1, hy]
    want = np.asarray(hout.realize([8, 5]))
    np.testing.assert_array_equal(run_cpu(out, {}, (8, 5)), want)
    np.testing.assert_array_equal(lp.evaluate(out, {}, (8, 5)), want)
    with pytest.raises(LoomError, match="constant_exterior of a Tuple-valued Func takes a Tuple of 2 values"):
        lp.BoundaryConditions.constant_exterior(pair, 3, box)
