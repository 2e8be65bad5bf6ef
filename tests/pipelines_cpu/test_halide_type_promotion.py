"""Mixed-type operators follow Halide's match_types, bit-exact against Halide (values and result type):
a float beats an integer, the wider of one signedness wins, signed with unsigned gives the signed type of
the wider width; float literals beside integers are f32; Vars are i32."""

import itertools

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

N = 32
TYPES = {"u8": (lp.UInt8, np.uint8), "u16": (lp.UInt16, np.uint16), "u32": (lp.UInt32, np.uint32),
         "i16": (lp.Int16, np.int16), "i32": (lp.Int32, np.int32), "f32": (lp.Float32, np.float32)}
OPS = {"+": lambda u, v, m: u + v, "-": lambda u, v, m: u - v, "*": lambda u, v, m: u * v,
       "/": lambda u, v, m: u / v, "min": lambda u, v, m: m.min(u, v), "<": lambda u, v, m: u < v}


def _data(name, seed):
    rng = np.random.default_rng(seed)
    dt = TYPES[name][1]
    if np.dtype(dt).kind == "f":
        return (rng.standard_normal(N) * 100).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)


def _both(ka, kb, op):
    a, b = _data(ka, 1), _data(kb, 2)
    x = lp.Var("x")
    pa, pb = lp.ImageParam(TYPES[ka][0], 1, "a"), lp.ImageParam(TYPES[kb][0], 1, "b")
    f = lp.Func("f")
    f[x] = OPS[op](pa[x], pb[x], lp)
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = OPS[op](hl.Buffer(a)[hx], hl.Buffer(b)[hx], hl)
    return f, {"a": a, "b": b}, np.asarray(g.realize([N]))


@pytest.mark.parametrize("ka, kb", [p for p in itertools.permutations(TYPES, 2)])
def test_every_pair_of_types_matches_halide_on_the_evaluator(ka, kb):
    for op in OPS:
        f, inputs, want = _both(ka, kb, op)
        got = lp.evaluate(f, inputs, (N,))
        assert got.dtype == want.dtype, (op, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want, err_msg=op)


@pytest.mark.parametrize("ka, kb, op", [("u8", "i16", "+"), ("u32", "i16", "*"), ("i16", "u16", "/"),
                                        ("u8", "f32", "-"), ("i32", "u32", "min"), ("u16", "i32", "<")])
def test_mixed_pairs_match_halide_on_the_cpu_path(ka, kb, op):
    f, inputs, want = _both(ka, kb, op)
    np.testing.assert_array_equal(run_cpu(f, inputs, (N,)), want)


def test_vars_and_float_literals_promote_as_in_halide():
    a = _data("u8", 3)
    x = lp.Var("x")
    pa = lp.ImageParam(lp.UInt8, 1, "a")
    f = lp.Func("f")
    f[x] = lp.select(pa[x] > 100.5, pa[x] * 0.5, lp.f32(pa[x] + x))
    hx = hl.Var("x")
    hb = hl.Buffer(a)
    g = hl.Func("g")
    g[hx] = hl.select(hb[hx] > hl.f32(100.5), hb[hx] * hl.f32(0.5), hl.f32(hb[hx] + hx))
    want = np.asarray(g.realize([N]))
    assert want.dtype == np.float32
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a}, (N,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a}, (N,)), want)


def test_a_bool_is_a_one_bit_unsigned_integer():
    a = _data("u8", 4)
    x = lp.Var("x")
    pa = lp.ImageParam(lp.UInt8, 1, "a")
    f = lp.Func("f")
    f[x] = (pa[x] > 3) + lp.i16(pa[x])
    hx = hl.Var("x")
    hb = hl.Buffer(a)
    g = hl.Func("g")
    g[hx] = (hb[hx] > 3) + hl.i16(hb[hx])
    want = np.asarray(g.realize([N]))
    assert want.dtype == np.int16
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a}, (N,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a}, (N,)), want)


def test_what_halide_refuses_too_is_refused():
    x = lp.Var("x")
    pa = lp.ImageParam(lp.UInt8, 1, "a")
    with pytest.raises(LoomError, match="300 does not fit in u8"):
        lp.Func("f")[x] = pa[x] * 300
    with pytest.raises(LoomError, match="select branches differ in type"):
        lp.Func("g")[x] = lp.select(pa[x] > 3, pa[x], lp.i16(pa[x]))
