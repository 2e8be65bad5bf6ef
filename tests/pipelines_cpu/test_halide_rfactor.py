"""``rfactor``: the intermediate Func it produces gives the same bits as Halide's rfactor and as no rfactor."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

H, W = 12, 10


def _loom(op, factor, by_name=False):
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    c = lp.Var("c")
    r = lp.RDom(0, W, 0, H, name="r")
    f = lp.Func("f")
    f[c] = lp.u16(0) if op == "sum" else lp.u8(0)
    term = lp.u16(inp[r.x, r.y]) * lp.u16(c + 1) if op == "sum" else inp[r.x, r.y] + lp.u8(c)
    f[c] = f[c] + term if op == "sum" else lp.max(f[c], term)
    intm = None
    if factor:
        v = lp.Var("v")
        intm = f.update(0).rfactor(r.y, v)
        intm.compute_root()
        if by_name:  # the RVars keep their names: the intermediate iterates r.x, the factored update r.y
            intm.update(0).unroll(r.x)
            f.update(0).unroll(r.y)
    return f, intm


def _halide(a, op, factor, by_name=False):
    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    c = hl.Var("c")
    r = hl.RDom([(0, W), (0, H)], "r")
    f = hl.Func("f")
    f[c] = hl.u16(0) if op == "sum" else hl.u8(0)
    term = hl.u16(hin[r.x, r.y]) * hl.u16(c + 1) if op == "sum" else hin[r.x, r.y] + hl.u8(c)
    f[c] = f[c] + term if op == "sum" else hl.max(f[c], term)
    if factor:
        v = hl.Var("v")
        intm = f.update(0).rfactor([(r.y, v)]).compute_root()
        if by_name:
            intm.update(0).unroll(r.x)
            f.update(0).unroll(r.y)
    hin.set(hl.Buffer(a))
    return np.asarray(f.realize([4]))


@pytest.mark.parametrize("op", ["sum", "max"])
def test_rfactor_matches_halide_and_the_unfactored_reduction(op):
    a = np.random.default_rng(10).integers(0, 256, size=(H, W), dtype=np.uint8)
    f, intm = _loom(op, factor=True)
    got = run_cpu(f, {"inp": a}, (4,))
    want = _halide(a, op, factor=True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(lp.evaluate(f, {"inp": a}, (4,)), want)
    np.testing.assert_array_equal(want, _halide(a, op, factor=False))
    # the intermediate really holds the partial reductions, one per row of the RDom
    partial = run_cpu(intm, {"inp": a}, (H, 4))
    if op == "sum":
        expect = (a.astype(np.uint32).sum(axis=1)[None, :] * np.arange(1, 5)[:, None]) % 65536
    else:
        expect = (a.astype(np.uint32)[None, :, :] + np.arange(4)[:, None, None]).astype(np.uint8).max(axis=2)
    np.testing.assert_array_equal(partial, expect.astype(partial.dtype))


def test_schedules_name_the_rvars_as_halide_does_after_rfactor():
    """Halide keeps r.x on the intermediate's update and r.y on the factored one; so does loom (it named them
    f_intm_r.x / f_rf.x, and unroll(r.x) was an unknown variable)."""
    a = np.random.default_rng(11).integers(0, 256, size=(H, W), dtype=np.uint8)
    f, intm = _loom("sum", factor=True, by_name=True)
    assert [r.name for r in intm.definitions[1].rvars] == ["r.x"]
    assert [r.name for r in f.definitions[1].rvars] == ["r.y"]
    np.testing.assert_array_equal(run_cpu(f, {"inp": a}, (4,)), _halide(a, "sum", factor=True, by_name=True))


def test_rfactor_refusals_name_the_func_and_primitive():
    inp = lp.ImageParam(lp.Float32, 1, "inp")
    x, v = lp.Var("x"), lp.Var("v")
    r = lp.RDom(0, 8)
    fsum = lp.Func("fsum")
    fsum[x] = 0.0
    fsum[x] = fsum[x] + inp[r.x]
    with pytest.raises(LoomError, match=r"fsum.update\(0\).*rfactor.*rounding"):
        fsum.update(0).rfactor(r.x, v)
    hist = lp.Func("hist")
    hist[x] = 0
    hist[lp.i32(inp[r.x])] = hist[lp.i32(inp[r.x])] * 3 + 1  # a histogram factors (below), not this
    with pytest.raises(LoomError, match=r"hist.update\(0\).*rfactor.*does not combine hist\[.*\] with a term"):
        hist.update(0).rfactor(r.x, v)
    sub = lp.Func("sub")
    sub[x] = 0.0
    sub[x] = inp[r.x] - sub[x]
    with pytest.raises(LoomError, match=r"sub.update\(0\).*rfactor.*not f\[...\] combined"):
        sub.update(0).rfactor(r.x, v)


def _predicated(m, op):
    """A reduction over a 12 x 10 RDom whose where() reads both RVars, a Param and the pure Var, factored by r.y."""
    inp = m.ImageParam(lp.UInt8 if m is lp else hl.UInt(8), 2, "inp")
    t = m.Param(lp.Int32 if m is lp else hl.Int(32), "t")
    c, v = m.Var("c"), m.Var("v")
    r = m.RDom(0, W, 0, H, name="r") if m is lp else hl.RDom([(0, W), (0, H)], "r")
    r.where(r.x < r.y + t)
    r.where((r.x + c) % 3 != 0)
    f = m.Func("f")
    term = m.u16(inp[r.x, r.y]) * m.u16(c + 1)
    f[c] = m.u16(5)
    f[c] = {"add": lambda: f[c] + term, "max": lambda: m.max(f[c], term), "min": lambda: m.min(term, f[c]),
            "mul": lambda: f[c] * (term | 1)}[op]()
    f.update(0).rfactor([(r.y, v)]).compute_root()
    return inp, t, f


@pytest.mark.parametrize("op", ["add", "max", "min", "mul"])
def test_rfactor_of_a_predicated_update_matches_halide(op):
    """where() predicates fold into the factored term (they were refused)."""
    a = np.random.default_rng(11).integers(0, 256, size=(H, W), dtype=np.uint8)
    hinp, ht, hf = _predicated(hl, op)
    hinp.set(hl.Buffer(a))
    ht.set(2)
    want = np.asarray(hf.realize([4]))
    _, _, f = _predicated(lp, op)
    np.testing.assert_array_equal(run_cpu(f, {"inp": a, "t": 2}, (4,)), want)
    np.testing.assert_array_equal(lp.evaluate(f, {"inp": a, "t": 2}, (4,)), want)


def _histogram(m, kind):
    """A histogram (an RDom point's bin on the left-hand side), factored over rows into per-row histograms that
    run in parallel, as Halide's rfactor of a histogram."""
    inp = m.ImageParam(m.UInt(8) if m is hl else lp.UInt8, 2, "inp")
    b, y, u = m.Var("b"), m.Var("y"), m.Var("u")
    r = m.RDom([(0, W), (0, H)], "r") if m is hl else lp.RDom([(0, W), (0, H)], name="r")
    h, out = m.Func("h"), m.Func("out")
    bins = m.i32(inp[r.x, r.y]) / 32
    if kind == "sum":
        h[b] = m.u32(0)
        h[bins] += m.u32(1)
    elif kind == "where":
        r.where(r.x != r.y)
        h[b, y] = m.u32(0)
        h[bins, m.i32(inp[r.x, r.y]) % 3] += m.u32(inp[r.x, r.y])
    else:  # the largest column index seen in each bin
        h[b] = -1
        h[bins] = m.max(h[bins], r.x)
    intm = h.update(0).rfactor([(r.y, u)]) if m is hl else h.update(0).rfactor(r.y, u)
    intm.compute_root().update(0).parallel(u)
    h.compute_root()
    if kind == "where":
        out[b, y] = h[b, y] * 2
    else:
        out[b, y] = h[b] + y
    return inp, out


@pytest.mark.parametrize("kind", ["sum", "where", "max"])
def test_a_histograms_rfactor_matches_halide(kind):
    """rfactor of an update whose left-hand side is an RDom point's bin was refused ('the update's left-hand side
    must be pure Vars'); Halide factors it into per-row histograms merged over f's points."""
    a = np.random.default_rng(21).integers(0, 256, size=(H, W), dtype=np.uint8)
    hin, hout = _histogram(hl, kind)
    hin.set(hl.Buffer(a))
    want = np.asarray(hout.realize([8, 3]))
    _, out = _histogram(lp, kind)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (8, 3)), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": a}, (8, 3)), want)
