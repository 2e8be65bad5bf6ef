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


SHIFTS = {"u8 << i32(1)": (lambda p, q, m: p << m.i32(1)), "u8 << u16(9)": (lambda p, q, m: p << m.u16(9)),
          "i16 << u8": (lambda p, q, m: q << (p & 7)),  # amounts below the width (beyond: undefined in Halide)
          "u8 >> i16": (lambda p, q, m: p >> m.i16(q & m.i16(7))),
          "i16 >> 2": (lambda p, q, m: q >> 2)}


@pytest.mark.parametrize("name", SHIFTS)
def test_shifts_of_mixed_types_take_the_left_signedness_at_the_wider_width(name):
    a = np.array([0, 1, 200, 255, 3, 9], np.uint8)
    b = np.array([-300, 7, 1000, -1, 5, 3], np.int16)
    x = lp.Var("x")
    pa, pb = lp.ImageParam(lp.UInt8, 1, "a"), lp.ImageParam(lp.Int16, 1, "b")
    f = lp.Func("f")
    f[x] = SHIFTS[name](pa[x], pb[x], lp)
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = SHIFTS[name](hl.Buffer(a)[hx], hl.Buffer(b)[hx], hl)
    want = np.asarray(g.realize([6]))
    got = lp.evaluate(f, {"a": a, "b": b}, (6,))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a, "b": b}, (6,)), want)


def test_a_float_literal_beside_bf16_is_f32_and_bool_literals_stay_bool():
    v = np.array([1.0078125, 1.01, 2.0, 100.25], np.float32)
    a = np.array([0, 1, 200, 255], np.uint8)
    x = lp.Var("x")
    pv, pa = lp.ImageParam(lp.Float32, 1, "v"), lp.ImageParam(lp.UInt8, 1, "a")
    f, g = lp.Func("f"), lp.Func("g")
    f[x] = lp.bf16(pv[x]) + 1.1
    g[x] = (pa[x] > 3) | 1
    hx = hl.Var("x")
    hf, hg = hl.Func("hf"), hl.Func("hg")
    hf[hx] = hl.cast(hl.BFloat(16), hl.Buffer(v)[hx]) + hl.f32(1.1)
    hg[hx] = (hl.Buffer(a)[hx] > 3) | 1
    for lf, hfn, inputs in ((f, hf, {"v": v}), (g, hg, {"a": a})):
        want = np.asarray(hfn.realize([4]))
        got = lp.evaluate(lf, inputs, (4,))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(run_cpu(lf, inputs, (4,)), want)
    with pytest.raises(LoomError, match="arithmetic '\\+' on bool values"):
        lp.Func("h")[x] = (pa[x] > 3) + 1  # Halide's 1-bit sum wraps; loom asks for the cast


def test_a_u8_value_indexes_an_inlined_func_as_i32():
    """lut[v] read at a u8 value: the index is cast to i32 as Halide does (the inlined body computed v * 3 - 300
    in u8 on the CPU path once: a verifier error)."""
    a = np.array([0, 1, 200, 255], np.uint8)
    x, v = lp.Var("x"), lp.Var("v")
    inp = lp.ImageParam(lp.UInt8, 1, "a")
    lut, f = lp.Func("lut"), lp.Func("f")
    lut[v] = v * 3 - 300
    f[x] = lut[inp[x]] + lut[lp.u16(inp[x]) + 1]
    hx, hv = hl.Var("x"), hl.Var("v")
    hlut, g = hl.Func("hlut"), hl.Func("g")
    hlut[hv] = hv * 3 - 300
    hb = hl.Buffer(a)
    g[hx] = hlut[hb[hx]] + hlut[hl.u16(hb[hx]) + 1]
    want = np.asarray(g.realize([4]))
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a}, (4,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a}, (4,)), want)


def test_constant_exterior_takes_a_value_of_another_type_or_a_param():
    a = np.arange(4, dtype=np.uint8) + 10
    x = lp.Var("x")
    inp = lp.ImageParam(lp.UInt8, 1, "a")
    p = lp.Param(lp.UInt8, "p", value=3)
    f = lp.Func("f")
    f[x] = (lp.BoundaryConditions.constant_exterior(inp, lp.i16(-5))[x - 2]
            + lp.BoundaryConditions.constant_exterior(inp, p)[x - 3])
    hx = hl.Var("x")
    hp = hl.Param(hl.UInt(8), "p")
    hp.set(9)
    hb = hl.Buffer(a)
    g = hl.Func("g")
    g[hx] = (hl.BoundaryConditions.constant_exterior(hb, hl.i16(-5))[hx - 2]
             + hl.BoundaryConditions.constant_exterior(hb, hp)[hx - 3])
    want = np.asarray(g.realize([8]))
    np.testing.assert_array_equal(lp.evaluate(f, {"a": a, "p": 9}, (8,)), want)
    np.testing.assert_array_equal(run_cpu(f, {"a": a, "p": 9}, (8,)), want)
    with pytest.raises(LoomError, match="exterior value .* must not depend on coordinates"):
        lp.BoundaryConditions.constant_exterior(inp, lp.u8(x))
