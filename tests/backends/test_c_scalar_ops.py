"""arith and math semantics (signed/unsigned division, shifts, casts, NaN predicates) against numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.backends.cbackend_helpers import build

pytestmark = pytest.mark.sanitize
rng = np.random.default_rng(2)


def _elementwise(name: str, in_types: list[str], out_type: str, body: str) -> str:
    """A 1-d loop applying ``body`` (which defines %r from %x0, %x1, ...) elementwise."""
    params = ", ".join(f"%A{k}: memref<?x{t}>" for k, t in enumerate(in_types))
    loads = "\n".join(
        f"    %x{k} = memref.load %A{k}[%i] : memref<?x{t}>" for k, t in enumerate(in_types)
    )
    return f"""
func.func @{name}({params}, %O: memref<?x{out_type}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %O, %c0 : memref<?x{out_type}>
  scf.for %i = %c0 to %n step %c1 {{
{loads}
{body}
    memref.store %r, %O[%i] : memref<?x{out_type}>
  }}
  return
}}
"""


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a) * np.sign(b) * q).astype(a.dtype)


INT_BINARY = {
    # op: numpy reference on int32 (a, b)
    "divsi": _trunc_div,
    "remsi": lambda a, b: np.fmod(a, b),
    "floordivsi": lambda a, b: a // b,
    "ceildivsi": lambda a, b: -((-a.astype(np.int64)) // b).astype(np.int32),
    "divui": lambda a, b: (a.view(np.uint32) // b.view(np.uint32)).view(np.int32),
    "remui": lambda a, b: (a.view(np.uint32) % b.view(np.uint32)).view(np.int32),
    "maxsi": np.maximum,
    "minui": lambda a, b: np.minimum(a.view(np.uint32), b.view(np.uint32)).view(np.int32),
    "andi": np.bitwise_and,
    "xori": np.bitwise_xor,
}


@pytest.mark.parametrize("op", sorted(INT_BINARY))
def test_integer_division_and_bitwise_ops(op):
    mod = build(_elementwise("f", ["i32", "i32"], "i32", f"    %r = arith.{op} %x0, %x1 : i32"))
    a = rng.integers(-(2**31), 2**31, 400, dtype=np.int64).astype(np.int32)
    a[:8] = [7, -7, 7, -7, 0, 1, -1, 2**31 - 1]
    b = rng.integers(-50, 50, 400).astype(np.int32)
    b[:8] = [2, 2, -2, -2, 3, -3, 5, -1]
    b[b == 0] = 3
    out = np.zeros(400, np.int32)
    mod.function("f")(a, b, out)
    np.testing.assert_array_equal(out, INT_BINARY[op](a, b))


def test_shifts_and_wrapping_arithmetic():
    body = """
    %s = arith.shli %x0, %x1 : i32
    %t = arith.shrsi %s, %x1 : i32
    %u = arith.shrui %x0, %x1 : i32
    %v = arith.xori %t, %u : i32
    %w = arith.muli %v, %x0 : i32
    %r = arith.addi %w, %x0 : i32
    """
    mod = build(_elementwise("f", ["i32", "i32"], "i32", body))
    a = rng.integers(-(2**31), 2**31, 500, dtype=np.int64).astype(np.int32)
    sh = rng.integers(0, 32, 500).astype(np.int32)
    out = np.zeros(500, np.int32)
    mod.function("f")(a, sh, out)
    au = a.view(np.uint32)
    s = (au << sh.astype(np.uint32)).view(np.int32)
    t = s >> sh
    u = (au >> sh.astype(np.uint32)).view(np.int32)
    with np.errstate(over="ignore"):
        expected = ((t ^ u) * a + a).astype(np.int32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("width", [8, 16, 32, 64])
def test_constant_shifts_of_every_width(width):
    """Literal amounts take the plain-shift path (shrsi: a branch-free sign fill); numpy's results."""
    ty = f"i{width}"
    amounts = sorted({0, 1, width // 2, width - 1})
    body = "\n".join(f"    %k{k} = arith.constant {k} : {ty}\n    %l{k} = arith.shli %x0, %k{k} : {ty}\n"
                     f"    %s{k} = arith.shrsi %x0, %k{k} : {ty}\n    %u{k} = arith.shrui %x0, %k{k} : {ty}\n"
                     f"    %a{k} = arith.xori %l{k}, %s{k} : {ty}\n    %b{k} = arith.addi %a{k}, %u{k} : {ty}"
                     for k in amounts)
    terms = [f"%b{k}" for k in amounts]
    for j in range(1, len(terms)):
        body += f"\n    %z{j} = arith.xori {terms[j - 1] if j == 1 else f'%z{j - 1}'}, {terms[j]} : {ty}"
    body += f"\n    %r = arith.addi %z{len(terms) - 1}, %x0 : {ty}"
    mod = build(_elementwise("f", [ty], ty, body))
    dtype, udtype = np.dtype(f"int{width}"), np.dtype(f"uint{width}")
    info = np.iinfo(dtype)
    a = np.concatenate([rng.integers(info.min, info.max, 300, dtype=dtype, endpoint=True),
                        np.array([info.min, info.max, 0, -1, 1], dtype)])
    out = np.zeros_like(a)
    mod.function("f")(a, out)
    with np.errstate(over="ignore"):
        expected = np.zeros_like(a)
        for j, k in enumerate(amounts):
            b = ((a.view(udtype) << udtype.type(k)).view(dtype) ^ (a >> dtype.type(k))) + \
                (a.view(udtype) >> udtype.type(k)).view(dtype)
            expected = b if j == 0 else expected ^ b
        expected = expected + a
    np.testing.assert_array_equal(out, expected)


def test_narrow_integer_casts():
    body = """
    %e = arith.extsi %x0 : i8 to i32
    %u = arith.extui %x0 : i8 to i32
    %k = arith.constant 1000 : i32
    %m = arith.muli %u, %k : i32
    %p = arith.addi %e, %m : i32
    %q = arith.trunci %p : i32 to i16
    %s = arith.addi %q, %q : i16
    %r = arith.extsi %s : i16 to i64
    """
    mod = build(_elementwise("f", ["i8"], "i64", body))
    a = np.arange(-128, 128, dtype=np.int8)
    out = np.zeros(256, np.int64)
    mod.function("f")(a, out)
    p = a.astype(np.int32) + a.view(np.uint8).astype(np.int32) * 1000
    q = p.astype(np.int16)
    with np.errstate(over="ignore"):
        expected = (q + q).astype(np.int16).astype(np.int64)
    np.testing.assert_array_equal(out, expected)


def test_float_int_conversions_and_bitcast():
    body = """
    %fi = arith.fptosi %x0 : f32 to i32
    %j = arith.sitofp %fi : i32 to f64
    %b = arith.bitcast %x0 : f32 to i32
    %c = arith.uitofp %b : i32 to f64
    %d = arith.addf %j, %c : f64
    %ix = arith.index_cast %fi : i32 to index
    %i64 = arith.index_cast %ix : index to i64
    %f = arith.sitofp %i64 : i64 to f64
    %e = arith.addf %d, %f : f64
    %t = arith.truncf %e : f64 to f32
    %r = arith.extf %t : f32 to f64
    """
    mod = build(_elementwise("f", ["f32"], "f64", body))
    a = (rng.standard_normal(300) * 1000).astype(np.float32)
    out = np.zeros(300, np.float64)
    mod.function("f")(a, out)
    i = np.trunc(a).astype(np.int32)
    d = i.astype(np.float64) + a.view(np.uint32).astype(np.float64)
    expected = (d + i.astype(np.float64)).astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(out, expected)


CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
        "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def _cmpf_reference(pred: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    unordered = np.isnan(a) | np.isnan(b)
    base = {
        "eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": (a < b) | (a > b),
    }
    if pred == "false":
        return np.zeros(a.shape, bool)
    if pred == "true":
        return np.ones(a.shape, bool)
    if pred == "ord":
        return ~unordered
    if pred == "uno":
        return unordered
    rel = base[pred[1:]]
    return (rel & ~unordered) if pred[0] == "o" else (rel | unordered)


@pytest.mark.parametrize("pred", CMPF)
def test_float_predicates_with_nan(pred):
    mod = build(_elementwise("f", ["f32", "f32"], "i1", f"    %r = arith.cmpf {pred}, %x0, %x1 : f32"))
    vals = np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf], np.float32)
    a, b = (x.ravel() for x in np.meshgrid(vals, vals))
    out = np.zeros(a.size, np.bool_)
    mod.function("f")(a, b, out)
    np.testing.assert_array_equal(out, _cmpf_reference(pred, a, b))


