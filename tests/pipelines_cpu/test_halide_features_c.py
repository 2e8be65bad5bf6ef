"""The generated C of every Halide feature, against numpy written here (no Halide: this file also runs
under ASan/UBSan, where Halide cannot be loaded). Values that a mirror, a fused loop, an rfactor
intermediate or a Param move must land in bounds: the sanitizer session checks the C is memory-safe."""

import numpy as np
import pytest

import loom.frontends.pipeline as lp
from loom.jit.pipeline import compile_cpu, run_cpu

H, W = 6, 9


def _img(seed):
    return np.random.default_rng(seed).integers(0, 256, size=(H, W), dtype=np.uint8)


@pytest.mark.sanitize
def test_mirrors_param_and_fuse_in_c():
    a = _img(1)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    shift = lp.Param(lp.Int32, "shift", min=-20, max=20)
    x, y, t = lp.Var("x"), lp.Var("y"), lp.Var("t")
    mi, mo = lp.mirror_image(inp), lp.mirror_interior(inp)
    out = lp.Func("out")
    out[x, y] = lp.u16(mi[x + shift, y - 7]) + lp.u16(mo[x - 11, y + shift])
    out.fuse(x, y, t)
    program = compile_cpu(out, {"inp": a.shape}, (W, H))
    for s in (-20, 0, 13):
        xs, ys = np.arange(W), np.arange(H)
        def reflect(c, n, interior):
            p = 2 * n - 2 if interior else 2 * n
            m = np.mod(c, p)
            return np.where(m < n, m, (p - m) if interior else (p - 1 - m))
        first = a[reflect(ys - 7, H, False)[:, None], reflect(xs + s, W, False)[None, :]]
        second = a[reflect(ys + s, H, True)[:, None], reflect(xs - 11, W, True)[None, :]]
        np.testing.assert_array_equal(program({"inp": a, "shift": s}), first.astype(np.uint16) + second)


@pytest.mark.sanitize
def test_boundary_conditions_with_an_explicit_box_in_c():
    """A box inside the image ([2, 6] x [1, 4]): reads clamp / reflect into it, far outside the image too."""
    a = _img(3)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y = lp.Var("x"), lp.Var("y")
    box = [(2, 5), (1, 4)]
    edge, zero = lp.repeat_edge(inp, box), lp.constant_exterior(inp, 0, box)
    out = lp.Func("out")
    out[x, y] = lp.u16(edge[x - 30, y + 20]) + lp.u16(zero[x, y])
    xs, ys = np.arange(W), np.arange(H)
    inside = ((xs >= 2) & (xs <= 6))[None, :] & ((ys >= 1) & (ys <= 4))[:, None]
    want = a[np.clip(ys + 20, 1, 4)[:, None], np.clip(xs - 30, 2, 6)[None, :]].astype(np.uint16) + \
        np.where(inside, a, 0)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (W, H)), want)


@pytest.mark.sanitize
def test_reductions_rfactor_tuple_and_math_in_c():
    a = _img(2)
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    y, v = lp.Var("y"), lp.Var("v")
    r = lp.RDom(0, W)
    ix, best = lp.argmax(inp[r.x, y])[0], lp.argmax(inp[r.x, y])[1]
    pair = lp.Func("pair")
    pair[y] = (ix, lp.sqrt(best))
    total = lp.Func("total")
    total[y] = lp.u32(0)
    q = lp.RDom(0, W, 0, H)
    total[y] = total[y] + lp.u32(inp[q.x, q.y]) * lp.u32(y + 1)
    total.update(0).rfactor(q.y, v).compute_root()
    np.testing.assert_array_equal(run_cpu(pair.components[0], {"inp": a}, (H,)), np.argmax(a, axis=1))
    np.testing.assert_array_equal(run_cpu(pair.components[1], {"inp": a}, (H,)),
                                  np.sqrt(a.max(axis=1).astype(np.float32)))
    expect = int(a.astype(np.uint64).sum()) * np.arange(1, H + 1)
    np.testing.assert_array_equal(run_cpu(total, {"inp": a}, (H,)), expect)
