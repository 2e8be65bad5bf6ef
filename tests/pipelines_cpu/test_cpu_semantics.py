"""Scalar semantics of the CPU lowering: wrap-around, Euclidean division and modulo (Halide's), shifts,
casts, bfloat16 rounding; checked against plain Python integers/struct (independent) and evaluate()."""

import math
import struct

import numpy as np
import pytest

from loom.frontends import pipeline as pl
from loom.jit import run_cpu
from loom.frontends.pipeline import evaluate

N = 96
INT_OPS = ["add", "sub", "mul", "div", "mod", "min", "max", "and", "or", "xor", "shl", "shr", "lt", "ne",
           "abs", "not"]


def _wrap(v, t):
    m = 1 << t.bits
    v %= m
    return v - m if t.is_signed and v >= m >> 1 else v


def _py_op(op, a, b, t):
    if op in ("add", "sub", "mul", "and", "or", "xor"):
        r = {"add": a + b, "sub": a - b, "mul": a * b, "and": a & b, "or": a | b, "xor": a ^ b}[op]
        return _wrap(r, t)
    if op == "div":
        # Euclidean, as Halide: the remainder is never negative (Python's // floors, also over b < 0)
        return 0 if b == 0 else _wrap(a // b if b > 0 else -(a // -b), t)
    if op == "mod":
        return 0 if b == 0 else a % abs(b)  # Euclidean: 0 <= r < |b|
    if op in ("min", "max"):
        return min(a, b) if op == "min" else max(a, b)
    if op in ("shl", "shr"):
        amount = b if op == "shl" else -b
        if amount >= t.bits:
            return 0
        if amount >= 0:
            return _wrap(a << amount, t)
        if -amount >= t.bits:
            return -1 if a < 0 else 0
        return a >> -amount
    if op in ("lt", "ne"):
        return int(a < b) if op == "lt" else int(a != b)
    if op == "abs":
        return _wrap(abs(a), t)
    if op == "not":
        return _wrap(~a, t)
    raise KeyError(op)


def _values(t, rng):
    special = [0, 1, -1, 2, -2, 3, 7, t.bits, t.bits + 1, t.min_value, t.max_value, t.min_value + 1, 15, -15]
    special = [v for v in special if t.min_value <= v <= t.max_value]
    rest = rng.integers(t.min_value, t.max_value, N - len(special), endpoint=True)
    return np.concatenate([special, rest]).astype(t.dtype)


def int_ops_pipeline(t):
    """out[x, k] = INT_OPS[k](a[x], b[x]) over type ``t``, and inputs with edge values."""
    rng = np.random.default_rng(t.bits + t.is_signed)
    x, k = pl.Var("x"), pl.Var("k")
    a, b = pl.ImageParam(t, 1, "a"), pl.ImageParam(t, 1, "b")
    va, vb = a[x], b[x]
    results = {
        "add": va + vb, "sub": va - vb, "mul": va * vb, "div": va / vb, "mod": va % vb,
        "min": pl.minimum(va, vb), "max": pl.maximum(va, vb), "and": va & vb, "or": va | vb, "xor": va ^ vb,
        "shl": va << vb, "shr": va >> vb, "lt": pl.cast(t, va < vb), "ne": pl.cast(t, va != vb),
        "abs": pl.cast(t, pl.absolute(va)), "not": ~va,
    }
    expr = results[INT_OPS[-1]]
    for i in reversed(range(len(INT_OPS) - 1)):
        expr = pl.select(k == i, results[INT_OPS[i]], expr)
    out = pl.Func("out")
    out[x, k] = expr
    av, bv = _values(t, rng), _values(t, rng)[::-1].copy()
    bv[:8] = [0, -1 if t.is_signed else 1, t.bits, t.bits - 1, -3 if t.is_signed else 3, 1, 2, 0]
    return out, {"a": av, "b": bv}


def python_int_ops(t, inputs):
    return [[_py_op(op, int(p), int(q), t) for p, q in zip(inputs["a"], inputs["b"])] for op in INT_OPS]


@pytest.mark.sanitize
@pytest.mark.parametrize("t", [pl.UInt8, pl.UInt16, pl.UInt32, pl.Int16, pl.Int32], ids=lambda t: t.name)
def test_integer_operators_match_python_integers(t):
    out, inputs = int_ops_pipeline(t)
    got = run_cpu(out, inputs, (N, len(INT_OPS)))
    np.testing.assert_array_equal(got, evaluate(out, inputs, (N, len(INT_OPS))))
    for op, row, want in zip(INT_OPS, got, python_int_ops(t, inputs)):
        assert [int(v) for v in row] == want, op


def _bf16_py(value):
    """float -> nearest bfloat16 (ties to even) via struct, as a Python float."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    lower, upper = bits & 0xFFFF, bits >> 16
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1
    return struct.unpack("<f", struct.pack("<I", (upper << 16) & 0xFFFFFFFF))[0]


@pytest.mark.sanitize
def test_float_casts_and_bfloat16():
    x, k = pl.Var("x"), pl.Var("k")
    a = pl.ImageParam(pl.Float32, 1, "a")
    va = a[x]
    rows = [
        pl.f32(pl.i32(va)),  # truncation toward zero, NaN/inf -> 0
        pl.f32(pl.u8(va)),  # wraps modulo 256 after truncation
        pl.f32(pl.i16(va)),
        pl.f32(pl.bf16(va)),  # round to nearest even
        pl.f32(pl.bf16(va) * pl.bf16(va) + pl.bf16(va)),  # every bf16 step rounded
        pl.minimum(va / 3.0, 100.0) - 0.25,
        pl.f32(pl.u32(va)),
    ]
    expr = rows[-1]
    for i in reversed(range(len(rows) - 1)):
        expr = pl.select(k == i, rows[i], expr)
    out = pl.Func("out")
    out[x, k] = expr
    rng = np.random.default_rng(5)
    vals = np.concatenate([[0.0, -0.5, 0.5, 1.5, -1.5, 255.9, 256.0, -1.0, 65535.7, -32769.2, 3e9, -3e9, 1e20,
                            np.inf, -np.inf, np.nan, 1.00390625, 1.01171875, 2.0 ** -130],
                           rng.normal(0, 300, 45)]).astype(np.float32)
    got = run_cpu(out, {"a": vals}, (len(vals), len(rows)))
    want = evaluate(out, {"a": vals}, (len(vals), len(rows)))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    for v, r0, r1, r3 in zip(vals.tolist(), got[0], got[1], got[3]):
        if math.isfinite(v) and abs(v) < 2 ** 62:
            t = math.trunc(v)
            assert r0 == _wrap(t, pl.Int32) and r1 == _wrap(t, pl.UInt8)
        elif not math.isfinite(v):
            assert r0 == 0 and r1 == 0
        if not math.isnan(v):
            assert r3 == np.float32(_bf16_py(v))
    assert got[3][3] == 1.5 and got[3][16] == 1.0 and got[3][17] == np.float32(1.015625)  # ties to even


@pytest.mark.sanitize
def test_bool_func_realised_in_a_buffer():
    x = pl.Var("x")
    a = pl.ImageParam(pl.UInt8, 1, "a")
    big = pl.Func("big")
    big[x] = a[x] > 100
    big.compute_root()
    out = pl.Func("out")
    out[x] = pl.select(big[x] & ~big[x + 1], pl.u8(1), pl.u8(0))
    vals = np.random.default_rng(2).integers(0, 256, 41, dtype=np.uint8)
    got = run_cpu(out, {"a": vals}, (40,))
    b = vals > 100
    np.testing.assert_array_equal(got, (b[:-1] & ~b[1:]).astype(np.uint8))
