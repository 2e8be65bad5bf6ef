"""Signed integer division and modulo against Halide: Euclidean (towards +inf over a negative divisor), so
a == (a / b) * b + a % b with 0 <= a % b < |b|, on the CPU path, the reference evaluator and the accelerator's
value simulation (its kernels lower a data divisor to a select of floordivsi / ceildivsi, a constant one to one)."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import simulate

N = 64
CASES = ["a / b", "a % b", "a / -3", "a / 4", "a % -3"]


def _loom(name, a, b, t):
    c = {"a / b": b, "a % b": b, "a / -3": lp.cast(t, -3), "a / 4": lp.cast(t, 4), "a % -3": lp.cast(t, -3)}[name]
    return a / c if "/" in name else a % c


def _halide(name, a, b, t):
    ht = hl.Int(t.bits)
    c = {"a / b": b, "a % b": b, "a / -3": hl.cast(ht, -3), "a / 4": hl.cast(ht, 4), "a % -3": hl.cast(ht, -3)}[name]
    return a / c if "/" in name else a % c


def _inputs(t, shape):
    rng = np.random.default_rng(t.bits)
    return rng.integers(-300, 300, shape).astype(t.dtype), rng.integers(-9, 10, shape).astype(t.dtype)


@pytest.mark.parametrize("t", [lp.Int16, lp.Int32], ids=lambda t: t.name)
@pytest.mark.parametrize("name", CASES)
def test_cpu_and_evaluator_divide_as_halide(name, t):
    a_np, b_np = _inputs(t, N)
    x, hx = lp.Var("x"), hl.Var("x")
    a, b = lp.ImageParam(t, 1, "a"), lp.ImageParam(t, 1, "b")
    out = lp.Func("out")
    out[x] = _loom(name, a[x], b[x], t)
    ha, hb = hl.Buffer(a_np), hl.Buffer(b_np)
    hf = hl.Func("h")
    hf[hx] = _halide(name, ha[hx], hb[hx], t)
    want = np.asarray(hf.realize([N]))
    assert (b_np < 0).any() and (a_np % np.abs(np.where(b_np == 0, 1, b_np)) != 0).any()
    inputs = {"a": a_np, "b": b_np}
    np.testing.assert_array_equal(run_cpu(out, inputs, (N,)), want)
    np.testing.assert_array_equal(lp.evaluate(out, inputs, (N,)), want)


@pytest.mark.parametrize("name", ["a / b", "a / -3", "a % b"])
def test_the_accelerators_kernels_divide_as_halide(name):
    t, (w, h) = lp.Int16, (8, 4)
    a_np, b_np = _inputs(t, (h, w))
    x, y = lp.Var("x"), lp.Var("y")
    a, b = lp.ImageParam(t, 2, "a"), lp.ImageParam(t, 2, "b")
    hw_a, hw_b, out = lp.Func("hw_a"), lp.Func("hw_b"), lp.Func("output")
    hw_a[x, y] = a[x, y]
    hw_b[x, y] = b[x, y]
    out[x, y] = _loom(name, hw_a[x, y], hw_b[x, y], t)
    stream_through_accelerator(out, (w, h), buffered=[hw_a, hw_b])
    hx, hy = hl.Var("x"), hl.Var("y")
    hf = hl.Func("h")
    hf[hx, hy] = _halide(name, hl.Buffer(a_np)[hx, hy], hl.Buffer(b_np)[hx, hy], t)
    want = np.asarray(hf.realize([w, h]))
    np.testing.assert_array_equal(simulate(out, {"a": a_np, "b": b_np}, (w, h)), want)


CONSTANT_DIVISORS = [1, 2, 4, 7, 128, -1, -2, -7]


@pytest.mark.parametrize("t", [lp.Int16, lp.Int32, lp.UInt16, lp.UInt32], ids=lambda t: t.name)
@pytest.mark.parametrize("op", ["/", "%"])
def test_division_by_each_constant_matches_halide_at_the_extremes(op, t):
    """Constant divisors divide in the operand's width without a zero guard (a power of two as a shift in C);
    -1 keeps the wide path, where MIN / -1 wraps as in Halide. Inputs include the type's extremes."""
    rng = np.random.default_rng(t.bits + 1)
    info = np.iinfo(t.dtype)
    a_np = np.concatenate([rng.integers(info.min, info.max, 58, dtype=np.int64),
                           [info.min, info.min + 1, -1 if info.min else 1, 0, info.max - 1, info.max]]).astype(t.dtype)
    divisors = [d for d in CONSTANT_DIVISORS if info.min < 0 or d > 0]
    x, hx = lp.Var("x"), hl.Var("x")
    a = lp.ImageParam(t, 1, "a")
    ha = hl.Buffer(a_np)
    ht = hl.Int(t.bits) if info.min < 0 else hl.UInt(t.bits)
    terms = [(a[x] / lp.cast(t, d)) if op == "/" else (a[x] % lp.cast(t, d)) for d in divisors]
    hterms = [(ha[hx] / hl.cast(ht, d)) if op == "/" else (ha[hx] % hl.cast(ht, d)) for d in divisors]
    for k, (term, hterm) in enumerate(zip(terms, hterms)):
        g = lp.Func(f"g{k}")
        g[x] = term
        hg = hl.Func(f"g{k}")
        hg[hx] = hterm
        want = np.asarray(hg.realize([len(a_np)]))
        np.testing.assert_array_equal(run_cpu(g, {"a": a_np}, (len(a_np),)), want, err_msg=f"{op} {divisors[k]}")
        np.testing.assert_array_equal(lp.evaluate(g, {"a": a_np}, (len(a_np),)), want, err_msg=f"{op} {divisors[k]}")
