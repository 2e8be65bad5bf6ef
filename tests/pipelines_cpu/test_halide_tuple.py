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
    with pytest.raises(LoomError, match=r"pair.*compute_root.*Tuple-valued"):
        f.compute_root()
    with pytest.raises(LoomError, match=r"pair.*Tuple-valued"):
        f.split(x, lp.Var("xo"), lp.Var("xi"), 2)
    with pytest.raises(LoomError, match=r"Tuple has 2 elements"):
        f[x][2]


def test_a_tuple_update_is_scheduled_and_factored_per_element_like_halide():
    """f.update(0) of a Tuple-valued Func said 'has no update definition 0'; it names the elements now, and an
    element's update factors as Halide's Tuple rfactor does."""
    a = np.random.default_rng(15).integers(0, 256, size=(4, 6), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, v = lp.Var("x"), lp.Var("v")
    r = lp.RDom(0, 6, 0, 4)
    f = lp.Func("f")
    f[x] = (lp.u32(0), lp.u8(0))
    f[x] = (f[x][0] + lp.u32(inp[r.x, r.y]) * lp.u32(x + 1), lp.max(f[x][1], inp[r.x, r.y]))
    with pytest.raises(LoomError, match=r"f.*is Tuple-valued: schedule \(or rfactor\) the update of each element, "
                                        r"e\.g\. f\.components\[0\]\.update\(0\)"):
        f.update(0)
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
