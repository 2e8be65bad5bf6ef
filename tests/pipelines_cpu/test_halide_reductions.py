"""Inline reductions (sum, product, maximum, minimum, argmax, argmin) and RDom.where, bit-exact against Halide.

Layout: numpy (H, W) is Halide/loom (x = W, y = H); a 1-d Func of y comes back as shape (H,).
"""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

H, W = 9, 14


def _image(seed=0, high=256, dtype=np.uint8):
    return np.random.default_rng(seed).integers(0, high, size=(H, W), dtype=dtype)


def _both(out, hout, inputs, size):
    """loom's C path and its numpy reference, and Halide, over the same inputs."""
    got = run_cpu(out, inputs, size)
    ref = lp.evaluate(out, inputs, size)
    want = np.asarray(hout.realize(list(size)))
    return got, ref, want


def _assert_equal_all(out, hout, inputs, size):
    got, ref, want = _both(out, hout, inputs, size)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref, want)


@pytest.mark.parametrize("kind", ["sum", "product", "maximum", "minimum"])
def test_inline_reductions_over_a_stencil_match_halide(kind):
    a = _image(1, high=5 if kind == "product" else 256)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    r = lp.RDom(-1, 3, 0, 2)
    out = lp.Func("out")
    # u16 sum wraps in Halide's type rules; u8 max/min stay u8
    term = lp.u16(inp[x + r.x + 1, y + r.y]) if kind in ("sum", "product") else inp[x + r.x + 1, y + r.y]
    out[x, y] = getattr(lp, kind)(term) + (lp.u16(x % 3) if kind in ("sum", "product") else 0)

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hr = hl.RDom([(-1, 3), (0, 2)])
    hout = hl.Func("out")
    hterm = hl.u16(hin[hx + hr.x + 1, hy + hr.y]) if kind in ("sum", "product") else hin[hx + hr.x + 1, hy + hr.y]
    hout[hx, hy] = getattr(hl, kind)(hterm) + (hl.u16(hx % 3) if kind in ("sum", "product") else 0)
    hin.set(hl.Buffer(a))
    _assert_equal_all(out, hout, {"inp": a}, (W - 2, H - 1))


def test_float_maximum_of_an_empty_predicate_is_minus_infinity_like_halide():
    a = np.random.default_rng(2).standard_normal((H, W)).astype(np.float32)
    inp = lp.ImageParam(lp.Float32, 2, "inp")
    y = lp.Var("y")
    r = lp.RDom(0, W)
    r.where(inp[r.x, y] > 1.0)  # some rows have no point: their maximum is the initial value
    out = lp.Func("out")
    out[y] = lp.maximum(inp[r.x, y])

    hin = hl.ImageParam(hl.Float(32), 2, "inp")
    hy = hl.Var("y")
    hr = hl.RDom([(0, W)])
    hr.where(hin[hr.x, hy] > 1.0)
    hout = hl.Func("out")
    hout[hy] = hl.maximum(hin[hr.x, hy])
    hin.set(hl.Buffer(a))
    got, ref, want = _both(out, hout, {"inp": a}, (H,))
    assert np.isneginf(want).any() or (a > 1.0).any(axis=1).all()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref, want)


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_argmax_2d_with_ties_matches_halide_tuple(kind):
    a = _image(3, high=4)  # many ties: the first in iteration order (r.x innermost) wins
    a[2] = 0  # a row of lowest values: Halide keeps the initial index 0 for argmax
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    y = lp.Var("y")
    r = lp.RDom(1, 5, 0, 3)
    idx_x, idx_y, value = getattr(lp, kind)(inp[r.x + 2, (y + r.y) % H])
    ox, oy, ov = lp.Func("ox"), lp.Func("oy"), lp.Func("ov")
    ox[y], oy[y], ov[y] = idx_x, idx_y, value

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hy = hl.Var("y")
    hr = hl.RDom([(1, 5), (0, 3)])
    hres = hl.Func("hres")
    hres[hy] = getattr(hl, kind)(hin[hr.x + 2, (hy + hr.y) % H])
    hin.set(hl.Buffer(a))
    want = hres.realize([H])
    for i, f in enumerate((ox, oy, ov)):
        np.testing.assert_array_equal(run_cpu(f, {"inp": a}, (H,)), np.asarray(want[i]))
        np.testing.assert_array_equal(lp.evaluate(f, {"inp": a}, (H,)), np.asarray(want[i]))


