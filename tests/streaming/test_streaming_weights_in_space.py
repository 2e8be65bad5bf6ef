"""A conv layer whose weights stage is computed wholly in space (every dimension unrolled: no dimension iterated
in time). Building its design crashed (an IndexError in the separability check of the capacities, which took
every producer's last time dimension); now bit-exact against numpy."""

import numpy as np

from loom.frontends.pipeline import Func, ImageParam, Int16, IterLevel, RDom, Var, i32
from loom.frontends.pipeline import max as pmax
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate


def test_a_conv_layer_with_its_weights_all_in_space_is_bit_exact():
    x, y, c, o = Var("x"), Var("y"), Var("c"), Var("o")
    C, O, W, H = 3, 4, 6, 4
    inp, wts = ImageParam(Int16, 3, "input"), ImageParam(Int16, 4, "w")
    hw, hwk, cv, out = Func("hw"), Func("hwk"), Func("cv"), Func("out")
    r = RDom([(0, 3), (0, 3), (0, C)], "r")
    hw[x, y, c] = i32(inp[x, y, c])
    hwk[x, y, c, o] = i32(wts[x, y, c, o])
    cv[x, y, o] = i32(0)
    cv[x, y, o] += hw[x + r.x, y + r.y, r.z] * hwk[r.x, r.y, r.z, o]
    out[x, y, o] = pmax(cv[x, y, o], 0)
    out.iteration_order([IterLevel("CGRA", [(x, 3), (y, 2)]), IterLevel("host")]).accelerate("CGRA")
    level = out.get_looplevel("CGRA", x)
    for f in (hw, hwk, cv):
        f.compute_at(level)
    hw.unroll(c)
    hwk.unroll(c).unroll(o).unroll(x).unroll(y)
    cv.unroll(o)
    cv.update(0).unroll(r.x).unroll(r.y).unroll(r.z).unroll(o)
    out.unroll(o)
    rng = np.random.default_rng(5)
    img = rng.integers(-60, 60, (C, H + 2, W + 2)).astype(np.int16)
    w = rng.integers(-6, 6, (O, C, 3, 3)).astype(np.int16)
    acc = np.zeros((O, H, W), np.int64)
    for oo in range(O):
        for cc in range(C):
            for dy in range(3):
                for dx in range(3):
                    acc[oo] += img[cc, dy:dy + H, dx:dx + W].astype(np.int64) * w[oo, cc, dy, dx]
    want = np.maximum(acc, 0).astype(np.int32)
    d = build_design(out, (3, 2, O))
    assert not d.stages["hwk"].time_dims  # the case: a producer with no dimension in time
    np.testing.assert_array_equal(simulate(out, {"input": img, "w": w}, (W, H, O), design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img, "w": w}, (W, H, O)), want)
