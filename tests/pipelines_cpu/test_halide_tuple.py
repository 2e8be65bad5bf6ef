"""Tuple-valued Funcs: pure and update definitions with elements of different types, against Halide."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
import loom.jit
from loom.errors import LoomError

H, W = 7, 9


def test_tuple_func_with_an_update_and_a_consumer_matches_halide():
    a = np.random.default_rng(12).integers(0, 256, size=(H, W), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    r = lp.RDom(0, 3)
    stats = lp.Func("stats")
    stats[x, y] = (lp.u16(0), inp[x, y], lp.f32(0.0))  # (sum, max, scaled sum): three element types
    old = stats[x, y]
    stats[x, y] = (old[0] + lp.u16(inp[x + r.x, y]), lp.max(old[1], inp[x + r.x, y]),
                   old[2] + lp.f32(inp[x + r.x, y]) * 0.25)
    out = lp.Func("out")
    out[x, y] = lp.f32(stats[x, y][0]) - stats[x, y][2] + lp.f32(stats[x, y][1])
    for comp in stats.components:
        comp.compute_root()

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy = hl.Var("x"), hl.Var("y")
    hr = hl.RDom([(0, 3)])
    hstats = hl.Func("stats")
    hstats[hx, hy] = (hl.u16(0), hin[hx, hy], hl.f32(0.0))
    hstats[hx, hy] = (hstats[hx, hy][0] + hl.u16(hin[hx + hr.x, hy]), hl.max(hstats[hx, hy][1], hin[hx + hr.x, hy]),
                      hstats[hx, hy][2] + hl.f32(hin[hx + hr.x, hy]) * 0.25)
    hout = hl.Func("out")
    hout[hx, hy] = hl.f32(hstats[hx, hy][0]) - hstats[hx, hy][2] + hl.f32(hstats[hx, hy][1])
    hstats.compute_root()
    hin.set(hl.Buffer(a))
    size = [W - 2, H]
    inp.set(a)
    np.testing.assert_array_equal(np.asarray(out.realize(size)), np.asarray(hout.realize(size)))
    parts = loom.jit.realize(stats, size)
    want = hstats.realize(size)
    assert len(parts) == 3
    for i in range(3):
        assert np.asarray(parts[i]).dtype == np.asarray(want[i]).dtype
        np.testing.assert_array_equal(np.asarray(parts[i]), np.asarray(want[i]))


def test_tuple_refusals_name_the_func_and_primitive():
    x = lp.Var("x")
    r = lp.RDom(0, 4)
    f = lp.Func("pair")
    f[x] = (0, 1)
    with pytest.raises(LoomError, match=r"pair.*Tuple update: element 0 of the update reads element 1"):
        f[x] = (f[x][1] + r.x, f[x][1])
    with pytest.raises(LoomError, match=r"pair.*Tuple update: gives 3 Tuple elements"):
        f[x] = (1, 2, 3)
    with pytest.raises(LoomError, match=r"pair.*Tuple update.*give every element"):
        f[x] = 5
    p = lp.Func("p")
    p[x] = x * 2
    g = lp.Func("g")
    g[x] = (p[x], p[x + 1])
    with pytest.raises(LoomError, match=r"Func 'p'.*compute_at: 'g' is Tuple-valued.*"
                                        r"compute_at\(g\.components\[0\], x\)"):
        p.compute_at(g, x)
    with pytest.raises(LoomError, match=r"Func 'p'.*store_at: 'g' is Tuple-valued"):
        p.store_at(g, x)
    with pytest.raises(LoomError, match=r"Tuple has 2 elements"):
        f[x][2]


def test_a_tuple_update_is_scheduled_and_factored_per_element_like_halide():
    """f.update(0) of a Tuple-valued Func said 'has no update definition 0'; its loop primitives now apply to every
    element, its rfactor names the elements, and an element's update factors as Halide's Tuple rfactor does."""
    a = np.random.default_rng(15).integers(0, 256, size=(4, 6), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, v = lp.Var("x"), lp.Var("v")
    r = lp.RDom(0, 6, 0, 4)
    f = lp.Func("f")
    f[x] = (lp.u32(0), lp.u8(0))
    f[x] = (f[x][0] + lp.u32(inp[r.x, r.y]) * lp.u32(x + 1), lp.max(f[x][1], inp[r.x, r.y]))
    with pytest.raises(LoomError, match=r"Func 'f'.*rfactor: f is Tuple-valued: rfactor the update of one element, "
                                        r"e\.g\. f\.components\[0\]\.update\(0\)\.rfactor"):
        f.update(0).rfactor(r.y, v)
    with pytest.raises(LoomError, match=r"Func 'f'.*has no update definition 1"):
        f.update(1)
    for element in f.components:
        element.update(0).rfactor(r.y, v).compute_root()

    hinp = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hv = hl.Var("x"), hl.Var("v")
    hr = hl.RDom([(0, 6), (0, 4)])
    hf = hl.Func("f")
    hf[hx] = (hl.u32(0), hl.u8(0))
    hf[hx] = (hf[hx][0] + hl.u32(hinp[hr.x, hr.y]) * hl.u32(hx + 1), hl.max(hf[hx][1], hinp[hr.x, hr.y]))
    hf.update(0).rfactor([(hr.y, hv)]).compute_root()
    hinp.set(hl.Buffer(a))
    want = hf.realize([3])
    inp.set(a)
    got = loom.jit.realize(f, [3])
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(want[i]))


def test_select_of_tuples_matches_halide_and_tuple_arithmetic_is_refused():
    """Halide's select of Tuples picks element by element (loom said 'cannot use tuple value'); arithmetic on a
    whole Tuple was a Python TypeError."""
    a = np.random.default_rng(16).integers(0, 256, size=(6,), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 1, "inp")
    x = lp.Var("x")
    r = lp.RDom(0, 3)
    f = lp.Func("f")
    f[x] = lp.select(x > 2, (x, lp.f32(x)), (-x, lp.f32(0)))
    f[x] = lp.select(inp[r.x] > 100, (f[x][0] + lp.i32(inp[r.x]), f[x][1] * 2), f[x])  # per element: own reads
    hinp = hl.ImageParam(hl.UInt(8), 1, "inp")
    hx = hl.Var("x")
    hr = hl.RDom([(0, 3)])
    hf = hl.Func("f")
    hf[hx] = hl.select(hx > 2, hl.Tuple([hx, hl.f32(hx)]), hl.Tuple([-hx, hl.f32(0)]))
    hf[hx] = hl.select(hinp[hr.x] > 100, hl.Tuple([hf[hx][0] + hl.i32(hinp[hr.x]), hf[hx][1] * 2]), hf[hx])
    hinp.set(hl.Buffer(a))
    want = hf.realize([5])
    got = loom.jit.realize(f, [5], {"inp": a})
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(want[i]))
    with pytest.raises(LoomError, match=r"a Tuple \(2 elements\) has no arithmetic or comparison; read an element"):
        f[x] + 1
    with pytest.raises(LoomError, match="select of Tuples needs Tuples of one size"):
        g = lp.Func("g")
        g[x] = lp.select(x > 1, (x, x), (x, x, x))


def test_a_tuple_valued_func_is_scheduled_whole_like_halide():
    """compute_root, tile, parallel on a Tuple-valued Func and its update's reorder/parallel apply to every element
    (they were refused: 'schedule its elements'), and every element of a Tuple update runs once per point of every
    RDom the update uses, under its where predicate: element 1 below does not name r, and was updated once (loom
    gave 2 x where Halide gives 8 x, 4 x with the predicate)."""
    def build(m):
        x, y, xo, yo, xi, yi = (m.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
        f, out = m.Func("f"), m.Func("out")
        f[x, y] = (x + y, x + 1)
        r = m.RDom([(0, 3)])
        r.where(r.x != 1)
        f[x, y] = (f[x, y][0] + r.x, f[x, y][1] * 2)
        q = m.RDom([(0, 4)])
        f[x, y] = (f[x, y][0] * 3 + q.x, f[x, y][1] + 1)
        f.compute_root().tile(x, y, xo, yo, xi, yi, 2, 2).parallel(yo)
        f.update(0).reorder(y, x).parallel(x)
        f.update(1).split(y, yo, yi, 2).parallel(yo)
        out[x, y] = (f[x, y][0] - f[x + 1, y][1], f[x, y][1] * 5)
        out.tile(x, y, xo, yo, xi, yi, 4, 2, m.TailStrategy.GuardWithIf)
        return out

    want = build(hl).realize([7, 3])
    got = loom.jit.realize(build(lp), [7, 3])
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(want[i]))


def test_every_element_of_a_tuple_update_runs_over_its_rdoms():
    """Unscheduled: element 1 of f's update names no RVar, yet Halide doubles it at each point of r where the
    predicate holds (4 x), and g's element 1 counts q's points; loom updated such an element once."""
    def build(m):
        x = m.Var("x")
        f, g = m.Func("f"), m.Func("g")
        f[x] = (x, x + 1)
        r = m.RDom([(0, 3)])
        r.where(r.x != 1)
        f[x] = (f[x][0] + r.x, f[x][1] * 2)
        q = m.RDom([(0, 4)])
        g[x] = (f[x][0] + f[x][1], m.i32(0))
        g[x] = (g[x][0] + q.x * x, g[x][1] + 1)
        return g

    want = build(hl).realize([5])
    got = loom.jit.realize(build(lp), [5])
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(want[i]))
