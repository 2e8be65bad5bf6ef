"""RDom's name as its last positional argument, as Halide's Python bindings take it (``RDom([(0, 3)], "r")``):
it was read as a third bound pair and refused with a message about bounds."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, evaluate, u16


def test_a_positional_name_names_the_rdom_and_sums_as_halide():
    hl = pytest.importorskip("halide")
    img = np.random.default_rng(0).integers(0, 256, (5, 6), dtype=np.uint8)
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    r = RDom([(0, 3), (0, 2)], "r")
    assert r.name == "r" and [v.extent for v in r.vars] == [3, 2]
    f = Func("f")
    f[x, y] = u16(0)
    f[x, y] += u16(inp[x + r.x, y + r.y])
    got = evaluate(f, {"input": img}, (4, 3))

    hx, hy = hl.Var("x"), hl.Var("y")
    hin = hl.ImageParam(hl.UInt(8), 2, "input")
    hr = hl.RDom([(0, 3), (0, 2)], "r")
    hf = hl.Func("f")
    hf[hx, hy] = hl.u16(0)
    hf[hx, hy] += hl.u16(hin[hx + hr.x, hy + hr.y])
    hin.set(hl.Buffer(img))
    want = np.asarray(hf.realize([4, 3]))  # (h, w), as loom
    np.testing.assert_array_equal(got, want)


def test_flat_bounds_take_a_positional_name_too_and_two_names_are_refused():
    assert RDom(0, 3, 0, 4, "win").name == "win"
    with pytest.raises(LoomError, match=r"RDom 'a'.*two names, 'a' and 'b'"):
        RDom([(0, 3)], "a", name="b")
