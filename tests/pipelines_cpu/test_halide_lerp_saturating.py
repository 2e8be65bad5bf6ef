"""``lerp``, ``saturating_add`` and ``saturating_sub``, bit-exact against Halide on the reference evaluator and the
CPU path for every value type and weight type (seeded random values with the types' extremes), on the
accelerator's value simulation for a u8 lerp, and refused where Halide refuses them."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import simulate

N = 256
TYPES = {"u8": (lp.UInt8, np.uint8, hl.UInt(8)), "u16": (lp.UInt16, np.uint16, hl.UInt(16)),
         "u32": (lp.UInt32, np.uint32, hl.UInt(32)), "i8": (lp.Int8, np.int8, hl.Int(8)),
         "i16": (lp.Int16, np.int16, hl.Int(16)), "i32": (lp.Int32, np.int32, hl.Int(32)),
         "i64": (lp.Int64, np.int64, hl.Int(64)), "u64": (lp.UInt64, np.uint64, hl.UInt(64)),
         "f32": (lp.Float32, np.float32, hl.Float(32)), "f64": (lp.Float64, np.float64, hl.Float(64))}


def _data(kind, seed, weight=False):
    """Seeded values with the type's extremes first; a float weight lies in [0, 1] (0, 1 and 0.5 first)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(TYPES[kind][1])
    if dt.kind == "f":
        if weight:
            v = rng.random(N).astype(dt)
            v[:5] = [0.0, 1.0, 0.5, 0.25, np.nextafter(dt.type(1), dt.type(0))]
        else:
            v = (rng.standard_normal(N) * 10.0 ** rng.integers(-3, 6, N)).astype(dt)
            v[:4] = [0.0, -0.0, 1e30, -3.5]
        return v
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    v[:6] = [info.min, info.max, 0, info.max, info.min, 1]
    return v


def _hbuf(a):
    if a.dtype != np.uint64:  # Halide's Python bindings take no uint64 array: fill a u64 buffer
        return hl.Buffer(a)
    b = hl.Buffer(hl.UInt(64), [len(a)])
    np.asarray(b)[...] = a
    return b


def _compare(build, arrays: dict):
    x = lp.Var("x")
    params = [lp.ImageParam(TYPES[k][0], 1, name) for name, (k, _) in arrays.items()]
    f = lp.Func("f")
    f[x] = build(lp, *(p[x] for p in params))
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = build(hl, *(_hbuf(a)[hx] for _, a in arrays.values()))
    want = np.asarray(g.realize([N]))
    inputs = {name: a for name, (_, a) in arrays.items()}
    got = lp.evaluate(f, inputs, (N,))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(run_cpu(f, inputs, (N,)), want)
    return want


@pytest.mark.parametrize("weight", ["f32", "u8", "u16", "u32"])
@pytest.mark.parametrize("kind", ["u8", "u16", "u32", "i8", "i16", "i32", "f32", "f64"])
def test_lerp_matches_halide(kind, weight):
    """Integers: Halide's fixed-point rounding (the weight rescaled to the values' width); floats:
    zero + (one - zero) * w rounded once, which Halide's LLVM code computes (a fused multiply-add)."""
    _compare(lambda m, a, b, w: m.lerp(a, b, w),
             {"a": (kind, _data(kind, 1)), "b": (kind, _data(kind, 2)), "w": (weight, _data(weight, 3, True))})


@pytest.mark.parametrize("kind", ["u8", "i16", "u32"])
def test_lerp_with_constant_weights_and_an_integer_literal_value(kind):
    """(Float values with a constant weight are left out: LLVM then fuses Halide's zero * (1 - w) + one * w
    another way, whichever its constant folding leaves.)"""
    a, b = _data(kind, 4), _data(kind, 5)
    for w in (0.0, 0.5, 1.0, 0.25):
        _compare(lambda m, u, v: m.lerp(u, v, w), {"a": (kind, a), "b": (kind, b)})
    _compare(lambda m, u, v: m.lerp(0, v, m.u8(u & 0x7F)), {"a": (kind, a), "b": (kind, b)})


