"""The types i8, i64, u64 and f64, bit-exact against Halide on the reference evaluator and the CPU path: mixed-type
promotion (values and result type), Python literals beside them, casts and saturating_cast between every pair of
types, ImageParam / Param / Buffer inputs of their dtypes, the compiled callable's dtype check, and the refusal of
64-bit values on the streaming accelerator."""

import itertools
import warnings

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import compile_cpu, run_cpu
from loom.streaming import simulate

N = 64
TYPES = {"u8": (lp.UInt8, np.uint8), "u16": (lp.UInt16, np.uint16), "u32": (lp.UInt32, np.uint32),
         "u64": (lp.UInt64, np.uint64), "i8": (lp.Int8, np.int8), "i16": (lp.Int16, np.int16),
         "i32": (lp.Int32, np.int32), "i64": (lp.Int64, np.int64), "f32": (lp.Float32, np.float32),
         "f64": (lp.Float64, np.float64)}
NEW = ("i8", "i64", "u64", "f64")
OPS = {"+": lambda u, v, m: u + v, "-": lambda u, v, m: u - v, "*": lambda u, v, m: u * v,
       "/": lambda u, v, m: u / v, "min": lambda u, v, m: m.min(u, v), "<": lambda u, v, m: u < v}


def _data(name, seed, n=N):
    """Seeded values of a type with its extremes first (floats: a wide range of magnitudes and signs)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(TYPES[name][1])
    if dt.kind == "f":
        v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 8, n)).astype(dt)
        v[:4] = [0.0, -0.0, 1.5, -2.5]
        return v
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    v[:4] = [info.min, info.max, 0, 1]
    return v


def _hbuf(a):
    """``hl.Buffer(a)``; Halide's Python bindings take no uint64 array, so a u64 buffer is filled instead."""
    if a.dtype != np.uint64:
        return hl.Buffer(a)
    b = hl.Buffer(hl.UInt(64), list(reversed(a.shape)))
    np.asarray(b)[...] = a
    return b


def _halide(build, *arrays, n=N):
    hx = hl.Var("x")
    g = hl.Func("g")
    g[hx] = build(*(_hbuf(a)[hx] for a in arrays), hx)
    return np.asarray(g.realize([n]))


def _check(f, inputs, want, n=N, cpu=True):
    got = lp.evaluate(f, inputs, (n,))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if cpu:
        out = run_cpu(f, inputs, (n,))
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)


PAIRS = [(a, b) for a, b in itertools.permutations(TYPES, 2) if a in NEW or b in NEW]


@pytest.mark.parametrize("ka, kb", PAIRS)
def test_mixed_operands_promote_as_halide(ka, kb):
    a, b = _data(ka, 1), _data(kb, 2)
    for op in OPS:
        x = lp.Var("x")
        pa, pb = lp.ImageParam(TYPES[ka][0], 1, "a"), lp.ImageParam(TYPES[kb][0], 1, "b")
        f = lp.Func("f")
        f[x] = OPS[op](pa[x], pb[x], lp)
        want = _halide(lambda u, v, hx: OPS[op](u, v, hl), a, b)
        _check(f, {"a": a, "b": b}, want, cpu=False)


@pytest.mark.parametrize("ka, kb", [("i8", "u8"), ("u64", "i64"), ("u64", "i8"), ("f64", "f32"), ("f64", "u64"),
                                    ("i64", "u32"), ("i8", "u16"), ("f32", "i64")])
def test_mixed_operands_on_the_cpu_path(ka, kb):
    a, b = _data(ka, 3), _data(kb, 4)
    x = lp.Var("x")
    pa, pb = lp.ImageParam(TYPES[ka][0], 1, "a"), lp.ImageParam(TYPES[kb][0], 1, "b")
    f = lp.Func("f")
    f[x] = lp.select(pa[x] < pb[x], pa[x] * pb[x] - pb[x], pa[x] / pb[x] + lp.min(pa[x], pb[x]))
    # strict_float: Halide would fuse u * v - v into an fma; loom rounds each operation (docs/pipelines.md)
    want = _halide(lambda u, v, hx: hl.strict_float(hl.select(u < v, u * v - v, u / v + hl.min(u, v))), a, b)
    _check(f, {"a": a, "b": b}, want)