def test_where_on_an_explicit_update_matches_halide():
    a = _image(4)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    r = lp.RDom(0, W, 0, H)
    r.where(r.x < r.y + 3)  # a triangle
    r.where(inp[r.x, r.y] % 3 != 0)  # and a data-dependent predicate
    hist = lp.Func("hist")
    hist[x] = lp.u32(0)
    hist[lp.i32(inp[r.x, r.y]) >> 5] += lp.u32(1)

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx = hl.Var("x")
    hr = hl.RDom([(0, W), (0, H)])
    hr.where(hr.x < hr.y + 3)
    hr.where(hin[hr.x, hr.y] % 3 != 0)
    hhist = hl.Func("hist")
    hhist[hx] = hl.u32(0)
    hhist[hl.i32(hin[hr.x, hr.y]) >> 5] += hl.u32(1)
    hin.set(hl.Buffer(a))
    _assert_equal_all(hist, hhist, {"inp": a}, (8,))
    # and against numpy directly
    yy, xx = np.mgrid[0:H, 0:W]
    keep = (xx < yy + 3) & (a % 3 != 0)
    np.testing.assert_array_equal(run_cpu(hist, {"inp": a}, (8,)), np.bincount(a[keep] >> 5, minlength=8))


def test_reduction_without_rdom_names_the_func():
    x = lp.Var("x")
    f = lp.Func("nothing_to_sum")
    with pytest.raises(LoomError, match="nothing_to_sum.*exactly one RDom|exactly one RDom.*nothing_to_sum"):
        f[x] = lp.sum(x + 1)


def test_where_needs_a_bool_and_bound_vars():
    r = lp.RDom(0, 4, name="rr")
    with pytest.raises(LoomError, match="rr.*bool"):
        r.where(r.x + 1)
    x, z = lp.Var("x"), lp.Var("z")
    r.where(r.x < z)
    f = lp.Func("loose")
    f[x] = 0
    with pytest.raises(LoomError, match="loose.*'z'"):
        f[x] += r.x


def test_an_rvar_split_named_with_rvars_matches_halide():
    """Halide names the loops of a split RVar with RVar("ro"); loom's splits name loops with Vars, and
    RVar(name) is one. A histogram-like sum over 16 with its RVar split by 4 and reordered."""
    a = np.random.default_rng(3).integers(0, 256, 16).astype(np.uint8)
    x = lp.Var("x")
    inp = lp.ImageParam(lp.UInt8, 1, "a")
    r = lp.RDom(0, 16, name="r")
    f = lp.Func("f")
    f[x] = lp.u16(0)
    f[x] += lp.u16(inp[r.x]) * lp.u16(x + 1)
    ro, ri = lp.RVar("ro"), lp.RVar("ri")
    assert isinstance(ro, lp.Var) and ro.name == "ro"
    f.update(0).split(r.x, ro, ri, 4).reorder(ri, x, ro)
    hx = hl.Var("x")
    hr = hl.RDom([(0, 16)])
    g = hl.Func("g")
    g[hx] = hl.u16(0)
    g[hx] += hl.u16(hl.Buffer(a)[hr.x]) * hl.u16(hx + 1)
    hro, hri = hl.RVar("ro"), hl.RVar("ri")
    g.update(0).split(hr.x, hro, hri, 4).reorder(hri, hx, hro)
    want = np.asarray(g.realize([5]))
    np.testing.assert_array_equal(run_cpu(f, {"a": a}, (5,)), want)
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a}, (5,)), want)


def test_a_buffer_with_a_nonzero_min_is_refused_naming_the_fix():
    with pytest.raises(LoomError, match=r"set_min\(\[10, 20\]\): loom's input buffers start at 0"):
        lp.Buffer(np.zeros((3, 4), np.uint8), name="b").set_min([10, 20])
    assert lp.Buffer(np.zeros((3, 4), np.uint8)).set_min([0, 0]).extents == (4, 3)


