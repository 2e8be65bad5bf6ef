"""Float math functions inside an accelerator stage: the value simulation evaluates math.sqrt, roundeven, ceil,
exp, log, sin, cos, tan, tanh, powf, atan2 itself (from the kernel IR), equal to the reference evaluator, and to
real Halide for the correctly rounded ones (sqrt, floor, ceil, round, trunc)."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.streaming import build_design, simulate

IMG = np.random.default_rng(11).integers(0, 256, (4, 8), dtype=np.uint8)
# name -> (loom form, Halide form or None when Halide uses its own approximation)
OPS = {
    "sqrt": (lambda v: lp.sqrt(v) * 10, lambda v: hl.sqrt(v) * 10),
    "round": (lambda v: lp.round(v * 0.5), lambda v: hl.round(v * 0.5)),
    "ceil": (lambda v: lp.ceil(v * 0.3), lambda v: hl.ceil(v * hl.f32(0.3))),
    "floor": (lambda v: lp.floor(v * 0.3), lambda v: hl.floor(v * hl.f32(0.3))),
    "trunc": (lambda v: lp.trunc(v * 0.3 - 30), lambda v: hl.trunc(v * hl.f32(0.3) - 30)),
    "exp": (lambda v: lp.exp(v / 64.0), None),
    "log": (lambda v: lp.log(v + 1) * 40, None),
    "sin": (lambda v: lp.sin(v) * 100 + 100, None),
    "cos": (lambda v: lp.cos(v) * 100 + 100, None),
    "tan": (lambda v: lp.tan(v / 200.0) * 100, None),
    "tanh": (lambda v: lp.tanh(v / 64.0) * 255, None),
    "pow": (lambda v: lp.pow(v / 255.0, 0.5) * 255, None),
    "atan2": (lambda v: lp.atan2(v, 100.0) * 100, None),
}


@pytest.mark.parametrize("name", OPS)
def test_math_function_in_an_accelerator_stage(name):
    loom_form, halide_form = OPS[name]
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "input")
    hw, out = lp.Func("hw_input"), lp.Func("output")
    hw[x, y] = lp.f32(inp[x, y])
    out[x, y] = lp.saturating_cast(lp.UInt8, loom_form(hw[x, y]) + hw[x + 1, y])
    stream_through_accelerator(out, (4, 2), buffered=[hw])
    got = simulate(out, {"input": IMG}, (7, 4), design=build_design(out, (4, 2)))
    np.testing.assert_array_equal(got, lp.evaluate(out, {"input": IMG}, (7, 4)))
    if halide_form is not None:
        hx, hy = hl.Var("x"), hl.Var("y")
        b = hl.Buffer(IMG)
        hf = hl.Func("output")
        v = hl.cast(hl.Float(32), b[hx, hy])
        # strict_float: without it Halide may fuse v * 0.3 - 30 into an fma (docs/pipelines.md)
        hf[hx, hy] = hl.saturating_cast(hl.UInt(8), hl.strict_float(halide_form(v) + hl.cast(hl.Float(32),
                                                                                            b[hx + 1, hy])))
        np.testing.assert_array_equal(got, np.asarray(hf.realize([7, 4])))
