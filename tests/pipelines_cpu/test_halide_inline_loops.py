"""unroll / vectorize / parallel on a Func scheduled inline: real Halide refuses them ("Cannot vectorize
dimension x.v0 of function f because the function is scheduled inline"), and so does loom, naming the Func;
split on an inlined Func Halide accepts (with a warning) and loom too. Checked against the halide module."""

import numpy as np
import pytest

from tests.pipelines_cpu.halide_oracle import hl

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16
from loom.frontends.pipeline.cpu_lower import lower_pipeline

x, y = Var("x"), Var("y")
hx, hy = hl.Var("x"), hl.Var("y")

# (loom call, Halide call, what loom's message shows, Halide's verb)
DIRECTIVES = [
    (lambda f: f.vectorize(x, 4), lambda f: f.vectorize(hx, 4), r"f\.vectorize\(x, 4\): cannot vectorize", "vectorize"),
    (lambda f: f.vectorize(x), lambda f: f.vectorize(hx), r"f\.vectorize\(x\): cannot vectorize", "vectorize"),
    (lambda f: f.unroll(x, 2), lambda f: f.unroll(hx, 2), r"f\.unroll\(x, 2\): cannot unroll", "unroll"),
    (lambda f: f.parallel(y), lambda f: f.parallel(hy), r"f\.parallel\(y\): cannot parallelize", "parallelize"),
]


def loom_pipeline():
    inp = ImageParam(UInt8, 2, "input")
    f, g = Func("f"), Func("g")
    f[x, y] = u16(inp[x, y]) * 2
    g[x, y] = f[x, y] + 1
    return f, g


def halide_pipeline(img):
    f, g = hl.Func("f"), hl.Func("g")
    f[hx, hy] = hl.u16(hl.Buffer(img)[hx, hy]) * 2
    g[hx, hy] = f[hx, hy] + 1
    return f, g


@pytest.mark.parametrize("loom_call, halide_call, shown, verb", DIRECTIVES)
def test_loop_directive_on_an_inlined_func_is_refused_as_halide_does(loom_call, halide_call, shown, verb):
    img = np.zeros((8, 8), dtype=np.uint8)
    f, g = halide_pipeline(img)
    halide_call(f)
    with pytest.raises(Exception, match=f"Cannot {verb} dimension .* of function f(\\$\\d+)? because the function is "
                                        "scheduled inline"):
        g.realize([8, 8])
    f, g = loom_pipeline()
    loom_call(f)
    with pytest.raises(LoomError, match=f"test_halide_inline_loops.py:\\d+ Func 'f': {shown} dimension [xy] of "
                                        "function 'f' because the function is scheduled inline.*f.compute_root"):
        lower_pipeline(g, {"input": (8, 8)}, (8, 8))
    f.compute_root()  # computed: the directive now has loops to act on, in Halide as in loom
    lower_pipeline(g, {"input": (8, 8)}, (8, 8))


def test_split_of_an_inlined_func_is_accepted_as_halide_does():
    img = np.arange(64, dtype=np.uint8).reshape(8, 8)
    f, g = halide_pipeline(img)
    f.split(hx, hl.Var("xo"), hl.Var("xi"), 4)
    expected = np.asarray(g.realize([8, 8]))
    np.testing.assert_array_equal(expected, img.astype(np.uint16) * 2 + 1)  # Halide ignores it
    f, g = loom_pipeline()
    f.split(x, Var("xo"), Var("xi"), 4)
    lower_pipeline(g, {"input": (8, 8)}, (8, 8))
