"""Schedule ``fuse``: the fused loops compute the same bits as Halide, with producers computed at the fused loop."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import compile_cpu, run_cpu

H, W = 13, 11


def test_fused_tiles_with_a_producer_at_the_fused_loop_match_halide():
    a = np.random.default_rng(11).integers(0, 256, size=(H + 2, W + 2), dtype=np.uint8)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y, xo, yo, xi, yi, t = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi", "t"))
    blur = lp.Func("blur")
    blur[x, y] = lp.u16(inp[x, y]) + lp.u16(inp[x + 1, y]) * 2 + lp.u16(inp[x + 2, y])
    out = lp.Func("out")
    out[x, y] = lp.u8((blur[x, y] + blur[x, y + 1] * 2 + blur[x, y + 2]) >> 4)
    out.tile(x, y, xo, yo, xi, yi, 4, 3).fuse(xo, yo, t)
    blur.compute_at(out, t)
    r = lp.RDom(0, 3, 0, 2)
    acc = lp.Func("acc")  # an update whose two RVars are fused into one loop
    acc[x, y] = lp.u16(0)
    acc[x, y] += lp.u16(out[x + r.x, y + r.y]) * lp.u16(r.x + 1)
    acc.update(0).fuse(r.x, r.y, lp.Var("rf"))
    out.compute_root()

    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hx, hy, hxo, hyo, hxi, hyi, ht = (hl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi", "t"))
    hblur = hl.Func("blur")
    hblur[hx, hy] = hl.u16(hin[hx, hy]) + hl.u16(hin[hx + 1, hy]) * 2 + hl.u16(hin[hx + 2, hy])
    hout = hl.Func("out")
    hout[hx, hy] = hl.u8((hblur[hx, hy] + hblur[hx, hy + 1] * 2 + hblur[hx, hy + 2]) >> 4)
    hout.tile(hx, hy, hxo, hyo, hxi, hyi, 4, 3).fuse(hxo, hyo, ht)
    hblur.compute_at(hout, ht)
    hr = hl.RDom([(0, 3), (0, 2)])
    hacc = hl.Func("acc")
    hacc[hx, hy] = hl.u16(0)
    hacc[hx, hy] += hl.u16(hout[hx + hr.x, hy + hr.y]) * hl.u16(hr.x + 1)
    hacc.update(0).fuse(hr.x, hr.y, hl.RVar("rf"))
    hout.compute_root()
    hin.set(hl.Buffer(a))
    size = (W - 2, H - 1)
    want = np.asarray(hacc.realize(list(size)))
    program = compile_cpu(acc, {"inp": a.shape}, size)
    np.testing.assert_array_equal(program({"inp": a}), want)
    np.testing.assert_array_equal(lp.evaluate(acc, {"inp": a}, size), want)
    ir = str(program.module)
    assert "arith.remui" in ir and "arith.divui" in ir  # the fused loops really are single loops


def test_fuse_refusals_name_the_func_and_primitive():
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y, t = lp.Var("x"), lp.Var("y"), lp.Var("t")
    f = lp.Func("fz")
    f[x, y] = inp[x, y]
    with pytest.raises(LoomError, match=r"fz.*fuse.*'y' must be directly inside 'x'"):
        f.fuse(y, x, t)
    f.fuse(x, y, t)
    with pytest.raises(LoomError, match=r"fz.*split.*fused loop"):
        f.split(t, lp.Var("to"), lp.Var("ti"), 4)
    a = np.arange(35, dtype=np.uint8).reshape(5, 7)
    np.testing.assert_array_equal(run_cpu(f, {"inp": a}, (7, 5)), a)