def test_a_per_row_histogram_matches_halide():
    """h[inp[r, y] / 64, y] += 1: y bare in its own place and inside the scattered index (it was refused)."""
    a = np.random.default_rng(0).integers(0, 256, (6, 17), np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    r = lp.RDom(0, 17, name="r")
    h = lp.Func("h")
    h[x, y] = 0
    h[lp.i32(inp[r.x, y]) / 64, y] += 1
    hx, hy = hl.Var("x"), hl.Var("y")
    hr = hl.RDom([(0, 17)])
    g = hl.Func("g")
    g[hx, hy] = 0
    g[hl.i32(hl.Buffer(a)[hr.x, hy]) / 64, hy] += 1
    want = np.asarray(g.realize([4, 6]))
    assert (want.sum(axis=1) == 17).all()
    np.testing.assert_array_equal(lp.evaluate(h, {"inp": a}, (4, 6)), want)
    np.testing.assert_array_equal(run_cpu(h, {"inp": a}, (4, 6)), want)
    with pytest.raises(LoomError, match=r"Var 'y' must appear bare on the left-hand side of an update, not only "
                                        r"inside"):
        h[lp.i32(inp[r.x, y]) / 64, x] += 1


def test_an_rdom_over_a_buffer_matches_halide():
    """RDom(buffer) iterates the Buffer's extents (x first), as Halide's: a weighted sum over a 3 x 2 kernel."""
    w = np.array([[1, -2, 3], [4, 5, -6]], np.int16)  # 2 rows of 3: extents (3, 2)
    img = _image(seed=5, dtype=np.uint8)
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    wb = lp.Buffer(w, name="w")
    r = lp.RDom(wb)
    assert [(v.min, v.extent) for v in r.vars] == [(0, 3), (0, 2)]
    f = lp.Func("f")
    f[x, y] = lp.sum(wb[r.x, r.y] * lp.i16(inp[x + r.x, y + r.y]))
    hx, hy = hl.Var("x"), hl.Var("y")
    hw = hl.Buffer(w)
    hr = hl.RDom(hw)
    g = hl.Func("g")
    g[hx, hy] = hl.sum(hw[hr.x, hr.y] * hl.i16(hl.Buffer(img)[hx + hr.x, hy + hr.y]))
    want = np.asarray(g.realize([W - 2, H - 1]))
    np.testing.assert_array_equal(lp.evaluate(f, {"inp": img}, (W - 2, H - 1)), want)
    np.testing.assert_array_equal(run_cpu(f, {"inp": img}, (W - 2, H - 1)), want)


def _scan_window(m, t):
    x = m.Var("x")
    inp = m.ImageParam(t, 1, "inp")
    f, g = m.Func("f"), m.Func("g")
    r = m.RDom([(1, 9)], "r") if m is hl else m.RDom([(1, 9)], name="r")
    f[x] = inp[x]
    f[r.x] = f[r.x - 1] + f[r.x]  # prefix sum over 1..9
    g[x] = f[x]
    f.compute_root()
    return g, inp


def test_a_scan_read_through_a_window_past_its_start_matches_halide():
    """The consumer needs f over [5, 7]; the scan's update writes 1..9 and reads f[r - 1], so f is realised
    from 0 (the CPU path read an unwritten f[0] and returned garbage; evaluate refused)."""
    a = np.arange(1, 11, dtype=np.int32)
    hg, hin = _scan_window(hl, hl.Int(32))
    hin.set(hl.Buffer(a))
    want = hl.Buffer(hl.Int(32), [3])
    want.set_min([5])
    hg.realize(want)
    g, _ = _scan_window(lp, lp.Int32)
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (3,), (5,)), np.asarray(want))
    np.testing.assert_array_equal(lp.evaluate(g, {"inp": a}, (3,), (5,)), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(want), [21, 28, 36])


def test_a_summed_area_table_computed_per_column_strip_matches_halide():
    """sx (a scan along x) computed at sy's y loop while sy scans along y, read through a window at (30, 27):
    each strip's sx is realised from x = 0 (the loop-level regions missed the scan's own read too)."""
    img = np.random.default_rng(3).integers(0, 256, (37, 50), dtype=np.uint8)
    h, w = img.shape

    def build(m):
        x, y, xo, xi = (m.Var(n) for n in ("x", "y", "xo", "xi"))
        inp = m.ImageParam(lp.UInt8 if m is lp else hl.UInt(8), 2, "inp")
        sx, sy, o = m.Func("sx"), m.Func("sy"), m.Func("o")
        rx = m.RDom([(1, w - 1)], name="rx") if m is lp else m.RDom([(1, w - 1)], "rx")
        ry = m.RDom([(1, h - 1)], name="ry") if m is lp else m.RDom([(1, h - 1)], "ry")
        sx[x, y] = m.u32(inp[x, y])
        sx[rx.x, y] = sx[rx.x - 1, y] + sx[rx.x, y]
        sy[x, y] = sx[x, y]
        sy[x, ry.x] = sy[x, ry.x - 1] + sy[x, ry.x]
        sy.update().split(x, xo, xi, 10).reorder(xi, ry.x, xo)
        sx.compute_at(sy, y)
        sy.compute_root()
        o[x, y] = sy[x, y]
        return o, inp

    ho, hin = build(hl)
    hin.set(hl.Buffer(img))
    want = hl.Buffer(hl.UInt(32), [20, 10])
    want.set_min([30, 27])
    ho.realize(want)
    o, _ = build(lp)
    np.testing.assert_array_equal(run_cpu(o, {"inp": img}, (20, 10), (30, 27)), np.asarray(want))
    np.testing.assert_array_equal(lp.evaluate(o, {"inp": img}, (20, 10), (30, 27)), np.asarray(want))