def test_a_u8_lerp_on_the_accelerator_matches_halide():
    """A cross-fade of two u8 images by a per-column u8 weight, through the value simulation."""
    rng = np.random.default_rng(6)
    img = rng.integers(0, 256, (4, 9), dtype=np.uint8)
    x, y = lp.Var("x"), lp.Var("y")
    a = lp.ImageParam(lp.UInt8, 2, "a")
    hw, out = lp.Func("hw_a"), lp.Func("output")
    hw[x, y] = a[x, y]
    out[x, y] = lp.lerp(hw[x, y], hw[x + 1, y], lp.u8(x * 37))
    stream_through_accelerator(out, (8, 4), buffered=[hw])
    hx, hy = hl.Var("x"), hl.Var("y")
    hb = hl.Buffer(img)
    hf = hl.Func("f")
    hf[hx, hy] = hl.lerp(hb[hx, hy], hb[hx + 1, hy], hl.u8(hx * 37))
    np.testing.assert_array_equal(simulate(out, {"a": img}, (8, 4)), np.asarray(hf.realize([8, 4])))


@pytest.mark.parametrize("op", ["saturating_add", "saturating_sub"])
@pytest.mark.parametrize("kind", ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"])
def test_saturating_add_and_sub_match_halide(kind, op):
    a, b = _data(kind, 7), _data(kind, 8)
    want = _compare(lambda m, u, v: getattr(m, op)(u, v), {"a": (kind, a), "b": (kind, b)})
    info = np.iinfo(want.dtype)
    assert (want == (info.max if op == "saturating_add" else info.min)).any()  # saturated
    if kind[0] == "i":
        assert (want == info.min).any() and (want == info.max).any()  # at both ends


def test_saturating_add_and_sub_of_bools_match_halide():
    a, b = _data("u8", 13), _data("u8", 14)
    _compare(lambda m, u, v: m.select(m.saturating_add(u > 100, v > 200), u, v) +
             m.select(m.saturating_sub(u > 100, v > 200), u, v), {"a": ("u8", a), "b": ("u8", b)})


@pytest.mark.parametrize("ka, kb", [("u8", "i16"), ("u32", "i8"), ("u64", "i64"), ("i8", "u16")])
def test_saturating_add_and_sub_of_mixed_types_promote_as_halide(ka, kb):
    _compare(lambda m, u, v: m.saturating_add(u, v) + m.saturating_sub(v, u),
             {"a": (ka, _data(ka, 9)), "b": (kb, _data(kb, 10))})
    # a Python int is an i32 constant here (Halide's bindings), so u8 - 3 saturates in i32
    _compare(lambda m, u, v: m.saturating_sub(u, 3) + m.saturating_add(v, 2**40),
             {"a": (ka, _data(ka, 11)), "b": (kb, _data(kb, 12))})


BAD_LERPS = {
    "values of two types": (lambda m, u8, u16, i16, i64, f32: m.lerp(u8, u16, f32), "lerp between u8 .* and u16"),
    "a signed weight": (lambda m, u8, u16, i16, i64, f32: m.lerp(u8, u8, i16), "lerp weight .* is i16"),
    "an i32 weight": (lambda m, u8, u16, i16, i64, f32: m.lerp(u8, u8, 1), "lerp weight .* is i32"),
    "64-bit integers": (lambda m, u8, u16, i16, i64, f32: m.lerp(i64, i64, f32), "64-bit integers"),
    "a constant weight beyond 1": (lambda m, u8, u16, i16, i64, f32: m.lerp(u8, u8, 2.0), "not in \\[0.0, 1.0\\]"),
    "a float literal beside u8": (lambda m, u8, u16, i16, i64, f32: m.lerp(u8, 0.5, f32), "lerp between u8"),
}


@pytest.mark.parametrize("name", BAD_LERPS)
def test_a_lerp_halide_refuses_is_a_loom_error_naming_the_func(name):
    build, message = BAD_LERPS[name]
    hx = hl.Var("x")
    hargs = [hl.cast(t, hx) for t in (hl.UInt(8), hl.UInt(16), hl.Int(16), hl.Int(64), hl.Float(32))]
    with pytest.raises(hl.HalideError):
        build(hl, *hargs)
    x = lp.Var("x")
    largs = [lp.cast(t, x) for t in (lp.UInt8, lp.UInt16, lp.Int16, lp.Int64, lp.Float32)]
    f = lp.Func("blend")
    with pytest.raises(LoomError, match=f"Func 'blend'.*{message}"):
        f[x] = build(lp, *largs)


@pytest.mark.parametrize("op", ["saturating_add", "saturating_sub"])
def test_saturating_arithmetic_on_floats_is_refused_as_halide_fails_on_it(op):
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = getattr(hl, op)(hl.f32(hx), hl.f32(hx))
    with pytest.raises(hl.HalideError):
        g.realize([4])
    x = lp.Var("x")
    with pytest.raises(LoomError, match=f"Func 'f'.*{op} of f32 values"):
        lp.Func("f")[x] = getattr(lp, op)(lp.f32(x), 1.5)
