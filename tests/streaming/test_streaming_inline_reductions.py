"""Inline reductions (``sum``, ``maximum``, ``minimum``, ``argmax``) read inside the accelerator: their anonymous
Funcs have no handle to schedule, so the streaming path computes them in space (one result a cycle); values
bit-exact against real Halide and the CPU path."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

SIZE, TILE = (18, 16), (9, 8)


def _pipeline(m, kind):
    x, y = m.Var("x"), m.Var("y")
    if m is lp:
        inp = lp.ImageParam(lp.UInt8, 2, "input")
        r = lp.RDom(0, 3, 0, 3)
    else:
        inp = hl.ImageParam(hl.UInt(8), 2, "input")
        r = hl.RDom([(0, 3), (0, 3)])
    hw, g, out = m.Func("hw_input"), m.Func("g"), m.Func("output")
    hw[x, y] = m.i16(inp[x, y])
    window = hw[x + r.x, y + r.y]
    if kind == "max - min":
        g[x, y] = m.maximum(window) - m.minimum(window)
    elif kind == "sum":
        g[x, y] = m.sum(window * m.i16(r.x + 1)) >> 2
    else:  # argmax: the position of the window's first maximum
        am = m.argmax(window)
        g[x, y] = m.i16(am[0] + 3 * am[1])
    out[x, y] = m.u8(m.clamp(g[x, y], 0, 255))
    if m is lp:
        xo, yo, xi, yi = (lp.Var(n) for n in ("xo", "yo", "xi", "yi"))
        out.tile(x, y, xo, yo, xi, yi, *TILE).hw_accelerate(xi, xo)
        hw.compute_at(out, xo)
        g.compute_at(out, xo)
    return out, inp


@pytest.mark.parametrize("kind", ["max - min", "sum", "argmax"])
def test_inline_reductions_inside_the_accelerator_match_halide(kind):
    img = np.random.default_rng(12).integers(0, 256, (SIZE[1] + 2, SIZE[0] + 2), dtype=np.uint8)
    out, _ = _pipeline(lp, kind)
    hout, hin = _pipeline(hl, kind)
    hin.set(hl.Buffer(img))
    want = np.asarray(hout.realize(list(SIZE)))
    d = build_design(out, TILE)
    assert d.stages["g"].red_extents == ()  # computed in space: no reduction loop in time
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, SIZE), want)