@pytest.mark.parametrize("kind", ["i8", "i64", "u64"])
def test_integer_division_modulo_and_shifts_at_the_extremes(kind):
    """Euclidean division and modulo (x / 0 == 0), i64's minimum over -1, shifts of u64's top bit."""
    t, dt = TYPES[kind]
    info = np.iinfo(dt)
    ext = [info.min, info.max, 0, 1, info.max - 1] + ([-1, -7, info.min + 1] if info.min else [7, 2**(info.bits - 1)])
    a = np.array([p for p in ext for _ in ext], dtype=dt)
    b = np.array([q for _ in ext for q in ext], dtype=dt)
    n = len(a)
    x = lp.Var("x")
    pa, pb = lp.ImageParam(t, 1, "a"), lp.ImageParam(t, 1, "b")
    f = lp.Func("f")
    f[x] = (pa[x] / pb[x]) ^ (pa[x] % pb[x]) ^ (pa[x] >> (pb[x] & 15)) ^ (pa[x] << (pb[x] & 7))
    want = _halide(lambda u, v, hx: (u / v) ^ (u % v) ^ (u >> (v & 15)) ^ (u << (v & 7)), a, b, n=n)
    _check(f, {"a": a, "b": b}, want, n=n)


LITERALS = {"i64 + 3": (lambda u, m: m.i64(u) + 3), "u64 * 7": (lambda u, m: m.u64(u) * 7),
            "u64 + 2**40 is i64": (lambda u, m: m.u64(u) + 2**40), "x + 2**31 is i64": (lambda u, m: u + 2**31),
            "i8 - 128": (lambda u, m: m.i8(u) - (-128)), "u8 + 2**40 is i64": (lambda u, m: m.u8(u) + 2**40),
            "f64 * 0.1 is 0.1 rounded to f32": (lambda u, m: m.f64(u) * 0.1),
            "i64 * 0.5 is f32": (lambda u, m: m.i64(u) * 0.5), "x + 2**63 is f32": (lambda u, m: u + 2**63),
            "f64 + 2**63": (lambda u, m: m.f64(u) + 2**63),
            "u64(2**64 - 1)": (lambda u, m: m.u64(u) ^ m.u64(2**64 - 1))}


@pytest.mark.parametrize("name", LITERALS)
def test_python_literals_beside_the_new_types_take_halides_types(name):
    a = _data("i32", 5)
    x = lp.Var("x")
    p = lp.ImageParam(lp.Int32, 1, "a")
    f = lp.Func("f")
    f[x] = LITERALS[name](p[x], lp)
    with warnings.catch_warnings():  # Halide warns that a float literal beside an integer becomes f32
        warnings.simplefilter("ignore", RuntimeWarning)
        want = _halide(lambda u, hx: LITERALS[name](u, hl), a)
    _check(f, {"a": a}, want)


def test_an_integer_literal_that_does_not_fit_is_refused_as_halide_refuses_it():
    x = lp.Var("x")
    p = lp.ImageParam(lp.Int8, 1, "a")
    with pytest.raises(hl.HalideError, match="200"):
        hl.Func("h")[hl.Var("x")] = hl.cast(hl.Int(8), hl.Var("x")) + 200
    with pytest.raises(LoomError, match="200 does not fit in i8"):
        lp.Func("f")[x] = p[x] + 200
    with pytest.raises(LoomError, match="-1 does not fit in u64"):
        lp.Func("g")[x] = lp.u64(p[x]) + (-1)


HTYPES = {"u8": hl.UInt(8), "u16": hl.UInt(16), "u32": hl.UInt(32), "u64": hl.UInt(64), "i8": hl.Int(8),
          "i16": hl.Int(16), "i32": hl.Int(32), "i64": hl.Int(64), "f32": hl.Float(32), "f64": hl.Float(64)}
CAST_PAIRS = [(s, d) for s, d in itertools.product(TYPES, [*TYPES, "bf16"]) if s != d and (s in NEW or d in NEW)]


def _in_range_of(target, src, seed):
    """Values of float type ``src`` inside integer type ``target``'s range (beyond it Halide's casts are
    undefined), or any values."""
    v = _data(src, seed)
    if target == "bf16" or np.dtype(TYPES[target][1]).kind == "f":
        return v
    info = np.iinfo(TYPES[target][1])
    lo, hi = float(info.min), float(info.max)
    rng = np.random.default_rng(seed)
    v = (lo + (hi - lo) * rng.random(N)).astype(TYPES[src][1])
    v = np.clip(v, np.nextafter(np.array(lo, v.dtype), np.array(0, v.dtype)) if lo else 0,
                np.nextafter(np.array(hi, v.dtype), np.array(0, v.dtype)))
    v[:3] = [0, 1.75, -0.75 if lo else 0.75]
    return v