@pytest.mark.parametrize("pred,ref", [
    ("eq", np.equal), ("ne", np.not_equal), ("slt", np.less), ("sge", np.greater_equal),
    ("ult", lambda a, b: a.view(np.uint16) < b.view(np.uint16)),
    ("ugt", lambda a, b: a.view(np.uint16) > b.view(np.uint16)),
])
def test_integer_predicates_and_select(pred, ref):
    body = f"""
    %c = arith.cmpi {pred}, %x0, %x1 : i16
    %r = arith.select %c, %x0, %x1 : i16
    """
    mod = build(_elementwise("f", ["i16", "i16"], "i16", body))
    a = rng.integers(-(2**15), 2**15, 300).astype(np.int16)
    b = rng.integers(-(2**15), 2**15, 300).astype(np.int16)
    b[:20] = a[:20]
    out = np.zeros(300, np.int16)
    mod.function("f")(a, b, out)
    np.testing.assert_array_equal(out, np.where(ref(a, b), a, b))


def test_float_min_max_nan_semantics():
    body = """
    %m1 = arith.minimumf %x0, %x1 : f32
    %m2 = arith.maximumf %x0, %x1 : f32
    %m3 = arith.minnumf %x0, %x1 : f32
    %m4 = arith.maxnumf %x0, %x1 : f32
    %two = arith.constant 2.0 : f32
    %a = arith.mulf %m1, %two : f32
    %b = arith.addf %a, %m2 : f32
    %c = arith.mulf %m3, %two : f32
    %d = arith.subf %c, %m4 : f32
    %r = arith.addf %b, %d : f32
    """
    mod = build(_elementwise("f", ["f32", "f32"], "f32", body))
    vals = np.array([np.nan, -3.0, 0.5, 2.0], np.float32)
    a, b = (x.ravel().copy() for x in np.meshgrid(vals, vals))
    out = np.zeros(a.size, np.float32)
    mod.function("f")(a, b, out)
    expected = (np.minimum(a, b) * 2 + np.maximum(a, b)) + (np.fmin(a, b) * 2 - np.fmax(a, b))
    np.testing.assert_array_equal(out, expected.astype(np.float32))


