"""Definitions, updates, boundary conditions and bounds inference, against numpy."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import (Func, ImageParam, Int32, RDom, UInt8, Var, clamp, constant_exterior,
                                     evaluate, i32, repeat_edge, u16, u32)
from loom.frontends.pipeline.bounds import infer_bounds
from loom.frontends.pipeline.graph import FuncGraph

x, y = Var("x"), Var("y")


def test_repeat_edge_matches_numpy_edge_padding():
    inp = ImageParam(UInt8, 2, "input")
    padded = repeat_edge(inp)
    out = Func("out")
    out[x, y] = padded[x - 2, y - 1]
    img = np.random.default_rng(1).integers(0, 256, (5, 7), dtype=np.uint8)
    got = evaluate(out, {"input": img}, (11, 8))
    want = np.pad(img, ((1, 2), (2, 2)), mode="edge")[:8, :11]
    np.testing.assert_array_equal(got, want)


def test_constant_exterior_matches_numpy_constant_padding():
    inp = ImageParam(UInt8, 2, "input")
    padded = constant_exterior(inp, 9)
    out = Func("out")
    r = RDom(-1, 3, -1, 3)
    out[x, y] = u16(0)
    out[x, y] += u16(padded[x + r.x, y + r.y])
    img = np.random.default_rng(2).integers(0, 256, (6, 4), dtype=np.uint8)
    got = evaluate(out, {"input": img}, (4, 6))
    p = np.pad(img.astype(np.uint16), 1, constant_values=9)
    want = sum(p[dy:dy + 6, dx:dx + 4] for dy in range(3) for dx in range(3))
    np.testing.assert_array_equal(got, want)


def test_bounds_inference_gives_stencil_halos():
    inp = ImageParam(UInt8, 2, "input")
    a, b = Func("a"), Func("b")
    a[x, y] = inp[x - 1, y] + inp[x + 2, y + 3]
    b[x, y] = a[x, y * 2] + a[x + 1, y]
    pipe = FuncGraph(b)
    regions = infer_bounds(pipe, [(0, 9), (0, 4)])
    assert regions[id(a)] == [(0, 10), (0, 8)]
    assert regions[id(inp)] == [(-1, 12), (0, 11)]


def test_input_too_small_is_reported():
    inp = ImageParam(UInt8, 2, "input")
    f = Func("blur")
    f[x, y] = inp[x, y] + inp[x + 2, y + 2]
    with pytest.raises(LoomError, match="input.*dimension 0.*\\[0, 9\\].*extent 8"):
        evaluate(f, {"input": np.zeros((8, 8), np.uint8)}, (8, 8))


def test_general_updates_run_in_order():
    f = Func("table")
    f[x] = i32(x) * 10
    f[2] = 7
    f[x] = f[x] + 1
    f[0] = f[0] * 3
    got = evaluate(f, {}, (4,))
    assert got.tolist() == [3, 11, 8, 31]


def test_histogram_and_prefix_sum_on_the_cpu_reference():
    inp = ImageParam(UInt8, 1, "input")
    r = RDom(0, 50)
    hist = Func("hist")
    hist[x] = u32(0)
    hist[inp[r.x]] += u32(1)
    img = np.random.default_rng(3).integers(0, 8, 50, dtype=np.uint8)
    got = evaluate(hist, {"input": img}, (8,))
    np.testing.assert_array_equal(got, np.bincount(img, minlength=256)[:8])

    scan = Func("scan")
    r2 = RDom(1, 49)
    scan[x] = u32(inp[x])
    scan[r2.x] = scan[r2.x - 1] + u32(inp[r2.x])
    np.testing.assert_array_equal(evaluate(scan, {"input": img}, (50,)), np.cumsum(img, dtype=np.uint32))


def test_lookup_table_bounds_follow_value_ranges():
    inp = ImageParam(UInt8, 2, "input")
    lut = Func("lut")
    i = Var("i")
    lut[i] = u16(i) * u16(i)
    out = Func("out")
    out[x, y] = lut[inp[x, y]]
    img = np.random.default_rng(4).integers(0, 256, (4, 5), dtype=np.uint8)
    np.testing.assert_array_equal(evaluate(out, {"input": img}, (5, 4)),
                                  (img.astype(np.uint32) ** 2).astype(np.uint16))
    pipe = FuncGraph(out)
    assert infer_bounds(pipe, [(0, 4), (0, 3)])[id(lut)] == [(0, 255)]


def test_unbounded_data_dependent_index_needs_a_bound():
    inp = ImageParam(Int32, 1, "input")
    table = Func("table")
    table[x] = x
    out = Func("out")
    out[x] = table[inp[x]]
    with pytest.raises(LoomError, match="table.*bound"):
        evaluate(out, {"input": np.zeros(3, np.int32)}, (3,))
    table.bound(x, 0, 4)
    with pytest.raises(LoomError, match="table.*bound\\(x, 0, 4\\) does not cover"):
        evaluate(out, {"input": np.zeros(3, np.int32)}, (3,))
    out2 = Func("out2")
    out2[x] = table[clamp(inp[x], 0, 3)]
    got = evaluate(out2, {"input": np.array([-5, 2, 9], np.int32)}, (3,))
    assert got.tolist() == [0, 2, 3]


def test_definition_errors_name_the_func():
    inp = ImageParam(UInt8, 2, "input")
    f = Func("first")
    with pytest.raises(LoomError, match="first.*pure"):
        f[x + 1, y] = inp[x, y]
    g = Func("unbound")
    z = Var("z")
    with pytest.raises(LoomError, match="unbound.*Var 'z'"):
        g[x, y] = inp[x, z]
    h = Func("undefined")  # h[x, y] + 1 alone may start h[x, y] += 1 (Halide's implicit pure definition)
    with pytest.raises(LoomError, match="undefined.*before it has a pure definition"):
        Func("reader")[x, y] = h[x, y] + 1
    with pytest.raises(LoomError, match="undefined.*before it has a pure definition"):
        Func("reader2")[x, y] = inp[x, y] * (h[x, y] + 1)
    with pytest.raises(LoomError, match="undefined.*before it has a pure definition"):
        Func("reader3")[x, y] = 1 + h[x, y]
    k = Func("arity")
    k[x, y] = inp[x, y]
    with pytest.raises(LoomError, match="arity.*3 arguments"):
        k[x, y, 0]
    with pytest.raises(LoomError, match="arity.*self-references"):
        k[x, y] = k[x + 1, y]
        evaluate(k, {"input": np.zeros((3, 3), np.uint8)}, (2, 2))


def test_update_with_var_inside_expression_rejected():
    f = Func("shifted")
    f[x] = 0
    with pytest.raises(LoomError, match="shifted.*must appear bare"):
        f[x + 1] = 5
