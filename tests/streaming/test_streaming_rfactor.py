"""``rfactor`` on the streaming path: a 3 x 3 sum split into per-row partial sums, the intermediate inlined into
the stage's kernel or a stage of its own, scheduled by the RVars' own names (as in Halide). Values against numpy
and the CPU path; the refusal of an intermediate left rolled names the RVar as the user wrote it."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u8, u16
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

x, y, xo, yo, xi, yi, v = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi", "v"))
TILE, SIZE = (8, 4), (16, 8)


def conv3x3(intermediate):
    """output = (sum of the 3 x 3 window) >> 4, the sum factored by rows (r.y -> v)."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    r = RDom(0, 3, 0, 3, name="r")
    conv = Func("conv")
    conv[x, y] = u16(0)
    conv[x, y] = conv[x, y] + hw[x + r.x, y + r.y]
    out = Func("output")
    out[x, y] = u8(conv[x, y] >> 4)
    out.tile(x, y, xo, yo, xi, yi, *TILE).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    conv.compute_at(out, xo)
    intm = conv.update(0).rfactor(r.y, v)
    conv.update(0).unroll(r.y)
    if intermediate == "stage":  # its own buffer: the three row sums of a pixel computed in one step
        intm.compute_at(out, xo)
        intm.unroll(v)
        intm.update(0).unroll(v)
    if intermediate != "rolled":
        intm.update(0).unroll(r.x)
    return out, intm


def np_conv3x3(img, w, h):
    p = img.astype(np.uint16)
    return (sum(p[j:j + h, i:i + w] for i in range(3) for j in range(3)) >> 4).astype(np.uint8)


@pytest.mark.sanitize  # run_cpu runs generated C
@pytest.mark.parametrize("intermediate", ["inline", "stage"])
def test_factored_sum_streams_bit_exact(intermediate):
    out, intm = conv3x3(intermediate)
    d = build_design(out, TILE)
    assert ("conv_intm" in d.stages) == (intermediate == "stage")
    img = np.random.default_rng(5).integers(0, 256, (SIZE[1] + 2, SIZE[0] + 2), dtype=np.uint8)
    want = np_conv3x3(img, *SIZE)
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, SIZE), want)


def test_a_rolled_intermediate_is_refused_naming_its_rvar():
    out, _ = conv3x3("rolled")
    with pytest.raises(LoomError, match=r"Func 'conv_intm': reduction variable 'r.x' of update 0 is not unrolled.*"
                                        r"conv_intm.update\(0\).unroll\(r.x\)"):
        build_design(out, TILE)


def test_a_host_func_factored_streams_in_unchanged():
    """The host computes a row sum (factored by rfactor), which the accelerator reads as its input stream."""
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, 4, 0, 2, name="r")
    rows = Func("rows")
    rows[x, y] = u16(0)
    rows[x, y] = rows[x, y] + u16(inp[4 * x + r.x, 2 * y + r.y])
    rows.update(0).rfactor(r.y, v).compute_root()
    rows.compute_root()
    rows.stream_to_accelerator()
    out = Func("output")
    out[x, y] = u8((rows[x, y] + rows[x + 1, y]) >> 4)
    out.tile(x, y, xo, yo, xi, yi, *TILE).hw_accelerate(xi, xo)
    img = np.random.default_rng(6).integers(0, 256, (2 * SIZE[1], 4 * SIZE[0] + 4), dtype=np.uint8)
    p = img.astype(np.uint16)
    sums = p.reshape(SIZE[1], 2, SIZE[0] + 1, 4).sum(axis=(1, 3))
    want = ((sums[:, :SIZE[0]] + sums[:, 1:]) >> 4).astype(np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, SIZE), want)