MATH_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "atan": np.arctan, "absf": np.abs, "floor": np.floor, "ceil": np.ceil,
    "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "erf": np.vectorize(math.erf),
}


@pytest.mark.parametrize("op", sorted(MATH_UNARY))
def test_math_unary_f32(op):
    mod = build(_elementwise("f", ["f32"], "f32", f"    %r = math.{op} %x0 : f32"))
    x = rng.uniform(0.1, 3.0, 200).astype(np.float32)
    x[:4] = [0.5, 1.5, 2.5, 0.25]  # round: halves away from zero
    out = np.zeros(200, np.float32)
    mod.function("f")(x, out)
    np.testing.assert_allclose(out, MATH_UNARY[op](x.astype(np.float64)).astype(np.float32), rtol=1e-5)


def test_math_binary_ternary_and_absi_f64():
    body = """
    %p = math.powf %x0, %x1 : f64
    %a = math.atan2 %x1, %x0 : f64
    %c = math.copysign %p, %x1 : f64
    %f = math.fma %a, %x0, %c : f64
    %r = arith.negf %f : f64
    """
    mod = build(_elementwise("f", ["f64", "f64"], "f64", body))
    x = rng.uniform(0.1, 3.0, 100)
    y = rng.uniform(-2.0, 2.0, 100)
    out = np.zeros(100)
    mod.function("f")(x, y, out)
    expected = -(np.arctan2(y, x) * x + np.copysign(x**y, y))
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    absi = build(_elementwise("g", ["i64"], "i64", "    %r = math.absi %x0 : i64"))
    v = rng.integers(-(10**15), 10**15, 50)
    o = np.zeros(50, np.int64)
    absi.function("g")(v, o)
    np.testing.assert_array_equal(o, np.abs(v))


SCALAR_RESULTS = """
func.func @kinds(%a: index, %b: f64, %c: i1, %d: i8) -> (index, f64, i1, i8) {
  %one = arith.constant 1 : index
  %a2 = arith.addi %a, %one : index
  %b2 = arith.mulf %b, %b : f64
  %t = arith.constant true
  %c2 = arith.xori %c, %t : i1
  %d2 = arith.addi %d, %d : i8
  return %a2, %b2, %c2, %d2 : index, f64, i1, i8
}
"""


def test_scalar_arguments_and_results_of_every_kind():
    fn = build(SCALAR_RESULTS).function("kinds")
    a, b, c, d = fn(41, 1.5, True, np.int8(100))
    assert (int(a), float(b), bool(c), int(d)) == (42, 2.25, False, -56)
    assert isinstance(b, np.float64) and isinstance(d, np.int8)
    assert fn(np.intp(-5), 2, False, -1)[2] == np.bool_(True)