def test_an_update_of_an_undefined_func_starts_from_its_identity_as_halide():
    """f[...] += v (or -=, *=, /=) with no pure definition: Halide defines f as 0 (1 for * and /) in v's type
    first. A histogram, a row sum and a product, against Halide; reading an undefined Func is still refused."""
    a = np.random.default_rng(0).integers(0, 256, (6, 17), np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    r = lp.RDom(0, 17, name="r")
    h, s, p = lp.Func("h"), lp.Func("s"), lp.Func("p")
    h[lp.i32(inp[r.x, y]) / 64, y] += 1
    s[y] += lp.u16(inp[r.x, y])
    p[x] *= lp.u16(x + 2)
    hx, hy = hl.Var("x"), hl.Var("y")
    hr = hl.RDom([(0, 17)])
    hb = hl.Buffer(a)
    gh, gs, gp = hl.Func("gh"), hl.Func("gs"), hl.Func("gp")
    gh[hl.i32(hb[hr.x, hy]) / 64, hy] += 1
    gs[hy] += hl.u16(hb[hr.x, hy])
    gp[hx] *= hl.u16(hx + 2)
    for f, g, size in ((h, gh, (4, 6)), (s, gs, (6,)), (p, gp, (5,))):
        want = np.asarray(g.realize(list(size)))
        got = lp.evaluate(f, {"inp": a}, size)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(run_cpu(f, {"inp": a}, size), want)
    q, out = lp.Func("q"), lp.Func("out")
    with pytest.raises(LoomError, match="Func 'q': used before it has a pure definition"):
        out[x] = q[x] + 1


def _unused_rdom_dimension(m):
    """An update and an inline sum over a 2-D RDom reading only r.x: Halide runs them over both dimensions."""
    x = m.Var("x")
    r = m.RDom(0, 2, -1, 3) if m is lp else hl.RDom([(0, 2), (-1, 3)])
    f = m.Func("f")
    f[x] = m.i32(1)
    f[x] = f[x] * (m.i32(x) - 3 + r.x)
    g = m.Func("g")
    g[x] = f[x] + m.sum(m.i32(x) * 10 + r.x)
    return g


def test_a_reduction_runs_over_every_rdom_dimension_even_unused_ones():
    """loom iterated only the RVars a definition names: (x - 3)(x - 2) once instead of three times."""
    want = np.asarray(_unused_rdom_dimension(hl).realize([5]))
    got = run_cpu(_unused_rdom_dimension(lp), {}, (5,))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(lp.evaluate(_unused_rdom_dimension(lp), {}, (5,)), want)
    xs = np.arange(5)
    np.testing.assert_array_equal(want, ((xs - 3) * (xs - 2)) ** 3 + 3 * (20 * xs + 1))


def _reordered_rdom(m, op):
    inp = m.ImageParam(lp.UInt8 if m is lp else hl.UInt(8), 2, "inp")
    x = m.Var("x")
    r = m.RDom(0, 7, 0, 5) if m is lp else hl.RDom([(0, 7), (0, 5)])
    r.where(r.x != r.y)
    f = m.Func("f")
    f[x] = m.u32(x)
    term = m.u32(inp[r.x, r.y]) * m.u32(x + 1)
    f[x] = f[x] * 3 + term if op == "affine" else m.max(term, f[x])
    f.update(0).reorder(r.y, r.x)
    return inp, f


def test_reordering_the_rvars_of_a_non_associative_update_is_refused_like_halide():
    """f = f * 3 + term visited r.y-innermost gives other values; loom ran it (Halide refuses). An associative
    update (max) may be reordered: same values as Halide."""
    a = np.random.default_rng(10).integers(0, 256, size=(5, 7), dtype=np.uint8)
    with pytest.raises(hl.HalideError, match="can't reorder RVars"):
        hinp, hf = _reordered_rdom(hl, "affine")
        hinp.set(hl.Buffer(a))
        hf.realize([4])
    with pytest.raises(LoomError, match=r"reorder: can't put the loop of RVar r\d*\.y inside that of r\d*\.x: the "
                                        "update is not an associative reduction"):
        _reordered_rdom(lp, "affine")
    hinp, hf = _reordered_rdom(hl, "max")
    hinp.set(hl.Buffer(a))
    _, f = _reordered_rdom(lp, "max")
    np.testing.assert_array_equal(run_cpu(f, {"inp": a}, (4,)), np.asarray(hf.realize([4])))