@pytest.mark.parametrize("src, dst", CAST_PAIRS)
def test_casts_between_the_new_and_the_other_types(src, dst):
    a = _in_range_of(dst, src, 6) if np.dtype(TYPES[src][1]).kind == "f" else _data(src, 6)
    lt = lp.BFloat16 if dst == "bf16" else TYPES[dst][0]
    ht = hl.BFloat(16) if dst == "bf16" else HTYPES[dst]
    x = lp.Var("x")
    p = lp.ImageParam(TYPES[src][0], 1, "a")
    f = lp.Func("f")
    f[x] = lp.f32(lp.cast(lt, p[x])) if dst == "bf16" else lp.cast(lt, p[x])  # bf16 is observed through f32
    want = _halide(lambda u, hx: hl.f32(hl.cast(ht, u)) if dst == "bf16" else hl.cast(ht, u), a)
    _check(f, {"a": a}, want, cpu=src in NEW and dst in ("u8", "i32", "f32", "u64", "bf16") or
           dst in NEW and src in ("u16", "i16", "f32", "u64"))


SAT_SOURCES = ("i8", "i64", "u64", "f64", "u8", "i32", "u32", "f32")
SAT_TARGETS = ("i8", "i64", "u64", "u8", "i16", "u32", "f32")


@pytest.mark.parametrize("dst", SAT_TARGETS)
@pytest.mark.parametrize("src", SAT_SOURCES)
def test_saturating_cast_to_and_from_the_new_types(src, dst):
    if src == dst or not (src in NEW or dst in NEW):
        pytest.skip("covered by test_halide_casts_and_select.py")
    a = _data(src, 7)
    if src == "f64":
        a[4:8] = [1e300, -1e300, 2.0**64, 2.0**63]
    x = lp.Var("x")
    p = lp.ImageParam(TYPES[src][0], 1, "a")
    f = lp.Func("f")
    f[x] = lp.saturating_cast(TYPES[dst][0], p[x])
    want = _halide(lambda u, hx: hl.saturating_cast(HTYPES[dst], u), a)
    _check(f, {"a": a}, want, cpu=src in ("f64", "i64", "u64") or dst in ("i8", "u64"))


@pytest.mark.parametrize("kind", NEW)
def test_a_2d_image_of_a_new_type_through_a_stencil_and_a_param(kind):
    t, dt = TYPES[kind]
    rng = np.random.default_rng(8)
    img = (rng.standard_normal((6, 11)) * 1e6).astype(dt) if kind == "f64" else \
        rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (6, 11), dtype=dt, endpoint=True)
    # an f64 gain f32 holds: Halide's Python Param.set passes an f64 value through f32
    gain = {"i8": -3, "i64": 2**40 + 3, "u64": 2**63 + 5, "f64": 3 * 2.0**-20}[kind]
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(t, 2, "inp")
    g = lp.Param(t, "gain")
    blur, out = lp.Func("blur"), lp.Func("out")
    blur[x, y] = inp[x + 1, y] * g + inp[x, y + 1]
    out[x, y] = blur[x, y] - blur[x + 1, y + 1]
    blur.compute_root()
    hx, hy = hl.Var("x"), hl.Var("y")
    hg = hl.Param(HTYPES[kind], "gain")
    hg.set(gain)
    hb = _hbuf(img)
    hblur, hout = hl.Func("blur"), hl.Func("out")
    hblur[hx, hy] = hl.strict_float(hb[hx + 1, hy] * hg + hb[hx, hy + 1])  # no fma, as loom
    hout[hx, hy] = hblur[hx, hy] - hblur[hx + 1, hy + 1]
    want = np.asarray(hout.realize([9, 4]))
    assert want.dtype == dt
    inputs = {"inp": img, "gain": gain}
    np.testing.assert_array_equal(lp.evaluate(out, inputs, (9, 4)), want)
    np.testing.assert_array_equal(run_cpu(out, inputs, (9, 4)), want)


def test_a_buffer_of_a_new_dtype_is_read_in_a_definition():
    arr = _data("i64", 9)
    buf = lp.Buffer(arr, "tbl")
    x = lp.Var("x")
    f = lp.Func("f")
    f[x] = buf[x] * 3 - 1
    want = _halide(lambda u, hx: u * 3 - 1, arr)
    _check(f, {}, want)


@pytest.mark.parametrize("kind, wrong", [("i64", np.int32), ("i64", np.uint64), ("u64", np.int64),
                                         ("f64", np.float32), ("i8", np.uint8), ("i32", np.int64)])
def test_the_compiled_pipeline_refuses_an_array_of_another_dtype(kind, wrong):
    x = lp.Var("x")
    p = lp.ImageParam(TYPES[kind][0], 1, "a")
    f = lp.Func("f")
    f[x] = p[x] + 1
    prog = compile_cpu(f, {"a": (N,)}, (N,))
    np.testing.assert_array_equal(prog({"a": _data(kind, 10)}), lp.evaluate(f, {"a": _data(kind, 10)}, (N,)))
    with pytest.raises(LoomError, match=rf"ImageParam 'a'.*expected {kind} array of shape \({N},\), got "
                                        rf"{np.dtype(wrong).name}"):
        prog({"a": np.zeros(N, wrong)})
    with pytest.raises(LoomError, match=rf"ImageParam 'a'.*expected dtype {np.dtype(TYPES[kind][1]).name}"):
        lp.evaluate(f, {"a": np.zeros(N, wrong)}, (N,))


def test_a_param_of_a_new_type_checks_its_value():
    with pytest.raises(LoomError, match="does not fit in u64"):
        lp.Param(lp.UInt64, "p", value=-1)
    with pytest.raises(LoomError, match="expected a i8 value"):
        lp.Param(lp.Int8, "q", value=np.int16(3))
    assert lp.Param(lp.UInt64, "r", value=2**64 - 1).value == np.uint64(2**64 - 1)


@pytest.mark.parametrize("kind", ["i64", "u64", "f64"])
def test_the_accelerator_refuses_64_bit_values_naming_the_func(kind):
    arr = _data(kind, 11, 4 * 9).reshape(4, 9)
    x, y = lp.Var("x"), lp.Var("y")
    a = lp.ImageParam(TYPES[kind][0], 2, "a")
    hw, out = lp.Func("hw_a"), lp.Func("output")
    hw[x, y] = a[x, y]
    out[x, y] = lp.saturating_cast(lp.Int16, hw[x, y] + hw[x + 1, y])
    stream_through_accelerator(out, (8, 4), buffered=[hw])
    with pytest.raises(LoomError, match=rf"Func 'hw_a'.*computes {kind} values"):
        simulate(out, {"a": arr}, (8, 4))


def test_i8_and_a_64_bit_intermediate_on_the_accelerator():
    """i8 streams through the accelerator like u8; an i64 temporary inside a u16 stage is refused by name."""
    arr = _data("i8", 12, 4 * 9).reshape(4, 9)
    x, y = lp.Var("x"), lp.Var("y")
    a = lp.ImageParam(lp.Int8, 2, "a")
    hw, out = lp.Func("hw_a"), lp.Func("output")
    hw[x, y] = a[x, y]
    out[x, y] = lp.i16(hw[x, y]) * 3 - hw[x + 1, y]
    stream_through_accelerator(out, (8, 4), buffered=[hw])
    hx, hy = hl.Var("x"), hl.Var("y")
    hb = hl.Buffer(arr)
    hf = hl.Func("f")
    hf[hx, hy] = hl.i16(hb[hx, hy]) * 3 - hb[hx + 1, hy]
    np.testing.assert_array_equal(simulate(out, {"a": arr}, (8, 4)), np.asarray(hf.realize([8, 4])))

    b = lp.ImageParam(lp.UInt16, 2, "b")
    hw2, out2 = lp.Func("hw_b"), lp.Func("output2")
    hw2[x, y] = b[x, y]
    out2[x, y] = lp.u16(lp.i64(hw2[x, y]) * 3 >> 2)
    stream_through_accelerator(out2, (8, 4), buffered=[hw2])
    with pytest.raises(LoomError, match="Func 'output2'.*computes i64 values"):
        simulate(out2, {"b": np.ones((4, 9), np.uint16)}, (8, 4))
